import Foundation
import ImageCore

/// What to measure in one region of an image.
public struct RegionRequest: Sendable {
    public var name: String
    public var selection: PixelSelection
    /// Statistics (`RegionMeasurement`) wanted; false for a histogram alone.
    public var statistics = true
    /// Extra percentiles (0…100) besides the median.
    public var percentiles: [Double] = []
    public var histogram: HistogramOptions?
    /// Per-pixel gains for the noise sums (see `NoiseModel.pixelGains`), row-major over the image.
    public var pixelGains: [Float]?

    public init(name: String, selection: PixelSelection, statistics: Bool = true, percentiles: [Double] = [],
                histogram: HistogramOptions? = nil, pixelGains: [Float]? = nil) {
        self.name = name
        self.selection = selection
        self.statistics = statistics
        self.percentiles = percentiles
        self.histogram = histogram
        self.pixelGains = pixelGains
    }
}

/// What was measured in one region.
public struct RegionResult: Sendable {
    public var measurement: RegionMeasurement?
    public var histogram: Histogram?
}

/// Measurements of any number of regions of an image in a few passes over its values,
/// without holding the image: each pass is a scan (`ImageScan`) whose patches go through
/// every region's accumulators on whichever thread delivers them. Pass 1 gives counts,
/// sums, extremes, clipping and the first histograms of the quantiles; pass 2 the spread
/// about the mean, a histogram's bins and the values near each quantile; further passes
/// (rare) resolve quantiles whose bins held very many values. Floating-point sums are formed
/// per patch and added in the order of the patches' positions, so results do not depend on
/// the number of threads or the order patches arrive in.
public enum ImageMeasurement {
    /// Measures `requests` over the image `scan` passes over.
    /// - Parameter noise: called once after the first pass (when a DNG's provenance is known),
    ///   for the standard errors.
    public static func measure(_ requests: [RegionRequest], noise: () -> NoiseModel?, scan: ImageScan) throws -> [RegionResult] {
        try measure({ _, _ in requests }, noise: noise, scan: scan)
    }

    /// Measures the regions `requests` makes for the image's width and height (known once
    /// the first pass has begun) over the image `scan` passes over.
    /// - Throws: what `requests` or the scan throws.
    public static func measure(_ requests: @escaping @Sendable (_ width: Int, _ height: Int) throws -> [RegionRequest], noise: () -> NoiseModel?,
                               scan: ImageScan) throws -> [RegionResult] {
        // Pass 1 (its regions are made once the size is known, before the first patch).
        // Safe because set up once in prepare, before any patch, then only read.
        final class Setup: @unchecked Sendable {
            var plans: [RegionPlan] = []
            var pool: AccumulatorPool<PassOne>?
        }
        let setup = Setup()
        try scan.pass({ width, height in
            let plans = try requests(width, height).map(RegionPlan.init)
            setup.plans = plans
            setup.pool = AccumulatorPool { PassOne(plans) }
        }) { patch in
            let plans = setup.plans
            setup.pool!.with { acc in
                for (k, plan) in plans.enumerated() {
                    guard let part = patch.clipped(to: plan.selection.bounds) else { continue }
                    plan.firstPass(part, stats: acc.stats[k], histogram: acc.histograms[k])
                }
            }
        }
        let plans = setup.plans
        let first = PassOne.merged(setup.pool?.all ?? [], plans)
        var states = plans.indices.map { RegionState(plans[$0], stats: first.stats[$0], histogram: first.histograms[$0]) }

        // Pass 2: spread, histogram bins, first refinement; then further refinements.
        var pass = 2
        while states.contains(where: { $0.needsPass(pass) }) {
            let snapshot = states
            let current = pass
            let pool = AccumulatorPool { LaterPass(snapshot, pass: current) }
            try scan.pass({ _, _ in }) { patch in
                pool.with { acc in
                    for (k, state) in snapshot.enumerated() where state.needsPass(current) {
                        guard let part = patch.clipped(to: state.plan.selection.bounds) else { continue }
                        state.laterPass(part, into: acc.regions[k], pass: current)
                    }
                }
            }
            let merged = LaterPass.merged(pool.all, snapshot, pass: pass)
            for k in states.indices where states[k].needsPass(pass) { states[k].finish(merged.regions[k], pass: pass) }
            pass += 1
        }
        let model = noise()
        return states.map { $0.result(noise: model) }
    }
}

