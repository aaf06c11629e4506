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
/// and the chunks are written in order with `H5Dwrite_chunk`, each under the library's lock;
/// the chunk's buffer goes back to a pool. The root's attributes come first, as in every
/// file (the SHA-256, computed meanwhile, is set at the end); `/image`'s attributes, the clip
/// mask (kept whole: one byte a pixel), the semantic masks and the metadata groups are
/// written by `finish`, when they are known. The file holds what `HDF5File.write` writes of
/// the same image.
public final class HDF5StreamWriter: StreamingImageWriter, @unchecked Sendable {
    public let width: Int
    public let height: Int
    private let path: String
    private var writer: HDF5Writer?
    private let compressor: HDF5ChunkCompressor
    private let staging: RowChunkStaging
    private let clipMask: UnsafeMutableBufferPointer<UInt8>?
    private let condition = NSCondition()
    private var waiting: [Int: [UInt8]] = [:]
    private var nextToWrite = 0
    private var writing = false
    private var failure: (any Error)?

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
            try HDF5Library.withLock {
                try HDF5Writer(session: HDF5Session(path: temporaryPath, writing: true), width: width, height: height,
                               encoding: encoding, options: options, compressInParallel: true, provenance: provenance)
            }
        }
        self.writer = writer
        guard let compressor = writer.compressor else { preconditionFailure("a compressed file has a compressor") }
        self.compressor = compressor
        staging = RowChunkStaging(width: width, height: height, linesPerChunk: writer.rows, samplesPerChunk: writer.rows * width * 3)
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
        HDF5Library.withLock { writer = nil }
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
                record(error)
                break
            }
            deliver(c, bytes)
        }
        condition.lock()
        let failure = self.failure
        condition.unlock()
        if let failure { throw failure }
    }

    /// Keeps the first failure, naming the destination rather than the temporary file.
    private func record(_ error: any Error) {
        var named = error
        if var e = error as? ExchangeError {
            e.path = path
            named = e
        }
        condition.lock()
        if failure == nil { failure = named }
        condition.unlock()
    }

    /// Takes chunk `c` and, when it is the next due and no other thread is writing, writes it
    /// and every following chunk already waiting.
    private func deliver(_ c: Int, _ bytes: [UInt8]) {
        condition.lock()
        waiting[c] = bytes
        guard !writing, failure == nil else {
            condition.unlock()
            return
        }
        writing = true
        while let data = waiting.removeValue(forKey: nextToWrite) {
            let index = nextToWrite
            condition.unlock()
            do {
                try HDF5Library.withLock { try writer!.writeChunk(index, bytes: data) }
            } catch {
                condition.lock()
                writing = false
                condition.unlock()
                return record(error)
            }
            condition.lock()
            nextToWrite += 1
        }
        writing = false
        condition.unlock()
    }

    /// Finishes the file once every pixel was finished: the attributes of `description`, the
    /// clip mask, the semantic masks, the metadata groups and `groups`.
    /// - Throws: `ExchangeError` when a chunk failed or is missing, or a write fails.
    public func finish(_ description: some SceneLinearDescription, groups: [HDF5Group] = []) throws {
        condition.lock()
        let (failure, written) = (self.failure, nextToWrite)
        condition.unlock()
        if let failure { throw failure }
        guard written == staging.chunkCount else {
            throw ExchangeError(path: path, operation: "H5Dwrite_chunk", message: "not every chunk was written",
                                category: .internalError)
        }
        let mask = clipMask.map { Array($0) }
        try reportingDestination(path) {
            try HDF5Library.withLock {
                try writer!.end(description, clipMask: mask, groups: groups)
                writer = nil
            }
        }
    }
}
