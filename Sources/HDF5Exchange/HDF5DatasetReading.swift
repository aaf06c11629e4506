internal import CHDF5
import ExchangeCore
import HDF5Format
import Foundation
import ImageCore

/// libhdf5's undefined address (`HADDR_UNDEF`).
private let undefinedAddress = haddr_t.max

/// Names of HDF5 filters a file may use that the reader does not undo.
private let otherFilterNames: [Int32: String] = [
    3: "fletcher32", 4: "szip", 5: "nbit", 6: "scaleoffset", 307: "bzip2", 32000: "lzf", 32001: "blosc", 32004: "lz4",
    32008: "bitshuffle", 32013: "zfp", 32015: "zstd", 32017: "sz", 32026: "blosc2",
]

extension HDF5Session {
    /// The elements of `dataset` (of dimensions `dims`, C order) converted to `memoryType`,
    /// whose elements are `T`s — read without letting libhdf5 touch the stored data, whose
    /// sizes libhdf5 1.10.8 trusts:
    ///
    /// - chunked: libhdf5 lists the chunks (`H5Dget_num_chunks`, `H5Dget_chunk_info`, which
    ///   read the chunk index, not the chunks); `HDF5ChunkedDataset` checks each entry and
    ///   decodes the chunks from the mapped file on all cores. Only the shuffle and deflate
    ///   filters are read.
    /// - contiguous: the bytes at the dataset's address, which must lie inside the file.
    /// - compact (data inside the object header, in a buffer libhdf5 checked against the
    ///   message's size): `H5Dread`, once the layout is seen to hold the whole dataset.
    /// - virtual datasets and external storage are refused.
    ///
    /// Unless the file type is `memoryType`, libhdf5 then converts the elements in memory
    /// (`H5Tconvert`, the conversion `H5Dread` makes).
    /// - Parameter name: the dataset's path, for messages ("/image").
    /// - Throws: `ExchangeError`: `.unsupportedFeature` for a filter, layout or storage that
    ///   is not read; `.corruptData` for a damaged chunk index, chunk or layout, or elements
    ///   that are not integer or floating-point numbers.
    func readDataset<T: BitwiseCopyable>(_ dataset: H5Handle, name: String, dims: [Int], memoryType: hid_t,
                                         as _: T.Type) throws -> [T] {
        let fileType = try type(H5Dget_type(dataset.id), "H5Dget_type (\(name))")
        let typeClass = H5Tget_class(fileType.id)
        guard typeClass == H5T_FLOAT || typeClass == H5T_INTEGER else {
            throw ExchangeError(path: path, operation: "readSceneLinear", message: "\(name) is not a dataset of numbers",
                                category: .corruptData)
        }
        let elementSize = H5Tget_size(fileType.id)
        guard (1...64).contains(elementSize) else {
            throw ExchangeError(path: path, operation: "readSceneLinear", message: "\(name) has elements of \(elementSize) bytes",
                                category: .corruptData)
        }
        let count = dims.reduce(1, *)
        let memorySize = MemoryLayout<T>.stride
        precondition(H5Tget_size(memoryType) == memorySize)
        let dcpl = try plist(H5Dget_create_plist(dataset.id), "H5Dget_create_plist (\(name))")
        let layout = H5Pget_layout(dcpl.id)
        if layout == H5D_COMPACT {
            return try readCompact(dataset, name: name, count: count, elementSize: elementSize, memoryType: memoryType)
        }
        guard layout == H5D_CHUNKED || layout == H5D_CONTIGUOUS else {
            if layout == H5D_VIRTUAL {
                throw ExchangeError(path: path, operation: "layout", message: "\(name) is a virtual dataset, which is not read",
                                    category: .unsupportedFeature)
            }
            throw error("H5Pget_layout (\(name))", "layout \(layout.rawValue)")
        }
        guard H5Pget_external_count(dcpl.id) == 0 else {
            throw ExchangeError(path: path, operation: "layout", message: "\(name) keeps its data in external files, which are not read",
                                category: .unsupportedFeature)
        }
        let file = try mappedFile(dataset)
        // Room for the elements as stored and, converted in place, as asked for.
        let slots = (max(elementSize, memorySize) + memorySize - 1) / memorySize
        var values: [T]
        if layout == H5D_CHUNKED {
            let plan = try chunkPlan(dataset, dcpl: dcpl, name: name, dims: dims, elementSize: elementSize, file: file)
            let fill = plan.missing.isEmpty ? nil
                : try fillElement(dataset, dcpl: dcpl, fileType: fileType, name: name, plan: plan)
            // Every element is written when every chunk is stored.
            values = plan.missing.isEmpty ? LargeBuffer.uninitialized(T.self, count: count * slots)
                : Self.zeroed(T.self, count: count * slots)
            try values.withUnsafeMutableBytes { raw in
                try decode(plan, fill: fill, name: name, file: file, into: raw.baseAddress!)
            }
        } else {
            values = try readContiguous(dataset, dcpl: dcpl, name: name, count: count, elementSize: elementSize,
                                        slots: slots, file: file)
        }
        try file.checkWhole()
        if H5Tequal(fileType.id, memoryType) <= 0 {
            try values.withUnsafeMutableBytes { raw in
                try check(H5Tconvert(fileType.id, memoryType, count, raw.baseAddress, nil, chdf5_P_DEFAULT()), "H5Tconvert (\(name))")
            }
        }
        if values.count > count { values.removeLast(values.count - count) }
        return values
    }

