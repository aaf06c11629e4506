import Foundation

/// An sRGB colour with 8-bit components and an opacity.
///
/// Components are sRGB-encoded display values (what a PNG stores); `opacity` (0…1) says how
/// much of the colour covers what is underneath when drawn.
public struct RGBColor: Sendable, Hashable {
    /// Red, sRGB-encoded.
    public var red: UInt8
    /// Green, sRGB-encoded.
    public var green: UInt8
    /// Blue, sRGB-encoded.
    public var blue: UInt8
    /// 1 = opaque, 0 = invisible.
    public var opacity: Double

    /// A colour from its components.
    public init(_ red: UInt8, _ green: UInt8, _ blue: UInt8, opacity: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        self.opacity = min(1, max(0, opacity))
    }

    /// A colour from a 24-bit `0xRRGGBB` value.
    public init(hex: UInt32, opacity: Double = 1) {
        self.init(UInt8((hex >> 16) & 0xFF), UInt8((hex >> 8) & 0xFF), UInt8(hex & 0xFF), opacity: opacity)
    }

    /// The same colour with another opacity.
    public func withOpacity(_ opacity: Double) -> RGBColor {
        RGBColor(red, green, blue, opacity: opacity)
    }

    /// `#rrggbb`, as SVG writes colours.
    public var hexString: String {
        let digits = Array("0123456789abcdef")
        var s = "#"
        for v in [red, green, blue] {
            s.append(digits[Int(v >> 4)])
            s.append(digits[Int(v & 15)])
        }
        return s
    }

    /// Opaque white, the paper of every chart.
    public static let white = RGBColor(255, 255, 255)
    /// Opaque black.
    public static let black = RGBColor(0, 0, 0)
    /// The colour of clipped samples everywhere in the charts: pure magenta, outside every ramp.
    public static let clipped = RGBColor(255, 0, 255)
}

/// The colours shared by all charts.
public enum PlotPalette {
    /// Chart text.
    public static let text = RGBColor(hex: 0x222222)
    /// Secondary text: subtitles, notes, axis titles.
    public static let mutedText = RGBColor(hex: 0x5A5A5A)
    /// Axis lines and tick marks.
    public static let axis = RGBColor(hex: 0x4A4A4A)
    /// Grid lines.
    public static let grid = RGBColor(hex: 0xE4E4E4)
    /// Panel borders.
    public static let frame = RGBColor(hex: 0xD0D0D0)
    /// The white-level (clip) marker in histograms: a darker magenta than `RGBColor.clipped`, readable as text.
    public static let clipLine = RGBColor(hex: 0xC2189F)

    /// Colours for series named after a quantity, from the Okabe–Ito set so that they stay
    /// apart with the common colour-vision deficiencies: "R" vermillion, "G" bluish green,
    /// "B" blue, "Y" (luminance) near black.
    public static func quantityColor(_ name: String) -> RGBColor? {
        let key = name.split(separator: " ").first.map(String.init)?.uppercased() ?? ""
        switch key {
        case "R", "RED": return RGBColor(hex: 0xD55E00)
        case "G", "GREEN": return RGBColor(hex: 0x009E73)
        case "B", "BLUE": return RGBColor(hex: 0x0072B2)
        case "Y", "L", "LUMINANCE": return RGBColor(hex: 0x1A1A1A)
        default: return nil
        }
    }

    /// Categorical colours distinguishable with the common colour-vision deficiencies
    /// (the Okabe–Ito set, darkest first), used in order for series without a quantity name.
    public static let categorical: [RGBColor] = [
        RGBColor(hex: 0x0072B2), RGBColor(hex: 0xD55E00), RGBColor(hex: 0x009E73), RGBColor(hex: 0xCC79A7),
        RGBColor(hex: 0xE69F00), RGBColor(hex: 0x56B4E9), RGBColor(hex: 0x000000), RGBColor(hex: 0xB8A700),
    ]

    /// Colours for series named `names`: the quantity colour where a name has one, else the
    /// next categorical colour not too close to a quantity colour in use.
    public static func seriesColors(_ names: [String]) -> [RGBColor] {
        let taken = names.compactMap(quantityColor)
        func distance(_ a: RGBColor, _ b: RGBColor) -> Int {
            let dr = Int(a.red) - Int(b.red), dg = Int(a.green) - Int(b.green), db = Int(a.blue) - Int(b.blue)
            return dr * dr + dg * dg + db * db
        }
        var available = categorical.filter { c in taken.allSatisfy { distance($0, c) > 120 * 120 } }
        if available.isEmpty { available = categorical }
        var next = 0
        return names.map { name in
            if let c = quantityColor(name) { return c }
            defer { next += 1 }
            return available[next % available.count]
        }
    }
}

