import DNGContainer
import Foundation
import ImageCore
import Synchronization

/// The MD5 digests a DNG records so that a reader can tell whether its raw image data is
/// intact (DNG 1.7.1, tags 50972, 51111, 50973), and how they are computed here.
///
/// `NewRawImageDigest` (51111, written by DNG 1.4 and later writers) is defined over the
/// decoded Stage 1 samples of the main raw image, not over the stored bytes:
///
/// - the image is cut into digest tiles of 256 × 256 pixels (fewer at the right and
///   bottom edges, or for an image smaller than that), taken row by row;
/// - each tile's samples are laid out plane after plane (all of plane 0 row by row, then
///   plane 1, ...), each sample as the stored type's little-endian bytes: one byte for
///   samples of up to 8 bits and for 16-bit samples with a LinearizationTable of at most
///   256 entries (the low byte: such data fit in a byte), two bytes for up to 16 bits,
///   four for up to 32 bits and for floating point (as 32-bit IEEE floats, whatever the
///   stored depth), and hashed with MD5;
/// - the digest is the MD5 of the tile digests, 16 bytes each, in tile order;
/// - when the file has a transparency mask (NewSubFileType 4), the mask's digest, computed
///   the same way, is folded in: the result is the MD5 of the image digest followed by the
///   mask digest.
///
/// `RawImageDigest` (50972, older writers) is the MD5 of the whole image's samples in
/// row-major order, pixels interleaved, 8-bit samples as two little-endian bytes and wider
/// ones as two or four; for floating-point data or a file with a transparency mask it is
/// the `NewRawImageDigest` computation. A file with both is checked against
/// `NewRawImageDigest`. For raw data in lossy JPEG (compression 34892) or JPEG XL (52546,
/// lossless or not: its decoders need not agree to the bit) either tag holds the MD5 of
/// the MD5s of the compressed tiles or strips in order, followed by that of JPEGTables
/// when present; the transparency mask is not folded in.
///
/// `OriginalRawFileDigest` (50973) is the MD5 of the bytes of `OriginalRawFileData`
/// (50817), the embedded original raw file.
public enum RawImageDigest {
    /// Digest-tile size of `NewRawImageDigest`.
    static let tileSize = 256

    /// What the file records for the raw image `raw`, or nil when it records no digest.
    /// Only the main raw image is covered by the digests.
    public static func expectation(_ dng: DNGFile, raw: ImageIFD) throws -> RawDigestExpectation? {
        guard let ifd0 = dng.structure.ifds.first else { return nil }
        let values = EntryValues(file: dng.file, order: dng.byteOrder)
        func digest(_ tag: UInt16) throws -> MD5Digest.Value? {
            guard let entry = ifd0.entry(tag) else { return nil }
            let bytes = try values.bytes(entry, in: ifd0.path)
            guard bytes.count == 16 else {
                throw RawDigestError.malformed(path: dng.path, tag: DigestTag(tag).name,
                                               reason: "\(bytes.count) bytes, where an MD5 digest has 16")
            }
            return bytes
        }
        let tag: DigestTag, stored: MD5Digest.Value
        if let d = try digest(Tag.newRawImageDigest) {
            (tag, stored) = (.newRawImageDigest, d)
        } else if let d = try digest(Tag.rawImageDigest) {
            (tag, stored) = (.rawImageDigest, d)
        } else {
            return nil
        }
        let mask = dng.images.first { $0.role == .transparencyMask }
        let definition: RawDigestExpectation.Definition
        if raw.compression == Compression.lossyJPEG || raw.compression == Compression.jpegXL {
            definition = .compressedTiles
        } else if tag == .newRawImageDigest || raw.sampleFormat == 3 || mask != nil {
            definition = .tiled
        } else {
            definition = .sequential
        }
        return RawDigestExpectation(tag: tag, stored: stored, definition: definition, raw: raw,
                                    transparencyMask: definition == .compressedTiles ? nil : mask)
    }

    /// Checks `OriginalRawFileDigest` against the embedded original raw file, when the
    /// file has both; nil when it has not.
    public static func checkOriginalRawFile(_ dng: DNGFile) throws -> DigestOutcome? {
        guard let ifd0 = dng.structure.ifds.first, let digestEntry = ifd0.entry(Tag.originalRawFileDigest),
              let dataEntry = ifd0.entry(Tag.originalRawFileData) else { return nil }
        let values = EntryValues(file: dng.file, order: dng.byteOrder)
        let stored = try values.bytes(digestEntry, in: ifd0.path)
        guard stored.count == 16 else {
            throw RawDigestError.malformed(path: dng.path, tag: DigestTag.originalRawFileDigest.name,
                                           reason: "\(stored.count) bytes, where an MD5 digest has 16")
        }
        guard dng.file.contains(offset: dataEntry.valueOffset, length: dataEntry.byteCount) else {
            throw ContainerError.truncated(path: dng.path, what: "OriginalRawFileData of \(ifd0.path)",
                                           offset: dataEntry.valueOffset, length: dataEntry.byteCount,
                                           fileSize: dng.file.count)
        }
        let computed = dng.file.withBytes(offset: dataEntry.valueOffset, length: dataEntry.byteCount) { MD5Digest.of($0) }
        return DigestOutcome(tag: .originalRawFileDigest, stored: stored, computed: computed, ifd: ifd0.path)
    }
}

