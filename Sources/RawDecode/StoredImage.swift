import DNGContainer
import ImageCore

/// Stage 1: the samples of an image IFD exactly as stored, after decompression — the full
/// IFD area (including masked areas outside the ActiveArea), `samplesPerPixel` interleaved
/// `UInt16` samples per pixel, in the IFD's own orientation.
public struct StoredImage: Sendable {
    /// The IFD these samples came from (its Stage 2 tags travel with the samples).
    public let ifd: ImageIFD
    public let samples: ImageBuffer<UInt16>

    public init(ifd: ImageIFD, samples: ImageBuffer<UInt16>) {
        precondition(samples.width == ifd.width && samples.height == ifd.height && samples.channels == ifd.samplesPerPixel)
        self.ifd = ifd
        self.samples = samples
    }
}

/// Limits on what a single decode may allocate.
public struct DecodeLimits: Sendable {
    /// Largest image accepted, in pixels (default 1 gigapixel).
    public var maxPixels = 1 << 30

    public init(maxPixels: Int = 1 << 30) { self.maxPixels = maxPixels }
}