/// Rec.2020 luminance, its weights read once (a hot loop makes one before it starts rather
/// than reading the global weights per pixel).
struct Luminance {
    let weights = Rec2020.luminanceWeights
    let floatWeights = SIMD3<Float>(Rec2020.luminanceWeights)

    /// Of `Float` R, G, B computed in `Double` (the statistics' Y).
    @inline(__always) func double(_ r: Float, _ g: Float, _ b: Float) -> Double {
        (SIMD3(Double(r), Double(g), Double(b)) * weights).sum()
    }

    /// In `Float` (the histogram's Y).
    @inline(__always) func float(_ rgb: SIMD3<Float>) -> Float { (rgb * floatWeights).sum() }
}

/// A region's request with what every pass reads.
struct RegionPlan: Sendable {
    let name: String
    let selection: PixelSelection
    let statistics: Bool
    let percentiles: [Double]
    let fractions: [Double]
    let histogram: HistogramOptions?
    let gains: [Float]?
    let weighted: Bool
    /// Histogram bins the first pass can count (given range, or automatic log2), else nil.
    let earlyHistogram: EarlyHistogram?

    init(_ r: RegionRequest) {
        name = r.name
        selection = r.selection
        statistics = r.statistics
        percentiles = r.percentiles
        fractions = [0.5] + r.percentiles.map { $0 / 100 }
        histogram = r.histogram
        gains = r.pixelGains
        weighted = r.selection.weights != nil || r.pixelGains != nil
        earlyHistogram = r.histogram.flatMap(EarlyHistogram.init)
    }

    var automaticLog: Bool { histogram.map { $0.range == nil && $0.scale == .log2 } ?? false }

    /// Calls `body` for every row of `patch` with the row's values, clip bytes and the
    /// index of its first pixel in the image.
    @inline(__always) func forEachRow(_ patch: ImagePatch,
                                      _ body: (_ values: UnsafePointer<Float>, _ mask: UnsafePointer<UInt8>?, _ index: Int, _ n: Int) -> Void) {
        let n = patch.rect.width
        for y in patch.rect.top..<patch.rect.bottom {
            let offset = (y - patch.rect.top) * patch.rowStride
            body(patch.values + 3 * offset, patch.mask.map { $0 + offset }, y * selection.width + patch.rect.left, n)
        }
    }

    // MARK: pass 1

    func firstPass(_ patch: ImagePatch, stats: StatsFirst?, histogram: HistogramFirst?) {
        if let stats { weighted ? firstWeighted(patch, stats) : firstUnweighted(patch, stats) }
        if let histogram { firstHistogram(patch, histogram) }
    }

    private func firstUnweighted(_ patch: ImagePatch, _ a: StatsFirst) {
        let luminance = Luminance()
        var sum = SIMD4<Double>()
        var extremes = KeyExtremes()
        var clipped = 0, negative = 0
        var clippedRange = ClippedRange()
        let k0 = a.keys[0], k1 = a.keys[1], k2 = a.keys[2], k3 = a.keys[3]
        var parity = ParitySums()
        forEachRow(patch) { p, mask, index, n in
            var row = SIMD4<Double>(), even = SIMD4<Double>()
            for x in 0..<n {
                let r = p[3 * x], g = p[3 * x + 1], b = p[3 * x + 2]
                let y = luminance.double(r, g, b)
                let key = extremes.keys(r, g, b, y)
                k0.add(key.x)
                k1.add(key.y)
                k2.add(key.z)
                k3.add(key.w)
                row += SIMD4(Double(r), Double(g), Double(b), y)
                if min(r, g, b) < 0 { negative += 1 }
            }
            for x in stride(from: (patch.rect.left & 1), to: n, by: 2) {
                even += SIMD4(Double(p[3 * x]), Double(p[3 * x + 1]), Double(p[3 * x + 2]), 1)
            }
            sum += row
            parity.addRow(y: index / selection.width, even: even, all: SIMD4(row.x, row.y, row.z, Double(n)))
            if let mask {
                for x in 0..<n where mask[x] != 0 {
                    clipped += 1
                    clippedRange.add(p[3 * x], p[3 * x + 1], p[3 * x + 2], luminance)
                }
            }
        }
        let count = patch.rect.width * patch.rect.height
        var sums = BlockSums()
        sums.weight = Double(count)
        sums.sum = sum
        sums.noise = SIMD4(sum.x, sum.y, sum.z, Double(count))
        sums.parity = parity
        a.record(patch, sums: sums, count: count, clipped: clipped, negative: negative, extremes: extremes, clippedRange: clippedRange)
    }

