internal import COpenEXR
internal import CDeflate
internal import CEXRZip
import ExchangeCore
import Foundation
import ImageCore
import Synchronization

extension EXRFile {
    /// Reads the first part of any scanline or tiled (level 0) EXR with HALF, FLOAT or
    /// UINT channels.
    ///
    /// Chunks are decoded on `Parallel.threadCount` threads. HALF channels are returned
    /// both raw (`halfChannels`) and widened to `Float`; UINT channels are converted with
    /// `Float(value)`. Every header attribute is decoded into `attributes`.
    ///
    /// - Throws: `ExchangeError`: `.inputUnreadable` when the file is missing or cannot
    ///   be opened, `.corruptData` when it is not an EXR or is damaged (including most cut
    ///   files: OpenEXRCore reports their chunk table as corrupt), `.truncated` when the
    ///   library reports a short read, `.unsupportedFeature` for deep data or subsampled
    ///   channels.
    public static func read(_ path: String, limits: ReadLimits = ReadLimits()) throws -> EXRContents {
        let (planes, attributes, compression) = try readPlanes(path, limits: limits)
        let (channels, halves) = planes.collect()
        return EXRContents(width: planes.width, height: planes.height, channels: channels, halfChannels: halves,
                           attributes: attributes, compression: compression)
    }

    /// The first part of a file opened for reading: where its pixels lie, how they are stored
    /// and its attributes.
    struct OpenPart {
        let context: EXRContext
        let part: Int32 = 0
        let window: exr_attr_box2i_t
        let width: Int, height: Int
        let storage: exr_storage_t
        let compressionValue: exr_compression_t
        let attributes: [String: EXRAttributeValue]

        var compression: EXRCompression? { EXRCompression(exrValue: compressionValue) }
        var inflatesZip: Bool { compressionValue == EXR_COMPRESSION_ZIP || compressionValue == EXR_COMPRESSION_ZIPS }
        /// Whether OpenEXRCore cannot decode its chunks (DWA, read through an uncompressed rewrite).
        var needsRewrite: Bool { compression?.needsCXXEncoder ?? false }
    }

    /// Opens `path` and reads the header of its first part.
    /// - Throws: `ExchangeError` as `read`.
    static func openFirstPart(_ path: String) throws -> OpenPart {
        if let problem = RegularFile.problem(path) {
            throw ExchangeError(path: path, operation: "open", message: problem, category: .inputUnreadable)
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ExchangeError(path: path, operation: "open", message: "the file does not exist or is not readable",
                                category: .inputUnreadable)
        }
        let context = try EXRContext.openForReading(path)
        guard let ctxt = context.handle else {
            throw ExchangeError(path: path, operation: "exr_start_read", message: "no context", category: .internalError)
        }
        let part: Int32 = 0
        var storage = EXR_STORAGE_LAST_TYPE
        try context.check(exr_get_storage(ctxt, part, &storage), "exr_get_storage")
        guard storage == EXR_STORAGE_SCANLINE || storage == EXR_STORAGE_TILED else {
            throw ExchangeError(path: path, operation: "exr_get_storage",
                                message: "deep data (storage \(storage.rawValue)) is not supported",
                                category: .unsupportedFeature)
        }
        var window = exr_attr_box2i_t()
        try context.check(exr_get_data_window(ctxt, part, &window), "exr_get_data_window")
        let width = Int(window.max.x) - Int(window.min.x) + 1
        let height = Int(window.max.y) - Int(window.min.y) + 1
        guard width > 0, height > 0, width.multipliedReportingOverflow(by: height).partialValue < 1 << 31 else {
            throw ExchangeError(path: path, operation: "exr_get_data_window",
                                message: "data window \(width)×\(height) is empty or too large", category: .corruptData)
        }
        var compressionValue = EXR_COMPRESSION_LAST_TYPE
        try context.check(exr_get_compression(ctxt, part, &compressionValue), "exr_get_compression")
        return OpenPart(context: context, window: window, width: width, height: height, storage: storage,
                        compressionValue: compressionValue, attributes: try readAttributes(context, part))
    }

    /// The decoded planes of the first part, its attributes and its compression.
    /// - Parameter only: the channels to decode (nil: every one); a file missing one of them
    ///   is not refused here.
    static func readPlanes(_ path: String, limits: ReadLimits,
                           only: Set<String>? = nil) throws -> (EXRChannelPlanes, [String: EXRAttributeValue], EXRCompression?) {
        let open = try openFirstPart(path)
        return (try readPlanes(open, limits: limits, only: only), open.attributes, open.compression)
    }

