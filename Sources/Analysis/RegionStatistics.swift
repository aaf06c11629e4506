import Foundation
import ImageCore

/// Statistics of one quantity (a channel or luminance) over a region.
public struct QuantityStatistics: Sendable, Codable, Equatable {
    /// Pixels with non-zero weight.
    public var count: Int
    /// Sum of weights (equals `count` for hard regions).
    public var weight: Double
    public var mean: Double
    /// Weighted standard deviation of the values (scene variation plus noise).
    public var standardDeviation: Double
    public var minimum: Double
    public var maximum: Double
    public var median: Double
    /// Requested percentiles, e.g. [1: v, 99: v] as (percentile, value) pairs.
    public var percentiles: [Percentile]
    /// Standard error of the mean from the noise model (nil without one): sqrt(Σ w² σ²) / Σ w.
    public var meanStandardError: Double?
    /// Standard error of the median from the noise model (normal approximation: √(π/2) times the mean's).
    public var medianStandardError: Double?
    /// What each statistic is when clipped pixels are in the region (`ResultKind`): the
    /// mean's (and any sum's), the median's, the extremes' and the spread's.
    public var kind = ResultKind.value
    public var medianKind = ResultKind.value
    public var minimumKind = ResultKind.value
    public var maximumKind = ResultKind.value
    public var standardDeviationKind = ResultKind.value
    /// The smallest and largest value among the region's clipped pixels (nil without any):
    /// a quantile below every clipped pixel cannot be moved by them.
    public var clippedMinimum: Double?
    public var clippedMaximum: Double?

    public struct Percentile: Sendable, Codable, Equatable {
        public var percentile: Double
        public var value: Double
        public var kind = ResultKind.value
        public init(percentile: Double, value: Double, kind: ResultKind = .value) {
            self.percentile = percentile
            self.value = value
            self.kind = kind
        }
    }

    public init(count: Int, weight: Double, mean: Double, standardDeviation: Double, minimum: Double, maximum: Double, median: Double,
                percentiles: [Percentile], meanStandardError: Double?, medianStandardError: Double?) {
        self.count = count
        self.weight = weight
        self.mean = mean
        self.standardDeviation = standardDeviation
        self.minimum = minimum
        self.maximum = maximum
        self.median = median
        self.percentiles = percentiles
        self.meanStandardError = meanStandardError
        self.medianStandardError = medianStandardError
    }

    /// Sets every statistic's kind for a region with `clippedPixels` clipped pixels (nil:
    /// unknown) whose values a clip moves in the sense `direction` (`ClipDirection`). The
    /// mean moves with any clipped pixel; a quantile (median, percentile, extreme) only when
    /// a clipped pixel lies at or on the wrong side of it (order statistics never move
    /// against their values); the spread either way.
    public mutating func assignKinds(clippedPixels: Int?, direction: ResultKind) {
        guard let clippedPixels else {
            kind = .clippingUnknown; medianKind = .clippingUnknown; minimumKind = .clippingUnknown
            maximumKind = .clippingUnknown; standardDeviationKind = .clippingUnknown
            for i in percentiles.indices { percentiles[i].kind = .clippingUnknown }
            return
        }
        guard clippedPixels > 0 else {
            kind = .value; medianKind = .value; minimumKind = .value; maximumKind = .value; standardDeviationKind = .value
            for i in percentiles.indices { percentiles[i].kind = .value }
            return
        }
        kind = direction
        standardDeviationKind = .undetermined
        medianKind = quantileKind(median, direction)
        minimumKind = quantileKind(minimum, direction)
        maximumKind = quantileKind(maximum, direction)
        for i in percentiles.indices { percentiles[i].kind = quantileKind(percentiles[i].value, direction) }
    }

    /// A quantile's kind: a value when every clipped pixel lies beyond it on the side the clip
    /// moves them to.
    private func quantileKind(_ v: Double, _ direction: ResultKind) -> ResultKind {
        switch direction {
        case .lowerBound: (clippedMinimum ?? -.infinity) > v ? .value : .lowerBound
        case .upperBound: (clippedMaximum ?? .infinity) < v ? .value : .upperBound
        default: direction
        }
    }
}

