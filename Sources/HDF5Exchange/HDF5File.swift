internal import CHDF5
import ExchangeCore
import HDF5Format
import Foundation
import ImageCore

/// The compression of the HDF5 image dataset.
public enum HDF5Compression: Sendable, Equatable {
    /// Chunks stored as they are.
    case none
    /// zlib deflate (HDF5 filter 1, `gzip` in h5py) at `level` 0–9.
    case deflate(level: Int)
    /// Deflate (HDF5 filter 1, so every reader decodes it) written by `RunLengthDeflater`:
    /// runs, pixel-period matches and per-block Huffman codes; on shuffled half floats about
    /// 4× faster than zlib level 4 for a few percent more size. The default.
    case fastDeflate
}

/// How `HDF5File.write` stores an image.
///
/// The defaults, shuffle + `RunLengthDeflater` in chunks of 16 rows, come from measurements
/// on 4032×3024 noisy captures (docs/performance.md): the run-length deflate writes 4.8
/// times faster than zlib at level 4 (the earlier default) for a file 3 % larger; without
/// shuffle the file was 26 % larger (with zlib). 4 to 256 rows per chunk changed little;
/// 16 rows (387 KB chunks) fit HDF5's default 1 MB chunk cache.
public struct HDF5Options: Sendable {
    /// Compression of `/image` (`/clip_mask` is always deflated).
    public var compression: HDF5Compression
    /// Byte shuffle before deflate (HDF5 filter 2); ignored without deflate.
    public var shuffle: Bool
    /// Rows per chunk of `/image` and `/clip_mask` (a chunk is `chunkRows × W × 3`);
    /// `nil` uses `HDF5File.defaultChunkRows`.
    public var chunkRows: Int?
    /// The sample type of `/image` and `/masks/*`: IEEE binary16 (the default) or binary32
    /// (for readers without float16, such as the netCDF-C library and MATLAB's `h5read`).
    public var sampleType: HDF5SampleType = .float16

    /// The zlib level HDF5's own filter uses for `/clip_mask` and `/masks`: the level of
    /// `.deflate`, else 4.
    var maskDeflateLevel: Int {
        if case .deflate(let level) = compression { return level }
        return 4
    }

    /// Options for `HDF5File.write`; see the properties for the meaning of each.
    public init(compression: HDF5Compression = .fastDeflate, shuffle: Bool = true, chunkRows: Int? = nil,
                sampleType: HDF5SampleType = .float16) {
        self.compression = compression
        self.shuffle = shuffle
        self.chunkRows = chunkRows
        self.sampleType = sampleType
    }
}

/// The floating-point type of the HDF5 image and mask datasets.
public enum HDF5SampleType: String, CaseIterable, Sendable {
    case float16
    case float32
}

/// An extra group written into an HDF5 output (e.g. `/analysis`): attributes and small
/// uncompressed datasets of doubles or 64-bit integers.
public struct HDF5Group: Sendable, Equatable {
    /// Path below the root, e.g. "analysis/histograms"; intermediate groups are created.
    public var name: String
    public var attributes: [MetadataItem]
    public var datasets: [HDF5Dataset]

    public init(name: String, attributes: [MetadataItem] = [], datasets: [HDF5Dataset] = []) {
        self.name = name
        self.attributes = attributes
        self.datasets = datasets
    }
}

/// A dataset of an `HDF5Group`.
public struct HDF5Dataset: Sendable, Equatable {
    /// `floats` and `bytes` (image-sized layers) are stored chunked, shuffled and deflated.
    public enum Values: Sendable, Equatable { case doubles([Double]), integers([Int]), floats([Float]), bytes([UInt8]) }
    public var name: String
    /// Dimensions, C order; their product is the number of values.
    public var shape: [Int]
    public var values: Values
    public var attributes: [MetadataItem]
    /// A layer on the image's pixel grid (shape [H, W] or [H, W, 3]): its dimensions are
    /// attached to the file's `y`, `x` (and `channel`) dimension scales, as `/image`'s are, so
    /// that netCDF readers (xarray) put it on the image's dimensions.
    public var onImageGrid = false

    public init(name: String, shape: [Int], values: Values, attributes: [MetadataItem] = []) {
        self.name = name
        self.shape = shape
        self.values = values
        self.attributes = attributes
    }

