/// TIFF field types (TIFF 6.0 section 2, plus the BigTIFF 8-byte types).
public enum FieldType: UInt16, Sendable, Codable {
    case byte = 1, ascii = 2, short = 3, long = 4, rational = 5, sbyte = 6, undefined = 7, sshort = 8
    case slong = 9, srational = 10, float = 11, double = 12, ifd = 13, long8 = 16, slong8 = 17, ifd8 = 18

    /// Bytes per value.
    public var size: Int {
        switch self {
        case .byte, .ascii, .sbyte, .undefined: return 1
        case .short, .sshort: return 2
        case .long, .slong, .float, .ifd: return 4
        case .rational, .srational, .double, .long8, .slong8, .ifd8: return 8
        }
    }

    public var name: String {
        switch self {
        case .byte: return "BYTE"
        case .ascii: return "ASCII"
        case .short: return "SHORT"
        case .long: return "LONG"
        case .rational: return "RATIONAL"
        case .sbyte: return "SBYTE"
        case .undefined: return "UNDEFINED"
        case .sshort: return "SSHORT"
        case .slong: return "SLONG"
        case .srational: return "SRATIONAL"
        case .float: return "FLOAT"
        case .double: return "DOUBLE"
        case .ifd: return "IFD"
        case .long8: return "LONG8"
        case .slong8: return "SLONG8"
        case .ifd8: return "IFD8"
        }
    }
}

/// One IFD entry: where its values are in the file. The byte range has been checked for
/// overflow; `inBounds` says whether it lies inside the file (a truncated file may hold
/// entries whose values are missing — they fail only when read).
public struct Entry: Sendable {
    public let tag: UInt16
    public let type: FieldType
    public let count: Int
    /// Absolute file offset of the first value byte.
    public let valueOffset: Int
    public let byteCount: Int
    public let inBounds: Bool
}

/// One Image File Directory, with the entries in file order and its child IFDs.
public struct IFD: Sendable {
    /// A path naming this IFD in messages and JSON, e.g. "IFD0", "IFD0/SubIFD1", "IFD0/Exif".
    public let path: String
    /// Absolute file offset of the IFD.
    public let offset: Int
    public let entries: [Entry]
    /// SubIFDs (tag 330), in order.
    public var subIFDs: [IFD]
    /// The EXIF IFD (tag 34665): empty or one element (an array, so `IFD` can hold it).
    public var exifIFDs: [IFD]
    /// The GPS IFD (tag 34853), the same way. Its tag numbers are its own (1 = GPSLatitudeRef,
    /// …), so it is not among `TIFFStructure.allIFDs`.
    public var gpsIFDs: [IFD] = []

    /// The EXIF IFD, if any.
    public var exif: IFD? { exifIFDs.first }
    /// The GPS IFD, if any.
    public var gps: IFD? { gpsIFDs.first }

    public func entry(_ tag: UInt16) -> Entry? { entries.first { $0.tag == tag } }
    public func has(_ tag: UInt16) -> Bool { entry(tag) != nil }
}

/// Limits that keep a hostile file from making the parser do unbounded work.
public struct ParseLimits: Sendable {
    /// Maximum entries in one IFD.
    public var maxEntriesPerIFD = 4096
    /// Maximum IFDs in the whole file (chains, SubIFDs and EXIF together).
    public var maxIFDs = 256
    /// Maximum nesting depth of SubIFDs.
    public var maxDepth = 8

    public init() {}
}

/// The parsed TIFF structure of a file: byte order, format and the IFD tree.
public struct TIFFStructure: Sendable {
    public let byteOrder: ByteOrder
    public let isBigTIFF: Bool
    /// IFD0 and any IFDs chained after it (IFD1, ...), each with its SubIFD tree.
    public let ifds: [IFD]

    /// Every IFD in the tree, depth first (IFD0, its SubIFDs, its EXIF IFD, IFD1, ...).
    public var allIFDs: [IFD] {
        var out: [IFD] = []
        func visit(_ ifd: IFD) {
            out.append(ifd)
            ifd.subIFDs.forEach(visit)
            if let exif = ifd.exif { visit(exif) }
        }
        ifds.forEach(visit)
        return out
    }
}

/// Reads the TIFF header and the IFD tree, checking every offset and size.
struct TIFFParser {
    let file: FileBytes
    let limits: ParseLimits
    var order: ByteOrder = .littleEndian
    var bigTIFF = false
    var visited = Set<Int>()

