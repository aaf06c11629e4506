internal import COpenEXR
import ExchangeCore
import Foundation
import ImageCore

/// Compresses the chunks of one scanline part on several threads and writes them in
/// increasing order.
///
/// OpenEXRCore 3.1 lets every thread own an `exr_encode_pipeline_t` on the same context,
/// but `exr_write_scanline_chunk` refuses a chunk out of order unless the line order is
/// RANDOM_Y (and a random order would make the bytes depend on thread timing). So each
/// worker claims the next chunk index, runs its pipeline (pack + compress), and the
/// pipeline's `write_fn` hands the compressed bytes to `EXRWriteOrder` instead of writing
/// them. Whichever worker delivers the next chunk in order writes it and every following
/// chunk that is already waiting, with `exr_write_scanline_chunk` and exactly the
/// arguments of the library's own writer; no worker ever blocks on another's compression.
/// Claims stay at most a small window ahead of the written chunks, which bounds the
/// memory held. With one thread the library writes the chunks itself, which is the
/// reference for the byte-identity test. ZIP and ZIPS chunks are compressed by
/// `EXRZipCompressor` on every path, so the bytes do not depend on the thread count.
struct EXRChunkEncoder {
    let context: EXRContext
    let part: Int32
    let planes: EXRSourcePlanes
    /// How ZIP and ZIPS chunks are deflated; nil for the other compressions (the library's
    /// own routines).
    var zip: EXRZipCompressor.Deflater? = nil

    /// Encodes and writes every chunk of the part.
    ///
    /// - Throws: `ExchangeError` with the first failure.
    func run(threads: Int) throws {
        guard let ctxt = context.handle else { return }
        var linesPerChunk: Int32 = 0
        try context.check(exr_get_scanlines_per_chunk(ctxt, part, &linesPerChunk), "exr_get_scanlines_per_chunk")
        var chunkCount: Int32 = 0
        try context.check(exr_get_chunk_count(ctxt, part, &chunkCount), "exr_get_chunk_count")
        let workers = max(1, min(threads, Int(chunkCount)))
        // With one worker the library writes each chunk itself, so no window applies.
        let order = EXRWriteOrder(context: ctxt, part: part, total: Int(chunkCount),
                                  window: workers > 1 ? 8 * workers : nil)
        nonisolated(unsafe) let encoder = self
        nonisolated(unsafe) let handle = ctxt
        let lines = Int(linesPerChunk)
        Parallel.forEach(workers) { _ in
            encoder.work(handle, order: order, linesPerChunk: lines, ordered: workers > 1)
        }
        if let (rv, operation) = order.firstFailure {
            throw context.error(rv, operation)
        }
        guard order.allWritten else {
            throw ExchangeError(path: context.path, operation: "exr_write_scanline_chunk",
                                message: "not every chunk was written", category: .internalError)
        }
    }

