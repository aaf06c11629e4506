import Synchronization

/// The decoded blocks of one pass of `RawDecoder.forEachBlock`/`forEachBlockRow`, kept for
/// the passes after it over the same image: a measurement that needs a second look at the
/// pixels (exact percentiles, histograms over a range found in the first pass) develops the
/// image again from Stage 1 instead of decoding its blocks again.
///
/// The first pass given a cache records every block it decodes (each straight into a buffer
/// the cache keeps); once that pass has finished, later passes hand the recorded samples to
/// their body without reading the file. A pass that fails leaves the cache incomplete, and
/// an incomplete cache is never replayed. Nothing is recorded when the image's decoded
/// samples would take more than `capacity` bytes; every pass then decodes.
public final class DecodedBlockCache: Sendable {
    /// Bytes the recorded samples may take at most.
    public let capacity: Int
    private let state = Mutex<State>(State())

    private struct State {
        var blocks: [Int: [UInt16]] = [:]
        var complete = false
        var declined = false
    }

    public init(capacity: Int) { self.capacity = capacity }

    /// True once a whole pass has been recorded.
    public var isComplete: Bool { state.withLock { $0.complete } }

    /// Bytes held.
    public var byteCount: Int { state.withLock { $0.blocks.values.reduce(0) { $0 + $1.count * 2 } } }

    /// Whether a pass over blocks of `bytes` decoded bytes in all should record them.
    func shouldRecord(bytes: Int) -> Bool {
        state.withLock { s in
            guard !s.complete, !s.declined else { return false }
            if bytes > capacity { s.declined = true }
            return !s.declined
        }
    }

    func store(_ samples: [UInt16], block: Int) { state.withLock { $0.blocks[block] = samples } }

    func samples(ofBlock block: Int) -> [UInt16]? { state.withLock { $0.blocks[block] } }

    func markComplete() { state.withLock { $0.complete = true } }

    /// Drops what was recorded (a pass that failed part way).
    func discard() {
        state.withLock { s in
            s.blocks = [:]
            s.complete = false
        }
    }
}
