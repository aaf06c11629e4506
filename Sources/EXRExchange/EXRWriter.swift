internal import COpenEXR
internal import CEXRDWA
import ExchangeCore
import Foundation
import ImageCore

/// OpenEXR output and input through OpenEXRCore, the C API of OpenEXR 3.
public enum EXRFile {
    /// Writes `image` as a single-part EXR with channels R, G, B.
    ///
    /// The layout: data window = display window = (0, 0)–(w−1, h−1), channels `R`, `G`,
    /// `B` (HALF, or FLOAT with `options.pixelType`), `A` from the transparency mask (the
    /// mask layer named `transparency`) when the image has one, then the clip mask with
    /// `options.includeClipMask` and one channel per other semantic mask layer, named
    /// `mask_<name>` (`options.layout` `.flat`, the default: no layer dots, so Blender opens
    /// the file as a plain image) or `mask.<name>.Y` (`.layers`), each described by
    /// `sceneLinear:mask.<name>` attributes; pLinear 0, increasing-Y line order, scanline
    /// or (`options.tiling`) tiled with optional mip-maps. The floats are rounded to half
    /// once for HALF (round to nearest even; beyond ±65504 they become ±infinity, NaN stays
    /// NaN). Header attributes: `chromaticities`, `adoptedNeutral` and `colorInteropID` of
    /// the colour encoding (and `acesImageContainerFlag` for an ACES2065-1 file that meets
    /// SMPTE ST 2065-4), the `sceneLinear:` provenance record, one `dng:` attribute per DNG
    /// item and the standard `expTime`, `aperture`, `isoSpeed`, `capDate`, `utcOffset`,
    /// `cameraMake`, `cameraModel`, `cameraSerialNumber`, `lensModel`,
    /// `nominalFocalLength`, `owner` and `comments` when those items exist (see
    /// `EXRFile.readSceneLinear` for the inverse).
    ///
    /// Scanline files take the route of the files written as their rows are made
    /// (`EXRScanlineWriter`, fed the whole image here): chunks compressed on all
    /// `Parallel.threadCount` threads and written in increasing chunk order, so the file is
    /// byte-identical whatever the thread count (see `EXROptions` for timings). Tiled files
    /// are encoded tile by tile on one thread.
    ///
    /// The file is written to a temporary name and renamed into place, so a failure leaves
    /// nothing behind.
    ///
    /// - Throws: `OutputError` when the directory is missing or not writable;
    ///   `ExchangeError` (`.outputFailure`) when OpenEXRCore fails (disk full, image too
    ///   large or empty, ...), with the library's message.
    /// - Parameter auxiliary: more single-channel planes (name, one value per pixel), after
    ///   the masks: e.g. a merge's standard deviations (`standardDeviationChannel`: `std_R`, …).
    public static func write(_ image: some SceneLinearRaster, to path: String, options: EXROptions = .init(),
                             auxiliary: [EXRAuxiliaryChannel] = []) throws {
        try AtomicFile.write(to: path) { temporary in
            try write(image, temporary: temporary, reportedAs: path, options: options, auxiliary: auxiliary)
        }
    }

