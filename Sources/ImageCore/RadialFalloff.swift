import Foundation

/// A lens's relative transmission across the image (vignetting), per camera channel: V_c(r),
/// 1 on the axis, r the distance of a point from the centre divided by the image's
/// half-diagonal (docs/lens.md). Positions are relative to the image — (0, 0) its top-left
/// corner, (1, 1) its bottom-right — so the same falloff serves a full-size image and its
/// 2×2 superpixels.
public struct RadialFalloff: Codable, Sendable, Equatable {
    /// The radial family.
    public enum Family: String, Codable, Sendable {
        /// V = 1 + a₁r² + a₂r⁴ + a₃r⁶ (coefficients a₁, a₂, a₃ per channel): the model the
        /// calibration fits.
        case evenPolynomial = "even-polynomial"
        /// V = cos⁴(atan(k·r)) (coefficient k per channel): the natural fall-off of a thin
        /// lens whose half-diagonal sees the field angle atan k; the simulator's other family.
        case cosineFourth = "cos4"
    }

    public var family: Family
    /// One list per camera channel (R, G, B), as the family says.
    public var coefficients: [[Double]]
    /// The centre (principal point), relative to the image's width and height.
    public var centerX: Double
    public var centerY: Double

    public init(family: Family, coefficients: [[Double]], centerX: Double = 0.5, centerY: Double = 0.5) {
        self.family = family
        self.coefficients = coefficients
        self.centerX = centerX
        self.centerY = centerY
    }

    /// r of the point at relative position (u, v) of a `width` × `height` image.
    public func radius(u: Double, v: Double, width: Int, height: Int) -> Double {
        let w = Double(width), h = Double(height)
        let dx = (u - centerX) * w, dy = (v - centerY) * h
        return (dx * dx + dy * dy).squareRoot() / (0.5 * (w * w + h * h).squareRoot())
    }

    /// r at the centre of pixel (x, y).
    public func radius(x: Int, y: Int, width: Int, height: Int) -> Double {
        radius(u: (Double(x) + 0.5) / Double(width), v: (Double(y) + 0.5) / Double(height), width: width, height: height)
    }

    /// V_c(r).
    public func transmission(channel: Int, r: Double) -> Double {
        let k = coefficients[min(channel, coefficients.count - 1)]
        switch family {
        case .evenPolynomial:
            let r2 = r * r
            return 1 + r2 * (k[0] + r2 * (k[1] + r2 * k[2]))
        case .cosineFourth:
            let c = cos(atan(k[0] * r))
            return c * c * c * c
        }
    }

    /// The basis of the even polynomial at r: (r², r⁴, r⁶), V's derivatives by its coefficients.
    public static func basis(_ r: Double) -> SIMD3<Double> {
        let r2 = r * r
        return SIMD3(r2, r2 * r2, r2 * r2 * r2)
    }

    /// The largest r in any image: 2 · the centre's largest relative distance to an edge (1
    /// for a centred fall-off), whatever the aspect ratio.
    public var reach: Double { 2 * max(max(centerX, 1 - centerX), max(centerY, 1 - centerY)) }

    /// Whether the falloff can be used: three channels of the family's coefficient count,
    /// finite, a centre inside the image, and V > 0 out to the farthest corner (`reach`).
    public var problem: String? {
        let count = family == .evenPolynomial ? 3 : 1
        guard coefficients.count == 3, coefficients.allSatisfy({ $0.count == count && $0.allSatisfy(\.isFinite) }) else {
            return "\(family.rawValue) needs \(count) coefficient\(count == 1 ? "" : "s") for each of 3 channels"
        }
        guard (0...1).contains(centerX), (0...1).contains(centerY) else { return "the centre must lie inside the image (0…1)" }
        for c in 0..<3 {
            for i in 0...30 where !(transmission(channel: c, r: reach * Double(i) / 30) > 0.001) {
                return "channel \(c)'s transmission reaches zero inside the image"
            }
        }
        return nil
    }
}