    private func firstWeighted(_ patch: ImagePatch, _ a: StatsFirst) {
        let luminance = Luminance()
        var sums = BlockSums()
        var extremes = KeyExtremes()
        var count = 0, clipped = 0, negative = 0
        var clippedRange = ClippedRange()
        let k0 = a.keys[0], k1 = a.keys[1], k2 = a.keys[2], k3 = a.keys[3]
        let weights = selection.weights, gains = self.gains, width = selection.width
        forEachRow(patch) { p, mask, index, n in
            for x in 0..<n {
                let w = weights?[index + x] ?? 1
                guard w > 0 else { continue }
                let r = p[3 * x], g = p[3 * x + 1], b = p[3 * x + 2]
                let y = luminance.double(r, g, b)
                let v = SIMD4(Double(r), Double(g), Double(b), y)
                let weight = Double(w), fixed = FixedWeight.of(w)
                let key = extremes.keys(r, g, b, y)
                k0.add(key.x, weight: fixed)
                k1.add(key.y, weight: fixed)
                k2.add(key.z, weight: fixed)
                k3.add(key.w, weight: fixed)
                sums.sum += v * weight
                sums.weight += weight
                sums.parity.sums[((index / width) & 1) * 2 + (((index + x) % width) & 1)] += SIMD4(v.x, v.y, v.z, 1) * weight
                let rgb = SIMD3(v.x, v.y, v.z)
                if let gains {
                    let gain = Double(gains[index + x]), w2 = weight * weight
                    sums.noise += SIMD4(rgb * (w2 * gain), w2 * gain * gain)
                } else {
                    sums.noise += SIMD4(rgb, 1) * (weight * weight)
                }
                if let mask, mask[x] != 0 {
                    clipped += 1
                    clippedRange.add(r, g, b, luminance)
                }
                if min(r, g, b) < 0 { negative += 1 }
                count += 1
            }
        }
        guard count > 0 else { return }
        a.record(patch, sums: sums, count: count, clipped: clipped, negative: negative, extremes: extremes, clippedRange: clippedRange)
    }

    private func firstHistogram(_ patch: ImagePatch, _ a: HistogramFirst) {
        let luminance = Luminance()
        let weights = selection.weights, automatic = automaticLog
        var low = UInt64.max, high = UInt64(0), maximum = a.maximum
        var pixels = 0, clipped = 0, positive = 0
        func scan(_ counter: EdgeTable.Counter?) {
            forEachRow(patch) { p, mask, index, n in
                for x in 0..<n {
                    if let weights, !(weights[index + x] > 0) { continue }
                    pixels += 1
                    if let mask, mask[x] != 0 {
                        clipped += 1
                        continue
                    }
                    let rgb = SIMD3(p[3 * x], p[3 * x + 1], p[3 * x + 2])
                    let y = luminance.float(rgb)
                    let v = SIMD4(rgb, y)
                    maximum = max(maximum, v.max())
                    counter?.add(v)
                    guard automatic, y > 0 else { continue }
                    positive += 1
                    a.keys.add(FloatKey.of(y))
                    let key = OrderKey.of(Double(y))
                    low = min(low, key)
                    high = max(high, key)
                }
            }
        }
        if let early = earlyHistogram {
            early.table.withCounter(counts: a.slots.baseAddress!, slots: early.slotCount, scan)
        } else {
            scan(nil)
        }
        if positive > 0 { a.keys.note(minimum: low, maximum: high) }
        a.pixels += pixels
        a.clipped += clipped
        if patch.mask == nil { a.unmasked += pixels }
        a.positive += positive
        a.maximum = maximum
    }
}

/// The extremes of the keys of a patch's pixels.
struct KeyExtremes {
    var low = SIMD4<UInt32>(repeating: .max), high = SIMD4<UInt32>(repeating: 0)
    var lowY = UInt64.max, highY = UInt64(0)

    /// The `Float` keys of a pixel's R, G, B and Y, taken into the extremes (Y's by its
    /// 64-bit key, since its `Double` differs from its nearest `Float`).
    @inline(__always) mutating func keys(_ r: Float, _ g: Float, _ b: Float, _ y: Double) -> SIMD4<UInt32> {
        let key = SIMD4(FloatKey.of(r), FloatKey.of(g), FloatKey.of(b), FloatKey.of(y))
        low = pointwiseMin(low, key)
        high = pointwiseMax(high, key)
        let ky = OrderKey.of(y)
        lowY = min(lowY, ky)
        highY = max(highY, ky)
        return key
    }
}

