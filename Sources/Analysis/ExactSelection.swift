import ImageCore

/// Exact weighted order statistics without sorting the values.
///
/// Every value is mapped to a 64-bit key whose unsigned order is the numeric order of the
/// values (`OrderKey`). A first pass over the values builds a histogram of the keys' top 16
/// bits, weighted by each value's weight in fixed point (`FixedWeight`, so the sums are
/// integers: exact, and the same in any order or thread split). The bin where the
/// cumulative weight crosses each target is then refined by further passes, each looking
/// only at the values inside the chosen bins: a histogram of the next 12 bits while the
/// bin holds many values, else the values themselves, collected and sorted. At most five
/// passes (16 + 4 × 12 bits) find any key exactly; typically two do.
///
/// The value selected for a target t is the smallest value v (in sorted order) whose
/// cumulative weight `Σ_{u ≤ v} w(u)` reaches t: the inverted CDF, numpy's
/// `percentile(…, method="inverted_cdf")` when every weight is 1 and t = p·n.
public struct ExactSelector: Sendable {
    /// Bits of the key resolved by the first pass, and by each later histogram pass.
    static let firstBits = 16
    static let laterBits = 12
    /// A chosen bin with at most this many values is resolved by collecting them.
    static let collectLimit = 1 << 16

    /// Cumulative weights to reach (in units of one full weight, i.e. fixed point / 2³²).
    public let targets: [Double]
    /// The key found for each target (nil until resolved).
    public private(set) var keys: [UInt64?]

    /// A bin being refined: the keys with `key >> shift == prefix`, the fixed-point weight
    /// of every key below it, and the targets that fall in it.
    struct Group: Sendable {
        var prefix: UInt64
        var shift: Int
        var before: UInt64
        var count: UInt64
        var targets: [Int]
        var collect: Bool { count <= UInt64(ExactSelector.collectLimit) }
    }

    private(set) var groups: [Group] = []
    /// The smallest and the largest key seen (the largest also answers a target the total
    /// weight never reaches through rounding).
    public private(set) var minimumKey: UInt64 = .max
    public private(set) var maximumKey: UInt64 = 0
    private var started = false

    public init(targets: [Double]) {
        self.targets = targets
        keys = Array(repeating: nil, count: targets.count)
    }

    /// True when every target has its key.
    public var isResolved: Bool { started && groups.isEmpty }

    /// The value of target `i` once resolved (NaN when there were no values).
    public func value(_ i: Int) -> Double { keys[i].map(OrderKey.value) ?? .nan }

    static func reached(_ cumulative: UInt64, _ target: Double) -> Bool {
        Double(cumulative) * 0x1p-32 >= target
    }

    // MARK: pass 1

    /// The first pass's accumulator: weights and counts per top-16-bit bin and, for the bins
    /// where the targets are predicted to fall (`predictBins`), per bin of the next 12 bits
    /// too, so that the second pass can usually collect the values themselves. One per
    /// worker; a class over raw storage so that the hot loop does no copy-on-write checks.
    public final class FirstPass: @unchecked Sendable {
        let bins: KeyBins
        var minimumKey: UInt64 = .max
        var maximumKey: UInt64 = 0
        /// Per top-16-bit bin: the index of its finer histogram, or −1.
        let finer: UnsafeMutablePointer<Int16>
        let finerBins: [KeyBins]

        public init(predicted: [Int] = []) {
            bins = KeyBins(bits: ExactSelector.firstBits)
            finer = .allocate(capacity: 1 << ExactSelector.firstBits)
            finer.initialize(repeating: -1, count: 1 << ExactSelector.firstBits)
            for (i, bin) in predicted.enumerated() { finer[bin] = Int16(i) }
            finerBins = predicted.map { _ in KeyBins(bits: ExactSelector.laterBits) }
        }

        deinit { finer.deallocate() }

        /// Counts `key` (the caller reports the extremes of what it added through `note`).
        @inline(__always) public func add(_ key: UInt64, weight: UInt64) {
            let top = Int(truncatingIfNeeded: key >> 48)
            bins.add(top, weight: weight)
            let f = finer[top]
            if f >= 0 {
                finerBins[Int(f)].add(Int(truncatingIfNeeded: (key >> 36) & 0xFFF), weight: weight)
            }
        }

