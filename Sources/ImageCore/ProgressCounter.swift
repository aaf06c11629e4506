import Synchronization

/// Counts finished files for progress reports, from any thread.
package final class ProgressCounter: Sendable {
    private let done = Atomic<Int>(0)
    package let total: Int
    package let report: (@Sendable (Int, Int) -> Void)?

    package init(total: Int, report: (@Sendable (Int, Int) -> Void)?) {
        self.total = total
        self.report = report
    }

    package func step() {
        let d = done.add(1, ordering: .relaxed).newValue
        report?(d, total)
    }
}
