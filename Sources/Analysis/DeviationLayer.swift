import Foundation
import ImageCore

/// A file's per-pixel standard deviation layer (`merge`'s, `convert --std`'s): σ of each
/// output channel R, G, B, in the image's units, and what it takes to turn the variances of
/// a region's pixels into the variance of the region's sum.
///
/// The layer holds σ²_i = Σ_j S_ij · v_j per pixel, S = M∘M (the squared entries of the
/// camera → output matrix M, times the exposure factor squared), v_j the variance of camera
/// plane j there. Three things follow from it, exactly:
///
/// - camera-plane variances v = S⁻¹ σ² (per pixel, so also summed over a region);
/// - Y = w · output has variance Σ_j c_j² v_j with c = wᵀM: k · σ², k = (c∘c)ᵀ S⁻¹ (the
///   exposure factor cancels);
/// - a region of a demosaiced CFA image: interpolation spreads each raw sample over several
///   pixels, so the sum of a region has the noise of its raw samples only, the variance of
///   plane j scaled by a_j = 1 / (its share of the sites): [4, 2, 4] for Bayer data under
///   bilinear or RCD interpolation, [1, 1, 1] for LinearRaw and 2×2 superpixels (see
///   `NoiseModel.samplingVarianceScale`). The region's output variances are then
///   S · diag(a) · S⁻¹ · Σ w² σ², and Y's (c∘c)ᵀ · diag(a) · S⁻¹ · Σ w² σ².
///
/// Pixels of a merged or LinearRaw image are independent; a converted CFA image's σ is the
/// σ a raw sample of that value would have (the per-pixel σ of an interpolated value is
/// smaller, which `samplingScale` accounts for in sums). Without the matrix the channels are
/// taken as independent: Y's variance is then Σ w_i² σ_i².
public struct DeviationLayer: Sendable {
    /// σ of R, G, B per pixel, interleaved, row-major.
    public var deviation: [Float]
    /// The region-sum factors of R, G, B and Y on Σ w² σ² (R, G, B), as rows.
    let rows: (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>, SIMD3<Double>)

    /// - Parameters:
    ///   - cameraToOutput: row-major 3×3 of the layer's own channels (the image's provenance
    ///     as stored), or empty when unknown.
    ///   - measuredMatrix: the matrix of the channels measured, when the image is converted
    ///     to another colour space before measuring (e.g. ACEScg to Rec.2020); nil: the same.
    ///   - samplingScale: a_j per camera plane (see the type's documentation).
    public init(deviation: [Float], cameraToOutput: [Double], measuredMatrix: [Double]? = nil, samplingScale: SIMD3<Double>,
                luminance w: SIMD3<Double> = Rec2020.luminanceWeights) {
        self.deviation = deviation
        let measured = measuredMatrix ?? cameraToOutput
        guard cameraToOutput.count == 9, measured.count == 9, let inverse = Matrix3(cameraToOutput.map { $0 * $0 }).inverse else {
            let a = (samplingScale.x + samplingScale.y + samplingScale.z) / 3
            rows = (SIMD3(a, 0, 0), SIMD3(0, a, 0), SIMD3(0, 0, a), w * w * a)
            return
        }
        let m = Matrix3(measured)
        // Camera-plane variances from the layer, scaled for sums: diag(a) · S⁻¹.
        let scaled = Matrix3([samplingScale.x, 0, 0, 0, samplingScale.y, 0, 0, 0, samplingScale.z]) * inverse
        let region = Matrix3(measured.map { $0 * $0 }) * scaled
        var c = SIMD3<Double>()
        for j in 0..<3 { c[j] = w.x * m[0, j] + w.y * m[1, j] + w.z * m[2, j] }
        let cc = c * c
        var y = SIMD3<Double>()
        for i in 0..<3 { y[i] = cc.x * scaled[0, i] + cc.y * scaled[1, i] + cc.z * scaled[2, i] }
        func row(_ i: Int) -> SIMD3<Double> { SIMD3(region[i, 0], region[i, 1], region[i, 2]) }
        rows = (row(0), row(1), row(2), y)
    }

    /// The layer of an image whose provenance records its demosaic ("bilinear" or "rcd"
    /// interpolation of Bayer data: [4, 2, 4]; anything else [1, 1, 1]).
    /// `measured`: the image as measured, when it was converted to another colour space.
    public init(deviation: [Float], image: SceneLinearImage, measured: SceneLinearImage? = nil) {
        self.init(deviation: deviation, cameraToOutput: image.provenance.cameraToOutput,
                  measuredMatrix: measured?.provenance.cameraToOutput, samplingScale: Self.samplingScale(image))
    }

    /// a_j of an image: as its file records (`standardDeviationRegionScale`), else from its
    /// demosaic (bilinear or RCD interpolation of Bayer data: [4, 2, 4]; else [1, 1, 1]).
    public static func samplingScale(_ image: SceneLinearImage) -> SIMD3<Double> {
        if case .numbers(let a)? = image.provenance.processingValue("standardDeviationRegionScale"), a.count == 3,
           a.allSatisfy({ $0.isFinite && $0 >= 1 && $0 <= 64 }) {
            return SIMD3(a[0], a[1], a[2])
        }
        return image.provenance.hasInterpolatedBayer ? SIMD3(4, 2, 4) : SIMD3(1, 1, 1)
    }

    /// Σ w² σ² of R, G, B over the pixels `selection` holds (weights w; 1 for a hard region).
    public func weightedSquares(_ selection: PixelSelection) -> SIMD3<Double> {
        var total = SIMD3<Double>()
        let b = selection.bounds, width = selection.width
        for y in b.top..<b.bottom {
            var row = SIMD3<Double>()
            for x in b.left..<b.right {
                let i = y * width + x
                let w = Double(selection.weights?[i] ?? 1)
                guard w > 0 else { continue }
                let s = SIMD3(Double(deviation[3 * i]), Double(deviation[3 * i + 1]), Double(deviation[3 * i + 2]))
                row += s * s * (w * w)
            }
            total += row
        }
        return total
    }

    /// The variance of pixel `i`'s Y as it adds to a sum over a region (Y's region factor on
    /// the pixel's σ²): what a draw of the pixel's noise takes when sums of draws must carry
    /// the region's variance.
    public func luminanceVariance(pixel i: Int) -> Double {
        let s = SIMD3(Double(deviation[3 * i]), Double(deviation[3 * i + 1]), Double(deviation[3 * i + 2]))
        return (rows.3 * s * s).sum()
    }

    /// The variances of the region sums of R, G, B and Y (Σ w · value) from `weightedSquares`.
    public func regionVariance(_ squares: SIMD3<Double>) -> SIMD4<Double> {
        SIMD4((rows.0 * squares).sum(), (rows.1 * squares).sum(), (rows.2 * squares).sum(), (rows.3 * squares).sum())
    }
}

extension ImageProvenance {
    /// Whether the image is Bayer data whose missing colours were interpolated (bilinear or
    /// RCD): its pixels share raw samples (region sums, `DeviationLayer`, `NoiseModel`) and
    /// keep each raw sample at its site (`SiteLayout`).
    public var hasInterpolatedBayer: Bool {
        let demosaic = processingValue("demosaic")
        return demosaic == .text("bilinear") || demosaic == .text("rcd")
    }
}
