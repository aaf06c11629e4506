import Analysis
import Engine
import Foundation
import Measuring

/// A sweep of one small bright target across the field (the rotation method: a lamp or a lit
/// patch photographed at several positions from the axis to the rim, the camera turned between
/// captures): per capture, the target's signal summed over its image above the dark ground,
/// per camera channel, and the signal-weighted mean of the basis (r², r⁴, r⁶) over its pixels.
/// The sum is what the lens passes of the target's light whatever the projection does to its
/// shape, so the sums against the radius are A · V(r) (docs/lens.md).
struct LensSweep {
    /// Fewest captures: 4 for the model and 3 to measure the scatter about it.
    static let minimumPositions = 7
    /// The innermost target must lie within this share of the largest radius, to tie the
    /// fit's level to the axis.
    static let axisReach = 0.25

    var targets: [SweepTarget] = []
    var paths: [String] = []

    mutating func add(_ image: SceneLinearImage, path: String, geometry: RadialFalloff) throws {
        targets.append(try SweepTarget(image: image, path: path, geometry: geometry, noise: AnalysisInput.noiseModel(for: image)))
        paths.append(path)
    }

    /// The fit of each channel's sums by weighted least squares (docs/lens.md). With every
    /// capture's noise known (its NoiseProfile): weights 1/σ², the covariance (XᵀWX)⁻¹, and when
    /// the residuals exceed that noise (χ² beyond about its 95th percentile, n + 2√(2n) for n − 4
    /// degrees of freedom) the covariance × χ²/(n − 4); each position's leave-one-out residual
    /// beyond its noise is the model's departure. Without: weights 1/m² (the scatter taken as
    /// relative), the covariance s² (XᵀWX)⁻¹ from the residuals × (t₀.₉₇₅(n − 4) / 1.96)², so
    /// that ±1.96 standard uncertainties is the Student interval of 95 %.
    func fit(path: String, maxResidual: Double, reach: Double) throws -> LensFitResult {
        let n = targets.count
        guard n >= Self.minimumPositions else {
            throw PhotometryError(path: path, reason: "a sweep needs at least \(Self.minimumPositions) positions of the target; \(n) given", category: .calibrationMismatch)
        }
        guard let innermost = targets.map(\.radius).min(), innermost <= Self.axisReach * reach else {
            throw PhotometryError(path: path, reason: String(format: "the sweep's innermost target lies at r = %.2f: one position must be near the axis (r ≤ %.2f) to fix the level V = 1 is relative to", targets.map(\.radius).min() ?? 0, Self.axisReach * reach),
                                  category: .calibrationMismatch)
        }
        let variances = targets.compactMap(\.variance)
        let noiseKnown = variances.count == n && variances.allSatisfy { $0.x > 0 && $0.y > 0 && $0.z > 0 }
        let basis = targets.map(\.basis), dof = Double(n - 4)
        // The positions by radius, those at one radius together: the departure's abscissae.
        let order = (0..<n).sorted { targets[$0].radius < targets[$1].radius }
        var out = LensFitResult(points: n)
        var departures: [[Double]] = []
        for c in 0..<3 {
            let values = targets.map { $0.signal[c] }
            let weights = noiseKnown ? variances.map { 1 / $0[c] } : values.map { 1 / max($0 * $0, 1e-300) }
            guard let (beta, inverse, rss) = RadialLeastSquares.solve(values, basis: basis, weights: weights), beta[0] > 0 else {
                throw PhotometryError(path: path, reason: "the sweep's targets do not span enough radii to fit the fall-off (they must lie at 4 or more distinct distances from the centre)",
                                      category: .calibrationMismatch)
            }
            let models = basis.map { RadialLeastSquares.model(beta, $0) }
            let relative = (0..<n).map { values[$0] / models[$0] - 1 }
            let worstIndex = (0..<n).max { abs(relative[$0]) < abs(relative[$1]) }!
            let rms = (relative.map { $0 * $0 }.reduce(0, +) / Double(n)).squareRoot()
            if rms > maxResidual {
                throw PhotometryError(path: paths[worstIndex], reason: String(format: "the sweep's targets scatter %.2g %% (RMS, channel %d) about a radial fall-off, more than %.2g %%; this capture departs most (%.2g %%): a source that changed between captures, a target partly hidden, or light from elsewhere",
                                                                            100 * rms, c, 100 * maxResidual, 100 * abs(relative[worstIndex])),
                                      category: .calibrationMismatch)
            }
            let departs = noiseKnown && rss > dof + 2 * (2 * dof).squareRoot()
            let variance = noiseKnown ? (departs ? rss / dof : 1) : rss / dof * pow(Self.studentT975(dof), 2) / (1.959964 * 1.959964)
            let (a, covariance) = RadialLeastSquares.coefficients(beta: beta, inverse: inverse, variance: variance)
            out.coefficients.append([a.x, a.y, a.z])
            out.covariances.append(covariance)
            out.rms[c] = rms
            out.worst[c] = abs(relative[worstIndex])
            // Each position's leave-one-out residual e / (1 − h) beyond its noise (σ² / (1 − h),
            // taken off in quadrature): with so few positions the fit bends to each one, and its
            // residual there understates the model's error between them. Kept whether or not the
            // χ² test finds a departure: with n − 4 degrees of freedom it seldom finds one of
            // another radial shape, whose error between the positions is nonetheless there.
            departures.append(order.map { k in
                guard noiseKnown else { return 0 }
                let x = [1, basis[k].x, basis[k].y, basis[k].z]
                var h = 0.0
                for i in 0..<4 { for j in 0..<4 { h += x[i] * inverse[4 * i + j] * x[j] } }
                let free = max(1 - weights[k] * h, 0.05)
                let e = relative[k] / free, noise2 = variances[k][c] / (models[k] * models[k]) / free
                return (e < 0 ? -1 : 1) * max(e * e - noise2, 0).squareRoot()
            })
        }
        if departures.contains(where: { $0.contains { $0 != 0 } }) {
            (out.ringRadii, out.ringResiduals) = Self.byRadius(order.map { targets[$0].radius }, departures)
        }
        return out
    }

