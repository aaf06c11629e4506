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
/// default (about three times as fast as libdeflate's fastest level, and a little smaller) or
/// by libdeflate at a chosen level (docs/performance.md).
///
/// Used by one thread at a time (an `EXRChunkCompressor` owns it; neither encoder is shared
/// between threads); the compressed bytes of `compress` live in this object's buffer, which
/// the pipeline only borrows until its `write_fn` copies the chunk.
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
    /// One channel row of samples for `compressRows`, after the sample before it.
    private var rowScratch = UnsafeMutableRawBufferPointer(start: nil, count: 0)

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
        rowScratch.deallocate()
    }

    private static func grow(_ buffer: inout UnsafeMutableRawBufferPointer, to count: Int) {
        guard buffer.count < count else { return }
        buffer.deallocate()
        buffer = .allocate(byteCount: count, alignment: 16)
    }

    /// The most bytes `deflate` writes for `count` input bytes.
    private func bound(_ count: Int) -> Int {
        switch engine {
        case .runLength: return RunLengthDeflater.zlibBound(count)
        case .libdeflate(let c): return libdeflate_zlib_compress_bound(c, count)
        }
    }

    /// The zlib stream of `count` predicted bytes, written to `output`; its size, or 0 when
    /// it is not smaller than the input (or does not fit), and the chunk is to be stored.
    private func deflate(_ input: UnsafePointer<UInt8>, count: Int, into output: UnsafeMutablePointer<UInt8>,
                         capacity: Int) -> Int {
        let size: Int
        switch engine {
        case .runLength(let deflater): size = deflater.zlibCompress(input, count: count, into: output, capacity: capacity)
        case .libdeflate(let c): size = libdeflate_zlib_compress(c, input, count, output, capacity)
        }
        return size < count ? size : 0
    }

    /// Compresses the pipeline's packed bytes into this object's buffer and points the
    /// pipeline's compressed buffer at it.
    func compress(_ pipe: UnsafeMutablePointer<exr_encode_pipeline_t>) -> exr_result_t {
        let n = Int(pipe.pointee.packed_bytes)
        guard n > 0, let packed = pipe.pointee.packed_buffer else { return exr_result_t(EXR_ERR_INVALID_ARGUMENT.rawValue) }
        Self.grow(&scratch, to: n)
        Self.grow(&output, to: max(bound(n), n))
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
        var size = deflate(t, count: n, into: output.baseAddress!.assumingMemoryBound(to: UInt8.self), capacity: output.count)
        if size == 0 {
            output.baseAddress!.copyMemory(from: packed, byteCount: n)
            size = n
        }
        pipe.pointee.compressed_buffer = output.baseAddress
        pipe.pointee.compressed_alloc_size = output.count
        pipe.pointee.compressed_bytes = size
        return exrSuccess
    }

    /// Where one channel's half floats come from: the first sample of the image and the
    /// distance, in samples, from one pixel to the next (3 for R, G, B; 1 for a plane).
    struct ChannelSource {
        let first: UnsafePointer<UInt16>
        let pixelStride: Int
    }

    /// Compresses rows `y0 ..< y0 + rows` (`width` pixels each) of half-float channels
    /// straight from their sources, without the library's packing pass: the packed order
    /// (row by row, each row channel after channel) is read once, and each sample's low
    /// byte goes to the first half and its high byte to the second, already as differences
    /// from the byte before it — the ZIP predictor in one pass. A chunk that would not get
    /// smaller is stored packed, as the format prescribes.
    /// - Returns: the chunk's bytes, in a new array (handed to the writer as they are).
    func compressRows(_ channels: [ChannelSource], width: Int, y0: Int, rows: Int) -> [UInt8] {
        let halves = rows * channels.count * width, n = 2 * halves
        guard n > 0 else { return [] }
        Self.grow(&scratch, to: n)
        Self.grow(&rowScratch, to: 2 * (width + 1))
        let t = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let low = t, high = t + halves
        // Each channel row is copied after the sample that precedes it in packed order, so
        // that the differences of 16 samples come from two overlapping vector loads: the
        // low byte of a − b is the difference of the low bytes, and likewise for the high
        // bytes after a shift.
        let samples = rowScratch.baseAddress!.assumingMemoryBound(to: UInt16.self)
        var previous: UInt16 = 0
        var j = 0
        for y in y0..<(y0 + rows) {
            for channel in channels {
                let stride = channel.pixelStride
                let row = channel.first + y &* width &* stride
                samples[0] = previous
                if stride == 1 {
                    (samples + 1).update(from: row, count: width)
                } else {
                    for x in 0..<width { samples[x &+ 1] = row[x &* stride] }
                }
                previous = samples[width]
                var x = 0
                while x &+ 16 <= width {
                    let a = UnsafeRawPointer(samples + (x &+ 1)).loadUnaligned(as: SIMD16<UInt16>.self)
                    let b = UnsafeRawPointer(samples + x).loadUnaligned(as: SIMD16<UInt16>.self)
                    let lowDifferences = SIMD16<UInt8>(truncatingIfNeeded: (a &- b) &+ 128)
                    let highDifferences = SIMD16<UInt8>(truncatingIfNeeded: ((a &>> 8) &- (b &>> 8)) &+ 128)
                    UnsafeMutableRawPointer(low + (j &+ x)).storeBytes(of: lowDifferences, as: SIMD16<UInt8>.self)
                    UnsafeMutableRawPointer(high + (j &+ x)).storeBytes(of: highDifferences, as: SIMD16<UInt8>.self)
                    x &+= 16
                }
                while x < width {
                    let a = samples[x &+ 1], b = samples[x]
                    low[j &+ x] = UInt8(truncatingIfNeeded: (a &- b) &+ 128)
                    high[j &+ x] = UInt8(truncatingIfNeeded: ((a &>> 8) &- (b &>> 8)) &+ 128)
                    x &+= 1
                }
                j &+= width
            }
        }
        // The first byte is kept as it is (it was written less a zero byte, plus 128), and
        // the high half's first byte follows the low half's last one, the low byte of the
        // last sample (`previous`), not a zero.
        low[0] = low[0] &- 128
        high[0] = high[0] &- UInt8(truncatingIfNeeded: previous)
        return [UInt8](unsafeUninitializedCapacity: max(bound(n), n)) { out, count in
            let o = out.baseAddress!
            count = deflate(t, count: n, into: o, capacity: out.count)
            if count == 0 {
                // Stored: the packed bytes, little-endian halves in packed order.
                var k = 0
                for y in y0..<(y0 + rows) {
                    for channel in channels {
                        let row = channel.first + y * width * channel.pixelStride
                        for x in 0..<width {
                            let v = row[x * channel.pixelStride]
                            o[k] = UInt8(truncatingIfNeeded: v)
                            o[k + 1] = UInt8(truncatingIfNeeded: v >> 8)
                            k += 2
                        }
                    }
                }
                count = n
            }
        }
    }

    /// Detaches this object's buffer from the pipeline before the library reuses or frees
    /// the pipeline's own buffers.
    static func release(_ pipe: UnsafeMutablePointer<exr_encode_pipeline_t>) {
        pipe.pointee.compressed_buffer = nil
        pipe.pointee.compressed_alloc_size = 0
    }
}
