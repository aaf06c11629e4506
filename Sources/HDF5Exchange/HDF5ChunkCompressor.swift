internal import CHDF5
internal import CZlib
import ExchangeCore
import Foundation
import ImageCore
internal import RunLengthDeflate

/// Writes a chunked, deflated dataset with its chunks compressed on all cores.
///
/// Each chunk (`rows × rowElements` elements of `elementSize` bytes, zero-padded past the
/// last row like HDF5 pads edge chunks with the fill value 0) is byte-shuffled when asked
/// (HDF5's shuffle filter: all first bytes, then all second bytes, ...) and compressed with
/// `compress2(level)`, as the dataset's filter pipeline (shuffle, deflate) would do, or with
/// `RunLengthDeflater` when `level` is nil, then written unchanged with `H5Dwrite_chunk`.
/// Batches of chunks are compressed in parallel and written in order from the calling
/// thread, which holds the HDF5 lock.
struct HDF5ChunkCompressor {
    let session: HDF5Session
    /// zlib level; nil for `RunLengthDeflater`.
    let level: Int?
    let shuffle: Bool
    let elementSize: Int
    /// Elements per pixel (3 for interleaved RGB): `RunLengthDeflater` also matches each
    /// byte against the same byte of the previous pixel.
    var elementsPerPixel = 1

    /// - Parameters:
    ///   - data: the whole dataset, row-major, `totalRows × rowElements` elements.
    ///   - chunkRows: rows per chunk; chunk offsets are `[row, 0, ...]` with `rank` entries.
    /// - Throws: `ExchangeError` when compression or `H5Dwrite_chunk` fails.
    func write(_ dataset: H5Handle, data: UnsafeRawBufferPointer, totalRows: Int, rowElements: Int, chunkRows: Int,
               rank: Int) throws {
        let chunkCount = (totalRows + chunkRows - 1) / chunkRows
        let chunkBytes = chunkRows * rowElements * elementSize
        let batch = max(1, 4 * Parallel.threadCount)
        // Safe because the workers only read the dataset's bytes, which the caller keeps during the write.
        nonisolated(unsafe) let source = data
        let me = self
        var start = 0
        while start < chunkCount {
            let indices = start..<min(chunkCount, start + batch)
            let compressed = try Parallel.map(indices.count) { i -> [UInt8] in
                let chunk = indices.lowerBound + i
                let firstByte = chunk * chunkBytes
                let available = min(chunkBytes, source.count - firstByte)
                return try me.compress(UnsafeRawBufferPointer(rebasing: source[firstByte..<(firstByte + available)]),
                                       chunkBytes: chunkBytes)
            }
            for (i, bytes) in compressed.enumerated() {
                var offset = [hsize_t](repeating: 0, count: rank)
                offset[0] = hsize_t((indices.lowerBound + i) * chunkRows)
                try bytes.withUnsafeBytes { raw in
                    try session.check(H5Dwrite_chunk(dataset.id, chdf5_P_DEFAULT(), 0, offset, raw.count, raw.baseAddress),
                                      "H5Dwrite_chunk")
                }
            }
            start = indices.upperBound
        }
    }

    /// One chunk through shuffle and deflate; `part` may be shorter than the chunk (edge).
    func compress(_ part: UnsafeRawBufferPointer, chunkBytes: Int) throws -> [UInt8] {
        var input = [UInt8](repeating: 0, count: chunkBytes)
        input.withUnsafeMutableBytes { dst in
            if shuffle && elementSize > 1 {
                let n = chunkBytes / elementSize
                let src = part.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let out = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let filled = part.count / elementSize, size = elementSize
                for b in 0..<size {
                    let plane = out + b &* n, from = src + b
                    for e in 0..<filled { plane[e] = from[e &* size] }
                }
            } else {
                dst.copyMemory(from: part)
            }
        }
        guard let level else {
            // A pixel's span in the bytes deflated: its elements within one shuffled byte plane,
            // else its bytes (matches reach at most 4 bytes back).
            let pixelSpan = shuffle && elementSize > 1 ? elementsPerPixel : elementsPerPixel * elementSize
            let deflater = RunLengthDeflater(period: pixelSpan <= 4 ? pixelSpan : 1)
            var output = [UInt8](repeating: 0, count: RunLengthDeflater.zlibBound(chunkBytes))
            let size = input.withUnsafeBufferPointer { src in
                output.withUnsafeMutableBufferPointer { dst in
                    deflater.zlibCompress(src.baseAddress!, count: chunkBytes, into: dst.baseAddress!, capacity: dst.count)
                }
            }
            output.removeLast(output.count - size)
            return output
        }
        var capacity = compressBound(UInt(chunkBytes))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let status = input.withUnsafeBufferPointer { src in
            output.withUnsafeMutableBufferPointer { dst in
                compress2(dst.baseAddress, &capacity, src.baseAddress, UInt(chunkBytes), Int32(level))
            }
        }
        guard status == Z_OK else {
            throw ExchangeError(path: session.path, operation: "compress2", message: "zlib status \(status)",
                                category: .outputFailure)
        }
        output.removeLast(output.count - Int(capacity))
        return output
    }
}
