import Foundation
import Synchronization
import Testing
@testable import Analysis
import ImageCore
import TestSupport

/// The sort-free statistics and histograms against their definitions: sort the values, walk
/// the cumulative weight (statistics); take log2 of each value and divide (histograms).
@Suite struct ExactSelectionTests {
    static let percentiles: [Double] = [0, 0.1, 1, 5, 25, 50, 75, 95, 99, 99.9, 100]

    /// An image of `kind`: continuous values, heavy ties (a sixteenth-step ladder), a
    /// constant area with a few other values, or values dense in one first-pass bin (more
    /// than the selector collects at once: R among 16 neighbouring `Float`s, G among 4096, B
    /// one value), which takes the later histogram levels and the merging of equal keys.
    static func image(_ kind: String, width: Int, height: Int, seed: UInt64) -> SceneLinearImage {
        var rng = SeededGenerator(seed: seed)
        var samples = [Float](repeating: 0, count: width * height * 3)
        var mask = [UInt8](repeating: 0, count: width * height)
        for i in 0..<(width * height) {
            for c in 0..<3 {
                let u = Float(Double(rng.next() >> 11) / Double(1 << 53))
                switch kind {
                case "continuous": samples[3 * i + c] = u * u * 4 - 0.05
                case "ties": samples[3 * i + c] = Float(Int(u * 20)) / 16 - 0.125
                case "dense": samples[3 * i + c] = 0.5 + Float(c == 2 ? 0 : rng.next() % (c == 0 ? 16 : 4096)) * 0x1p-24
                default: samples[3 * i + c] = i % 997 == 0 ? u : 0.25
                }
            }
            if rng.next() % 50 == 0 { mask[i] = 1 }
            if rng.next() % 40 == 0 { samples[3 * i + 1] = -0.0 }
        }
        return SceneLinearImage(pixels: ImageBuffer(width: width, height: height, channels: 3, samples: samples), clipMask: mask,
                                encoding: .linearRec2020, exposure: .none, provenance: .synthetic("exact"))
    }

    /// The statistics by their definition: values and weights in pixel order, sorted.
    static func reference(_ image: SceneLinearImage, weights: [Float], percentiles: [Double])
        -> (values: [[Double]], stats: [QuantityStatistics], clipped: Int, negative: Int) {
        var values: [[Double]] = Array(repeating: [], count: 4), w: [Double] = [], isClipped: [Bool] = []
        var clipped = 0, negative = 0
        for i in 0..<(image.width * image.height) where weights[i] > 0 {
            let p = image.pixels.samples
            let rgb = SIMD3(Double(p[3 * i]), Double(p[3 * i + 1]), Double(p[3 * i + 2]))
            for (q, v) in [rgb.x, rgb.y, rgb.z, (rgb * Rec2020.luminanceWeights).sum()].enumerated() { values[q].append(v) }
            w.append(Double(weights[i]))
            if image.clipMask![i] != 0 { clipped += 1 }
            isClipped.append(image.clipMask![i] != 0)
            if rgb.min() < 0 { negative += 1 }
        }
        let stats = values.map { v -> QuantityStatistics in
            let total = w.reduce(0, +)
            let mean = zip(v, w).map { $0 * $1 }.reduce(0, +) / total
            let sd = (zip(v, w).map { $1 * ($0 - mean) * ($0 - mean) }.reduce(0, +) / total).squareRoot()
            let order = v.indices.sorted { v[$0] < v[$1] }
            func quantile(_ p: Double) -> Double {
                var cumulative = 0.0
                for i in order {
                    cumulative += w[i]
                    if cumulative >= p * total { return v[i] }
                }
                return v[order.last!]
            }
            // A quantile is a lower bound when a clipped pixel lies at or below it (its true value
            // is higher and could move it); the mean whenever a pixel is clipped.
            func kind(_ q: Double) -> ResultKind { v.indices.contains { isClipped[$0] && v[$0] <= q } ? .lowerBound : .value }
            var s = QuantityStatistics(count: v.count, weight: total, mean: mean, standardDeviation: sd, minimum: v[order.first!],
                                       maximum: v[order.last!], median: quantile(0.5),
                                       percentiles: percentiles.map { .init(percentile: $0, value: quantile($0 / 100), kind: kind(quantile($0 / 100))) },
                                       meanStandardError: nil, medianStandardError: nil)
            s.kind = clipped > 0 ? .lowerBound : .value
            s.medianKind = kind(s.median)
            s.minimumKind = kind(s.minimum)
            s.maximumKind = kind(s.maximum)
            s.standardDeviationKind = clipped > 0 ? .undetermined : .value
            return s
        }
        return (values, stats, clipped, negative)
    }