    /// A layer on the image's pixel grid (`onImageGrid`): [height, width] values or, with
    /// `channels` (3: one per channel of `/image`), [height, width, channels].
    public init(imageLayer name: String, width: Int, height: Int, channels: Int? = nil, values: Values,
                attributes: [MetadataItem] = []) {
        self.init(name: name, shape: [height, width] + (channels.map { [$0] } ?? []), values: values, attributes: attributes)
        onImageGrid = true
    }
}

/// HDF5 output and input of scene-linear images (HDF5 1.10 C API).
///
/// File layout, format version 1:
/// ```
/// /            attributes: format = "SceneLinear", format_version = 1 (int32), software,
///              source_file, source_sha256, source_ifd, created (ISO 8601 UTC)
/// /image       IEEE binary16 little-endian dataset [H, W, 3] (h5py: float16), chunked
///              (chunkRows × W × 3), optional shuffle + deflate. Attributes:
///              CLASS = "IMAGE", IMAGE_VERSION = "1.2", IMAGE_SUBCLASS = "IMAGE_TRUECOLOR",
///              INTERLACE_MODE = "INTERLACE_PIXEL", color_space (ColorEncoding raw value),
///              color_space_name, primaries f64[3,2], white_point f64[2] and
///              luminance_weights f64[3] (Rec.2020 only), channel_names ["R","G","B"],
///              units, exposure_scaling, exposure_factor f64, white_balance_source,
///              white_xy f64[n], camera_neutral f64[n], camera_to_output f64[3,3]
/// /clip_mask   uint8 [H, W], chunked + deflate; attribute description. Bit c set: camera
///              channel c was at or above its white level. Absent without a clip mask.
/// /masks       group (only when the image has semantic masks); attribute layers (names in
///              order); one float16 [H, W] dataset per layer, chunked + shuffle + deflate,
///              with attributes semantic_name, instance_id, source_ifd
/// /dng         group, one attribute per DNG metadata item, in item order (creation order
///              is tracked): text → UTF-8 string, number → f64, numbers → f64[n],
///              integer → i64, integers → i64[n]
/// ```
/// Strings are variable-length UTF-8 (h5py gives `str`); empty arrays have a null
/// dataspace.
public enum HDF5File {
    /// The `format` attribute of the root group.
    public static let formatName = "SceneLinear"
    /// The layout version this module writes and reads.
    public static let formatVersion: Int32 = 2
    /// Rows per chunk when `HDF5Options.chunkRows` is nil.
    public static let defaultChunkRows = 16

    /// Writes `image` in the layout above.
    ///
    /// The floats are rounded to half once (round to nearest even) and written with the
    /// memory type equal to the file type, so the stored bits are exactly `Float16(value)`.
    /// The file is written to a temporary name and renamed into place.
    ///
    /// - Throws: `OutputError` when the directory is missing or not writable;
    ///   `ExchangeError` (`.outputFailure`) with the HDF5 error stack when a call fails or
    ///   the options are invalid.
    public static func write(_ image: some SceneLinearRaster, to path: String, options: HDF5Options = .init(),
                             groups: [HDF5Group] = []) throws {
        try check(width: image.width, height: image.height, options: options, path: path)
        try AtomicFile.write(to: path) { temporary in
            try write(image, temporary: temporary, reportedAs: path, options: options, groups: groups)
        }
    }

    /// `write` into `temporary`, which the caller renames into place (or removes on
    /// failure); errors name `path`.
    public static func write(_ image: some SceneLinearRaster, temporary: String, reportedAs path: String,
                             options: HDF5Options = .init(), groups: [HDF5Group] = []) throws {
        try check(width: image.width, height: image.height, options: options, path: path)
        let pixels: HDF5Samples = options.sampleType == .float16 ? .halves(try image.halfPixels(for: path)) : .floats(image.floatPixels())
        try reportingDestination(path) {
            try HDF5Library.withLock(for: path, writing: true) {
                let writer = try HDF5Writer(session: HDF5Session(path: temporary, writing: true), width: image.width,
                                            height: image.height, encoding: image.encoding, options: options,
                                            compressInParallel: Parallel.threadCount > 1, provenance: image.provenance)
                try writer.writePixels(pixels)
                try writer.end(image, clipMask: image.clipMask, groups: groups)
            }
        }
    }