    /// The decoded planes of the opened part (those in `only`, when given); the context is
    /// finished.
    private static func readPlanes(_ open: OpenPart, limits: ReadLimits, only: Set<String>?) throws -> EXRChannelPlanes {
        let context = open.context, path = context.path
        if open.needsRewrite {
            // OpenEXRCore 3.1 cannot decode DWA: read an uncompressed rewrite of the file (the
            // limits checked first: the rewrite holds the whole image).
            try limits.check(path: path, width: open.width, height: open.height,
                             bytesPerPixel: 12 + 4 * (try EXRChannelPlanes.channels(context: context, part: open.part, only: only).count))
            try context.finish()
            let copy = NSTemporaryDirectory() + "/scenelinear-dwa-\(getpid())-\(UUID().uuidString).exr"
            defer { unlink(copy) }
            try rewrite(path, as: copy, compression: .none, path: path, category: .corruptData)
            return try readPlanes(try openFirstPart(copy), limits: limits, only: only)
        }
        let planes = try EXRChannelPlanes(context: context, part: open.part, width: open.width, height: open.height, limits: limits,
                                          only: only)
        try EXRPartReader(context: context, part: open.part, window: open.window, storage: open.storage, inflatesZip: open.inflatesZip)
            .decodeAll(into: planes, threads: Parallel.threadCount)
        try context.finish()
        return planes
    }

    /// Reads an EXR written by `write` back into a `SceneLinearImage`.
    ///
    /// Pixels come from channels R, G, B (any pixel type); encoding, exposure and
    /// provenance from the `sceneLinear:`/`dng:` attributes (see `write`). The clip mask is
    /// the `mask.clipped.Y` channel, 1 where it is non-zero (the EXR keeps only whether a
    /// pixel clipped, not which camera channels), or nil without that channel. The semantic
    /// masks are the other `mask_<name>` or `mask.<name>.Y` channels, and `A` the
    /// transparency layer (see `write`). Files from other writers are accepted when
    /// `colorInteropID` or the chromaticities name one of the colour encodings; missing
    /// provenance fields are empty.
    ///
    /// - Throws: `ExchangeError` as `read`, and `.unsupportedFeature` when R, G or B is
    ///   missing or the colour encoding is unknown.
    /// - Parameter limits: the largest image accepted, checked from the header before any
    ///   pixel buffer is allocated (`.limitExceeded`).
    public static func readSceneLinear(_ path: String, limits: ReadLimits = ReadLimits()) throws -> SceneLinearImage {
        try readSceneLinearWithDeviation(path, limits: limits).image
    }

    /// `readSceneLinear` and the per-pixel standard deviation layer, when the file has one:
    /// channels `std_R`, `std_G`, `std_B` (or `std.R`, … of the `.layers` layout), written
    /// by `merge` and `convert --std`, interleaved as RGB (nil without them).
    public static func readSceneLinearWithDeviation(_ path: String, limits: ReadLimits = ReadLimits()) throws
        -> (image: SceneLinearImage, deviation: [Float]?) {
        let (planes, attributes, compression) = try readPlanes(path, limits: limits)
        let deviation = standardDeviation(in: planes)
        // R, G and B go straight from the decoded planes into interleaved Float (no per-channel copies).
        let samples = planes.interleaved(try planes.rgb(path: path))
        let (others, halves) = planes.collect(except: ["R", "G", "B"])
        let contents = EXRContents(width: planes.width, height: planes.height, channels: others, halfChannels: halves,
                                   attributes: attributes, compression: compression)
        let (encoding, exposure, provenance) = try EXRMetadata.describe(contents.attributes, path: path)
        let clip = contents.channels[clipMaskChannel(.flat)] ?? contents.channels[clipMaskChannel(.layers)]
        let mask = clip.map { $0.map { $0 != 0 ? UInt8(1) : 0 } }
        let image = SceneLinearImage(
            pixels: ImageBuffer(width: contents.width, height: contents.height, channels: 3, samples: samples),
            clipMask: mask, encoding: encoding, exposure: exposure, provenance: provenance,
            masks: EXRMetadata.maskLayers(contents))
        return (image, deviation)
    }

    /// The per-pixel standard deviations of a merged EXR, RGB interleaved like its pixels,
    /// from the channels `std_R`, `std_G`, `std_B` (the flat naming, merge's default) or
    /// `std.R`, `std.G`, `std.B` (`--exr-layout layers`, and files written before flat names
    /// were the default); nil when the file has neither.
    /// - Throws: as `read`.
    public static func readStandardDeviation(_ path: String, limits: ReadLimits = ReadLimits()) throws -> [Float]? {
        let names = EXRLayout.allCases.flatMap { layout in ["R", "G", "B"].map { standardDeviationChannel($0, layout: layout) } }
        return standardDeviation(in: try readPlanes(path, limits: limits, only: Set(names)).0)
    }

    /// The σ channels of `planes` (either naming) interleaved as RGB, or nil.
    static func standardDeviation(in planes: EXRChannelPlanes) -> [Float]? {
        EXRLayout.allCases.lazy.compactMap { layout -> [Float]? in
            let chosen = ["R", "G", "B"].compactMap { planes.plane(named: standardDeviationChannel($0, layout: layout)) }
            return chosen.count == 3 ? planes.interleaved(chosen) : nil
        }.first
    }

