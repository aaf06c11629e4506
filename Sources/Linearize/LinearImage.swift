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

    /// Wraps values in Stage 2 units computed by a later stage (e.g. demosaiced planes).
    ///
    /// The caller keeps the meaning of every field: 1.0 is white, `clipMask` has one byte
    /// per pixel of `values`, and `ifd` and `mapping` name where the values came from.
    public init(ifd: ImageIFD, values: ImageBuffer<Float>, clipMask: [UInt8], mapping: LinearizationMapping) {
        self.ifd = ifd
        self.values = values
        self.clipMask = clipMask
        self.mapping = mapping
    }

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

extension LinearImage {
    /// The same image restricted to `rect` (in this image's pixels), e.g. after a TrimBounds opcode.
    public func cropped(to rect: PixelRect) -> LinearImage {
        precondition(PixelRect(width: width, height: height).contains(rect) && !rect.isEmpty)
        let c = planes
        var samples: [Float] = []
        samples.reserveCapacity(rect.width * rect.height * c)
        var mask: [UInt8] = []
        mask.reserveCapacity(rect.width * rect.height)
        for y in rect.top..<rect.bottom {
            let start = (y * width + rect.left) * c
            samples.append(contentsOf: values.samples[start..<(start + rect.width * c)])
            mask.append(contentsOf: clipMask[(y * width + rect.left)..<(y * width + rect.right)])
        }
        var out = self
        out.values = ImageBuffer(width: rect.width, height: rect.height, channels: c, samples: samples)
        out.clipMask = mask
        return out
    }
}

/// Stage 3: three planes of linear reference values per pixel — a LinearRaw image's Stage 2,
/// or a CFA mosaic after demosaicing. It is the only input the colour conversion takes, so a
/// one-plane mosaic cannot reach the colour matrix: the type is made only by
/// `init?(linearRaw:)` (three planes), by demosaicing, or inside the package from planes a
/// demosaicing kernel wrote.
public struct Stage3Image: Sendable {
    /// The planes, with their clip mask, IFD and mapping (always three planes).
    public private(set) var stage: LinearImage

    /// A LinearRaw image's Stage 2 as Stage 3; nil unless it has three planes.
    public init?(linearRaw image: LinearImage) {
        guard image.planes == 3 else { return nil }
        stage = image
    }

    /// Planes a demosaicing kernel (or OpcodeList3 on Stage 3) wrote.
    package init(planes image: LinearImage) {
        precondition(image.planes == 3, "Stage 3 has three planes")
        stage = image
    }

    /// The interleaved planes; a new value must keep three planes.
    public var values: ImageBuffer<Float> {
        get { stage.values }
        set {
            precondition(newValue.channels == 3, "Stage 3 has three planes")
            stage.values = newValue
        }
    }
    public var clipMask: [UInt8] { stage.clipMask }
    public var ifd: ImageIFD { stage.ifd }
    public var mapping: LinearizationMapping { stage.mapping }
    public var width: Int { stage.width }
    public var height: Int { stage.height }
    public var planes: Int { 3 }
}