    init(file: FileBytes, limits: ParseLimits) {
        self.file = file
        self.limits = limits
    }

    mutating func parse() throws(ContainerError) -> TIFFStructure {
        let path = file.path
        guard file.count >= 8 else {
            throw .notTIFF(path: path, header: .tooShort(bytes: file.count))
        }
        let header = file.bytes(offset: 0, length: min(16, file.count))
        switch (header[0], header[1]) {
        case (0x49, 0x49): order = .littleEndian
        case (0x4D, 0x4D): order = .bigEndian
        default:
            throw .notTIFF(path: path, header: .byteOrder(header[0], header[1]))
        }
        let magic = read16(2)
        let first: Int
        switch magic {
        case 42:
            first = Int(read32(4))
        case 43:
            bigTIFF = true
            guard file.count >= 16, read16(4) == 8, read16(6) == 0 else {
                throw .notTIFF(path: path, header: .malformedBigTIFF)
            }
            let o = read64(8)
            guard o <= UInt64(Int.max) else { throw .corrupt(path: path, ifd: "header", reason: "IFD0 offset \(o) is impossible") }
            first = Int(o)
        default:
            throw .notTIFF(path: path, header: .magic(Int(magic)))
        }
        var chain: [IFD] = []
        var next = first
        var index = 0
        while next != 0 {
            guard chain.count < limits.maxIFDs else {
                throw .corrupt(path: path, ifd: "IFD\(index)", reason: "more than \(limits.maxIFDs) IFDs in the chain")
            }
            let (ifd, following) = try parseIFD(at: next, path: "IFD\(index)", depth: 0)
            chain.append(ifd)
            next = following
            index += 1
        }
        guard !chain.isEmpty else { throw .corrupt(path: path, ifd: "header", reason: "IFD0 offset is 0") }
        return TIFFStructure(byteOrder: order, isBigTIFF: bigTIFF, ifds: chain)
    }

