import DNGContainer
import ImageCore

/// The DNG camera colour model (DNG 1.7.1 chapter 6) for a three-plane camera: colour
/// matrices interpolated in reciprocal colour temperature between the calibration
/// illuminants, forward matrices, analog balance and camera calibration.
public struct CameraColorModel: Sendable {
    /// One calibration set (ColorMatrixN and its companions).
    struct CalibrationSet: Sendable {
        /// Correlated colour temperature of the calibration illuminant (nil when unknown).
        let temperature: Double?
        /// Chromaticity of the illuminant when known (standard illuminants, IlluminantData xy).
        let chromaticity: SIMD2<Double>?
        /// XYZ → this camera: AnalogBalance · CameraCalibration · ColorMatrix.
        let xyzToCamera: Matrix3
        /// ForwardMatrix normalised so that it maps (1, 1, 1) to the D50 white, or nil.
        let forward: Matrix3?
        /// CameraCalibration in use (identity when absent or when the signatures differ).
        let calibration: Matrix3
    }

    let sets: [CalibrationSet]
    let analogBalance: Matrix3
    let path: String

    /// Builds the model from IFD 0's calibration tags.
    /// - Throws: `ColorError` when ColorMatrix1 is missing or a matrix has the wrong size.
    public init(calibration c: ColorCalibration, path: String) throws(ColorError) {
        self.path = path
        guard !c.colorMatrices.isEmpty else {
            throw ColorError(path: path, reason: "IFD0 has no ColorMatrix1 (tag 50721), required for a colour DNG")
        }
        func matrix(_ values: [Double]?, _ name: String) throws(ColorError) -> Matrix3? {
            guard let values else { return nil }
            guard values.count == 9 else {
                throw ColorError(path: path, reason: "\(name) has \(values.count) values; a 3-plane camera needs 9")
            }
            return Matrix3(values)
        }
        var balance = Matrix3.identity
        if let ab = c.analogBalance {
            guard ab.count == 3, ab.allSatisfy({ $0 > 0 }) else {
                throw ColorError(path: path, reason: "AnalogBalance \(ab) must hold 3 positive values")
            }
            balance = Matrix3.diagonal(SIMD3(ab[0], ab[1], ab[2]))
        }
        analogBalance = balance
        // CameraCalibration applies only when its signature matches the profile's (DNG 1.7.1 p.41).
        let useCalibration = c.cameraCalibrationSignature == c.profileCalibrationSignature
        let pcsWhite = Chromaticity.xyz(Chromaticity.d50)
        var sets: [CalibrationSet] = []
        for i in c.colorMatrices.indices {
            let number = i + 1
            guard let cm = try matrix(c.colorMatrices[i], "ColorMatrix\(number)") else { continue }
            let cc = useCalibration ? (try matrix(c.cameraCalibrations[i], "CameraCalibration\(number)") ?? .identity) : .identity
            var forward = try matrix(c.forwardMatrices[i], "ForwardMatrix\(number)")
            if let fm = forward {
                // Normalise each row so that FM · (1,1,1) is exactly the D50 white.
                let rowSums = fm * SIMD3<Double>(1, 1, 1)
                guard rowSums.min() > 0 else {
                    throw ColorError(path: path, reason: "ForwardMatrix\(number) does not map white to a positive XYZ")
                }
                forward = Matrix3.diagonal(pcsWhite / rowSums) * fm
            }
            let code = c.illuminants[i]
            var xy = Chromaticity.chromaticity(ofIlluminant: code)
            var temperature = Chromaticity.temperature(ofIlluminant: code)
            if code == 255, let data = c.illuminantData[i], let dataXY = Self.illuminantDataXY(data) {
                xy = dataXY
                temperature = Chromaticity.correlatedColorTemperature(dataXY)
            }
            sets.append(CalibrationSet(temperature: temperature, chromaticity: xy,
                                       xyzToCamera: balance * cc * cm, forward: forward, calibration: cc))
        }
        self.sets = sets
    }

