import ImageCore

/// An image read back from our EXR or HDF5 for measuring, its pixels kept as the file
/// stores them (a half float stays 2 bytes) and widened to `Float` band by band in each
/// pass of `scan`: the measurements never hold it as `Float` RGB.
public struct StoredSceneLinearImage: Sendable {
    /// Everything but the pixels (empty) and the semantic masks (not read).
    public let image: SceneLinearImage
    public let width: Int, height: Int
    /// Whether the file has a clip mask.
    public let hasClipMask: Bool
    /// Widens rows of the stored pixels (and the clip mask) into a band.
    let fill: ImagePatch.BandFill
    /// The rows of the file's blocks (chunks), which `fill` is asked for whole.
    let blockRows: Int

    package init(image: SceneLinearImage, width: Int, height: Int, hasClipMask: Bool, blockRows: Int = SceneLinearImage.scanRows,
                 fill: @escaping ImagePatch.BandFill) {
        self.image = image
        self.width = width
        self.height = height
        self.hasClipMask = hasClipMask
        self.blockRows = blockRows
        self.fill = fill
    }

    /// Passes over the pixels in the bands `SceneLinearImage.scan` uses, with the values that
    /// reading the file whole (`readSceneLinear`) would give.
    public var scan: ImageScan {
        let width = self.width, height = self.height, hasClipMask = self.hasClipMask, fill = self.fill, blockRows = self.blockRows
        return ImageScan { prepare, visit in
            try prepare(width, height)
            try ImagePatch.visitBands(width: width, height: height, hasMask: hasClipMask, blockRows: blockRows, fill: fill, visit)
        }
    }
}
