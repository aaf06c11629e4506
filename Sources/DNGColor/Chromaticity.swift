import Foundation
import ImageCore

/// CIE 1931 chromaticity helpers and correlated colour temperature.
public enum Chromaticity {
    /// D50 as the DNG profile connection space uses it.
    public static let d50: SIMD2<Double> = [0.3457, 0.3585]
    /// D55, the white assumed when a DNG records no as-shot white balance.
    public static let d55: SIMD2<Double> = [0.3324, 0.3474]
    /// D65 exactly as Rec.2020 and the ASWF define it.
    public static let d65: SIMD2<Double> = [0.3127, 0.3290]
    /// CIE standard illuminant A.
    public static let illuminantA: SIMD2<Double> = [0.4476, 0.4074]

    /// XYZ with Y = 1 for chromaticity `xy`.
    public static func xyz(_ xy: SIMD2<Double>) -> SIMD3<Double> {
        let y = max(xy.y, 1e-9)
        return [xy.x / y, 1, (1 - xy.x - xy.y) / y]
    }

    /// Chromaticity of `xyz`; D50 when the sum is not positive.
    public static func xy(_ xyz: SIMD3<Double>) -> SIMD2<Double> {
        let s = xyz.sum()
        guard s > 0, s.isFinite else { return d50 }
        return [xyz.x / s, xyz.y / s]
    }

    /// CIE 1960 UCS (u, v) of `xy`.
    public static func uv(_ xy: SIMD2<Double>) -> SIMD2<Double> {
        let d = -2 * xy.x + 12 * xy.y + 3
        return [4 * xy.x / d, 6 * xy.y / d]
    }

    // Robertson's isotemperature lines (Wyszecki & Stiles, Color Science, 2nd ed., table 1(3.11)):
    // reciprocal megakelvin, u, v, slope dv/du of the isotemperature line.
    private static let robertson: [(mired: Double, u: Double, v: Double, t: Double)] = [
        (0, 0.18006, 0.26352, -0.24341), (10, 0.18066, 0.26589, -0.25479), (20, 0.18133, 0.26846, -0.26876),
        (30, 0.18208, 0.27119, -0.28539), (40, 0.18293, 0.27407, -0.30470), (50, 0.18388, 0.27709, -0.32675),
        (60, 0.18494, 0.28021, -0.35156), (70, 0.18611, 0.28342, -0.37915), (80, 0.18740, 0.28668, -0.40955),
        (90, 0.18880, 0.28997, -0.44278), (100, 0.19032, 0.29326, -0.47888), (125, 0.19462, 0.30141, -0.58204),
        (150, 0.19962, 0.30921, -0.70471), (175, 0.20525, 0.31647, -0.84901), (200, 0.21142, 0.32312, -1.0182),
        (225, 0.21807, 0.32909, -1.2168), (250, 0.22511, 0.33439, -1.4512), (275, 0.23247, 0.33904, -1.7298),
        (300, 0.24010, 0.34308, -2.0637), (325, 0.24702, 0.34655, -2.4681), (350, 0.25591, 0.34951, -2.9641),
        (375, 0.26400, 0.35200, -3.5814), (400, 0.27218, 0.35407, -4.3633), (425, 0.28039, 0.35577, -5.3762),
        (450, 0.28863, 0.35714, -6.7262), (475, 0.29685, 0.35823, -8.5955), (500, 0.30505, 0.35907, -11.324),
        (525, 0.31320, 0.35968, -15.628), (550, 0.32129, 0.36011, -23.325), (575, 0.32931, 0.36038, -40.770),
        (600, 0.33724, 0.36051, -116.45),
    ]

    /// Correlated colour temperature of `xy` in kelvin by Robertson's method: the signed
    /// distances of (u, v) to neighbouring isotemperature lines are interpolated in
    /// reciprocal temperature. Clamped to the table (1667 K ... very high); outside the
    /// table's range of validity the result is only a label for interpolation.
    public static func correlatedColorTemperature(_ xy: SIMD2<Double>) -> Double {
        let p = uv(xy)
        // Signed distance of (u, v) from each isotemperature line through (u_i, v_i), slope t_i.
        let distances = robertson.map { line in
            ((p.y - line.v) - line.t * (p.x - line.u)) / (1 + line.t * line.t).squareRoot()
        }
        for i in 1..<robertson.count where (distances[i - 1] <= 0) != (distances[i] <= 0) {
            let f = distances[i - 1] / (distances[i - 1] - distances[i])
            let mired = robertson[i - 1].mired + f * (robertson[i].mired - robertson[i - 1].mired)
            return 1e6 / max(mired, 1)
        }
        // No bracketing pair: beyond one end of the table.
        let nearFirst = abs(distances[0]) < abs(distances[distances.count - 1])
        return 1e6 / max(nearFirst ? robertson[0].mired : robertson[robertson.count - 1].mired, 1)
    }

    /// The temperature the DNG colour model assigns to an EXIF LightSource code
    /// (CalibrationIlluminant tags), or `nil` when unknown. Fluorescent classes take the
    /// middle of their colour-temperature range.
    public static func temperature(ofIlluminant code: Int) -> Double? {
        switch code {
        case 17, 3: return 2850            // standard light A, tungsten
        case 24: return 3200               // ISO studio tungsten
        case 23: return 5000               // D50
        case 20, 1, 9, 4, 18: return 5500  // D55, daylight, fine weather, flash, standard light B
        case 21, 19, 10: return 6500       // D65, standard light C, cloudy
        case 22, 11: return 7500           // D75, shade
        case 12: return (5700 + 7100) / 2  // daylight fluorescent
        case 13: return (4600 + 5500) / 2  // day white fluorescent
        case 14, 2: return (3800 + 4500) / 2 // cool white fluorescent, fluorescent
        case 15: return (3250 + 3800) / 2  // white fluorescent
        case 16: return (2600 + 3250) / 2  // warm white fluorescent
        default: return nil
        }
    }

    /// CIE 1931 xy of standard illuminants with a defined chromaticity, by EXIF code.
    public static func chromaticity(ofIlluminant code: Int) -> SIMD2<Double>? {
        switch code {
        case 17, 3: return illuminantA
        case 18: return [0.3484, 0.3516]   // B
        case 19: return [0.3101, 0.3162]   // C
        case 20: return d55
        case 21: return d65
        case 22: return [0.2990, 0.3149]   // D75
        case 23: return d50
        default: return nil
        }
    }
}

extension Rec2020 {
    /// The matrix from linear Rec.2020 RGB to CIE XYZ (D65, Y of white = 1), derived
    /// from the primaries and white point.
    public static var toXYZ: Matrix3 { RGBColorSpace.rec2020.toXYZ }

    /// The matrix from CIE XYZ (D65) to linear Rec.2020 RGB.
    public static var fromXYZ: Matrix3 { RGBColorSpace.rec2020.fromXYZ }
}