    /// Reads an EXR written by `write` for measuring: R, G, B and the clip mask widened to
    /// `Float` band by band in each pass of its `scan`. A scanline file (every compression
    /// but DWA) is decoded again in each pass, a block of rows at a time, so the image is never
    /// held; a tiled or DWA file is decoded once into planes as stored (a HALF sample stays 2
    /// bytes). Metadata as `readSceneLinear`; semantic masks and other channels are not read.
    /// - Throws: as `readSceneLinear`; a pass throws `ExchangeError` for a chunk that fails.
    public static func readStored(_ path: String, limits: ReadLimits = ReadLimits()) throws -> StoredSceneLinearImage {
        let clipNames = [clipMaskChannel(.flat), clipMaskChannel(.layers)]
        let wanted = Set(["R", "G", "B"] + clipNames)
        let open = try openFirstPart(path)
        guard open.storage == EXR_STORAGE_SCANLINE, !open.needsRewrite else {
            let planes = try readPlanes(open, limits: limits, only: wanted)
            let rgb = try planes.rgb(path: path), clip = clipNames.lazy.compactMap { planes.plane(named: $0) }.first
            let image = try storedMetadata(open.attributes, path: path)
            return StoredSceneLinearImage(image: image, width: planes.width, height: planes.height, hasClipMask: clip != nil) { rows, values, mask in
                // (The planes live as long as this closure.)
                withExtendedLifetime(planes) {
                    fillBand(rgb: rgb, clip: clip, first: rows.lowerBound * planes.width, count: rows.count * planes.width,
                             values: values, mask: mask)
                }
            }
        }
        let channels = try EXRChannelPlanes.channels(context: open.context, part: open.part, only: wanted)
        let names = Set(channels.map(\.name))
        guard ["R", "G", "B"].allSatisfy(names.contains) else {
            throw EXRChannelPlanes.missingRGB(path: path, names: Array(names))
        }
        let image = try storedMetadata(open.attributes, path: path)
        // Only a block of rows per thread is held: the image's size is limited, not its bytes.
        try limits.check(path: path, width: open.width, height: open.height, bytesPerPixel: 0)
        let reader = try EXRPartReader(context: open.context, part: open.part, window: open.window, storage: open.storage,
                                       inflatesZip: open.inflatesZip)
        // The blocks' buffers, freed and allocated again block after block, kept in the process.
        MallocThresholds.fixed
        let width = open.width
        // Whole chunks per fill: each chunk is decoded once a pass.
        return StoredSceneLinearImage(image: image, width: width, height: open.height, hasClipMask: clipNames.contains(where: names.contains),
                                      blockRows: reader.layout.linesPerChunk) { rows, values, mask in
            let block = EXRChannelPlanes(width: width, height: rows.count, channels: channels)
            try reader.decode(rows: rows, into: block)
            fillBand(rgb: try block.rgb(path: path), clip: clipNames.lazy.compactMap { block.plane(named: $0) }.first, first: 0,
                     count: rows.count * width, values: values, mask: mask)
        }
    }

    /// Everything of a stored image but its pixels (none) and its semantic masks (not read).
    private static func storedMetadata(_ attributes: [String: EXRAttributeValue], path: String) throws -> SceneLinearImage {
        let (encoding, exposure, provenance) = try EXRMetadata.describe(attributes, path: path)
        return SceneLinearImage(pixels: ImageBuffer(width: 0, height: 0, channels: 3, samples: []), clipMask: nil,
                                encoding: encoding, exposure: exposure, provenance: provenance, masks: [])
    }

    /// Samples `first ..< first + count` of the R, G, B planes interleaved into `values`, and
    /// of the clip mask (1 where non-zero) into `mask`.
    private static func fillBand(rgb: [EXRChannelPlanes.Plane], clip: EXRChannelPlanes.Plane?, first: Int, count: Int,
                                 values: UnsafeMutablePointer<Float>, mask: UnsafeMutablePointer<UInt8>?) {
        withUnsafeTemporaryAllocation(of: Float.self, capacity: count) { row in
            EXRChannelPlanes.interleave(rgb, first: first, count: count, into: values, scratch: row.baseAddress!)
            guard let clip, let mask else { return }
            if clip.type == EXR_PIXEL_HALF {
                // Non-zero (NaN included) but for either sign of zero, read from the bits.
                let bits = clip.data.assumingMemoryBound(to: UInt16.self) + first
                for i in 0..<count { mask[i] = bits[i] & 0x7FFF != 0 ? 1 : 0 }
            } else {
                clip.widen(first, count: count, into: row.baseAddress!)
                for i in 0..<count { mask[i] = row[i] != 0 ? 1 : 0 }
            }
        }
    }

    private static func readAttributes(_ context: EXRContext, _ part: Int32) throws -> [String: EXRAttributeValue] {
        guard let ctxt = context.handle else { return [:] }
        var count: Int32 = 0
        try context.check(exr_get_attribute_count(ctxt, part, &count), "exr_get_attribute_count")
        var out: [String: EXRAttributeValue] = [:]
        for i in 0..<count {
            var attribute: UnsafePointer<exr_attribute_t>?
            try context.check(exr_get_attribute_by_index(ctxt, part, EXR_ATTR_LIST_FILE_ORDER, i, &attribute),
                              "exr_get_attribute_by_index")
            guard let attribute, let name = attribute.pointee.name else { continue }
            out[String(cString: name)] = decode(attribute.pointee)
        }
        return out
    }

