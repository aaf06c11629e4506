import Foundation
import ImageCore

/// Which statistic of a region a ratio compares.
public enum RatioStatistic: Sendable, Equatable, Codable {
    case mean
    case median

    public var name: String { self == .mean ? "mean" : "median" }
}

/// A radiance ratio between two regions with its 95 % interval.
public struct RadianceRatio: Sendable, Codable, Equatable {
    /// `value`: no clipped pixel moves either statistic. `lowerBound`: the numerator's
    /// statistic is a lower bound (or the denominator's an upper bound), so the true ratio is
    /// at least `ratio`; `upperBound` the other way; `undetermined`: both move it, in
    /// opposite senses; `clippingUnknown`: the image carries no clip mask (an EXR written
    /// without one, or by another tool). A bound has only its one 95 % end (`low95` for a
    /// lower bound, `high95` for an upper bound); an undetermined ratio none.
    public typealias Kind = ResultKind

    public var numerator: String
    public var denominator: String
    public var quantity: String
    public var statistic: String
    public var ratio: Double
    public var kind: Kind
    /// 95 % interval from the propagated noise (log-normal: ratio · exp(±1.96 · relative SE));
    /// nil without a noise model or when a statistic is not positive.
    public var low95: Double?
    public var high95: Double?
    /// Relative standard error of the ratio.
    public var relativeStandardError: Double?
    public var explanation: String
}

extension RadianceRatio {
    /// The ratio `numerator / denominator` of `quantity` ("R", "G", "B" or "Y").
    ///
    /// Uncertainty: the two regions' statistics are independent, so the relative variance of
    /// the ratio is the sum of theirs (first-order propagation); the interval is taken on the
    /// log scale so it stays positive.
    public static func between(_ numerator: RegionMeasurement, _ denominator: RegionMeasurement, quantity: String = "Y",
                               statistic: RatioStatistic = .mean) throws -> RadianceRatio {
        guard let a = numerator.channels[quantity], let b = denominator.channels[quantity] else {
            throw AnalysisError(reason: "unknown quantity \(quantity) (R, G, B or Y)")
        }
        let (va, ea) = statistic == .mean ? (a.mean, a.meanStandardError) : (a.median, a.medianStandardError)
        let (vb, eb) = statistic == .mean ? (b.mean, b.meanStandardError) : (b.median, b.medianStandardError)
        guard vb != 0 else { throw AnalysisError(reason: "region \(denominator.region) has a \(statistic.name) of 0") }
        let ratio = va / vb
        var relative: Double?
        var low: Double?, high: Double?
        if let ea, let eb, va > 0, vb > 0 {
            let r = ((ea / va) * (ea / va) + (eb / vb) * (eb / vb)).squareRoot()
            relative = r
            low = ratio * exp(-1.96 * r)
            high = ratio * exp(1.96 * r)
        }
        let (kindA, kindB) = statistic == .mean ? (a.kind, b.kind) : (a.medianKind, b.medianKind)
        let kind = ResultKind.ofRatio(kindA, kindB)
        let explanation = Self.explanation(kind, numerator, denominator, kindA, kindB)
        if kind == .lowerBound || kind == .undetermined { high = nil }
        if kind == .upperBound || kind == .undetermined { low = nil }
        return RadianceRatio(numerator: numerator.region, denominator: denominator.region, quantity: quantity,
                             statistic: statistic.name, ratio: ratio, kind: kind, low95: low, high95: high,
                             relativeStandardError: relative, explanation: explanation)
    }

    /// Why the ratio is of its kind, in words.
    static func explanation(_ kind: ResultKind, _ numerator: RegionMeasurement, _ denominator: RegionMeasurement,
                            _ kindA: ResultKind, _ kindB: ResultKind) -> String {
        func part(_ m: RegionMeasurement, _ k: ResultKind) -> String {
            "\(m.clippedPixels ?? 0) pixels of \(m.region) reached white (its statistic is \(k == .lowerBound ? "a lower" : k == .upperBound ? "an upper" : "no") bound)"
        }
        switch kind {
        case .value:
            return numerator.clippedPixels == 0 && denominator.clippedPixels == 0 ? "both regions unclipped"
                : "the clipped pixels lie beyond both statistics: neither moves"
        case .clippingUnknown:
            let unknown = [numerator, denominator].filter { $0.clippedPixels == nil }.map(\.region)
            return "the image carries no clip mask: whether \(unknown.joined(separator: " and ")) reached white is unknown, so the ratio may be a bound"
        case .lowerBound, .upperBound:
            let parts = [kindA != .value ? part(numerator, kindA) : nil, kindB != .value ? part(denominator, kindB) : nil].compactMap { $0 }
            return parts.joined(separator: "; ") + ": the true ratio is at \(kind == .lowerBound ? "least" : "most") this"
        case .undetermined:
            return [part(numerator, kindA), part(denominator, kindB)].joined(separator: "; ") + ": the ratio is not determined"
        }
    }
}
