import Foundation

/// Counts finished files for progress reports, from any thread.
package final class ProgressCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var done = 0
    package let total: Int
    package let report: (@Sendable (Int, Int) -> Void)?

    package init(total: Int, report: (@Sendable (Int, Int) -> Void)?) {
        self.total = total
        self.report = report
    }

    package func step() {
        lock.lock()
        done += 1
        let d = done
        lock.unlock()
        report?(d, total)
    }
}