    private static func decode(_ a: exr_attribute_t) -> EXRAttributeValue {
        func string(_ s: exr_attr_string_t) -> String {
            guard let p = s.str, s.length > 0 else { return "" }
            return p.withMemoryRebound(to: UInt8.self, capacity: Int(s.length)) {
                String(decoding: UnsafeBufferPointer(start: $0, count: Int(s.length)), as: UTF8.self)
            }
        }
        func values<T, E>(_ value: T, _: E.Type, _ count: Int) -> [E] {
            withUnsafeBytes(of: value) { Array($0.bindMemory(to: E.self).prefix(count)) }
        }
        let unknown = EXRAttributeValue.other(typeName: a.type_name.map { String(cString: $0) } ?? "?")
        switch a.type {
        case EXR_ATTR_STRING:
            return a.string.map { .string(string($0.pointee)) } ?? unknown
        case EXR_ATTR_STRING_VECTOR:
            guard let v = a.stringvector?.pointee else { return unknown }
            return .stringVector((0..<Int(v.n_strings)).map { string(v.strings[$0]) })
        case EXR_ATTR_INT: return .int(Int(a.i))
        case EXR_ATTR_FLOAT: return .float(a.f)
        case EXR_ATTR_DOUBLE: return .double(a.d)
        case EXR_ATTR_FLOAT_VECTOR:
            guard let v = a.floatvector?.pointee else { return unknown }
            guard let arr = v.arr, v.length > 0 else { return .floatVector([]) }
            return .floatVector(Array(UnsafeBufferPointer(start: arr, count: Int(v.length))))
        case EXR_ATTR_CHROMATICITIES:
            guard let c = a.chromaticities?.pointee else { return unknown }
            return .chromaticities([c.red_x, c.red_y, c.green_x, c.green_y, c.blue_x, c.blue_y, c.white_x, c.white_y])
        case EXR_ATTR_V2I: return a.v2i.map { .v2i([Int($0.pointee.x), Int($0.pointee.y)]) } ?? unknown
        case EXR_ATTR_V2F: return a.v2f.map { .v2f([$0.pointee.x, $0.pointee.y]) } ?? unknown
        case EXR_ATTR_V2D: return a.v2d.map { .v2d([$0.pointee.x, $0.pointee.y]) } ?? unknown
        case EXR_ATTR_V3I: return a.v3i.map { .v3i([Int($0.pointee.x), Int($0.pointee.y), Int($0.pointee.z)]) } ?? unknown
        case EXR_ATTR_V3F: return a.v3f.map { .v3f([$0.pointee.x, $0.pointee.y, $0.pointee.z]) } ?? unknown
        case EXR_ATTR_V3D: return a.v3d.map { .v3d([$0.pointee.x, $0.pointee.y, $0.pointee.z]) } ?? unknown
        case EXR_ATTR_M33F: return a.m33f.map { .m33f(values($0.pointee.m, Float.self, 9)) } ?? unknown
        case EXR_ATTR_M33D: return a.m33d.map { .m33d(values($0.pointee.m, Double.self, 9)) } ?? unknown
        case EXR_ATTR_M44F: return a.m44f.map { .m44f(values($0.pointee.m, Float.self, 16)) } ?? unknown
        case EXR_ATTR_M44D: return a.m44d.map { .m44d(values($0.pointee.m, Double.self, 16)) } ?? unknown
        case EXR_ATTR_BOX2I:
            guard let b = a.box2i?.pointee else { return unknown }
            return .box2i([Int(b.min.x), Int(b.min.y), Int(b.max.x), Int(b.max.y)])
        case EXR_ATTR_BOX2F:
            guard let b = a.box2f?.pointee else { return unknown }
            return .box2f([b.min.x, b.min.y, b.max.x, b.max.y])
        case EXR_ATTR_RATIONAL:
            guard let r = a.rational?.pointee else { return unknown }
            return .rational(numerator: Int(r.num), denominator: Int(r.denom))
        case EXR_ATTR_COMPRESSION:
            let names = ["none", "rle", "zips", "zip", "piz", "pxr24", "b44", "b44a", "dwaa", "dwab"]
            return .compression(Int(a.uc) < names.count ? names[Int(a.uc)] : "unknown(\(a.uc))")
        case EXR_ATTR_LINEORDER:
            let names = ["increasingY", "decreasingY", "randomY"]
            return .lineOrder(Int(a.uc) < names.count ? names[Int(a.uc)] : "unknown(\(a.uc))")
        case EXR_ATTR_CHLIST:
            guard let list = a.chlist?.pointee else { return unknown }
            return .channelList((0..<Int(list.num_channels)).map { string(list.entries[$0].name) })
        case EXR_ATTR_TILEDESC:
            guard let t = a.tiledesc?.pointee else { return unknown }
            return .tileDescription(width: Int(t.x_size), height: Int(t.y_size),
                                    levelMode: Int(t.level_and_round & 0xF), roundingMode: Int(t.level_and_round >> 4))
        default:
            return unknown
        }
    }
}