/// A region measured: per channel R, G, B and luminance Y, with clipping counts.
public struct RegionMeasurement: Sendable, Codable, Equatable {
    public var region: String
    public var channels: [String: QuantityStatistics]
    /// Pixels of the region with any camera channel at or above white; `nil` when the image
    /// carries no clip mask (an EXR written without one, or by another tool): its clipping is
    /// unknown, never taken as none. JSON: `null`.
    public var clippedPixels: Int?
    public var negativePixels: Int
    public var pixels: Int
    /// Σ w · (R, G, B, 1) by position in a 2×2 cell (not encoded): for means over a CFA
    /// image's raw sites (`SiteLayout`).
    public var paritySums: ParitySums?

    /// "N clipped (p %)", or "clipping unknown (no clip mask)".
    public var clippingSummary: String {
        guard let clippedPixels, let clippedFraction else { return "clipping unknown (no clip mask)" }
        // 0 as "0"; a share too small for three decimals as "< 0.001", never as 0.000.
        let share = clippedPixels == 0 ? "0" : 100 * clippedFraction < 0.0005 ? "< 0.001" : String(format: "%.3f", 100 * clippedFraction)
        return "\(clippedPixels) clipped (\(share) %)"
    }

    /// Sets the kinds of every quantity's statistics (`QuantityStatistics.assignKinds`) from
    /// the directions of R, G, B and Y (`ClipDirection.kinds`).
    public mutating func assignKinds(_ directions: [String: ResultKind]) {
        for q in channels.keys { channels[q]!.assignKinds(clippedPixels: clippedPixels, direction: directions[q] ?? .lowerBound) }
    }

    /// The share of clipped pixels; `nil` when clipping is unknown.
    public var clippedFraction: Double? { clippedPixels.map { pixels > 0 ? Double($0) / Double(pixels) : 0 } }

    public init(region: String, channels: [String: QuantityStatistics], clippedPixels: Int?, negativePixels: Int, pixels: Int) {
        self.region = region
        self.channels = channels
        self.clippedPixels = clippedPixels
        self.negativePixels = negativePixels
        self.pixels = pixels
    }

    enum CodingKeys: String, CodingKey { case region, channels, clippedPixels, negativePixels, pixels }

    /// Writes `clippedPixels` as `null` when unknown rather than leaving the key out.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(region, forKey: .region)
        try c.encode(channels, forKey: .channels)
        try c.encode(clippedPixels, forKey: .clippedPixels)
        try c.encode(negativePixels, forKey: .negativePixels)
        try c.encode(pixels, forKey: .pixels)
    }
}

/// Measures regions of scene-linear images.
public enum RegionStatistics {
    public static let quantities = ["R", "G", "B", "Y"]

    /// Measures `region` in `image`.
    /// - Parameters:
    ///   - noise: when given, standard errors of the mean and median are propagated.
    ///   - percentiles: extra percentiles (0…100) to report.
    /// - Throws: `AnalysisError` for a region outside the image.
    public static func measure(_ image: SceneLinearImage, region: Region, noise: NoiseModel? = nil,
                               percentiles: [Double] = []) throws -> RegionMeasurement {
        measure(image, selection: try region.selection(in: image), name: region.name, noise: noise, percentiles: percentiles)
    }

    /// Measures the pixels of `selection` in `image`, without sorting (see
    /// `ImageMeasurement` and `ExactSelector`). Weighted quantiles are the inverted CDF: the
    /// smallest value whose cumulative weight reaches p · Σw.
    public static func measure(_ image: SceneLinearImage, selection: PixelSelection, name: String, noise: NoiseModel? = nil,
                               percentiles: [Double] = []) -> RegionMeasurement {
        let request = RegionRequest(name: name, selection: selection, percentiles: percentiles, pixelGains: noise?.pixelGains)
        // An image in memory: the scan cannot fail.
        return try! ImageMeasurement.measure([request], noise: { noise }, scan: image.scan)[0].measurement!
    }
}
