import Dispatch
import Foundation
import SceneLinearKit
import Testing

/// The batch memory budget: reservations in force never exceed the limit together (one file
/// alone may), waiting files block until a reservation ends and then all finish.
@Suite struct MemoryBudgetTests {
    final class Counter: @unchecked Sendable {  // Safe because every access holds `lock`.
        let lock = NSLock()
        var inside = 0, most = 0, done = 0
        func enter() { lock.lock(); inside += 1; most = max(most, inside); lock.unlock() }
        func leave() { lock.lock(); inside -= 1; done += 1; lock.unlock() }
    }

    @Test func reservationsStayWithinTheLimit() {
        let budget = MemoryBudget(limit: 100)
        let counter = Counter()
        let group = DispatchGroup()
        for i in 0..<12 {
            DispatchQueue.global().async(group: group) {
                budget.withReservation(i == 5 ? 500 : 40) {  // one reservation larger than the limit
                    counter.enter()
                    usleep(3_000)
                    counter.leave()
                }
            }
        }
        #expect(group.wait(timeout: .now() + 30) == .success, "waiting reservations did not all finish")
        #expect(counter.done == 12)
        #expect(budget.peakReserved <= 100, "peak \(budget.peakReserved)")
        // At most two reservations of 40 fit in 100 at once.
        #expect(counter.most <= 2, "\(counter.most) at once")
    }
}
