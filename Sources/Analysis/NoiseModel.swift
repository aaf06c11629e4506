import Foundation
import ImageCore

/// Per-pixel noise variance of a scene-linear image, from the DNG NoiseProfile (tag 51041).
///
/// The NoiseProfile gives, for each camera plane j, the variance of a linear reference
/// value x: `σ²_j(x) = S_j · x + O_j` (DNG 1.7.1 p.59). The output is
/// `out = f · M · x` (f = exposure factor, M = camera→output matrix), so with independent
/// planes the variance of output channel i is `f² · Σ_j M_ij² · σ²_j(x_j) · k_j`, where
/// `x = M⁻¹ · out / f` and k_j is a plane's variance scale (1, or 1/2 for the green of a
/// 2×2 superpixel, which averages two samples). Luminance Y = w · out has variance
/// `f² · Σ_j (Σ_i w_i M_ij)² · σ²_j · k_j`. The shot term uses x as measured, negative
/// values included: the variance is linear in x, so summed over a region it is unbiased
/// (clamping noisy x at 0 would overestimate the noise of dark regions), although a single
/// dark pixel's value can fall below O.
public struct NoiseModel: Sendable, Equatable {
    public var scale: [Double]
    public var offset: [Double]
    public var cameraToOutput: Matrix3
    public var exposureFactor: Double
    public var planeVarianceScale: [Double]
    /// For the mean (or any sum) over a region of a demosaiced CFA image, per camera plane:
    /// interpolation spreads each raw sample over several output pixels, so a region's
    /// output pixels carry the noise of only the raw samples of each colour inside it, a
    /// fraction f_j of its sites, and the variance of their mean is 1/f_j times what
    /// independent pixels would give: [4, 2, 4] for a Bayer pattern demosaiced by bilinear
    /// or RCD interpolation; [1, 1, 1] (no correlation) otherwise. Per-pixel variances
    /// (`variance(ofOutput:)`) do not use it.
    public var samplingVarianceScale: [Double] = [1, 1, 1]
    /// Per-pixel gains applied after Stage 2 (a lens-shading GainMap), row-major, or nil.
    /// A pixel multiplied by g has variance `g · S · x + g² · O` in terms of its corrected value x.
    public var pixelGains: [Float]?

    /// - Parameters:
    ///   - noiseProfile: S₁, O₁[, S₂, O₂, S₃, O₃] (one pair applies to all planes), read by `NoiseProfile`.
    /// - Returns: `nil` when the profile is missing, malformed, or the matrix is singular.
    public init?(noiseProfile: [Double]?, cameraToOutput: [Double], exposureFactor: Double,
                 planeVarianceScale: [Double] = [1, 1, 1]) {
        guard let values = noiseProfile, let profile = try? NoiseProfile(values),
              cameraToOutput.count == 9, Matrix3(cameraToOutput).inverse != nil, exposureFactor > 0 else { return nil }
        scale = profile.scale
        offset = profile.offset
        self.cameraToOutput = Matrix3(cameraToOutput)
        self.exposureFactor = exposureFactor
        self.planeVarianceScale = planeVarianceScale
    }

    /// Variance of each output channel and of Y (weights `luminance`) for one pixel, whose
    /// index selects its gain in `pixelGains`.
    public func variance(ofOutput rgb: SIMD3<Double>, pixel: Int? = nil,
                         luminance: SIMD3<Double> = Rec2020.luminanceWeights) -> (rgb: SIMD3<Double>, y: Double) {
        let gain = pixel.flatMap { i in pixelGains.map { Double($0[i]) } } ?? 1
        return Kernel(self, luminance: luminance).variance(ofOutput: rgb, gain: gain)
    }

    /// The per-pixel variance with everything that does not depend on the pixel computed
    /// once (the inverse matrix, the squared matrix entries, the luminance coefficients).
    public struct Kernel: Sendable {
        let inverse: Matrix3
        let scale: SIMD3<Double>, offset: SIMD3<Double>, planeScale: SIMD3<Double>
        /// `planeScale` times the model's `samplingVarianceScale`: for sums over regions.
        let regionScale: SIMD3<Double>
        let exposureFactor: Double
        /// f² · M_ij² by output row i.
        let squared: (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>)
        /// f² · (Σ_i w_i M_ij)² per camera plane j.
        let luminance: SIMD3<Double>
        public let pixelGains: [Float]?

