import DNGContainer
import Foundation
import ImageCore

/// A lens's vignetting as measured (`scenelinear calibrate-lens`, schema
/// `scenelinear.lens/1`, docs/lens.md): per camera channel, V_c(r) = 1 + a₁r² + a₂r⁴ + a₃r⁶
/// in the image radius r (normalised to the half-diagonal, V = 1 on the axis), the
/// coefficients' covariance from the fit, its residuals, and the camera, lens and aperture it
/// belongs to.
public struct LensCalibration: Codable, Sendable, Equatable {
    public var schema = "scenelinear.lens/1"
    public var software = SceneLinearVersion.software
    public var created: String
    /// The file's name when read; not stored.
    public var name: String = ""
    /// The camera body and its lens (LensModel).
    public var camera: CameraIdentity
    /// The focal length (mm) and f-number of the captures it was made from.
    public var focalLength: Double?
    public var fNumber: Double
    /// How it was made: "flat field".
    public var method: String
    /// The captures it was fitted to.
    public var captures: [String]
    /// The model (family even-polynomial; coefficients a₁, a₂, a₃ per channel R, G, B of the
    /// camera; the centre relative to the image).
    public var falloff: RadialFalloff
    /// Per channel, the 3×3 covariance of (a₁, a₂, a₃), row-major.
    public var covariance: [[Double]]
    /// Per channel, the RMS and the largest relative residual of the fit's cells.
    public var residualRMS: [Double]
    public var residualMax: [Double]
    /// Cells of the image fitted per channel (summed over the captures).
    public var cells: Int
    /// Whether its captures carried lens-shading opcodes of their own (GainMap,
    /// FixVignetteRadial), applied before the fit: the calibration is then of what they left.
    public var lensShadingOpcodes: Bool
    /// The fit's mean relative residual (data / model − 1) in rings about the centre, per
    /// channel, at the rings' middle radii: what the model does not follow (another family's
    /// shape, a lens's own departure from it). Its magnitude at r joins the uncertainty of V(r)
    /// as the model's.
    public var ringRadii: [Double]
    public var ringResiduals: [[Double]]
    /// Calibrations of the same lens at other apertures, given with this one (`--lens` more
    /// than once): a capture takes the one at its f-number, or the interpolation between the
    /// two about it (`forCapture`). Not stored.
    public var otherApertures: [LensCalibration] = []

    enum CodingKeys: String, CodingKey {
        case schema, software, created, camera, focalLength, fNumber, method, captures, falloff, covariance, residualRMS, residualMax, cells
        case lensShadingOpcodes, ringRadii, ringResiduals
    }

    public init(created: String, camera: CameraIdentity, focalLength: Double?, fNumber: Double, method: String, captures: [String],
                falloff: RadialFalloff, covariance: [[Double]], residualRMS: [Double], residualMax: [Double], cells: Int,
                lensShadingOpcodes: Bool, ringRadii: [Double], ringResiduals: [[Double]]) {
        self.created = created
        self.camera = camera
        self.focalLength = focalLength
        self.fNumber = fNumber
        self.method = method
        self.captures = captures
        self.falloff = falloff
        self.covariance = covariance
        self.residualRMS = residualRMS
        self.residualMax = residualMax
        self.cells = cells
        self.lensShadingOpcodes = lensShadingOpcodes
        self.ringRadii = ringRadii
        self.ringResiduals = ringResiduals
    }

    /// V_c at r and its relative standard uncertainty σ_V / V: the coefficients' covariance
    /// and the model's departure there (`modelResidual`), in quadrature.
    public func transmission(channel c: Int, r: Double) -> (value: Double, relativeUncertainty: Double) {
        let v = falloff.transmission(channel: c, r: r)
        let b = RadialFalloff.basis(r), m = covariance[c]
        var variance = 0.0
        for i in 0..<3 { for j in 0..<3 { variance += b[i] * m[3 * i + j] * b[j] } }
        let model = modelResidual(channel: c, r: r)
        return (v, (max(variance, 0) / (v * v) + model * model).squareRoot())
    }

