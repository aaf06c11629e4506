internal import CDigest
import Foundation
import Synchronization

// The digest computation of DNG's NewRawImageDigest and RawImageDigest (see
// `RawImageDigest` in RawDecode for the definition), shared by the reader, which checks
// it while decoding, and the DNG writer, which records it.

/// A stored sample as the digests serialise it.
public protocol DigestSample: BitwiseCopyable {
    /// The sample's bits, zero-extended (floats: their IEEE bit pattern).
    var digestBits: UInt32 { get }
}

extension UInt16: DigestSample { @inline(__always) public var digestBits: UInt32 { UInt32(self) } }
extension UInt32: DigestSample { @inline(__always) public var digestBits: UInt32 { self } }
extension Float: DigestSample { @inline(__always) public var digestBits: UInt32 { bitPattern } }

/// Computes the digest of one image (the raw image or its transparency mask) from pieces
/// of its Stage 1 samples handed over in any order and from any thread — the blocks of
/// the decoding pass, as each is decoded. A digest tile is laid out for hashing as soon as
/// all its pixels have arrived (at once when one block holds it whole); complete tiles of
/// equal size are hashed eight at a time, one per lane of a vector MD5 (`md5_lanes`, about
/// three times the speed of hashing them one by one), by whichever decoding thread
/// completes the eighth. The memory held is that of tiles still incomplete or waiting for
/// their batch, and buffers are reused.
public final class ImageDigester: Sendable {
    let width: Int, height: Int, spp: Int
    /// Bytes per serialised sample: 1, 2 or 4.
    let sampleBytes: Int
    /// NewRawImageDigest: planar tiles of `cellWidth × cellHeight`, hashed each, then the
    /// tile digests hashed. RawImageDigest: bands of whole rows, pixels interleaved, fed
    /// in order into one MD5.
    let sequential: Bool
    let cellWidth: Int, cellHeight: Int, across: Int, down: Int

    private struct State: ~Copyable {
        /// Buffers of tiles (or bands) only partly filled, by index; addresses as integers
        /// so that they can leave the lock (each thread writes a disjoint part of them).
        var partial: [Int: (address: UInt, remaining: Int)] = [:]
        var digests: [MD5Digest.Value?]
        /// Sequential: complete bands waiting for the ones before them.
        var readyBands: [Int: UInt] = [:]
        var nextBand = 0
        var hasher: MD5Hasher?
        /// Tiled: complete tiles waiting to be hashed, by their byte count.
        var waiting: [Int: [(index: Int, address: UInt)]] = [:]
        /// Tiled: buffers no longer in use, by byte count.
        var spare: [Int: [UInt]] = [:]
    }

    /// Tiles hashed together (the lanes of `md5_lanes`).
    static let lanes = 8

    private let state: Mutex<State>
    /// Digest-tile size of NewRawImageDigest.
    public static let tileSize = 256
    /// Lossy JPEG and JPEG XL: the digest is over the compressed blocks (`addCompressed`),
    /// then the JPEGTables bytes when present.
    let compressedTables: [UInt8]?
    public let isCompressed: Bool

    /// - Parameters:
    ///   - sampleBytes: 1, 2 or 4 (see `RawImageDigest`).
    ///   - sequential: RawImageDigest's definition instead of NewRawImageDigest's.
    public init(width: Int, height: Int, samplesPerPixel: Int, sampleBytes: Int, sequential: Bool) {
        precondition([1, 2, 4].contains(sampleBytes) && width > 0 && height > 0 && samplesPerPixel > 0)
        self.width = width
        self.height = height
        spp = samplesPerPixel
        self.sampleBytes = sampleBytes
        self.sequential = sequential
        if sequential {
            cellWidth = width
            cellHeight = 16
        } else {
            cellWidth = min(Self.tileSize, width)
            cellHeight = min(Self.tileSize, height)
        }
        across = (width + cellWidth - 1) / cellWidth
        down = (height + cellHeight - 1) / cellHeight
        state = Mutex(State(digests: sequential ? [] : Array(repeating: nil, count: across * down),
                            hasher: sequential ? MD5Hasher() : nil))
        compressedTables = nil
        isCompressed = false
    }