    /// `dataset` (dimensions `dims`, C order) as blocks of rows to decode on demand
    /// (`HDF5RowBlocks`), when it can be read so: chunked, every chunk stored, the file's
    /// elements already of `memoryType`, and blocks (`ImagePatch.fillRows`) of at most
    /// `HDF5RowBlocks.maximumFillRows` rows. Nil otherwise (read it whole with `readDataset`).
    /// - Throws: as `readDataset`, for a damaged chunk index.
    func rowBlocks(_ dataset: H5Handle, name: String, dims: [Int], memoryType: hid_t) throws -> HDF5RowBlocks? {
        let fileType = try type(H5Dget_type(dataset.id), "H5Dget_type (\(name))")
        let dcpl = try plist(H5Dget_create_plist(dataset.id), "H5Dget_create_plist (\(name))")
        guard H5Tequal(fileType.id, memoryType) > 0, H5Pget_layout(dcpl.id) == H5D_CHUNKED, H5Pget_external_count(dcpl.id) == 0 else {
            return nil
        }
        let file = try mappedFile(dataset)
        let plan = try chunkPlan(dataset, dcpl: dcpl, name: name, dims: dims, elementSize: H5Tget_size(fileType.id), file: file)
        let chunkRows = plan.dataset.chunk[0]
        guard plan.missing.isEmpty, chunkRows >= 1, ImagePatch.fillRows(blockRows: chunkRows) <= HDF5RowBlocks.maximumFillRows else {
            return nil
        }
        var byRow = [[HDF5ChunkedDataset.PlacedChunk]](repeating: [], count: plan.dataset.grid[0])
        for chunk in plan.chunks { byRow[chunk.offset[0] / chunkRows].append(chunk) }
        return HDF5RowBlocks(dataset: plan.dataset, chunksByRow: byRow, file: file, name: name, path: path)
    }

    private static func zeroed<T: BitwiseCopyable>(_: T.Type, count: Int) -> [T] {
        [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            if let base = buffer.baseAddress { memset(base, 0, count * MemoryLayout<T>.stride) }
            initialized = count
        }
    }

    private func corrupt(_ damage: HDF5ChunkDamage, _ name: String) -> ExchangeError {
        damage.error(dataset: name, path: path)
    }

    /// A chunked dataset's grid and stored chunks, checked.
    struct ChunkPlan {
        let dataset: HDF5ChunkedDataset
        let chunks: [HDF5ChunkedDataset.PlacedChunk]
        /// Grid cells without a stored chunk.
        let missing: [Int]
    }