/// The smallest and largest R, G, B and Y among clipped pixels.
struct ClippedRange: Sendable {
    var low = SIMD4<Double>(repeating: .infinity), high = SIMD4<Double>(repeating: -.infinity)

    @inline(__always) mutating func add(_ r: Float, _ g: Float, _ b: Float, _ luminance: Luminance) {
        let v = SIMD4(Double(r), Double(g), Double(b), luminance.double(r, g, b))
        low = pointwiseMin(low, v)
        high = pointwiseMax(high, v)
    }

    mutating func merge(_ other: ClippedRange) {
        low = pointwiseMin(low, other.low)
        high = pointwiseMax(high, other.high)
    }
}

/// Sums of one patch, added in patch order.
struct BlockSums: Sendable {
    var weight = 0.0
    var sum = SIMD4<Double>()
    /// Σ w² g · (R, G, B) and Σ w² g² (g = the pixel's gain, 1 without gains): the noise
    /// model turns them into Σ w² · variance.
    var noise = SIMD4<Double>()
    /// Σ w · (R, G, B, 1) over the pixels of each position in a 2×2 cell of the image (by
    /// (row & 1) · 2 + (column & 1)): with a CFA image's layout these give sums over its raw
    /// sites (`SiteSums`), which no demosaic can bias.
    var parity = ParitySums()
}

/// Σ w · (R, G, B, 1) by pixel position in a 2×2 cell: [even row even column, even odd,
/// odd even, odd odd].
public struct ParitySums: Sendable, Equatable {
    public var sums = [SIMD4<Double>](repeating: SIMD4(), count: 4)

    public init() {}

    static func += (a: inout ParitySums, b: ParitySums) { for k in 0..<4 { a.sums[k] += b.sums[k] } }

    /// Adds one row's pixels: `even` the sum over its even columns, `all` over every one.
    @inline(__always) mutating func addRow(y: Int, even: SIMD4<Double>, all: SIMD4<Double>) {
        let base = (y & 1) * 2
        sums[base] += even
        sums[base + 1] += all - even
    }
}

/// A patch's place in the order its sums are added in.
struct PatchKey: Comparable, Hashable, Sendable {
    let top: Int, left: Int
    init(_ patch: ImagePatch) { (top, left) = (patch.rect.top, patch.rect.left) }
    static func < (a: PatchKey, b: PatchKey) -> Bool { (a.top, a.left) < (b.top, b.left) }
}

/// One worker's first-pass statistics of one region.
// Safe because one instance per worker; merged after the workers are done.
final class StatsFirst: @unchecked Sendable {
    let keys: [ExactSelector.FirstPass]
    var blocks: [(PatchKey, BlockSums)] = []
    var count = 0, clipped = 0, negative = 0
    var clippedRange = ClippedRange()
    /// Pixels counted from patches without a clip mask: their clipping is not known.
    var unmasked = 0

    init(weighted: Bool) { keys = (0..<4).map { _ in ExactSelector.FirstPass(weighted: weighted) } }

    func record(_ patch: ImagePatch, sums: BlockSums, count: Int, clipped: Int, negative: Int, extremes e: KeyExtremes,
                clippedRange: ClippedRange) {
        blocks.append((PatchKey(patch), sums))
        self.clippedRange.merge(clippedRange)
        self.count += count
        self.clipped += clipped
        if patch.mask == nil { unmasked += count }
        self.negative += negative
        // R, G and B are `Float`s: their extremes' keys follow from their `Float` keys; Y's are kept.
        for q in 0..<3 {
            keys[q].note(minimum: OrderKey.of(Double(FloatKey.value(of: e.low[q]))), maximum: OrderKey.of(Double(FloatKey.value(of: e.high[q]))))
        }
        keys[3].note(minimum: e.lowY, maximum: e.highY)
    }

    func merge(_ other: StatsFirst) {
        for q in 0..<4 { keys[q].merge(other.keys[q]) }
        blocks += other.blocks
        count += other.count
        clipped += other.clipped
        clippedRange.merge(other.clippedRange)
        unmasked += other.unmasked
        negative += other.negative
    }
}

