internal import COpenEXR
import ExchangeCore
import Foundation
import ImageCore
import Synchronization

/// Writes the chunks of a single-part scanline EXR: the one route by which this module writes
/// scanline files, whether the image is given whole (`EXRFile.write`: `writeAll`) or its rows
/// arrive as they are made (`EXRStreamWriter`: `encode` as each chunk completes).
///
/// Each chunk is compressed on the thread that hands it over, by an `EXRChunkCompressor` taken
/// from a pool, and goes to an `OrderedChunkSink`, which writes the chunks in increasing order
/// with `exr_write_scanline_chunk` and exactly the arguments of the library's own writer.
/// OpenEXRCore 3.1 lets every thread own an encode pipeline on the same context but refuses
/// a chunk out of order unless the line order is RANDOM_Y (which would make the bytes depend
/// on thread timing), hence the sink. ZIP and ZIPS chunks of half-float channels are packed,
/// predicted and deflated straight from their rows (`EXRZipCompressor.compressRows`); every
/// other chunk runs through the library's pipeline, with `EXRZipCompressor` deflating ZIP and
/// ZIPS and the compressed bytes taken from the pipeline instead of written by it. So a file's
/// bytes depend neither on the thread count nor on how its rows arrived.
// Safe because the context's chunk calls come one at a time from the sink's writer, each pipeline belongs to one thread at a time, and the rest is immutable or behind a Mutex.
final class EXRScanlineWriter: @unchecked Sendable {
    /// The file errors name.
    let path: String
    let width: Int, height: Int
    /// Scanlines per chunk (16 for ZIP, 1 for ZIPS, 32 for PIZ, ...).
    let linesPerChunk: Int
    let chunkCount: Int

    /// How chunks are compressed.
    enum Codec {
        /// ZIP or ZIPS from the rows of half-float channels (`compressRows`).
        case zipRows(EXRZipCompressor.Deflater)
        /// The library's pipeline; ZIP and ZIPS deflated by `EXRZipCompressor`.
        case pipeline(zip: EXRZipCompressor.Deflater?)
    }

    fileprivate let context: EXRContext
    fileprivate let part: Int32
    fileprivate let codec: Codec
    /// The file's channel names in file order.
    fileprivate let channels: [String]
    private let sink: OrderedChunkSink<[UInt8]>
    /// Compressors not in use.
    private let idle = Mutex<[EXRChunkCompressor]>([])

    /// Creates `file` and writes its header: channels R, G, B then `extraNames`, `attributes`,
    /// the compression and pixel type of `options` (scanlines: `options.tiling` is ignored).
    /// Errors name `path`.
    init(file: String, reportedAs path: String, width: Int, height: Int, extraNames: [String],
         attributes: [(String, EXRAttributeValue)], options: EXROptions) throws {
        self.path = path
        self.width = width
        self.height = height
        var scanline = options
        scanline.tiling = nil
        let context = try reportingDestination(path) { try EXRContext.create(file) }
        let part = try reportingDestination(path) {
            try EXRFile.writeHeader(context, width: width, height: height, extraNames: extraNames,
                                    attributes: attributes, options: scanline)
        }
        self.context = context
        self.part = part
        guard let ctxt = context.handle else {
            throw ExchangeError(path: path, operation: "exr_start_write", message: "no context", category: .internalError)
        }
        var lines: Int32 = 0
        try Self.check(context, exr_get_scanlines_per_chunk(ctxt, part, &lines), "exr_get_scanlines_per_chunk", path)
        var count: Int32 = 0
        try Self.check(context, exr_get_chunk_count(ctxt, part, &count), "exr_get_chunk_count", path)
        linesPerChunk = Int(lines)
        chunkCount = Int(count)
        guard linesPerChunk > 0, chunkCount == (height + linesPerChunk - 1) / linesPerChunk else {
            throw ExchangeError(path: path, operation: "exr_get_chunk_count",
                                message: "\(count) chunks of \(lines) lines for \(height) rows", category: .internalError)
        }
        var list: UnsafePointer<exr_attr_chlist_t>?
        try Self.check(context, exr_get_channels(ctxt, part, &list), "exr_get_channels", path)
        var names: [String] = [], allHalf = true
        for c in 0..<Int(list?.pointee.num_channels ?? 0) {
            let entry = list!.pointee.entries[c]
            names.append(entry.name.str.map { String(cString: $0) } ?? "")
            allHalf = allHalf && entry.pixel_type == EXR_PIXEL_HALF && entry.x_sampling == 1 && entry.y_sampling == 1
        }
        channels = names
        if let deflater = options.deflater {
            codec = allHalf && !names.isEmpty ? .zipRows(deflater) : .pipeline(zip: deflater)
        } else {
            codec = .pipeline(zip: nil)
        }
        sink = OrderedChunkSink(count: chunkCount)
    }

    deinit {
        releaseCompressors()
    }

