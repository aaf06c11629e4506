internal import COpenEXR
import ExchangeCore
import Foundation
import ImageCore

extension EXROptions {
    /// How ZIP and ZIPS chunks are deflated (nil for the other compressions).
    var deflater: EXRZipCompressor.Deflater? {
        guard compression == .zip || compression == .zips else { return nil }
        return zipLevel.map { .libdeflate(level: $0) } ?? .runLength
    }

    /// Whether `EXRStreamWriter` writes files with these options: half-float scanline files
    /// compressed with ZIP or ZIPS (the default). The others are written whole by `EXRFile.write`.
    public var isStreamable: Bool {
        pixelType == .half && tiling == nil && deflater != nil
    }
}

/// Writes a scanline EXR while its rows are being made (`StreamingImageWriter`), with no
/// image-sized buffer: the thread that completes a chunk's rows compresses the chunk at
/// once (`EXRZipCompressor`, exactly as `EXRFile.write` does) and the chunks are written in
/// increasing order (`EXRWriteOrder`), each chunk's buffer returned to a pool for the next
/// one. The result is the file `EXRFile.write` makes of the same image, byte for byte.
///
/// The header goes first, so everything it records must be known before the first row:
/// the source's SHA-256, computed meanwhile, is written as a placeholder of the same length
/// and set afterwards in place (`finish`). The semantic mask layers (alpha and
/// `mask_<name>` channels) are given whole at the start; their rows are converted to half
/// with each chunk.
public final class EXRStreamWriter: StreamingImageWriter, @unchecked Sendable {
    public let width: Int
    public let height: Int
    /// Scanlines per chunk: 16 (ZIP) or 1 (ZIPS).
    public let linesPerChunk: Int

    private let context: EXRContext
    private let order: EXRWriteOrder
    private let deflater: EXRZipCompressor.Deflater
    /// A chunk's buffer holds RGB interleaved (3 halves a pixel), then one plane per extra
    /// channel, each `linesPerChunk × width` halves.
    private let staging: RowChunkStaging
    /// The file's channels in file order, each as (plane index in the chunk buffer, or −1 for
    /// R/G/B with its offset in the interleaved pixel).
    private let channelOrder: [(plane: Int, rgbOffset: Int)]
    /// The extra channels' sources: a mask layer's values, or the clip mask (nil).
    private let extraSources: [[Float]?]
    /// Where the clip mask plane starts in a chunk's buffer (nil without one).
    private let clipHalves: Int?
    private let lock = NSLock()
    private var compressors: [EXRZipCompressor] = []
    private let path: String

