import Foundation
import ImageCore

/// A file written while its rows are being made (`EXRStreamWriter`, `HDF5StreamWriter`):
/// the producer writes each output row's half floats where `rows` points (and the clip mask,
/// when the file has it), then says which pixels it finished (`finished`); the thread that
/// completes a chunk's rows compresses the chunk at once, and the chunks are written in
/// order. `rows` and `finished` are safe to call from any thread, for disjoint pixels.
public protocol StreamingImageWriter: AnyObject, Sendable {
    var width: Int { get }
    var height: Int { get }
    /// Where the samples of output rows `rows` go.
    func rows(_ rows: Range<Int>) -> StreamingRows
    /// `pixels` pixels of each of rows `rows` are written.
    /// - Throws: the first failure of compressing or writing a chunk.
    func finished(rows: Range<Int>, pixels: Int) throws
}

/// Where the samples of some output rows go (`StreamingImageWriter.rows`).
public struct StreamingRows {
    let firstChunk: Int
    let bases: [UnsafeMutablePointer<Float16>]
    let linesPerChunk: Int, width: Int
    /// The clip mask as half floats in a chunk's buffer, from this offset (EXR), or
    let clipHalves: Int?
    /// as the clip bits of the whole image (HDF5).
    let clipBytes: UnsafeMutablePointer<UInt8>?

    /// Where row `y`'s R, G, B halves go (3 × `width`, interleaved).
    public func rgb(_ y: Int) -> UnsafeMutablePointer<Float16> {
        bases[y / linesPerChunk - firstChunk] + (y % linesPerChunk) * width * 3
    }

    /// Stores the clip mask of `count` pixels of row `y` from column `x` (nil `mask`: none
    /// clipped), when the file has one: 1 or 0 as a half float (EXR's channel), or the clip
    /// bits themselves (HDF5's `/clip_mask`).
    public func setClip(_ y: Int, from x: Int, _ mask: UnsafePointer<UInt8>?, count: Int) {
        if let clipHalves {
            let row = bases[y / linesPerChunk - firstChunk] + clipHalves + (y % linesPerChunk) * width + x
            // 1.0 (0x3C00) where a channel clipped, else 0, written as bit patterns.
            row.withMemoryRebound(to: UInt16.self, capacity: count) { bits in
                if let mask {
                    for i in 0..<count { bits[i] = mask[i] != 0 ? 0x3C00 : 0 }
                } else {
                    bits.update(repeating: 0, count: count)
                }
            }
        } else if let clipBytes {
            let row = clipBytes + y * width + x
            if let mask { row.update(from: mask, count: count) } else { row.update(repeating: 0, count: count) }
        }
    }
}

/// The chunks of rows a streaming writer fills: one buffer of `samplesPerChunk` halves per
/// chunk being filled (made on first use, reused from a pool once its chunk is written), and
/// how many pixels of each chunk are done.
package final class RowChunkStaging: @unchecked Sendable {
    package let width: Int, height: Int, linesPerChunk: Int
    package let samplesPerChunk: Int
    private let lock = NSLock()
    private var buffers: [UnsafeMutablePointer<Float16>?]
    private var filled: [Int]
    private var free: [UnsafeMutablePointer<Float16>] = []

    package init(width: Int, height: Int, linesPerChunk: Int, samplesPerChunk: Int) {
        self.width = width
        self.height = height
        self.linesPerChunk = linesPerChunk
        self.samplesPerChunk = samplesPerChunk
        let count = (height + linesPerChunk - 1) / linesPerChunk
        buffers = [UnsafeMutablePointer<Float16>?](repeating: nil, count: count)
        filled = [Int](repeating: 0, count: count)
    }

    deinit {
        for buffer in buffers { buffer?.deallocate() }
        for buffer in free { buffer.deallocate() }
    }

    package var chunkCount: Int { buffers.count }

    /// Rows of chunk `c`.
    package func rows(of c: Int) -> Range<Int> { (c * linesPerChunk)..<min(height, (c + 1) * linesPerChunk) }

    /// The buffers of the chunks holding rows `rows`, made as needed.
    package func rows(_ rows: Range<Int>, clipHalves: Int?, clipBytes: UnsafeMutablePointer<UInt8>?) -> StreamingRows {
        precondition(rows.lowerBound >= 0 && rows.upperBound <= height && !rows.isEmpty)
        let first = rows.lowerBound / linesPerChunk, last = (rows.upperBound - 1) / linesPerChunk
        lock.lock()
        let bases = (first...last).map { c -> UnsafeMutablePointer<Float16> in
            if let b = buffers[c] { return b }
            let b = free.popLast() ?? .allocate(capacity: samplesPerChunk)
            buffers[c] = b
            return b
        }
        lock.unlock()
        return StreamingRows(firstChunk: first, bases: bases, linesPerChunk: linesPerChunk, width: width,
                             clipHalves: clipHalves, clipBytes: clipBytes)
    }

    /// Counts `pixels` pixels of each of rows `rows` as done; returns the chunks now complete.
    package func finished(rows: Range<Int>, pixels: Int) -> [Int] {
        guard !rows.isEmpty, pixels > 0 else { return [] }
        var complete: [Int] = []
        lock.lock()
        defer { lock.unlock() }
        var c = rows.lowerBound / linesPerChunk
        while c * linesPerChunk < rows.upperBound {
            let lines = min(rows.upperBound, (c + 1) * linesPerChunk) - max(rows.lowerBound, c * linesPerChunk)
            filled[c] += lines * pixels
            let total = self.rows(of: c).count * width
            precondition(filled[c] <= total, "a pixel of chunk \(c) was finished twice")
            if filled[c] == total { complete.append(c) }
            c += 1
        }
        return complete
    }

    /// The buffer of complete chunk `c`.
    package func buffer(_ c: Int) -> UnsafeMutablePointer<Float16> {
        lock.lock()
        defer { lock.unlock() }
        return buffers[c]!
    }

    /// Chunk `c` is written: its buffer goes back to the pool.
    package func recycle(_ c: Int) {
        lock.lock()
        if let b = buffers[c] { free.append(b) }
        buffers[c] = nil
        lock.unlock()
    }
}
