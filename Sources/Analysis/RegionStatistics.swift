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
        measure(image, selection: try region.selection(in: image), name: region.name, noise: noise, percentiles: percentiles)
    }

    /// Sums of one block of rows, added in block order.
    struct BlockSums: Sendable {
        var weight = 0.0
        var sum = SIMD4<Double>()
        /// Σ w² g · (R, G, B) and Σ w² g² (g = the pixel's gain, 1 without gains): the noise
        /// model turns them into Σ w² · variance.
        var noise = SIMD4<Double>()
    }

    /// Measures the pixels of `selection` in `image`, without sorting: a first pass over the
    /// pixels gives the weights, sums, extremes and clipping counts and a histogram of each
    /// quantity's order keys; a second pass the spread about the mean and the bins holding
    /// the median and percentiles, resolved exactly (`ExactSelector`) in that pass or, rarely,
    /// in up to three more. Weighted quantiles are the inverted CDF: the smallest value whose
    /// cumulative weight reaches p · Σw.
    public static func measure(_ image: SceneLinearImage, selection: PixelSelection, name: String, noise: NoiseModel? = nil,
                               percentiles: [Double] = []) -> RegionMeasurement {
        let kernel = noise.map { NoiseModel.Kernel($0) }
        let gains = kernel?.pixelGains
        let clipMask = image.clipMask

        let fractions = [0.5] + percentiles.map { $0 / 100 }
        let predicted = predictedBins(image, selection: selection, fractions: fractions)
        struct First: Sendable {
            let keys: [ExactSelector.FirstPass]
            var blocks: [(Int, BlockSums)] = []
            var count = 0, clipped = 0, negative = 0
        }
        let first = selection.reduce({ First(keys: predicted.map { ExactSelector.FirstPass(predicted: $0) }) }, merge: { a, b in
            for q in 0..<4 { a.keys[q].merge(b.keys[q]) }
            a.blocks += b.blocks
            a.count += b.count
            a.clipped += b.clipped
            a.negative += b.negative
        }) { a, block, rows in
            var sums = BlockSums()
            let k0 = a.keys[0], k1 = a.keys[1], k2 = a.keys[2], k3 = a.keys[3]
            var low = SIMD4<UInt64>(repeating: .max), high = SIMD4<UInt64>(repeating: 0)
            image.pixels.samples.withUnsafeBufferPointer { p in
                selection.forEachPixel(rows: rows) { i, w in
                    let v = pixelValues(p, i), rgb = SIMD3(v.x, v.y, v.z)
                    let weight = Double(w), fixed = FixedWeight.of(w)
                    let key = SIMD4(OrderKey.of(v.x), OrderKey.of(v.y), OrderKey.of(v.z), OrderKey.of(v.w))
                    k0.add(key.x, weight: fixed)
                    k1.add(key.y, weight: fixed)
                    k2.add(key.z, weight: fixed)
                    k3.add(key.w, weight: fixed)
                    low = pointwiseMin(low, key)
                    high = pointwiseMax(high, key)
                    sums.sum += v * weight
                    sums.weight += weight
                    if let gains {
                        let g = Double(gains[i]), w2 = weight * weight
                        sums.noise += SIMD4(rgb * (w2 * g), w2 * g * g)
                    } else {
                        sums.noise += SIMD4(rgb, 1) * (weight * weight)
                    }
                    if let clipMask, clipMask[i] != 0 { a.clipped += 1 }
                    if rgb.min() < 0 { a.negative += 1 }
                    a.count += 1
                }
            }
            for q in 0..<4 { a.keys[q].note(minimum: low[q], maximum: high[q]) }
            a.blocks.append((block, sums))
        }
        var total = BlockSums()
        for (_, s) in first.blocks.sorted(by: { $0.0 < $1.0 }) {
            total.weight += s.weight
            total.sum += s.sum
            total.noise += s.noise
        }
        let mean = total.sum / total.weight
        var selectors = (0..<4).map { q in ExactSelector(targets: fractions.map { $0 * total.weight }) }
        for q in 0..<4 { selectors[q].finishFirstPass(first.keys[q]) }

        // Pass 2: the spread about the mean, and the first refinement of the quantiles.
        struct Second: Sendable {
            let refinements: [ExactSelector.Refinement]
            var blocks: [(Int, SIMD4<Double>)] = []
        }
        let snapshot = selectors
        let second = selection.reduce({ Second(refinements: snapshot.map { $0.nextPass() }) }, merge: { a, b in
            for q in 0..<4 { a.refinements[q].merge(b.refinements[q]) }
            a.blocks += b.blocks
        }) { a, block, rows in
            var spread = SIMD4<Double>()
            let refinements = Refinements(a.refinements)
            image.pixels.samples.withUnsafeBufferPointer { p in
                selection.forEachPixel(rows: rows) { i, w in
                    let v = pixelValues(p, i)
                    let d = v - mean
                    spread += Double(w) * d * d
                    refinements.add(v, weight: FixedWeight.of(w))
                }
            }
            a.blocks.append((block, spread))
        }
        var spread = SIMD4<Double>()
        for (_, s) in second.blocks.sorted(by: { $0.0 < $1.0 }) { spread += s }
        for q in 0..<4 { selectors[q].finish(second.refinements[q]) }
        // Further refinements, needed only when a chosen bin held very many values.
        selection.refine(&selectors) { pass, rows in
            let refinements = Refinements(pass)
            image.pixels.samples.withUnsafeBufferPointer { p in
                selection.forEachPixel(rows: rows) { i, w in refinements.add(pixelValues(p, i), weight: FixedWeight.of(w)) }
            }
        }

        var channels: [String: QuantityStatistics] = [:]
        for (q, quantity) in quantities.enumerated() {
            let s = selectors[q]
            var meanSE: Double?
            var medianSE: Double?
            if let kernel {
                let v = kernel.variance(weightedOutputs: SIMD3(total.noise.x, total.noise.y, total.noise.z), weightedGains: total.noise.w)
                meanSE = max(SIMD4(v.rgb, v.y)[q], 0).squareRoot() / total.weight
                medianSE = meanSE.map { $0 * (Double.pi / 2).squareRoot() }
            }
            channels[quantity] = QuantityStatistics(
                count: first.count, weight: total.weight, mean: mean[q], standardDeviation: (spread[q] / total.weight).squareRoot(),
                minimum: OrderKey.value(of: s.minimumKey), maximum: OrderKey.value(of: s.maximumKey), median: s.value(0),
                percentiles: percentiles.enumerated().map { .init(percentile: $1, value: s.value($0 + 1)) },
                meanStandardError: meanSE, medianStandardError: medianSE)
        }
        return RegionMeasurement(region: name, channels: channels, clippedPixels: first.clipped, negativePixels: first.negative,
                                 pixels: first.count)
    }
}

