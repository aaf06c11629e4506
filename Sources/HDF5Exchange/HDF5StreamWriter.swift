internal import CHDF5
import ExchangeCore
import Foundation
import ImageCore

extension HDF5Options {
    /// Whether `HDF5StreamWriter` writes files with these options: float16 samples,
    /// compressed (the default). The others are written whole by `HDF5File.write`.
    public var isStreamable: Bool { sampleType == .float16 && compression != .none }
}

/// Writes an HDF5 file in the `HDF5File` layout while its rows are being made
/// (`StreamingImageWriter`), with no image-sized buffer for `/image`: the file, its
/// dimension scales and `/image` are created first; the thread that completes a chunk's
/// rows shuffles and deflates it (`HDF5ChunkCompressor`, as the whole-image writer does),
/// and the chunks are written in order through an `OrderedChunkSink` with `H5Dwrite_chunk`,
/// each under the library's lock; the chunk's buffer goes back to a pool. The root's
/// attributes come first, as in every file (the SHA-256, computed meanwhile, is set at the
/// end); `/image`'s attributes, the clip mask (kept whole: one byte a pixel), the semantic
/// masks and the metadata groups are written by `finish`, when they are known. The file
/// holds what `HDF5File.write` writes of the same image.
// Safe because `writer` is only used under HDF5Library's lock and the clip mask only for disjoint pixels.
public final class HDF5StreamWriter: StreamingImageWriter, @unchecked Sendable {
    public let width: Int
    public let height: Int
    private let path: String
    private var writer: HDF5Writer?
    private let compressor: HDF5ChunkCompressor
    private let staging: RowChunkStaging
    private let clipMask: UnsafeMutableBufferPointer<UInt8>?
    private let sink: OrderedChunkSink<[UInt8]>

    /// Creates the file at `temporaryPath` (the caller renames it into place) with the root's
    /// attributes and `/image` (no samples yet); errors name `path`.
    /// - Parameters:
    ///   - provenance: what the root's attributes record; the `sourceSHA256` may be a
    ///     placeholder, set by `finish`.
    ///   - clipMask: whether `/clip_mask` is written.
    public init(temporaryPath: String, path: String, width: Int, height: Int, encoding: ColorEncoding,
                provenance: ImageProvenance, options: HDF5Options, clipMask: Bool) throws {
        precondition(options.isStreamable, "HDF5StreamWriter writes compressed float16 files")
        self.width = width
        self.height = height
        self.path = path
        try HDF5File.check(width: width, height: height, options: options, path: path)
        let writer = try reportingDestination(path) {
            try HDF5Library.withLock(for: path, writing: true) {
                try HDF5Writer(session: HDF5Session(path: temporaryPath, writing: true), width: width, height: height,
                               encoding: encoding, options: options, compressInParallel: true, provenance: provenance)
            }
        }
        self.writer = writer
        guard let compressor = writer.compressor else { preconditionFailure("a compressed file has a compressor") }
        self.compressor = compressor
        staging = RowChunkStaging(width: width, height: height, linesPerChunk: writer.rows, samplesPerChunk: writer.rows * width * 3)
        sink = OrderedChunkSink(count: staging.chunkCount)
        if clipMask {
            let mask = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: width * height)
            self.clipMask = mask
        } else {
            self.clipMask = nil
        }
    }

    deinit {
        clipMask?.deallocate()
        // The handles close under the library's lock.
        try? HDF5Library.withLock(for: path, writing: true) { writer = nil }
    }

    public func rows(_ rows: Range<Int>) -> StreamingRows {
        staging.rows(rows, clipHalves: nil, clipBytes: clipMask?.baseAddress)
    }

    /// Each chunk whose rows are now complete is compressed on this thread and written in its turn.
    ///
    /// - Throws: the first failure of compressing or writing (every later call throws it too).
    public func finished(rows: Range<Int>, pixels: Int) throws {
        for c in staging.finished(rows: rows, pixels: pixels) {
            let bytes: [UInt8]
            do {
                let b = staging.buffer(c)
                let n = staging.rows(of: c).count * width * 3
                bytes = try compressor.compress(UnsafeRawBufferPointer(start: b, count: 2 * n),
                                                chunkBytes: 2 * staging.linesPerChunk * width * 3)
                staging.recycle(c)
            } catch {
                sink.fail(named(error))
                break
            }
            sink.deliver(c, bytes) { index, data in
                do {
                    try HDF5Library.withLock(for: path, writing: true) { try writer!.writeChunk(index, bytes: data) }
                } catch {
                    throw named(error)
                }
            }
        }
        try sink.check()
    }

    /// `error`, naming the destination rather than the temporary file.
    private func named(_ error: any Error) -> any Error {
        guard var e = error as? ExchangeError else { return error }
        e.path = path
        return e
    }

    /// Finishes the file once every pixel was finished: the attributes of `description`, the
    /// clip mask, the semantic masks, the metadata groups and `groups`.
    /// - Throws: `ExchangeError` when a chunk failed or is missing, or a write fails.
    public func finish(_ description: some SceneLinearDescription, groups: [HDF5Group] = []) throws {
        try sink.check()
        guard sink.isComplete else {
            throw ExchangeError(path: path, operation: "H5Dwrite_chunk", message: "not every chunk was written",
                                category: .internalError)
        }
        let mask = clipMask.map { Array($0) }
        try reportingDestination(path) {
            try HDF5Library.withLock(for: path, writing: true) {
                try writer!.end(description, clipMask: mask, groups: groups)
                writer = nil
            }
        }
    }
}
