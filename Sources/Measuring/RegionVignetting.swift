import Analysis
import Engine
import Foundation

/// A region's own vignetting term (docs/lens.md): the relative uncertainty of its mean from
/// the lens calibration's correction at its pixels' radii, taking its values as uniform over
/// it (its mean R, G, B at every pixel) — E_v's term (`LensSums`) with the region's weights in
/// place of cos θ · ω. One fit error moves the whole region alike, so it does not average down.
struct RegionVignetting {
    let sums: LensSums
    let weight: Double
    let rgb: SIMD3<Double>

    /// At most about this many pixels are visited (a regular subsample of a larger region:
    /// the term varies slowly across the image).
    static let samples = 40_000

    init(selection: PixelSelection, rgb: SIMD3<Double>, lens: LensCalibration) {
        let b = selection.bounds, w = selection.width
        let step = max(1, Int((Double(b.width * b.height) / Double(Self.samples)).squareRoot()))
        let departures = (0..<3).map { lens.departure(channel: $0) }
        var sums = LensSums(), total = 0.0
        for y in stride(from: b.top, to: b.bottom, by: step) {
            for x in stride(from: b.left, to: b.right, by: step) {
                let weight = Double(selection.weights?[y * w + x] ?? 1)
                guard weight > 0 else { continue }
                sums.add(rgb * weight, x: x, y: y, width: w, height: selection.height, lens: lens, departures: departures)
                total += weight
            }
        }
        self.sums = sums
        weight = total
        self.rgb = rgb
    }

    /// The term of the mean of the quantity whose output weights are `weights`; nil when it
    /// cannot be made (no pixels, a mean of 0, no colour matrix).
    func relativeUncertainty(weights: SIMD3<Double>, cameraToOutput m: [Double], lens: LensCalibration) -> Double? {
        sums.relativeUncertainty(cameraToOutput: m, lens: lens, total: weight * (rgb * weights).sum(), weights: weights)
    }

    /// The output weights of Y, R, G and B.
    static func weights(_ quantity: String) -> SIMD3<Double>? {
        switch quantity {
        case "Y": return Rec2020.luminanceWeights
        case "R": return SIMD3(1, 0, 0)
        case "G": return SIMD3(0, 1, 0)
        case "B": return SIMD3(0, 0, 1)
        default: return nil
        }
    }
}