extension RegionStatistics {
    /// R, G, B of pixel `i` of interleaved RGB `p`, widened to `Double`, and Y computed from them.
    @inline(__always) static func pixelValues(_ p: UnsafeBufferPointer<Float>, _ i: Int) -> SIMD4<Double> {
        let rgb = SIMD3(Double(p[3 * i]), Double(p[3 * i + 1]), Double(p[3 * i + 2]))
        return SIMD4(rgb, (rgb * Rec2020.luminanceWeights).sum())
    }

    /// The refinements of R, G, B and Y held apart, so that the hot loop touches no array.
    struct Refinements {
        let r: ExactSelector.Refinement, g: ExactSelector.Refinement, b: ExactSelector.Refinement, y: ExactSelector.Refinement
        init(_ all: [ExactSelector.Refinement]) { (r, g, b, y) = (all[0], all[1], all[2], all[3]) }

        @inline(__always) func add(_ v: SIMD4<Double>, weight: UInt64) {
            r.add(OrderKey.of(v.x), weight: weight)
            g.add(OrderKey.of(v.y), weight: weight)
            b.add(OrderKey.of(v.z), weight: weight)
            y.add(OrderKey.of(v.w), weight: weight)
        }
    }

    /// Rows and columns between sampled pixels when predicting where the quantiles fall.
    static let sampleStride = (rows: 16, columns: 4)

    /// For each quantity, the top-16-bit key bins where the quantiles at `fractions` are
    /// likely to fall, from every 16th row and 4th column of the selection, so that the first
    /// pass bins them finer (`ExactSelector.predictBins`). A wrong guess costs only time.
    static func predictedBins(_ image: SceneLinearImage, selection: PixelSelection, fractions: [Double]) -> [[Int]] {
        var keys: [[UInt64]] = Array(repeating: [], count: 4)
        image.pixels.samples.withUnsafeBufferPointer { p in
            for y in stride(from: selection.bounds.top, to: selection.bounds.bottom, by: sampleStride.rows) {
                for x in stride(from: selection.bounds.left, to: selection.bounds.right, by: sampleStride.columns) {
                    let i = y * selection.width + x
                    if let w = selection.weights, w[i] <= 0 { continue }
                    let v = pixelValues(p, i)
                    for q in 0..<4 { keys[q].append(OrderKey.of(v[q])) }
                }
            }
        }
        return keys.map { ExactSelector.predictBins(sample: $0.sorted(), fractions: fractions,
                                                    sampleStep: sampleStride.rows * sampleStride.columns) }
    }
}

extension PixelSelection {
    /// Further passes over the selection until every selector has all its keys; in each,
    /// `add` gets a refinement per selector (one set per worker) and a block of rows.
    func refine(_ selectors: inout [ExactSelector],
                _ add: @Sendable (_ refinements: [ExactSelector.Refinement], _ rows: Range<Int>) -> Void) {
        while selectors.contains(where: { !$0.isResolved }) {
            let snapshot = selectors
            let passes = reduce({ snapshot.map { $0.nextPass() } }, merge: { a, b in for k in a.indices { a[k].merge(b[k]) } }) { a, _, rows in
                add(a, rows)
            }
            for k in selectors.indices { selectors[k].finish(passes[k]) }
        }
    }

    /// Calls `body` with the index and weight of every selected pixel (weight > 0) of `rows`.
    @inline(__always) func forEachPixel(rows: Range<Int>, _ body: (_ index: Int, _ weight: Float) -> Void) {
        if let weights {
            weights.withUnsafeBufferPointer { w in
                for y in rows {
                    for i in (y * width + bounds.left)..<(y * width + bounds.right) where w[i] > 0 { body(i, w[i]) }
                }
            }
        } else {
            for y in rows {
                for i in (y * width + bounds.left)..<(y * width + bounds.right) { body(i, 1) }
            }
        }
    }
}
