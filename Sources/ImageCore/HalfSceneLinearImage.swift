/// A scene-linear image held as IEEE half floats, as the EXR and HDF5 outputs store it:
/// what the streaming conversion (`Pipeline.developForExport`) produces, so that no
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

    public init(pixels: ImageBuffer<Float16>, clipMask: [UInt8]?, clippedPixelCount: Int, encoding: ColorEncoding,
                exposure: ExposureScaling, provenance: ImageProvenance) {
        precondition(pixels.channels == 3, "a scene-linear image has three channels")
        if let mask = clipMask { precondition(mask.count == pixels.pixelCount) }
        self.pixels = pixels
        self.clipMask = clipMask
        self.clippedPixelCount = clippedPixelCount
        self.encoding = encoding
        self.exposure = exposure
        self.provenance = provenance
    }

    public var width: Int { pixels.width }
    public var height: Int { pixels.height }
}
