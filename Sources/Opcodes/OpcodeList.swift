import ImageCore

/// A parsed DNG opcode list (tag OpcodeList1, OpcodeList2 or OpcodeList3).
///
/// The list is always big-endian, whatever the byte order of the file (DNG 1.7.1,
/// chapter 7): a 32-bit opcode count, then for each opcode a 32-bit ID, the 4-byte DNG
/// version it needs, 32-bit flags (bit 0 optional, bit 1 may be skipped for previews),
/// the 32-bit byte count of its parameters, and the parameters.
///
/// Parsing checks everything once: the count against the bytes present, each opcode's
/// parameter block against the end of the list, each layout (counts, sizes) against the
/// declared byte count with overflow-safe arithmetic, and each value against its valid
/// range. Applying the list afterwards needs no further checks of the bytes.
public struct OpcodeList: Sendable, Equatable {
    /// Which list this is (and so which stage and coordinate system it belongs to).
    public let list: OpcodeListID
    /// The opcodes in list order.
    public let entries: [OpcodeEntry]
    /// Notes about opcodes skipped while parsing (optional opcodes with unknown IDs or
    /// newer versions).
    public let warnings: [String]

    /// Creates a list from parsed entries.
    public init(list: OpcodeListID, entries: [OpcodeEntry], warnings: [String] = []) {
        self.list = list
        self.entries = entries
        self.warnings = warnings
    }

    /// The opcodes without their headers.
    public var opcodes: [Opcode] { entries.map(\.opcode) }

    /// Parses the bytes of an opcode list tag.
    ///
    /// An opcode with an ID outside 1 … 14, or whose version is newer than 1.7.1.0, is kept
    /// as `.unknown` with a warning when its optional flag is set, and is an error
    /// otherwise. Malformed parameters are an error even for optional opcodes: the flag
    /// lets a reader skip what it does not understand, not what is corrupt.
    ///
    /// - Parameters:
    ///   - bytes: the tag's value bytes.
    ///   - list: which list the bytes come from.
    /// - Returns: the parsed list.
    /// - Throws: `OpcodeError` with kind `.truncated` when the bytes end inside the count,
    ///   a header or a parameter block; `.trailingBytes` when bytes follow the last opcode;
    ///   `.parameterSize` when a parameter block's size does not match its layout;
    ///   `.invalidParameter` for values outside their range; `.unknownOpcode` and
    ///   `.unsupportedVersion` for required opcodes this reader does not understand.
    public static func parse(_ bytes: [UInt8], list: OpcodeListID) throws(OpcodeError) -> OpcodeList {
        let listSite = ErrorSite(list: list, index: nil, opcodeID: nil)
        var reader = ByteReader(bytes, from: 0, to: bytes.count, site: listSite, shortKind: .truncated)
        let count = Int(try reader.u32("the opcode count"))
        // Every opcode has at least its 16-byte header: refuse impossible counts before
        // looping, so a corrupt count cannot make the parser spin or allocate.
        guard count <= reader.remaining / 16 else {
            throw listSite.error(.truncated, "the list announces \(count) opcodes, which need at least \(count) × 16 bytes, but only \(reader.remaining) bytes follow the count")
        }
        var entries: [OpcodeEntry] = []
        var warnings: [String] = []
        for index in 0..<count {
            let site = ErrorSite(list: list, index: index, opcodeID: nil)
            var headerReader = ByteReader(bytes, from: reader.offset, to: bytes.count, site: site, shortKind: .truncated)
            let id = try headerReader.u32("the opcode ID")
            let opcodeSite = ErrorSite(list: list, index: index, opcodeID: id)
            headerReader = ByteReader(bytes, from: headerReader.offset, to: bytes.count, site: opcodeSite, shortKind: .truncated)
            let version = try headerReader.u32("the opcode version")
            let flags = try headerReader.u32("the opcode flags")
            let size = Int(try headerReader.u32("the parameter byte count"))
            guard size <= headerReader.remaining else {
                throw opcodeSite.error(.truncated, "its \(size) parameter bytes extend past the end of the list (\(headerReader.remaining) bytes remain)")
            }
            let start = headerReader.offset
            let header = OpcodeHeader(id: id, version: version, flags: flags)
            let opcode: Opcode
            if version > OpcodeHeader.newestSupportedVersion {
                guard header.isOptional else {
                    throw opcodeSite.error(.unsupportedVersion, "it needs DNG \(header.versionString); this reader supports opcodes up to 1.7.1.0")
                }
                opcode = .unknown(id: id, parameters: Array(bytes[start..<(start + size)]))
                warnings.append("\(list.name) entry \(index) (\(OpcodeID.name(of: id)), ID \(id)): optional opcode for DNG \(header.versionString) skipped; this reader supports opcodes up to 1.7.1.0")
            } else if !(1...14).contains(id) {
                guard header.isOptional else {
                    throw opcodeSite.error(.unknownOpcode, "ID \(id) is not an opcode of DNG 1.7.1 and the opcode is not marked optional")
                }
                opcode = .unknown(id: id, parameters: Array(bytes[start..<(start + size)]))
                warnings.append("\(list.name) entry \(index): optional opcode with unknown ID \(id) skipped")
            } else {
                var parameters = ByteReader(bytes, from: start, to: start + size, site: opcodeSite, shortKind: .parameterSize)
                opcode = try Opcode.parseParameters(id: id, &parameters)
                guard parameters.remaining == 0 else {
                    throw opcodeSite.error(.parameterSize, "\(parameters.remaining) of its \(size) parameter bytes are left over after its fields")
                }
            }
            entries.append(OpcodeEntry(index: index, header: header, opcode: opcode))
            reader = ByteReader(bytes, from: start + size, to: bytes.count, site: listSite, shortKind: .truncated)
        }
        guard reader.remaining == 0 else {
            throw listSite.error(.trailingBytes, "\(reader.remaining) bytes follow the last of its \(count) opcodes")
        }
        return OpcodeList(list: list, entries: entries, warnings: warnings)
    }
}