    private func chunkPlan(_ dataset: H5Handle, dcpl: H5Handle, name: String, dims: [Int], elementSize: Int,
                           file: HDF5MappedFile) throws -> ChunkPlan {
        let rank = dims.count
        var chunkDims = [hsize_t](repeating: 0, count: rank)
        guard H5Pget_chunk(dcpl.id, Int32(rank), &chunkDims) == Int32(rank) else {
            throw error("H5Pget_chunk (\(name))", "the chunks do not have the dataset's \(rank) dimensions")
        }
        let pipeline = try filterPipeline(dcpl, name: name)
        var options: UInt32 = 0
        try check(H5Pget_chunk_opts(dcpl.id, &options), "H5Pget_chunk_opts (\(name))")
        let grid: HDF5ChunkedDataset
        do {
            grid = try HDF5ChunkedDataset(dims: dims, chunk: chunkDims.map { $0 > hsize_t(Int.max) ? 0 : Int($0) },
                                          elementSize: elementSize, pipeline: pipeline,
                                          partialChunksUnfiltered: options & UInt32(H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS) != 0)
        } catch {
            throw corrupt(error, name)
        }
        let space = try self.space(H5Dget_space(dataset.id), "H5Dget_space (\(name))")
        var listed: hsize_t = 0
        try check(H5Dget_num_chunks(dataset.id, space.id, &listed), "H5Dget_num_chunks (\(name))")
        // Checked before the chunks are listed: each H5Dget_chunk_info walks the index from its start.
        guard listed <= hsize_t(grid.cellCount) else {
            throw corrupt(.index("the chunk index lists \(listed) chunks; a grid of \(HDF5ChunkedDataset.describe(grid.grid)) has \(grid.cellCount)"), name)
        }
        var stored: [HDF5StoredChunk] = []
        stored.reserveCapacity(Int(listed))
        // Room for the most dimensions HDF5 has (32) and the element's: libhdf5 writes one per dimension.
        var offset = [hsize_t](repeating: 0, count: 33)
        for i in 0..<listed {
            var mask: UInt32 = 0
            var address: haddr_t = 0
            var size: hsize_t = 0
            try check(H5Dget_chunk_info(dataset.id, space.id, i, &offset, &mask, &address, &size), "H5Dget_chunk_info (\(name))")
            stored.append(HDF5StoredChunk(offset: Array(offset.prefix(rank)), filterMask: mask, address: UInt64(address), size: size))
        }
        do {
            let (chunks, missing) = try grid.place(stored, in: file)
            return ChunkPlan(dataset: grid, chunks: chunks, missing: missing)
        } catch {
            throw corrupt(error, name)
        }
    }

    /// The filters of a chunked dataset, in the order they were applied.
    private func filterPipeline(_ dcpl: H5Handle, name: String) throws -> [HDF5Filter] {
        let count = H5Pget_nfilters(dcpl.id)
        guard count >= 0 else { throw error("H5Pget_nfilters (\(name))") }
        var filters: [HDF5Filter] = []
        for i in 0..<UInt32(count) {
            var flags: UInt32 = 0, config: UInt32 = 0
            var parameterCount = 8
            var parameters = [UInt32](repeating: 0, count: parameterCount)
            var storedName = [CChar](repeating: 0, count: 64)
            let id = H5Pget_filter2(dcpl.id, i, &flags, &parameterCount, &parameters, storedName.count, &storedName, &config)
            guard id >= 0 else { throw error("H5Pget_filter2 (\(name))") }
            let filter: HDF5Filter
            switch id {
            case H5Z_FILTER_DEFLATE:
                filter = .deflate
            case H5Z_FILTER_SHUFFLE:
                // libhdf5 takes one parameter, the element size, and refuses other counts.
                guard parameterCount == 1, parameters[0] > 0 else {
                    let values = parameters.prefix(min(parameterCount, parameters.count)).map(String.init).joined(separator: ", ")
                    throw ExchangeError(path: path, operation: "filter pipeline",
                                        message: "\(name): the shuffle filter has the parameters [\(values)]; it takes one, the element size",
                                        category: .corruptData)
                }
                filter = .shuffle(elementSize: Int(parameters[0]))
            default:
                let stored = String(decoding: storedName.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                let printable = !stored.isEmpty && stored.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }
                let label = otherFilterNames[id] ?? (printable ? "named \"\(stored)\" in the file" : "unnamed")
                throw ExchangeError(path: path, operation: "filter pipeline",
                                    message: "\(name): filter \(id) (\(label)) is not read; only shuffle (2) and deflate (1) are",
                                    category: .unsupportedFeature)
            }
            guard !filters.contains(where: { $0.name == filter.name }) else {
                throw ExchangeError(path: path, operation: "filter pipeline",
                                    message: "\(name): the \(filter.name) filter appears twice in the pipeline, which is not read",
                                    category: .unsupportedFeature)
            }
            filters.append(filter)
        }
        return filters
    }