    private mutating func parseIFD(at offset: Int, path ifdPath: String, depth: Int) throws(ContainerError) -> (IFD, Int) {
        let path = file.path
        guard offset >= 8, offset < file.count else {
            if offset >= file.count {
                throw .truncated(path: path, what: "\(ifdPath)", offset: offset, length: bigTIFF ? 8 : 2, fileSize: file.count)
            }
            throw .corrupt(path: path, ifd: ifdPath, reason: "IFD offset \(offset) points into the header")
        }
        guard !visited.contains(offset) else {
            throw .corrupt(path: path, ifd: ifdPath, reason: "IFD at offset \(offset) is referenced twice (cyclic IFD chain)")
        }
        guard visited.count < limits.maxIFDs else {
            throw .corrupt(path: path, ifd: ifdPath, reason: "more than \(limits.maxIFDs) IFDs in the file")
        }
        visited.insert(offset)
        let countSize = bigTIFF ? 8 : 2
        let entrySize = bigTIFF ? 20 : 12
        let offsetSize = bigTIFF ? 8 : 4
        guard file.contains(offset: offset, length: countSize) else {
            throw .truncated(path: path, what: "\(ifdPath) entry count", offset: offset, length: countSize, fileSize: file.count)
        }
        let rawCount = bigTIFF ? read64(offset) : UInt64(read16(offset))
        guard rawCount <= UInt64(limits.maxEntriesPerIFD) else {
            throw .corrupt(path: path, ifd: ifdPath, reason: "\(rawCount) entries (limit \(limits.maxEntriesPerIFD))")
        }
        let count = Int(rawCount)
        let tableLength = countSize + count * entrySize + offsetSize
        guard file.contains(offset: offset, length: tableLength) else {
            throw .truncated(path: path, what: "\(ifdPath) (\(count) entries)", offset: offset, length: tableLength, fileSize: file.count)
        }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for i in 0..<count {
            let at = offset + countSize + i * entrySize
            let tag = read16(at)
            let rawType = read16(at + 2)
            guard let type = FieldType(rawValue: rawType) else { continue } // unknown types are skipped (TIFF 6.0)
            let n = bigTIFF ? read64(at + 4) : UInt64(read32(at + 4))
            let inlineAt = at + (bigTIFF ? 12 : 8)
            let (bytes, overflow) = n.multipliedReportingOverflow(by: UInt64(type.size))
            guard !overflow, bytes <= UInt64(Int.max / 2) else {
                throw .corrupt(path: path, ifd: ifdPath, reason: "\(Tag.name(tag)) has an impossible count \(n)")
            }
            let valueOffset: Int
            if bytes <= UInt64(offsetSize) {
                valueOffset = inlineAt
            } else {
                let o = bigTIFF ? read64(inlineAt) : UInt64(read32(inlineAt))
                valueOffset = o <= UInt64(Int.max / 2) ? Int(o) : Int.max / 2
            }
            let inBounds = file.contains(offset: valueOffset, length: Int(bytes))
            entries.append(Entry(tag: tag, type: type, count: Int(n), valueOffset: valueOffset,
                                 byteCount: Int(bytes), inBounds: inBounds))
        }
        let nextAt = offset + countSize + count * entrySize
        let nextRaw = bigTIFF ? read64(nextAt) : UInt64(read32(nextAt))
        let next = nextRaw <= UInt64(Int.max / 2) ? Int(nextRaw) : Int.max / 2

        var ifd = IFD(path: ifdPath, offset: offset, entries: entries, subIFDs: [], exifIFDs: [])
        if let sub = ifd.entry(Tag.subIFDs) {
            guard depth < limits.maxDepth else {
                throw .corrupt(path: path, ifd: ifdPath, reason: "SubIFDs nested deeper than \(limits.maxDepth)")
            }
            let offsets = try offsetsOf(sub, in: ifdPath)
            for (i, o) in offsets.enumerated() {
                let (child, _) = try parseIFD(at: o, path: "\(ifdPath)/SubIFD\(i)", depth: depth + 1)
                ifd.subIFDs.append(child)
            }
        }
        if let exifEntry = ifd.entry(Tag.exifIFD), let o = try offsetsOf(exifEntry, in: ifdPath).first {
            // A damaged EXIF IFD must not make the image unreadable: keep going without it.
            if let (exif, _) = try? parseIFD(at: o, path: "\(ifdPath)/Exif", depth: depth + 1) {
                ifd.exifIFDs = [exif]
            }
        }
        if let gpsEntry = ifd.entry(Tag.gpsIFD), let o = try? offsetsOf(gpsEntry, in: ifdPath).first {
            // Likewise a damaged GPS IFD: the file is read without a position.
            if let (gps, _) = try? parseIFD(at: o, path: "\(ifdPath)/GPS", depth: depth + 1) {
                ifd.gpsIFDs = [gps]
            }
        }
        return (ifd, next)
    }

    /// The offsets held by an IFD-pointer entry (LONG, IFD, LONG8 or IFD8 values).
    private func offsetsOf(_ entry: Entry, in ifdPath: String) throws(ContainerError) -> [Int] {
        guard entry.inBounds else {
            throw .truncated(path: file.path, what: "\(ifdPath) \(Tag.name(entry.tag)) values",
                             offset: entry.valueOffset, length: entry.byteCount, fileSize: file.count)
        }
        guard entry.count <= limits.maxIFDs else {
            throw .corrupt(path: file.path, ifd: ifdPath, reason: "\(Tag.name(entry.tag)) lists \(entry.count) IFDs")
        }
        var out: [Int] = []
        for i in 0..<entry.count {
            let v: UInt64
            switch entry.type {
            case .long, .ifd: v = UInt64(read32(entry.valueOffset + 4 * i))
            case .long8, .ifd8: v = read64(entry.valueOffset + 8 * i)
            default:
                throw .corrupt(path: file.path, ifd: ifdPath, reason: "\(Tag.name(entry.tag)) has type \(entry.type.name), expected LONG or IFD")
            }
            out.append(v <= UInt64(Int.max / 2) ? Int(v) : Int.max / 2)
        }
        return out
    }

    private func read16(_ at: Int) -> UInt16 {
        file.withBytes(offset: at, length: 2) { EndianReader(raw: $0, order: order).u16(0) }
    }

    private func read32(_ at: Int) -> UInt32 {
        file.withBytes(offset: at, length: 4) { EndianReader(raw: $0, order: order).u32(0) }
    }

    private func read64(_ at: Int) -> UInt64 {
        file.withBytes(offset: at, length: 8) { EndianReader(raw: $0, order: order).u64(0) }
    }
}
