import ImageCore

/// Exact weighted order statistics without sorting the values.
///
/// The values are binned by the bits of their nearest `Float` (`FloatKey`, whose unsigned
/// order is the numeric order; rounding to `Float` never reverses two values, so a bin of
/// the `Float` key holds a contiguous run of the sorted values). A first pass builds a
/// histogram of the top 16 bits (sign, exponent and 7 mantissa bits: 128 bins per octave),
/// weighted by each value's weight in fixed point (`FixedWeight`, so the sums are integers:
/// exact, and the same in any order or thread split). The bin where the cumulative weight
/// crosses each target is then refined by later passes, each looking only at the values
/// inside the chosen bins. A bin with few enough values (`collectLimit`) has them collected
/// (as 64-bit `OrderKey`s of the `Double` values, so values that round to the same `Float`
/// are still told apart) and selected from. A larger bin gets a histogram of the rest of
/// its bits: of all 16 at once when the values are `Float`s (`floatValues`: a `Float` key
/// then names one value, so that histogram resolves the target in the same pass), else of
/// the next 12, then the last 4. So one later pass finds every key of `Float` values, and
/// typically of the others.
///
/// The value selected for a target t is the smallest value v (in sorted order) whose
/// cumulative weight `Σ_{u ≤ v} w(u)` reaches t: the inverted CDF, numpy's
/// `percentile(…, method="inverted_cdf")` when every weight is 1 and t = p·n.
public struct ExactSelector: Sendable {
    /// Bits of the `Float` key resolved by the first pass.
    static let firstBits = 16
    /// A chosen bin with at most this many values, or 1/64 of all values when that is more,
    /// is resolved by collecting them (8 bytes each: with nine targets in nine bins, at most
    /// 9 bytes per 8 values of the image): appending costs less than counting in a histogram
    /// larger than the caches.
    static let collectLimit = 1 << 18

    /// Cumulative weights to reach (in units of one full weight, i.e. fixed point / 2³²).
    public let targets: [Double]
    /// Every value is a `Float` (converted to `Double` exactly): values with one `Float` key
    /// are equal.
    public let floatValues: Bool
    /// The 64-bit key found for each target (nil until resolved).
    public private(set) var keys: [UInt64?]

    /// A bin being refined: the values whose `Float` key has `key >> shift == prefix`, the
    /// fixed-point weight of every value below them, their count, and the targets in them.
    struct Group: Sendable {
        var prefix: UInt32
        var shift: Int
        var before: UInt64
        var count: UInt64
        var targets: [Int]
        /// Bits of the histogram that splits the group further; 0: collect the values.
        var nextBits: Int

        /// A collecting group's number of values at which those of weight one are merged
        /// (sorted, equal keys added up): never, unless it has more than its limit (values
        /// with one `Float`).
        var compactAt: Int

        /// How a bin of `count` values with `shift` bits open is refined: collected (few
        /// enough, or all with one `Float`: their `Double`s differ only for values computed
        /// in `Double`, and equal keys are merged as they come), or by a histogram.
        static func nextBits(count: UInt64, shift: Int, floatValues: Bool, limit: Int) -> Int {
            if shift == 0 { return 0 }
            if count <= UInt64(limit) { return 0 }
            return floatValues ? shift : shift == 16 ? 12 : 4
        }
        var collect: Bool { nextBits == 0 }
    }

    private(set) var groups: [Group] = []
    /// The smallest and the largest 64-bit key seen (the largest also answers a target the
    /// total weight never reaches through rounding).
    public private(set) var minimumKey: UInt64 = .max
    public private(set) var maximumKey: UInt64 = 0
    private var started = false

    public init(targets: [Double], floatValues: Bool = false) {
        self.targets = targets
        self.floatValues = floatValues
        keys = Array(repeating: nil, count: targets.count)
    }

    /// True when every target has its key.
    public var isResolved: Bool { started && groups.isEmpty }