    private func work(_ ctxt: exr_context_t, order: EXRWriteOrder, linesPerChunk: Int, ordered: Bool) {
        let pipe = UnsafeMutablePointer<exr_encode_pipeline_t>.allocate(capacity: 1)
        pipe.initialize(to: exr_encode_pipeline_t())
        var initialized = false
        var zip: EXRZipCompressor?
        if let deflater = self.zip {
            zip = EXRZipCompressor(deflater)
            if zip == nil { return order.fail(exr_result_t(EXR_ERR_OUT_OF_MEMORY.rawValue), "libdeflate_alloc_compressor") }
        }
        let state = EXRWorkerState(order: order, zip: zip)
        defer {
            if initialized {
                if zip != nil { EXRZipCompressor.release(pipe) }
                _ = exr_encoding_destroy(ctxt, pipe)
            }
            pipe.deallocate()
            withExtendedLifetime(state) {}
        }
        if let zip, let sources = directSources(ctxt) {
            // ZIP and ZIPS: packed, predicted and deflated here, without the pipeline.
            while let index = order.claim() {
                var chunk = exr_chunk_info_t()
                var rv = exr_write_scanline_chunk_info(ctxt, part, Int32(index * linesPerChunk), &chunk)
                guard rv == exrSuccess else { return order.fail(rv, "exr_write_scanline_chunk_info (chunk \(index))") }
                let bytes = zip.compressRows(sources, width: planes.width, y0: Int(chunk.start_y), rows: Int(chunk.height))
                if ordered {
                    rv = order.deliver(index, y: chunk.start_y, bytes: bytes)
                    guard rv == exrSuccess else { return }  // recorded by `deliver`
                } else {
                    rv = bytes.withUnsafeBytes { exr_write_scanline_chunk(ctxt, part, chunk.start_y, $0.baseAddress, UInt64($0.count)) }
                    guard rv == exrSuccess else { return order.fail(rv, "exr_write_scanline_chunk (chunk \(index))") }
                }
            }
            return
        }
        while let index = order.claim() {
            var chunk = exr_chunk_info_t()
            var rv = exr_write_scanline_chunk_info(ctxt, part, Int32(index * linesPerChunk), &chunk)
            guard rv == exrSuccess else { return order.fail(rv, "exr_write_scanline_chunk_info (chunk \(index))") }
            if initialized {
                rv = exr_encoding_update(ctxt, part, &chunk, pipe)
                guard rv == exrSuccess else { return order.fail(rv, "exr_encoding_update (chunk \(index))") }
            } else {
                rv = exr_encoding_initialize(ctxt, part, &chunk, pipe)
                guard rv == exrSuccess else { return order.fail(rv, "exr_encoding_initialize (chunk \(index))") }
                initialized = true
            }
            point(pipe, at: Int(chunk.start_y))
            if pipe.pointee.convert_and_pack_fn == nil {
                rv = exr_encoding_choose_default_routines(ctxt, part, pipe)
                guard rv == exrSuccess else {
                    return order.fail(rv, "exr_encoding_choose_default_routines (chunk \(index))")
                }
                pipe.pointee.encoding_user_data = Unmanaged.passUnretained(state).toOpaque()
                if zip != nil { pipe.pointee.compress_fn = EXRWorkerState.compressZip }
                if ordered {
                    pipe.pointee.yield_until_ready_fn = nil
                    pipe.pointee.write_fn = EXRWriteOrder.deliver
                }
            }
            rv = exr_encoding_run(ctxt, part, pipe)
            if zip != nil { EXRZipCompressor.release(pipe) }
            guard rv == exrSuccess else {
                // A failure inside `deliver` is already recorded with its own name.
                return order.fail(rv, "exr_encoding_run (chunk \(index))")
            }
        }
    }

    /// The sources of the part's channels in file order, when every channel is half float
    /// at full resolution (always so for this project's files); nil otherwise.
    private func directSources(_ ctxt: exr_context_t) -> [EXRZipCompressor.ChannelSource]? {
        var list: UnsafePointer<exr_attr_chlist_t>?
        guard exr_get_channels(ctxt, part, &list) == exrSuccess, let list, list.pointee.num_channels > 0 else { return nil }
        guard planes.bytesPerSample == 2 else { return nil }
        var sources: [EXRZipCompressor.ChannelSource] = []
        for c in 0..<Int(list.pointee.num_channels) {
            let entry = list.pointee.entries[c]
            guard entry.pixel_type == EXR_PIXEL_HALF, entry.x_sampling == 1, entry.y_sampling == 1,
                  let str = entry.name.str, let source = planes.channel(String(cString: str)) else { return nil }
            sources.append(.init(first: source.first.assumingMemoryBound(to: UInt16.self), pixelStride: source.pixelStride))
        }
        return sources
    }

    /// Points the pipeline's channels at the rows of the chunk starting at row `y`.
    private func point(_ pipe: UnsafeMutablePointer<exr_encode_pipeline_t>, at y: Int) {
        EXRSourcePlanes.point(pipe, at: planes, x: 0, y: y)
    }
}

extension EXRSourcePlanes {
    /// Points the pipeline's channels at the block of `planes` whose top-left pixel is (x, y).
    static func point(_ pipe: UnsafeMutablePointer<exr_encode_pipeline_t>, at planes: EXRSourcePlanes, x: Int, y: Int) {
        let size = planes.bytesPerSample
        for c in 0..<Int(pipe.pointee.channel_count) {
            let channel = pipe.pointee.channels + c
            let name = String(cString: channel.pointee.channel_name)
            guard let source = planes.channel(name) else { preconditionFailure("unexpected channel \(name)") }
            let start = source.first + (y * planes.width + x) * source.pixelStride * size
            channel.pointee.encode_from_ptr = start.assumingMemoryBound(to: UInt8.self)
            channel.pointee.user_pixel_stride = Int32(source.pixelStride * size)
            channel.pointee.user_line_stride = Int32(source.pixelStride * size * planes.width)
            channel.pointee.user_bytes_per_element = Int16(size)
            channel.pointee.user_data_type = UInt16((size == 2 ? EXR_PIXEL_HALF : EXR_PIXEL_FLOAT).rawValue)
        }
    }
}

