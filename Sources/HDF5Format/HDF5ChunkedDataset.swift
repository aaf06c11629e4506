internal import CDeflate
import ExchangeCore
import Foundation
import ImageCore

/// A file mapped read-only, for the parts of an HDF5 file the reader reads itself rather
/// than through libhdf5: global heap collections (`HDF5GlobalHeap`), chunks and contiguous
/// data (`HDF5ChunkedDataset`, `HDF5Session.readDataset`).
///
/// Immutable once made, and the mapping is read-only, so it is shared by the worker threads
/// that decode chunks. A file cut while it is mapped reads zeros where its pages were (not
/// SIGBUS: the range is a `MappedRange`); `checkWhole` then throws.
// Safe because it is immutable once made and its mapping is read-only.
package final class HDF5MappedFile: @unchecked Sendable {
    package let path: String
    /// The file offset of address 0: the size of the user block before the superblock.
    package let base: UInt64
    private let mapping: UnsafeMutableRawPointer?
    private let size: Int
    private let shrinkGuard: MappedRange?

    /// Maps the file.
    /// - Throws: `ExchangeError` (`.inputUnreadable`) when it cannot be opened or mapped.
    package init(path: String, base: UInt64) throws {
        self.path = path
        self.base = base
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ExchangeError(path: path, operation: "open", systemError: errno, category: .inputUnreadable)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw ExchangeError(path: path, operation: "fstat", systemError: errno, category: .inputUnreadable)
        }
        size = Int(info.st_size)
        if size == 0 {
            mapping = nil
            shrinkGuard = nil
            return
        }
        guard let start = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), start != MAP_FAILED else {
            throw ExchangeError(path: path, operation: "mmap", systemError: errno, category: .inputUnreadable)
        }
        mapping = start
        shrinkGuard = MappedRange(base: start, length: size)
    }

    /// Lets the kernel drop the pages that lie wholly inside bytes `offset ..< offset +
    /// length` from this process's resident memory (they stay in the page cache and are read
    /// again when next touched): for data decoded a block at a time, so that the peak does
    /// not hold the file. Pages shared with neighbouring bytes stay.
    package func releaseResidentPages(offset: Int, length: Int) {
        guard let mapping else { return }
        MappedRange.releaseResidentPages(of: mapping, size: size, offset: offset, length: length)
    }

    /// Whether a page of the file was found missing while it was read (the file was cut
    /// under the mapping, and zeros were read instead).
    package var shrank: Bool { shrinkGuard?.shrank ?? false }

    /// - Throws: `ExchangeError` (`.truncated`) when the file was cut while it was read:
    ///   what was read from it since cannot be trusted.
    package func checkWhole() throws {
        if shrank {
            throw ExchangeError(path: path, operation: "read", message: "the file was cut while it was read", category: .truncated)
        }
    }

    deinit {
        if let mapping { munmap(mapping, size) }
    }

    /// The whole file.
    package var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: mapping, count: mapping == nil ? 0 : size) }

    /// The file offset of `count` bytes at `address` (relative to the base), or nil when any
    /// of them lies outside the file.
    package func offset(of address: UInt64, count: UInt64) -> Int? {
        let (start, overflow) = base.addingReportingOverflow(address)
        let (end, overflow2) = start.addingReportingOverflow(count)
        guard !overflow, !overflow2, end <= UInt64(size) else { return nil }
        return Int(start)
    }
}

/// A filter of a dataset's pipeline that the reader undoes itself.
package enum HDF5Filter: Equatable, Sendable {
    /// zlib (HDF5 filter 1).
    case deflate
    /// Byte shuffle (HDF5 filter 2) of elements of `elementSize` bytes, the filter's parameter.
    case shuffle(elementSize: Int)

    package var name: String {
        switch self {
        case .deflate: "deflate"
        case .shuffle: "shuffle"
        }
    }
}