    /// A digester of the compressed bytes of `blockCount` tiles or strips, and of
    /// `tables` (JPEGTables) when present.
    public init(compressedBlocks blockCount: Int, tables: [UInt8]?) {
        width = 1
        height = 1
        spp = 1
        sampleBytes = 1
        sequential = false
        cellWidth = 1
        cellHeight = 1
        across = 1
        down = 1
        compressedTables = tables
        isCompressed = true
        state = Mutex(State(digests: Array(repeating: nil, count: blockCount), hasher: nil))
    }

    /// Compressed digests: the stored bytes of block `index`.
    public func addCompressed(_ index: Int, bytes: UnsafeRawBufferPointer) {
        let digest = MD5Digest.of(bytes)
        state.withLock { $0.digests[index] = digest }
    }

    deinit {
        state.withLock { s in
            for (_, p) in s.partial { UnsafeMutableRawPointer(bitPattern: p.address)?.deallocate() }
            for (_, a) in s.readyBands { UnsafeMutableRawPointer(bitPattern: a)?.deallocate() }
            for (_, list) in s.waiting { for t in list { UnsafeMutableRawPointer(bitPattern: t.address)?.deallocate() } }
            for (_, list) in s.spare { for a in list { UnsafeMutableRawPointer(bitPattern: a)?.deallocate() } }
        }
    }