    /// Refuses a deflate level out of range, chunks of no rows and an empty image.
    static func check(width: Int, height: Int, options: HDF5Options, path: String) throws {
        if case .deflate(let level) = options.compression, !(0...9).contains(level) {
            throw ExchangeError(path: path, operation: "HDF5File.write", message: "deflate level \(level) is outside 0...9",
                                category: .outputFailure)
        }
        if let rows = options.chunkRows, rows < 1 {
            throw ExchangeError(path: path, operation: "HDF5File.write", message: "chunkRows must be at least 1",
                                category: .outputFailure)
        }
        guard width > 0, height > 0 else {
            throw ExchangeError(path: path, operation: "HDF5File.write",
                                message: "an image of \(width)×\(height) has no chunks", category: .outputFailure)
        }
    }

    /// Reads a file written by `write` back into a `SceneLinearImage`.
    ///
    /// `/image` may be any float type (binary16 is widened exactly); the clip mask comes
    /// from `/clip_mask` and the semantic masks from `/masks` when present.
    ///
    /// - Throws: `ExchangeError`: `.inputUnreadable` (missing/unreadable file),
    ///   `.corruptData` (not HDF5, damaged, or not this layout), `.unsupportedVersion`
    ///   (a newer `format_version`).
    /// - Parameter limits: the largest image accepted, checked from the shape of /image
    ///   before any pixel buffer is allocated (`.limitExceeded`).
    public static func readSceneLinear(_ path: String, limits: ReadLimits = ReadLimits()) throws -> SceneLinearImage {
        try readSceneLinearWithDeviation(path, limits: limits).image
    }

    /// The datasets that hold a per-pixel standard deviation layer, [H, W, 3] in the units of
    /// `/image`: `merge`'s and `convert --std`'s.
    public static let deviationDatasets = ["merge/std", "noise/std"]

    /// `readSceneLinear` and the per-pixel standard deviation layer (`deviationDatasets`),
    /// interleaved as RGB; nil when the file has none.
    public static func readSceneLinearWithDeviation(_ path: String, limits: ReadLimits = ReadLimits()) throws
        -> (image: SceneLinearImage, deviation: [Float]?) {
        try HDF5Library.withLock(for: path, writing: false) {
            let session = HDF5Session(path: path, writing: false)
            let file = try open(path, session)
            let r = try HDF5Reader(session: session, file: file, limits: limits).read(keepStored: false)
            guard let stored = r.stored else {
                throw ExchangeError(path: path, operation: "readSceneLinear", message: "/image was not read", category: .internalError)
            }
            let image = SceneLinearImage(pixels: ImageBuffer(width: r.width, height: r.height, channels: 3, samples: stored.floats),
                                         clipMask: r.clipMask, encoding: r.metadata.encoding, exposure: r.metadata.exposure,
                                         provenance: r.metadata.provenance, masks: r.masks)
            return (image, r.deviation)
        }
    }