    /// The value of target `i` once resolved (NaN when there were no values).
    public func value(_ i: Int) -> Double { keys[i].map(OrderKey.value) ?? .nan }

    /// Most values a group collects (`collectLimit`, or more for a large image).
    private var limit = ExactSelector.collectLimit

    /// The first-pass bin target `i` fell in (before it is resolved further), nil when none.
    public private(set) var firstBins: [Int?] = []

    static func reached(_ cumulative: UInt64, _ target: Double) -> Bool {
        Double(cumulative) * 0x1p-32 >= target
    }

    // MARK: pass 1

    /// The first pass's accumulator: a count per top-16-bit bin of the `Float` key and, when
    /// the values have weights other than 1, a fixed-point weight per bin. One per worker; a
    /// class over raw storage so that the hot loop does no copy-on-write checks.
    // Safe because one instance per worker; merged after the workers are done.
    public final class FirstPass: @unchecked Sendable {
        static let bins = 1 << ExactSelector.firstBits
        let counts: UnsafeMutablePointer<UInt32>
        /// nil: every weight is one (`FixedWeight.one`).
        let weights: UnsafeMutablePointer<UInt64>?
        var minimumKey: UInt64 = .max
        var maximumKey: UInt64 = 0

        public init(weighted: Bool) {
            counts = .allocate(capacity: Self.bins)
            counts.initialize(repeating: 0, count: Self.bins)
            if weighted {
                let w = UnsafeMutablePointer<UInt64>.allocate(capacity: Self.bins)
                w.initialize(repeating: 0, count: Self.bins)
                weights = w
            } else {
                weights = nil
            }
        }

        deinit {
            counts.deallocate()
            weights?.deallocate()
        }

        /// Counts a value of weight one by its `Float` key (unweighted passes only).
        @inline(__always) public func add(_ key32: UInt32) {
            counts[Int(truncatingIfNeeded: key32 >> 16)] &+= 1
        }

        /// Counts a value of fixed-point weight `weight` (weighted passes only).
        @inline(__always) public func add(_ key32: UInt32, weight: UInt64) {
            let bin = Int(truncatingIfNeeded: key32 >> 16)
            counts[bin] &+= 1
            weights![bin] &+= weight
        }

        /// Records the smallest and largest 64-bit keys of a batch of `add`s.
        @inline(__always) public func note(minimum: UInt64, maximum: UInt64) {
            minimumKey = min(minimumKey, minimum)
            maximumKey = max(maximumKey, maximum)
        }

        public func merge(_ other: FirstPass) {
            for i in 0..<Self.bins { counts[i] &+= other.counts[i] }
            if let w = weights, let o = other.weights { for i in 0..<Self.bins { w[i] &+= o[i] } }
            maximumKey = max(maximumKey, other.maximumKey)
            minimumKey = min(minimumKey, other.minimumKey)
        }

        func histogram() -> Histogram16 {
            let counts = self.counts, weights = self.weights
            return Histogram16(bits: ExactSelector.firstBits, count: { UInt64(counts[$0]) },
                               weight: { bin in weights.map { $0[bin] } ?? UInt64(counts[bin]) << 32 })
        }
    }

    /// Counts and weights per bin of one histogram, read through closures.
    struct Histogram16 {
        let bits: Int
        let count: (Int) -> UInt64
        let weight: (Int) -> UInt64
    }

    /// Takes the first pass's histogram; returns whether another pass is needed.
    @discardableResult
    public mutating func finishFirstPass(_ pass: FirstPass) -> Bool {
        started = true
        maximumKey = pass.maximumKey
        minimumKey = pass.minimumKey
        firstBins = Array(repeating: nil, count: targets.count)
        guard pass.minimumKey <= pass.maximumKey else { return false }  // no values: nothing to select
        var values = 0
        for bin in 0..<FirstPass.bins { values += Int(pass.counts[bin]) }
        limit = max(Self.collectLimit, values / 64)
        choose(pass.histogram(), prefix: 0, shift: 32, before: 0, targets: Array(targets.indices))
        return !groups.isEmpty
    }

