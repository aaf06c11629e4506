import Foundation

/// Scenes that come with SceneLinear, each with known radiance (linear Rec.2020, relative:
/// 1.0 = a neutral that the default exposure puts exactly at white).
public enum BuiltInScene: String, CaseIterable, Sendable {
    /// 18 grey steps one stop apart, from 1.6 (beyond white: clipped) down to 1.6 · 2⁻¹⁷
    /// (about 16.4 stops below white), above a smooth 16-stop gradient.
    case greyRamp = "grey-ramp"
    /// The 24 patches of a ColorChecker (2014 formulation), white patch at 0.88.
    case colourChart = "colour-chart"
    /// A sunset: a bright sun disk, a sky whose marked patch has 12 % of the sun's radiance,
    /// a sky gradient and a dark foreground.
    case sunset
    /// A daylit sky with the sun in view, 33 stops from the sun's disc (2.4·10⁵ × white:
    /// about 1.2·10⁸ cd/m² with the default camera) to the darkest of 24 grey steps one stop
    /// apart (2⁸ … 2⁻¹⁵ × white), with a sky patch and a dark foreground: a scene for
    /// brackets (`simulate --bracket`, `merge`).
    case skySun = "sky-sun"
    /// A CIE overcast sky dome (zenith 0.5 × white) with a sun of 2.4·10⁵ × white (0.5° across,
    /// 30° from the zenith), seen by a 180° equidistant fisheye looking up: a scene of known
    /// illuminance for `illuminance` and a bracket.
    case skyDome = "sky-dome"

    /// ColorChecker 24 (X-Rite, formulation after November 2014) patch colours: the
    /// published chromaticities under D50 adapted to D65 by Bradford and expressed in linear
    /// Rec.2020, rounded to 5 decimals.
    public static let colorChecker: [(String, [Double])] = [
        ("dark skin", [0.13721, 0.08504, 0.05711]), ("light skin", [0.45173, 0.29615, 0.22244]),
        ("blue sky", [0.14184, 0.18465, 0.31291]), ("foliage", [0.11819, 0.1465, 0.06052]),
        ("blue flower", [0.23113, 0.21586, 0.40432]), ("bluish green", [0.25725, 0.47924, 0.41473]),
        ("orange", [0.53587, 0.23769, 0.05674]), ("purplish blue", [0.08698, 0.1015, 0.35712]),
        ("moderate red", [0.38281, 0.11366, 0.11884]), ("purple", [0.08831, 0.04772, 0.12919]),
        ("yellow green", [0.37441, 0.48081, 0.08736]), ("orange yellow", [0.60252, 0.38256, 0.06243]),
        ("blue", [0.04111, 0.04839, 0.25898]), ("green", [0.12773, 0.27243, 0.08151]),
        ("red", [0.29369, 0.06473, 0.04682]), ("yellow", [0.71745, 0.58633, 0.0685]),
        ("magenta", [0.3659, 0.11089, 0.27449]), ("cyan", [0.06573, 0.21612, 0.35764]),
        ("white 9.5", [0.87943, 0.884, 0.8394]), ("neutral 8", [0.58706, 0.5915, 0.58511]),
        ("neutral 6.5", [0.36113, 0.36638, 0.36528]), ("neutral 5", [0.19035, 0.19079, 0.1899]),
        ("neutral 3.5", [0.08703, 0.08855, 0.08964]), ("black 2", [0.03144, 0.03149, 0.03223]),
    ]

    /// The sun's radiance (relative) and the sky patch's: their ratio is 0.12.
    public static let sunRadiance: [Double] = [0.80, 0.72, 0.52]
    public static let skyRatio = 0.12

    /// The description of this scene at the given size.
    public func description(width: Int = 1024, height: Int = 768) -> SceneDescription {
        switch self {
        case .greyRamp:
            return SceneDescription(
                name: rawValue, width: width, height: height, background: [0.05, 0.05, 0.05],
                elements: [
                    .init(type: "ramp", name: "grey", rect: [0.05, 0.02, 0.55, 0.98], rgb: [1, 1, 1], steps: 18, top: 1.6),
                    .init(type: "gradient", name: "gradient", rect: [0.65, 0.02, 0.95, 0.98],
                          from: [1.5e-5, 1.5e-5, 1.5e-5], to: [0.98, 0.98, 0.98], log: true),
                ])
        case .colourChart:
            var elements: [SceneDescription.Element] = []
            for (i, (name, rgb)) in Self.colorChecker.enumerated() {
                let row = Double(i / 6), col = Double(i % 6)
                let top = 0.08 + row * 0.22, left = 0.04 + col * 0.16
                elements.append(.init(type: "rect", name: name, rect: [top, left, top + 0.18, left + 0.13], rgb: rgb))
            }
            return SceneDescription(name: rawValue, width: width, height: height, background: [0.02, 0.02, 0.02],
                                    elements: elements)
        case .skySun:
            return SceneDescription(
                name: rawValue, width: width, height: height, background: [0.03, 0.028, 0.025],
                elements: [
                    .init(type: "gradient", name: "sky gradient", rect: [0, 0, 0.48, 1],
                          from: [2.0, 2.6, 3.8], to: [5.0, 5.0, 5.2], log: true),
                    .init(type: "rect", name: "sky", rect: [0.05, 0.05, 0.25, 0.35], rgb: [2.2, 2.7, 3.8]),
                    .init(type: "disk", name: "sun", center: [0.75, 0.18], radius: 0.06, rgb: [2.4e5, 2.3e5, 2.1e5]),
                    .init(type: "ramp", name: "grey", rect: [0.50, 0.02, 0.80, 0.98], rgb: [1, 1, 1], steps: 24, top: 256),
                    .init(type: "rect", name: "foreground", rect: [0.82, 0, 1, 1], rgb: [0.02, 0.018, 0.015]),
                ])
        case .skyDome:
            return SceneDescription(
                name: rawValue, width: width, height: height, background: [0, 0, 0],
                elements: [
                    .init(type: "sky", name: "sky", rgb: [0.45, 0.5, 0.6], projection: "equidistant", fov: 180, model: "cie-overcast",
                          sun: [30, 60, 0.2665], sunRGB: [2.4e5, 2.3e5, 2.1e5]),
                ])
        case .sunset:
            let sun = Self.sunRadiance
            return SceneDescription(
                name: rawValue, width: width, height: height, background: [0.004, 0.003, 0.002],
                elements: [
                    .init(type: "gradient", name: "sky gradient", rect: [0, 0, 0.65, 1],
                          from: [0.30, 0.16, 0.08], to: [0.05, 0.06, 0.09], log: true),
                    .init(type: "rect", name: "sky", rect: [0.08, 0.08, 0.30, 0.40], rgb: sun.map { $0 * Self.skyRatio }),
                    .init(type: "disk", name: "sun", center: [0.72, 0.42], radius: 0.08, rgb: sun),
                    .init(type: "rect", name: "foreground", rect: [0.65, 0, 1, 1], rgb: [0.012, 0.010, 0.008]),
                ])
        }
    }
}