/// One worker's first-pass histogram counts of one region.
// Safe because one instance per worker; merged after the workers are done.
final class HistogramFirst: @unchecked Sendable {
    var pixels = 0, clipped = 0, positive = 0
    /// Pixels binned from patches without a clip mask: their clipping is not known.
    var unmasked = 0
    var maximum = -Float.infinity
    /// The positive luminances (automatic log2 range: its lower end is the 0.1th percentile's octave).
    let keys = ExactSelector.FirstPass(weighted: false)
    /// Per quantity, the slots (`EdgeTable.slot`) of the plan's `EarlyHistogram`; empty without one.
    let slots: UnsafeMutableBufferPointer<Int>

    init(_ early: EarlyHistogram?) {
        slots = .allocate(capacity: 4 * (early?.slotCount ?? 0))
        slots.initialize(repeating: 0)
    }

    deinit { slots.deallocate() }

    func merge(_ other: HistogramFirst) {
        pixels += other.pixels
        clipped += other.clipped
        unmasked += other.unmasked
        positive += other.positive
        maximum = max(maximum, other.maximum)
        keys.merge(other.keys)
        for i in slots.indices { slots[i] += other.slots[i] }
    }
}

/// Histogram bins counted in the first pass, so that a histogram needs no second pass: the
/// final bins when the range is given; for an automatic log2 range, bins of the same width
/// on a lattice from −40 EV (the lowest automatic start) to 130 EV (past every `Float`), of
/// which the final bins are a run once the range is known (`counts`).
struct EarlyHistogram: Sendable {
    /// The bins counted: the final ones (a given range), or the lattice's.
    let edges: (range: ClosedRange<Double>, bins: Int, width: Double, table: EdgeTable)
    /// The lattice's lower end and bins per stop; nil when `edges` are the final ones.
    let lattice: (lower: Int, binsPerStop: Int)?
    var table: EdgeTable { edges.table }
    var slotCount: Int { table.thresholds.count + 1 + 4 }

    static let latticeRange = -40...130

    init?(_ options: HistogramOptions) {
        if let range = options.range {
            edges = RegionState.histogramEdges(options, range: range)
            lattice = nil
        } else if options.scale == .log2, (1...64).contains(options.binsPerStop) {
            let range = Self.latticeRange
            edges = RegionState.histogramEdges(options, range: Double(range.lowerBound)...Double(range.upperBound))
            lattice = (range.lowerBound, options.binsPerStop)
        } else {
            return nil
        }
    }

    /// The smallest value of bin `m` of `table`.
    private func start(_ m: Int) -> Float { m == 0 ? table.lowest : table.thresholds[m - 1] }

    /// The slot totals (`EdgeTable.slot` order, per quantity) of the final bins `final`,
    /// made from the first pass's `slots`; nil when they cannot be told from them exactly
    /// and a second pass must count. Lattice bins are taken only where every final bin
    /// starts at the same `Float` as its lattice bin, no value reaches the lattice bin past
    /// the last (so none is above, or equal to, the range's upper end), and, when the lattice
    /// below the range is summed, its first bin is empty (where a NaN would be).
    func counts(final: (range: ClosedRange<Double>, bins: Int, width: Double, table: EdgeTable), maximum: Float,
                slots: UnsafeMutableBufferPointer<Int>) -> [Int]? {
        let finalSlots = final.bins + 4
        guard let lattice else { return Array(slots) }
        let first = (Int(final.range.lowerBound) - lattice.lower) * lattice.binsPerStop
        guard Double(Int(final.range.lowerBound)) == final.range.lowerBound, first >= 0,
              first + final.bins + 1 <= slotCount - 4,
              final.table.lowest == start(first),
              (1..<final.bins).allSatisfy({ final.table.thresholds[$0 - 1] == start(first + $0) }),
              maximum < start(first + final.bins) else { return nil }
        var out = [Int](repeating: 0, count: 4 * finalSlots)
        for q in 0..<4 {
            let from = q * slotCount, to = q * finalSlots
            if first > 0 && slots[from + 4] != 0 { return nil }
            out[to] = slots[from]          // zero
            out[to + 1] = slots[from + 1]  // negative
            out[to + 2] = slots[from + 2] + (0..<first).reduce(0) { $0 + slots[from + 4 + $1] }  // below
            out[to + 3] = slots[from + 3]  // above (none: checked)
            for j in 0..<final.bins { out[to + 4 + j] = slots[from + 4 + first + j] }
        }
        return out
    }
}

/// One worker's first-pass accumulators, per region.
// Safe because one instance per worker; merged after the workers are done.
final class PassOne: @unchecked Sendable {
    let stats: [StatsFirst?]
    let histograms: [HistogramFirst?]

