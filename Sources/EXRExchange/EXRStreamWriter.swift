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
/// image-sized buffer: the rows are staged chunk by chunk (`RowChunkStaging`), and the thread
/// that completes a chunk's rows hands the chunk to the file's `EXRScanlineWriter` — the route
/// `EXRFile.write` takes with a whole image — which compresses it at once and writes it in its
/// turn; the chunk's buffer goes back to a pool for the next one. The result is the file
/// `EXRFile.write` makes of the same image, byte for byte.
///
/// The header goes first, so everything it records must be known before the first row:
/// the source's SHA-256, computed meanwhile, is written as a placeholder of the same length
/// and set afterwards in place (`finish`). The semantic mask layers (alpha and
/// `mask_<name>` channels) are given whole at the start; their rows are converted to half
/// with each chunk.
public final class EXRStreamWriter: StreamingImageWriter {
    public let width: Int
    public let height: Int
    /// Scanlines per chunk: 16 (ZIP) or 1 (ZIPS).
    public let linesPerChunk: Int

    private let file: EXRScanlineWriter
    /// A chunk's buffer holds RGB interleaved (3 halves a pixel), then one plane per extra
    /// channel, each `linesPerChunk × width` halves.
    private let staging: RowChunkStaging
    /// The extra channels' names and sources: a mask layer's weights, or the clip mask (nil).
    private let extras: [(name: String, source: SemanticMaskLayer.Samples?)]
    /// Where the clip mask plane starts in a chunk's buffer (nil without one).
    private let clipHalves: Int?
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
        let width = description.width, height = description.height
        self.width = width
        self.height = height
        self.path = path
        try EXRFile.check(width: description.width, height: description.height, options: options, path: path)
        // (The conversion always makes the clip mask when the options ask for it.)
        let channels = EXRFile.extraChannels(masks: description.masks, clipMaskKnown: true, options: options)
        extras = channels.map { ($0.name, $0.layer.map { description.masks[$0].samples }) }
        file = try EXRScanlineWriter(file: temporaryPath, reportedAs: path, width: width, height: height,
                                     extraNames: channels.map(\.name),
                                     attributes: EXRMetadata.attributes(for: description, acesContainer: false), options: options)
        let linesPerChunk = file.linesPerChunk
        self.linesPerChunk = linesPerChunk
        staging = RowChunkStaging(width: width, height: height, linesPerChunk: linesPerChunk,
                                  samplesPerChunk: linesPerChunk * width * (3 + channels.count))
        clipHalves = channels.firstIndex { $0.layer == nil }.map { linesPerChunk * width * (3 + $0) }
    }

    public func rows(_ rows: Range<Int>) -> StreamingRows {
        staging.rows(rows, clipHalves: clipHalves, clipBytes: nil)
    }

    /// Each chunk whose rows are now complete is compressed on this thread and written in its turn.
    ///
    /// - Throws: the first failure of compressing or writing (every later call throws it too).
    public func finished(rows: Range<Int>, pixels: Int) throws {
        for c in staging.finished(rows: rows, pixels: pixels) { write(c) }
        try file.check()
    }

    /// Hands complete chunk `c` to the file, then its buffer to the pool.
    private func write(_ c: Int) {
        let b = staging.buffer(c)
        let rows = staging.rows(of: c), plane = linesPerChunk * width
        // The mask layers' rows of this chunk, rounded to half as `EXRFile.write` rounds them
        // (the same conversion, or made so already), straight into the chunk's buffer.
        let span = (rows.lowerBound * width)..<(rows.upperBound * width)
        for (k, extra) in extras.enumerated() {
            let target = UnsafeMutableBufferPointer(start: b + plane * (3 + k), count: rows.count * width)
            switch extra.source {
            case .float(let values)?:
                _ = values.withUnsafeBufferPointer { HalfConversion.convert(UnsafeBufferPointer(rebasing: $0[span]), to: target) }
            case .half(let halves)?:
                _ = halves.withUnsafeBufferPointer { target.initialize(fromContentsOf: UnsafeBufferPointer(rebasing: $0[span])) }
            case .coded(let codes, let levels)?:
                codes.withUnsafeBufferPointer { c in
                    levels.withUnsafeBufferPointer { l in
                        for (j, i) in span.enumerated() { target[j] = l[Int(c[i])] }
                    }
                }
            case nil:
                continue
            }
        }
        let base = UnsafeRawPointer(b)
        var planes = EXRSourcePlanes(width: width, height: rows.count, bytesPerSample: 2)
        planes.addRGB(base)
        for (k, extra) in extras.enumerated() { planes.addPlane(extra.name, base + 2 * plane * (3 + k)) }
        file.encode(c, from: planes, firstRow: rows.lowerBound)
        staging.recycle(c)
    }

    /// Finishes the file once every pixel was finished: the chunk table is written, and the
    /// header's `sceneLinear:sourceSHA256` set to `sourceSHA256` in place.
    ///
    /// - Throws: `ExchangeError` when a chunk failed or is missing, or the header update fails.
    public func finish(sourceSHA256: String) throws {
        try file.finish()
        try EXRFile.updateString(EXRMetadata.prefix + "sourceSHA256", to: sourceSHA256, in: file.filePath, reportedAs: path)
    }
}
