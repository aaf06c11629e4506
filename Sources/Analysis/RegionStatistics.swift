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

    public struct Percentile: Sendable, Codable, Equatable {
        public var percentile: Double
        public var value: Double
    }
}

/// A region measured: per channel R, G, B and luminance Y, with clipping counts.
public struct RegionMeasurement: Sendable, Codable, Equatable {
    public var region: String
    public var channels: [String: QuantityStatistics]
    /// Pixels of the region with any camera channel at or above white.
    public var clippedPixels: Int
    public var negativePixels: Int
    public var pixels: Int

    public var clippedFraction: Double { pixels > 0 ? Double(clippedPixels) / Double(pixels) : 0 }
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
        let w = image.width, h = image.height
        let weights = try region.weights(in: image)
        let lum = Rec2020.luminanceWeights
        var values: [[Double]] = Array(repeating: [], count: 4)
        var pixelWeights: [Double] = []
        var variances: [[Double]] = Array(repeating: [], count: 4)
        var clipped = 0, negative = 0
        let inverse = noise?.cameraToOutput.inverse
        for i in 0..<(w * h) where weights[i] > 0 {
            let rgb = SIMD3(Double(image.pixels.samples[3 * i]), Double(image.pixels.samples[3 * i + 1]),
                            Double(image.pixels.samples[3 * i + 2]))
            let y = (rgb * lum).sum()
            for (q, v) in [rgb.x, rgb.y, rgb.z, y].enumerated() { values[q].append(v) }
            pixelWeights.append(Double(weights[i]))
            if let noise, inverse != nil {
                let v = noise.variance(ofOutput: rgb, pixel: i, luminance: lum)
                for (q, x) in [v.rgb.x, v.rgb.y, v.rgb.z, v.y].enumerated() { variances[q].append(x) }
            }
            if let mask = image.clipMask, mask[i] != 0 { clipped += 1 }
            if rgb.min() < 0 { negative += 1 }
        }
        var channels: [String: QuantityStatistics] = [:]
        for (q, name) in quantities.enumerated() {
            channels[name] = statistics(values[q], weights: pixelWeights, variances: noise == nil ? nil : variances[q],
                                        percentiles: percentiles)
        }
        return RegionMeasurement(region: region.name, channels: channels, clippedPixels: clipped, negativePixels: negative,
                                 pixels: pixelWeights.count)
    }

    /// Weighted statistics of `values`.
    static func statistics(_ values: [Double], weights: [Double], variances: [Double]?, percentiles: [Double]) -> QuantityStatistics {
        let total = weights.reduce(0, +)
        var mean = 0.0
        for (v, w) in zip(values, weights) { mean += v * w }
        mean /= total
        var spread = 0.0
        for (v, w) in zip(values, weights) { spread += w * (v - mean) * (v - mean) }
        let sd = (spread / total).squareRoot()
        // Weighted quantiles: sort by value, walk the cumulative weight.
        let order = values.indices.sorted { values[$0] < values[$1] }
        func quantile(_ p: Double) -> Double {
            let target = p * total
            var cumulative = 0.0
            for i in order {
                cumulative += weights[i]
                if cumulative >= target { return values[i] }
            }
            return values[order.last!]
        }
        var meanSE: Double?
        var medianSE: Double?
        if let variances {
            var s = 0.0
            for (v, w) in zip(variances, weights) { s += w * w * v }
            meanSE = max(s, 0).squareRoot() / total
            medianSE = meanSE.map { $0 * (Double.pi / 2).squareRoot() }
        }
        return QuantityStatistics(count: values.count, weight: total, mean: mean, standardDeviation: sd,
                                  minimum: values[order.first!], maximum: values[order.last!], median: quantile(0.5),
                                  percentiles: percentiles.map { .init(percentile: $0, value: quantile($0 / 100)) },
                                  meanStandardError: meanSE, medianStandardError: medianSE)
    }
}
