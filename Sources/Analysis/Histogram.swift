import Foundation
import ImageCore

/// Histogram binning: EV (log2) bins of a fixed number per stop, or linear bins.
public struct HistogramOptions: Sendable, Equatable {
    public enum Scale: String, Sendable, Codable { case log2, linear }
    public var scale: Scale = .log2
    /// Bins per stop (log2 scale).
    public var binsPerStop = 4
    /// Number of bins (linear scale).
    public var linearBins = 256
    /// The binned range: EV for log2 (e.g. −16 … 1), values for linear; nil = automatic
    /// (log2: from the 0.1th percentile of positive values to the maximum, whole stops;
    /// linear: 0 to the maximum).
    public var range: ClosedRange<Double>?

    public init(scale: Scale = .log2, binsPerStop: Int = 4, linearBins: Int = 256, range: ClosedRange<Double>? = nil) {
        self.scale = scale
        self.binsPerStop = binsPerStop
        self.linearBins = linearBins
        self.range = range
    }
}

/// Histograms of R, G, B and luminance Y over a region.
///
/// Every pixel of the region is counted exactly once per quantity: in a bin, or in one of
/// the separately reported categories — `clipped` (a camera channel reached white, so the
/// value is a lower bound; these pixels are not binned), `zero`, `negative`, `below`
/// (positive but under the range) and `above` (over the range) — never folded silently
/// into the end bins. `counts + below + above + zero + negative + clipped = pixels`.
public struct Histogram: Sendable, Codable, Equatable {
    public var scale: HistogramOptions.Scale
    /// Bin edges (count + 1): EV (log2 of the value; 0 EV = 1.0 = white) or values.
    public var edges: [Double]
    public var counts: [String: [Int]]
    public var below: [String: Int]
    public var above: [String: Int]
    public var zero: [String: Int]
    public var negative: [String: Int]
    /// Pixels with a clipped camera channel (the same for every quantity).
    public var clipped: Int
    /// Pixels of the region (weight > 0).
    public var pixels: Int

    /// Bins `image` (within `weights` > 0 when given).
    public static func compute(_ image: SceneLinearImage, weights: [Float]? = nil, options: HistogramOptions = HistogramOptions()) -> Histogram {
        let n = image.width * image.height
        let quantities = RegionStatistics.quantities
        let lum = SIMD3<Float>(Float(Rec2020.luminanceWeights.x), Float(Rec2020.luminanceWeights.y), Float(Rec2020.luminanceWeights.z))
        var values: [[Float]] = Array(repeating: [], count: 4)
        var clipped = 0
        var pixels = 0
        image.pixels.samples.withUnsafeBufferPointer { p in
            for i in 0..<n where weights.map({ $0[i] > 0 }) ?? true {
                pixels += 1
                if let mask = image.clipMask, mask[i] != 0 {
                    clipped += 1
                    continue
                }
                let rgb = SIMD3(p[3 * i], p[3 * i + 1], p[3 * i + 2])
                values[0].append(rgb.x)
                values[1].append(rgb.y)
                values[2].append(rgb.z)
                values[3].append((rgb * lum).sum())
            }
        }
        // The range, shared by all quantities.
        var range: ClosedRange<Double>
        if let r = options.range {
            range = r
        } else if options.scale == .log2 {
            let positive = values[3].filter { $0 > 0 }.sorted()
            let high = max(positive.last.map { log2(Double($0)) } ?? 0, 0)
            let low = positive.isEmpty ? high - 16 : log2(Double(positive[Int(Double(positive.count - 1) * 0.001)]))
            range = max(-40, low.rounded(.down))...(high.rounded(.up) + (high.rounded(.up) == high ? 1 : 0))
        } else {
            range = 0...max(1e-12, Double(values.compactMap { $0.max() }.max() ?? 1))
        }
        if range.upperBound <= range.lowerBound { range = range.lowerBound...(range.lowerBound + 1) }
        let bins = options.scale == .log2
            ? max(1, Int(((range.upperBound - range.lowerBound) * Double(options.binsPerStop)).rounded()))
            : max(1, options.linearBins)
        let width = (range.upperBound - range.lowerBound) / Double(bins)
        let edges = (0...bins).map { range.lowerBound + Double($0) * width }
        var counts: [String: [Int]] = [:], below: [String: Int] = [:], above: [String: Int] = [:]
        var zero: [String: Int] = [:], negative: [String: Int] = [:]
        for (q, name) in quantities.enumerated() {
            var c = [Int](repeating: 0, count: bins)
            var b = 0, a = 0, z = 0, neg = 0
            for v in values[q] {
                if v == 0 { z += 1; continue }
                if v < 0 && options.scale == .log2 { neg += 1; continue }
                let x = options.scale == .log2 ? log2(Double(v)) : Double(v)
                if x < range.lowerBound { b += 1; continue }
                if x > range.upperBound { a += 1; continue }
                c[min(bins - 1, Int((x - range.lowerBound) / width))] += 1
            }
            counts[name] = c
            below[name] = b
            above[name] = a
            zero[name] = z
            negative[name] = neg
        }
        return Histogram(scale: options.scale, edges: edges, counts: counts, below: below, above: above, zero: zero,
                         negative: negative, clipped: clipped, pixels: pixels)
    }

    /// Total of every category for `quantity` (equals `pixels`).
    public func total(_ quantity: String) -> Int {
        (counts[quantity] ?? []).reduce(0, +) + (below[quantity] ?? 0) + (above[quantity] ?? 0) + (zero[quantity] ?? 0)
            + (negative[quantity] ?? 0) + clipped
    }
}