/// Destination buffers, one plane per channel of the part, in the channel's own type.
// Safe because each decoding worker writes only the pixels of its own chunks, and the planes are read only after the decoding ends.
final class EXRChannelPlanes: @unchecked Sendable {
    // Safe because a plane's buffer is owned by its `EXRChannelPlanes`, which keeps it until it is released.
    struct Plane: @unchecked Sendable {
        var name: String
        var type: exr_pixel_type_t
        var bytesPerSample: Int
        var data: UnsafeMutableRawPointer

        /// `count` samples from sample `first` as `Float` (HALF widened, UINT converted).
        func widen(_ first: Int, count: Int, into out: UnsafeMutablePointer<Float>) {
            let target = UnsafeMutableBufferPointer(start: out, count: count)
            switch type {
            case EXR_PIXEL_HALF:
                HalfConversion.convert(UnsafeBufferPointer(start: data.assumingMemoryBound(to: Float16.self) + first, count: count), to: target)
            case EXR_PIXEL_FLOAT:
                _ = target.initialize(from: UnsafeBufferPointer(start: data.assumingMemoryBound(to: Float.self) + first, count: count))
            default:
                let u = data.assumingMemoryBound(to: UInt32.self) + first
                for i in 0..<count { out[i] = Float(u[i]) }
            }
        }
    }

    let width: Int
    let height: Int
    let planes: [Plane]

    /// A channel of the part: its name and sample type.
    struct Channel {
        var name: String
        var type: exr_pixel_type_t
        var bytesPerSample: Int { type == EXR_PIXEL_HALF ? 2 : 4 }
    }

    /// The channels of `part` (those in `only`, when given), in the file's order.
    /// - Throws: `.unsupportedFeature` for a chosen channel that is subsampled.
    static func channels(context: EXRContext, part: Int32, only: Set<String>? = nil) throws -> [Channel] {
        guard let ctxt = context.handle else { return [] }
        var list: UnsafePointer<exr_attr_chlist_t>?
        try context.check(exr_get_channels(ctxt, part, &list), "exr_get_channels")
        guard let list else { return [] }
        var out: [Channel] = []
        for i in 0..<Int(list.pointee.num_channels) {
            let entry = list.pointee.entries[i]
            let name = entry.name.str.map { String(cString: $0) } ?? ""
            guard only?.contains(name) ?? true else { continue }
            guard entry.x_sampling == 1, entry.y_sampling == 1 else {
                throw ExchangeError(path: context.path, operation: "exr_get_channels",
                                    message: "channel \(name) is subsampled (\(entry.x_sampling)×\(entry.y_sampling)); not supported",
                                    category: .unsupportedFeature)
            }
            out.append(Channel(name: name, type: entry.pixel_type))
        }
        return out
    }

    /// Planes for the channels of `part` (those in `only`, when given), cleared.
    convenience init(context: EXRContext, part: Int32, width: Int, height: Int, limits: ReadLimits, only: Set<String>? = nil) throws {
        let chosen = try Self.channels(context: context, part: part, only: only)
        // Every plane, and the interleaved Float RGB made from them, before allocating any.
        try limits.check(path: context.path, width: width, height: height,
                         bytesPerPixel: 12 + chosen.reduce(0) { $0 + $1.bytesPerSample })
        self.init(width: width, height: height, channels: chosen, cleared: true)
    }

    /// Planes of `width × height` for `channels`; not cleared unless asked (for rows a
    /// decoder fills whole).
    init(width: Int, height: Int, channels: [Channel], cleared: Bool = false) {
        self.width = width
        self.height = height
        planes = channels.map { channel in
            let bytes = width * height * channel.bytesPerSample
            let data = UnsafeMutableRawPointer.allocate(byteCount: max(1, bytes), alignment: 16)
            if cleared { data.initializeMemory(as: UInt8.self, repeating: 0, count: bytes) }
            return Plane(name: channel.name, type: channel.type, bytesPerSample: channel.bytesPerSample, data: data)
        }
    }

    deinit {
        for plane in planes { plane.data.deallocate() }
    }

    func plane(named name: String) -> Plane? { planes.first { $0.name == name } }

    var names: [String] { planes.map(\.name) }

    /// The R, G and B planes.
    /// - Throws: `.unsupportedFeature` naming the channels the file has when one is missing.
    func rgb(path: String) throws -> [Plane] {
        guard let r = plane(named: "R"), let g = plane(named: "G"), let b = plane(named: "B") else {
            throw Self.missingRGB(path: path, names: names)
        }
        return [r, g, b]
    }

    /// The error for a file without R, G or B, naming the channels it has.
    static func missingRGB(path: String, names: [String]) -> ExchangeError {
        ExchangeError(path: path, operation: "readSceneLinear", message: "channels R, G, B are required; the file has \(names.sorted())",
                      category: .unsupportedFeature)
    }

    /// Samples `first ..< first + count` of each of `planes`, widened to `Float` (through
    /// `scratch`, room for `count`) and interleaved pixel by pixel into `out`.
    static func interleave(_ planes: [Plane], first: Int, count: Int, into out: UnsafeMutablePointer<Float>,
                           scratch: UnsafeMutablePointer<Float>) {
        let n = planes.count
        for (c, plane) in planes.enumerated() {
            plane.widen(first, count: count, into: scratch)
            for i in 0..<count { out[i * n + c] = scratch[i] }
        }
    }

