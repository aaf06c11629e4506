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
    /// Pixels with a clipped camera channel (the same for every quantity), not binned; `nil`
    /// when the image carries no clip mask: then every pixel is binned and none is known to
    /// be clipped or unclipped. JSON: `null`.
    public var clipped: Int?
    /// Pixels of the region (weight > 0).
    public var pixels: Int

    /// Bins `image` (within `weights` > 0 when given).
    public static func compute(_ image: SceneLinearImage, weights: [Float]? = nil, options: HistogramOptions = HistogramOptions()) -> Histogram {
        let selection = weights.map {
            PixelSelection(width: image.width, height: image.height, bounds: PixelRect(width: image.width, height: image.height), weights: $0)
        } ?? .all(width: image.width, height: image.height)
        return compute(image, selection: selection, options: options)
    }

    /// Bins the pixels of `selection` in `image`, without sorting or a logarithm per value:
    /// a first pass counts the pixels and finds the automatic range (the octave of the 0.1th
    /// percentile of the positive luminances, and the maximum), and the second bins each
    /// value by comparing it with the bin edges mapped back to `Float` values (`EdgeTable`),
    /// which puts every value in the bin `log2` would (see `ImageMeasurement`).
    public static func compute(_ image: SceneLinearImage, selection: PixelSelection, options: HistogramOptions) -> Histogram {
        let request = RegionRequest(name: "", selection: selection, statistics: false, histogram: options)
        // An image in memory: the scan cannot fail.
        return try! ImageMeasurement.measure([request], noise: { nil }, scan: image.scan)[0].histogram!
    }

    enum CodingKeys: String, CodingKey { case scale, edges, counts, below, above, zero, negative, clipped, pixels }

    /// Writes `clipped` as `null` when unknown rather than leaving the key out.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(scale, forKey: .scale)
        try c.encode(edges, forKey: .edges)
        try c.encode(counts, forKey: .counts)
        try c.encode(below, forKey: .below)
        try c.encode(above, forKey: .above)
        try c.encode(zero, forKey: .zero)
        try c.encode(negative, forKey: .negative)
        try c.encode(clipped, forKey: .clipped)
        try c.encode(pixels, forKey: .pixels)
    }

    /// Total of every category for `quantity` (equals `pixels`).
    public func total(_ quantity: String) -> Int {
        (counts[quantity] ?? []).reduce(0, +) + (below[quantity] ?? 0) + (above[quantity] ?? 0) + (zero[quantity] ?? 0)
            + (negative[quantity] ?? 0) + (clipped ?? 0)
    }
}

/// Where a `Float` value goes in a histogram: the category or bin that the definition —
/// x = log2(v) (or v), below when x < lower bound, above when x > upper bound, else bin
/// ⌊(x − lower) / width⌋ (the last bin holding the upper bound) — gives it, found from the
/// value itself. Every bin edge is mapped back to the smallest `Float` at or past it, by
/// bisection over the ordered bit patterns of `Float` with the definition as the test, so a
/// value is placed by comparisons only, and always where the definition places it.
struct EdgeTable: Sendable {
    let log: Bool
    /// Smallest positive value (log2) or smallest value (linear) not below the range.
    let lowest: Float
    /// Smallest value above the range.
    let beyond: Float
    /// thresholds[k]: the smallest value of bin k + 1 (k = 0 ..< bins − 1).
    let thresholds: [Float]
    /// Per 16-bit `Float` key prefix (`FloatKey`, 128 prefixes per octave): the number of
    /// thresholds at or below the least value with that prefix, so that a value's bin is a
    /// lookup and a step past the few thresholds inside its prefix (at most one for log2
    /// bins of up to 64 per stop) instead of a search over all of them.
    let below: [UInt16]
    /// Per 16-bit `Float` key prefix: the slot of every value with that prefix, or
    /// `UInt16.max` where they do not all share one (a bin edge, the range's ends or zero
    /// lies inside the prefix; `slot` then decides). Empty when the slots do not fit.
    private(set) var prefixSlots: [UInt16] = []

