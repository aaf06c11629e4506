import Dispatch
import Foundation
import Synchronization
import Testing
@testable import ImageCore

/// The concurrency helpers the streaming conversion relies on.
@Suite struct ParallelTests {
    /// The value is computed on a thread of its own: the body waits for a signal that the
    /// caller sends only after the constructor has returned, which could never arrive if
    /// the body ran inline (it gives up after 10 s and reports it).
    @Test func backgroundValueRunsAlongsideTheCaller() {
        let go = DispatchSemaphore(value: 0)
        // (With one thread configured it would be computed inline, by design.)
        let value = Parallel.withThreadCount(2) { BackgroundValue { () -> Bool in go.wait(timeout: .now() + 10) == .success } }
        go.signal()
        #expect(value.wait(), "the body did not see the caller's signal: it did not run concurrently")
        #expect(value.wait(), "a second wait returns the same value at once")
    }

    /// A loop runs on at most the configured number of threads at once, and visits every
    /// index exactly once.
    @Test(arguments: [1, 2, 3])
    func loopsKeepToTheThreadCount(threads: Int) {
        final class Probe: Sendable {
            let running = Atomic<Int>(0), most = Atomic<Int>(0)
            let visits = Mutex<[Int]>([])
        }
        let probe = Probe()
        Parallel.withThreadCount(threads) {
            Parallel.forEach(200) { i in
                let now = probe.running.add(1, ordering: .relaxed).newValue
                probe.most.max(now, ordering: .relaxed)
                usleep(200)
                probe.running.subtract(1, ordering: .relaxed)
                probe.visits.withLock { $0.append(i) }
            }
        }
        #expect(probe.most.load(ordering: .relaxed) <= threads)
        #expect(probe.visits.withLock { $0.sorted() } == Array(0..<200))
    }

    /// The thread count a command runs with reaches the loops its loops start on their
    /// worker threads (a nested loop on a worker sees the caller's count, not the default).
    @Test(arguments: [1, 3, 5])
    func nestedLoopsInheritTheThreadCount(threads: Int) {
        let seen = Mutex<[Int]>([])
        Parallel.withThreadCount(threads) {
            Parallel.forEach(16) { _ in
                Parallel.forEach(4) { _ in seen.withLock { $0.append(Parallel.threadCount) } }
            }
        }
        #expect(seen.withLock { $0 } == Array(repeating: threads, count: 64))
        #expect(Parallel.threadCount != 5 || ProcessInfo.processInfo.activeProcessorCount == 5, "the count leaks out of its scope")
    }

    /// Every wait gets the body's result, from any number of threads.
    @Test func backgroundValueResult() {
        let value = BackgroundValue { (0..<1000).reduce(0, +) }
        let results = (try? Parallel.map(8) { _ in value.wait() }) ?? []
        #expect(results == Array(repeating: 499_500, count: 8))
    }

    /// The first error of the lowest chunk is rethrown, whatever the timing.
    @Test func lowestChunkErrorWins() {
        struct Failure: Error, Equatable { let chunk: Int }
        for _ in 0..<20 {
            #expect(throws: Failure(chunk: 2)) {
                try Parallel.forEachChunkThrowing(count: 64, minimumChunk: 8) { range in
                    let chunk = range.lowerBound / 8
                    if chunk >= 2 && chunk % 2 == 0 { throw Failure(chunk: chunk) }
                }
            }
        }
    }

    /// An uninitialised buffer has its size, takes every value written and reads it back;
    /// buffers too small for a huge page and odd sizes are fine.
    @Test func largeBufferHoldsWhatIsWritten() {
        func pattern(_ i: Int) -> UInt16 { UInt16(truncatingIfNeeded: (i &* 40_503) >> 3) }
        for count in [0, 1, 1000, 3 << 20 + 7] {
            var buffer = LargeBuffer.uninitialized(UInt16.self, count: count)
            #expect(buffer.count == count)
            for i in 0..<count { buffer[i] = pattern(i) }
            #expect((0..<count).allSatisfy { buffer[$0] == pattern($0) })
        }
    }

    /// `make` writes every element through its chunks (several chunks for a large count, one
    /// for a small one), `make(reading:)` sees the whole source, `zeroed` is zeros even where
    /// the memory was used before.
    @Test func largeBuffersMadeInParallelChunks() {
        for count in [0, 1, 1000, 3 << 20 + 7] {
            let made = LargeBuffer.make(Int32.self, count: count) { range, out in
                for i in range { out[i] = Int32(truncatingIfNeeded: i &* 7 &+ 3) }
            }
            #expect(made.count == count && made.indices.allSatisfy { made[$0] == Int32(truncatingIfNeeded: $0 &* 7 &+ 3) })
            let source = (0..<count).map { UInt8(truncatingIfNeeded: $0 % 251) }
            let read = LargeBuffer.make(Float.self, count: count, reading: source) { range, s, out in
                #expect(s.count == count)
                for i in range { out[i] = Float(s[i]) + 0.5 }
            }
            #expect(read.indices.allSatisfy { read[$0] == Float(source[$0]) + 0.5 })
            for _ in 0..<2 {
                var garbage = LargeBuffer.uninitialized(UInt64.self, count: count)
                for i in garbage.indices { garbage[i] = .max }
                garbage = []
                let zeros = LargeBuffer.zeroed(UInt64.self, count: count)
                #expect(zeros.count == count && zeros.allSatisfy { $0 == 0 })
            }
        }
    }
}
