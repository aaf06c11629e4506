import DNGContainer
import ImageCore

/// Stage 2: linear reference values of the ActiveArea (DNG 1.7.1 chapter 5).
///
/// 0.0 is black and 1.0 the white level of each plane. Values above 1 have been clipped
/// to 1 (chapter 5 step 4) and flagged in `clipMask`; negatives (noise around black) are
/// kept.
public struct LinearImage: Sendable {
    /// The IFD the values came from.
    public let ifd: ImageIFD
    /// `samplesPerPixel` interleaved planes over the ActiveArea.
    public var values: ImageBuffer<Float>
    /// One byte per pixel; bit `p` set when plane `p` was at or above its white level
    /// (the sensor or ADC saturated, so the true value is unknown: at least 1.0).
    public var clipMask: [UInt8]
    /// The mapping that was applied, per plane.
    public let mapping: LinearizationMapping

    public var width: Int { values.width }
    public var height: Int { values.height }
    public var planes: Int { values.channels }
}

/// The parameters of the Stage 2 mapping, recorded for reports and noise propagation.
public struct LinearizationMapping: Sendable, Equatable, Codable {
    /// Per plane: the largest black level over the pattern and both delta tables, in
    /// linearized units (the value `WhiteLevel − maxBlack` is divided by).
    public let maxBlack: [Double]
    /// Per plane: WhiteLevel.
    public let white: [Double]
    /// Per plane: 1 / (white − maxBlack).
    public let scale: [Double]
    /// Entries in the LinearizationTable that was applied (0 when absent, and for
    /// floating-point samples, to which it does not apply).
    public let tableEntries: Int
    /// The ActiveArea that was kept.
    public let activeArea: PixelRect
}
