import Foundation
import ImageCore

/// Where each pixel of a demosaiced CFA image sat on the sensor, for sums that no demosaic
/// can bias.
///
/// An interpolating demosaic keeps each raw sample at its site and invents the other two
/// colours there. A sum over many pixels of what it invents conserves the raw samples'
/// total only for a linear, evenly spread interpolation (bilinear); RCD follows edges, and
/// around a source of one or two pixels (a sun) it spreads less than the sample's share:
/// E_v of a 1.2-pixel sun reads 3–4 % low. Summing over the raw sites instead, each camera
/// plane j from its own samples only, each counted 1 / (its share of the sites) times
/// (4 for red and blue, 2 for green), gives Σ w · x_j whatever the demosaic, with exactly
/// the noise the noise model's `samplingVarianceScale` gives a region's sum.
///
/// The layout comes from the image's provenance: its demosaic (bilinear or RCD), its 2×2
/// `cfaPattern` (from the raw image's top-left, as the DNG's CFAPattern), the ActiveArea's
/// corner, OpcodeList 2 and 3's TrimBounds, the crop, the size before orientation (equal to
/// the crop's: no resampling) and the EXIF orientation.
public struct SiteLayout: Sendable, Equatable {
    /// The camera plane (0, 1, 2) of the pixels at each position of a 2×2 cell of the output
    /// image: [even row even column, even odd, odd even, odd odd].
    public let planes: [Int]
    /// The camera → measured-output matrix (row-major), by which output = M · camera.
    public let cameraToOutput: [Double]

    public init?(planes: [Int], cameraToOutput: [Double]) {
        guard planes.count == 4, Set(planes) == [0, 1, 2], cameraToOutput.count == 9,
              Matrix3(cameraToOutput).inverse != nil else { return nil }
        self.planes = planes
        self.cameraToOutput = cameraToOutput
    }

    /// The layout of `image`, or nil when its pixels are not on a CFA grid it can name (a
    /// LinearRaw image, superpixel cells, a resampled or unrecorded geometry, no matrix).
    public static func of(_ image: SceneLinearImage) -> SiteLayout? {
        let p = image.provenance
        guard p.hasInterpolatedBayer, case .integers(let pattern)? = p.processingValue("cfaPattern"), pattern.count == 4,
              case .integers(let crop)? = p.processingValue("crop"), crop.count == 4,
              case .integers(let scaled)? = p.processingValue("scaledSize"), scaled.count == 2,
              scaled[0] == crop[3] - crop[1], scaled[1] == crop[2] - crop[0], scaled[0] >= 2, scaled[1] >= 2 else { return nil }
        let orientation: Int
        switch p.processingValue("orientation") {
        case .integer(let o)?: orientation = o
        case nil: orientation = 1
        default: return nil
        }
        guard (1...8).contains(orientation) else { return nil }
        // The output's origin on the raw image: the ActiveArea's corner (the pattern is the raw
        // image's), TrimBounds of OpcodeList 2 and 3, then the crop.
        var top = crop[0], left = crop[1]
        for offset in [p.dngValue("activeArea"), p.processingValue("trimBounds2"), p.processingValue("trimBounds3")] {
            switch offset {
            case .integers(let a)? where a.count == 4: top += a[0]; left += a[1]
            case .numbers(let a)? where a.count == 4: top += Int(a[0]); left += Int(a[1])
            case nil: break
            default: return nil
            }
        }
        var planes = [Int](repeating: -1, count: 4)
        for ys in 0..<2 {
            for xs in 0..<2 {
                let out = orientedPosition(x: xs, y: ys, width: scaled[0], height: scaled[1], orientation: orientation)
                planes[(out.y & 1) * 2 + (out.x & 1)] = pattern[((top + ys) & 1) * 2 + ((left + xs) & 1)]
            }
        }
        return SiteLayout(planes: planes, cameraToOutput: p.cameraToOutput)
    }