    /// Rows of chunk `c`.
    func rows(of c: Int) -> Range<Int> { (c * linesPerChunk)..<min(height, (c + 1) * linesPerChunk) }

    /// Every chunk from `planes` (the whole image, row 0 first), compressed on up to `threads`
    /// threads, each claiming the next chunk while fewer than 8 per thread wait to be written.
    /// A failure is kept for `finish`.
    func writeAll(from planes: EXRSourcePlanes, threads: Int) {
        let workers = max(1, min(threads, chunkCount))
        Parallel.forEach(workers) { _ in
            while let c = self.sink.claim(window: 8 * workers) {
                self.encode(c, from: planes, firstRow: 0)
            }
        }
    }

    /// Compresses chunk `c` from `planes`, whose row 0 is file row `firstRow`, and hands it to
    /// the sink, which writes it in its turn. The first failure is kept (`check`, `finish`).
    func encode(_ c: Int, from planes: EXRSourcePlanes, firstRow: Int) {
        let bytes: [UInt8]
        do {
            let compressor = try takeCompressor()
            defer { idle.withLock { $0.append(compressor) } }
            bytes = try compressor.compress(c, rows: rows(of: c), from: planes, firstRow: firstRow, in: self)
        } catch {
            return sink.fail(error)
        }
        sink.deliver(c, bytes) { index, data in
            guard let ctxt = context.handle else {
                throw ExchangeError(path: path, operation: "exr_write_scanline_chunk", message: "no context", category: .internalError)
            }
            let rv = data.withUnsafeBytes { raw in
                exr_write_scanline_chunk(ctxt, part, Int32(index * linesPerChunk), raw.baseAddress, UInt64(raw.count))
            }
            if rv != exrSuccess { throw error(rv, "exr_write_scanline_chunk (chunk \(index))") }
        }
    }

    /// Throws the first failure of compressing or writing a chunk, if any.
    func check() throws {
        try sink.check()
    }

    /// Completes the file once every chunk was handed over: the chunk table is written.
    /// - Throws: `ExchangeError` with the first failure, when a chunk is missing, or when
    ///   `exr_finish` fails.
    func finish() throws {
        try sink.check()
        guard sink.isComplete else {
            throw ExchangeError(path: path, operation: "exr_write_scanline_chunk",
                                message: "not every chunk was written", category: .internalError)
        }
        releaseCompressors()
        try reportingDestination(path) { try context.finish() }
    }

    /// The error of a failed library call, with the context's messages, naming `path`.
    func error(_ rv: exr_result_t, _ operation: String) -> ExchangeError {
        var error = context.error(rv, operation)
        error.path = path
        return error
    }

    private static func check(_ context: EXRContext, _ rv: exr_result_t, _ operation: String, _ path: String) throws {
        try reportingDestination(path) { try context.check(rv, operation) }
    }

    /// The file being written (a temporary name, for `path`).
    var filePath: String { context.path }

    private func takeCompressor() throws -> EXRChunkCompressor {
        if let compressor = idle.withLock({ $0.popLast() }) { return compressor }
        let deflater: EXRZipCompressor.Deflater?
        switch codec {
        case .zipRows(let d): deflater = d
        case .pipeline(let d): deflater = d
        }
        guard let compressor = EXRChunkCompressor(deflater: deflater) else {
            throw error(exr_result_t(EXR_ERR_OUT_OF_MEMORY.rawValue), "libdeflate_alloc_compressor")
        }
        return compressor
    }

    /// The pipelines go before the context: they belong to it.
    private func releaseCompressors() {
        let all = idle.withLock { idle in
            defer { idle = [] }
            return idle
        }
        for compressor in all { compressor.release(context.handle) }
    }
}

/// Compresses chunks for an `EXRScanlineWriter`, on one thread at a time: with its own
/// `EXRZipCompressor` for ZIP and ZIPS, and with its own encode pipeline on the writer's
/// context when chunks go through the library.
// Safe because a compressor is used by one thread at a time: taken from its writer's pool for one chunk, then put back.
final class EXRChunkCompressor: @unchecked Sendable {
    typealias PipelineFunction = @convention(c) (UnsafeMutablePointer<exr_encode_pipeline_t>?) -> exr_result_t

    let zip: EXRZipCompressor?
    /// The library's encode pipeline, made for the first chunk that needs it.
    private var pipe: UnsafeMutablePointer<exr_encode_pipeline_t>?
    private var initialized = false
    /// The compressed chunk the pipeline's `write_fn` took.
    private var captured: [UInt8] = []

    /// nil when libdeflate cannot allocate a compressor.
    init?(deflater: EXRZipCompressor.Deflater?) {
        if let deflater {
            guard let zip = EXRZipCompressor(deflater) else { return nil }
            self.zip = zip
        } else {
            zip = nil
        }
    }

    deinit {
        pipe?.deallocate()
    }