/// The false-colour ramp of the EV maps: dark to bright, evenly spaced in perceived lightness.
///
/// The ramp is defined in the OKLab colour space: lightness rises linearly from 0.20 to 0.95
/// while the hue turns from a dark violet (hue 300°) through blue, teal and green to a pale
/// yellow (hue 95°). Lightness alone orders the ramp, so it reads correctly in greyscale and
/// with red–green colour-vision deficiencies; the hue turn adds discriminability between
/// stops. Chroma follows a smooth curve chosen to stay inside the sRGB gamut along the whole
/// path (it is still clipped to the gamut if needed), so no part of the ramp stands out as a
/// band. The ramp never passes through magenta, which marks clipped pixels, nor through
/// neutral grey, which marks pixels without a logarithm (zero or negative).
public enum EVColorRamp {
    /// Number of entries in `table`.
    public static let size = 1024

    /// The ramp sampled at `size` evenly spaced positions, as sRGB bytes (R, G, B per entry).
    public static let table: [UInt8] = {
        var out = [UInt8]()
        out.reserveCapacity(size * 3)
        for i in 0..<size {
            let c = evaluate(Double(i) / Double(size - 1))
            out += [c.red, c.green, c.blue]
        }
        return out
    }()

    /// The colour at `t` ∈ [0, 1] (clamped): 0 = darkest, 1 = brightest.
    public static func color(at t: Double) -> RGBColor {
        let i = Int((min(1, max(0, t.isNaN ? 0 : t)) * Double(size - 1)).rounded())
        return RGBColor(table[3 * i], table[3 * i + 1], table[3 * i + 2])
    }

    /// OKLab lightness at the two ends of the ramp.
    public static let lightness: ClosedRange<Double> = 0.20...0.95

    /// Chroma along the ramp: (t, chroma) points, interpolated linearly.
    private static let chroma: [(Double, Double)] = [
        (0, 0.11), (0.12, 0.14), (0.3, 0.10), (0.45, 0.09), (0.6, 0.11), (0.75, 0.14), (0.9, 0.14), (1, 0.11),
    ]

    /// Computes the ramp colour at `t` from its OKLab definition.
    static func evaluate(_ t: Double) -> RGBColor {
        let l = lightness.lowerBound + (lightness.upperBound - lightness.lowerBound) * t
        let hue = (300 - 205 * t) * Double.pi / 180
        var wanted = chroma[0].1
        for (a, b) in zip(chroma, chroma.dropFirst()) where t >= a.0 && t <= b.0 {
            wanted = a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0)
        }
        // Largest chroma ≤ wanted that stays in gamut (bisection).
        var c = wanted
        if !inGamut(l, wanted, hue) {
            var lo = 0.0, hi = wanted
            for _ in 0..<30 {
                let mid = (lo + hi) / 2
                if inGamut(l, mid, hue) { lo = mid } else { hi = mid }
            }
            c = lo
        }
        let rgb = oklabToLinearSRGB(l, c * cos(hue), c * sin(hue))
        return RGBColor(encode(rgb.0), encode(rgb.1), encode(rgb.2))
    }

    private static func inGamut(_ l: Double, _ c: Double, _ h: Double) -> Bool {
        let (r, g, b) = oklabToLinearSRGB(l, c * cos(h), c * sin(h))
        let e = 1e-6
        return r >= -e && r <= 1 + e && g >= -e && g <= 1 + e && b >= -e && b <= 1 + e
    }

    /// OKLab → linear sRGB (D65), with the matrices of the OKLab definition.
    static func oklabToLinearSRGB(_ l: Double, _ a: Double, _ b: Double) -> (Double, Double, Double) {
        let l1 = l + 0.3963377774 * a + 0.2158037573 * b
        let m1 = l - 0.1055613458 * a - 0.0638541728 * b
        let s1 = l - 0.0894841775 * a - 1.2914855480 * b
        let l3 = l1 * l1 * l1, m3 = m1 * m1 * m1, s3 = s1 * s1 * s1
        return (4.0767416621 * l3 - 3.3077115913 * m3 + 0.2309699292 * s3,
                -1.2684380046 * l3 + 2.6097574011 * m3 - 0.3413193965 * s3,
                -0.0041960863 * l3 - 0.7034186147 * m3 + 1.7076147010 * s3)
    }

    /// Linear → sRGB-encoded byte (IEC 61966-2-1 transfer function).
    static func encode(_ linear: Double) -> UInt8 {
        let v = min(1, max(0, linear))
        let e = v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055
        return UInt8((e * 255).rounded())
    }
}