    /// The bytes of one element that grid cells without a stored chunk read as, or nil for
    /// zeros.
    ///
    /// libhdf5 leaves such an element as the caller's buffer had it (zero here) unless the
    /// fill value is user-defined and the fill time is not "never"; it then writes the fill
    /// value. That value is taken from libhdf5 by `H5Dread` of one element of a cell no
    /// chunk is stored for (which reads no chunk: `H5Dget_chunk_info_by_coord` confirms
    /// there is none) — not by `H5Pget_fill_value`, which reads a stored fill value shorter
    /// than an element past its end (libhdf5 1.10.8).
    private func fillElement(_ dataset: H5Handle, dcpl: H5Handle, fileType: H5Handle, name: String,
                             plan: ChunkPlan) throws -> [UInt8]? {
        guard try userFillValueIsWritten(dcpl, name: name) else { return nil }
        guard !plan.chunks.isEmpty else {
            // With no chunk stored libhdf5 copies the fill value as a whole element, past
            // the end of a shorter one.
            throw ExchangeError(path: path, operation: "fill value",
                                message: "\(name) has no chunk stored, only a fill value, which is not read",
                                category: .unsupportedFeature)
        }
        let offset = plan.dataset.offset(ofCell: plan.missing[0]).map { hsize_t($0) }
        var mask: UInt32 = 0
        var address: haddr_t = 0
        var size: hsize_t = 0
        try check(H5Dget_chunk_info_by_coord(dataset.id, offset, &mask, &address, &size), "H5Dget_chunk_info_by_coord (\(name))")
        guard address == undefinedAddress else {
            throw corrupt(.index("the chunk at \(HDF5ChunkedDataset.describe(offset)) is found by its coordinates (at address \(address)) but not listed"), name)
        }
        let fileSpace = try space(H5Dget_space(dataset.id), "H5Dget_space (\(name))")
        let one = [hsize_t](repeating: 1, count: offset.count)
        try check(H5Sselect_hyperslab(fileSpace.id, H5S_SELECT_SET, offset, nil, one, nil), "H5Sselect_hyperslab (\(name))")
        let memorySpace = try dataspace([1])
        var element = [UInt8](repeating: 0, count: plan.dataset.elementSize)
        try check(H5Dread(dataset.id, fileType.id, memorySpace.id, fileSpace.id, chdf5_P_DEFAULT(), &element),
                  "H5Dread (\(name), fill value)")
        return element.allSatisfy { $0 == 0 } ? nil : element
    }

    /// True when elements without stored data read as a user-defined fill value.
    private func userFillValueIsWritten(_ dcpl: H5Handle, name: String) throws -> Bool {
        var status = H5D_FILL_VALUE_UNDEFINED
        try check(H5Pfill_value_defined(dcpl.id, &status), "H5Pfill_value_defined (\(name))")
        var time = H5D_FILL_TIME_IFSET
        try check(H5Pget_fill_time(dcpl.id, &time), "H5Pget_fill_time (\(name))")
        return status == H5D_FILL_VALUE_USER_DEFINED && time != H5D_FILL_TIME_NEVER
    }

    /// Fills the cells without a stored chunk, then decodes the stored chunks on all cores.
    private func decode(_ plan: ChunkPlan, fill: [UInt8]?, name: String, file: HDF5MappedFile,
                        into destination: UnsafeMutableRawPointer) throws {
        if let fill {
            for cell in plan.missing { plan.dataset.fill(cell: cell, with: fill, into: destination) }
        }
        // Each chunk writes its own part of the destination (`place` refused chunks listed
        // twice or off the grid); no worker calls libhdf5.
        // Safe because each chunk's worker writes only that chunk's elements of the destination.
        nonisolated(unsafe) let target = destination
        let dataset = plan.dataset, chunks = plan.chunks
        // Runs of consecutive chunks, each decoded by one worker with buffers it keeps; the
        // first failure is that of the first chunk in index order that fails.
        let perRun = max(1, (chunks.count + 4 * Parallel.threadCount - 1) / (4 * Parallel.threadCount))
        let runs = (chunks.count + perRun - 1) / perRun
        do {
            _ = try Parallel.map(runs) { run in
                var scratch = HDF5ChunkedDataset.Scratch()
                for i in (run * perRun)..<min(chunks.count, (run + 1) * perRun) {
                    try dataset.decode(chunks[i], from: file, into: target, scratch: &scratch)
                }
            }
        } catch let damage as HDF5ChunkDamage {
            throw corrupt(damage, name)
        }
    }

