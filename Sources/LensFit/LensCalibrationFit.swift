import Engine
import Foundation
import Measuring

/// How `Pipeline.calibrateLens` fits a lens's vignetting.
public struct LensFitOptions: Sendable {
    /// What the captures are.
    public enum Method: String, Sendable {
        /// Each capture is of a uniform source filling the frame.
        case flatField = "flat field"
        /// Each capture is of one small bright target (a lamp, a lit patch) on a dark ground,
        /// moved across the field between captures (the rotation method).
        case sweep
    }
    public var method = Method.flatField
    /// Cells across the image's width (their height the same in pixels): each cell's mean is
    /// one point of the fit (flat fields).
    public var cellsAcross = 48
    /// Largest RMS relative residual about the radial model: of a flat field's cells before it
    /// is refused as not uniform; of a sweep's targets before the sweep is refused as unsteady.
    public var maxResidual = 0.02
    /// The centre, relative to the image (default: its middle).
    public var centerX = 0.5, centerY = 0.5
    /// Decoding limits, threads, digest policy.
    public var develop = DevelopOptions()

    public init() {}
}

extension Pipeline {
    /// Fits the vignetting of the lens that took `captures`, per camera channel: V_c(r) = 1 +
    /// a₁r² + a₂r⁴ + a₃r⁶, r the radius relative to the half-diagonal (docs/lens.md). Each
    /// capture is developed in camera RGB (no crop, the sensor's orientation, 2×2 superpixels
    /// for CFA). Flat fields (a uniform source filling the field) are cut into cells, each
    /// channel's cell means fitted by least squares as A · V(r), several captures combined with
    /// inverse-covariance weights. A sweep (one small target moved across the field) gives one
    /// point per capture — the target's summed signal above the ground — fitted the same way.
    /// The covariance of (a₁, a₂, a₃) comes from the residuals' scatter, so a model that does
    /// not fit widens it.
    /// - Throws: `PhotometryError` for captures of different cameras, lenses or apertures, a
    ///   capture that is not a uniform flat field (residuals above `maxResidual`) or holds no
    ///   single target, too few cells or sweep positions; the decoders' errors.
    public static func calibrateLens(captures: [String], options: LensFitOptions = LensFitOptions()) throws -> LensCalibration {
        guard !captures.isEmpty else {
            throw PhotometryError(path: "", reason: "a lens calibration needs at least one capture", category: .usage)
        }
        if options.method == .sweep, captures.count < LensSweep.minimumPositions {
            throw PhotometryError(path: captures[0], reason: "a sweep needs at least \(LensSweep.minimumPositions) positions of the target (4 for the model and 3 to measure its scatter); \(captures.count) given",
                                  category: .calibrationMismatch)
        }
        var develop = options.develop
        develop.encoding = .cameraNative
        develop.crop = .none
        develop.applyOrientation = false
        develop.exposure = .none
        develop.includeMasks = false
        develop.demosaic = .superpixel
        develop.lens = nil
        develop.filter = nil
        develop.spectral = nil
        var first: (camera: CameraIdentity, fNumber: Double, focal: Double?)?
        var shading = false
        var flat = FlatFieldFits(), sweep = LensSweep()
        let geometry = RadialFalloff(family: .evenPolynomial, coefficients: [[0, 0, 0]], centerX: options.centerX, centerY: options.centerY)
        for path in captures {
            let developed = try Pipeline.develop(path: path, options: develop)
            let identity = CameraIdentity(developed.dng.metadata)
            let n = try Self.lensCaptureAperture(developed.dng.metadata, identity: identity, path: path, first: first)
            if first == nil { first = (identity, n, developed.dng.metadata.capture.focalLength) }
            shading = try shading || Pipeline.carriesLensShading(developed.dng, options: develop)
            switch options.method {
            case .flatField: try flat.add(developed.image, path: path, options: options, reach: geometry.reach)
            case .sweep: try sweep.add(developed.image, path: path, geometry: geometry)
            }
        }
        let fit = options.method == .flatField ? flat.result(reach: geometry.reach) : try sweep.fit(path: captures[0], maxResidual: options.maxResidual, reach: geometry.reach)
        let falloff = RadialFalloff(family: .evenPolynomial, coefficients: fit.coefficients, centerX: options.centerX, centerY: options.centerY)
        if let why = falloff.problem { throw PhotometryError(path: captures[0], reason: "the fitted fall-off cannot be used: \(why)", category: .calibrationMismatch) }
        return LensCalibration(created: ISO8601DateFormatter().string(from: Date()), camera: first!.camera, focalLength: first!.focal,
                               fNumber: first!.fNumber, method: options.method.rawValue, captures: captures.map { URL(fileURLWithPath: $0).lastPathComponent },
                               falloff: falloff, covariance: fit.covariances, residualRMS: fit.rms, residualMax: fit.worst, cells: fit.points,
                               lensShadingOpcodes: shading, ringRadii: fit.ringRadii, ringResiduals: fit.ringResiduals)
    }