    /// Chunk `index`, file rows `rows`, from `planes` (row 0 at file row `firstRow`), as the
    /// bytes `exr_write_scanline_chunk` takes.
    /// - Throws: `ExchangeError` naming the writer's path when the library fails.
    func compress(_ index: Int, rows: Range<Int>, from planes: EXRSourcePlanes, firstRow: Int,
                  in writer: EXRScanlineWriter) throws -> [UInt8] {
        if case .zipRows = writer.codec, let zip, planes.bytesPerSample == 2 {
            let sources = writer.channels.map { name -> EXRZipCompressor.ChannelSource in
                guard let source = planes.channel(name) else { preconditionFailure("no source for channel \(name)") }
                return .init(first: source.first.assumingMemoryBound(to: UInt16.self), pixelStride: source.pixelStride)
            }
            return zip.compressRows(sources, width: planes.width, y0: rows.lowerBound - firstRow, rows: rows.count)
        }
        return try runPipeline(index, row: rows.lowerBound, from: planes, firstRow: firstRow, in: writer)
    }

    /// The chunk through the library's pipeline, its `write_fn` keeping the bytes here.
    private func runPipeline(_ index: Int, row: Int, from planes: EXRSourcePlanes, firstRow: Int,
                             in writer: EXRScanlineWriter) throws -> [UInt8] {
        guard let ctxt = writer.context.handle else {
            throw ExchangeError(path: writer.path, operation: "exr_encoding_run", message: "no context", category: .internalError)
        }
        let part = writer.part
        func check(_ rv: exr_result_t, _ operation: String) throws {
            if rv != exrSuccess { throw writer.error(rv, operation + " (chunk \(index))") }
        }
        var chunk = exr_chunk_info_t()
        try check(exr_write_scanline_chunk_info(ctxt, part, Int32(row), &chunk), "exr_write_scanline_chunk_info")
        let pipe = self.pipe ?? {
            let made = UnsafeMutablePointer<exr_encode_pipeline_t>.allocate(capacity: 1)
            made.initialize(to: exr_encode_pipeline_t())
            self.pipe = made
            return made
        }()
        if initialized {
            try check(exr_encoding_update(ctxt, part, &chunk, pipe), "exr_encoding_update")
        } else {
            try check(exr_encoding_initialize(ctxt, part, &chunk, pipe), "exr_encoding_initialize")
            initialized = true
        }
        EXRSourcePlanes.point(pipe, at: planes, x: 0, y: Int(chunk.start_y) - firstRow)
        if pipe.pointee.convert_and_pack_fn == nil {
            try check(exr_encoding_choose_default_routines(ctxt, part, pipe), "exr_encoding_choose_default_routines")
            pipe.pointee.encoding_user_data = Unmanaged.passUnretained(self).toOpaque()
            if zip != nil { pipe.pointee.compress_fn = Self.compressZip }
            pipe.pointee.yield_until_ready_fn = nil
            pipe.pointee.write_fn = Self.capture
        }
        let rv = exr_encoding_run(ctxt, part, pipe)
        if zip != nil { EXRZipCompressor.release(pipe) }
        try check(rv, "exr_encoding_run")
        defer { captured = [] }
        return captured
    }

    /// Destroys the pipeline (before its context is finished).
    func release(_ ctxt: exr_context_t?) {
        guard let pipe, initialized else { return }
        if zip != nil { EXRZipCompressor.release(pipe) }
        if let ctxt { _ = exr_encoding_destroy(ctxt, pipe) }
        initialized = false
    }

    private static func from(_ pipe: UnsafeMutablePointer<exr_encode_pipeline_t>) -> EXRChunkCompressor? {
        guard let data = pipe.pointee.encoding_user_data else { return nil }
        return Unmanaged<EXRChunkCompressor>.fromOpaque(data).takeUnretainedValue()
    }

    /// `compress_fn` of the ZIP and ZIPS pipelines.
    private static let compressZip: PipelineFunction = { pipe in
        guard let pipe, let zip = from(pipe)?.zip else { return exr_result_t(EXR_ERR_INVALID_ARGUMENT.rawValue) }
        return zip.compress(pipe)
    }

    /// `write_fn` of the pipelines: keeps a copy of the compressed chunk (what the library's
    /// own writer would pass to `exr_write_scanline_chunk`) for the sink.
    private static let capture: PipelineFunction = { pipe in
        guard let pipe, let compressor = from(pipe) else { return exr_result_t(EXR_ERR_INVALID_ARGUMENT.rawValue) }
        let count = Int(pipe.pointee.compressed_bytes)
        guard count > 0 else {
            compressor.captured = []
            return exrSuccess
        }
        guard let source = pipe.pointee.compressed_buffer else { return exr_result_t(EXR_ERR_INVALID_ARGUMENT.rawValue) }
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: source, count: count)) }
        compressor.captured = bytes
        return exrSuccess
    }
}
