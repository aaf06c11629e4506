import Foundation
import ImageCore

/// What a measured number is: the value itself, or only a bound on it.
///
/// A pixel clipped in every frame holds less than the light that reached it, so any
/// statistic that a clipped pixel can move is a bound. Which way depends on how the
/// statistic weighs the camera channels that clipped (`ClipDirection`): a positive weight
/// gives a lower bound, a negative one an upper bound, both an undetermined result.
public enum ResultKind: String, Sendable, Codable, CaseIterable {
    /// No clipped pixel can change it.
    case value
    /// The true value is at least this.
    case lowerBound = "lower-bound"
    /// The true value is at most this.
    case upperBound = "upper-bound"
    /// Clipped pixels may move it either way.
    case undetermined
    /// The image carries no clip mask: whether a pixel reached white is unknown.
    case clippingUnknown = "clipping-unknown"

    /// Whether the number is the value itself (a two-sided interval applies).
    public var isValue: Bool { self == .value }

    /// "≥", "≤", "?", "~" or "" in front of a number in a table.
    public var symbol: String {
        switch self {
        case .value: ""
        case .lowerBound: "≥"
        case .upperBound: "≤"
        case .undetermined: "?"
        case .clippingUnknown: "~"
        }
    }

    /// Words for the kind: "value", "lower bound", ...
    public var words: String { rawValue.replacingOccurrences(of: "-", with: " ") }

    /// The integer stored for the kind in HDF5 (`/analysis`): 0 value, 1 lower bound,
    /// 2 upper bound, 3 undetermined, 4 clipping unknown.
    public var code: Int { Self.allCases.firstIndex(of: self)! }

    /// The kind of a sum or mean of two results (e.g. the ratio of a lower bound to a value
    /// is a lower bound, of a value to a lower bound an upper bound).
    public static func ofRatio(_ numerator: ResultKind, _ denominator: ResultKind) -> ResultKind {
        if numerator == .clippingUnknown || denominator == .clippingUnknown { return .clippingUnknown }
        let flipped: ResultKind = switch denominator {
        case .lowerBound: .upperBound
        case .upperBound: .lowerBound
        default: denominator
        }
        return combined(numerator, flipped)
    }

    /// The kind of a result that two parts move in the same sense.
    public static func combined(_ a: ResultKind, _ b: ResultKind) -> ResultKind {
        if a == .clippingUnknown || b == .clippingUnknown { return .clippingUnknown }
        if a == .value { return b }
        if b == .value || a == b { return a }
        return .undetermined
    }
}

/// How an underestimated camera channel moves an output quantity: the signs of the
/// quantity's weights on the camera channels (a clipped channel's true value is higher
/// than recorded).
public enum ClipDirection {
    /// The kind of a mean or sum of a quantity whose camera weights are `weights`:
    /// lower bound when every weight is ≥ 0, upper bound when every one is ≤ 0, else
    /// undetermined. Weights below 10⁻⁶ of the largest count as zero (rounding in the matrix).
    public static func kind(weights: SIMD3<Double>) -> ResultKind {
        let largest = max(abs(weights.x), abs(weights.y), abs(weights.z))
        let tolerance = 1e-6 * largest
        let positive = (0..<3).contains { weights[$0] > tolerance }
        let negative = (0..<3).contains { weights[$0] < -tolerance }
        switch (positive, negative) {
        case (true, true): return .undetermined
        case (false, true): return .upperBound
        default: return .lowerBound
        }
    }

    /// The directions of R, G, B and Y (Rec.2020 weights) for an image whose output is
    /// `cameraToOutput` (row-major 3×3) times the camera channels; lower bounds for all when
    /// the matrix is not known.
    public static func kinds(cameraToOutput: [Double], luminance w: SIMD3<Double> = Rec2020.luminanceWeights) -> [String: ResultKind] {
        guard cameraToOutput.count == 9 else { return ["R": .lowerBound, "G": .lowerBound, "B": .lowerBound, "Y": .lowerBound] }
        let m = cameraToOutput
        let rows = (0..<3).map { SIMD3(m[3 * $0], m[3 * $0 + 1], m[3 * $0 + 2]) }
        let y = rows[0] * w.x + rows[1] * w.y + rows[2] * w.z
        return ["R": kind(weights: rows[0]), "G": kind(weights: rows[1]), "B": kind(weights: rows[2]), "Y": kind(weights: y)]
    }
}