    /// A lens capture's f-number, after checking that it comes from the first capture's camera
    /// and lens at its aperture (within ⅙ stop).
    private static func lensCaptureAperture(_ metadata: DNGMetadata, identity: CameraIdentity, path: String,
                                            first: (camera: CameraIdentity, fNumber: Double, focal: Double?)?) throws -> Double {
        guard let n = metadata.capture.fNumber, n > 0 else {
            throw PhotometryError(path: path, reason: "a lens calibration needs the f-number (vignetting depends on it), and the file records none")
        }
        guard let first else { return n }
        if let why = first.camera.bodyOrLensMismatch(identity) {
            throw PhotometryError(path: path, reason: "all captures of a lens calibration must come from one camera and lens: \(why)", category: .calibrationMismatch)
        }
        if abs(2 * log2(n / first.fNumber)) > 1.0 / 6 {
            throw PhotometryError(path: path, reason: String(format: "taken at f/%.3g, the first capture at f/%.3g: calibrate each aperture on its own", n, first.fNumber),
                                  category: .calibrationMismatch)
        }
        return n
    }
}

/// What a fit of the three channels gives the calibration file.
struct LensFitResult {
    var coefficients: [[Double]] = [], covariances: [[Double]] = []
    var rms = [0.0, 0.0, 0.0], worst = [0.0, 0.0, 0.0]
    var points = 0
    var ringRadii: [Double] = [], ringResiduals: [[Double]] = [[], [], []]
}

/// The flat-field captures' fits, channel by channel, combined at the end.
struct FlatFieldFits {
    var fits: [[(a: SIMD3<Double>, covariance: [Double])]] = [[], [], []]
    var ringResiduals: [[[Double]]] = [[], [], []]
    /// Per capture, the mean radius of each ring's cells (NaN for a ring without cells).
    var ringRadii: [[Double]] = []
    var rms = [0.0, 0.0, 0.0], worst = [0.0, 0.0, 0.0], cells = 0

    mutating func add(_ image: SceneLinearImage, path: String, options: LensFitOptions, reach: Double) throws {
        let grid = LensCells(image: image, across: options.cellsAcross, centerX: options.centerX, centerY: options.centerY)
        for c in 0..<3 {
            let fit = try grid.fit(channel: c, path: path, maxResidual: options.maxResidual, reach: reach)
            fits[c].append((fit.a, fit.covariance))
            ringResiduals[c].append(fit.rings)
            rms[c] = max(rms[c], fit.rms)
            worst[c] = max(worst[c], fit.worst)
        }
        ringRadii.append(grid.ringRadii(reach: reach))
        cells += grid.count
    }

