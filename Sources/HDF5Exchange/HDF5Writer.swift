internal import CHDF5
import ExchangeCore
import Foundation
import ImageCore

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
            let samples = HDF5Samples(layer, as: options.sampleType)
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