/// A digest tag of DNG.
public enum DigestTag: String, Sendable, Codable, Equatable {
    case newRawImageDigest = "NewRawImageDigest"
    case rawImageDigest = "RawImageDigest"
    case originalRawFileDigest = "OriginalRawFileDigest"

    init(_ tag: UInt16) {
        switch tag {
        case Tag.newRawImageDigest: self = .newRawImageDigest
        case Tag.rawImageDigest: self = .rawImageDigest
        default: self = .originalRawFileDigest
        }
    }

    public var number: Int {
        switch self {
        case .newRawImageDigest: return Int(Tag.newRawImageDigest)
        case .rawImageDigest: return Int(Tag.rawImageDigest)
        case .originalRawFileDigest: return Int(Tag.originalRawFileDigest)
        }
    }

    /// "NewRawImageDigest (51111)".
    public var name: String { "\(rawValue) (\(number))" }
}

/// The digest a file records for its raw image, and what it covers.
public struct RawDigestExpectation: Sendable {
    /// How the recorded digest is computed.
    public enum Definition: Sendable, Equatable {
        /// NewRawImageDigest's 256 × 256 digest tiles.
        case tiled
        /// RawImageDigest's one MD5 over the whole image in row order.
        case sequential
        /// Lossy JPEG and JPEG XL: over the compressed tiles.
        case compressedTiles
    }

    public let tag: DigestTag
    public let stored: MD5Digest.Value
    public let definition: Definition
    /// The main raw image.
    public let raw: ImageIFD
    /// The transparency mask whose digest is folded into the image's.
    public let transparencyMask: ImageIFD?
}

/// A recorded digest compared with the one computed from the data.
public struct DigestOutcome: Sendable, Equatable {
    public let tag: DigestTag
    public let stored: MD5Digest.Value
    public let computed: MD5Digest.Value
    /// The IFD holding the tag.
    public let ifd: String

    public init(tag: DigestTag, stored: MD5Digest.Value, computed: MD5Digest.Value, ifd: String = "IFD0") {
        self.tag = tag
        self.stored = stored
        self.computed = computed
        self.ifd = ifd
    }

    /// Whether the data are intact. A RawImageDigest whose last 12 bytes match counts as
    /// a match, and so does one starting 08 00 00 00: a known bug of one old writer
    /// overwrote the first bytes of that tag (the reference reader accepts both too).
    public var matches: Bool {
        if stored == computed { return true }
        guard tag == .rawImageDigest else { return false }
        return stored[4...] == computed[4...] || stored.prefix(4) == [8, 0, 0, 0]
    }

    /// The error for a mismatch, naming both digests.
    public func error(path: String, image: String) -> RawDigestError {
        .mismatch(path: path, tag: tag.name, ifd: ifd, image: image, stored: MD5Digest.hex(stored),
                  computed: MD5Digest.hex(computed))
    }
}

/// The digest state of a file, as `info` and the outputs report it.
public enum DigestState: Sendable, Equatable {
    /// The file records no digest of its raw data.
    case absent
    /// The file records one; it was not compared (`info` without `--verify-digest`, or a
    /// check turned off). `reason` says why.
    case present(tag: DigestTag, stored: String, reason: String)
    /// Recorded and equal to the data's.
    case verified(tag: DigestTag, digest: String)
    /// Recorded and different from the data's (converted only with `--ignore-digest`).
    case mismatch(tag: DigestTag, stored: String, computed: String)

    /// One word: absent, present, verified, mismatch.
    public var name: String {
        switch self {
        case .absent: return "absent"
        case .present: return "present"
        case .verified: return "verified"
        case .mismatch: return "mismatch"
        }
    }
}

/// A digest that does not match the data it covers, or a malformed digest tag.
public enum RawDigestError: SceneLinearFailure, Equatable {
    case mismatch(path: String, tag: String, ifd: String, image: String, stored: String, computed: String)
    case malformed(path: String, tag: String, reason: String)

    public var category: FailureCategory { .corruptData }