    /// The captures combined by inverse-covariance weighting; each ring's residual averaged over
    /// them (rings without cells: 0), placed at the mean radius of its cells (the outermost
    /// ring's cells lie nearer its inner edge: only the corners reach its outer one), or at its
    /// middle when it has none.
    func result(reach: Double) -> LensFitResult {
        var out = LensFitResult(rms: rms, worst: worst, points: cells)
        out.ringRadii = (0..<LensCells.rings).map { k in
            let radii = ringRadii.map { $0[k] }.filter { !$0.isNaN }
            return radii.isEmpty ? (Double(k) + 0.5) / Double(LensCells.rings) * reach : radii.reduce(0, +) / Double(radii.count)
        }
        out.ringResiduals = []
        for c in 0..<3 {
            let (a, cov) = LensCells.combine(fits[c])
            out.coefficients.append([a.x, a.y, a.z])
            out.covariances.append(cov)
            out.ringResiduals.append((0..<LensCells.rings).map { k in
                let values = ringResiduals[c].map { $0[k] }.filter { !$0.isNaN }
                return values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count)
            })
        }
        return out
    }
}

/// Least squares of m = A · (1 + a·b) for the radial model, b = (r², r⁴, r⁶): the normal
/// equations for β = (A, A·a₁, A·a₂, A·a₃) and the covariance of a through a = β[1...3] / A.
enum RadialLeastSquares {
    /// β, (XᵀWX)⁻¹ and the weighted residual sum of squares; nil when the points do not span
    /// enough radii.
    static func solve(_ values: [Double], basis: [SIMD3<Double>], weights: [Double]? = nil) -> (beta: [Double], inverse: [Double], rss: Double)? {
        var xtx = [Double](repeating: 0, count: 16), xty = [Double](repeating: 0, count: 4)
        for k in values.indices {
            let row = [1, basis[k].x, basis[k].y, basis[k].z], w = weights?[k] ?? 1
            for i in 0..<4 {
                xty[i] += w * row[i] * values[k]
                for j in 0..<4 { xtx[4 * i + j] += w * row[i] * row[j] }
            }
        }
        guard let inverse = LensCells.invert(xtx, n: 4) else { return nil }
        var beta = [Double](repeating: 0, count: 4)
        for i in 0..<4 { for j in 0..<4 { beta[i] += inverse[4 * i + j] * xty[j] } }
        var rss = 0.0
        for k in values.indices {
            let residual = values[k] - model(beta, basis[k])
            rss += (weights?[k] ?? 1) * residual * residual
        }
        return (beta, inverse, rss)
    }

    static func model(_ beta: [Double], _ b: SIMD3<Double>) -> Double { beta[0] + beta[1] * b.x + beta[2] * b.y + beta[3] * b.z }

    /// a = β[1...3] / β₀ and its covariance J (s² (XᵀWX)⁻¹) Jᵀ (row-major 3×3).
    static func coefficients(beta: [Double], inverse: [Double], variance s2: Double) -> (a: SIMD3<Double>, covariance: [Double]) {
        let a = SIMD3(beta[1], beta[2], beta[3]) / beta[0]
        var jacobian = [Double](repeating: 0, count: 12)
        for i in 0..<3 {
            jacobian[4 * i] = -a[i] / beta[0]
            jacobian[4 * i + i + 1] = 1 / beta[0]
        }
        var covariance = [Double](repeating: 0, count: 9)
        for i in 0..<3 {
            for j in 0..<3 {
                var s = 0.0
                for p in 0..<4 { for q in 0..<4 { s += jacobian[4 * i + p] * s2 * inverse[4 * p + q] * jacobian[4 * j + q] } }
                covariance[3 * i + j] = s
            }
        }
        return (a, covariance)
    }
}

/// A flat-field capture cut into square cells: each cell's mean per channel (unclipped,
/// finite pixels only) and the mean of the basis (r², r⁴, r⁶) over its pixels.
struct LensCells {
    var means: [SIMD3<Double>] = []
    var basis: [SIMD3<Double>] = []
    var count: Int { means.count }