    /// Picks, for each target, the bin of a histogram (of the bits below `shift` under
    /// `prefix`) where its cumulative weight is reached, and resolves the target or opens a
    /// group for it.
    private mutating func choose(_ histogram: Histogram16, prefix: UInt32, shift: Int, before: UInt64, targets: [Int]) {
        let subShift = shift - histogram.bits
        // One walk through the bins for all targets, in the order of their cumulative weights.
        var cumulative = before
        var bin = 0
        for t in targets.sorted(by: { self.targets[$0] < self.targets[$1] }) {
            var chosen: Int?
            var chosenBefore: UInt64 = 0
            var c = cumulative, b = bin
            while b < 1 << histogram.bits {
                let n = histogram.count(b)
                if n > 0 {
                    let next = c &+ histogram.weight(b)
                    if Self.reached(next, self.targets[t]) {
                        chosen = b
                        chosenBefore = c
                        break
                    }
                    c = next
                }
                b += 1
            }
            guard let chosenBin = chosen else {
                keys[t] = maximumKey
                continue
            }
            // The next target starts from this bin (it may fall in it too).
            cumulative = chosenBefore
            bin = chosenBin
            let newPrefix = (shift >= 32 ? 0 : prefix << UInt32(histogram.bits)) | UInt32(chosenBin)
            if subShift == 16 { firstBins[t] = chosenBin }
            if subShift == 0 && floatValues {
                // One `Float` key: one value.
                keys[t] = OrderKey.of(Double(FloatKey.value(of: newPrefix)))
                continue
            }
            if let g = groups.firstIndex(where: { $0.prefix == newPrefix && $0.shift == subShift }) {
                groups[g].targets.append(t)
            } else {
                let count = histogram.count(chosenBin)
                groups.append(Group(prefix: newPrefix, shift: subShift, before: chosenBefore, count: count, targets: [t],
                                    nextBits: Group.nextBits(count: count, shift: subShift, floatValues: floatValues, limit: limit),
                                    compactAt: count <= UInt64(limit) ? .max : 2 * Self.collectLimit))
            }
        }
    }

    // MARK: later passes

    /// A later pass's accumulator: per open group, a histogram of its next bits, or the
    /// keys and weights themselves. One per worker; its hot loop reads raw tables only.
    // Safe because one instance per worker; merged after the workers are done.
    public final class Refinement: @unchecked Sendable {
        let groups: [Group]
        /// Per first-pass bin: −1 when no open group lies in it (most values are rejected by
        /// this alone), the group's index when exactly one does, −2 when several do.
        let hot: UnsafeMutablePointer<Int16>
        /// Per group: its shift, prefix and next bits (0 for a collecting group).
        let layout: UnsafeMutablePointer<(shift: UInt32, prefix: UInt32, nextBits: UInt32)>
        /// Per group: (count, weight) of each bin of its next bits, nil for a collecting group.
        let histograms: [UnsafeMutablePointer<UInt64>?]
        /// Per collecting group: the keys of values of weight one, and the others with their weights.
        var unitKeys: [[UInt64]]
        var collected: [[(key: UInt64, weight: UInt64)]]

        init(groups: [Group]) {
            self.groups = groups
            let n = 1 << ExactSelector.firstBits
            hot = .allocate(capacity: n)
            hot.initialize(repeating: -1, count: n)
            layout = .allocate(capacity: max(1, groups.count))
            for (g, group) in groups.enumerated() {
                layout[g] = (UInt32(group.shift), group.prefix, group.collect ? 0 : UInt32(group.nextBits))
            }
            histograms = groups.map { group in
                guard !group.collect else { return nil }
                let p = UnsafeMutablePointer<UInt64>.allocate(capacity: 2 << group.nextBits)
                p.initialize(repeating: 0, count: 2 << group.nextBits)
                return p
            }
            for (g, group) in groups.enumerated() {
                let top = Int(truncatingIfNeeded: (group.prefix << UInt32(group.shift)) >> 16)
                hot[top] = hot[top] == -1 ? Int16(g) : -2
            }
            collected = groups.map { _ in [] }
            // Room for every value a group can collect (only the memory written is used), so
            // that no array is moved as it grows.
            unitKeys = groups.map { group in
                var keys: [UInt64] = []
                if group.collect { keys.reserveCapacity(Int(min(group.count, UInt64(group.compactAt)))) }
                return keys
            }
        }

