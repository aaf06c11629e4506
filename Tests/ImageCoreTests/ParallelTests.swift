import Dispatch
import Foundation
import Testing
@testable import ImageCore

/// The concurrency helpers the streaming conversion relies on.
@Suite struct ParallelTests {
    /// The value is computed on a thread of its own: the body waits for a signal that the
    /// caller sends only after the constructor has returned, which could never arrive if
    /// the body ran inline (it gives up after 10 s and reports it).
    @Test func backgroundValueRunsAlongsideTheCaller() {
        guard Parallel.threadCount > 1 else { return }  // SCENELINEAR_THREADS=1: computed inline by design
        let go = DispatchSemaphore(value: 0)
        let value = BackgroundValue { () -> Bool in go.wait(timeout: .now() + 10) == .success }
        go.signal()
        #expect(value.wait(), "the body did not see the caller's signal: it did not run concurrently")
        #expect(value.wait(), "a second wait returns the same value at once")
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
}