        public init(_ model: NoiseModel, luminance w: SIMD3<Double> = Rec2020.luminanceWeights) {
            let m = model.cameraToOutput
            inverse = m.inverse!
            scale = SIMD3(model.scale)
            offset = SIMD3(model.offset)
            planeScale = SIMD3(model.planeVarianceScale)
            regionScale = planeScale * SIMD3(model.samplingVarianceScale)
            exposureFactor = model.exposureFactor
            let f2 = model.exposureFactor * model.exposureFactor
            func row(_ i: Int) -> SIMD3<Double> { SIMD3(m[i, 0] * m[i, 0], m[i, 1] * m[i, 1], m[i, 2] * m[i, 2]) * f2 }
            squared = (row(0), row(1), row(2))
            var c = SIMD3<Double>()
            for j in 0..<3 {
                var coefficient = 0.0
                for i in 0..<3 { coefficient += w[i] * m[i, j] }
                c[j] = coefficient * coefficient * f2
            }
            self.luminance = c
            pixelGains = model.pixelGains
        }

        /// Σ w² · variance over pixels, from two sums over them: `weightedOutputs` = Σ w² g ·
        /// rgb and `weightedGains` = Σ w² g² (g = a pixel's gain). Exact, because a pixel's
        /// variance is linear in g · rgb and g² (so no pixel needs the matrices).
        public func variance(weightedOutputs a: SIMD3<Double>, weightedGains b: Double) -> (rgb: SIMD3<Double>, y: Double) {
            variance(weightedOutputs: a, weightedGains: b, planes: planeScale)
        }

        /// As `variance(weightedOutputs:weightedGains:)`, for the sum over a region of
        /// pixels that demosaicing has correlated (`samplingVarianceScale`).
        public func regionVariance(weightedOutputs a: SIMD3<Double>, weightedGains b: Double) -> (rgb: SIMD3<Double>, y: Double) {
            variance(weightedOutputs: a, weightedGains: b, planes: regionScale)
        }

        private func variance(weightedOutputs a: SIMD3<Double>, weightedGains b: Double, planes: SIMD3<Double>) -> (rgb: SIMD3<Double>, y: Double) {
            let v = (scale * cameraPlanes(ofOutput: a) + b * offset) * planes
            return (outputVariances(ofPlanes: v), (luminance * v).sum())
        }

        /// The camera planes' values behind output channels `rgb` (before the exposure factor).
        private func cameraPlanes(ofOutput rgb: SIMD3<Double>) -> SIMD3<Double> { inverse * (rgb / exposureFactor) }

        /// The output channels' variances from the independent camera planes' variances `v`.
        private func outputVariances(ofPlanes v: SIMD3<Double>) -> SIMD3<Double> {
            SIMD3((squared.0 * v).sum(), (squared.1 * v).sum(), (squared.2 * v).sum())
        }

        /// Variances of the output channels and of Y for a pixel whose output is `rgb`,
        /// multiplied by `gain` after Stage 2.
        public func variance(ofOutput rgb: SIMD3<Double>, gain g: Double = 1) -> (rgb: SIMD3<Double>, y: Double) {
            variance(weightedOutputs: g * rgb, weightedGains: g * g)
        }

        /// The variance one pixel's value has, for a per-pixel layer (`convert --std`): as
        /// `variance(ofOutput:gain:)` — S · x + O per camera plane at the value x as measured,
        /// an unbiased estimate, so that the layer's mean over a patch is the patch's variance
        /// and its sum over a region the region's — except where noise took x so far below 0
        /// that S · x + O ≤ 0, an impossible variance: there the smallest one a pixel can have,
        /// O (its true level 0), so that no unclipped pixel has σ = 0. Clamping x at 0 instead
        /// would keep every dark pixel's σ at least the read noise's but raise the layer's
        /// mean by S · (E[x⁺] − μ) wherever the truth μ is within a few σ of 0 (7–12 % on the
        /// simulator's grey ramp 12–16 stops below white): no estimate from one sample is both
        /// unbiased and right for every dark pixel's own interval (docs/photometry.md).
        public func pixelVariance(ofOutput rgb: SIMD3<Double>, gain g: Double = 1) -> SIMD3<Double> {
            let floor = g * g * offset
            let estimate = scale * cameraPlanes(ofOutput: g * rgb) + floor
            return outputVariances(ofPlanes: estimate.replacing(with: floor, where: estimate .<= 0) * planeScale)
        }
    }
}
