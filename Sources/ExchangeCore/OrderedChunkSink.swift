import Dispatch
import Synchronization

/// Where the chunks of one file go when several threads make them (each compresses its
/// own chunks) and the file takes them in index order: the EXR scanline writer's and the
/// HDF5 stream writer's route to the file.
///
/// A chunk is handed over with `deliver`. When it is the next one due and no other thread is
/// writing, the delivering thread writes it and every following chunk already waiting, with
/// the `write` it passed; otherwise it is kept until the thread writing reaches it. So one
/// thread writes at a time, chunks are written strictly in index order whatever the timing,
/// and no thread ever waits for another's compression. The first failure — of a `write`, or
/// one a producer reports with `fail` — wins: later chunks are dropped, later failures
/// ignored, `claim` hands out nothing more, and `failure` gives that first error.
///
/// Producers that take their chunks from the sink (`claim`) stay at most a window of chunks
/// ahead of the last one written, which bounds the compressed chunks held. A claim beyond
/// the window sleeps on a semaphore: it counts itself among the sleepers (under the mutex)
/// and waits; whoever writes a chunk or records the failure signals the semaphore once for
/// each sleeper counted and resets the count, so every wait has its signal, and a signal
/// given before its wait begins is kept by the semaphore rather than lost. A sleeper
/// always has a chunk to wait for: claimed chunks are delivered (or failed) by producers
/// that are running, since a producer claims its next chunk only after delivering the last.
package final class OrderedChunkSink<Chunk: Sendable>: Sendable {
    private struct State {
        /// Delivered chunks not yet written, by index.
        var waiting: [Int: Chunk] = [:]
        var nextToClaim = 0
        var nextToWrite = 0
        /// A thread is writing (it takes every due chunk before it stops).
        var writing = false
        var failure: (any Error)?
        /// Claims waiting for the window to move.
        var sleepers = 0

        /// The due chunk, when it is here and no thread writes: the caller becomes the writer.
        mutating func takeDue() -> (Int, Chunk)? {
            guard !writing, failure == nil, let chunk = waiting.removeValue(forKey: nextToWrite) else { return nil }
            writing = true
            return (nextToWrite, chunk)
        }

        /// The sleepers to wake, now that the window moved or the sink failed.
        mutating func takeSleepers() -> Int {
            defer { sleepers = 0 }
            return sleepers
        }
    }

    /// What a claim does: take a chunk, stop, or sleep until the window moves.
    private enum Step { case chunk(Int), done, sleep }

    /// How many chunks the file has (indices `0 ..< count`).
    package let count: Int
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    package init(count: Int) {
        self.count = count
    }

    /// The next chunk for a producer to make, in increasing order; nil when every chunk is
    /// taken or the sink failed. Sleeps while `window` (at least 1) chunks are claimed and
    /// not written.
    package func claim(window: Int) -> Int? {
        let window = max(1, window)
        while true {
            let step = state.withLock { s -> Step in
                guard s.failure == nil, s.nextToClaim < count else { return .done }
                if s.nextToClaim - s.nextToWrite >= window {
                    s.sleepers += 1
                    return .sleep
                }
                s.nextToClaim += 1
                return .chunk(s.nextToClaim - 1)
            }
            switch step {
            case .chunk(let index): return index
            case .done: return nil
            case .sleep: wake.wait()
            }
        }
    }

    /// Hands over chunk `index`. When it is due and no thread is writing, this thread writes
    /// it, then each following chunk already delivered, calling `write(index, chunk)` for each
    /// in order; a `write` that throws records the sink's failure (unless one came first) and
    /// stops the writing. After a failure the chunk is dropped.
    package func deliver(_ index: Int, _ chunk: Chunk, write: (Int, Chunk) throws -> Void) {
        precondition((0..<count).contains(index), "chunk \(index) of \(count)")
        var due = state.withLock { s -> (Int, Chunk)? in
            guard s.failure == nil else { return nil }
            s.waiting[index] = chunk
            return s.takeDue()
        }
        while let (next, data) = due {
            var error: (any Error)?
            do { try write(next, data) } catch let e { error = e }
            let sleepers: Int
            (due, sleepers) = state.withLock { s -> ((Int, Chunk)?, Int) in
                s.writing = false
                if let error {
                    Self.record(error, in: &s)
                } else {
                    s.nextToWrite += 1
                }
                return (s.takeDue(), s.takeSleepers())
            }
            signal(sleepers)
        }
    }

    /// Records `error` as the sink's failure unless one came first; later chunks are dropped.
    package func fail(_ error: any Error) {
        let sleepers = state.withLock { s -> Int in
            Self.record(error, in: &s)
            return s.takeSleepers()
        }
        signal(sleepers)
    }

    /// The first failure, if any.
    package var failure: (any Error)? { state.withLock { $0.failure } }

    /// Throws the first failure, if any.
    package func check() throws {
        if let failure { throw failure }
    }

    /// Whether every chunk was written.
    package var isComplete: Bool { state.withLock { $0.nextToWrite == count } }

    private static func record(_ error: any Error, in s: inout State) {
        if s.failure == nil { s.failure = error }
        s.waiting.removeAll()
    }

    private func signal(_ sleepers: Int) {
        for _ in 0..<sleepers { wake.signal() }
    }
}