    /// `chosen` interleaved into `Float`, pixel by pixel, over the whole image.
    func interleaved(_ chosen: [Plane]) -> [Float] {
        let n = chosen.count, count = width * height
        var out = LargeBuffer.uninitialized(Float.self, count: count * n)
        out.withUnsafeMutableBufferPointer { all in
            // Safe because each worker writes only the pixels of its own range of `dst`.
            nonisolated(unsafe) let dst = all.baseAddress!
            let sources = chosen
            Parallel.forEachChunk(count: count, minimumChunk: 1 << 16) { range in
                withUnsafeTemporaryAllocation(of: Float.self, capacity: 4096) { buffer in
                    for start in stride(from: range.lowerBound, to: range.upperBound, by: 4096) {
                        Self.interleave(sources, first: start, count: min(4096, range.upperBound - start), into: dst + start * n,
                                        scratch: buffer.baseAddress!)
                    }
                }
            }
        }
        return out
    }

    /// The planes as arrays (but those `excluded`): every channel as `Float`, HALF channels also raw.
    func collect(except excluded: Set<String> = []) -> ([String: [Float]], [String: [Float16]]) {
        let count = width * height
        var floats: [String: [Float]] = [:]
        var halves: [String: [Float16]] = [:]
        for plane in planes where !excluded.contains(plane.name) {
            if plane.type == EXR_PIXEL_HALF {
                let h = Array(UnsafeBufferPointer(start: plane.data.assumingMemoryBound(to: Float16.self), count: count))
                halves[plane.name] = h
                floats[plane.name] = HalfConversion.floats(h)
            } else if plane.type == EXR_PIXEL_FLOAT {
                floats[plane.name] = Array(UnsafeBufferPointer(start: plane.data.assumingMemoryBound(to: Float.self), count: count))
            } else {
                floats[plane.name] = UnsafeBufferPointer(start: plane.data.assumingMemoryBound(to: UInt32.self), count: count)
                    .map { Float($0) }
            }
        }
        return (floats, halves)
    }
}

/// The chunks of one part (scanline, or level 0 of a tiled part) of a file opened for
/// reading, decoded into `EXRChannelPlanes`: all of them on worker threads (`decodeAll`), or
/// those of some rows on the calling thread (`decode(rows:into:)`), each call with a decode
/// pipeline of its own.
// Safe because the context is only read once this is made: OpenEXRCore allows one decode pipeline per thread on a context opened for reading, and every call here makes its own.
final class EXRPartReader: @unchecked Sendable {
    let context: EXRContext
    let part: Int32
    let window: exr_attr_box2i_t
    let layout: Layout
    /// Whether ZIP and ZIPS chunks are inflated here (`exrInflateZipChunk`) rather than by
    /// the library.
    let inflatesZip: Bool
    private let width: Int, height: Int

    /// Where the chunks are: scanline blocks of `linesPerChunk`, or a grid of level-0 tiles.
    struct Layout: Sendable {
        var count: Int
        var linesPerChunk: Int
        var tileWidth: Int
        var tileHeight: Int
        var tilesAcross: Int
        var tiled: Bool
    }

    /// Loads (and, when it is damaged, rebuilds) the chunk offset table here, on one thread,
    /// so that two workers never rebuild it at once, each logging the same messages: the error
    /// of a damaged file is the same on every run.
    /// - Throws: `ExchangeError` for a bad layout or a first chunk the library cannot describe.
    init(context: EXRContext, part: Int32, window: exr_attr_box2i_t, storage: exr_storage_t, inflatesZip: Bool) throws {
        self.context = context
        self.part = part
        self.window = window
        self.inflatesZip = inflatesZip
        width = Int(window.max.x) - Int(window.min.x) + 1
        height = Int(window.max.y) - Int(window.min.y) + 1
        guard let ctxt = context.handle else {
            throw ExchangeError(path: context.path, operation: "exr_start_read", message: "no context", category: .internalError)
        }
        layout = try Self.chunkLayout(context, ctxt, part: part, storage: storage, width: width, height: height)
        var first = exr_chunk_info_t()
        let rv = layout.count > 0 ? chunkInfo(ctxt, index: 0, into: &first) : exrSuccess
        if rv != exrSuccess { try throwFailure((0, rv, chunkInfoOperation, nil)) }
    }

    /// Every chunk into `planes` (the whole part), on up to `threads` threads.
    /// - Throws: `ExchangeError` for the lowest failing chunk.
    func decodeAll(into planes: EXRChannelPlanes, threads: Int) throws {
        let failures = EXRReadFailures()
        let counter = EXRChunkCounter(total: layout.count)
        Parallel.forEach(max(1, min(threads, layout.count))) { _ in
            guard let handle = self.context.handle else { return }
            self.withPipeline(handle) { pipe, initialized in
                while let index = counter.next(), !failures.any {
                    if let failure = self.decode(handle, chunk: index, pipe: pipe, initialized: &initialized, into: planes, top: 0) {
                        return failures.record(failure)
                    }
                }
            }
        }
        if let failure = failures.first { try throwFailure(failure) }
    }

