/// The shape and coding parameters of a lossless JPEG (ITU T.81 process 14, SOF3) stream.
///
/// Read from the frame header (SOF3), the restart-interval definition (DRI) and the header
/// of the first scan (SOS). A frame returned by `LJ92Decoder` has been validated: every
/// field is in range and `sampleCount` is small enough to be plausible for the stream's
/// length (at most one sample per bit of entropy-coded data, plus the padding allowance).
public struct LJ92Frame: Sendable, Equatable {
    /// Samples per line of the JPEG frame (X), 1...65535.
    public let width: Int
    /// Number of lines (Y), 1...65535.
    public let height: Int
    /// Number of components (Nf = Ns), 1...4, interleaved per pixel in the decoded samples.
    public let components: Int
    /// Sample precision in bits (P), 2...16.
    public let precision: Int
    /// Predictor selection value (SOS Ss), 1...7 (T.81 Table H.1).
    public let predictor: Int
    /// Point transform (SOS Al), 0...P-1: decoded values are shifted left by this many bits.
    public let pointTransform: Int
    /// Restart interval in MCUs (one MCU is one pixel here); 0 means no restart markers.
    ///
    /// Always a whole number of lines (a multiple of `width`), as T.81 H.1.1 requires for
    /// the lossless process.
    public let restartInterval: Int

    /// Number of samples of the decoded frame: `width * height * components`.
    public var sampleCount: Int { width * height * components }

    /// Creates a frame description.
    public init(width: Int, height: Int, components: Int, precision: Int, predictor: Int,
                pointTransform: Int, restartInterval: Int) {
        self.width = width
        self.height = height
        self.components = components
        self.precision = precision
        self.predictor = predictor
        self.pointTransform = pointTransform
        self.restartInterval = restartInterval
    }
}
