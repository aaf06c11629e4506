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
    private let state = Mutex<(used: Int, peak: Int)>((0, 0))

    public init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Runs `body` holding `bytes` of the budget (at most `limit`), waiting for them first.
    public func withReservation<T>(_ bytes: Int, _ body: () throws -> T) rethrows -> T {
        let amount = min(max(0, bytes), limit)
        while !state.withLock({ s -> Bool in
            // One file at a time may always run, however large, so that nothing waits forever.
            guard s.used == 0 || s.used + amount <= limit else { return false }
            s.used += amount
            s.peak = max(s.peak, s.used)
            return true
        }) {
            usleep(2_000)
        }
        defer { state.withLock { $0.used -= amount } }
        return try body()
    }

    /// The largest total reserved at once so far.
    public var peakReserved: Int { state.withLock { $0.peak } }
}

extension Pipeline {
    /// The estimated peak memory of developing the DNG at `path` with `options`, from its
    /// header (0 when the header cannot be read: developing it then fails at once anyway).
    public static func estimatedPeakBytes(path: String, options: DevelopOptions) -> Int {
        guard let dng = try? DNGFile.open(path: path), let (raw, _, _) = try? selectImage(dng, options: options) else { return 0 }
        return estimatedPeakBytes(raw)
    }
}
