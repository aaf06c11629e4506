/// Typed reads of IFD entry values, with the checks a hostile file needs: values inside
/// the file, expected field types, expected counts.
public struct EntryValues: Sendable {
    public let file: FileBytes
    public let order: ByteOrder

    public init(file: FileBytes, order: ByteOrder) {
        self.file = file
        self.order = order
    }

    private func checkBounds(_ e: Entry, _ ifd: String) throws(ContainerError) {
        guard e.inBounds else {
            throw .truncated(path: file.path, what: "\(ifd) \(Tag.name(e.tag)) values", offset: e.valueOffset,
                             length: e.byteCount, fileSize: file.count)
        }
    }

    /// Integer values of a BYTE, SHORT, LONG, LONG8, IFD or signed integer entry.
    public func integers(_ e: Entry, in ifd: String) throws(ContainerError) -> [Int] {
        try checkBounds(e, ifd)
        let t = e.type
        guard [.byte, .short, .long, .sbyte, .sshort, .slong, .long8, .slong8, .ifd, .ifd8, .undefined].contains(t) else {
            throw .corrupt(path: file.path, ifd: ifd, reason: "\(Tag.name(e.tag)) has type \(t.name), expected an integer type")
        }
        return file.withBytes(offset: e.valueOffset, length: e.byteCount) { raw in
            let r = EndianReader(raw: raw, order: order)
            return (0..<e.count).map { i -> Int in
                switch t {
                case .byte, .undefined: return Int(r.u8(i))
                case .sbyte: return Int(Int8(bitPattern: r.u8(i)))
                case .short: return Int(r.u16(2 * i))
                case .sshort: return Int(Int16(bitPattern: r.u16(2 * i)))
                case .long, .ifd: return Int(r.u32(4 * i))
                case .slong: return Int(Int32(bitPattern: r.u32(4 * i)))
                case .slong8: return Int(Int64(bitPattern: r.u64(8 * i)))
                default:
                    let v = r.u64(8 * i)
                    return v <= UInt64(Int.max) ? Int(v) : Int.max
                }
            }
        }
    }

    /// Numeric values of any numeric entry as `Double`. A rational with a zero denominator
    /// gives NaN (DNG uses 0/0 for "unknown"); callers that need a number check for it.
    public func doubles(_ e: Entry, in ifd: String) throws(ContainerError) -> [Double] {
        try checkBounds(e, ifd)
        let t = e.type
        switch t {
        case .rational, .srational, .float, .double:
            return file.withBytes(offset: e.valueOffset, length: e.byteCount) { raw in
                let r = EndianReader(raw: raw, order: order)
                return (0..<e.count).map { i -> Double in
                    switch t {
                    case .rational:
                        let n = r.u32(8 * i), d = r.u32(8 * i + 4)
                        return d == 0 ? .nan : Double(n) / Double(d)
                    case .srational:
                        let n = Int32(bitPattern: r.u32(8 * i)), d = Int32(bitPattern: r.u32(8 * i + 4))
                        return d == 0 ? .nan : Double(n) / Double(d)
                    case .float:
                        return Double(Float(bitPattern: r.u32(4 * i)))
                    default:
                        return Double(bitPattern: r.u64(8 * i))
                    }
                }
            }
        case .ascii:
            throw .corrupt(path: file.path, ifd: ifd, reason: "\(Tag.name(e.tag)) has type ASCII, expected a number")
        default:
            return try integers(e, in: ifd).map(Double.init)
        }
    }

    /// An ASCII (or BYTE/UNDEFINED holding text) value, up to the first NUL, trailing spaces trimmed.
    public func string(_ e: Entry, in ifd: String) throws(ContainerError) -> String {
        try checkBounds(e, ifd)
        let bytes = file.bytes(offset: e.valueOffset, length: e.byteCount)
        let text = bytes.prefix { $0 != 0 }
        var s = String(decoding: text, as: UTF8.self)
        while s.last == " " { s.removeLast() }
        return s
    }

    /// The raw value bytes (for UNDEFINED blobs such as opcode lists).
    public func bytes(_ e: Entry, in ifd: String) throws(ContainerError) -> [UInt8] {
        try checkBounds(e, ifd)
        return file.bytes(offset: e.valueOffset, length: e.byteCount)
    }
}
