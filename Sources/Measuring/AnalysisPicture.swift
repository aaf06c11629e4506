import Engine
import Analysis
@_exported import Fisheye
@_exported import Plots

/// What the charts of a measured file need besides its results, kept while it was measured
/// instead of its image: its luminance reduced to an EV map's size, and a way to outline its
/// regions.
public struct AnalysisPicture: Sendable {
    public let path: String
    public let width: Int, height: Int
    /// The factor the values were scaled by (1 = sensor white at 1.0).
    public let exposureFactor: Double
    /// The unit of the values ("cd/m²", "W·sr⁻¹·m⁻²"), or "" for relative values.
    public let unitSymbol: String
    /// The luminance at the size of an EV map of the `maxSize` asked for.
    public let luminance: ReducedLuminance
    /// A region's weight per pixel, for outlining what is not a rectangle or polygon (nil when
    /// there are none, e.g. a semantic mask the file does not have).
    public let weights: @Sendable (Region) -> [Float]?

    public init(path: String, width: Int, height: Int, exposureFactor: Double, unitSymbol: String = "", luminance: ReducedLuminance,
                weights: @escaping @Sendable (Region) -> [Float]?) {
        self.path = path
        self.width = width
        self.height = height
        self.exposureFactor = exposureFactor
        self.unitSymbol = unitSymbol
        self.luminance = luminance
        self.weights = weights
    }

    /// The picture of an image in memory.
    public init(_ image: SceneLinearImage, path: String, maxSize: Int) {
        let reduction = LuminanceReduction(sourceWidth: image.width, sourceHeight: image.height, maxSize: maxSize)
        try? image.visitPatches { reduction.add($0) }
        self.init(path: path, width: image.width, height: image.height, exposureFactor: image.exposure.factor,
                  unitSymbol: image.exposure.mode.unitSymbol, luminance: reduction.result(), weights: { try? $0.weights(in: image) })
    }
}
