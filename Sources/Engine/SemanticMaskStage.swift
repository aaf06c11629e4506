@_exported import SemanticMasks

extension Pipeline {
    /// The DNG's semantic masks on the output grid of this run: the Stage 3 grid follows the
    /// ActiveArea, the superpixel `binning` and the TrimBounds that OpcodeList2 and 3 applied
    /// (`trims`, by list number), then `plan` gives the masks the image's crop, scale and
    /// orientation.
    /// - Throws: `SemanticMaskError` for a mask that cannot be decoded.
    static func semanticMasks(_ dng: DNGFile, raw: ImageIFD, stage3: SceneLinearImage, binning: Int,
                              trims: [Int: PixelRect], plan: GeometryPlan, options: DevelopOptions) throws -> [SemanticMaskLayer] {
        guard !dng.maskIFDs.isEmpty else { return [] }
        let grid = Stage3Grid.pipeline(activeArea: raw.activeArea, binning: binning, width: stage3.width, height: stage3.height,
                                       trim2: trims[2], trim3: trims[3])
        return try SemanticMasks.layers(dng, grid: grid, plan: plan, limits: options.limits)
    }
}
