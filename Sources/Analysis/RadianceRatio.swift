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
    /// `value`: both regions unclipped. `lowerBound`: the numerator has clipped pixels, so the
    /// true ratio is at least `value`. `upperBound`: the denominator has clipped pixels, so it
    /// is at most `value`. `undetermined`: both have clipped pixels. `clippingUnknown`: the
    /// image carries no clip mask (an EXR written without one, or by another tool), so
    /// either region may hold pixels at white and `value` may be a bound of either kind.
    public enum Kind: String, Sendable, Codable {
        case value, lowerBound = "lower-bound", upperBound = "upper-bound", undetermined
        case clippingUnknown = "clipping-unknown"
    }

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
        let kind: Kind
        let explanation: String
        guard let clippedA = numerator.clippedPixels, let clippedB = denominator.clippedPixels else {
            let unknown = [numerator, denominator].filter { $0.clippedPixels == nil }.map(\.region)
            return RadianceRatio(numerator: numerator.region, denominator: denominator.region, quantity: quantity,
                                 statistic: statistic.name, ratio: ratio, kind: .clippingUnknown, low95: low, high95: high,
                                 relativeStandardError: relative,
                                 explanation: "the image carries no clip mask: whether \(unknown.joined(separator: " and ")) reached white is unknown, so the ratio may be a bound")
        }
        switch (clippedA > 0, clippedB > 0) {
        case (false, false):
            kind = .value
            explanation = "both regions unclipped"
        case (true, false):
            kind = .lowerBound
            explanation = "\(clippedA) pixels of \(numerator.region) reached white: its radiance is underestimated, so the true ratio is at least this"
        case (false, true):
            kind = .upperBound
            explanation = "\(clippedB) pixels of \(denominator.region) reached white: its radiance is underestimated, so the true ratio is at most this"
        case (true, true):
            kind = .undetermined
            explanation = "both regions have pixels at white: the ratio is not determined"
        }
        return RadianceRatio(numerator: numerator.region, denominator: denominator.region, quantity: quantity,
                             statistic: statistic.name, ratio: ratio, kind: kind, low95: low, high95: high,
                             relativeStandardError: relative, explanation: explanation)
    }
}