    /// `write` into `temporary`, which the caller renames into place (or removes on
    /// failure); errors name `path`.
    public static func write(_ image: some SceneLinearRaster, temporary: String, reportedAs path: String,
                             options: EXROptions = .init(), auxiliary: [EXRAuxiliaryChannel] = []) throws {
        let width = image.width, height = image.height
        try check(width: width, height: height, options: options, path: path)
        if options.compression.needsCXXEncoder && options.tiling != nil {
            throw ExchangeError(path: path, operation: "EXRFile.write",
                                message: "\(options.compression.rawValue) is written as scanlines only, not tiled", category: .outputFailure)
        }
        if let t = options.tiling, !(1...65536).contains(t.tileSize) {
            throw ExchangeError(path: path, operation: "EXRFile.write",
                                message: "tile size \(t.tileSize) is outside 1...65536", category: .outputFailure)
        }
        // Single-channel planes after R, G, B: alpha, the clip mask (when asked for), then
        // each other semantic mask layer.
        let extras = extraChannels(masks: image.masks, clipMaskKnown: image.clipMask != nil, options: options)
        let extraNames = extras.map(\.name) + auxiliary.map(\.name)
        let extraPlanes: [[Float]] = extras.map { extra in
            guard let layer = extra.layer else {
                guard let mask = image.clipMask else { return LargeBuffer.zeroed(Float.self, count: width * height) }
                return LargeBuffer.make(Float.self, count: mask.count, reading: mask) { range, m, out in
                    for i in range { out[i] = m[i] != 0 ? 1 : 0 }
                }
            }
            return image.masks[layer].values.samples
        } + auxiliary.map(\.values)
        for a in auxiliary where a.values.count != width * height || Set(extraNames).count != extraNames.count {
            throw ExchangeError(path: path, operation: "EXRFile.write", message: "channel \(a.name): \(a.values.count) values for "
                                + "\(width)×\(height) pixels, or a name used twice", category: .internalError)
        }
        let acesContainer = image.encoding == .aces2065 && options.compression == .none && options.pixelType == .half
            && options.tiling == nil && extraNames.allSatisfy { $0 == "A" }
        let attributes = EXRMetadata.attributes(for: image, acesContainer: acesContainer)
        try reportingDestination(path) {
                var levels: [EXRPixelStore]
                if options.pixelType == .half && options.tiling?.mipmaps != true {
                    levels = [EXRPixelStore(width: width, height: height, rgbHalves: try image.halfPixels(for: path),
                                            extra: extraPlanes, names: extraNames)]
                } else {
                    let base = try EXRPixelStore(width: width, height: height, rgbFloats: image.floatPixels(), extra: extraPlanes,
                                                 names: extraNames, type: options.pixelType, destination: path,
                                                 keepFloats: options.tiling?.mipmaps == true)
                    levels = [base]
                    if options.tiling?.mipmaps == true {
                        while let last = levels.last, last.width > 1 || last.height > 1 {
                            levels.append(try last.halved(type: options.pixelType))
                        }
                    }
                }
                guard options.compression.needsCXXEncoder else {
                    return try writeFile(temporary, levels: levels, attributes: attributes, options: options)
                }
                // DWA: the file uncompressed under a second temporary name, then rewritten.
                let stage = temporary + ".uncompressed"
                defer { unlink(stage) }
                var uncompressed = options
                uncompressed.compression = .none
                try writeFile(stage, levels: levels, attributes: attributes, options: uncompressed)
                try rewrite(stage, as: temporary, compression: options.compression, path: path, category: .outputFailure)
            }
    }

    /// Refuses a size no EXR data window can have and a deflate level out of range.
    static func check(width: Int, height: Int, options: EXROptions, path: String) throws {
        guard width > 0, height > 0, width <= Int(Int32.max), height <= Int(Int32.max) else {
            throw ExchangeError(path: path, operation: "EXRFile.write",
                                message: "an EXR data window cannot be \(width)×\(height)", category: .outputFailure)
        }
        if let level = options.zipLevel, !(0...12).contains(level) {
            throw ExchangeError(path: path, operation: "EXRFile.write",
                                message: "zip level \(level) is outside 0...12", category: .outputFailure)
        }
    }

    /// The DWA compression level (OpenEXR's default: 45).
    static let dwaLevel: Float = 45

    /// Rewrites the scanline EXR `input` as `output` with `compression`, through the OpenEXR
    /// C++ library (for DWA, which OpenEXRCore 3.1 neither writes nor reads); errors name `path`.
    /// The library is loaded on first use (`CLazyLibraries`); where it cannot be, DWA files are
    /// a feature this installation lacks: exit 16 for a file to write (`category`
    /// `.outputFailure`), 14 for one to read.
    static func rewrite(_ input: String, as output: String, compression: EXRCompression, path: String,
                        category: FailureCategory) throws {
        if let reason = LazyLibrary.openEXRCxx.load() {
            let writing = category == .outputFailure
            throw ExchangeError(path: path, operation: "dlopen",
                                message: "DWA-compressed EXR files cannot be \(writing ? "written" : "read"): \(reason)",
                                category: writing ? .outputFailure : .unsupportedFeature)
        }
        var message = [CChar](repeating: 0, count: 512)
        guard scenelinear_exr_rewrite(input, output, Int32(compression.exrValue.rawValue), dwaLevel, &message, message.count) == 0 else {
            throw ExchangeError(path: path, operation: "OpenEXR C++ rewrite (\(compression.rawValue))",
                                message: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                                category: category)
        }
    }

    /// The layer whose values become the alpha channel `A`: the DNG transparency mask.
    public static let alphaLayer = "transparency"

    /// The clip-mask channel of the default (`.flat`) layout.
    public static let clipMaskChannel = "mask_clipped"

    /// The clip-mask channel of `layout`: `mask_clipped` or `mask.clipped.Y`.
    public static func clipMaskChannel(_ layout: EXRLayout) -> String {
        layout == .flat ? clipMaskChannel : "mask.clipped.Y"
    }