        deinit {
            hot.deallocate()
            layout.deallocate()
            for h in histograms { h?.deallocate() }
        }

        /// Looks at value `v` (whose `Float` key is `key32`) of fixed-point weight `weight`.
        @inline(__always) public func add(_ v: Double, key32: UInt32, weight: UInt64) {
            let h = hot[Int(truncatingIfNeeded: key32 >> 16)]
            if h == -1 { return }
            if h >= 0 {
                add(v, key32: key32, weight: weight, group: Int(h))
            } else {
                for g in groups.indices { add(v, key32: key32, weight: weight, group: g) }
            }
        }

        @inline(never) private func add(_ v: Double, key32: UInt32, weight: UInt64, group g: Int) {
            let (shift, prefix, nextBits) = layout[g]
            guard key32 >> shift == prefix else { return }
            if nextBits > 0, let bins = histograms[g] {
                let bin = Int(truncatingIfNeeded: (key32 >> (shift - nextBits)) & ((1 << nextBits) - 1))
                bins[2 * bin] &+= 1
                bins[2 * bin + 1] &+= weight
            } else {
                if weight == FixedWeight.one {
                    unitKeys[g].append(OrderKey.of(v))
                    if unitKeys[g].count >= groups[g].compactAt { compact(g) }
                } else {
                    collected[g].append((OrderKey.of(v), weight))
                    if collected[g].count >= groups[g].compactAt { collected[g] = Self.compacted(collected[g]) }
                }
            }
        }

        /// Moves group `g`'s unit keys into its weighted values, equal keys merged.
        func compact(_ g: Int) {
            unitKeys[g].sort()
            var out = collected[g]
            for k in unitKeys[g] {
                if let last = out.last, last.key == k { out[out.count - 1].weight &+= FixedWeight.one } else { out.append((k, FixedWeight.one)) }
            }
            unitKeys[g] = []
            collected[g] = Self.compacted(out)
        }

        /// Sorted by key, the weights of equal keys added up.
        static func compacted(_ values: [(key: UInt64, weight: UInt64)]) -> [(key: UInt64, weight: UInt64)] {
            var out: [(key: UInt64, weight: UInt64)] = []
            for v in values.sorted(by: { $0.key < $1.key }) {
                if let last = out.last, last.key == v.key { out[out.count - 1].weight &+= v.weight } else { out.append(v) }
            }
            return out
        }

        public func merge(_ other: Refinement) {
            for g in groups.indices {
                if let h = histograms[g] {
                    let o = other.histograms[g]!
                    for i in 0..<(2 << groups[g].nextBits) { h[i] &+= o[i] }
                } else {
                    collected[g] += other.collected[g]
                    unitKeys[g] += other.unitKeys[g]
                }
            }
        }
    }

    /// The accumulator of the next pass (call while `isResolved` is false).
    public func nextPass() -> Refinement { Refinement(groups: groups) }

