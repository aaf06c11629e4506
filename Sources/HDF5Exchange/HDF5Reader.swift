internal import CHDF5
import ExchangeCore
import Foundation
import ImageCore

/// Reads the `HDF5File` layout.
struct HDF5Reader {
    let session: HDF5Session
    let file: H5Handle
    let limits: ReadLimits

    /// What `read` finds: the image's metadata (a `SceneLinearImage` without pixels), `/image`
    /// as stored, its size, the clip mask and the semantic masks.
    struct Contents {
        var metadata: SceneLinearImage
        /// `/image` as stored; nil when it is read in blocks (`imageBlocks`).
        var stored: HDF5Samples?
        var width: Int, height: Int
        var clipMask: [UInt8]?
        /// `/image` and `/clip_mask` to decode a block of rows at a time, when asked for
        /// (`read(keepStored:blocks:)`) and the datasets allow it.
        var imageBlocks: HDF5RowBlocks? = nil
        var maskBlocks: HDF5RowBlocks? = nil
        var masks: [SemanticMaskLayer]
        /// The per-pixel standard deviation layer (`HDF5File.deviationDatasets`), when read.
        var deviation: [Float]? = nil
    }

    /// The file's contents; the semantic masks only when the stored pixels are not kept for
    /// measuring (`keepStored`, which also checks the limits for them instead of `Float`).
    /// With `blocks` (measuring), `/image` and `/clip_mask` are left to be decoded a block of
    /// rows at a time where their chunks allow it (`HDF5RowBlocks`, blocks of at most
    /// `HDF5RowBlocks.maximumFillRows` rows), and read whole otherwise.
    func read(keepStored: Bool, blocks: Bool = false) throws -> Contents {
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
        let imageBlocks = blocks ? try imageRowBlocks(dataset, height: height, width: width) : nil
        // Float RGB (or as stored), the clip mask, and a few mask layers' worth; in blocks, none.
        try limits.check(path: s.path, width: width, height: height,
                         bytesPerPixel: imageBlocks != nil ? 0 : keepStored ? 12 + 1 : 12 + 1 + 4)
        let samples = imageBlocks == nil ? try readPixels(dataset, height: height, width: width) : nil
        let imageAttributes = Dictionary(try s.attributes(dataset), uniquingKeysWith: { a, _ in a })

        var mask: [UInt8]?
        var maskBlocks: HDF5RowBlocks?
        if exists("clip_mask") {
            try s.checkHeader(of: "clip_mask", from: file)
            let maskSet = try s.handle(H5Dopen2(file.id, "clip_mask", chdf5_P_DEFAULT()), "H5Dopen2 (/clip_mask)",
                                       closer: H5Dclose)
            let (mh, mw) = try shape(maskSet, channels: nil, name: "/clip_mask")
            guard mh == height, mw == width else {
                throw ExchangeError(path: s.path, operation: "readSceneLinear",
                                    message: "/clip_mask is \(mw)×\(mh), /image \(width)×\(height)", category: .corruptData)
            }
            if let imageBlocks {
                // In blocks only when the image's blocks hold whole rows of its chunks too.
                maskBlocks = try s.rowBlocks(maskSet, name: "/clip_mask", dims: [height, width], memoryType: chdf5_NATIVE_UINT8())
                    .flatMap { ImagePatch.fillRows(blockRows: imageBlocks.chunkRows) % $0.chunkRows == 0 ? $0 : nil }
            }
            if maskBlocks == nil {
                mask = try s.readDataset(maskSet, name: "/clip_mask", dims: [height, width], memoryType: chdf5_NATIVE_UINT8(),
                                         as: UInt8.self)
            }
        }

        let masks = keepStored ? [] : try readMasks(width: width, height: height)
        let deviation = keepStored ? nil : try readDeviation(width: width, height: height)

        func items(_ name: String) throws -> [MetadataItem] {
            guard exists(name) else { return [] }
            try s.checkHeader(of: name, from: file)
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
        try s.checkMappedFileWhole()
        return Contents(metadata: metadata, stored: samples, width: width, height: height, clipMask: mask, imageBlocks: imageBlocks,
                        maskBlocks: maskBlocks, masks: masks, deviation: deviation)
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
        try s.checkHeader(of: "masks", from: file)
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

    /// `/image` in blocks of rows, when its elements are binary16 or binary32 as this
    /// machine holds them and its chunks allow it (`HDF5Session.rowBlocks`).
    private func imageRowBlocks(_ dataset: H5Handle, height: Int, width: Int) throws -> HDF5RowBlocks? {
        let s = session
        let fileType = try s.type(H5Dget_type(dataset.id), "H5Dget_type (/image)")
        guard H5Tget_class(fileType.id) == H5T_FLOAT else { return nil }
        let f16 = try s.type(chdf5_create_float16_le(), "H5Tcopy (float16)")
        let memoryType = H5Tget_size(fileType.id) == 2 ? f16.id : chdf5_NATIVE_FLOAT()
        return try s.rowBlocks(dataset, name: "/image", dims: [height, width, 3], memoryType: memoryType)
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