/// One chunk as the chunk index lists it (`H5Dget_chunk_info`).
package struct HDF5StoredChunk: Equatable, Sendable {
    /// Dataset coordinates of the chunk's first element.
    package var offset: [UInt64]
    /// Bit i set: filter i of the pipeline was not applied to this chunk.
    package var filterMask: UInt32
    /// Where its stored bytes start, relative to the file's base address.
    package var address: UInt64
    /// How many bytes are stored.
    package var size: UInt64

    package init(offset: [UInt64], filterMask: UInt32, address: UInt64, size: UInt64) {
        self.offset = offset
        self.filterMask = filterMask
        self.address = address
        self.size = size
    }
}

/// What is wrong with a chunk or the chunk index, as a sentence fragment (the caller names
/// the file and dataset); `operation` is "chunk index" for what the index says about a chunk
/// (where it is, how large, which filters) and "chunk data" for its bytes.
package struct HDF5ChunkDamage: Error, Equatable, CustomStringConvertible {
    package let operation: String
    package let description: String

    package static func index(_ description: String) -> HDF5ChunkDamage { .init(operation: "chunk index", description: description) }
    package static func data(_ description: String) -> HDF5ChunkDamage { .init(operation: "chunk data", description: description) }
}

/// A chunked dataset read chunk by chunk from the file's bytes, with the chunk index's
/// claims checked first: libhdf5 1.10.8's `H5Dread` trusts each chunk's stored size and
/// filter mask, and copies past its buffer when a chunk of an unfiltered dataset is stored
/// shorter than a chunk, when a chunk's filter mask says deflate was skipped, or when a
/// chunk inflates short.
///
/// Chunks tile the dataset from its origin in steps of the chunk dimensions; edge chunks
/// are stored whole and clipped when placed. Each stored chunk must sit on that grid inside
/// the dataset, be listed once, lie inside the file, and — after the filters its mask does
/// not skip are undone, deflate with libdeflate (output exactly one chunk, else refused) and
/// shuffle as libhdf5 undoes it — come to exactly one chunk of bytes.
package struct HDF5ChunkedDataset: Sendable {
    /// HDF5 stores a chunk's size in 32 bits.
    package static let maximumChunkBytes = Int(UInt32.max)
    /// Deflate writes at least 2 bits (a length and a distance code) per 258 bytes it
    /// repeats, so a stream of n bytes inflates to less than 1032 × n.
    package static let maximumDeflateRatio = 1032

    /// Dataset dimensions, C order.
    package let dims: [Int]
    /// Chunk dimensions.
    package let chunk: [Int]
    /// Bytes per element in the file.
    package let elementSize: Int
    /// The filters in the order the writer applied them.
    package let pipeline: [HDF5Filter]
    /// `H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS`: chunks that reach past the dataset's edge
    /// are stored unfiltered.
    package let partialChunksUnfiltered: Bool
    /// Bytes of one chunk.
    package let chunkBytes: Int
    /// Chunks along each dimension.
    package let grid: [Int]
    /// Chunks in the grid.
    package let cellCount: Int

    /// - Throws: `HDF5ChunkDamage` (index) for a chunk dimension of 0 or a chunk of 4 GiB or more.
    package init(dims: [Int], chunk: [Int], elementSize: Int, pipeline: [HDF5Filter], partialChunksUnfiltered: Bool = false)
        throws(HDF5ChunkDamage) {
        precondition(dims.count == chunk.count && !dims.isEmpty && dims.allSatisfy { $0 > 0 } && elementSize > 0)
        guard chunk.allSatisfy({ $0 > 0 }) else {
            throw .index("chunk dimensions \(Self.describe(chunk)) include 0")
        }
        var bytes = elementSize
        for c in chunk {
            let (product, overflow) = bytes.multipliedReportingOverflow(by: c)
            guard !overflow, product <= Self.maximumChunkBytes else {
                throw .index("a chunk of \(Self.describe(chunk)) \(elementSize)-byte elements takes 4 GiB or more, beyond HDF5's limit")
            }
            bytes = product
        }
        self.dims = dims
        self.chunk = chunk
        self.elementSize = elementSize
        self.pipeline = pipeline
        self.partialChunksUnfiltered = partialChunksUnfiltered
        chunkBytes = bytes
        grid = zip(dims, chunk).map { ($0 + $1 - 1) / $1 }
        // At most one chunk per element, and the caller has bounded the elements.
        cellCount = grid.reduce(1, *)
    }

    /// A stored chunk that passed `place`: where it goes and how to decode it.
    package struct PlacedChunk: Sendable {
        /// Its position in the grid, row-major.
        package let cell: Int
        /// Dataset coordinates of its first element.
        package let offset: [Int]
        /// File offset and size of its stored bytes.
        package let start: Int
        package let size: Int
        /// The filters to undo, in the order to undo them (the pipeline's last applied first).
        package let undo: [HDF5Filter]
    }

    /// Checks every chunk the index lists against the grid and the file, and returns them
    /// placed, with the grid cells no chunk was stored for (which read as the fill value).
    /// - Throws: `HDF5ChunkDamage` naming the first chunk in index order that fails.
    package func place(_ chunks: [HDF5StoredChunk], in file: HDF5MappedFile) throws(HDF5ChunkDamage) -> (chunks: [PlacedChunk], missing: [Int]) {
        guard chunks.count <= cellCount else {
            throw .index("the chunk index lists \(chunks.count) chunks; a grid of \(Self.describe(grid)) has \(cellCount)")
        }
        var seen = [Bool](repeating: false, count: cellCount)
        var placed: [PlacedChunk] = []
        placed.reserveCapacity(chunks.count)
        for stored in chunks {
            let at = "the chunk at \(Self.describe(stored.offset))"
            guard stored.offset.count == dims.count else {
                throw .index("\(at) has \(stored.offset.count) coordinates; the dataset has \(dims.count) dimensions")
            }
            var cell = 0
            var offset: [Int] = []
            for k in 0..<dims.count {
                guard stored.offset[k] < UInt64(dims[k]) else {
                    throw .index("\(at) lies outside the dataset (\(Self.describe(dims)))")
                }
                let o = Int(stored.offset[k])
                guard o % chunk[k] == 0 else {
                    throw .index("\(at) is not on the chunk grid (chunks of \(Self.describe(chunk)))")
                }
                offset.append(o)
                cell = cell * grid[k] + o / chunk[k]
            }
            guard !seen[cell] else { throw .index("\(at) is listed twice") }
            seen[cell] = true
            guard let start = file.offset(of: stored.address, count: stored.size) else {
                throw .index("\(at) (\(stored.size) bytes at address \(stored.address)) runs past the end of the file (\(file.bytes.count) bytes)")
            }
            let size = Int(stored.size)
            let partial = (0..<dims.count).contains { offset[$0] + chunk[$0] > dims[$0] }
            var undo: [HDF5Filter] = []
            if !(partial && partialChunksUnfiltered) {
                for (i, filter) in pipeline.enumerated().reversed() where stored.filterMask & (1 << UInt32(i)) == 0 {
                    undo.append(filter)
                }
            }
            if !undo.contains(.deflate) {
                guard size == chunkBytes else {
                    let how = pipeline.isEmpty ? "the dataset has no filters"
                        : partial && partialChunksUnfiltered ? "partial chunks are stored unfiltered"
                        : undo.isEmpty ? "filter mask 0x\(String(stored.filterMask, radix: 16)) skips every filter"
                        : "filter mask 0x\(String(stored.filterMask, radix: 16)) skips deflate"
                    throw .index("\(at) is stored in \(size) bytes without deflate (\(how)); a chunk is \(chunkBytes) bytes")
                }
            } else {
                let (most, overflow) = size.multipliedReportingOverflow(by: Self.maximumDeflateRatio)
                guard overflow || most > chunkBytes else {
                    throw .index("\(at) has \(size) bytes of deflate data, too few for a chunk of \(chunkBytes) bytes (deflate expands at most \(Self.maximumDeflateRatio)-fold)")
                }
            }
            placed.append(PlacedChunk(cell: cell, offset: offset, start: start, size: size, undo: undo))
        }
        let missing = seen.indices.filter { !seen[$0] }
        return (placed, missing)
    }

    /// Dataset coordinates of the first element of grid cell `cell`.
    package func offset(ofCell cell: Int) -> [Int] {
        var rest = cell
        var offset = [Int](repeating: 0, count: dims.count)
        for k in stride(from: dims.count - 1, through: 0, by: -1) {
            offset[k] = rest % grid[k] * chunk[k]
            rest /= grid[k]
        }
        return offset
    }

    /// Buffers for the filter steps of one worker's chunks, kept from chunk to chunk.
    package struct Scratch: ~Copyable {
        private var buffers: [(pointer: UnsafeMutableRawPointer, count: Int)] = []

        package init() {}

        /// Buffer `index` (0 or 1), with room for at least `count` bytes.
        package mutating func buffer(_ index: Int, count: Int) -> UnsafeMutableRawPointer {
            while buffers.count <= index { buffers.append((UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 16), 1)) }
            if buffers[index].count < count {
                buffers[index].pointer.deallocate()
                buffers[index] = (UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16), count)
            }
            return buffers[index].pointer
        }

        deinit { buffers.forEach { $0.pointer.deallocate() } }
    }

    /// Decodes `placed` from `file` and writes its elements inside the dataset into
    /// `destination` (the whole dataset, C order, `elementSize` bytes per element). Chunks
    /// from `place` cover disjoint parts of it, so several may be decoded at once. A chunk
    /// inside the dataset whose elements follow one another there too (every dimension but
    /// the first spanned whole) gets its last filter step written straight into place.
    /// - Throws: `HDF5ChunkDamage` (data) when an inflate fails or does not give exactly one chunk.
    package func decode(_ placed: PlacedChunk, from file: HDF5MappedFile, into destination: UnsafeMutableRawPointer,
                scratch: inout Scratch) throws(HDF5ChunkDamage) {
        var current = UnsafeRawPointer(file.bytes.baseAddress! + placed.start)
        var length = placed.size
        let inPlace = (0..<dims.count).allSatisfy { placed.offset[$0] + chunk[$0] <= dims[$0] && ($0 == 0 || chunk[$0] == dims[$0]) }
            ? destination + placed.offset[0] * (chunkBytes / chunk[0]) : nil
        for (step, filter) in placed.undo.enumerated() {
            let last = step == placed.undo.count - 1
            switch filter {
            case .deflate:
                let output = last ? inPlace ?? scratch.buffer(step % 2, count: chunkBytes) : scratch.buffer(step % 2, count: chunkBytes)
                length = try inflate(current, count: length, into: output, at: placed.offset)
                current = UnsafeRawPointer(output)
            case .shuffle(let size):
                let output = last ? inPlace ?? scratch.buffer(step % 2, count: length) : scratch.buffer(step % 2, count: length)
                Self.unshuffle(current, into: output, count: length, elementSize: size)
                current = UnsafeRawPointer(output)
            }
        }
        // `place` and `inflate` leave exactly one chunk.
        precondition(length == chunkBytes)
        if placed.undo.isEmpty || inPlace == nil { scatter(current, at: placed.offset, into: destination) }
    }

    /// Inflates a zlib stream into one chunk's bytes.
    private func inflate(_ source: UnsafeRawPointer, count: Int, into output: UnsafeMutableRawPointer, at offset: [Int])
        throws(HDF5ChunkDamage) -> Int {
        let at = "the chunk at \(Self.describe(offset))"
        guard let decompressor = libdeflate_alloc_decompressor() else {
            throw .data("\(at): no memory for a decompressor")
        }
        defer { libdeflate_free_decompressor(decompressor) }
        var produced = 0
        switch libdeflate_zlib_decompress(decompressor, source, count, output, chunkBytes, &produced) {
        case LIBDEFLATE_SUCCESS:
            guard produced == chunkBytes else {
                throw .data("\(at) inflates to \(produced) bytes; a chunk is \(chunkBytes)")
            }
            return produced
        case LIBDEFLATE_INSUFFICIENT_SPACE:
            throw .data("\(at) inflates to more than a chunk (\(chunkBytes) bytes)")
        default:
            throw .data("\(at) is not a valid zlib stream (\(count) bytes)")
        }
    }

    /// Undoes HDF5's shuffle filter as libhdf5 does: byte b of element e is at
    /// `b × n + e` for the n = count / elementSize whole elements; the remaining
    /// `count % elementSize` bytes are at the end, as they are; with fewer than two elements
    /// or one-byte elements the bytes are as they are.
    package static func unshuffle(_ source: UnsafeRawPointer, into output: UnsafeMutableRawPointer, count: Int, elementSize: Int) {
        let n = count / elementSize
        guard elementSize > 1, n > 1 else {
            output.copyMemory(from: source, byteCount: count)
            return
        }
        let src = source.assumingMemoryBound(to: UInt8.self)
        let dst = output.assumingMemoryBound(to: UInt8.self)
        switch elementSize {
        case 2:
            let low = src, high = src + n
            for e in 0..<n {
                dst[2 &* e] = low[e]
                dst[2 &* e &+ 1] = high[e]
            }
        case 4:
            let b0 = src, b1 = src + n, b2 = src + 2 * n, b3 = src + 3 * n
            for e in 0..<n {
                let d = dst + 4 &* e
                d[0] = b0[e]
                d[1] = b1[e]
                d[2] = b2[e]
                d[3] = b3[e]
            }
        default:
            for b in 0..<elementSize {
                let plane = src + b &* n
                for e in 0..<n { dst[e &* elementSize &+ b] = plane[e] }
            }
        }
        let whole = n * elementSize
        if count > whole { (output + whole).copyMemory(from: source + whole, byteCount: count - whole) }
    }

    /// Calls `body(chunkByteOffset, datasetByteOffset, runBytes)` for each run of
    /// consecutive elements that the chunk at `offset` has inside the dataset: the part
    /// past the dataset's edge is left out. Trailing dimensions the chunk spans whole are
    /// merged into one run.
    private func forEachRun(at offset: [Int], _ body: (Int, Int, Int) -> Void) {
        let rank = dims.count
        let extent = (0..<rank).map { min(chunk[$0], dims[$0] - offset[$0]) }
        var chunkStride = [Int](repeating: elementSize, count: rank)
        var datasetStride = [Int](repeating: elementSize, count: rank)
        for k in stride(from: rank - 2, through: 0, by: -1) {
            chunkStride[k] = chunkStride[k + 1] * chunk[k + 1]
            datasetStride[k] = datasetStride[k + 1] * dims[k + 1]
        }
        // Dimensions inner..<rank form one run when each one after `inner` is spanned
        // whole, in the chunk and in the dataset alike.
        var inner = rank - 1
        while inner > 0, chunk[inner] == dims[inner], extent[inner] == dims[inner] { inner -= 1 }
        let run = extent[inner...].reduce(elementSize, *)
        let base = (0..<rank).reduce(0) { $0 + offset[$1] * datasetStride[$1] }
        var index = [Int](repeating: 0, count: inner)
        while true {
            var from = 0, to = base
            for k in 0..<inner {
                from += index[k] * chunkStride[k]
                to += index[k] * datasetStride[k]
            }
            body(from, to, run)
            var k = inner - 1
            while k >= 0 {
                index[k] += 1
                if index[k] < extent[k] { break }
                index[k] = 0
                k -= 1
            }
            if k < 0 { return }
        }
    }

    /// Copies a decoded chunk (chunk-shaped, C order) into the dataset, clipped at its edge.
    package func scatter(_ chunkData: UnsafeRawPointer, at offset: [Int], into destination: UnsafeMutableRawPointer) {
        forEachRun(at: offset) { from, to, count in
            (destination + to).copyMemory(from: chunkData + from, byteCount: count)
        }
    }

    /// Writes `element` (one element's bytes) over the part of grid cell `cell` inside the
    /// dataset.
    package func fill(cell: Int, with element: [UInt8], into destination: UnsafeMutableRawPointer) {
        precondition(element.count == elementSize)
        element.withUnsafeBytes { pattern in
            forEachRun(at: offset(ofCell: cell)) { _, to, count in
                var at = to
                while at < to + count {
                    (destination + at).copyMemory(from: pattern.baseAddress!, byteCount: elementSize)
                    at += elementSize
                }
            }
        }
    }

    /// "[16, 0, 3]".
    package static func describe<T: BinaryInteger>(_ values: [T]) -> String {
        "[" + values.map { String($0) }.joined(separator: ", ") + "]"
    }
}