    /// A buffer of `bytes` bytes: a spare one, or a new one.
    private func buffer(_ bytes: Int, in s: inout State) -> UInt {
        if let a = s.spare[bytes]?.popLast() { return a }
        return UInt(bitPattern: UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64))
    }

    /// Tile `index` is complete in the buffer at `address`: queue it, and hash a batch of
    /// eight tiles of its size once there is one.
    private func complete(_ index: Int, address: UInt, bytes: Int) {
        let batch = state.withLock { s -> [(index: Int, address: UInt)] in
            s.waiting[bytes, default: []].append((index, address))
            guard s.waiting[bytes]!.count >= Self.lanes else { return [] }
            return s.waiting.removeValue(forKey: bytes)!
        }
        if !batch.isEmpty { hash(batch, bytes: bytes) }
    }

    /// Hashes tiles of `bytes` bytes each, eight at a time, and recycles their buffers.
    private func hash(_ tiles: [(index: Int, address: UInt)], bytes: Int) {
        var results: [(Int, MD5Digest.Value)] = []
        for start in stride(from: 0, to: tiles.count, by: Self.lanes) {
            let group = tiles[start..<min(tiles.count, start + Self.lanes)]
            var pointers = group.map { UnsafePointer<UInt8>(bitPattern: $0.address) }
            var out = [UInt8](repeating: 0, count: 16 * group.count)
            pointers.withUnsafeMutableBufferPointer { p in
                out.withUnsafeMutableBytes { o in
                    md5_lanes(p.baseAddress, group.count, bytes,
                              o.baseAddress!.assumingMemoryBound(to: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                                                                      UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8).self))
                }
            }
            for (k, t) in group.enumerated() { results.append((t.index, Array(out[(16 * k)..<(16 * k + 16)]))) }
        }
        state.withLock { s in
            for (index, digest) in results { s.digests[index] = digest }
            s.spare[bytes, default: []] += tiles.map(\.address)
        }
    }

    /// The pixel rectangle of digest tile (or band) `index`.
    func cell(_ index: Int) -> PixelRect {
        let top = (index / across) * cellHeight, left = (index % across) * cellWidth
        return PixelRect(top: top, left: left, bottom: min(height, top + cellHeight), right: min(width, left + cellWidth))
    }

    /// Takes the samples of `region` of the image: `samples` points at its top-left
    /// sample, pixels interleaved (`samplesPerPixel` each), rows `rowStride` samples apart.
    /// Every pixel of the image must be given exactly once before `finish`.
    public func add(_ region: PixelRect, samples: UnsafePointer<UInt16>, rowStride: Int) {
        addSamples(region, samples: samples, rowStride: rowStride)
    }

    public func add(_ region: PixelRect, samples: UnsafePointer<UInt32>, rowStride: Int) {
        addSamples(region, samples: samples, rowStride: rowStride)
    }

    public func add(_ region: PixelRect, samples: UnsafePointer<Float>, rowStride: Int) {
        addSamples(region, samples: samples, rowStride: rowStride)
    }

    // (Called only with concrete types from inside this module, so it is specialised for
    // each: a generic call from another module would go through witness tables per sample.)
    private func addSamples<T: DigestSample>(_ region: PixelRect, samples: UnsafePointer<T>, rowStride: Int) {
        guard !region.isEmpty else { return }
        let firstRow = region.top / cellHeight, lastRow = (region.bottom - 1) / cellHeight
        let firstColumn = region.left / cellWidth, lastColumn = (region.right - 1) / cellWidth
        for tr in firstRow...lastRow {
            for tc in firstColumn...lastColumn {
                let index = tr * across + tc
                let tile = cell(index)
                let part = PixelRect(top: max(tile.top, region.top), left: max(tile.left, region.left),
                                     bottom: min(tile.bottom, region.bottom), right: min(tile.right, region.right))
                let source = samples + (part.top - region.top) * rowStride + (part.left - region.left) * spp
                let bytes = tile.width * tile.height * spp * sampleBytes
                if part == tile && !sequential {
                    // The whole tile is here: lay it out and queue it for hashing.
                    let address = state.withLock { s in buffer(bytes, in: &s) }
                    serialize(source, rowStride: rowStride, part: part, of: tile, into: UnsafeMutableRawPointer(bitPattern: address)!)
                    self.complete(index, address: address, bytes: bytes)
                    continue
                }
                let address = state.withLock { s -> UInt in
                    if let p = s.partial[index] { return p.address }
                    let address = buffer(bytes, in: &s)
                    s.partial[index] = (address, tile.width * tile.height)
                    return address
                }
                serialize(source, rowStride: rowStride, part: part, of: tile, into: UnsafeMutableRawPointer(bitPattern: address)!)
                let complete = state.withLock { s -> Bool in
                    s.partial[index]!.remaining -= part.width * part.height
                    guard s.partial[index]!.remaining == 0 else { return false }
                    s.partial[index] = nil
                    return true
                }
                guard complete else { continue }
                if sequential {
                    feedBands(index, address: address)
                } else {
                    self.complete(index, address: address, bytes: bytes)
                }
            }
        }
    }

    /// Sequential definition: band `index` is complete; hash every band now in order.
    private func feedBands(_ index: Int, address: UInt) {
        state.withLock { s in
            s.readyBands[index] = address
            while let next = s.readyBands.removeValue(forKey: s.nextBand) {
                let band = cell(s.nextBand)
                let p = UnsafeMutableRawPointer(bitPattern: next)!
                s.hasher!.update(UnsafeRawBufferPointer(start: p, count: band.width * band.height * spp * sampleBytes))
                p.deallocate()
                s.nextBand += 1
            }
        }
    }

    /// Writes the samples of `part` (inside `tile`) into the tile's serialised buffer.
    @inline(__always)
    private func serialize<T: DigestSample>(_ source: UnsafePointer<T>, rowStride: Int, part: PixelRect, of tile: PixelRect,
                                            into buffer: UnsafeMutableRawPointer) {
        switch sampleBytes {
        case 1: serialize(source, rowStride: rowStride, part: part, of: tile, into: buffer.assumingMemoryBound(to: UInt8.self))
        case 2: serialize(source, rowStride: rowStride, part: part, of: tile, into: buffer.assumingMemoryBound(to: UInt16.self))
        default: serialize(source, rowStride: rowStride, part: part, of: tile, into: buffer.assumingMemoryBound(to: UInt32.self))
        }
    }

    @inline(__always)
    private func serialize<T: DigestSample, U: FixedWidthInteger>(_ source: UnsafePointer<T>, rowStride: Int, part: PixelRect,
                                                                  of tile: PixelRect, into out: UnsafeMutablePointer<U>) {
        let spp = spp, columns = part.width
        let x0 = part.left - tile.left, y0 = part.top - tile.top
        if sequential {
            // Interleaved, row by row.
            for r in 0..<part.height {
                let src = source + r * rowStride
                let dst = out + ((y0 + r) * tile.width + x0) * spp
                for k in 0..<(columns * spp) { dst[k] = U(truncatingIfNeeded: src[k].digestBits).littleEndian }
            }
            return
        }
        // Planar: plane after plane (each source row read once, spread over the planes).
        let planeSize = tile.width * tile.height
        for r in 0..<part.height {
            let src = source + r * rowStride
            let dst = out + (y0 + r) * tile.width + x0
            switch spp {
            case 1:
                for c in 0..<columns { dst[c] = U(truncatingIfNeeded: src[c].digestBits).littleEndian }
            case 3:
                let d1 = dst + planeSize, d2 = dst + 2 * planeSize
                for c in 0..<columns {
                    dst[c] = U(truncatingIfNeeded: src[3 * c].digestBits).littleEndian
                    d1[c] = U(truncatingIfNeeded: src[3 * c + 1].digestBits).littleEndian
                    d2[c] = U(truncatingIfNeeded: src[3 * c + 2].digestBits).littleEndian
                }
            default:
                for p in 0..<spp {
                    let d = dst + p * planeSize
                    for c in 0..<columns { d[c] = U(truncatingIfNeeded: src[c * spp + p].digestBits).littleEndian }
                }
            }
        }
    }

    /// The digest, once every pixel has been added. Traps if some are missing (a caller bug).
    public func finish() -> MD5Digest.Value {
        // The tiles still waiting for a full batch.
        let left = state.withLock { s in
            defer { s.waiting = [:] }
            return s.waiting
        }
        for (bytes, tiles) in left { hash(tiles, bytes: bytes) }
        return state.withLock { s in
            if sequential {
                precondition(s.nextBand == across * down, "digest: image data missing")
                return s.hasher!.finish()
            }
            var all: [UInt8] = []
            all.reserveCapacity(s.digests.count * 16 + 16)
            for d in s.digests {
                guard let d else { preconditionFailure("digest: image data missing") }
                all += d
            }
            if let compressedTables { all += MD5Digest.of(compressedTables) }
            return MD5Digest.of(all)
        }
    }

    /// Adds a whole image, in parallel bands of digest tiles.
    public func add(_ buffer: ImageBuffer<UInt16>) { addWhole(buffer) }
    public func add(_ buffer: ImageBuffer<UInt32>) { addWhole(buffer) }
    public func add(_ buffer: ImageBuffer<Float>) { addWhole(buffer) }

    private func addWhole<T: DigestSample & Sendable>(_ buffer: ImageBuffer<T>) {
        precondition(buffer.width == width && buffer.height == height && buffer.channels == spp)
        let bandRows = sequential ? cellHeight * 16 : cellHeight
        let bands = (height + bandRows - 1) / bandRows
        buffer.samples.withUnsafeBufferPointer { all in
            // Safe because each chunk reads its own rows.
            nonisolated(unsafe) let base = all.baseAddress!
            let rowStride = width * spp, width = width, height = height
            Parallel.forEach(bands) { b in
                let top = b * bandRows, bottom = min(height, top + bandRows)
                addSamples(PixelRect(top: top, left: 0, bottom: bottom, right: width), samples: base + top * rowStride, rowStride: rowStride)
            }
        }
    }
}