    init(_ plans: [RegionPlan]) {
        stats = plans.map { $0.statistics ? StatsFirst(weighted: $0.weighted) : nil }
        histograms = plans.map { $0.histogram != nil ? HistogramFirst($0.earlyHistogram) : nil }
    }

    /// The workers' accumulators added into the first one's (whose storage is already there).
    static func merged(_ all: [PassOne], _ plans: [RegionPlan]) -> PassOne {
        guard let out = all.first else { return PassOne(plans) }
        for a in all.dropFirst() {
            for k in plans.indices {
                if let s = a.stats[k] { out.stats[k]!.merge(s) }
                if let h = a.histograms[k] { out.histograms[k]!.merge(h) }
            }
        }
        return out
    }
}

/// One worker's accumulators of a later pass, per region.
// Safe because one instance per worker; merged after the workers are done.
final class LaterPass: @unchecked Sendable {
    // Safe because owned by its worker's LaterPass.
    final class Region: @unchecked Sendable {
        var spread: [(PatchKey, SIMD4<Double>)] = []
        let refinements: [ExactSelector.Refinement]?
        var slots: [Int]

        init(_ state: RegionState, pass: Int) {
            refinements = state.selectors.contains(where: { !$0.isResolved }) ? state.selectors.map { $0.nextPass() } : nil
            slots = pass == 2 && state.edges != nil && !state.histogramCounted ? [Int](repeating: 0, count: 4 * state.slotCount) : []
        }

        func merge(_ other: Region) {
            spread += other.spread
            if let r = refinements { for q in 0..<4 { r[q].merge(other.refinements![q]) } }
            for i in slots.indices { slots[i] += other.slots[i] }
        }
    }

    let regions: [Region]

    init(_ states: [RegionState], pass: Int) { regions = states.map { Region($0, pass: pass) } }

    /// The workers' accumulators added into the first one's (whose collected values then
    /// stay where they are; each has room for every value of its groups).
    static func merged(_ all: [LaterPass], _ states: [RegionState], pass: Int) -> LaterPass {
        guard let out = all.first else { return LaterPass(states, pass: pass) }
        for a in all.dropFirst() { for k in states.indices { out.regions[k].merge(a.regions[k]) } }
        return out
    }
}

/// A region between passes: what pass 1 found and the selectors still refining.
struct RegionState: Sendable {
    let plan: RegionPlan
    let first: StatsFirst?
    let histogramFirst: HistogramFirst?
    var selectors: [ExactSelector] = []
    var total = BlockSums()
    var mean = SIMD4<Double>()
    var spread = SIMD4<Double>()
    /// The histogram's range, bins and edge table once pass 1 is done.
    var edges: (range: ClosedRange<Double>, bins: Int, width: Double, table: EdgeTable)?
    var slotTotals: [Int] = []
    /// The histogram's bins were counted in pass 1 (`EarlyHistogram`).
    var histogramCounted = false
    var slotCount: Int { (edges?.bins ?? 0) + 4 }

    init(_ plan: RegionPlan, stats: StatsFirst?, histogram: HistogramFirst?) {
        self.plan = plan
        first = stats
        histogramFirst = histogram
        if let stats {
            for (_, s) in stats.blocks.sorted(by: { $0.0 < $1.0 }) {
                total.weight += s.weight
                total.sum += s.sum
                total.noise += s.noise
                total.parity += s.parity
            }
            mean = total.sum / total.weight
            selectors = (0..<4).map { q in
                var s = ExactSelector(targets: plan.fractions.map { $0 * total.weight }, floatValues: q < 3)
                s.finishFirstPass(stats.keys[q])
                return s
            }
        }
        if let options = plan.histogram, let h = histogram {
            // A given range's bins are those the first pass counted.
            let e = plan.earlyHistogram.flatMap { $0.lattice == nil ? $0.edges : nil } ?? Self.histogramRange(options, h, early: plan.earlyHistogram)
            edges = e
            if let early = plan.earlyHistogram, let counts = early.counts(final: e, maximum: h.maximum, slots: h.slots) {
                slotTotals = counts
                histogramCounted = true
            }
        }
    }