        /// Records the smallest and largest keys of a batch of `add`s.
        public func note(minimum: UInt64, maximum: UInt64) {
            minimumKey = min(minimumKey, minimum)
            maximumKey = max(maximumKey, maximum)
        }

        public func merge(_ other: FirstPass) {
            bins.merge(other.bins)
            for (a, b) in zip(finerBins, other.finerBins) { a.merge(b) }
            maximumKey = max(maximumKey, other.maximumKey)
            minimumKey = min(minimumKey, other.minimumKey)
        }

        func finerHistogram(_ bin: Int) -> KeyBins? {
            let f = finer[bin]
            return f >= 0 ? finerBins[Int(f)] : nil
        }
    }

    /// The top-16-bit bins where the given fractions of the values are likely to fall, judged
    /// from `sample` (sorted keys of a `1/sampleStep` part of the values): those whose
    /// sampled count suggests more values than the second pass would collect. At most 16.
    public static func predictBins(sample: [UInt64], fractions: [Double], sampleStep: Int) -> [Int] {
        let n = sample.count
        guard n > 0 else { return [] }
        var counts: [Int: Int] = [:]
        for k in sample { counts[Int(truncatingIfNeeded: k >> 48), default: 0] += 1 }
        var chosen = Set<Int>()
        for f in fractions {
            let spread = 4 * (max(f * (1 - f), 0) / Double(n)).squareRoot() + 2 / Double(n)
            let low = max(0, Int((max(0, f - spread) * Double(n)).rounded(.down)))
            let high = min(n - 1, Int((min(1, f + spread) * Double(n)).rounded(.up)))
            guard low <= high else { continue }
            for bin in Int(truncatingIfNeeded: sample[low] >> 48)...Int(truncatingIfNeeded: sample[high] >> 48)
            where (counts[bin] ?? 0) * sampleStep > collectLimit / 2 {
                chosen.insert(bin)
            }
        }
        return Array(chosen.sorted().prefix(16))
    }

    /// Takes the first pass's histogram; returns whether another pass is needed.
    @discardableResult
    public mutating func finishFirstPass(_ pass: FirstPass) -> Bool {
        started = true
        maximumKey = pass.maximumKey
        minimumKey = pass.minimumKey
        guard pass.minimumKey <= pass.maximumKey else { return false }  // no values: nothing to select
        choose(pass.bins, prefix: 0, shift: 64, bits: Self.firstBits, before: 0, targets: Array(targets.indices),
               finer: pass.finerHistogram)
        return !groups.isEmpty
    }

    /// Picks, for each target, the bin of a histogram (of `bits` bits under `prefix`) where
    /// its cumulative weight is reached, and resolves the target or opens a group for it.
    private mutating func choose(_ histogram: KeyBins, prefix: UInt64, shift: Int, bits: Int, before: UInt64, targets: [Int],
                                 finer: ((Int) -> KeyBins?)? = nil) {
        let subShift = shift - bits
        for t in targets {
            var cumulative = before
            var chosen: Int?
            var chosenBefore: UInt64 = 0
            for bin in 0..<(1 << bits) where histogram.count(bin) > 0 {
                let next = cumulative &+ histogram.weight(bin)
                if Self.reached(next, self.targets[t]) {
                    chosen = bin
                    chosenBefore = cumulative
                    break
                }
                cumulative = next
            }
            guard let bin = chosen else {
                keys[t] = maximumKey
                continue
            }
            let newPrefix = (shift >= 64 ? 0 : prefix << bits) | UInt64(bin)
            if subShift == 0 {
                keys[t] = newPrefix
                continue
            }
            if let sub = finer?(bin) {
                // The first pass also binned the next bits here: choose among those at once.
                choose(sub, prefix: newPrefix, shift: subShift, bits: Self.laterBits, before: chosenBefore, targets: [t])
                continue
            }
            if let g = groups.firstIndex(where: { $0.prefix == newPrefix && $0.shift == subShift }) {
                groups[g].targets.append(t)
            } else {
                groups.append(Group(prefix: newPrefix, shift: subShift, before: chosenBefore, count: histogram.count(bin), targets: [t]))
            }
        }
    }

    // MARK: later passes