    init(image: SceneLinearImage, across: Int, centerX: Double, centerY: Double) {
        let w = image.width, h = image.height
        let side = max(2, w / max(1, across))
        let geometry = RadialFalloff(family: .evenPolynomial, coefficients: [[0, 0, 0]], centerX: centerX, centerY: centerY)
        let clip = image.clipMask
        let px = image.pixels.samples
        for top in stride(from: 0, to: h - side + 1, by: side) {
            for left in stride(from: 0, to: w - side + 1, by: side) {
                var sum = SIMD3<Double>(), b = SIMD3<Double>(), n = 0, bad = false
                for y in top..<(top + side) {
                    for x in left..<(left + side) {
                        let i = y * w + x
                        let v = SIMD3(Double(px[3 * i]), Double(px[3 * i + 1]), Double(px[3 * i + 2]))
                        if let clip, clip[i] != 0 { bad = true }
                        if !(v.x.isFinite && v.y.isFinite && v.z.isFinite) { bad = true }
                        sum += v
                        b += RadialFalloff.basis(geometry.radius(x: x, y: y, width: w, height: h))
                        n += 1
                    }
                }
                guard !bad, n > 0 else { continue }
                means.append(sum / Double(n))
                basis.append(b / Double(n))
            }
        }
    }

    /// Rings the relative residuals are averaged over, from the centre to `reach`.
    static let rings = 20

    /// Channel `c`'s least-squares fit of m = A · (1 + a·b): the coefficients a, their
    /// covariance (row-major 3×3), the RMS and largest relative residual, and the mean
    /// relative residual of each of `rings` rings out to `reach` (NaN for a ring without cells).
    func fit(channel c: Int, path: String, maxResidual: Double,
             reach: Double) throws -> (a: SIMD3<Double>, covariance: [Double], rms: Double, worst: Double, rings: [Double]) {
        let n = count
        guard n >= 12 else {
            throw PhotometryError(path: path, reason: "only \(n) cells of the image are unclipped: a flat field must fill the frame below white", category: .calibrationMismatch)
        }
        let values = means.map { $0[c] }
        guard let (beta, inverse, rss) = RadialLeastSquares.solve(values, basis: basis) else {
            throw PhotometryError(path: path, reason: "the cells do not span enough radii to fit the fall-off", category: .calibrationMismatch)
        }
        guard beta[0] > 0 else {
            throw PhotometryError(path: path, reason: "channel \(c) has no positive level on the axis: not a flat field", category: .calibrationMismatch)
        }
        var worst = 0.0
        var ringSum = [Double](repeating: 0, count: Self.rings), ringSquares = ringSum, ringCount = [Int](repeating: 0, count: Self.rings)
        for k in 0..<n {
            let model = RadialLeastSquares.model(beta, basis[k])
            let residual = values[k] - model
            worst = max(worst, abs(residual / model))
            let ring = Self.ring(basis[k], reach: reach)
            ringSum[ring] += residual / model
            ringSquares[ring] += (residual / model) * (residual / model)
            ringCount[ring] += 1
        }
        // Each ring's mean residual and its standard error. When the means scatter as their
        // errors say (χ² over the rings within its 95th percentile, about n + 2√(2n)), the model
        // follows the data and its departure is 0: the noise is in the covariance already.
        // Otherwise each ring's mean beyond its standard error (taken off in quadrature).
        var chi2 = 0.0, tested = 0
        let stats = (0..<Self.rings).map { k -> (mean: Double, error: Double)? in
            let n = Double(ringCount[k])
            guard n > 1 else { return n > 0 ? (ringSum[k], abs(ringSum[k])) : nil }
            let mean = ringSum[k] / n
            let error = (max(ringSquares[k] / n - mean * mean, 0) / (n - 1)).squareRoot()
            if error > 0 {
                chi2 += (mean / error) * (mean / error)
                tested += 1
            }
            return (mean, error)
        }
        let departs = chi2 > Double(tested) + 2 * (2 * Double(tested)).squareRoot()
        let rings = stats.map { s -> Double in
            guard let s else { return .nan }
            guard departs else { return 0 }
            return (s.mean < 0 ? -1 : 1) * max(s.mean * s.mean - s.error * s.error, 0).squareRoot()
        }
        let s2 = rss / Double(n - 4)
        let rms = (rss / Double(n)).squareRoot() / beta[0]
        if rms > maxResidual {
            throw PhotometryError(path: path, reason: String(format: "not a uniform flat field: channel %d's cells scatter %.2g %% (RMS) about the radial fall-off, more than %.2g %% (a source that does not fill the field evenly, or something in front of it)", c, 100 * rms, 100 * maxResidual),
                                  category: .calibrationMismatch)
        }
        let (a, covariance) = RadialLeastSquares.coefficients(beta: beta, inverse: inverse, variance: s2)
        return (a, covariance, rms, worst, rings)
    }