    static func close(_ a: Double, _ b: Double, _ tolerance: Double = Tolerance.regroupedSum) -> Bool {
        Tolerance.close(a, b, relative: tolerance)
    }

    /// Hard and fractional (dyadic, so that sums are exact either way) regions of every
    /// image kind: every order statistic equal to the definition's, bit for bit; mean and
    /// spread to 1e-12.
    @Test(arguments: ["continuous", "ties", "constant", "dense"])
    func statisticsEqualTheDefinition(kind: String) throws {
        let (width, height) = kind == "constant" ? (320, 260) : kind == "dense" ? (640, 480) : (97, 61)
        let image = Self.image(kind, width: width, height: height, seed: 11)
        var rng = SeededGenerator(seed: 5)
        let dyadic = (0..<(width * height)).map { _ in Float(rng.next() % 5) / 4 }
        let regions = [
            Region(name: "all", shape: .rectangle(PixelRect(width: width, height: height))),
            Region(name: "rect", shape: .rectangle(PixelRect(top: 3, left: 5, bottom: height - 7, right: width - 2))),
            Region(name: "poly", shape: .polygon([SIMD2(2, 1), SIMD2(Double(width) - 3, 9), SIMD2(40, Double(height) - 2)])),
            Region(name: "weights", shape: .weights(dyadic)),
        ]
        for region in regions {
            let m = try RegionStatistics.measure(image, region: region, percentiles: Self.percentiles)
            let ref = Self.reference(image, weights: try region.weights(width: width, height: height), percentiles: Self.percentiles)
            #expect(m.pixels == ref.values[0].count && m.clippedPixels == ref.clipped && m.negativePixels == ref.negative, "\(region.name)")
            for (q, name) in RegionStatistics.quantities.enumerated() {
                let got = try #require(m.channels[name]), want = ref.stats[q]
                #expect(got.count == want.count && got.weight == want.weight, "\(kind) \(region.name) \(name)")
                #expect(got.minimum == want.minimum && got.maximum == want.maximum && got.median == want.median,
                        "\(kind) \(region.name) \(name): \(got.minimum) \(got.median) \(got.maximum) vs \(want.minimum) \(want.median) \(want.maximum)")
                #expect(got.percentiles == want.percentiles, "\(kind) \(region.name) \(name)")
                #expect(got.kind == want.kind && got.medianKind == want.medianKind && got.minimumKind == want.minimumKind
                        && got.maximumKind == want.maximumKind && got.standardDeviationKind == want.standardDeviationKind,
                        "\(kind) \(region.name) \(name): kinds")
                #expect(Self.close(got.mean, want.mean) && Self.close(got.standardDeviation, want.standardDeviation, 1e-10),
                        "\(kind) \(region.name) \(name): \(got.mean) \(got.standardDeviation) vs \(want.mean) \(want.standardDeviation)")
            }
        }
    }

    /// The percentiles of a hard region are numpy's `inverted_cdf` percentiles of the same
    /// values, exactly (an independent implementation of the definition).
    @Test(.enabled(if: TestData.python != nil || TestRequirement.toolsRequired, "the Python test environment is needed"))
    func percentilesEqualNumpyInvertedCDF() throws {
        let image = Self.image("ties", width: 150, height: 90, seed: 3)
        let region = Region(name: "all", shape: .rectangle(PixelRect(width: 150, height: 90)))
        let m = try RegionStatistics.measure(image, region: region, percentiles: Self.percentiles)
        let ref = Self.reference(image, weights: try region.weights(width: 150, height: 90), percentiles: [])
        let dir = TestData.temporaryDirectory("numpy-percentiles")
        var paths: [String] = []
        for (q, values) in ref.values.enumerated() {
            let url = dir.appendingPathComponent("q\(q).f64")
            try values.withUnsafeBytes { Data($0) }.write(to: url)
            paths.append(url.path)
        }
        let script = """
            import sys, numpy as np
            p = [float(x) for x in sys.argv[1].split(",")]
            for path in sys.argv[2:]:
                v = np.fromfile(path, dtype="<f8")
                print(" ".join(repr(float(x)) for x in np.percentile(v, p, method="inverted_cdf")))
            """
        let result = try TestData.runPython(script, [Self.percentiles.map { String($0) }.joined(separator: ",")] + paths)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        try #require(lines.count == 4)
        for (q, name) in RegionStatistics.quantities.enumerated() {
            let numpy = lines[q].split(separator: " ").map { Double(String($0))! }
            let ours = m.channels[name]!.percentiles.map(\.value)
            #expect(ours == numpy, "\(name): \(ours) vs numpy \(numpy)")
            #expect(m.channels[name]!.median == numpy[Self.percentiles.firstIndex(of: 50)!])
        }
    }

    /// A selection with no pixel (possible through the library API) gives counts of 0 and NaN
    /// values, not a crash.
    @Test func emptySelection() {
        let image = Self.image("continuous", width: 20, height: 10, seed: 1)
        let none = PixelSelection(width: 20, height: 10, bounds: PixelRect(top: 0, left: 0, bottom: 10, right: 20),
                                  weights: [Float](repeating: 0, count: 200))
        let m = RegionStatistics.measure(image, selection: none, name: "none", percentiles: [50])
        #expect(m.pixels == 0 && m.channels["Y"]!.count == 0)
        #expect(m.channels["Y"]!.median.isNaN && m.channels["Y"]!.minimum.isNaN && m.channels["Y"]!.percentiles[0].value.isNaN)
        let h = Histogram.compute(image, selection: none, options: HistogramOptions())
        #expect(h.pixels == 0 && h.total("Y") == 0)
    }

    @Test func orderKeysSortLikeTheValues() {
        var rng = SeededGenerator(seed: 9)
        var values: [Double] = [0, -0.0, 1, -1, .infinity, -.infinity, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
                                .greatestFiniteMagnitude]
        for _ in 0..<2000 {
            let v = Double(bitPattern: rng.next())
            if !v.isNaN { values.append(v) }
        }
        let byValue = values.sorted()
        let byKey = values.sorted { OrderKey.of($0) < OrderKey.of($1) }
        #expect(byValue.map { $0 + 0 } == byKey.map { $0 + 0 })
        for v in values { #expect(OrderKey.value(of: OrderKey.of(v)) == v + 0) }
    }

    /// The histogram by its definition: log2 (or the value) of every unclipped value, then
    /// ⌊(x − low) / width⌋.
    static func referenceHistogram(_ image: SceneLinearImage, weights: [Float]?, options: HistogramOptions) -> Histogram {
        let lum = SIMD3<Float>(Float(Rec2020.luminanceWeights.x), Float(Rec2020.luminanceWeights.y), Float(Rec2020.luminanceWeights.z))
        var values: [[Float]] = Array(repeating: [], count: 4)
        var clipped = 0, pixels = 0
        let p = image.pixels.samples
        for i in 0..<(image.width * image.height) where (weights?[i] ?? 1) > 0 {
            pixels += 1
            if image.clipMask![i] != 0 { clipped += 1; continue }
            let rgb = SIMD3(p[3 * i], p[3 * i + 1], p[3 * i + 2])
            for (q, v) in [rgb.x, rgb.y, rgb.z, (rgb * lum).sum()].enumerated() { values[q].append(v) }
        }
        var range: ClosedRange<Double>
        if let r = options.range {
            range = r
        } else if options.scale == .log2 {
            // Every channel: from the lowest octave of their 0.1th percentiles to the largest value.
            let positive = values.map { $0.filter { $0 > 0 }.sorted() }
            let high = max(positive.compactMap { $0.last.map { log2(Double($0)) } }.max() ?? 0, 0)
            let lows = positive.filter { !$0.isEmpty }.map { log2(Double($0[Int(Double($0.count - 1) * 0.001)])).rounded(.down) }
            range = positive[3].isEmpty ? -16...1
                : max(-40, lows.min()!)...(high.rounded(.up) + (high.rounded(.up) == high ? 1 : 0))
        } else {
            range = 0...max(1e-12, Double(values.compactMap { $0.max() }.max() ?? 1))
        }
        let bins = options.scale == .log2
            ? max(1, Int(((range.upperBound - range.lowerBound) * Double(options.binsPerStop)).rounded())) : max(1, options.linearBins)
        let width = (range.upperBound - range.lowerBound) / Double(bins)
        var h = Histogram(scale: options.scale, edges: (0...bins).map { range.lowerBound + Double($0) * width }, counts: [:],
                          below: [:], above: [:], zero: [:], negative: [:], clipped: clipped, pixels: pixels)
        for (q, name) in RegionStatistics.quantities.enumerated() {
            var c = [Int](repeating: 0, count: bins)
            var b = 0, a = 0, z = 0, neg = 0
            for v in values[q] {
                if v == 0 { z += 1; continue }
                if v < 0 && options.scale == .log2 { neg += 1; continue }
                let x = options.scale == .log2 ? log2(Double(v)) : Double(v)
                if x < range.lowerBound { b += 1; continue }
                if x > range.upperBound { a += 1; continue }
                c[x.isNaN ? 0 : min(bins - 1, Int((x - range.lowerBound) / width))] += 1  // NaN: the first bin
            }
            (h.counts[name], h.below[name], h.above[name], h.zero[name], h.negative[name]) = (c, b, a, z, neg)
        }
        return h
    }

    /// Values on and next to bin edges (powers of two and their neighbours), ties, zeros,
    /// negatives and clipped pixels: every count equals the definition's.
    @Test(arguments: [HistogramOptions(), HistogramOptions(binsPerStop: 3), HistogramOptions(binsPerStop: 8, range: -3 ... -1),
                      HistogramOptions(scale: .linear, linearBins: 10), HistogramOptions(scale: .linear, linearBins: 7, range: 0.1...0.3)])
    func histogramEqualsTheDefinition(options: HistogramOptions) {
        var image = Self.image("continuous", width: 83, height: 47, seed: 21)
        var rng = SeededGenerator(seed: 4)
        for i in stride(from: 0, to: image.pixels.samples.count, by: 7) {
            let edge = Float(pow(2, Double(Int(rng.next() % 20) - 16) / 3))
            image.pixels.samples[i] = [edge, edge.nextUp, edge.nextDown, 0, -edge][Int(rng.next() % 5)]
        }
        let weights = (0..<(83 * 47)).map { _ in Float(rng.next() % 3) / 2 }
        for w in [nil, weights] {
            let got = Histogram.compute(image, weights: w, options: options)
            let want = Self.referenceHistogram(image, weights: w, options: options)
            #expect(got == want, "\(options) weights: \(w != nil)")
        }
    }

    /// A value's histogram bin from the table of key prefixes equals the bisection over the
    /// thresholds, for log2 and linear bins, at every threshold, its neighbours, random
    /// values of both signs, zeros, infinities and NaN.
    @Test func edgeTableLookupEqualsTheSearch() {
        var g = SeededGenerator(seed: 12)
        let tables = [
            EdgeTable(scale: .log2, range: -12...3, bins: 60, width: 0.25),
            EdgeTable(scale: .log2, range: -40...20, bins: 60 * 64, width: 1.0 / 64),
            EdgeTable(scale: .log2, range: -3...(-2), bins: 1, width: 1),
            EdgeTable(scale: .linear, range: 0...1.7, bins: 256, width: 1.7 / 256),
            EdgeTable(scale: .linear, range: -0.5...0.25, bins: 1000, width: 0.75 / 1000),
        ]
        for table in tables {
            #expect(!table.below.isEmpty)
            var values: [Float] = [0, -0, .infinity, -.infinity, .nan, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
                                   table.lowest, table.beyond, table.lowest.nextDown, table.beyond.nextDown]
            for t in table.thresholds { values += [t, t.nextUp, t.nextDown] }
            for _ in 0..<20_000 {
                let magnitude = Float(pow(2, Double.random(in: -45...25, using: &g)))
                values.append(Bool.random(using: &g) ? magnitude : -magnitude)
            }
            var mismatches = 0
            for v in values {
                var expected = 0
                if v == 0 { expected = 0 } else if table.log && v < 0 { expected = 1 } else if v < table.lowest { expected = 2 }
                else if v >= table.beyond { expected = 3 } else { expected = 4 + table.thresholdsAtOrBelow(v) }
                if table.slot(v) != expected { mismatches += 1 }
            }
            #expect(mismatches == 0, "\(table.log ? "log2" : "linear"), \(table.thresholds.count + 1) bins: \(mismatches) values")
            // The counter's prefix table puts every value in the slot `slot` gives.
            #expect(!table.prefixSlots.isEmpty)
            let slots = table.thresholds.count + 5
            var counts = [Int](repeating: 0, count: 4 * slots), direct = counts
            counts.withUnsafeMutableBufferPointer { c in
                table.withCounter(counts: c.baseAddress!, slots: slots) { counter in
                    for v in values { counter.add(SIMD4(v, -v, v * 0.75, v.nextUp)) }
                }
            }
            for v in values { for (q, u) in [v, -v, v * 0.75, v.nextUp].enumerated() { direct[q * slots + table.slot(u)] += 1 } }
            #expect(counts == direct, "\(table.log ? "log2" : "linear"), \(table.thresholds.count + 1) bins: the counter")
        }
    }

    /// Measures `requests` over `image`, counting the passes over it.
    static func measureCountingPasses(_ image: SceneLinearImage, _ requests: [RegionRequest]) throws -> ([RegionResult], Int) {
        let passes = Mutex(0)
        let scan = ImageScan { prepare, visit in
            passes.withLock { $0 += 1 }
            try image.scan.pass(prepare, visit)
        }
        let results = try ImageMeasurement.measure(requests, noise: { nil }, scan: scan)
        return (results, passes.withLock { $0 })
    }

    /// A log2 histogram (automatic range, or given) is counted in the first pass: bins on a
    /// lattice of whole stops, of which the automatic range takes a run. One pass, and the
    /// counts of the definition — also where the lattice cannot be used (a NaN below the
    /// range) and a second pass counts; a linear automatic range needs the maximum first.
    @Test func histogramsInOnePass() throws {
        var image = Self.image("continuous", width: 83, height: 47, seed: 8)
        var rng = SeededGenerator(seed: 9)
        for i in stride(from: 0, to: image.pixels.samples.count, by: 5) {
            let edge = Float(pow(2, Double(Int(rng.next() % 40) - 24) / 4))
            image.pixels.samples[i] = [edge, edge.nextUp, edge.nextDown, 0][Int(rng.next() % 4)]
        }
        let all = PixelSelection.all(width: image.width, height: image.height)
        let cases: [(HistogramOptions, Int)] = [(HistogramOptions(), 1), (HistogramOptions(binsPerStop: 16), 1),
                                                (HistogramOptions(binsPerStop: 3), 1), (HistogramOptions(binsPerStop: 2, range: -9 ... 0.5), 1),
                                                (HistogramOptions(scale: .linear, linearBins: 9), 2)]
        for (options, passes) in cases {
            let (results, counted) = try Self.measureCountingPasses(image, [RegionRequest(name: "", selection: all, statistics: false, histogram: options)])
            #expect(counted == passes, "\(options)")
            #expect(results[0].histogram == Self.referenceHistogram(image, weights: nil, options: options), "\(options)")
        }
        // A NaN counts in the first bin; on the lattice it would be taken for a value below the range.
        image.pixels.samples[4] = .nan
        let (results, counted) = try Self.measureCountingPasses(image, [RegionRequest(name: "", selection: all, statistics: false,
                                                                                      histogram: HistogramOptions())])
        #expect(counted == 2)
        #expect(results[0].histogram == Self.referenceHistogram(image, weights: nil, options: HistogramOptions()))
    }

    /// R, G and B are `Float`s, so a crowded first-pass bin is resolved by a histogram of all
    /// its 16 open bits in the second pass: statistics take two passes, Y (computed in
    /// `Double`) collected from crowded bins too, and equal the definition.
    @Test func floatQuantitiesResolveInOneLaterPass() throws {
        let (width, height) = (640, 480)
        var rng = SeededGenerator(seed: 2)
        var samples = [Float](repeating: 0, count: width * height * 3)
        for i in 0..<(width * height) {
            // R among 4096 neighbouring `Float`s of one bin; G, B spread.
            samples[3 * i] = 0.5 + Float(rng.next() % 4096) * 0x1p-24
            samples[3 * i + 1] = Float(rng.next() % 100_000) / 100_000
            samples[3 * i + 2] = 0.25 + Float(rng.next() % 7) * 0x1p-20
        }
        let image = SceneLinearImage(pixels: ImageBuffer(width: width, height: height, channels: 3, samples: samples),
                                     clipMask: [UInt8](repeating: 0, count: width * height), encoding: .linearRec2020,
                                     exposure: .none, provenance: .synthetic("dense"))
        let all = PixelSelection.all(width: width, height: height)
        let (results, passes) = try Self.measureCountingPasses(image, [RegionRequest(name: "", selection: all, percentiles: Self.percentiles)])
        #expect(passes == 2)
        let ref = Self.reference(image, weights: [Float](repeating: 1, count: width * height), percentiles: Self.percentiles)
        let m = try #require(results[0].measurement)
        for (q, name) in RegionStatistics.quantities.enumerated() {
            let got = try #require(m.channels[name])
            #expect(got.median == ref.stats[q].median && got.percentiles == ref.stats[q].percentiles, "\(name)")
        }
    }
}