    /// Values at increasing radii with those at one radius (within 10⁻⁴) averaged, so that the
    /// radii increase strictly.
    static func byRadius(_ radii: [Double], _ values: [[Double]]) -> ([Double], [[Double]]) {
        var groups: [[Int]] = []
        for k in radii.indices {
            if let last = groups.last?.last, radii[k] - radii[last] < 1e-4 { groups[groups.count - 1].append(k) } else { groups.append([k]) }
        }
        let r = groups.map { g in g.map { radii[$0] }.reduce(0, +) / Double(g.count) }
        return (r, values.map { v in groups.map { g in g.map { v[$0] }.reduce(0, +) / Double(g.count) } })
    }

    /// The 97.5th percentile of Student's t with `dof` degrees of freedom, by the
    /// Cornish–Fisher expansion about the normal's 1.96 (within 0.7 % of the tables from 3
    /// degrees of freedom on).
    static func studentT975(_ dof: Double) -> Double {
        let z = 1.959964, z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z
        return z + (z3 + z) / (4 * dof) + (5 * z5 + 16 * z3 + 3 * z) / (96 * dof * dof)
            + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * dof * dof * dof)
    }
}

/// The one bright target of a sweep capture: found as the pixels above half its peak
/// (connected to the brightest pixel), measured in a circle of twice their radius plus 3
/// pixels about their centroid, the ground taken as the mean of a ring outside it.
struct SweepTarget {
    var signal: SIMD3<Double>
    var basis: SIMD3<Double>
    var radius: Double
    /// The noise variance of `signal` from the capture's noise model: the circle's pixels' and
    /// the ground's mean's, times the circle's pixel count squared. Nil without a model.
    var variance: SIMD3<Double>?

