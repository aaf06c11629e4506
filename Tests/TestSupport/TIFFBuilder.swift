import Foundation

/// Builds small TIFF/BigTIFF files entry by entry: for structural tests (cycles, bad
/// offsets, odd layouts) that a real writer would never produce, and for DNGs with layouts
/// and compressions the project's writer does not produce.
public struct TIFFBuilder {
    public struct Entry {
        public var tag: UInt16
        public var type: UInt16
        public var count: UInt64
        /// Value bytes in the file's byte order; placed inline when they fit.
        public var bytes: [UInt8]

        public init(tag: UInt16, type: UInt16, count: UInt64, bytes: [UInt8]) {
            self.tag = tag
            self.type = type
            self.count = count
            self.bytes = bytes
        }
    }

    public var bigEndian = false
    public var bigTIFF = false
    public var data: [UInt8] = []

    public init(bigEndian: Bool = false, bigTIFF: Bool = false) {
        self.bigEndian = bigEndian
        self.bigTIFF = bigTIFF
        data = bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        if bigTIFF {
            data += u16(43) + u16(8) + u16(0) + u64(0)
        } else {
            data += u16(42) + u32(0)
        }
    }

    public func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
    public func u32(_ v: UInt32) -> [UInt8] { bigEndian ? (0..<4).reversed().map { UInt8((v >> (8 * $0)) & 0xFF) } : (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
    public func u64(_ v: UInt64) -> [UInt8] { bigEndian ? (0..<8).reversed().map { UInt8((v >> (8 * $0)) & 0xFF) } : (0..<8).map { UInt8((v >> (8 * $0)) & 0xFF) } }

    public func short(_ tag: UInt16, _ values: [UInt16]) -> Entry { Entry(tag: tag, type: 3, count: UInt64(values.count), bytes: values.flatMap(u16)) }
    public func long(_ tag: UInt16, _ values: [UInt32]) -> Entry { Entry(tag: tag, type: 4, count: UInt64(values.count), bytes: values.flatMap(u32)) }
    public func undefined(_ tag: UInt16, _ values: [UInt8]) -> Entry { Entry(tag: tag, type: 7, count: UInt64(values.count), bytes: values) }
    public func byte(_ tag: UInt16, _ values: [UInt8]) -> Entry { Entry(tag: tag, type: 1, count: UInt64(values.count), bytes: values) }
    public func ascii(_ tag: UInt16, _ s: String) -> Entry { Entry(tag: tag, type: 2, count: UInt64(s.utf8.count + 1), bytes: Array(s.utf8) + [0]) }
    public func srational(_ tag: UInt16, _ values: [(Int32, Int32)]) -> Entry {
        Entry(tag: tag, type: 10, count: UInt64(values.count), bytes: values.flatMap { u32(UInt32(bitPattern: $0.0)) + u32(UInt32(bitPattern: $0.1)) })
    }

    /// Appends an IFD and returns its offset. `next` is the offset of the following IFD.
    public mutating func appendIFD(_ entries: [Entry], next: UInt64 = 0) -> UInt64 {
        if data.count % 2 == 1 { data.append(0) }
        let inlineSize = bigTIFF ? 8 : 4
        let entrySize = bigTIFF ? 20 : 12
        let countSize = bigTIFF ? 8 : 2
        let offset = UInt64(data.count)
        let tableSize = countSize + entries.count * entrySize + (bigTIFF ? 8 : 4)
        var valueArea: [UInt8] = []
        var table: [UInt8] = bigTIFF ? u64(UInt64(entries.count)) : u16(UInt16(entries.count))
        for e in entries.sorted(by: { $0.tag < $1.tag }) {
            table += u16(e.tag) + u16(e.type) + (bigTIFF ? u64(e.count) : u32(UInt32(e.count)))
            if e.bytes.count <= inlineSize {
                table += e.bytes + [UInt8](repeating: 0, count: inlineSize - e.bytes.count)
            } else {
                let at = offset + UInt64(tableSize) + UInt64(valueArea.count)
                table += bigTIFF ? u64(at) : u32(UInt32(at))
                valueArea += e.bytes
                if valueArea.count % 2 == 1 { valueArea.append(0) }
            }
        }
        table += bigTIFF ? u64(next) : u32(UInt32(next))
        data += table + valueArea
        return offset
    }

    /// Points the header at IFD0.
    public mutating func setFirstIFD(_ offset: UInt64) {
        let bytes = bigTIFF ? u64(offset) : u32(UInt32(offset))
        let at = bigTIFF ? 8 : 4
        data.replaceSubrange(at..<(at + bytes.count), with: bytes)
    }

    /// Overwrites 4 (or 8 for BigTIFF) bytes at `at` with an offset value.
    public mutating func patchOffset(at: Int, _ value: UInt64) {
        let bytes = bigTIFF ? u64(value) : u32(UInt32(value))
        data.replaceSubrange(at..<(at + bytes.count), with: bytes)
    }

    /// Minimal IFD0 entries of a LinearRaw DNG with one uncompressed strip of 2×2×3 16-bit samples.
    public func minimalDNG(stripOffset: UInt32, extra: [Entry] = []) -> [Entry] {
        [byte(50706, [1, 4, 0, 0]), long(256, [2]), long(257, [2]), short(258, [16, 16, 16]), short(259, [1]),
         short(262, [34892]), short(277, [3]), long(273, [stripOffset]), long(278, [2]), long(279, [24]),
         srational(50721, [(1, 1), (0, 1), (0, 1), (0, 1), (1, 1), (0, 1), (0, 1), (0, 1), (1, 1)])] + extra
    }
}
