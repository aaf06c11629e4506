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
    /// What the file records for the raw image `raw`, or nil when it records no digest.
    /// Only the main raw image is covered by the digests.
    /// The digest tags of IFD0 that hold sixteen zero bytes (treated as absent).
    public static func allZeroTags(_ dng: DNGFile) -> [String] {
        guard let ifd0 = dng.structure.ifds.first else { return [] }
        let values = EntryValues(file: dng.file, order: dng.byteOrder)
        return [Tag.newRawImageDigest, Tag.rawImageDigest].compactMap { tag in
            guard let entry = ifd0.entry(tag), let bytes = try? values.bytes(entry, in: ifd0.path),
                  bytes.count == 16, bytes.allSatisfy({ $0 == 0 }) else { return nil }
            return DigestTag(tag).name
        }
    }

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
            // An all-zero digest (some writers record one) is absent, as the DNG SDK reads it.
            return bytes.allSatisfy { $0 == 0 } ? nil : bytes
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

extension ImageDigester {
    /// Adds a whole decoded image, in parallel bands of digest tiles.
    public func add(_ image: StoredImage) {
        switch image.samples {
        case .uint16(let b): add(b)
        case .uint32(let b): add(b)
        case .float32(let b): add(b)
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