    /// The scanline chunks that hold `rows` of the part, into `planes`, whose first row is
    /// image row `rows.lowerBound` (room for whole chunks: `rows` should start and end on
    /// chunk boundaries or at the last row).
    /// - Throws: `ExchangeError` for the first failing chunk.
    func decode(rows: Range<Int>, into planes: EXRChannelPlanes) throws {
        guard !layout.tiled else {
            throw ExchangeError(path: context.path, operation: "decode(rows:)", message: "a tiled part is not read by rows",
                                category: .internalError)
        }
        guard let ctxt = context.handle, !rows.isEmpty else { return }
        let lines = layout.linesPerChunk
        let failure = withPipeline(ctxt) { pipe, initialized -> Failure? in
            for index in (rows.lowerBound / lines)...((rows.upperBound - 1) / lines) {
                if let failure = decode(ctxt, chunk: index, pipe: pipe, initialized: &initialized, into: planes, top: rows.lowerBound) {
                    return failure
                }
            }
            return nil
        }
        if let failure { try throwFailure(failure) }
    }

    typealias Failure = EXRReadFailures.Failure

    private var chunkInfoOperation: String { layout.tiled ? "exr_read_tile_chunk_info" : "exr_read_scanline_chunk_info" }

    private func throwFailure(_ failure: Failure) throws -> Never {
        var error = context.error(failure.result, failure.operation + " (chunk \(failure.index))")
        if let message = failure.message { error.message = message; error.category = .corruptData }
        throw error
    }

    private static func chunkLayout(_ context: EXRContext, _ ctxt: exr_context_t, part: Int32, storage: exr_storage_t,
                                    width: Int, height: Int) throws -> Layout {
        if storage == EXR_STORAGE_SCANLINE {
            var lines: Int32 = 0
            try context.check(exr_get_scanlines_per_chunk(ctxt, part, &lines), "exr_get_scanlines_per_chunk")
            guard lines > 0 else {
                throw ExchangeError(path: context.path, operation: "exr_get_scanlines_per_chunk",
                                    message: "invalid lines per chunk \(lines)", category: .corruptData)
            }
            let n = Int(lines)
            return Layout(count: (height + n - 1) / n, linesPerChunk: n, tileWidth: 0, tileHeight: 0, tilesAcross: 0, tiled: false)
        }
        var tw: UInt32 = 0, th: UInt32 = 0
        var levelMode = EXR_TILE_LAST_TYPE, roundMode = EXR_TILE_ROUND_LAST_TYPE
        try context.check(exr_get_tile_descriptor(ctxt, part, &tw, &th, &levelMode, &roundMode), "exr_get_tile_descriptor")
        guard tw > 0, th > 0 else {
            throw ExchangeError(path: context.path, operation: "exr_get_tile_descriptor",
                                message: "invalid tile size \(tw)×\(th)", category: .corruptData)
        }
        let across = (width + Int(tw) - 1) / Int(tw)
        let down = (height + Int(th) - 1) / Int(th)
        return Layout(count: across * down, linesPerChunk: 0, tileWidth: Int(tw), tileHeight: Int(th),
                      tilesAcross: across, tiled: true)
    }

    /// The library's description of chunk `index` (level 0 for tiles).
    private func chunkInfo(_ ctxt: exr_context_t, index: Int, into chunk: inout exr_chunk_info_t) -> exr_result_t {
        if layout.tiled {
            let tx = index % layout.tilesAcross, ty = index / layout.tilesAcross
            return exr_read_tile_chunk_info(ctxt, part, Int32(tx), Int32(ty), 0, 0, &chunk)
        }
        return exr_read_scanline_chunk_info(ctxt, part, window.min.y + Int32(index * layout.linesPerChunk), &chunk)
    }

    /// `body` with a decode pipeline, destroyed afterwards.
    private func withPipeline<T>(_ ctxt: exr_context_t, _ body: (UnsafeMutablePointer<exr_decode_pipeline_t>, inout Bool) -> T) -> T {
        let pipe = UnsafeMutablePointer<exr_decode_pipeline_t>.allocate(capacity: 1)
        pipe.initialize(to: exr_decode_pipeline_t())
        var initialized = false
        defer {
            if initialized { _ = exr_decoding_destroy(ctxt, pipe) }
            pipe.deallocate()
        }
        return body(pipe, &initialized)
    }