    init(image: SceneLinearImage, path: String, geometry: RadialFalloff, noise: NoiseModel?) throws {
        let w = image.width, h = image.height, px = image.pixels.samples
        func luma(_ i: Int) -> Double { Double(px[3 * i]) + Double(px[3 * i + 1]) + Double(px[3 * i + 2]) }
        // The ground: the median of a sample of the image; its noise from the median absolute deviation.
        let sample = stride(from: 0, to: w * h, by: max(1, w * h / 20000)).map(luma).filter(\.isFinite).sorted()
        guard !sample.isEmpty else { throw PhotometryError(path: path, reason: "the capture has no finite values", category: .corruptData) }
        let ground = sample[sample.count / 2]
        let spread = 1.4826 * (sample.map { abs($0 - ground) }.sorted()[sample.count / 2])
        var peakIndex = 0, peak = -Double.infinity
        for i in 0..<(w * h) where luma(i) > peak { (peak, peakIndex) = (luma(i), i) }
        guard peak - ground > max(50 * spread, 0.5 * abs(ground), 1e-9) else {
            throw PhotometryError(path: path, reason: "no target stands out from the dark ground (a sweep capture holds one small bright target)", category: .calibrationMismatch)
        }
        let half = ground + 0.5 * (peak - ground)
        let blob = Self.connected(from: peakIndex, width: w, height: h) { luma($0) > half }
        let above = (0..<(w * h)).reduce(0) { luma($1) > half ? $0 + 1 : $0 }
        guard Double(blob.count) >= 0.9 * Double(above) else {
            throw PhotometryError(path: path, reason: "more than one bright target: \(above - blob.count) pixels above half the brightest one's level lie apart from it", category: .calibrationMismatch)
        }
        var cx = 0.0, cy = 0.0, total = 0.0
        for i in blob {
            let v = luma(i) - ground
            cx += v * Double(i % w)
            cy += v * Double(i / w)
            total += v
        }
        cx /= total
        cy /= total
        let aperture = 2 * (Double(blob.count) / Double.pi).squareRoot() + 3
        let inner = aperture + 2, outer = inner + max(6, aperture)
        guard cx - aperture >= 0, cy - aperture >= 0, cx + aperture < Double(w - 1), cy + aperture < Double(h - 1) else {
            throw PhotometryError(path: path, reason: String(format: "the target at pixel (%.0f, %.0f) is too close to the image's edge to be measured whole", cx, cy), category: .calibrationMismatch)
        }
        let kernel = noise.map { NoiseModel.Kernel($0) }
        var ringSum = SIMD3<Double>(), ringCount = 0, ringVariance = SIMD3<Double>(), circleVariance = SIMD3<Double>()
        var sum = SIMD3<Double>(), weighted = SIMD3<Double>(), weight = 0.0, clipped = false
        var inside: [Int] = []
        for y in max(0, Int(cy - outer))...min(h - 1, Int(cy + outer) + 1) {
            for x in max(0, Int(cx - outer))...min(w - 1, Int(cx + outer) + 1) {
                let d = ((Double(x) - cx) * (Double(x) - cx) + (Double(y) - cy) * (Double(y) - cy)).squareRoot()
                let i = y * w + x
                let v = SIMD3(Double(px[3 * i]), Double(px[3 * i + 1]), Double(px[3 * i + 2]))
                if d <= aperture {
                    inside.append(i)
                    sum += v
                    if let kernel { circleVariance += kernel.variance(ofOutput: v).rgb }
                    if let clip = image.clipMask, clip[i] != 0 { clipped = true }
                } else if d >= inner, d <= outer, v.x.isFinite, v.y.isFinite, v.z.isFinite {
                    ringSum += v
                    ringCount += 1
                    if let kernel { ringVariance += kernel.variance(ofOutput: v).rgb }
                }
            }
        }
        guard !clipped else {
            throw PhotometryError(path: path, reason: "the target is clipped: expose the sweep below white", category: .calibrationMismatch)
        }
        guard sum.x.isFinite, sum.y.isFinite, sum.z.isFinite, ringCount >= 20 else {
            throw PhotometryError(path: path, reason: "the target or the ground about it holds non-finite values", category: .corruptData)
        }
        let g = ringSum / Double(ringCount), count = Double(inside.count)
        signal = sum - g * count
        variance = kernel == nil ? nil : circleVariance + ringVariance * (count * count) / Double(ringCount * ringCount)
        let gLuma = g.x + g.y + g.z
        for i in inside {
            let v = max(0, luma(i) - gLuma)
            weighted += v * RadialFalloff.basis(geometry.radius(x: i % w, y: i / w, width: w, height: h))
            weight += v
        }
        basis = weighted / weight
        radius = geometry.radius(u: (cx + 0.5) / Double(w), v: (cy + 0.5) / Double(h), width: w, height: h)
        guard signal.x > 0, signal.y > 0, signal.z > 0 else {
            throw PhotometryError(path: path, reason: "the target gives no signal above the ground in every channel", category: .calibrationMismatch)
        }
    }

    /// The pixels connected (4-neighbours) to `start` that satisfy `keep`.
    static func connected(from start: Int, width w: Int, height h: Int, keep: (Int) -> Bool) -> [Int] {
        var seen = Set<Int>([start]), stack = [start], out: [Int] = []
        while let i = stack.popLast() {
            out.append(i)
            let x = i % w, y = i / w
            for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] where nx >= 0 && ny >= 0 && nx < w && ny < h {
                let j = ny * w + nx
                if !seen.contains(j), keep(j) {
                    seen.insert(j)
                    stack.append(j)
                }
            }
        }
        return out
    }
}