    init(scale: HistogramOptions.Scale, range: ClosedRange<Double>, bins: Int, width: Double) {
        let log = scale == .log2
        self.log = log
        func x(_ v: Float) -> Double { log ? log2(Double(v)) : Double(v) }
        // The least value in (from, +∞] whose x satisfies `test` (monotone: false … true).
        func least(_ test: (Double) -> Bool) -> Float {
            let from: Float = log ? .leastNonzeroMagnitude : -.greatestFiniteMagnitude
            var lo = Self.ordinal(from), hi = Self.ordinal(.infinity)
            if test(x(from)) { return from }
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2
                if test(x(Self.float(mid))) { hi = mid } else { lo = mid }
            }
            return Self.float(hi)
        }
        lowest = least { $0 >= range.lowerBound }
        beyond = least { $0 > range.upperBound }
        thresholds = (1..<max(1, bins)).map { k in
            least { $0 > range.upperBound || ($0 >= range.lowerBound && min(bins - 1, Int(($0 - range.lowerBound) / width)) >= k) }
        }
        below = Self.prefixCounts(thresholds)
        prefixSlots = uniformSlots()
    }

    /// `prefixSlots`: a prefix's values share a slot when its least and greatest values have
    /// the same slot and no threshold lies above its least value within it (the categories
    /// and bins are runs of the key order, and zero is the least value of its prefix).
    private func uniformSlots() -> [UInt16] {
        guard !below.isEmpty, thresholds.count + 5 < Int(UInt16.max) else { return [] }
        var out = [UInt16](repeating: .max, count: 1 << 16)
        for prefix in 0..<(1 << 16) {
            let first = FloatKey.value(of: UInt32(prefix) << 16), last = FloatKey.value(of: UInt32(prefix) << 16 | 0xFFFF)
            let next = prefix + 1 < (1 << 16) ? Int(below[prefix + 1]) : thresholds.count
            let s = slot(first)
            if s == slot(last) && Int(below[prefix]) == next { out[prefix] = UInt16(s) }
        }
        return out
    }

    /// Counts the slots of R, G, B and Y (four runs of `slots` counters from `counts`),
    /// by the prefix table where the prefix decides a slot. Call `withCounter`.
    struct Counter {
        let table: EdgeTable
        let prefixSlots: UnsafePointer<UInt16>?
        let counts: UnsafeMutablePointer<Int>
        let slots: Int

        @inline(__always) func add(_ v: SIMD4<Float>) {
            add(v.x, 0)
            add(v.y, slots)
            add(v.z, 2 * slots)
            add(v.w, 3 * slots)
        }

        @inline(__always) private func add(_ v: Float, _ base: Int) {
            if let prefixSlots {
                let s = prefixSlots[Int(truncatingIfNeeded: FloatKey.of(v) >> 16)]
                if s != .max {
                    counts[base &+ Int(truncatingIfNeeded: s)] &+= 1
                    return
                }
            }
            counts[base &+ table.slot(v)] &+= 1
        }
    }

    /// Runs `body` with a `Counter` into `counts` (4 × `slots` counters).
    func withCounter<R>(counts: UnsafeMutablePointer<Int>, slots: Int, _ body: (Counter) -> R) -> R {
        prefixSlots.withUnsafeBufferPointer { p in
            body(Counter(table: self, prefixSlots: p.isEmpty ? nil : p.baseAddress, counts: counts, slots: slots))
        }
    }

    /// `below` for `thresholds` (ascending): one sweep over the prefixes (empty when there
    /// are too many thresholds to count in 16 bits; `slot` then searches).
    static func prefixCounts(_ thresholds: [Float]) -> [UInt16] {
        guard thresholds.count < Int(UInt16.max) else { return [] }
        var out = [UInt16](repeating: 0, count: 1 << 16)
        var k = 0
        for prefix in 0..<(1 << 16) {
            let start = UInt32(prefix) << 16
            // Thresholds whose key is below this prefix's first key, or equal to it.
            while k < thresholds.count && FloatKey.of(thresholds[k]) <= start { k += 1 }
            out[prefix] = UInt16(k)
        }
        return out
    }

    /// A position in the total order of finite and infinite `Float`s (−∞ … +∞).
    static func ordinal(_ v: Float) -> Int64 {
        let bits = Int64(v.bitPattern)
        return v.sign == .minus ? -(bits & 0x7FFF_FFFF) : bits
    }

    static func float(_ n: Int64) -> Float {
        n < 0 ? -Float(bitPattern: UInt32(-n)) : Float(bitPattern: UInt32(n))
    }

    /// The slot of `v`: 0 zero, 1 negative (log2), 2 below, 3 above, 4 + k bin k.
    @inline(__always) func slot(_ v: Float) -> Int {
        if v == 0 { return 0 }
        if log && v < 0 { return 1 }
        if v < lowest { return 2 }
        if v >= beyond { return 3 }
        if !below.isEmpty && !v.isNaN {
            var k = Int(below[Int(FloatKey.of(v) >> 16)])
            while k < thresholds.count && thresholds[k] <= v { k += 1 }
            return 4 + k
        }
        return 4 + thresholdsAtOrBelow(v)
    }

    /// The number of thresholds ≤ `v`, by bisection (a NaN, which compares false with every
    /// threshold, gives 0: the first bin).
    func thresholdsAtOrBelow(_ v: Float) -> Int {
        var lo = 0, hi = thresholds.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if thresholds[mid] <= v { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}

extension EarlyHistogram {
    /// The lowest whole stop (EV) holding the 0.1th percentile — the value at index
    /// ⌊(n − 1) · 0.001⌋ of the n sorted positive values — of any of R, G, B and Y, read
    /// from the first pass's lattice counts `slots` (whole stops are runs of `binsPerStop`
    /// lattice bins; values below the lattice count as its lowest stop). Nil without a
    /// lattice, without positive values, or when the lattice's first bin holds anything
    /// (where a NaN lands, which is not a positive value: its count would shift the index).
    func lowestOctave(slots: UnsafeMutableBufferPointer<Int>) -> Int? {
        guard let lattice, (0..<4).allSatisfy({ slots[$0 * slotCount + 4] == 0 }) else { return nil }
        let bins = slotCount - 4
        var lowest: Int?
        for q in 0..<4 {
            let base = q * slotCount
            let positive = slots[base + 2] + slots[base + 3] + (0..<bins).reduce(0) { $0 + slots[base + 4 + $1] }
            guard positive > 0 else { continue }
            let index = Int(Double(positive - 1) * 0.001)
            var seen = slots[base + 2], bin = 0
            while bin < bins && seen <= index {
                seen += slots[base + 4 + bin]
                bin += 1
            }
            // `bin` is one past the lattice bin holding the value (0: below the lattice).
            let stop = lattice.lower + max(bin - 1, 0) / lattice.binsPerStop
            lowest = min(lowest ?? stop, stop)
        }
        return lowest
    }
}
