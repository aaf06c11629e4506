import Foundation
import Synchronization

/// Memory shared by the files a batch develops at the same time: each file reserves its
/// estimated peak (`Pipeline.estimatedPeakBytes`) before it starts and gives it back when
/// its outputs are written, waiting while the reservations of the files in flight would
/// exceed the limit together. A file whose estimate alone exceeds the limit is refused by
/// `Pipeline.checkLimits` (exit code 17) and reserves nothing.
public final class MemoryBudget: Sendable {
    /// The total that the reservations in force may reach (`--max-memory`).
    public let limit: Int
    private struct State {
        var used = 0, peak = 0
        /// Files waiting for room, each woken (to try again) when a reservation ends.
        var waiting: [DispatchSemaphore] = []
    }
    private let state = Mutex(State())

    public init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Runs `body` holding `bytes` of the budget (at most `limit`), waiting for them first:
    /// blocked (no polling) until a reservation ends, then trying again.
    public func withReservation<T>(_ bytes: Int, _ body: () throws -> T) rethrows -> T {
        let amount = min(max(0, bytes), limit)
        while let wait = state.withLock({ s -> DispatchSemaphore? in
            // One file at a time may always run, however large, so that nothing waits forever.
            if s.used == 0 || s.used + amount <= limit {
                s.used += amount
                s.peak = max(s.peak, s.used)
                return nil
            }
            let wait = DispatchSemaphore(value: 0)
            s.waiting.append(wait)
            return wait
        }) {
            // Registered under the lock: a reservation that ends before this wait signals it all the same.
            wait.wait()
        }
        defer {
            let woken = state.withLock { s -> [DispatchSemaphore] in
                s.used -= amount
                defer { s.waiting = [] }
                return s.waiting
            }
            for wait in woken { wait.signal() }
        }
        return try body()
    }

    /// The largest total reserved at once so far.
    public var peakReserved: Int { state.withLock { $0.peak } }
}