    /// The ring of a cell whose basis is `b`.
    static func ring(_ b: SIMD3<Double>, reach: Double) -> Int {
        min(rings - 1, Int(b.x.squareRoot() / reach * Double(rings)))
    }

    /// The mean radius of each ring's cells (NaN for a ring without cells).
    func ringRadii(reach: Double) -> [Double] {
        var sum = [Double](repeating: 0, count: Self.rings), count = sum
        for b in basis {
            let k = Self.ring(b, reach: reach)
            sum[k] += b.x.squareRoot()
            count[k] += 1
        }
        return (0..<Self.rings).map { count[$0] > 0 ? sum[$0] / count[$0] : .nan }
    }

    /// Inverse-covariance weighted mean of several fits of one channel (one fit: itself).
    static func combine(_ fits: [(a: SIMD3<Double>, covariance: [Double])]) -> (SIMD3<Double>, [Double]) {
        guard fits.count > 1 else { return (fits[0].a, fits[0].covariance) }
        var information = [Double](repeating: 0, count: 9), weighted = SIMD3<Double>()
        for f in fits {
            guard let w = Matrix3(f.covariance).inverse?.e else { continue }
            for i in 0..<9 { information[i] += w[i] }
            for i in 0..<3 { for j in 0..<3 { weighted[i] += w[3 * i + j] * f.a[j] } }
        }
        guard let covariance = Matrix3(information).inverse?.e else { return (fits[0].a, fits[0].covariance) }
        var a = SIMD3<Double>()
        for i in 0..<3 { for j in 0..<3 { a[i] += covariance[3 * i + j] * weighted[j] } }
        return (a, covariance)
    }

    /// The inverse of a row-major n×n matrix by Gauss–Jordan elimination with partial
    /// pivoting, or nil when it is singular.
    static func invert(_ m: [Double], n: Int) -> [Double]? {
        var a = m, inv = [Double](repeating: 0, count: n * n)
        for i in 0..<n { inv[n * i + i] = 1 }
        let scale = m.map(abs).max() ?? 0
        for col in 0..<n {
            let pivot = (col..<n).max { abs(a[n * $0 + col]) < abs(a[n * $1 + col]) }!
            guard abs(a[n * pivot + col]) > 1e-14 * max(scale, 1e-300) else { return nil }
            if pivot != col {
                for k in 0..<n { a.swapAt(n * pivot + k, n * col + k); inv.swapAt(n * pivot + k, n * col + k) }
            }
            let p = a[n * col + col]
            for k in 0..<n { a[n * col + k] /= p; inv[n * col + k] /= p }
            for row in 0..<n where row != col {
                let f = a[n * row + col]
                guard f != 0 else { continue }
                for k in 0..<n { a[n * row + k] -= f * a[n * col + k]; inv[n * row + k] -= f * inv[n * col + k] }
            }
        }
        return inv
    }

}