    /// The channel of the per-pixel standard deviation of colour channel `channel` ("R", "G"
    /// or "B"): `std_<channel>` (`.flat`, the default) or `std.<channel>` (`.layers`). The
    /// reader accepts both.
    public static func standardDeviationChannel(_ channel: String, layout: EXRLayout = .flat) -> String {
        layout == .flat ? "std_\(channel)" : "std.\(channel)"
    }

    /// The channel of a semantic mask layer: `mask_<name>` (`.flat`) or `mask.<name>.Y` (`.layers`).
    public static func maskChannel(_ name: String, layout: EXRLayout = .flat) -> String {
        layout == .flat ? "mask_\(name)" : "mask.\(name).Y"
    }

    private static func writeFile(_ path: String, levels: [EXRPixelStore], attributes: [(String, EXRAttributeValue)],
                                  options: EXROptions) throws {
        let top = levels[0]
        guard options.tiling != nil else {
            // Scanlines: the route of the streamed files, given the whole image.
            let file = try EXRScanlineWriter(file: path, reportedAs: path, width: top.width, height: top.height,
                                             extraNames: top.names, attributes: attributes, options: options)
            top.withPlanes { file.writeAll(from: $0, threads: Parallel.threadCount) }
            return try file.finish()
        }
        let context = try EXRContext.create(path)
        guard context.handle != nil else { return }
        let part = try writeHeader(context, width: top.width, height: top.height, extraNames: top.names,
                                   attributes: attributes, options: options)
        // Mip-map levels own their values; a single level may reference the image's.
        try top.withPlanes { first in
            try EXRTileEncoder(context: context, part: part, levels: [first] + levels.dropFirst().map { $0.withPlanes { $0 } }).run()
        }
        withExtendedLifetime(levels) {}
        try context.finish()
    }

    /// The names of the single-channel planes after R, G, B, in the order they are added:
    /// alpha (from the transparency mask layer), the clip mask (when asked for and known: a
    /// channel of zeros for an image whose clipping is unknown would claim that nothing
    /// clipped), then each other semantic mask layer; each with where its values come from
    /// (the index of a mask layer, or nil for the clip mask).
    static func extraChannels(masks: [SemanticMaskLayer], clipMaskKnown: Bool, options: EXROptions) -> [(name: String, layer: Int?)] {
        var out: [(name: String, layer: Int?)] = []
        if let alpha = masks.firstIndex(where: { $0.name == alphaLayer }) { out.append(("A", alpha)) }
        if options.includeClipMask && clipMaskKnown { out.append((clipMaskChannel(options.layout), nil)) }
        for (i, layer) in masks.enumerated() where layer.name != alphaLayer {
            out.append((maskChannel(layer.name, layout: options.layout), i))
        }
        return out
    }

    /// Adds the part, its channels (R, G, B, then `extraNames`) and `attributes`, and writes
    /// the header; returns the part's index.
    static func writeHeader(_ context: EXRContext, width: Int, height: Int, extraNames: [String],
                            attributes: [(String, EXRAttributeValue)], options: EXROptions) throws -> Int32 {
        guard let ctxt = context.handle else { return 0 }
        var part: Int32 = 0
        try context.check(exr_add_part(ctxt, nil, options.tiling == nil ? EXR_STORAGE_SCANLINE : EXR_STORAGE_TILED, &part),
                          "exr_add_part")
        try context.check(exr_initialize_required_attr_simple(ctxt, part, Int32(width), Int32(height),
                                                              options.compression.exrValue),
                          "exr_initialize_required_attr_simple")
        if let tiling = options.tiling {
            try context.check(exr_set_tile_descriptor(ctxt, part, UInt32(tiling.tileSize), UInt32(tiling.tileSize),
                                                      tiling.mipmaps ? EXR_TILE_MIPMAP_LEVELS : EXR_TILE_ONE_LEVEL,
                                                      EXR_TILE_ROUND_DOWN),
                              "exr_set_tile_descriptor")
        }
        if let level = options.zipLevel {
            // PXR24 deflates with the library's zlib, whose levels stop at 9.
            try context.check(exr_set_zip_compression_level(ctxt, part, Int32(min(level, 9))), "exr_set_zip_compression_level")
        }
        let pixelType = options.pixelType == .half ? EXR_PIXEL_HALF : EXR_PIXEL_FLOAT
        for name in ["R", "G", "B"] + extraNames {
            try context.check(exr_add_channel(ctxt, part, name, pixelType, EXR_PERCEPTUALLY_LOGARITHMIC, 1, 1),
                              "exr_add_channel")
        }
        if attributes.contains(where: { $0.0.utf8.count > 31 }) || extraNames.contains(where: { $0.utf8.count > 31 }) {
            try context.check(exr_set_longname_support(ctxt, 1), "exr_set_longname_support")
        }
        for (name, value) in attributes {
            try setAttribute(context, part, name, value)
        }
        try context.check(exr_write_header(ctxt), "exr_write_header")
        return part
    }