    /// A later pass's accumulator: per open group, a histogram of its next bits, or the
    /// keys and weights themselves. One per worker; its hot loop reads raw tables only.
    public final class Refinement: @unchecked Sendable {
        let groups: [Group]
        /// Per top-16-bit bin: −1 when no open group lies in it (most values are rejected by
        /// this alone), the group's index when exactly one does, −2 when several do.
        let hot: UnsafeMutablePointer<Int16>
        let prefixes: UnsafeMutablePointer<UInt64>
        let shifts: UnsafeMutablePointer<UInt64>
        /// Each group's histogram storage (weight, count per bin), nil for a collecting group.
        let histograms: [KeyBins?]
        let storage: UnsafeMutablePointer<UnsafeMutablePointer<UInt64>?>
        var collected: [[(key: UInt64, weight: UInt64)]]

        init(groups: [Group]) {
            self.groups = groups
            let n = 1 << ExactSelector.firstBits
            hot = .allocate(capacity: n)
            hot.initialize(repeating: -1, count: n)
            prefixes = .allocate(capacity: max(1, groups.count))
            shifts = .allocate(capacity: max(1, groups.count))
            storage = .allocate(capacity: max(1, groups.count))
            histograms = groups.map { $0.collect ? nil : KeyBins(bits: ExactSelector.laterBits) }
            for (g, group) in groups.enumerated() {
                let top = Int(truncatingIfNeeded: (group.prefix << group.shift) >> 48)
                hot[top] = hot[top] == -1 ? Int16(g) : -2
                prefixes[g] = group.prefix
                shifts[g] = UInt64(group.shift)
                storage[g] = histograms[g]?.storage
            }
            collected = groups.map { _ in [] }
        }

        deinit {
            hot.deallocate()
            prefixes.deallocate()
            shifts.deallocate()
            storage.deallocate()
        }

        @inline(__always) public func add(_ key: UInt64, weight: UInt64) {
            let h = hot[Int(truncatingIfNeeded: key >> 48)]
            if h == -1 { return }
            if h >= 0 {
                add(key, weight: weight, group: Int(h))
            } else {
                for g in groups.indices { add(key, weight: weight, group: g) }
            }
        }

        @inline(__always) private func add(_ key: UInt64, weight: UInt64, group g: Int) {
            let shift = shifts[g]
            guard key >> shift == prefixes[g] else { return }
            if let bins = storage[g] {
                let bin = Int(truncatingIfNeeded: (key >> (shift &- UInt64(ExactSelector.laterBits))) & UInt64((1 << ExactSelector.laterBits) - 1))
                bins[2 * bin] &+= weight
                bins[2 * bin + 1] &+= 1
            } else {
                collected[g].append((key, weight))
            }
        }

        public func merge(_ other: Refinement) {
            for g in groups.indices {
                if let h = histograms[g] { h.merge(other.histograms[g]!) } else { collected[g] += other.collected[g] }
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
            if let histogram = pass.histograms[g] {
                choose(histogram, prefix: group.prefix, shift: group.shift, bits: Self.laterBits, before: group.before,
                       targets: group.targets)
            } else {
                // Sorted by key (weights of equal keys add up whatever their order).
                let values = pass.collected[g].sorted { $0.key < $1.key }
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

/// Weights and counts per bin of a key histogram, in raw storage (weight of bin b at 2b,
/// count at 2b + 1), owned by one worker at a time.
final class KeyBins: @unchecked Sendable {
    let bins: Int
    let storage: UnsafeMutablePointer<UInt64>

    init(bits: Int) {
        bins = 1 << bits
        storage = .allocate(capacity: 2 * bins)
        storage.initialize(repeating: 0, count: 2 * bins)
    }

    deinit { storage.deallocate() }

    @inline(__always) func add(_ bin: Int, weight: UInt64) {
        storage[2 * bin] &+= weight
        storage[2 * bin + 1] &+= 1
    }

    func weight(_ bin: Int) -> UInt64 { storage[2 * bin] }
    func count(_ bin: Int) -> UInt64 { storage[2 * bin + 1] }

    func merge(_ other: KeyBins) {
        for i in 0..<(2 * bins) { storage[i] &+= other.storage[i] }
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

/// Weights 0…1 in 32-bit fixed point, so that sums of weights are exact integers.
public enum FixedWeight {
    public static let one: UInt64 = 1 << 32

    /// The fixed-point weight of `w` (> 0): at least one unit.
    @inline(__always) public static func of(_ w: Float) -> UInt64 {
        w >= 1 ? one : max(1, UInt64((Double(w) * 0x1p32).rounded()))
    }
}