    /// A contiguous dataset's bytes, copied from the file (libhdf5 reads zeros for the part
    /// of a damaged layout's range past the end of the file).
    private func readContiguous<T: BitwiseCopyable>(_ dataset: H5Handle, dcpl: H5Handle, name: String, count: Int,
                                                    elementSize: Int, slots: Int, file: HDF5MappedFile) throws -> [T] {
        let bytes = count * elementSize
        var status = H5D_SPACE_STATUS_ERROR
        try check(H5Dget_space_status(dataset.id, &status), "H5Dget_space_status (\(name))")
        guard status != H5D_SPACE_STATUS_NOT_ALLOCATED else {
            // libhdf5 would copy a fill value shorter than an element past its end.
            guard try !userFillValueIsWritten(dcpl, name: name) else {
                throw ExchangeError(path: path, operation: "fill value",
                                    message: "\(name) has no data stored, only a fill value, which is not read",
                                    category: .unsupportedFeature)
            }
            return Self.zeroed(T.self, count: count * slots)
        }
        let stored = H5Dget_storage_size(dataset.id)
        guard stored == hsize_t(bytes) else {
            throw ExchangeError(path: path, operation: "contiguous data",
                                message: "\(name): the layout stores \(stored) bytes; the dataset is \(bytes)", category: .corruptData)
        }
        // The absolute file offset (libhdf5 adds the base address here, unlike in H5Dget_chunk_info).
        let offset = UInt64(H5Dget_offset(dataset.id))
        let (end, overflow) = offset.addingReportingOverflow(UInt64(bytes))
        guard offset != UInt64(undefinedAddress), !overflow, end <= UInt64(file.bytes.count) else {
            throw ExchangeError(path: path, operation: "contiguous data",
                                message: "\(name): \(bytes) bytes at file offset \(offset) run past the end of the file (\(file.bytes.count) bytes)",
                                category: .corruptData)
        }
        var values = LargeBuffer.uninitialized(T.self, count: count * slots)
        values.withUnsafeMutableBytes { raw in
            raw.baseAddress!.copyMemory(from: file.bytes.baseAddress! + Int(offset), byteCount: bytes)
        }
        return values
    }

    /// A compact dataset through `H5Dread`, which copies from the layout message's buffer
    /// (whose size libhdf5 checks against the message): refused unless that buffer holds the
    /// whole dataset, since libhdf5 1.10.8 copies the dataset's size from it regardless.
    private func readCompact<T: BitwiseCopyable>(_ dataset: H5Handle, name: String, count: Int, elementSize: Int,
                                                 memoryType: hid_t) throws -> [T] {
        let bytes = count * elementSize
        let stored = H5Dget_storage_size(dataset.id)
        guard stored == hsize_t(bytes) else {
            throw ExchangeError(path: path, operation: "compact data",
                                message: "\(name): the layout holds \(stored) bytes; the dataset is \(bytes)", category: .corruptData)
        }
        var values = Self.zeroed(T.self, count: count)
        try values.withUnsafeMutableBytes { raw in
            try check(H5Dread(dataset.id, memoryType, chdf5_S_ALL(), chdf5_S_ALL(), chdf5_P_DEFAULT(), raw.baseAddress),
                      "H5Dread (\(name))")
        }
        return values
    }
}

/// A chunked dataset read a block of whole chunk rows at a time (`decode(rows:into:)`), from
/// the mapped file, on any thread: the measurements' passes over our HDF5 file.
struct HDF5RowBlocks: Sendable {
    let dataset: HDF5ChunkedDataset
    /// The stored chunks of each row of the chunk grid.
    let chunksByRow: [[HDF5ChunkedDataset.PlacedChunk]]
    let file: HDF5MappedFile
    let name: String, path: String

    /// The tallest blocks read (a dataset whose chunks need taller ones is read whole).
    static let maximumFillRows = 128

    /// Rows per chunk.
    var chunkRows: Int { dataset.chunk[0] }

    /// Bytes per dataset row (every dimension but the first).
    var rowBytes: Int { dataset.dims.dropFirst().reduce(dataset.elementSize, *) }

    /// Decodes dataset rows `rows` into `band` (`rows.count × rowBytes` bytes). `rows` starts
    /// on a chunk row and ends on one or at the last row, so that every chunk decoded lies
    /// inside it.
    /// - Throws: `ExchangeError`: `.corruptData` for a chunk that fails, `.truncated` when the
    ///   file was cut while it was read.
    func decode(rows: Range<Int>, into band: UnsafeMutableRawPointer) throws {
        guard !rows.isEmpty else { return }
        // The dataset's row 0 lies `rows.lowerBound` rows before the band: chunks inside
        // `rows` write only the band's bytes.
        let origin = band - rows.lowerBound * rowBytes
        var scratch = HDF5ChunkedDataset.Scratch()
        do {
            for k in (rows.lowerBound / chunkRows)...((rows.upperBound - 1) / chunkRows) {
                for chunk in chunksByRow[k] {
                    try dataset.decode(chunk, from: file, into: origin, scratch: &scratch)
                    file.releaseResidentPages(offset: chunk.start, length: chunk.size)
                }
            }
        } catch {
            throw error.error(dataset: name, path: path)
        }
        try file.checkWhole()
    }
}

extension HDF5ChunkDamage {
    /// The error for this damage, found in the chunks or chunk index of dataset `name` of `path`.
    func error(dataset name: String, path: String) -> ExchangeError {
        ExchangeError(path: path, operation: operation, message: "\(name): \(self)", category: .corruptData)
    }
}