    /// Decodes chunk `index` into `planes`, whose first row is image row `top`.
    private func decode(_ ctxt: exr_context_t, chunk index: Int, pipe: UnsafeMutablePointer<exr_decode_pipeline_t>,
                        initialized: inout Bool, into planes: EXRChannelPlanes, top: Int) -> Failure? {
        var chunk = exr_chunk_info_t()
        var rv = chunkInfo(ctxt, index: index, into: &chunk)
        guard rv == exrSuccess else { return (index, rv, chunkInfoOperation, nil) }
        let row = layout.tiled ? (index / layout.tilesAcross) * layout.tileHeight : Int(chunk.start_y) - Int(window.min.y)
        let column = layout.tiled ? (index % layout.tilesAcross) * layout.tileWidth : 0
        guard row >= 0, column >= 0, chunk.width >= 0, chunk.height >= 0,
              row + Int(chunk.height) <= height, column + Int(chunk.width) <= width,
              row >= top, row + Int(chunk.height) <= top + planes.height else {
            return (index, exr_result_t(EXR_ERR_CORRUPT_CHUNK.rawValue), "exr_read_chunk_info",
                    "chunk \(chunk.width)×\(chunk.height) at (\(column), \(row)) lies outside the data window")
        }
        rv = initialized ? exr_decoding_update(ctxt, part, &chunk, pipe) : exr_decoding_initialize(ctxt, part, &chunk, pipe)
        guard rv == exrSuccess else { return (index, rv, initialized ? "exr_decoding_update" : "exr_decoding_initialize", nil) }
        initialized = true
        for c in 0..<Int(pipe.pointee.channel_count) {
            let channel = pipe.pointee.channels + c
            let name = String(cString: channel.pointee.channel_name)
            guard let plane = planes.plane(named: name) else { continue }
            let size = plane.bytesPerSample
            channel.pointee.decode_to_ptr = (plane.data + ((row - top) * planes.width + column) * size)
                .assumingMemoryBound(to: UInt8.self)
            channel.pointee.user_pixel_stride = Int32(size)
            channel.pointee.user_line_stride = Int32(size * planes.width)
            channel.pointee.user_bytes_per_element = Int16(size)
            channel.pointee.user_data_type = UInt16(plane.type.rawValue)
        }
        rv = exr_decoding_choose_default_routines(ctxt, part, pipe)
        guard rv == exrSuccess else { return (index, rv, "exr_decoding_choose_default_routines", nil) }
        if inflatesZip && pipe.pointee.decompress_fn != nil { pipe.pointee.decompress_fn = exrInflateZipChunk }
        rv = exr_decoding_run(ctxt, part, pipe)
        return rv == exrSuccess ? nil : (index, rv, "exr_decoding_run", nil)
    }
}

/// Decompresses a ZIP or ZIPS chunk (the pipeline's `decompress_fn`): the zlib stream
/// inflated by libdeflate (Adler-32 checked; about twice as fast as the library's zlib),
/// then the format's predictor undone (each byte the previous plus the stored difference
/// less 128) and the two halves of the bytes interleaved again (the first half holds the
/// even bytes). A stream that is damaged or does not inflate to exactly the chunk's size is
/// a corrupt chunk; a chunk stored uncompressed (as large as its pixels) is copied.
let exrInflateZipChunk: @convention(c) (UnsafeMutablePointer<exr_decode_pipeline_t>?) -> exr_result_t = { pipe in
    guard let pipe else { return exr_result_t(EXR_ERR_INVALID_ARGUMENT.rawValue) }
    let packed = Int(pipe.pointee.chunk.packed_size), unpacked = Int(pipe.pointee.chunk.unpacked_size)
    guard packed > 0 else { return exrSuccess }
    guard let source = pipe.pointee.packed_buffer, let target = pipe.pointee.unpacked_buffer else {
        return exr_result_t(EXR_ERR_INVALID_ARGUMENT.rawValue)
    }
    if packed == unpacked {
        if source != target { target.copyMemory(from: source, byteCount: unpacked) }
        return exrSuccess
    }
    guard let inflater = libdeflate_alloc_decompressor() else { return exr_result_t(EXR_ERR_OUT_OF_MEMORY.rawValue) }
    defer { libdeflate_free_decompressor(inflater) }
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: unpacked) { scratch -> exr_result_t in
        let t = scratch.baseAddress!
        var produced = 0
        guard libdeflate_zlib_decompress(inflater, source, packed, t, unpacked, &produced) == LIBDEFLATE_SUCCESS,
              produced == unpacked else { return exr_result_t(EXR_ERR_CORRUPT_CHUNK.rawValue) }
        cexrzip_unpredict(t, unpacked)
        let out = target.assumingMemoryBound(to: UInt8.self), half = (unpacked + 1) / 2
        cexrzip_interleave(t, t + half, unpacked / 2, out)
        if unpacked % 2 == 1 { out[unpacked - 1] = t[half - 1] }
        return exrSuccess
    }
}

/// Hands out chunk indices to decoding workers.
final class EXRChunkCounter: Sendable {
    private let nextIndex = Atomic<Int>(0)
    private let total: Int

    init(total: Int) { self.total = total }

    func next() -> Int? {
        let i = nextIndex.add(1, ordering: .relaxed).oldValue
        return i < total ? i : nil
    }
}

/// The failures of decoding workers; the lowest chunk index wins.
final class EXRReadFailures: Sendable {
    typealias Failure = (index: Int, result: exr_result_t, operation: String, message: String?)
    private let state = Mutex<Failure?>(nil)

    var any: Bool { state.withLock { $0 != nil } }

    var first: Failure? { state.withLock { $0 } }

    func record(_ failure: Failure) {
        state.withLock { first in
            if first == nil || failure.index < first!.index { first = failure }
        }
    }
}
