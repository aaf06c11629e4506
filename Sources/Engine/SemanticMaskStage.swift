@_exported import SemanticMasks

extension Pipeline {
    /// The DNG's semantic masks on the output grid of this run: the Stage 3 grid follows the
    /// ActiveArea, the superpixel `binning` and any TrimBounds of OpcodeList2/3 (recorded in
    /// `notes`), then `plan` gives the masks the image's crop, scale and orientation.
    /// - Throws: `SemanticMaskError` for a mask that cannot be decoded.
    static func semanticMasks(_ dng: DNGFile, raw: ImageIFD, stage3: SceneLinearImage, binning: Int,
                              notes: [MetadataItem], plan: GeometryPlan, options: DevelopOptions) throws -> [SemanticMaskLayer] {
        guard !dng.maskIFDs.isEmpty else { return [] }
        func trim(_ key: String) -> PixelRect? {
            guard case .integers(let v)? = notes.first(where: { $0.key == key })?.value, v.count == 4 else { return nil }
            return PixelRect(top: v[0], left: v[1], bottom: v[2], right: v[3])
        }
        let grid = Stage3Grid.pipeline(activeArea: raw.activeArea, binning: binning, width: stage3.width, height: stage3.height,
                                       trim2: trim("trimBounds2"), trim3: trim("trimBounds3"))
        return try SemanticMasks.layers(dng, grid: grid, plan: plan, limits: options.limits)
    }
}
