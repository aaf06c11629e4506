import ImageCore
import Synchronization

/// The decoded blocks of one pass of `RawDecoder.forEachBlock`/`forEachBlockRow`, kept for
/// the passes after it over the same image: a measurement that needs a second look at the
/// pixels (exact percentiles, histograms over a range found in the first pass) develops the
/// image again from Stage 1 instead of decoding its blocks again.
///
/// The first pass given a cache records every block it decodes, each straight into its part
/// of one buffer (allocated once, in huge pages where the kernel offers them); once that
/// pass has finished, later passes hand the recorded samples to their body without reading
/// the file. A pass that fails leaves the cache incomplete, and an incomplete cache is never
/// replayed. Nothing is recorded when the image's decoded samples would take more than
/// `capacity` bytes; every pass then decodes.
public final class DecodedBlockCache: Sendable {
    /// Bytes the recorded samples may take at most.
    public let capacity: Int
    private let state = Mutex<State>(State())

    private struct State {
        /// The samples of every block, one after another, of the type the pass decodes
        /// (`BlockSamples`; nil until a pass records).
        var buffer: UnsafeMutableRawBufferPointer?
        /// Where each block's samples start in `buffer`, in bytes, by block index.
        var offsets: [Int] = []
        var complete = false
        var declined = false
    }

    public init(capacity: Int) { self.capacity = capacity }

    deinit { state.withLock { $0.buffer?.deallocate() } }

    /// True once a whole pass has been recorded.
    public var isComplete: Bool { state.withLock { $0.complete } }

    /// Bytes held.
    public var byteCount: Int { state.withLock { $0.buffer?.count ?? 0 } }

    /// Where a pass over blocks of `counts` bytes each records them: the start of each
    /// block's part of the buffer (aligned for its samples when each count is a multiple of
    /// their size), or nil when it should not record (a complete or declined cache, or more
    /// than `capacity` bytes in all).
    func beginRecording(byteCounts counts: [Int]) -> [UnsafeMutableRawPointer]? {
        state.withLock { s in
            guard !s.complete, !s.declined else { return nil }
            let total = counts.reduce(0, +)
            guard total <= capacity else {
                s.declined = true
                return nil
            }
            s.buffer?.deallocate()
            s.buffer = LargeBuffer.allocate(byteCount: total, alignment: 64)
            var offsets: [Int] = [], next = 0
            for n in counts {
                offsets.append(next)
                next += n
            }
            s.offsets = offsets
            let base = s.buffer!.baseAddress!
            return offsets.map { base + $0 }
        }
    }

    /// The recorded samples of block `block` (nil before a complete recording).
    func samples(ofBlock block: Int) -> UnsafeRawPointer? {
        state.withLock { s in
            guard s.complete, let base = s.buffer?.baseAddress, s.offsets.indices.contains(block) else { return nil }
            return UnsafeRawPointer(base + s.offsets[block])
        }
    }

    func markComplete() { state.withLock { $0.complete = true } }

    /// Forgets what was recorded (a pass that failed part way).
    func discard() {
        state.withLock { s in
            s.buffer?.deallocate()
            s.buffer = nil
            s.complete = false
        }
    }
}
