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
