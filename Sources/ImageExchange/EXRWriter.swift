internal import COpenEXR
import Foundation
import ImageCore

/// OpenEXR output and input through OpenEXRCore, the C API of OpenEXR 3.
public enum EXRFile {
    /// The name of the optional clip-mask channel.
    public static let clipMaskChannel = "mask.clipped.Y"

    /// Writes `image` as a single-part scanline EXR with HALF channels R, G, B.
    ///
    /// The layout: data window = display window = (0, 0)–(w−1, h−1), channels `R`, `G`,
    /// `B` (and `mask.clipped.Y` with `options.includeClipMask`, and `mask.<name>.Y` for
    /// each semantic mask layer, described by `sceneLinear:mask.<name>` attributes) as HALF with pLinear 0,
    /// increasing-Y line order. The floats are rounded to half once (round to nearest
    /// even; beyond ±65504 they become ±infinity, NaN stays NaN). Header attributes:
    /// `chromaticities` (Rec.2020) and `colorInteropID` for the colour encoding, the
    /// `sceneLinear:` provenance record, one `dng:` attribute per DNG item and the standard
    /// `expTime`/`aperture`/`isoSpeed`/`capDate` when those items exist (see
    /// `EXRFile.readSceneLinear` for the inverse).
    ///
    /// Chunks are compressed on all `Parallel.threadCount` threads, each with its own
    /// OpenEXRCore encode pipeline, and written in increasing chunk order, so the file is
    /// byte-identical whatever the thread count (see `EXROptions` for timings).
    ///
    /// The file is written to a temporary name and renamed into place, so a failure leaves
    /// nothing behind.
    ///
    /// - Throws: `OutputError` when the directory is missing or not writable;
    ///   `ExchangeError` (`.outputFailure`) when OpenEXRCore fails (disk full, image too
    ///   large or empty, ...), with the library's message.
    public static func write(_ image: some SceneLinearRaster, to path: String, options: EXROptions = .init()) throws {
        let width = image.width, height = image.height
        guard width > 0, height > 0, width <= Int(Int32.max), height <= Int(Int32.max) else {
            throw ExchangeError(path: path, operation: "EXRFile.write",
                                message: "an EXR data window cannot be \(width)×\(height)", category: .outputFailure)
        }
        if let level = options.zipLevel, !(0...12).contains(level) {
            throw ExchangeError(path: path, operation: "EXRFile.write",
                                message: "zip level \(level) is outside 0...12", category: .outputFailure)
        }
        let rgb = image.halfPixels()
        // Single-channel planes after R, G, B, all in one allocation: the clip mask (when
        // asked for), then each semantic mask layer.
        var extraNames: [String] = []
        var extra: [Float16] = []
        if options.includeClipMask {
            extraNames.append(clipMaskChannel)
            extra += (image.clipMask ?? [UInt8](repeating: 0, count: width * height)).map { $0 != 0 ? 1 : 0 }
        }
        for layer in image.masks {
            extraNames.append(maskChannel(layer.name))
            extra += HalfConversion.halves(layer.values.samples)
        }
        try AtomicFile.write(to: path) { temporary in
            try reportingDestination(path) {
                try rgb.withUnsafeBufferPointer { rgbBuffer in
                    try extra.withUnsafeBufferPointer { extraBuffer in
                        var planes = EXRSourcePlanes(width: width, height: height, rgb: UnsafeRawPointer(rgbBuffer.baseAddress!))
                        for (k, name) in extraNames.enumerated() {
                            planes.extra.append((name, UnsafeRawPointer(extraBuffer.baseAddress! + k * width * height)))
                        }
                        try writeHalfFile(temporary, planes: planes, image: image, options: options)
                    }
                }
            }
        }
    }

    /// The channel of a semantic mask layer: `mask.<name>.Y`.
    public static func maskChannel(_ name: String) -> String { "mask.\(name).Y" }

    private static func writeHalfFile(_ path: String, planes: EXRSourcePlanes, image: some SceneLinearRaster,
                                      options: EXROptions) throws {
        let context = try EXRContext.create(path)
        guard let ctxt = context.handle else { return }
        var part: Int32 = 0
        try context.check(exr_add_part(ctxt, nil, EXR_STORAGE_SCANLINE, &part), "exr_add_part")
        try context.check(exr_initialize_required_attr_simple(ctxt, part, Int32(planes.width), Int32(planes.height),
                                                              options.compression.exrValue),
                          "exr_initialize_required_attr_simple")
        if let level = options.zipLevel {
            // PXR24 deflates with the library's zlib, whose levels stop at 9.
            try context.check(exr_set_zip_compression_level(ctxt, part, Int32(min(level, 9))), "exr_set_zip_compression_level")
        }
        let channels = ["R", "G", "B"] + planes.extra.map(\.name)
        for name in channels {
            try context.check(exr_add_channel(ctxt, part, name, EXR_PIXEL_HALF, EXR_PERCEPTUALLY_LOGARITHMIC, 1, 1),
                              "exr_add_channel")
        }
        let attributes = EXRMetadata.attributes(for: image)
        if attributes.contains(where: { $0.0.utf8.count > 31 }) {
            try context.check(exr_set_longname_support(ctxt, 1), "exr_set_longname_support")
        }
        for (name, value) in attributes {
            try setAttribute(context, part, name, value)
        }
        try context.check(exr_write_header(ctxt), "exr_write_header")
        let usesDeflate = options.compression == .zip || options.compression == .zips
        try EXRChunkEncoder(context: context, part: part, planes: planes,
                            zip: usesDeflate ? options.zipLevel.map { .libdeflate(level: $0) } ?? .runLength : nil)
            .run(threads: Parallel.threadCount)
        try context.finish()
    }

    private static func setAttribute(_ context: EXRContext, _ part: Int32, _ name: String,
                                     _ value: EXRAttributeValue) throws {
        guard let ctxt = context.handle else { return }
        let rv: exr_result_t
        switch value {
        case .string(let s): rv = exr_attr_set_string(ctxt, part, name, s)
        case .int(let i): rv = exr_attr_set_int(ctxt, part, name, Int32(i))
        case .float(let f): rv = exr_attr_set_float(ctxt, part, name, f)
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
        }
    }

    init?(exrValue: exr_compression_t) {
        guard let match = EXRCompression.allCases.first(where: { $0.exrValue == exrValue }) else { return nil }
        self = match
    }
}

/// The half-float source of a write: interleaved RGB and single-channel planes (clip mask,
/// semantic masks) by channel name.
struct EXRSourcePlanes: @unchecked Sendable {
    var width: Int
    var height: Int
    /// `width * height * 3` interleaved `Float16`.
    var rgb: UnsafeRawPointer
    /// Channel name and `width * height` `Float16` each.
    var extra: [(name: String, plane: UnsafeRawPointer)] = []
}