    /// The range and bins of a histogram: given, or automatic (log2: whole stops from the
    /// lowest octave holding the 0.1th percentile of the positive values of R, G, B or Y —
    /// of Y alone without the first pass's lattice (`early`) — to the largest value of any of
    /// them; linear: 0 to the maximum).
    static func histogramRange(_ options: HistogramOptions, _ first: HistogramFirst, early: EarlyHistogram? = nil)
        -> (range: ClosedRange<Double>, bins: Int, width: Double, table: EdgeTable) {
        var range: ClosedRange<Double>
        if let r = options.range {
            range = r
        } else if options.scale == .log2 {
            if first.positive == 0 {
                range = -16...1
            } else {
                // The value at index ⌊(n − 1) · 0.001⌋ of the sorted positive luminances: only
                // its octave matters (the range starts at a whole stop), and every value of a
                // first-pass bin has the same exponent.
                var selector = ExactSelector(targets: [Double(Int(Double(first.positive - 1) * 0.001) + 1)])
                selector.finishFirstPass(first.keys)
                let low: Double
                if let bin = selector.firstBins[0] {
                    low = log2(Double(FloatKey.value(of: UInt32(bin) << 16)))
                } else {
                    low = log2(selector.value(0))
                }
                // Every plotted channel inside the range, not only Y.
                let lowest = min(low.rounded(.down), early?.lowestOctave(slots: first.slots).map(Double.init) ?? .infinity)
                let largest = first.maximum > 0 && first.maximum.isFinite ? log2(Double(first.maximum)) : 0
                let high = max(log2(OrderKey.value(of: selector.maximumKey)), largest, 0)
                range = max(-40, lowest)...(high.rounded(.up) + (high.rounded(.up) == high ? 1 : 0))
            }
        } else {
            range = 0...max(1e-12, first.pixels > first.clipped ? Double(first.maximum) : 1)
        }
        return histogramEdges(options, range: range)
    }

    /// The bins and edge table of a histogram over `range`.
    static func histogramEdges(_ options: HistogramOptions, range: ClosedRange<Double>)
        -> (range: ClosedRange<Double>, bins: Int, width: Double, table: EdgeTable) {
        var range = range
        if range.upperBound <= range.lowerBound { range = range.lowerBound...(range.lowerBound + 1) }
        let bins = options.scale == .log2
            ? max(1, Int(((range.upperBound - range.lowerBound) * Double(options.binsPerStop)).rounded()))
            : max(1, options.linearBins)
        let width = (range.upperBound - range.lowerBound) / Double(bins)
        return (range, bins, width, EdgeTable(scale: options.scale, range: range, bins: bins, width: width))
    }

    func needsPass(_ pass: Int) -> Bool {
        if pass == 2 { return first != nil || (edges != nil && !histogramCounted) }
        return selectors.contains { !$0.isResolved }
    }

    // MARK: later passes

    func laterPass(_ patch: ImagePatch, into a: LaterPass.Region, pass: Int) {
        let spreadWanted = pass == 2 && first != nil
        if spreadWanted || a.refinements != nil {
            let spread = refine(patch, spread: spreadWanted, refinements: a.refinements)
            if spreadWanted { a.spread.append((PatchKey(patch), spread)) }
        }
        if pass == 2, let edges, !histogramCounted {
            let table = edges.table, slots = slotCount, weights = plan.selection.weights, luminance = Luminance()
            a.slots.withUnsafeMutableBufferPointer { c in
                table.withCounter(counts: c.baseAddress!, slots: slots) { counter in
                    plan.forEachRow(patch) { p, mask, index, n in
                        for x in 0..<n {
                            if let weights, !(weights[index + x] > 0) { continue }
                            if let mask, mask[x] != 0 { continue }
                            let rgb = SIMD3(p[3 * x], p[3 * x + 1], p[3 * x + 2])
                            counter.add(SIMD4(rgb, luminance.float(rgb)))
                        }
                    }
                }
            }
        }
    }