    /// Takes a later pass's accumulator; returns whether another pass is needed.
    @discardableResult
    public mutating func finish(_ pass: Refinement) -> Bool {
        let open = pass.groups
        groups = []
        for (g, group) in open.enumerated() {
            if let bins = pass.histograms[g] {
                choose(Histogram16(bits: group.nextBits, count: { bins[2 * $0] }, weight: { bins[2 * $0 + 1] }),
                       prefix: group.prefix, shift: group.shift, before: group.before, targets: group.targets)
            } else if pass.collected[g].isEmpty {
                // Every weight one: the key of the first rank whose cumulative weight
                // reaches the target, selected without sorting.
                var values = pass.unitKeys[g]
                pass.unitKeys[g] = []  // `values` the only reference: selection reorders it in place
                for t in group.targets {
                    var rank = max(0, Int((targets[t] - Double(group.before) * 0x1p-32).rounded(.up)) - 1)
                    while rank > 0 && Self.reached(group.before &+ UInt64(rank) * FixedWeight.one, targets[t]) { rank -= 1 }
                    while rank < values.count && !Self.reached(group.before &+ UInt64(rank + 1) * FixedWeight.one, targets[t]) { rank += 1 }
                    keys[t] = rank < values.count ? Self.select(&values, rank) : values.max() ?? maximumKey
                }
            } else {
                pass.compact(g)
                let values = pass.collected[g]
                for t in group.targets {
                    var cumulative = group.before
                    var found: UInt64?
                    for v in values {
                        cumulative &+= v.weight
                        if Self.reached(cumulative, targets[t]) {
                            found = v.key
                            break
                        }
                    }
                    keys[t] = found ?? values.last?.key ?? maximumKey
                }
            }
        }
        return !groups.isEmpty
    }
}

extension ExactSelector {
    /// The element of `values` at `rank` in sorted order (quickselect; reorders `values`).
    static func select(_ values: inout [UInt64], _ rank: Int) -> UInt64 {
        values.withUnsafeMutableBufferPointer { v in
            var low = 0, high = v.count - 1
            while low < high {
                // Median of three as the pivot, then a Hoare partition.
                let mid = low + (high - low) / 2
                if v[mid] < v[low] { v.swapAt(mid, low) }
                if v[high] < v[low] { v.swapAt(high, low) }
                if v[high] < v[mid] { v.swapAt(high, mid) }
                let pivot = v[mid]
                var i = low, j = high
                while i <= j {
                    while v[i] < pivot { i += 1 }
                    while v[j] > pivot { j -= 1 }
                    if i <= j {
                        v.swapAt(i, j)
                        i += 1
                        j -= 1
                    }
                }
                if rank <= j { high = j } else if rank >= i { low = i } else { break }
            }
            return v[rank]
        }
    }
}

/// Order-preserving 64-bit keys of `Double` values: `a < b` ⇔ `key(a) < key(b)`; −0 and +0
/// share a key.
public enum OrderKey {
    @inline(__always) public static func of(_ v: Double) -> UInt64 {
        let bits = (v + 0).bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    @inline(__always) public static func value(of key: UInt64) -> Double {
        Double(bitPattern: key & (1 << 63) != 0 ? key & ~(1 << 63) : ~key)
    }
}

/// Order-preserving 32-bit keys of `Float` values (as `OrderKey` for `Double`); the key of a
/// `Double` is that of its nearest `Float`, which keeps the order (never reverses it).
public enum FloatKey {
    @inline(__always) public static func of(_ v: Float) -> UInt32 {
        let bits = (v + 0).bitPattern
        return bits & (1 << 31) != 0 ? ~bits : bits | (1 << 31)
    }

    @inline(__always) public static func of(_ v: Double) -> UInt32 { of(Float(v)) }

    @inline(__always) public static func value(of key: UInt32) -> Float {
        Float(bitPattern: key & (1 << 31) != 0 ? key & ~(1 << 31) : ~key)
    }
}

/// Weights 0…1 in 32-bit fixed point, so that sums of weights are exact integers.
public enum FixedWeight {
    public static let one: UInt64 = 1 << 32

    /// The fixed-point weight of `w` (> 0): at least one unit.
    @inline(__always) public static func of(_ w: Float) -> UInt64 {
        w >= 1 ? one : max(1, UInt64((Double(w) * 0x1p32).rounded()))
    }
}
