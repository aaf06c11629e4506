internal import CHDF5
import ExchangeCore
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
            try HDF5Library.withLock {
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
        try HDF5Library.withLock {
            let session = HDF5Session(path: path, writing: false)
            let file = try open(path, session)
            let r = try HDF5Reader(session: session, file: file, limits: limits).read(keepStored: false)
            let image = SceneLinearImage(pixels: ImageBuffer(width: r.width, height: r.height, channels: 3, samples: r.stored.floats),
                                         clipMask: r.clipMask, encoding: r.metadata.encoding, exposure: r.metadata.exposure,
                                         provenance: r.metadata.provenance, masks: r.masks)
            return (image, r.deviation)
        }
    }

    /// Reads an HDF5 file written by `write` for measuring: `/image` as stored (binary16 stays
    /// 2 bytes) and `/clip_mask`, widened to `Float` band by band in each pass of its `scan`.
    /// Metadata as `readSceneLinear`; the semantic masks are not read.
    /// - Throws: as `readSceneLinear`.
    public static func readStored(_ path: String, limits: ReadLimits = ReadLimits()) throws -> StoredSceneLinearImage {
        let r = try HDF5Library.withLock {
            let session = HDF5Session(path: path, writing: false)
            let file = try open(path, session)
            return try HDF5Reader(session: session, file: file, limits: limits).read(keepStored: true)
        }
        let stored = r.stored, mask = r.clipMask, width = r.width
        return StoredSceneLinearImage(image: r.metadata, width: width, height: r.height, hasClipMask: mask != nil) { rows, values, m in
            let first = rows.lowerBound * width, count = rows.count * width
            stored.widen(3 * first, count: 3 * count, into: values)
            if let mask, let m {
                mask.withUnsafeBufferPointer { (m).update(from: $0.baseAddress! + first, count: count) }
            }
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
        try HDF5Library.withLock {
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

/// Writes one image in the `HDF5File` layout: `init` creates the file, the dimension scales
/// and `/image` without its samples; the samples go in whole (`writePixels`) or chunk by
/// chunk (`writeChunk`, `HDF5StreamWriter`); `end` adds the attributes, the clip mask, the
/// semantic masks and the groups, and closes the file. Every call under `HDF5Library.withLock`.
final class HDF5Writer {
    let session: HDF5Session
    let width: Int, height: Int
    let options: HDF5Options
    private let file: H5Handle
    private let scales: [H5Handle]
    private let dataset: H5Handle
    private let sampleFileType: H5Handle
    /// Compresses `/image`'s chunks here (nil: HDF5's filter pipeline, or no compression).
    let compressor: HDF5ChunkCompressor?

    /// The source's SHA-256 as the root's attributes record it, once written (by `init`;
    /// `end` sets the final value in place when it differs).
    private var writtenSHA256: String?

    /// - Parameters:
    ///   - compressInParallel: compress `/image`'s chunks here on all cores (always for the
    ///     run-length deflate, which HDF5's own filter cannot do).
    ///   - provenance: the root's attributes, written first; a `sourceSHA256` not known yet
    ///     (a placeholder) is set by `end`.
    init(session: HDF5Session, width: Int, height: Int, encoding: ColorEncoding, options: HDF5Options,
         compressInParallel: Bool, provenance: ImageProvenance) throws {
        self.session = session
        self.width = width
        self.height = height
        self.options = options
        let s = session
        // The HDF5 1.8 file format: the superblock (v2) and object headers (v2) carry
        // checksums, so damaged metadata is reported rather than followed (the earliest
        // format has none, and HDF5 1.10.8 segfaults on some damaged v0/v1 metadata). The
        // attribute creation order of /dng needs this format anyway. Readable by HDF5 1.8
        // and later.
        let fapl = try s.plist(H5Pcreate(chdf5_P_FILE_ACCESS()), "H5Pcreate")
        try s.check(H5Pset_libver_bounds(fapl.id, H5F_LIBVER_V18, H5F_LIBVER_V18), "H5Pset_libver_bounds")
        file = try s.handle(H5Fcreate(s.path, chdf5_F_ACC_TRUNC(), chdf5_P_DEFAULT(), fapl.id),
                            "H5Fcreate", closer: H5Fclose)
        try Self.writeRootAttributes(s, file, provenance)
        writtenSHA256 = provenance.sourceSHA256
        let rows = min(options.chunkRows ?? HDF5File.defaultChunkRows, height)
        scales = try Self.writeDimensionScales(s, file, width: width, height: height, encoding: encoding)
        sampleFileType = options.sampleType == .float16 ? try s.type(chdf5_create_float16_le(), "H5Tcopy (float16)")
            : try s.type(H5Tcopy(chdf5_IEEE_F32LE()), "H5Tcopy (float32)")
        let space = try s.dataspace([height, width, 3])
        let dcpl = try s.plist(H5Pcreate(chdf5_P_DATASET_CREATE()), "H5Pcreate")
        try s.check(H5Pset_chunk(dcpl.id, 3, [hsize_t(rows), hsize_t(width), 3]), "H5Pset_chunk")
        // An explicit fill value 0 makes HDF5 pad the edge chunk with zeros (with no fill
        // value it would store whatever its buffer held), as the parallel path does.
        var zero = Float(0)
        try s.check(H5Pset_fill_value(dcpl.id, chdf5_NATIVE_FLOAT(), &zero), "H5Pset_fill_value")
        try s.check(H5Pset_fill_time(dcpl.id, H5D_FILL_TIME_IFSET), "H5Pset_fill_time")
        var compressor: HDF5ChunkCompressor?
        if options.compression != .none {
            if options.shuffle { try s.check(H5Pset_shuffle(dcpl.id), "H5Pset_shuffle") }
            let level: Int? = if case .deflate(let l) = options.compression { l } else { nil }
            // The filter's level is only a note for readers of the pipeline; decoding ignores it.
            try s.check(H5Pset_deflate(dcpl.id, UInt32(level ?? 1)), "H5Pset_deflate")
            if level == nil || compressInParallel {
                compressor = HDF5ChunkCompressor(session: s, level: level, shuffle: options.shuffle,
                                                 elementSize: options.sampleType == .float16 ? 2 : 4, elementsPerPixel: 3)
            }
        }
        self.compressor = compressor
        dataset = try s.handle(H5Dcreate2(file.id, "image", sampleFileType.id, space.id, chdf5_P_DEFAULT(), dcpl.id,
                                          chdf5_P_DEFAULT()), "H5Dcreate2 (/image)", closer: H5Dclose)
    }

    /// The root group's attributes: format, version, software, source and time of writing.
    private static func writeRootAttributes(_ s: HDF5Session, _ file: H5Handle, _ p: ImageProvenance) throws {
        let root = try s.handle(H5Gopen2(file.id, "/", chdf5_P_DEFAULT()), "H5Gopen2 (/)", closer: H5Gclose)
        try s.setString(root, "format", HDF5File.formatName)
        try s.setInt32(root, "format_version", HDF5File.formatVersion)
        try s.setString(root, "software", p.software)
        try s.setString(root, "source_file", p.sourceFile)
        try s.setString(root, "source_sha256", p.sourceSHA256)
        try s.setString(root, "source_ifd", p.sourceIFD)
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        try s.setString(root, "created", formatter.string(from: Date()))
        root.close()
    }

    /// Rows per chunk of `/image`, `/clip_mask` and the masks.
    var rows: Int { min(options.chunkRows ?? HDF5File.defaultChunkRows, height) }

    /// All of `/image` at once.
    func writePixels(_ pixels: HDF5Samples) throws {
        let s = session
        try pixels.withUnsafeBytes { raw in
            if let compressor {
                try compressor.write(dataset, data: raw, totalRows: height, rowElements: width * 3, chunkRows: rows, rank: 3)
            } else {
                try s.check(H5Dwrite(dataset.id, sampleFileType.id, chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(),
                                     raw.baseAddress), "H5Dwrite (/image)")
            }
        }
    }

    /// Chunk `index` of `/image`, compressed (`compressor`).
    func writeChunk(_ index: Int, bytes: [UInt8]) throws {
        let offset: [hsize_t] = [hsize_t(index * rows), 0, 0]
        try bytes.withUnsafeBytes { raw in
            try session.check(H5Dwrite_chunk(dataset.id, chdf5_P_DEFAULT(), 0, offset, raw.count, raw.baseAddress),
                              "H5Dwrite_chunk")
        }
    }

    /// The rest of the file: attributes (the root's, `/image`'s), `/clip_mask`, `/masks`,
    /// `/dng`, `/processing` and `groups`; closes it.
    func end(_ image: some SceneLinearDescription, clipMask: [UInt8]?, groups: [HDF5Group]) throws {
        let s = session
        if writtenSHA256 != image.provenance.sourceSHA256 {
            let root = try s.handle(H5Gopen2(file.id, "/", chdf5_P_DEFAULT()), "H5Gopen2 (/)", closer: H5Gclose)
            try s.replaceString(root, "source_sha256", image.provenance.sourceSHA256)
            root.close()
        }
        try writeImageAttributes(image)
        if let clipMask { try writeClipMask(clipMask) }
        if !image.masks.isEmpty { try writeMasks(image.masks) }
        try writeItems(image.provenance.dng, group: "dng")
        if !image.provenance.processing.isEmpty {
            try writeItems(image.provenance.processing, group: "processing")
        }
        for group in groups { try writeGroup(group) }
        for scale in scales { try s.check(scale.close(), "H5Dclose (dimension scale)") }
        try s.check(file.close(), "H5Fclose")
    }



    /// The netCDF-4 / CF view of the file: dimension-scale datasets `/y` and `/x` (pixel
    /// row and column indices, int32) and `/channel` (the strings "R", "G", "B"), attached
    /// to `/image` [y, x, channel], `/clip_mask` and every `/masks/<name>` [y, x].
    private static func writeDimensionScales(_ s: HDF5Session, _ file: H5Handle, width: Int, height: Int,
                                             encoding: ColorEncoding) throws -> [H5Handle] {
        var out: [H5Handle] = []
        for (name, count, description) in [("y", height, "output pixel row, top to bottom"),
                                           ("x", width, "output pixel column, left to right")] {
            let space = try s.dataspace([count])
            let d = try s.handle(H5Dcreate2(file.id, name, chdf5_STD_I32LE(), space.id, chdf5_P_DEFAULT(), chdf5_P_DEFAULT(),
                                            chdf5_P_DEFAULT()), "H5Dcreate2 (/\(name))", closer: H5Dclose)
            let values = (0..<count).map { Int32($0) }
            try values.withUnsafeBytes { raw in
                try s.check(H5Dwrite(d.id, chdf5_NATIVE_INT32(), chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(), raw.baseAddress),
                            "H5Dwrite (/\(name))")
            }
            try s.check(H5DSset_scale(d.id, name), "H5DSset_scale (/\(name))")
            try s.setString(d, "long_name", description)
            try s.setString(d, "units", "pixel")
            out.append(d)
        }
        let t = try s.utf8StringType()
        let space = try s.dataspace([3])
        let channel = try s.handle(H5Dcreate2(file.id, "channel", t.id, space.id, chdf5_P_DEFAULT(), chdf5_P_DEFAULT(),
                                              chdf5_P_DEFAULT()), "H5Dcreate2 (/channel)", closer: H5Dclose)
        let names: [String] = ["R", "G", "B"]
        let pointers = names.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        try pointers.withUnsafeBufferPointer { buffer in
            try s.check(H5Dwrite(channel.id, t.id, chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(), buffer.baseAddress),
                        "H5Dwrite (/channel)")
        }
        try s.check(H5DSset_scale(channel.id, "channel"), "H5DSset_scale (/channel)")
        try s.setString(channel, "long_name", "colour channel of /image (\(encoding.displayName))")
        out.append(channel)
        return out
    }

    /// Attaches the `y`, `x` (and `channel` for rank 3) scales to the dimensions of `dataset`.
    private func attach(_ dataset: H5Handle, rank: Int, name: String) throws {
        for dim in 0..<rank {
            try session.check(H5DSattach_scale(dataset.id, scales[dim].id, UInt32(dim)), "H5DSattach_scale (\(name), \(dim))")
        }
    }

    /// Attaches the image's scales to a group's dataset on its grid (`HDF5Dataset.onImageGrid`).
    /// - Throws: `ExchangeError` when its shape is not [H, W] or [H, W, 3].
    private func attachImageScales(_ handle: H5Handle, _ dataset: HDF5Dataset, name: String) throws {
        guard dataset.shape == [height, width] || dataset.shape == [height, width, 3] else {
            throw session.error("H5DSattach_scale", "\(name): shape \(dataset.shape) is not the image's grid [\(height), \(width)] or [\(height), \(width), 3]")
        }
        try attach(handle, rank: dataset.shape.count, name: name)
    }

    private func writeImageAttributes(_ image: some SceneLinearDescription) throws {
        let s = session
        // Attached before the CLASS attribute is written: H5DSattach_scale reads a dataset's
        // CLASS as a fixed-length string, and this one is variable-length.
        try attach(dataset, rank: 3, name: "/image")
        let p = image.provenance
        try s.setString(dataset, "CLASS", "IMAGE")
        try s.setString(dataset, "IMAGE_VERSION", "1.2")
        try s.setString(dataset, "IMAGE_SUBCLASS", "IMAGE_TRUECOLOR")
        try s.setString(dataset, "INTERLACE_MODE", "INTERLACE_PIXEL")
        try s.setString(dataset, "color_space", image.encoding.rawValue)
        try s.setString(dataset, "color_space_name", image.encoding.displayName)
        if let space = image.encoding.colorSpace, let w = image.encoding.luminanceWeights {
            // 1-D attributes only: the netCDF-C library refuses multi-dimensional ones.
            try s.setString(dataset, "color_interop_id", image.encoding.colorInteropID)
            try s.setDoubles(dataset, "primaries", Array(space.chromaticities.prefix(6)))
            try s.setDoubles(dataset, "white_point", [space.white.x, space.white.y])
            try s.setDoubles(dataset, "adopted_white", [space.adoptedWhite.x, space.adoptedWhite.y])
            try s.setDoubles(dataset, "luminance_weights", [w.x, w.y, w.z])
        }
        try s.setStrings(dataset, "channel_names", ["R", "G", "B"])
        try s.setString(dataset, "units", image.exposure.mode.unitsText)
        try s.setString(dataset, "exposure_scaling", image.exposure.mode.rawValue)
        try s.setDouble(dataset, "exposure_factor", image.exposure.factor)
        if let source = image.exposure.source { try s.setString(dataset, "scale_source", source) }
        if let u = image.exposure.relativeUncertainty { try s.setDouble(dataset, "scale_relative_uncertainty", u) }
        if let white = image.exposure.mode.whiteLuminance { try s.setDouble(dataset, "white_luminance", white) }
        try s.setString(dataset, "white_balance_source", p.whiteBalanceSource)
        try s.setDoubles(dataset, "white_xy", p.whiteXY)
        try s.setDoubles(dataset, "camera_neutral", p.cameraNeutral)
        try s.setDoubles(dataset, "camera_to_output", p.cameraToOutput)
        try s.check(dataset.close(), "H5Dclose (/image)")
    }

    private func writeClipMask(_ mask: [UInt8]) throws {
        let s = session
        let space = try s.dataspace([height, width])
        let dcpl = try s.plist(H5Pcreate(chdf5_P_DATASET_CREATE()), "H5Pcreate")
        try s.check(H5Pset_chunk(dcpl.id, 2, [hsize_t(rows), hsize_t(width)]), "H5Pset_chunk")
        var zero: UInt8 = 0
        try s.check(H5Pset_fill_value(dcpl.id, chdf5_NATIVE_UINT8(), &zero), "H5Pset_fill_value")
        try s.check(H5Pset_fill_time(dcpl.id, H5D_FILL_TIME_IFSET), "H5Pset_fill_time")
        try s.check(H5Pset_deflate(dcpl.id, UInt32(options.maskDeflateLevel)), "H5Pset_deflate")
        let dataset = try s.handle(H5Dcreate2(file.id, "clip_mask", chdf5_STD_U8LE(), space.id, chdf5_P_DEFAULT(),
                                              dcpl.id, chdf5_P_DEFAULT()), "H5Dcreate2 (/clip_mask)", closer: H5Dclose)
        try mask.withUnsafeBytes { raw in
            try s.check(H5Dwrite(dataset.id, chdf5_NATIVE_UINT8(), chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(),
                                 raw.baseAddress), "H5Dwrite (/clip_mask)")
        }
        try s.setString(dataset, "description",
                        "bit c set: camera channel c was at or above its white level (value is a lower bound)")
        try attach(dataset, rank: 2, name: "/clip_mask")
        try s.check(dataset.close(), "H5Dclose (/clip_mask)")
    }

    /// Writes `/masks/<name>` (float16 [H, W], chunked, shuffle + deflate) for each semantic
    /// mask layer, with attributes `semantic_name`, `instance_id`, `source_ifd`; the group's
    /// attribute `layers` lists the names in order.
    private func writeMasks(_ masks: [SemanticMaskLayer]) throws {
        let s = session
        let group = try s.handle(H5Gcreate2(file.id, "masks", chdf5_P_DEFAULT(), chdf5_P_DEFAULT(), chdf5_P_DEFAULT()),
                                 "H5Gcreate2 (/masks)", closer: H5Gclose)
        try s.setStrings(group, "layers", masks.map(\.name))
        try s.setString(group, "description",
                        "semantic masks of the DNG (SemanticName URNs), resampled onto this image's pixels: weight 0...1 per pixel")
        let f16 = sampleFileType
        let level = options.maskDeflateLevel
        for layer in masks {
            let name = "/masks/\(layer.name)"
            let space = try s.dataspace([height, width])
            let dcpl = try s.plist(H5Pcreate(chdf5_P_DATASET_CREATE()), "H5Pcreate")
            try s.check(H5Pset_chunk(dcpl.id, 2, [hsize_t(rows), hsize_t(width)]), "H5Pset_chunk")
            var zero = Float(0)
            try s.check(H5Pset_fill_value(dcpl.id, chdf5_NATIVE_FLOAT(), &zero), "H5Pset_fill_value")
            try s.check(H5Pset_fill_time(dcpl.id, H5D_FILL_TIME_IFSET), "H5Pset_fill_time")
            try s.check(H5Pset_shuffle(dcpl.id), "H5Pset_shuffle")
            try s.check(H5Pset_deflate(dcpl.id, UInt32(level)), "H5Pset_deflate")
            let dataset = try s.handle(H5Dcreate2(group.id, layer.name, f16.id, space.id, chdf5_P_DEFAULT(), dcpl.id,
                                                  chdf5_P_DEFAULT()), "H5Dcreate2 (\(name))", closer: H5Dclose)
            let samples = HDF5Samples(layer.values.samples, as: options.sampleType)
            try samples.withUnsafeBytes { raw in
                if Parallel.threadCount > 1 {
                    let compressor = HDF5ChunkCompressor(session: s, level: level, shuffle: true, elementSize: samples.elementSize)
                    try compressor.write(dataset, data: raw, totalRows: height, rowElements: width,
                                         chunkRows: rows, rank: 2)
                } else {
                    try s.check(H5Dwrite(dataset.id, f16.id, chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(), raw.baseAddress),
                                "H5Dwrite (\(name))")
                }
            }
            try s.setString(dataset, "semantic_name", layer.semanticName)
            try s.setString(dataset, "instance_id", layer.instanceID)
            try s.setString(dataset, "source_ifd", layer.sourceIFD)
            try attach(dataset, rank: 2, name: name)
            try s.check(dataset.close(), "H5Dclose (\(name))")
        }
        try s.check(group.close(), "H5Gclose (/masks)")
    }

    /// Writes an extra group (intermediate groups are created) with its attributes and datasets.
    private func writeGroup(_ group: HDF5Group) throws {
        let s = session
        let lcpl = try s.plist(H5Pcreate(chdf5_P_LINK_CREATE()), "H5Pcreate")
        try s.check(H5Pset_create_intermediate_group(lcpl.id, 1), "H5Pset_create_intermediate_group")
        let gcpl = try s.plist(H5Pcreate(chdf5_P_GROUP_CREATE()), "H5Pcreate")
        try s.check(H5Pset_attr_creation_order(gcpl.id, chdf5_P_CRT_ORDER_TRACKED_INDEXED()), "H5Pset_attr_creation_order")
        let handle = try s.handle(H5Gcreate2(file.id, group.name, lcpl.id, gcpl.id, chdf5_P_DEFAULT()),
                                  "H5Gcreate2 (/\(group.name))", closer: H5Gclose)
        for item in group.attributes { try s.set(handle, item.key, item.value) }
        for dataset in group.datasets {
            let count = dataset.shape.reduce(1, *)
            let space = try s.dataspace(dataset.shape)
            let (fileType, memoryType): (hid_t, hid_t)
            switch dataset.values {
            case .doubles(let v):
                guard v.count == count else { throw s.error("H5Dcreate2", "/\(group.name)/\(dataset.name): \(v.count) values for shape \(dataset.shape)") }
                (fileType, memoryType) = (chdf5_IEEE_F64LE(), chdf5_NATIVE_DOUBLE())
            case .integers(let v):
                guard v.count == count else { throw s.error("H5Dcreate2", "/\(group.name)/\(dataset.name): \(v.count) values for shape \(dataset.shape)") }
                (fileType, memoryType) = (chdf5_STD_I64LE(), chdf5_NATIVE_INT64())
            case .floats(let v):
                guard v.count == count else { throw s.error("H5Dcreate2", "/\(group.name)/\(dataset.name): \(v.count) values for shape \(dataset.shape)") }
                (fileType, memoryType) = (chdf5_IEEE_F32LE(), chdf5_NATIVE_FLOAT())
            case .bytes(let v):
                guard v.count == count else { throw s.error("H5Dcreate2", "/\(group.name)/\(dataset.name): \(v.count) values for shape \(dataset.shape)") }
                (fileType, memoryType) = (chdf5_STD_U8LE(), chdf5_NATIVE_UINT8())
            }
            let dcpl = try s.plist(H5Pcreate(chdf5_P_DATASET_CREATE()), "H5Pcreate")
            switch dataset.values {
            case .floats, .bytes:
                // Image-sized layers: chunks of whole rows (of all the trailing dimensions).
                if count > 0, let rows = dataset.shape.first, rows > 0 {
                    let chunk = [hsize_t(min(rows, self.rows))] + dataset.shape.dropFirst().map { hsize_t(max($0, 1)) }
                    try s.check(H5Pset_chunk(dcpl.id, Int32(chunk.count), chunk), "H5Pset_chunk")
                    try s.check(H5Pset_shuffle(dcpl.id), "H5Pset_shuffle")
                    try s.check(H5Pset_deflate(dcpl.id, UInt32(options.maskDeflateLevel)), "H5Pset_deflate")
                }
            default: break
            }
            let d = try s.handle(H5Dcreate2(handle.id, dataset.name, fileType, space.id, chdf5_P_DEFAULT(), dcpl.id,
                                            chdf5_P_DEFAULT()), "H5Dcreate2 (\(dataset.name))", closer: H5Dclose)
            if dataset.onImageGrid { try attachImageScales(d, dataset, name: "/\(group.name)/\(dataset.name)") }
            if count > 0 {
                switch dataset.values {
                case .doubles(let v):
                    try v.withUnsafeBytes { try s.check(H5Dwrite(d.id, memoryType, chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(), $0.baseAddress), "H5Dwrite (\(dataset.name))") }
                case .integers(let v):
                    let v64 = v.map(Int64.init)
                    try v64.withUnsafeBytes { try s.check(H5Dwrite(d.id, memoryType, chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(), $0.baseAddress), "H5Dwrite (\(dataset.name))") }
                case .floats(let v):
                    try v.withUnsafeBytes { try s.check(H5Dwrite(d.id, memoryType, chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(), $0.baseAddress), "H5Dwrite (\(dataset.name))") }
                case .bytes(let v):
                    try v.withUnsafeBytes { try s.check(H5Dwrite(d.id, memoryType, chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(), $0.baseAddress), "H5Dwrite (\(dataset.name))") }
                }
            }
            for item in dataset.attributes { try s.set(d, item.key, item.value) }
            try s.check(d.close(), "H5Dclose (\(dataset.name))")
        }
        try s.check(handle.close(), "H5Gclose (/\(group.name))")
    }

    /// Writes `items` as the attributes of a new group `name`, keeping their order.
    private func writeItems(_ items: [MetadataItem], group name: String) throws {
        let s = session
        let gcpl = try s.plist(H5Pcreate(chdf5_P_GROUP_CREATE()), "H5Pcreate")
        try s.check(H5Pset_attr_creation_order(gcpl.id, chdf5_P_CRT_ORDER_TRACKED_INDEXED()), "H5Pset_attr_creation_order")
        let group = try s.handle(H5Gcreate2(file.id, name, chdf5_P_DEFAULT(), gcpl.id, chdf5_P_DEFAULT()),
                                 "H5Gcreate2 (/\(name))", closer: H5Gclose)
        for item in items {
            try s.set(group, item.key, item.value)
        }
        try s.check(group.close(), "H5Gclose (/\(name))")
    }
}

/// Reads the `HDF5File` layout.
private struct HDF5Reader {
    let session: HDF5Session
    let file: H5Handle
    let limits: ReadLimits

    /// What `read` finds: the image's metadata (a `SceneLinearImage` without pixels), `/image`
    /// as stored, its size, the clip mask and the semantic masks.
    struct Contents {
        var metadata: SceneLinearImage
        var stored: HDF5Samples
        var width: Int, height: Int
        var clipMask: [UInt8]?
        var masks: [SemanticMaskLayer]
        /// The per-pixel standard deviation layer (`HDF5File.deviationDatasets`), when read.
        var deviation: [Float]? = nil
    }

    /// The file's contents; the semantic masks only when the stored pixels are not kept for
    /// measuring (`keepStored`, which also checks the limits for them instead of `Float`).
    func read(keepStored: Bool) throws -> Contents {
        let s = session
        let root = try s.handle(H5Gopen2(file.id, "/", chdf5_P_DEFAULT()), "H5Gopen2 (/)", closer: H5Gclose)
        let rootAttributes = Dictionary(try s.attributes(root), uniquingKeysWith: { a, _ in a })
        guard case .text(HDF5File.formatName)? = rootAttributes["format"] else {
            throw ExchangeError(path: s.path, operation: "readSceneLinear",
                                message: "the root attribute format is not \"\(HDF5File.formatName)\"", category: .corruptData)
        }
        if case .integer(let version)? = rootAttributes["format_version"], version > Int(HDF5File.formatVersion) {
            throw ExchangeError(path: s.path, operation: "readSceneLinear",
                                message: "format_version \(version) is newer than \(HDF5File.formatVersion)",
                                category: .unsupportedVersion)
        }
        guard exists("image") else {
            throw ExchangeError(path: s.path, operation: "H5Lexists", message: "no /image dataset", category: .corruptData)
        }
        try s.checkHeader(of: "image", from: file)
        let dataset = try s.handle(H5Dopen2(file.id, "image", chdf5_P_DEFAULT()), "H5Dopen2 (/image)", closer: H5Dclose)
        let (height, width) = try shape(dataset, channels: 3, name: "/image")
        // Float RGB (or as stored), the clip mask, and a few mask layers' worth.
        try limits.check(path: s.path, width: width, height: height, bytesPerPixel: keepStored ? 12 + 1 : 12 + 1 + 4)
        let samples = try readPixels(dataset, height: height, width: width)
        let imageAttributes = Dictionary(try s.attributes(dataset), uniquingKeysWith: { a, _ in a })

        var mask: [UInt8]?
        if exists("clip_mask") {
            try s.checkHeader(of: "clip_mask", from: file)
            let maskSet = try s.handle(H5Dopen2(file.id, "clip_mask", chdf5_P_DEFAULT()), "H5Dopen2 (/clip_mask)",
                                       closer: H5Dclose)
            let (mh, mw) = try shape(maskSet, channels: nil, name: "/clip_mask")
            guard mh == height, mw == width else {
                throw ExchangeError(path: s.path, operation: "readSceneLinear",
                                    message: "/clip_mask is \(mw)×\(mh), /image \(width)×\(height)", category: .corruptData)
            }
            mask = try s.readDataset(maskSet, name: "/clip_mask", dims: [height, width], memoryType: chdf5_NATIVE_UINT8(),
                                     as: UInt8.self)
        }

        let masks = keepStored ? [] : try readMasks(width: width, height: height)
        let deviation = keepStored ? nil : try readDeviation(width: width, height: height)

        func items(_ name: String) throws -> [MetadataItem] {
            guard exists(name) else { return [] }
            let group = try s.handle(H5Gopen2(file.id, name, chdf5_P_DEFAULT()), "H5Gopen2 (/\(name))", closer: H5Gclose)
            return try s.attributes(group).map { MetadataItem($0.0, $0.1) }
        }
        let dng = try items("dng")
        let processing = try items("processing")

        func text(_ d: [String: MetadataValue], _ key: String) -> String? {
            if case .text(let t)? = d[key] { return t }
            return nil
        }
        func doubles(_ key: String) -> [Double] {
            switch imageAttributes[key] {
            case .numbers(let a)?: return a
            case .number(let x)?: return [x]
            default: return []
            }
        }
        guard let colorSpace = text(imageAttributes, "color_space"), let encoding = ColorEncoding(rawValue: colorSpace) else {
            throw ExchangeError(path: s.path, operation: "readSceneLinear",
                                message: "/image has no known color_space attribute", category: .corruptData)
        }
        var exposure = ExposureScaling.none
        if let m = text(imageAttributes, "exposure_scaling"), let mode = ExposureMode(rawValue: m) { exposure.mode = mode }
        if case .number(let f)? = imageAttributes["exposure_factor"] { exposure.factor = f }
        exposure.source = text(imageAttributes, "scale_source")
        if case .number(let u)? = imageAttributes["scale_relative_uncertainty"] { exposure.relativeUncertainty = u }
        let provenance = ImageProvenance(
            sourceFile: text(rootAttributes, "source_file") ?? "",
            sourceSHA256: text(rootAttributes, "source_sha256") ?? "",
            software: text(rootAttributes, "software") ?? "",
            sourceIFD: text(rootAttributes, "source_ifd") ?? "",
            whiteBalanceSource: text(imageAttributes, "white_balance_source") ?? "",
            whiteXY: doubles("white_xy"), cameraNeutral: doubles("camera_neutral"),
            cameraToOutput: doubles("camera_to_output"), dng: dng, processing: processing)
        let metadata = SceneLinearImage(pixels: ImageBuffer(width: 0, height: 0, channels: 3, samples: []), clipMask: nil,
                                        encoding: encoding, exposure: exposure, provenance: provenance, masks: [])
        return Contents(metadata: metadata, stored: samples, width: width, height: height, clipMask: mask, masks: masks,
                        deviation: deviation)
    }

    /// The first of `HDF5File.deviationDatasets` the file has, as `Float` RGB; nil without one.
    private func readDeviation(width: Int, height: Int) throws -> [Float]? {
        let s = session
        guard let name = HDF5File.deviationDatasets.first(where: { exists(String($0.split(separator: "/")[0])) && exists($0) }) else {
            return nil
        }
        try limits.check(path: s.path, width: width, height: height, bytesPerPixel: 12 + 1 + 4 + 12)
        let parts = name.split(separator: "/").map(String.init)
        try s.checkHeader(of: parts[0], from: file)
        let group = try s.handle(H5Gopen2(file.id, parts[0], chdf5_P_DEFAULT()), "H5Gopen2 (/\(parts[0]))", closer: H5Gclose)
        try s.checkHeader(of: parts[1], from: group)
        let dataset = try s.handle(H5Dopen2(group.id, parts[1], chdf5_P_DEFAULT()), "H5Dopen2 (/\(name))", closer: H5Dclose)
        return try readFloatLayer(dataset, path: "/" + name, width: width, height: height, channels: 3)
    }

    /// A float dataset on the image's grid ([H, W], or [H, W, channels]) as `Float`; refused
    /// (`.corruptData`) unless it has the image's size and a float type.
    private func readFloatLayer(_ dataset: H5Handle, path: String, width: Int, height: Int, channels: Int?) throws -> [Float] {
        let s = session
        let (h, w) = try shape(dataset, channels: channels, name: path)
        guard h == height, w == width else {
            throw ExchangeError(path: s.path, operation: "readSceneLinear",
                                message: "\(path) is \(w)×\(h), /image \(width)×\(height)", category: .corruptData)
        }
        let fileType = try s.type(H5Dget_type(dataset.id), "H5Dget_type (\(path))")
        guard H5Tget_class(fileType.id) == H5T_FLOAT else {
            throw ExchangeError(path: s.path, operation: "readSceneLinear", message: "\(path) is not a float dataset",
                                category: .corruptData)
        }
        let dims = [height, width] + (channels.map { [$0] } ?? [])
        if H5Tget_size(fileType.id) == 2 {
            let f16 = try s.type(chdf5_create_float16_le(), "H5Tcopy (float16)")
            return HalfConversion.floats(try s.readDataset(dataset, name: path, dims: dims, memoryType: f16.id, as: Float16.self))
        }
        return try s.readDataset(dataset, name: path, dims: dims, memoryType: chdf5_NATIVE_FLOAT(), as: Float.self)
    }

    /// The datasets of `/masks`, in the order of its `layers` attribute (others after it, by name).
    private func readMasks(width: Int, height: Int) throws -> [SemanticMaskLayer] {
        let s = session
        guard exists("masks") else { return [] }
        let group = try s.handle(H5Gopen2(file.id, "masks", chdf5_P_DEFAULT()), "H5Gopen2 (/masks)", closer: H5Gclose)
        var info = H5G_info_t()
        try s.check(H5Gget_info(group.id, &info), "H5Gget_info (/masks)")
        var names: [String] = []
        for i in 0..<info.nlinks {
            let size = H5Lget_name_by_idx(group.id, ".", H5_INDEX_NAME, H5_ITER_INC, i, nil, 0, chdf5_P_DEFAULT())
            guard size >= 0 else { throw s.error("H5Lget_name_by_idx (/masks)") }
            var buffer = [CChar](repeating: 0, count: Int(size) + 1)
            guard H5Lget_name_by_idx(group.id, ".", H5_INDEX_NAME, H5_ITER_INC, i, &buffer, buffer.count, chdf5_P_DEFAULT()) >= 0 else {
                throw s.error("H5Lget_name_by_idx (/masks)")
            }
            names.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        let groupAttributes = Dictionary(try s.attributes(group), uniquingKeysWith: { a, _ in a })
        if case .text(let list)? = groupAttributes["layers"] {
            let listed = list.split(separator: ",").map(String.init)
            let present = Set(names)
            names = listed.filter(present.contains) + names.filter { !listed.contains($0) }
        }
        return try names.map { name in
            let path = "/masks/\(name)"
            try s.checkHeader(of: name, from: group)
            let dataset = try s.handle(H5Dopen2(group.id, name, chdf5_P_DEFAULT()), "H5Dopen2 (\(path))", closer: H5Dclose)
            let values = try readFloatLayer(dataset, path: path, width: width, height: height, channels: nil)
            let attributes = Dictionary(try s.attributes(dataset), uniquingKeysWith: { a, _ in a })
            func text(_ key: String) -> String {
                if case .text(let t)? = attributes[key] { return t }
                return ""
            }
            return SemanticMaskLayer(name: name, semanticName: text("semantic_name"), instanceID: text("instance_id"),
                                     sourceIFD: text("source_ifd"),
                                     values: ImageBuffer(width: width, height: height, channels: 1, samples: values))
        }
    }

    private func exists(_ name: String) -> Bool {
        let r = H5Lexists(file.id, name, chdf5_P_DEFAULT())
        if r < 0 { _ = H5Eclear2(chdf5_E_DEFAULT()) }
        return r > 0
    }

    /// (rows, columns) of a [H, W] or [H, W, channels] dataset.
    private func shape(_ dataset: H5Handle, channels: Int?, name: String) throws -> (Int, Int) {
        let space = try session.space(H5Dget_space(dataset.id), "H5Dget_space (\(name))")
        let rank = Int(H5Sget_simple_extent_ndims(space.id))
        guard rank == (channels == nil ? 2 : 3) else {
            throw ExchangeError(path: session.path, operation: "readSceneLinear",
                                message: "\(name) has rank \(rank)", category: .corruptData)
        }
        var dims = [hsize_t](repeating: 0, count: rank)
        guard H5Sget_simple_extent_dims(space.id, &dims, nil) == Int32(rank) else {
            throw session.error("H5Sget_simple_extent_dims (\(name))")
        }
        let h = Int(dims[0]), w = Int(dims[1])
        guard h > 0, w > 0, h.multipliedReportingOverflow(by: w).partialValue < 1 << 31,
              channels.map({ Int(dims[2]) == $0 }) ?? true else {
            throw ExchangeError(path: session.path, operation: "readSceneLinear",
                                message: "\(name) has shape \(dims)", category: .corruptData)
        }
        return (h, w)
    }

    private func readPixels(_ dataset: H5Handle, height: Int, width: Int) throws -> HDF5Samples {
        let s = session
        let fileType = try s.type(H5Dget_type(dataset.id), "H5Dget_type (/image)")
        guard H5Tget_class(fileType.id) == H5T_FLOAT else {
            throw ExchangeError(path: s.path, operation: "readSceneLinear", message: "/image is not a float dataset",
                                category: .corruptData)
        }
        let dims = [height, width, 3]
        if H5Tget_size(fileType.id) == 2 {
            let f16 = try s.type(chdf5_create_float16_le(), "H5Tcopy (float16)")
            return .halves(try s.readDataset(dataset, name: "/image", dims: dims, memoryType: f16.id, as: Float16.self))
        }
        return .floats(try s.readDataset(dataset, name: "/image", dims: dims, memoryType: chdf5_NATIVE_FLOAT(), as: Float.self))
    }
}