    public var description: String {
        switch self {
        case .mismatch(let path, let tag, let ifd, let image, let stored, let computed):
            return "\(path): raw image digest mismatch: \(tag) in \(ifd) records \(stored), the data of \(image) give \(computed) (the file is damaged; --ignore-digest converts it anyway)"
        case .malformed(let path, let tag, let reason):
            return "\(path): corrupt \(tag): \(reason)"
        }
    }
}

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
/// the decoding pass, as each is decoded. Each digest tile is hashed as soon as all its
/// pixels have arrived (at once when one block holds it whole), so the work is spread
/// over the decoding threads and the memory held is only that of tiles still incomplete.
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
    }

    private let state: Mutex<State>
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
            cellWidth = min(RawImageDigest.tileSize, width)
            cellHeight = min(RawImageDigest.tileSize, height)
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
    public func add<T: DigestSample>(_ region: PixelRect, samples: UnsafePointer<T>, rowStride: Int) {
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
                    // The whole tile is here: hash it at once.
                    let digest = withUnsafeTemporaryAllocation(byteCount: bytes, alignment: 16) { buffer in
                        serialize(source, rowStride: rowStride, part: part, of: tile, into: buffer.baseAddress!)
                        return MD5Digest.of(UnsafeRawBufferPointer(buffer))
                    }
                    state.withLock { $0.digests[index] = digest }
                    continue
                }
                let address = state.withLock { s -> UInt in
                    if let p = s.partial[index] { return p.address }
                    let p = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
                    let address = UInt(bitPattern: p)
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
                    let p = UnsafeMutableRawPointer(bitPattern: address)!
                    let digest = MD5Digest.of(UnsafeRawBufferPointer(start: p, count: bytes))
                    p.deallocate()
                    state.withLock { $0.digests[index] = digest }
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
        // Planar: plane after plane.
        let planeSize = tile.width * tile.height
        for p in 0..<spp {
            for r in 0..<part.height {
                let src = source + r * rowStride + p
                let dst = out + p * planeSize + (y0 + r) * tile.width + x0
                if spp == 1 {
                    for c in 0..<columns { dst[c] = U(truncatingIfNeeded: src[c].digestBits).littleEndian }
                } else {
                    for c in 0..<columns { dst[c] = U(truncatingIfNeeded: src[c * spp].digestBits).littleEndian }
                }
            }
        }
    }

    /// The digest, once every pixel has been added. Traps if some are missing (a caller bug).
    public func finish() -> MD5Digest.Value {
        state.withLock { s in
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

    /// Adds a whole decoded image, in parallel bands of digest tiles.
    public func add(_ image: StoredImage) {
        switch image.samples {
        case .uint16(let b): addWhole(b)
        case .uint32(let b): addWhole(b)
        case .float32(let b): addWhole(b)
        }
    }

    private func addWhole<T: DigestSample & Sendable>(_ buffer: ImageBuffer<T>) {
        precondition(buffer.width == width && buffer.height == height && buffer.channels == spp)
        let bandRows = sequential ? cellHeight * 16 : cellHeight
        let bands = (height + bandRows - 1) / bandRows
        buffer.samples.withUnsafeBufferPointer { all in
            nonisolated(unsafe) let base = all.baseAddress!
            let rowStride = width * spp, width = width, height = height
            Parallel.forEach(bands) { b in
                let top = b * bandRows, bottom = min(height, top + bandRows)
                add(PixelRect(top: top, left: 0, bottom: bottom, right: width), samples: base + top * rowStride, rowStride: rowStride)
            }
        }
    }
}

extension RawDigestExpectation {
    /// Bytes per serialised sample of an image with these samples.
    static func sampleBytes(_ ifd: ImageIFD, sequential: Bool, linearizationBytes: Bool) -> Int {
        if ifd.sampleFormat == 3 { return 4 }
        let bits = ifd.bitsPerSample.first ?? 16
        if sequential { return bits <= 16 ? 2 : 4 }
        if bits <= 8 { return 1 }
        if bits <= 16 { return linearizationBytes && (ifd.linearizationTable.map { $0.count <= 256 } ?? false) ? 1 : 2 }
        return 4
    }

    /// A digester for the raw image: of its samples, or of its compressed blocks (lossy
    /// JPEG, JPEG XL), to be given to `RawDecoder` for the decoding pass.
    public func makeDigester(_ dng: DNGFile) throws -> ImageDigester {
        if definition == .compressedTiles {
            var tables: [UInt8]?
            if let entry = dng.structure.allIFDs.first(where: { $0.path == raw.path })?.entry(347) {
                tables = try EntryValues(file: dng.file, order: dng.byteOrder).bytes(entry, in: raw.path)
            }
            return ImageDigester(compressedBlocks: raw.layout?.offsets.count ?? 0, tables: tables)
        }
        let sequential = definition == .sequential
        return ImageDigester(width: raw.width, height: raw.height, samplesPerPixel: raw.samplesPerPixel,
                             sampleBytes: Self.sampleBytes(raw, sequential: sequential, linearizationBytes: true),
                             sequential: sequential)
    }

    /// Compares the recorded digest with the one of the data: `imageDigest` from the
    /// digester, the transparency mask decoded and hashed here.
    public func outcome(_ dng: DNGFile, imageDigest: MD5Digest.Value, limits: DecodeLimits) throws -> DigestOutcome {
        var computed = imageDigest
        if let mask = transparencyMask {
            let stored = try RawDecoder.decodeAnyImage(dng, ifd: mask, limits: limits)
            let digester = ImageDigester(width: mask.width, height: mask.height, samplesPerPixel: mask.samplesPerPixel,
                                         sampleBytes: Self.sampleBytes(mask, sequential: false, linearizationBytes: false),
                                         sequential: false)
            digester.add(stored)
            computed = MD5Digest.of(computed + digester.finish())
        }
        return DigestOutcome(tag: tag, stored: stored, computed: computed)
    }
}
