import Synchronization

/// How far one development has come: the raw pixels that have gone through Stage 2, out of
/// the ActiveArea's, counted from any thread; `report` is called with the fraction done each
/// time it has risen by at least 1 % (and once at 100 %), never twice for one percent. A
/// decoder that works long before it hands any block on (a JPEG XL image of one tile) counts
/// the pixels it renders first, as many again (`RawDecoder.decodeProgressPixels`).
public final class DevelopProgress: Sendable {
    private let done = Atomic<Int>(0)
    private let reportedPercent = Atomic<Int>(-1)
    private let total = Atomic<Int>(0)
    let report: @Sendable (Double) -> Void

    public init(report: @escaping @Sendable (_ fraction: Double) -> Void) {
        self.report = report
    }

    /// A new development of `pixels` raw pixels starts (a later pass of a measurement starts
    /// again), whose decoder reports `decodedFirst` pixels before Stage 2 sees any.
    func start(pixels: Int, decodedFirst: Int = 0) {
        total.store(max(1, pixels + decodedFirst), ordering: .relaxed)
        done.store(0, ordering: .relaxed)
        reportedPercent.store(-1, ordering: .relaxed)
    }

    /// `pixels` more have gone through Stage 2.
    func add(_ pixels: Int) {
        let now = done.add(pixels, ordering: .relaxed).newValue, all = total.load(ordering: .relaxed)
        let percent = min(100, now * 100 / all)
        var last = reportedPercent.load(ordering: .relaxed)
        while percent > last {
            let (exchanged, original) = reportedPercent.compareExchange(expected: last, desired: percent, ordering: .relaxed)
            if exchanged {
                report(Double(min(now, all)) / Double(all))
                return
            }
            last = original
        }
    }
}