    /// IlluminantData (DNG 1.6) of type 0: a CIE xy chromaticity as two RATIONALs after a
    /// 16-bit type code, big-endian. Spectral data (type 1) is not used (returns nil).
    static func illuminantDataXY(_ bytes: [UInt8]) -> SIMD2<Double>? {
        guard bytes.count >= 18, bytes[0] == 0, bytes[1] == 0 else { return nil }
        func u32(_ at: Int) -> Double {
            Double(UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3]))
        }
        let (xn, xd, yn, yd) = (u32(2), u32(6), u32(10), u32(14))
        guard xd > 0, yd > 0 else { return nil }
        return [xn / xd, yn / yd]
    }

    /// The matrices interpolated for white point `xy`.
    ///
    /// Two calibrations: weight `g` for the lower-temperature set, linear in 1/CCT, clamped
    /// to [0, 1] outside the bracket (the DNG SDK rule). A single set, or two with an
    /// unknown or equal temperature, uses set 1. Three calibrations with known
    /// chromaticities (DNG 1.6): barycentric weights of the white in the CIE 1960 uv
    /// triangle of the three illuminants, projected onto the triangle when outside.
    func interpolated(at xy: SIMD2<Double>) -> (xyzToCamera: Matrix3, forward: Matrix3?, calibration: Matrix3) {
        let weights = interpolationWeights(at: xy)
        var cm = Matrix3(Array(repeating: 0, count: 9))
        var cc = Matrix3(Array(repeating: 0, count: 9))
        var fm: Matrix3? = Matrix3(Array(repeating: 0, count: 9))
        for (set, w) in zip(sets, weights) where w > 0 {
            cm = cm + w * set.xyzToCamera
            cc = cc + w * set.calibration
            if let f = set.forward, let acc = fm { fm = acc + w * f } else { fm = nil }
        }
        // Forward matrices are all-or-none; when only some sets have one, use the first present.
        if fm == nil { fm = sets.first(where: { $0.forward != nil })?.forward }
        return (cm, fm, cc)
    }

    func interpolationWeights(at xy: SIMD2<Double>) -> [Double] {
        var weights = Array(repeating: 0.0, count: sets.count)
        if sets.count >= 3, let a = sets[0].chromaticity, let b = sets[1].chromaticity, let c = sets[2].chromaticity {
            let bary = Self.barycentric(Chromaticity.uv(xy), Chromaticity.uv(a), Chromaticity.uv(b), Chromaticity.uv(c))
            weights[0] = bary.x
            weights[1] = bary.y
            weights[2] = bary.z
            return weights
        }
        guard sets.count >= 2, let t1 = sets[0].temperature, let t2 = sets[1].temperature, t1 > 0, t2 > 0, t1 != t2 else {
            weights[0] = 1
            return weights
        }
        let (low, high) = t1 < t2 ? (0, 1) : (1, 0)
        let tLow = min(t1, t2), tHigh = max(t1, t2)
        let t = Chromaticity.correlatedColorTemperature(xy)
        let g: Double
        if t <= tLow { g = 1 } else if t >= tHigh { g = 0 } else { g = (1 / t - 1 / tHigh) / (1 / tLow - 1 / tHigh) }
        weights[low] = g
        weights[high] = 1 - g
        return weights
    }

    /// Barycentric coordinates of `p` in triangle (a, b, c); a point outside is first moved
    /// to the nearest point of the triangle.
    static func barycentric(_ p: SIMD2<Double>, _ a: SIMD2<Double>, _ b: SIMD2<Double>, _ c: SIMD2<Double>) -> SIMD3<Double> {
        func coords(_ q: SIMD2<Double>) -> SIMD3<Double> {
            let v0 = b - a, v1 = c - a, v2 = q - a
            let d = v0.x * v1.y - v1.x * v0.y
            guard abs(d) > 1e-15 else { return [1, 0, 0] }
            let wb = (v2.x * v1.y - v1.x * v2.y) / d
            let wc = (v0.x * v2.y - v2.x * v0.y) / d
            return [1 - wb - wc, wb, wc]
        }
        let w = coords(p)
        if w.min() >= 0 { return w }
        func nearest(_ q: SIMD2<Double>, _ s: SIMD2<Double>, _ e: SIMD2<Double>) -> SIMD2<Double> {
            let d = e - s
            let t = max(0, min(1, ((q - s) * d).sum() / max((d * d).sum(), 1e-30)))
            return s + t * d
        }
        let candidates = [nearest(p, a, b), nearest(p, b, c), nearest(p, c, a)]
        let best = candidates.min { (($0 - p) * ($0 - p)).sum() < (($1 - p) * ($1 - p)).sum() }!
        let clamped = coords(best)
        let positive = SIMD3(max(clamped.x, 0), max(clamped.y, 0), max(clamped.z, 0))
        return positive / positive.sum()
    }

    /// The white point whose camera neutral is `neutral`, found by iteration: guess xy
    /// (D50), interpolate XYZ→camera there, map the neutral back to XYZ, repeat until the
    /// chromaticity moves by less than 1e-7 (at most 30 passes; an oscillation is averaged).
    public func whitePoint(ofNeutral neutral: SIMD3<Double>) throws(ColorError) -> SIMD2<Double> {
        var last = Chromaticity.d50
        for pass in 0..<30 {
            guard let inverse = interpolated(at: last).xyzToCamera.inverse else {
                throw ColorError(path: path, reason: "the interpolated ColorMatrix is singular")
            }
            var next = Chromaticity.xy(inverse * neutral)
            if abs(next.x - last.x) + abs(next.y - last.y) < 1e-7 { return next }
            if pass == 29 { next = (last + next) / 2 }
            last = next
        }
        return last
    }

    /// The camera neutral (max entry 1, entries at least 0.001) of white point `xy`.
    public func cameraNeutral(ofWhite xy: SIMD2<Double>) -> SIMD3<Double> {
        let raw = interpolated(at: xy).xyzToCamera * Chromaticity.xyz(xy)
        let scale = 1 / max(raw.max(), 1e-12)
        return SIMD3(Swift.min(Swift.max(raw.x * scale, 0.001), 1), Swift.min(Swift.max(raw.y * scale, 0.001), 1),
                     Swift.min(Swift.max(raw.z * scale, 0.001), 1))
    }

    /// Camera → CIE XYZ (D50 profile connection space) for white point `xy`.
    ///
    /// Scaled so that the camera neutral of the white (max entry 1) maps to the D50 white
    /// with Y = 1: a neutral surface that just saturates the first camera channel becomes
    /// Y = 1. With forward matrices: FM · diag(ReferenceNeutral)⁻¹ · (AB·CC)⁻¹; without:
    /// the inverse of the XYZ→camera matrix adapted from D50 to the white by Bradford.
    public func cameraToPCS(white xy: SIMD2<Double>) throws(ColorError) -> Matrix3 {
        let (cm, fm, cc) = interpolated(at: xy)
        let neutral = cameraNeutral(ofWhite: xy)
        if let fm {
            guard let individualToReference = (analogBalance * cc).inverse else {
                throw ColorError(path: path, reason: "AnalogBalance · CameraCalibration is singular")
            }
            let reference = individualToReference * neutral
            guard reference.min() > 0 else {
                throw ColorError(path: path, reason: "the reference neutral \(reference) is not positive")
            }
            return fm * Matrix3.diagonal(1 / reference) * individualToReference
        }
        var pcsToCamera = cm * Bradford.adaptation(from: Chromaticity.d50, to: xy)
        let scale = (pcsToCamera * Chromaticity.xyz(Chromaticity.d50)).max()
        guard scale > 0 else { throw ColorError(path: path, reason: "the ColorMatrix maps white to a non-positive camera value") }
        pcsToCamera = (1 / scale) * pcsToCamera
        guard let inverse = pcsToCamera.inverse else {
            throw ColorError(path: path, reason: "the interpolated ColorMatrix is singular")
        }
        return inverse
    }
}
