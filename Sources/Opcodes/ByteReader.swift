/// Where in a list an error happened: the list, and the opcode being read when there is one.
struct ErrorSite: Sendable {
    let list: OpcodeListID
    let index: Int?
    let opcodeID: UInt32?

    func error(_ kind: OpcodeError.Kind, _ detail: String) -> OpcodeError {
        OpcodeError(kind, list: list, index: index, opcodeID: opcodeID, detail: detail)
    }
}

/// Reads big-endian values from a byte range that was checked to lie inside the list.
///
/// Every read checks the remaining length first; reading past `end` throws the error kind
/// the reader was made with (`.truncated` for the list structure, `.parameterSize` inside
/// an opcode's parameter block, whose length is declared by the opcode header).
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset: Int
    let end: Int
    let site: ErrorSite
    /// The error kind for a read past `end`.
    let shortKind: OpcodeError.Kind

    init(_ bytes: [UInt8], from start: Int, to end: Int, site: ErrorSite, shortKind: OpcodeError.Kind) {
        precondition(start >= 0 && start <= end && end <= bytes.count)
        self.bytes = bytes
        self.offset = start
        self.end = end
        self.site = site
        self.shortKind = shortKind
    }

    var remaining: Int { end - offset }

    /// Throws unless `count` more bytes are available.
    func require(_ count: Int, for what: @autoclosure () -> String) throws(OpcodeError) {
        guard count >= 0, count <= remaining else {
            throw site.error(shortKind, "\(what()) needs \(count) bytes but \(remaining) remain")
        }
    }

    /// Throws unless `count` items of `size` bytes are available (overflow-safe).
    func require(count: Int, size: Int, for what: @autoclosure () -> String) throws(OpcodeError) {
        let (total, overflow) = count.multipliedReportingOverflow(by: size)
        guard count >= 0, !overflow, total <= remaining else {
            throw site.error(shortKind, "\(what()): \(count) × \(size) bytes do not fit in the \(remaining) bytes that remain")
        }
    }

    mutating func u32(_ what: @autoclosure () -> String) throws(OpcodeError) -> UInt32 {
        try require(4, for: what())
        let o = offset
        offset += 4
        return UInt32(bytes[o]) << 24 | UInt32(bytes[o + 1]) << 16 | UInt32(bytes[o + 2]) << 8 | UInt32(bytes[o + 3])
    }

    mutating func i32(_ what: @autoclosure () -> String) throws(OpcodeError) -> Int {
        Int(Int32(bitPattern: try u32(what())))
    }

    mutating func f64(_ what: @autoclosure () -> String) throws(OpcodeError) -> Double {
        try require(8, for: what())
        var bits: UInt64 = 0
        for i in 0..<8 { bits = bits << 8 | UInt64(bytes[offset + i]) }
        offset += 8
        return Double(bitPattern: bits)
    }

    /// `count` big-endian floats; the caller checked the count against `remaining`.
    mutating func f32Array(_ count: Int, _ what: @autoclosure () -> String) throws(OpcodeError) -> [Float] {
        try require(count: count, size: 4, for: what())
        var out = [Float](repeating: 0, count: count)
        var o = offset
        for i in 0..<count {
            let bits = UInt32(bytes[o]) << 24 | UInt32(bytes[o + 1]) << 16 | UInt32(bytes[o + 2]) << 8 | UInt32(bytes[o + 3])
            out[i] = Float(bitPattern: bits)
            o += 4
        }
        offset = o
        return out
    }

    /// `count` big-endian unsigned shorts.
    mutating func u16Array(_ count: Int, _ what: @autoclosure () -> String) throws(OpcodeError) -> [UInt16] {
        try require(count: count, size: 2, for: what())
        var out = [UInt16](repeating: 0, count: count)
        var o = offset
        for i in 0..<count {
            out[i] = UInt16(bytes[o]) << 8 | UInt16(bytes[o + 1])
            o += 2
        }
        offset = o
        return out
    }

}