    /// Where pixel (x, y) of a `width` × `height` image lands under EXIF `orientation`
    /// (the pipeline's own convention, `ImageGeometry.orientedPosition`).
    static func orientedPosition(x: Int, y: Int, width w: Int, height h: Int, orientation: Int) -> (x: Int, y: Int) {
        switch orientation {
        case 1: (x, y)
        case 2: (w - 1 - x, y)
        case 3: (w - 1 - x, h - 1 - y)
        case 4: (x, h - 1 - y)
        case 5: (y, x)
        case 6: (h - 1 - y, x)
        case 7: (h - 1 - y, w - 1 - x)
        default: (y, w - 1 - x)
        }
    }

    /// Σ w · (R, G, B) over the region, from its raw sites: by position in a 2×2 cell, the
    /// camera values M⁻¹ · Σ w · output, of which only the position's own plane is a raw
    /// sample (the others are interpolated: left out); each plane's weighted mean over its
    /// sites, times the region's whole weight, back through M. (The weights of the positions
    /// differ in a region of odd size, so each plane is averaged over its own sites' weight.)
    /// Whether the sums hold sites of every camera plane (a region of one pixel does not).
    public func covers(_ parity: ParitySums) -> Bool {
        (0..<3).allSatisfy { j in (0..<4).contains { planes[$0] == j && parity.sums[$0].w > 0 } }
    }

    public func outputSums(_ parity: ParitySums) -> SIMD3<Double> {
        let m = Matrix3(cameraToOutput), inverse = m.inverse!
        var sums = SIMD3<Double>(), weights = SIMD3<Double>()
        for k in 0..<4 {
            let j = planes[k], s = parity.sums[k]
            sums[j] += (inverse * SIMD3(s.x, s.y, s.z))[j]
            weights[j] += s.w
        }
        let total = parity.sums.reduce(0) { $0 + $1.w }
        guard weights.min() > 0 else {
            // A region too small to hold every plane's site: the pixels' own sum.
            let all = parity.sums.reduce(SIMD4<Double>()) { $0 + $1 }
            return SIMD3(all.x, all.y, all.z)
        }
        return m * (sums / weights * total)
    }

    /// The standard uncertainty of the luminance sum `outputSums` gives (weights
    /// `luminance`) from the CFA's sampling: a source smaller than the 2×2 pattern lands on
    /// the sites of some colours and not others, so each plane's sum over its own sites
    /// misses or repeats part of it, by an amount that depends on where it fell (aliasing,
    /// not noise: the same in every frame of a bracket). The two green positions measure the
    /// same plane independently: their relative difference δ gives the relative variance of a
    /// one-position estimate, a² = δ² / 2, less `noise²` (the relative noise variance of a
    /// one-position estimate, which δ also holds). Each plane's sum carries a² divided by its
    /// number of positions (red and blue 1, green 2), weighted by its part of Y.
    /// Zero for a layout without two positions of one plane.
    public func samplingUncertainty(_ parity: ParitySums, luminance w: SIMD3<Double> = Rec2020.luminanceWeights,
                                    noise: Double = 0) -> Double {
        let twice = (0..<3).first { j in planes.filter { $0 == j }.count == 2 }
        guard let g = twice else { return 0 }
        let m = Matrix3(cameraToOutput), inverse = m.inverse!
        var means: [Double] = [], sums = SIMD3<Double>(), weights = SIMD3<Double>()
        for k in 0..<4 {
            let j = planes[k], s = parity.sums[k]
            let camera = (inverse * SIMD3(s.x, s.y, s.z))[j]
            sums[j] += camera
            weights[j] += s.w
            if j == g && s.w > 0 { means.append(camera / s.w) }
        }
        guard means.count == 2, weights.min() > 0 else { return 0 }
        let total = parity.sums.reduce(0) { $0 + $1.w }
        let planeSums = sums / weights * total
        let average = (means[0] + means[1]) / 2
        guard average != 0 else { return 0 }
        let delta = (means[0] - means[1]) / average
        let a2 = max(0, delta * delta / 2 - noise * noise)
        // Y's weight on each camera plane: c = wᵀ M.
        var variance = 0.0
        for j in 0..<3 {
            let c = w.x * m[0, j] + w.y * m[1, j] + w.z * m[2, j]
            let positions = Double(planes.filter { $0 == j }.count)
            variance += (c * planeSums[j]) * (c * planeSums[j]) * a2 / positions
        }
        return variance.squareRoot()
    }
}