    /// The spread about the mean (Σ w (v − mean)², when `spread`) of a patch, and its values
    /// in the refinements' bins.
    private func refine(_ patch: ImagePatch, spread spreadWanted: Bool, refinements: [ExactSelector.Refinement]?) -> SIMD4<Double> {
        let luminance = Luminance()
        var spread = SIMD4<Double>()
        let mean = self.mean, weights = plan.selection.weights
        // The refinements held without reference counting in the loop (the array keeps them).
        let quad = refinements.map { r in (Unmanaged.passUnretained(r[0]), Unmanaged.passUnretained(r[1]),
                                            Unmanaged.passUnretained(r[2]), Unmanaged.passUnretained(r[3])) }
        withExtendedLifetime(refinements) {
            plan.forEachRow(patch) { p, _, index, n in
                for x in 0..<n {
                    let weight = weights?[index + x] ?? 1
                    guard weight > 0 else { continue }
                    let r = p[3 * x], g = p[3 * x + 1], b = p[3 * x + 2]
                    let lum = luminance.double(r, g, b)
                    if spreadWanted {
                        let d = SIMD4(Double(r), Double(g), Double(b), lum) - mean
                        spread += Double(weight) * d * d
                    }
                    if let quad {
                        let fixed = FixedWeight.of(weight)
                        quad.0._withUnsafeGuaranteedRef { $0.add(Double(r), key32: FloatKey.of(r), weight: fixed) }
                        quad.1._withUnsafeGuaranteedRef { $0.add(Double(g), key32: FloatKey.of(g), weight: fixed) }
                        quad.2._withUnsafeGuaranteedRef { $0.add(Double(b), key32: FloatKey.of(b), weight: fixed) }
                        quad.3._withUnsafeGuaranteedRef { $0.add(lum, key32: FloatKey.of(lum), weight: fixed) }
                    }
                }
            }
        }
        return spread
    }

    mutating func finish(_ a: LaterPass.Region, pass: Int) {
        if pass == 2 {
            for (_, s) in a.spread.sorted(by: { $0.0 < $1.0 }) { spread += s }
            if !histogramCounted { slotTotals = a.slots }
        }
        if let refinements = a.refinements {
            for q in 0..<4 where !selectors[q].isResolved { selectors[q].finish(refinements[q]) }
        }
    }

    // MARK: results

    func result(noise: NoiseModel?) -> RegionResult {
        var out = RegionResult()
        if let first {
            let kernel = noise.map { NoiseModel.Kernel($0) }
            var channels: [String: QuantityStatistics] = [:]
            for (q, quantity) in RegionStatistics.quantities.enumerated() {
                let s = selectors[q]
                var meanSE: Double?
                var medianSE: Double?
                if let kernel {
                    let v = kernel.regionVariance(weightedOutputs: SIMD3(total.noise.x, total.noise.y, total.noise.z), weightedGains: total.noise.w)
                    meanSE = max(SIMD4(v.rgb, v.y)[q], 0).squareRoot() / total.weight
                    medianSE = meanSE.map { $0 * (Double.pi / 2).squareRoot() }
                }
                var statistics = QuantityStatistics(
                    count: first.count, weight: total.weight, mean: mean[q], standardDeviation: (spread[q] / total.weight).squareRoot(),
                    minimum: OrderKey.value(of: s.minimumKey), maximum: OrderKey.value(of: s.maximumKey), median: s.value(0),
                    percentiles: plan.percentiles.enumerated().map { .init(percentile: $1, value: s.value($0 + 1)) },
                    meanStandardError: meanSE, medianStandardError: medianSE)
                if first.clipped > 0 {
                    statistics.clippedMinimum = first.clippedRange.low[q]
                    statistics.clippedMaximum = first.clippedRange.high[q]
                }
                channels[quantity] = statistics
            }
            var measurement = RegionMeasurement(region: plan.name, channels: channels,
                                                clippedPixels: first.unmasked > 0 ? nil : first.clipped,
                                                negativePixels: first.negative, pixels: first.count)
            measurement.paritySums = total.parity
            // A clip lowers the camera channels it hits: bounds from below until the image's
            // matrix says otherwise (`RegionMeasurement.assignKinds`).
            measurement.assignKinds(["R": .lowerBound, "G": .lowerBound, "B": .lowerBound, "Y": .lowerBound])
            out.measurement = measurement
        }
        if let options = plan.histogram, let h = histogramFirst, let edges {
            let slots = slotCount
            var counts: [String: [Int]] = [:], below: [String: Int] = [:], above: [String: Int] = [:]
            var zero: [String: Int] = [:], negative: [String: Int] = [:]
            for (q, name) in RegionStatistics.quantities.enumerated() {
                let base = q * slots
                counts[name] = Array(slotTotals[(base + 4)..<(base + slots)])
                zero[name] = slotTotals[base]
                negative[name] = slotTotals[base + 1]
                below[name] = slotTotals[base + 2]
                above[name] = slotTotals[base + 3]
            }
            out.histogram = Histogram(scale: options.scale, edges: (0...edges.bins).map { edges.range.lowerBound + Double($0) * edges.width },
                                      counts: counts, below: below, above: above, zero: zero, negative: negative,
                                      clipped: h.unmasked > 0 ? nil : h.clipped, pixels: h.pixels)
        }
        return out
    }
}
