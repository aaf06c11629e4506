internal import CDeflate
internal import COpenEXR
import Foundation
internal import RunLengthDeflate

/// ZIP / ZIPS chunk compression for EXR files without the library's zlib.
///
/// The byte stream is exactly what the EXR ZIP compression defines, so every reader
/// decodes it with zlib: the packed chunk's bytes are split into two halves (bytes at even
/// positions, then at odd positions), each byte after the first is replaced by its
/// difference from the previous one plus 128 (mod 256), and the result is deflated into a
/// zlib stream (header and Adler-32). A chunk that would not get smaller is stored as it
/// was packed, as the format prescribes. The deflating is done by `RunLengthDeflater` by
/// default (about twice as fast as libdeflate's fastest level, and a little smaller) or
/// by libdeflate at a chosen level (docs/performance.md).
///
/// One compressor per worker thread (neither encoder is shared between threads); the
/// compressed bytes live in this object's buffer, which the pipeline only borrows until
/// the chunk is written.
final class EXRZipCompressor {
    /// Which deflate encoder compresses the chunks.
    enum Deflater {
        /// `RunLengthDeflater` (the default).
        case runLength
        /// libdeflate at this level (0 = stored, 1 fastest … 12 smallest).
        case libdeflate(level: Int)
    }

    private enum Engine {
        case runLength(RunLengthDeflater)
        case libdeflate(OpaquePointer)
    }

    private let engine: Engine
    private var scratch = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var output = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    /// A compressor with `deflater`; nil when libdeflate cannot allocate one.
    init?(_ deflater: Deflater) {
        switch deflater {
        case .runLength:
            engine = .runLength(RunLengthDeflater())
        case .libdeflate(let level):
            guard let c = libdeflate_alloc_compressor(Int32(level)) else { return nil }
            engine = .libdeflate(c)
        }
    }

    deinit {
        if case .libdeflate(let c) = engine { libdeflate_free_compressor(c) }
        scratch.deallocate()
        output.deallocate()
    }

    private static func grow(_ buffer: inout UnsafeMutableRawBufferPointer, to count: Int) {
        guard buffer.count < count else { return }
        buffer.deallocate()
        buffer = .allocate(byteCount: count, alignment: 16)
    }

    /// Compresses the pipeline's packed bytes into this object's buffer and points the
    /// pipeline's compressed buffer at it.
    func compress(_ pipe: UnsafeMutablePointer<exr_encode_pipeline_t>) -> exr_result_t {
        let n = Int(pipe.pointee.packed_bytes)
        guard n > 0, let packed = pipe.pointee.packed_buffer else { return exr_result_t(EXR_ERR_INVALID_ARGUMENT.rawValue) }
        Self.grow(&scratch, to: n)
        let bound: Int
        switch engine {
        case .runLength: bound = RunLengthDeflater.zlibBound(n)
        case .libdeflate(let c): bound = libdeflate_zlib_compress_bound(c, n)
        }
        Self.grow(&output, to: max(bound, n))
        let source = packed.assumingMemoryBound(to: UInt8.self)
        let t = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
        // Split: even positions to the first half, odd positions to the second.
        let half = (n + 1) / 2
        for i in 0..<(n / 2) {
            t[i] = source[2 * i]
            t[half + i] = source[2 * i + 1]
        }
        if n % 2 == 1 { t[half - 1] = source[n - 1] }
        // Differences, from the end so each byte still sees its original predecessor.
        var i = n - 1
        while i > 0 {
            t[i] = t[i] &- t[i - 1] &+ 128
            i -= 1
        }
        var size: Int
        switch engine {
        case .runLength(let deflater):
            size = deflater.zlibCompress(t, count: n, into: output.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                         capacity: output.count)
        case .libdeflate(let c):
            size = libdeflate_zlib_compress(c, scratch.baseAddress, n, output.baseAddress, output.count)
        }
        if size == 0 || size >= n {
            output.baseAddress!.copyMemory(from: packed, byteCount: n)
            size = n
        }
        pipe.pointee.compressed_buffer = output.baseAddress
        pipe.pointee.compressed_alloc_size = output.count
        pipe.pointee.compressed_bytes = size
        return exrSuccess
    }

    /// Detaches this object's buffer from the pipeline before the library reuses or frees
    /// the pipeline's own buffers.
    static func release(_ pipe: UnsafeMutablePointer<exr_encode_pipeline_t>) {
        pipe.pointee.compressed_buffer = nil
        pipe.pointee.compressed_alloc_size = 0
    }
}

/// What one encoding worker's pipeline carries as its user data: the write order (when
/// chunks are written in order by the workers) and its ZIP compressor (for ZIP and ZIPS).
final class EXRWorkerState {
    let order: EXRWriteOrder
    let zip: EXRZipCompressor?

    init(order: EXRWriteOrder, zip: EXRZipCompressor?) {
        self.order = order
        self.zip = zip
    }

    static func from(_ pipe: UnsafeMutablePointer<exr_encode_pipeline_t>) -> EXRWorkerState? {
        guard let data = pipe.pointee.encoding_user_data else { return nil }
        return Unmanaged<EXRWorkerState>.fromOpaque(data).takeUnretainedValue()
    }

    /// `compress_fn` of the ZIP and ZIPS pipelines.
    static let compressZip: EXRWriteOrder.PipelineFunction = { pipe in
        guard let pipe, let zip = from(pipe)?.zip else { return exr_result_t(EXR_ERR_INVALID_ARGUMENT.rawValue) }
        return zip.compress(pipe)
    }
}