    /// Reads an HDF5 file written by `write` for measuring: `/image` and `/clip_mask`
    /// widened to `Float` band by band in each pass of its `scan`. Datasets whose chunks are
    /// whole rows of at most `HDF5RowBlocks.maximumFillRows` (every file `convert` writes) are
    /// decoded again in each pass, a block of chunk rows at a time, from the mapped file;
    /// others are read once as stored (binary16 stays 2 bytes). Metadata as
    /// `readSceneLinear`; the semantic masks are not read.
    /// - Throws: as `readSceneLinear`; a pass throws `ExchangeError` for a chunk that fails or
    ///   a file cut while it is read.
    public static func readStored(_ path: String, limits: ReadLimits = ReadLimits()) throws -> StoredSceneLinearImage {
        let r = try HDF5Library.withLock(for: path, writing: false) {
            let session = HDF5Session(path: path, writing: false)
            let file = try open(path, session)
            return try HDF5Reader(session: session, file: file, limits: limits).read(keepStored: true, blocks: true)
        }
        let mask = r.clipMask, maskBlocks = r.maskBlocks, width = r.width
        let hasMask = mask != nil || maskBlocks != nil
        @Sendable func copyMask(_ rows: Range<Int>, into m: UnsafeMutablePointer<UInt8>) throws {
            if let maskBlocks { return try maskBlocks.decode(rows: rows, into: UnsafeMutableRawPointer(m)) }
            mask?.withUnsafeBufferPointer { m.update(from: $0.baseAddress! + rows.lowerBound * width, count: rows.count * width) }
        }
        if let blocks = r.imageBlocks {
            // The blocks' buffers, freed and allocated again block after block, kept in the process.
            MallocThresholds.fixed
            return StoredSceneLinearImage(image: r.metadata, width: width, height: r.height, hasClipMask: hasMask,
                                          blockRows: blocks.chunkRows) { rows, values, m in
                let count = 3 * rows.count * width, size = blocks.dataset.elementSize
                try withUnsafeTemporaryAllocation(byteCount: count * size, alignment: 16) { raw in
                    try blocks.decode(rows: rows, into: raw.baseAddress!)
                    let out = UnsafeMutableBufferPointer(start: values, count: count)
                    if size == 2 {
                        HalfConversion.convert(UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: Float16.self), count: count), to: out)
                    } else {
                        _ = out.initialize(from: UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: Float.self), count: count))
                    }
                }
                if let m { try copyMask(rows, into: m) }
            }
        }
        guard let stored = r.stored else {
            throw ExchangeError(path: path, operation: "readStored", message: "/image was not read", category: .internalError)
        }
        return StoredSceneLinearImage(image: r.metadata, width: width, height: r.height, hasClipMask: hasMask) { rows, values, m in
            let first = rows.lowerBound * width, count = rows.count * width
            stored.widen(3 * first, count: 3 * count, into: values)
            if let m { try copyMask(rows, into: m) }
        }
    }

    /// The attributes of `object` ("/", "/image", "/dng", ...) as metadata values.
    ///
    /// Strings → `.text` (string arrays joined with ","), floats → `.number`/`.numbers`,
    /// integers → `.integer`/`.integers`; attributes of other types are left out.
    ///
    /// - Throws: `ExchangeError` as `readSceneLinear`, or `.corruptData` when the object
    ///   does not exist.
    public static func readAttributes(_ path: String, object: String) throws -> [String: MetadataValue] {
        try HDF5Library.withLock(for: path, writing: false) {
            let session = HDF5Session(path: path, writing: false)
            let file = try open(path, session)
            try session.checkHeader(of: object, from: file)
            let target = try session.handle(H5Oopen(file.id, object, chdf5_P_DEFAULT()), "H5Oopen (\(object))",
                                            closer: H5Oclose)
            return Dictionary(try session.attributes(target), uniquingKeysWith: { first, _ in first })
        }
    }

    static func open(_ path: String, _ session: HDF5Session) throws -> H5Handle {
        if let problem = RegularFile.problem(path) {
            throw ExchangeError(path: path, operation: "open", message: problem, category: .inputUnreadable)
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ExchangeError(path: path, operation: "open", message: "the file does not exist or is not readable",
                                category: .inputUnreadable)
        }
        let isHDF5 = H5Fis_hdf5(path)
        if isHDF5 == 0 {
            throw ExchangeError(path: path, operation: "H5Fis_hdf5", message: "not an HDF5 file", category: .corruptData)
        } else if isHDF5 < 0 {
            throw session.error("H5Fis_hdf5")
        }
        try HDF5SymbolTable.check(path)
        return try session.handle(H5Fopen(path, chdf5_F_ACC_RDONLY(), chdf5_P_DEFAULT()), "H5Fopen", closer: H5Fclose)
    }
}

/// The samples of an image or mask dataset, in the file's type.
enum HDF5Samples {
    case halves([Float16])
    case floats([Float])

    init(_ values: [Float], as type: HDF5SampleType) {
        self = type == .float16 ? .halves(HalfConversion.halves(values)) : .floats(values)
    }

    /// A mask layer's weights as `type` (a layer held in half floats is written as it is held).
    init(_ layer: SemanticMaskLayer, as type: HDF5SampleType) {
        self = type == .float16 ? .halves(layer.halves) : .floats(layer.values.samples)
    }

    var elementSize: Int {
        if case .halves = self { return 2 }
        return 4
    }

    /// Every sample as `Float` (binary16 widened exactly).
    var floats: [Float] {
        switch self {
        case .halves(let h): return HalfConversion.floats(h)
        case .floats(let f): return f
        }
    }

    /// `count` samples from sample `first` as `Float`, into `out`.
    func widen(_ first: Int, count: Int, into out: UnsafeMutablePointer<Float>) {
        let target = UnsafeMutableBufferPointer(start: out, count: count)
        switch self {
        case .halves(let h):
            h.withUnsafeBufferPointer { HalfConversion.convert(UnsafeBufferPointer(rebasing: $0[first..<(first + count)]), to: target) }
        case .floats(let f):
            f.withUnsafeBufferPointer { _ = target.initialize(from: UnsafeBufferPointer(rebasing: $0[first..<(first + count)])) }
        }
    }

    func withUnsafeBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        switch self {
        case .halves(let a): return try a.withUnsafeBytes(body)
        case .floats(let a): return try a.withUnsafeBytes(body)
        }
    }
}
