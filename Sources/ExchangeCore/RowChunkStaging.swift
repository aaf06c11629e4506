import Synchronization

/// The chunks of rows a streaming writer fills: one buffer of `samplesPerChunk` halves per
/// chunk being filled (made on first use, reused from a pool once its chunk is written), and
/// how many pixels of each chunk are done.
package final class RowChunkStaging: Sendable {
    package let width: Int, height: Int, linesPerChunk: Int
    package let samplesPerChunk: Int
    package let chunkCount: Int

    private struct State {
        /// The buffer of each chunk being filled (nil: not started, or written).
        var buffers: [UnsafeMutablePointer<Float16>?]
        /// Pixels of each chunk finished.
        var filled: [Int]
        /// Buffers of written chunks, for the next ones.
        var free: [UnsafeMutablePointer<Float16>] = []
    }

    private let state: Mutex<State>

    package init(width: Int, height: Int, linesPerChunk: Int, samplesPerChunk: Int) {
        self.width = width
        self.height = height
        self.linesPerChunk = linesPerChunk
        self.samplesPerChunk = samplesPerChunk
        let count = (height + linesPerChunk - 1) / linesPerChunk
        chunkCount = count
        state = Mutex(State(buffers: [UnsafeMutablePointer<Float16>?](repeating: nil, count: count),
                            filled: [Int](repeating: 0, count: count)))
    }

    deinit {
        state.withLock { s in
            for buffer in s.buffers { buffer?.deallocate() }
            for buffer in s.free { buffer.deallocate() }
        }
    }

    /// Rows of chunk `c`.
    package func rows(of c: Int) -> Range<Int> { (c * linesPerChunk)..<min(height, (c + 1) * linesPerChunk) }

    /// The buffers of the chunks holding rows `rows`, made as needed.
    package func rows(_ rows: Range<Int>, clipHalves: Int?, clipBytes: UnsafeMutablePointer<UInt8>?) -> StreamingRows {
        precondition(rows.lowerBound >= 0 && rows.upperBound <= height && !rows.isEmpty)
        let first = rows.lowerBound / linesPerChunk, last = (rows.upperBound - 1) / linesPerChunk
        let size = samplesPerChunk
        let bases = state.withLock { s in
            (first...last).map { c -> UnsafeMutablePointer<Float16> in
                if let b = s.buffers[c] { return b }
                let b = s.free.popLast() ?? .allocate(capacity: size)
                s.buffers[c] = b
                return b
            }
        }
        return StreamingRows(firstChunk: first, bases: bases, linesPerChunk: linesPerChunk, width: width,
                             clipHalves: clipHalves, clipBytes: clipBytes)
    }

    /// Counts `pixels` pixels of each of rows `rows` as done; returns the chunks now complete.
    package func finished(rows: Range<Int>, pixels: Int) -> [Int] {
        guard !rows.isEmpty, pixels > 0 else { return [] }
        return state.withLock { s in
            var complete: [Int] = []
            var c = rows.lowerBound / linesPerChunk
            while c * linesPerChunk < rows.upperBound {
                let lines = min(rows.upperBound, (c + 1) * linesPerChunk) - max(rows.lowerBound, c * linesPerChunk)
                s.filled[c] += lines * pixels
                let total = self.rows(of: c).count * width
                precondition(s.filled[c] <= total, "a pixel of chunk \(c) was finished twice")
                if s.filled[c] == total { complete.append(c) }
                c += 1
            }
            return complete
        }
    }

    /// The buffer of complete chunk `c`.
    package func buffer(_ c: Int) -> UnsafeMutablePointer<Float16> {
        state.withLock { $0.buffers[c]! }
    }

    /// Chunk `c` is written: its buffer goes back to the pool.
    package func recycle(_ c: Int) {
        state.withLock { s in
            if let b = s.buffers[c] { s.free.append(b) }
            s.buffers[c] = nil
        }
    }
}