    /// Creates the file at `temporaryPath` (the caller renames it into place) and writes its
    /// header; errors name `path`.
    ///
    /// - Parameters:
    ///   - description: the image's size, metadata and masks; its provenance's
    ///     `sourceSHA256` must have the length of the final value (64 hex digits).
    public init(temporaryPath: String, path: String, description: some SceneLinearDescription,
                options: EXROptions) throws {
        precondition(options.isStreamable, "EXRStreamWriter writes half-float scanline ZIP/ZIPS files")
        width = description.width
        height = description.height
        self.path = path
        try EXRFile.check(width: description.width, height: description.height, options: options, path: path)
        deflater = options.deflater!
        // (The conversion always makes the clip mask when the options ask for it.)
        let extras = EXRFile.extraChannels(masks: description.masks, clipMaskKnown: true, options: options)
        extraSources = extras.map { $0.layer.map { description.masks[$0].values.samples } }
        let attributes = EXRMetadata.attributes(for: description, acesContainer: false)
        context = try reportingDestination(path) { try EXRContext.create(temporaryPath) }
        let (context, width, height) = (context, width, height)
        let part = try reportingDestination(path) {
            try EXRFile.writeHeader(context, width: width, height: height, extraNames: extras.map(\.name),
                                    attributes: attributes, options: options)
        }
        guard let ctxt = context.handle else {
            throw ExchangeError(path: path, operation: "exr_start_write", message: "no context", category: .internalError)
        }
        var lines: Int32 = 0
        try context.check(exr_get_scanlines_per_chunk(ctxt, part, &lines), "exr_get_scanlines_per_chunk")
        var count: Int32 = 0
        try context.check(exr_get_chunk_count(ctxt, part, &count), "exr_get_chunk_count")
        let linesPerChunk = Int(lines)
        self.linesPerChunk = linesPerChunk
        let staging = RowChunkStaging(width: width, height: height, linesPerChunk: linesPerChunk,
                                      samplesPerChunk: linesPerChunk * width * (3 + extras.count))
        self.staging = staging
        guard staging.chunkCount == Int(count) else {
            throw ExchangeError(path: path, operation: "exr_get_chunk_count",
                                message: "\(count) chunks, expected \(staging.chunkCount)", category: .internalError)
        }
        clipHalves = extras.firstIndex { $0.layer == nil }.map { linesPerChunk * width * (3 + $0) }
        // The channel list as the file orders it (by name).
        var list: UnsafePointer<exr_attr_chlist_t>?
        try context.check(exr_get_channels(ctxt, part, &list), "exr_get_channels")
        var order: [(plane: Int, rgbOffset: Int)] = []
        let names = extras.map(\.name)
        for c in 0..<Int(list?.pointee.num_channels ?? 0) {
            let name = list!.pointee.entries[c].name.str.map { String(cString: $0) } ?? ""
            if let k = ["R", "G", "B"].firstIndex(of: name) {
                order.append((-1, k))
            } else if let k = names.firstIndex(of: name) {
                order.append((k, 0))
            }
        }
        channelOrder = order
        self.order = EXRWriteOrder(context: ctxt, part: part, total: Int(count), window: Int(count))
    }

    public func rows(_ rows: Range<Int>) -> StreamingRows {
        staging.rows(rows, clipHalves: clipHalves, clipBytes: nil)
    }

    /// Each chunk whose rows are now complete is compressed on this thread and written in its turn.
    ///
    /// - Throws: the first failure of compressing or writing (every later call throws it too).
    public func finished(rows: Range<Int>, pixels: Int) throws {
        for c in staging.finished(rows: rows, pixels: pixels) { compress(c) }
        if let (rv, operation) = order.failure { throw failure(rv, operation) }
    }

    /// The error of a failed library call, naming the destination.
    private func failure(_ rv: Int32, _ operation: String) -> ExchangeError {
        var error = context.error(rv, operation)
        error.path = path
        return error
    }

    /// Compresses chunk `c` (complete) and hands it to the write order.
    private func compress(_ c: Int) {
        let b = staging.buffer(c)
        lock.lock()
        let zip = compressors.popLast() ?? EXRZipCompressor(deflater)
        lock.unlock()
        guard let zip else { return order.fail(exr_result_t(EXR_ERR_OUT_OF_MEMORY.rawValue), "libdeflate_alloc_compressor") }
        let rows = staging.rows(of: c)
        // The mask layers' rows of this chunk, rounded to half as `EXRFile.write` rounds them
        // (the same conversion), straight into the chunk's buffer.
        for (k, source) in extraSources.enumerated() {
            guard let source else { continue }
            let plane = b + linesPerChunk * width * (3 + k)
            source.withUnsafeBufferPointer { all in
                HalfConversion.convert(UnsafeBufferPointer(rebasing: all[(rows.lowerBound * width)..<(rows.upperBound * width)]),
                                       to: UnsafeMutableBufferPointer(start: plane, count: rows.count * width))
            }
        }
        let raw = UnsafeRawPointer(b).assumingMemoryBound(to: UInt16.self)
        let sources = channelOrder.map { channel -> EXRZipCompressor.ChannelSource in
            channel.plane < 0
                ? .init(first: raw + channel.rgbOffset, pixelStride: 3)
                : .init(first: raw + linesPerChunk * width * (3 + channel.plane), pixelStride: 1)
        }
        let bytes = zip.compressRows(sources, width: width, y0: 0, rows: rows.count)
        staging.recycle(c)
        lock.lock()
        compressors.append(zip)
        lock.unlock()
        _ = order.deliver(c, y: Int32(rows.lowerBound), bytes: bytes)
    }