/// Hands out chunk indices in increasing order, collects compressed chunks and writes
/// them strictly in index order.
final class EXRWriteOrder: @unchecked Sendable {
    typealias PipelineFunction = @convention(c) (UnsafeMutablePointer<exr_encode_pipeline_t>?) -> exr_result_t

    private let condition = NSCondition()
    private let context: exr_context_t
    private let part: Int32
    private let total: Int
    private let window: Int?
    private var nextToClaim = 0
    private var nextToWrite = 0
    private var writing = false
    private var aborted = false
    /// Compressed chunks waiting for their turn: index → (first row, bytes).
    private var waiting: [Int: (Int32, [UInt8])] = [:]
    private(set) var firstFailure: (exr_result_t, String)?

    /// `firstFailure`, read under the lock (while workers may still record one).
    var failure: (exr_result_t, String)? {
        condition.lock()
        defer { condition.unlock() }
        return firstFailure
    }

    /// `window`: how many chunks may be claimed beyond the last written one; nil when the
    /// library writes the chunks itself (one worker), so none pass through `deliver`.
    init(context: exr_context_t, part: Int32, total: Int, window: Int?) {
        self.context = context
        self.part = part
        self.total = total
        self.window = window.map { max(1, $0) }
    }

    /// True when every chunk went through `deliver` and was written, or (one worker) every
    /// chunk was claimed and no failure was recorded.
    var allWritten: Bool {
        condition.lock()
        defer { condition.unlock() }
        return window == nil ? nextToClaim == total && firstFailure == nil : nextToWrite == total
    }

    /// The next chunk to encode, or nil when all are taken or a worker failed. Waits while
    /// the claimed chunks are `window` ahead of the written ones.
    func claim() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        if let window {
            while !aborted && nextToClaim < total && nextToClaim - nextToWrite >= window { condition.wait() }
        }
        guard !aborted, nextToClaim < total else { return nil }
        nextToClaim += 1
        return nextToClaim - 1
    }

    /// Records the first failure and stops every worker.
    func fail(_ rv: exr_result_t, _ operation: String) {
        condition.lock()
        if firstFailure == nil { firstFailure = (rv, operation) }
        aborted = true
        condition.broadcast()
        condition.unlock()
    }

    /// Takes chunk `index` and, when it is the next one due and no other thread is writing,
    /// writes it and every consecutive chunk already waiting.
    func deliver(_ index: Int, y: Int32, bytes: [UInt8]) -> exr_result_t {
        condition.lock()
        waiting[index] = (y, bytes)
        guard !writing, !aborted else {
            condition.unlock()
            return exrSuccess
        }
        writing = true
        while let (row, data) = waiting.removeValue(forKey: nextToWrite) {
            condition.unlock()
            let rv = data.withUnsafeBytes { raw in
                exr_write_scanline_chunk(context, part, row, raw.baseAddress, UInt64(raw.count))
            }
            condition.lock()
            if rv != exrSuccess {
                if firstFailure == nil { firstFailure = (rv, "exr_write_scanline_chunk (chunk \(nextToWrite))") }
                aborted = true
                writing = false
                condition.broadcast()
                condition.unlock()
                return rv
            }
            nextToWrite += 1
            condition.broadcast()
        }
        writing = false
        condition.unlock()
        return exrSuccess
    }

    /// `write_fn` of the pipelines: copies the compressed chunk (what the library's own
    /// writer would pass to `exr_write_scanline_chunk`) and delivers it.
    static let deliver: PipelineFunction = { pipe in
        guard let pipe, let order = EXRWorkerState.from(pipe)?.order else {
            return exr_result_t(EXR_ERR_INVALID_ARGUMENT.rawValue)
        }
        let count = Int(pipe.pointee.compressed_bytes)
        var bytes = [UInt8](repeating: 0, count: count)
        if count > 0 {
            guard let source = pipe.pointee.compressed_buffer else { return exr_result_t(EXR_ERR_INVALID_ARGUMENT.rawValue) }
            bytes.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: source, count: count)) }
        }
        return order.deliver(Int(pipe.pointee.chunk.idx), y: pipe.pointee.chunk.start_y, bytes: bytes)
    }
}
