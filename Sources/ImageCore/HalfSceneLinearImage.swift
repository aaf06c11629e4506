/// A scene-linear image held as IEEE half floats, as the EXR and HDF5 outputs store it:
/// what the streaming conversion (`Pipeline.developHalf`) produces, so that no
/// full-size Float copy of the image is ever made. Same meaning and metadata as
/// `SceneLinearImage`.
public struct HalfSceneLinearImage: Sendable {
    /// RGB, interleaved, row-major, binary16.
    public var pixels: ImageBuffer<Float16>
    /// As `SceneLinearImage.clipMask`; nil when not kept.
    public var clipMask: [UInt8]?
    public var encoding: ColorEncoding
    public var exposure: ExposureScaling
    public var provenance: ImageProvenance
    /// Pixels with any clipped channel (counted even when the mask itself is not kept).
    public var clippedPixelCount: Int
    /// As `SceneLinearImage.masks`.
    public var masks: [SemanticMaskLayer]

    public init(pixels: ImageBuffer<Float16>, clipMask: [UInt8]?, clippedPixelCount: Int, encoding: ColorEncoding,
                exposure: ExposureScaling, provenance: ImageProvenance, masks: [SemanticMaskLayer] = []) {
        checkSceneLinearLayout(width: pixels.width, height: pixels.height, channels: pixels.channels,
                               clipMask: clipMask, masks: masks)
        self.masks = masks
        self.pixels = pixels
        self.clipMask = clipMask
        self.clippedPixelCount = clippedPixelCount
        self.encoding = encoding
        self.exposure = exposure
        self.provenance = provenance
    }

    public var width: Int { pixels.width }
    public var height: Int { pixels.height }

    public func halfPixels() -> [Float16] { pixels.samples }
}

/// What describes an output image without its pixels: its size, the masks and the metadata
/// (what a file's header records, and what `convert` reports).
public protocol SceneLinearDescription: Sendable {
    var width: Int { get }
    var height: Int { get }
    var masks: [SemanticMaskLayer] { get }
    var encoding: ColorEncoding { get }
    var exposure: ExposureScaling { get }
    var provenance: ImageProvenance { get }
}

/// An output image written as it was made, of which only the description is kept.
public struct WrittenImageDescription: SceneLinearDescription {
    public var width: Int
    public var height: Int
    public var masks: [SemanticMaskLayer]
    public var encoding: ColorEncoding
    public var exposure: ExposureScaling
    public var provenance: ImageProvenance

    public init(width: Int, height: Int, masks: [SemanticMaskLayer], encoding: ColorEncoding, exposure: ExposureScaling,
                provenance: ImageProvenance) {
        self.width = width
        self.height = height
        self.masks = masks
        self.encoding = encoding
        self.exposure = exposure
        self.provenance = provenance
    }
}

/// What the EXR and HDF5 writers need of an image: its description, its pixels as binary16
/// and the clip mask. `SceneLinearImage` rounds its Float pixels to half (round to
/// nearest even); `HalfSceneLinearImage` already holds them.
public protocol SceneLinearRaster: SceneLinearDescription {
    var clipMask: [UInt8]? { get }
    /// RGB, interleaved, row-major, rounded to binary16.
    /// - Throws: `HalfRangeError` (naming `destination`) when a value is beyond ±65504.
    func halfPixels(for destination: String) throws -> [Float16]
    /// RGB, interleaved, row-major, as Float (a half image widened exactly).
    func floatPixels() -> [Float]
}

extension HalfSceneLinearImage: SceneLinearRaster {
    /// (The conversion that made them has checked their range.)
    public func halfPixels(for destination: String) -> [Float16] { pixels.samples }
    public func floatPixels() -> [Float] { pixels.samples.map { Float($0) } }
}

extension SceneLinearImage: SceneLinearRaster {
    public func halfPixels(for destination: String) throws -> [Float16] {
        try HalfConversion.checkedHalves(pixels.samples, what: destination)
    }
    public func floatPixels() -> [Float] { pixels.samples }
}