    /// Finishes the file once every pixel was finished: the chunk table is written, and the
    /// header's `sceneLinear:sourceSHA256` set to `sourceSHA256` in place.
    ///
    /// - Throws: `ExchangeError` when a chunk failed or is missing, or the header update fails.
    public func finish(sourceSHA256: String) throws {
        if let (rv, operation) = order.failure { throw failure(rv, operation) }
        guard order.allWritten else {
            throw ExchangeError(path: path, operation: "exr_write_scanline_chunk",
                                message: "not every chunk was written", category: .internalError)
        }
        let file = context.path
        try reportingDestination(path) { try context.finish() }
        try EXRFile.updateString(EXRMetadata.prefix + "sourceSHA256", to: sourceSHA256, in: file, reportedAs: path)
    }
}

extension EXRFile {
    /// Sets string attribute `name` of the single-part file at `file` to `value`, of the same
    /// length as the value it holds, by rewriting those bytes in place (OpenEXRCore 3.1 has
    /// no in-place header update). The header is walked attribute by attribute (name, type,
    /// 4-byte little-endian size, value) from byte 8 to the byte that ends it.
    static func updateString(_ name: String, to value: String, in file: String, reportedAs path: String) throws {
        func failure(_ message: String) -> ExchangeError {
            ExchangeError(path: path, operation: "updating attribute \(name)", message: message, category: .outputFailure)
        }
        let fd = open(file, O_RDWR)
        guard fd >= 0 else { throw failure(String(cString: strerror(errno))) }
        defer { close(fd) }
        // The header is a few kilobytes: read 64 KiB, and more while the walk runs past them
        // (up to 16 MiB).
        var header: [UInt8] = []
        var count = 0
        var reading = 64 << 10
        while true {
            header = [UInt8](repeating: 0, count: reading)
            count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            guard count > 8 else { throw failure("the file is too short for a header") }
            if count < reading || reading >= 16 << 20 || Self.headerEnd(header, count: count) != nil { break }
            reading *= 4
        }
        let found = try walk(header, count: count) { attribute, type, size, valueStart in
            guard attribute == name else { return false }
            guard type == "string", size == value.utf8.count else {
                throw failure("the header holds a \(type) of \(size) bytes, the new value has \(value.utf8.count)")
            }
            let bytes = Array(value.utf8)
            let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(valueStart)) }
            guard written == bytes.count else { throw failure(String(cString: strerror(errno))) }
            return true
        }
        if !found { throw failure("the header has no such attribute") }
    }

    /// Where the header's attributes end (the offset of the byte that ends them), when it is
    /// within the first `count` bytes.
    static func headerEnd(_ header: [UInt8], count: Int) -> Int? {
        var end: Int?
        _ = try? walk(header, count: count) { _, _, _, _ in false } end: { end = $0 }
        return end
    }

    /// Calls `visit(name, type, size, value offset)` for each attribute of a single-part
    /// header in the first `count` bytes until it returns true; `end` gets the offset of
    /// the byte that ends the attributes when the walk reaches it. Returns whether `visit`
    /// returned true.
    static func walk(_ header: [UInt8], count: Int, _ visit: (String, String, Int, Int) throws -> Bool,
                     end: (Int) -> Void = { _ in }) rethrows -> Bool {
        func string(at start: Int) -> (String, Int)? {
            var end = start
            while end < count && header[end] != 0 { end += 1 }
            guard end < count else { return nil }
            return (String(decoding: header[start..<end], as: UTF8.self), end + 1)
        }
        var at = 8
        while at < count {
            if header[at] == 0 {
                end(at)
                return false
            }
            guard let (attribute, afterName) = string(at: at), let (type, afterType) = string(at: afterName),
                  afterType + 4 <= count else { return false }
            let size = (0..<4).reduce(0) { $0 | Int(header[afterType + $1]) << (8 * $1) }
            let valueStart = afterType + 4
            guard size >= 0, valueStart + size <= count else { return false }
            if try visit(attribute, type, size, valueStart) { return true }
            at = valueStart + size
        }
        return false
    }
}
