/// The colorimetric output encodings: primaries, white points and the matrices between them.
///
/// Every encoding except `cameraNative` is a linear RGB space with CIE 1931 primaries. The
/// EXR `chromaticities` attribute carries `red`, `green`, `blue`, `white`; the white a
/// chromatic adaptation aims at is `adoptedWhite` (they differ only for CIE XYZ, whose
/// "white" R = G = B is the equal-energy point while its scene white is D65).
public struct RGBColorSpace: Sendable, Equatable {
    public let red: SIMD2<Double>
    public let green: SIMD2<Double>
    public let blue: SIMD2<Double>
    /// The chromaticity of R = G = B (the EXR `chromaticities` white).
    public let white: SIMD2<Double>
    /// The white a neutral surface maps to; the target of the chromatic adaptation from the
    /// DNG profile connection space (D50), and the EXR `adoptedNeutral`.
    public let adoptedWhite: SIMD2<Double>
    /// Linear RGB → CIE XYZ (Y of `white` = 1).
    public let toXYZ: Matrix3
    /// CIE XYZ → linear RGB.
    public let fromXYZ: Matrix3

    init(red: SIMD2<Double>, green: SIMD2<Double>, blue: SIMD2<Double>, white: SIMD2<Double>,
         adoptedWhite: SIMD2<Double>? = nil, toXYZ: Matrix3? = nil) {
        self.red = red
        self.green = green
        self.blue = blue
        self.white = white
        self.adoptedWhite = adoptedWhite ?? white
        let m = toXYZ ?? RGBColorSpace.matrixToXYZ(red: red, green: green, blue: blue, white: white)
        self.toXYZ = m
        self.fromXYZ = m.inverse!
    }

    /// The 8 values of an EXR `chromaticities` attribute: red, green, blue, white xy.
    public var chromaticities: [Double] { [red, green, blue, white].flatMap { [$0.x, $0.y] } }

    /// Luminance weights: the Y row of `toXYZ` (Y = w · RGB).
    public var luminanceWeights: SIMD3<Double> { toXYZ.row(1) }

    /// XYZ with Y = 1 of chromaticity `xy`.
    static func xyz(_ xy: SIMD2<Double>) -> SIMD3<Double> {
        let y = max(xy.y, 1e-9)
        return [xy.x / y, 1, (1 - xy.x - xy.y) / y]
    }

    /// RGB → XYZ from the primaries: the columns are the primaries' XYZ, scaled so that
    /// R = G = B = 1 gives the white with Y = 1.
    static func matrixToXYZ(red: SIMD2<Double>, green: SIMD2<Double>, blue: SIMD2<Double>, white: SIMD2<Double>) -> Matrix3 {
        // Primaries may have y < 0 (ACES AP0 blue): XYZ of unit Y without clamping.
        func primary(_ xy: SIMD2<Double>) -> SIMD3<Double> { [xy.x / xy.y, 1, (1 - xy.x - xy.y) / xy.y] }
        let primaries = Matrix3(rows: primary(red), primary(green), primary(blue)).transposed
        let s = primaries.inverse! * xyz(white)
        return primaries * Matrix3.diagonal(s)
    }

    static let d65: SIMD2<Double> = [0.3127, 0.3290]
    /// The ACES white (SMPTE ST 2065-1), near CIE D60.
    public static let acesWhite: SIMD2<Double> = [0.32168, 0.33767]

    /// ITU-R BT.2020, D65.
    public static let rec2020 = RGBColorSpace(red: Rec2020.red, green: Rec2020.green, blue: Rec2020.blue, white: Rec2020.white)
    /// ITU-R BT.709 (sRGB primaries), D65.
    public static let rec709 = RGBColorSpace(red: [0.64, 0.33], green: [0.30, 0.60], blue: [0.15, 0.06], white: d65)
    /// ACES AP1 (ACEScg), ACES white.
    public static let acesAP1 = RGBColorSpace(red: [0.713, 0.293], green: [0.165, 0.830], blue: [0.128, 0.044], white: acesWhite)
    /// ACES AP0 (ACES2065-1), ACES white.
    public static let acesAP0 = RGBColorSpace(red: [0.7347, 0.2653], green: [0.0, 1.0], blue: [0.0001, -0.0770], white: acesWhite)
    /// CIE 1931 XYZ with a D65 scene white: R, G, B are X, Y, Z (OpenEXR's convention for XYZ
    /// files: primaries (1, 0), (0, 1), (0, 0), white (1/3, 1/3)).
    public static let xyzD65 = RGBColorSpace(red: [1, 0], green: [0, 1], blue: [0, 0], white: [1.0 / 3, 1.0 / 3],
                                             adoptedWhite: d65, toXYZ: .identity)
}

extension ColorEncoding {
    /// The RGB space of the encoding; nil for camera RGB, which has no standard primaries.
    public var colorSpace: RGBColorSpace? {
        switch self {
        case .linearRec2020: return .rec2020
        case .acesCG: return .acesAP1
        case .aces2065: return .acesAP0
        case .linearRec709: return .rec709
        case .xyzD65: return .xyzD65
        case .cameraNative: return nil
        }
    }

    /// The ASWF colour interop ID (OCIO's colour space alias), `unknown` for camera RGB.
    public var colorInteropID: String {
        self == .cameraNative ? "unknown" : rawValue
    }

    /// Y = w · RGB; Rec.2020 uses the rounded BT.2020 weights, the others the Y row of
    /// their RGB → XYZ matrix. nil for camera RGB.
    public var luminanceWeights: SIMD3<Double>? {
        if self == .linearRec2020 { return Rec2020.luminanceWeights }
        return colorSpace?.luminanceWeights
    }

    /// The matrix taking this encoding's RGB to `target`'s: through CIE XYZ, with a Bradford
    /// adaptation between the adopted whites when they differ (as OCIO's built-in
    /// configurations do). nil when either is camera RGB.
    public func conversion(to target: ColorEncoding) -> Matrix3? {
        guard let a = colorSpace, let b = target.colorSpace else { return nil }
        if a == b { return .identity }
        let adapt = a.adoptedWhite == b.adoptedWhite ? Matrix3.identity : Bradford.adaptation(from: a.adoptedWhite, to: b.adoptedWhite)
        return b.fromXYZ * adapt * a.toXYZ
    }
}

/// Linear Bradford chromatic adaptation (von Kries with Bradford cone primaries).
public enum Bradford {
    static let cone = Matrix3([0.8951, 0.2664, -0.1614, -0.7502, 1.7135, 0.0367, 0.0389, -0.0685, 1.0296])

    /// The matrix adapting XYZ seen under white `from` to XYZ under white `to`. Cone
    /// gains are limited to 0.1 ... 10, so a nonsense white cannot blow up the result.
    public static func adaptation(from: SIMD2<Double>, to: SIMD2<Double>) -> Matrix3 {
        let w1 = cone * RGBColorSpace.xyz(from)
        let w2 = cone * RGBColorSpace.xyz(to)
        var gains = SIMD3<Double>()
        for i in 0..<3 {
            let a = max(w1[i], 0), b = max(w2[i], 0)
            gains[i] = min(max(a > 0 ? b / a : 10, 0.1), 10)
        }
        return cone.inverse! * Matrix3.diagonal(gains) * cone
    }
}