    private static func setAttribute(_ context: EXRContext, _ part: Int32, _ name: String,
                                     _ value: EXRAttributeValue) throws {
        guard let ctxt = context.handle else { return }
        let rv: exr_result_t
        switch value {
        case .string(let s): rv = exr_attr_set_string(ctxt, part, name, s)
        case .int(let i): rv = exr_attr_set_int(ctxt, part, name, Int32(i))
        case .float(let f): rv = exr_attr_set_float(ctxt, part, name, f)
        case .v2f(let a):
            var v = exr_attr_v2f_t()
            v.x = a[0]
            v.y = a[1]
            rv = exr_attr_set_v2f(ctxt, part, name, &v)
        case .double(let d): rv = exr_attr_set_double(ctxt, part, name, d)
        case .floatVector(let a): rv = exr_attr_set_float_vector(ctxt, part, name, Int32(a.count), a)
        case .chromaticities(let c):
            var v = exr_attr_chromaticities_t(red_x: c[0], red_y: c[1], green_x: c[2], green_y: c[3],
                                              blue_x: c[4], blue_y: c[5], white_x: c[6], white_y: c[7])
            rv = exr_attr_set_chromaticities(ctxt, part, name, &v)
        case .v2d(let a):
            var v = exr_attr_v2d_t()
            v.x = a[0]
            v.y = a[1]
            rv = exr_attr_set_v2d(ctxt, part, name, &v)
        case .v3d(let a):
            var v = exr_attr_v3d_t()
            v.x = a[0]
            v.y = a[1]
            v.z = a[2]
            rv = exr_attr_set_v3d(ctxt, part, name, &v)
        case .m33d(let a):
            var v = exr_attr_m33d_t()
            withUnsafeMutableBytes(of: &v.m) { raw in
                for (i, x) in a.prefix(9).enumerated() { raw.storeBytes(of: x, toByteOffset: i * 8, as: Double.self) }
            }
            rv = exr_attr_set_m33d(ctxt, part, name, &v)
        default:
            preconditionFailure("the writer does not produce \(value) attributes")
        }
        try context.check(rv, "exr_attr_set (\(name))")
    }
}

extension EXRCompression {
    var exrValue: exr_compression_t {
        switch self {
        case .none: return EXR_COMPRESSION_NONE
        case .rle: return EXR_COMPRESSION_RLE
        case .zips: return EXR_COMPRESSION_ZIPS
        case .zip: return EXR_COMPRESSION_ZIP
        case .piz: return EXR_COMPRESSION_PIZ
        case .pxr24: return EXR_COMPRESSION_PXR24
        case .b44: return EXR_COMPRESSION_B44
        case .b44a: return EXR_COMPRESSION_B44A
        case .dwaa: return EXR_COMPRESSION_DWAA
        case .dwab: return EXR_COMPRESSION_DWAB
        }
    }

    /// Whether the file is written through the OpenEXR C++ library (`CEXRDWA`).
    var needsCXXEncoder: Bool { self == .dwaa || self == .dwab }

    init?(exrValue: exr_compression_t) {
        guard let match = EXRCompression.allCases.first(where: { $0.exrValue == exrValue }) else { return nil }
        self = match
    }
}

/// A single-channel plane an EXR carries beyond the image and its masks.
public struct EXRAuxiliaryChannel: Sendable {
    public var name: String
    /// One value per pixel, row-major.
    public var values: [Float]

    public init(name: String, values: [Float]) {
        self.name = name
        self.values = values
    }

    /// The channels `std_R`, `std_G`, `std_B` (or `std.R`, … in `.layers`) of standard
    /// deviations interleaved as RGB, `pixels` of them, split in parallel.
    public static func standardDeviations(_ interleaved: [Float], pixels: Int, layout: EXRLayout) -> [EXRAuxiliaryChannel] {
        ["R", "G", "B"].enumerated().map { c, name in
            EXRAuxiliaryChannel(name: EXRFile.standardDeviationChannel(name, layout: layout),
                                values: LargeBuffer.make(Float.self, count: pixels, reading: interleaved) { range, std, out in
                                    for i in range { out[i] = std[3 * i + c] }
                                })
        }
    }
}