    /// The model's departure at r: |the ring residual at r − the innermost ring's| (V is a
    /// ratio to the axis, so a residual the axis shares cancels), interpolated linearly between
    /// the rings' radii and extrapolated beyond the last one by the last two rings' slope (a
    /// flat field's corners lie just beyond its last ring's cells), and for a sweep, beyond its
    /// outermost position, at least that position's departure grown with the square of the
    /// distance out in units of the last spacing (the polynomial is extrapolated there, and its
    /// error grows faster than linearly); never below the departures' RMS over the rings (a
    /// shape error crosses zero between rings); 0 inside the innermost ring, where V = 1 by
    /// definition at the axis.
    public func modelResidual(channel c: Int, r: Double) -> Double { departure(channel: c).at(r) }

    /// Channel `c`'s model departure as a function of r (`modelResidual`), its ring values
    /// and floor worked out once, for a caller that evaluates it at many radii.
    public func departure(channel c: Int) -> ModelDeparture {
        ModelDeparture(radii: ringRadii, ring: ringResiduals[c], extrapolated: method == "sweep")
    }

    /// The model's departure of one channel (see `modelResidual`).
    public struct ModelDeparture: Sendable {
        let radii: [Double]
        /// |ring residual − the innermost ring's|, per ring.
        let values: [Double]
        /// Their RMS over the rings after the first: the floor.
        let typical: Double

        /// Beyond the last radius the model is extrapolated (a sweep's outermost position).
        let extrapolated: Bool

        init(radii: [Double], ring: [Double], extrapolated: Bool = false) {
            self.radii = radii
            self.extrapolated = extrapolated
            values = ring.map { abs($0 - (ring.first ?? 0)) }
            typical = values.count >= 2 ? (values.dropFirst().map { $0 * $0 }.reduce(0, +) / Double(values.count - 1)).squareRoot() : 0
        }

        /// The departure at r.
        public func at(_ r: Double) -> Double {
            guard r > 0, radii.count >= 2, radii.count == values.count, r > radii[0] else { return 0 }
            for k in 1..<radii.count where r <= radii[k] {
                let t = (r - radii[k - 1]) / (radii[k] - radii[k - 1])
                return max(typical, values[k - 1] + t * (values[k] - values[k - 1]))
            }
            let n = values.count, out = (r - radii[n - 1]) / (radii[n - 1] - radii[n - 2])
            let linear = values[n - 1] + out * abs(values[n - 1] - values[n - 2])
            // Beyond a sweep's outermost position each step out about doubles the error of a
            // polynomial extrapolated from a lens of another family (docs/lens.md).
            return max(typical, linear, extrapolated ? values[n - 1] * (1 + out) * (1 + out) : 0)
        }
    }

    /// The largest relative standard uncertainty of the correction 1/V_c anywhere in a
    /// `width` × `height` image (out to its farthest corner from the centre), over the three
    /// channels: what the budgets carry as the item `vignetting`, an upper bound for any region
    /// (one fit error moves a whole region alike, and no region's average exceeds its worst
    /// pixel's).
    public func largestRelativeUncertainty(width: Int, height: Int) -> Double {
        let corners = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
        let reach = corners.map { falloff.radius(u: $0.0, v: $0.1, width: width, height: height) }.max() ?? 1
        var worst = 0.0
        for i in 0...200 {
            let r = reach * Double(i) / 200
            for c in 0..<3 { worst = max(worst, transmission(channel: c, r: r).relativeUncertainty) }
        }
        return worst
    }

    /// The budget item of the correction (`largestRelativeUncertainty`).
    public func uncertaintyPart(width: Int, height: Int) -> ExposureScaling.UncertaintyPart {
        .init(name: "vignetting", relative: largestRelativeUncertainty(width: width, height: height),
              note: "the fit of \(name)'s fall-off (\(method)): the largest relative uncertainty of its correction anywhere in the image, an upper bound for every region")
    }

    /// The calibration for a capture: this one, or of the apertures given with it the one
    /// within ⅙ stop of the capture's f-number, or else the interpolation between the two
    /// calibrated apertures about it (`interpolated`). Refuses a capture of another camera or
    /// lens, without an f-number, or at an aperture outside the calibrated ones, unless allowed
    /// (then the nearest aperture's).
    public func forCapture(_ metadata: DNGMetadata, path: String, allowOther: Bool) throws -> LensCalibration {
        let all = ([self] + otherApertures).sorted { $0.fNumber < $1.fNumber }
        guard !allowOther || all.count > 1 else { return self }
        let other = CameraIdentity(metadata)
        if !allowOther, let why = camera.mismatch(other) {
            throw PhotometryError(path: path, reason: "the lens calibration \(name) belongs to another camera: \(why) (--allow-other-lens applies it anyway)",
                                  category: .calibrationMismatch)
        }
        func norm(_ s: String?) -> String? { s.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } }
        if !allowOther, let a = norm(camera.lens), let b = norm(other.lens), a != b {
            throw PhotometryError(path: path, reason: "the lens calibration \(name) was made with the lens '\(camera.lens!)', not '\(other.lens!)' (--allow-other-lens applies it anyway)",
                                  category: .calibrationMismatch)
        }
        let held = all.map { String(format: "f/%.3g", $0.fNumber) }.joined(separator: ", ")
        guard let n = metadata.capture.fNumber, n > 0 else {
            if allowOther { return self }
            throw PhotometryError(path: path, reason: "the file records no f-number, and the lens calibration \(name) holds for \(held) only (--allow-other-lens applies it anyway)",
                                  category: .calibrationMismatch)
        }
        let stops = { (f: Double) in 2 * log2(f) }
        let nearest = all.min { abs(stops($0.fNumber) - stops(n)) < abs(stops($1.fNumber) - stops(n)) }!
        if abs(stops(nearest.fNumber) - stops(n)) <= 1.0 / 6 { return nearest }
        if let hi = all.firstIndex(where: { $0.fNumber > n }), hi > 0 {
            return all[hi - 1].interpolated(to: all[hi], at: n)
        }
        if allowOther { return nearest }
        throw PhotometryError(path: path, reason: String(format: "taken at f/%.3g, and the lens calibration %@ holds for %@: vignetting changes with the aperture, and f/%.3g lies outside the calibrated ones (--allow-other-lens takes the nearest)", n, name, held, n),
                              category: .calibrationMismatch)
    }

    /// The calibration at f-number `n` between this one's aperture and `other`'s (wider and
    /// narrower): V linear in stops between the two, i.e. each coefficient a = (1 − t) a₁ +
    /// t a₂ with t = (log₂ n² − log₂ n₁²) / (log₂ n₂² − log₂ n₁²), the covariance (1 − t)² Σ₁ +
    /// t² Σ₂. The interpolation's own uncertainty at r, relative: min(t, 1 − t) · |V₂(r) −
    /// V₁(r)| / (√3 · V(r)) — the truth anywhere within the distance to the nearer calibration
    /// of the line, evenly — joins the model departures ((1 − t) d₁, t d₂) in quadrature, as
    /// the ring residuals of the result (docs/lens.md).
    public func interpolated(to other: LensCalibration, at n: Double) -> LensCalibration {
        let t = (2 * log2(n) - 2 * log2(fNumber)) / (2 * log2(other.fNumber) - 2 * log2(fNumber))
        var out = self
        out.otherApertures = []
        out.fNumber = n
        out.method = String(format: "interpolated between f/%.3g (%@) and f/%.3g (%@)", fNumber, method, other.fNumber, other.method)
        out.name = "\(name) and \(other.name) at f/\(String(format: "%.3g", n))"
        out.captures = captures + other.captures
        out.cells = cells + other.cells
        out.residualRMS = zip(residualRMS, other.residualRMS).map { max($0, $1) }
        out.residualMax = zip(residualMax, other.residualMax).map { max($0, $1) }
        out.falloff.coefficients = (0..<3).map { c in (0..<3).map { (1 - t) * falloff.coefficients[c][$0] + t * other.falloff.coefficients[c][$0] } }
        out.covariance = (0..<3).map { c in (0..<9).map { (1 - t) * (1 - t) * covariance[c][$0] + t * t * other.covariance[c][$0] } }
        let reach = falloff.reach, rings = 20
        out.ringRadii = (0..<rings).map { (Double($0) + 0.5) / Double(rings) * reach }
        out.ringResiduals = (0..<3).map { c in
            let d1 = departure(channel: c), d2 = other.departure(channel: c)
            return out.ringRadii.map { r in
                let v1 = falloff.transmission(channel: c, r: r), v2 = other.falloff.transmission(channel: c, r: r)
                let v = out.falloff.transmission(channel: c, r: r)
                let spread = min(t, 1 - t) * abs(v2 - v1) / (3.0.squareRoot() * v)
                let a = (1 - t) * d1.at(r), b = t * d2.at(r)
                return (a * a + b * b + spread * spread).squareRoot()
            }
        }
        return out
    }

    /// The calibration files at `paths` read as one (`apertureSet`); nil for none.
    /// - Throws: as `read` and `apertureSet`.
    public static func read(_ paths: [String]) throws -> LensCalibration? {
        paths.isEmpty ? nil : try apertureSet(paths.map(read))
    }

    /// Several calibrations of one lens at different apertures as one: the first, the others
    /// in `otherApertures`.
    /// - Throws: `PhotometryError` when they belong to different cameras or lenses, centres,
    ///   lens-shading opcodes, or two lie within ⅙ stop of each other.
    public static func apertureSet(_ calibrations: [LensCalibration]) throws -> LensCalibration {
        guard var first = calibrations.first else { throw PhotometryError(path: "", reason: "no lens calibration given", category: .usage) }
        for other in calibrations.dropFirst() {
            let why = first.camera.bodyOrLensMismatch(other.camera)
                ?? (first.falloff.centerX != other.falloff.centerX || first.falloff.centerY != other.falloff.centerY ? "another centre" : nil)
                ?? (first.lensShadingOpcodes != other.lensShadingOpcodes ? "captures with and without lens-shading opcodes of their own" : nil)
            if let why {
                throw PhotometryError(path: other.name, reason: "lens calibrations given together must be of one camera and lens at different apertures, and \(first.name) and this one differ: \(why)",
                                      category: .calibrationMismatch)
            }
            if let twin = ([first] + first.otherApertures).first(where: { abs(2 * log2(other.fNumber / $0.fNumber)) <= 1.0 / 6 }) {
                throw PhotometryError(path: other.name, reason: String(format: "this lens calibration and %@ are both for f/%.3g: give one calibration per aperture", twin.name, other.fNumber),
                                      category: .usage)
            }
            first.otherApertures.append(other)
        }
        return first
    }

    /// Reads a lens calibration file.
    /// - Throws: `PhotometryError` naming the file and what is wrong.
    public static func read(_ path: String) throws -> LensCalibration {
        var c = try decode(path)
        if c.falloff.family != .evenPolynomial { throw PhotometryError(path: path, reason: "the falloff must be even-polynomial", category: .corruptData) }
        if let why = c.falloff.problem { throw PhotometryError(path: path, reason: why, category: .corruptData) }
        guard c.covariance.count == 3, c.covariance.allSatisfy({ $0.count == 9 && $0.allSatisfy(\.isFinite) }), c.fNumber > 0,
              c.ringResiduals.count == 3, c.ringResiduals.allSatisfy({ $0.count == c.ringRadii.count && $0.allSatisfy(\.isFinite) }),
              zip(c.ringRadii, c.ringRadii.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw PhotometryError(path: path, reason: "covariance must be 3 lists of 9 numbers, ringResiduals 3 lists as long as the increasing ringRadii, and fNumber positive",
                                  category: .corruptData)
        }
        c.name = path
        return c
    }
}

extension LensCalibration: CalibrationFile {
    static var schemaName: String { "scenelinear.lens/1" }
    static var kind: String { "lens calibration" }

    /// The lens calibration as pretty-printed JSON.
    public func json() throws -> Data { try encodedJSON() }

    /// Writes the file (its `json()`) to `path`, atomically; returns what was written.
    /// - Throws: `PhotometryError` (output failure) when it cannot be written; `AtomicFile`'s errors.
    @discardableResult
    public func write(to path: String) throws -> Data { try writeJSON(to: path) }
}
