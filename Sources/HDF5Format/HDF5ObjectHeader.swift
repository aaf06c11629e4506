import Foundation

/// Every message of an HDF5 version-1 object header, checked by this module before libhdf5
/// decodes any of them (docs/robustness.md, "Untrusted HDF5 input").
///
/// The earliest file format (h5py's default, `libver="earliest"`) writes version-1 object
/// headers, which carry no checksum, and libhdf5 1.10.8 decodes their messages by the sizes
/// and terminators the file states (a name without its NUL was copied with `strdup` past the
/// header). So before the reader opens an object, lists or reads its attributes, it walks
/// that object's header itself (HDF5 file format specification, "Version 1 Data Object
/// Header Prefix"): the 16-byte prefix — version 1, a reserved byte, the number of messages
/// (2 bytes), the reference count (4) and the size of the first chunk (4), padded to 8 —
/// then messages of type (2), size (2), flags (1) and 3 reserved bytes before their data,
/// with continuation messages (type 0x10: an address and a length) naming further chunks.
/// Every chunk must lie inside the file, every message inside its chunk, and every message
/// must hold what its type says it holds (`checkMessage`): a type libhdf5 decodes but this
/// walker does not check is refused as unsupported rather than handed to libhdf5 unchecked.
/// A shared message holds a reference to the message in another object header, which is
/// walked the same way. A version-2 header starts with `OHDR` and ends with a checksum,
/// which libhdf5 verifies before it decodes anything: it is left to the library, but for the
/// chunk index its data layout message may name (`HDF5VersionTwoHeader`).
package enum HDF5ObjectHeader {
    package struct Damage: Error, Equatable, CustomStringConvertible {
        package let description: String
        /// Not damage but something this reader does not read (exit code 14 rather than 13).
        package var unsupported = false
        package init(_ description: String) { self.description = description }

        package static func unsupported(_ description: String) -> Damage {
            var damage = Damage(description)
            damage.unsupported = true
            return damage
        }
    }

    /// The superblock's sizes the messages are read with: of addresses (`offsets`) and of
    /// lengths, and the ranks of the symbol-table B-trees (their nodes hold at most twice as
    /// many entries).
    package struct Sizes: Sendable, Equatable {
        package var offsets: Int, lengths: Int, leafK: Int, internalK: Int
        /// The rank of chunk-index B-trees (libhdf5's default 32).
        package var chunkK: Int

        package init(offsets: Int, lengths: Int, leafK: Int = 4, internalK: Int = 16, chunkK: Int = 32) {
            self.offsets = offsets
            self.lengths = lengths
            self.leafK = leafK
            self.internalK = internalK
            self.chunkK = chunkK
        }
    }

    /// The last message type libhdf5 1.10 decodes (0x18, the metadata cache image); it keeps
    /// the bytes of later types undecoded.
    package static let lastTypeDecoded = 0x18

    /// Most chunks one header may have (each continuation message names one).
    package static let chunkLimit = 4096
    /// Most headers one walk may follow through shared messages.
    package static let sharedLimit = 64

    /// Checks the header at `address` of `file` whose addresses take `offsetSize` bytes
    /// and lengths `lengthSize`.
    /// - Throws: `Damage` saying what is out of place.
    package static func check(_ file: HDF5MappedFile, at address: UInt64, offsetSize: Int, lengthSize: Int) throws(Damage) {
        try check(file, at: address, sizes: Sizes(offsets: offsetSize, lengths: lengthSize))
    }

    /// Checks the header at `address` of `file`, and the headers its shared messages name.
    /// - Throws: `Damage` saying what is out of place.
    package static func check(_ file: HDF5MappedFile, at address: UInt64, sizes: Sizes) throws(Damage) {
        var headers: [UInt64] = [address], seen: Set<UInt64> = [address]
        while let next = headers.popLast() {
            for shared in try walk(file, at: next, sizes: sizes) where seen.insert(shared).inserted {
                guard seen.count <= sharedLimit else { throw Damage("shared messages naming more than \(sharedLimit) object headers") }
                headers.append(shared)
            }
        }
    }

    /// Walks one header; returns the addresses of the headers its shared messages name.
    private static func walk(_ file: HDF5MappedFile, at address: UInt64, sizes: Sizes) throws(Damage) -> [UInt64] {
        let bytes = file.bytes
        guard let start = file.offset(of: address, count: 16) else {
            throw Damage("the header runs past the end of the file (\(bytes.count) bytes)")
        }
        if HDF5SymbolTable.has(bytes, start, "OHDR") {
            try HDF5VersionTwoHeader.checkChunkIndex(file, at: address, sizes: sizes)
            return []
        }
        guard bytes[start] == 1 else { throw Damage("object header version \(bytes[start])") }
        let firstSize = UInt64(unsigned(bytes, at: start + 8, size: 4))
        var chunks = [(address: address + 16, length: firstSize)]
        var seen: Set<UInt64> = [address + 16]
        var shared: [UInt64] = []
        var next = 0
        while next < chunks.count {
            let chunk = chunks[next]
            next += 1
            guard let from = file.offset(of: chunk.address, count: chunk.length) else {
                throw Damage("a chunk of \(chunk.length) bytes at address \(chunk.address) runs past the end of the file (\(bytes.count) bytes)")
            }
            let end = from + Int(chunk.length)
            var p = from
            while p + 8 <= end {
                let type = unsigned(bytes, at: p, size: 2), size = unsigned(bytes, at: p + 2, size: 2), flags = bytes[p + 4]
                let data = p + 8
                guard data + size <= end else {
                    throw Damage("message \(describe(type)) of \(size) bytes at address \(chunk.address + UInt64(p - from)) runs past its chunk")
                }
                if type == 0x10 {
                    let o = sizes.offsets, l = sizes.lengths
                    guard size >= o + l, let target = HDF5GlobalHeap.unsigned(bytes, at: data, size: o),
                          let length = HDF5GlobalHeap.unsigned(bytes, at: data + o, size: l) else {
                        throw Damage("a continuation message of \(size) bytes that names no chunk")
                    }
                    guard seen.insert(target).inserted else { throw Damage("a continuation to address \(target) seen before") }
                    guard chunks.count < chunkLimit else { throw Damage("more than \(chunkLimit) chunks") }
                    chunks.append((target, length))
                } else if flags & 0x02 != 0 {
                    shared.append(try sharedHeader(bytes, at: data, size: size, type: type, sizes: sizes))
                } else {
                    try checkMessage(type, file, at: data, size: size, sizes: sizes)
                }
                p = data + size
            }
        }
        return shared
    }

    /// The message of `type` and `size` bytes at `data`, checked by its type's layout.
    package static func checkMessage(_ type: Int, _ file: HDF5MappedFile, at data: Int, size: Int, sizes: Sizes) throws(Damage) {
        let bytes = file.bytes
        switch type {
        case 0x03: _ = try checkDatatype(bytes, at: data, end: data + size, depth: 0, context: "the datatype")
        case 0x0B: try checkFilterPipeline(bytes, at: data, size: size)
        case 0x0C: try checkAttribute(bytes, at: data, size: size, offsetSize: sizes.offsets, lengthSize: sizes.lengths)
        case 0x11: try checkSymbolTable(file, at: data, size: size, sizes: sizes)
        default:
            if let layout = HDF5HeaderMessage(rawValue: type) {
                try layout.check(file, at: data, size: size, sizes: sizes)
            } else if type <= lastTypeDecoded {
                throw .unsupported("message type \(describe(type)), not one this reader checks")
            }
            // libhdf5 keeps a message of a type it does not know as undecoded bytes (and
            // refuses the object when the message's flags ask it to).
        }
    }

    /// The address of the object header a shared message's reference (`size` bytes at `data`)
    /// names: version 1 (type, 6 reserved bytes, then the address), 2 (type, address) or 3 with
    /// type 2 (type, address). A message shared through the file's shared-message heap
    /// (version 3, type 1) is not read.
    private static func sharedHeader(_ bytes: UnsafeRawBufferPointer, at data: Int, size: Int, type: Int, sizes: Sizes) throws(Damage) -> UInt64 {
        guard size >= 2 else { throw Damage("a shared message \(describe(type)) of \(size) bytes") }
        let at: Int
        switch (bytes[data], bytes[data + 1]) {
        case (1, _): at = 8
        case (2, _), (3, 2): at = 2
        case (3, 1): throw .unsupported("message \(describe(type)) is shared through the file's shared-message heap, which this reader does not read")
        case (let version, let kind): throw Damage("a shared message \(describe(type)) of version \(version), type \(kind)")
        }
        guard at + sizes.offsets <= size, let address = HDF5GlobalHeap.unsigned(bytes, at: data + at, size: sizes.offsets) else {
            throw Damage("a shared message \(describe(type)) of \(size) bytes that names no header")
        }
        return address
    }

    /// A symbol-table message (the B-tree and local heap of a group's names), and the table itself.
    private static func checkSymbolTable(_ file: HDF5MappedFile, at data: Int, size: Int, sizes: Sizes) throws(Damage) {
        let o = sizes.offsets
        guard size >= 2 * o else { throw Damage("a symbol-table message of \(size) bytes") }
        let tree = HDF5SymbolTable.number(file.bytes, data, o), heap = HDF5SymbolTable.number(file.bytes, data + o, o)
        do {
            try HDF5SymbolTable.checkTree(file, tree: tree, heap: heap, sizes: sizes)
        } catch {
            throw Damage("the group's symbol table is damaged: \(error)")
        }
    }

    /// An attribute message of `size` bytes at `data`: its name inside it, ending in NUL; its
    /// datatype and dataspace inside it after the name; and its data — as many elements as the
    /// dataspace has points, of the datatype's size — inside it after those; a variable-length
    /// datatype's size must be that of its stored element (a length, an address and an index).
    /// libhdf5 copies each part by the sizes the message states.
    package static func checkAttribute(_ bytes: UnsafeRawBufferPointer, at data: Int, size: Int, offsetSize: Int,
                               lengthSize: Int) throws(Damage) {
        guard size >= 8 else { throw Damage("an attribute message of \(size) bytes") }
        let version = bytes[data]
        let nameAt: Int
        switch version {
        case 1, 2: nameAt = 8
        case 3: nameAt = 9
        default: throw Damage("attribute message version \(version)")
        }
        let nameSize = unsigned(bytes, at: data + 2, size: 2)
        guard nameSize >= 1, nameAt + nameSize <= size else {
            throw Damage("an attribute name of \(nameSize) bytes in a message of \(size)")
        }
        guard bytes[data + nameAt + nameSize - 1] == 0 else {
            let shown = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(data + nameAt)..<(data + nameAt + min(nameSize, 40))]), as: UTF8.self)
            throw Damage("the attribute name \"\(shown)\" (\(nameSize) bytes) does not end in NUL")
        }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(data + nameAt)..<(data + nameAt + nameSize - 1)]), as: UTF8.self)
        // Version 1 pads the name, the datatype and the dataspace to multiples of 8.
        func part(_ n: Int) -> Int { version == 1 ? (n + 7) & ~7 : n }
        let typeSize = unsigned(bytes, at: data + 4, size: 2), spaceSize = unsigned(bytes, at: data + 6, size: 2)
        let typeAt = nameAt + part(nameSize), spaceAt = typeAt + part(typeSize), valuesAt = spaceAt + part(spaceSize)
        guard typeSize >= 8, spaceSize >= 8, valuesAt <= size else {
            throw Damage("attribute \(name): a datatype of \(typeSize) and a dataspace of \(spaceSize) bytes after the name do not fit in a message of \(size)")
        }
        _ = try checkDatatype(bytes, at: data + typeAt, end: data + size, depth: 0, context: "attribute \(name)")
        let typeClass = Int(bytes[data + typeAt] & 0x0F)
        let element = unsigned(bytes, at: data + typeAt + 4, size: 4)
        // A variable-length element is stored as a length, an address and an index; libhdf5
        // allocates by the stated size but reads that many bytes.
        guard typeClass != 9 || element == 4 + offsetSize + 4 else {
            throw Damage("attribute \(name): a variable-length datatype of \(element) bytes (this file's take \(4 + offsetSize + 4))")
        }
        let points = try Self.points(bytes, at: data + spaceAt, size: spaceSize, lengthSize: lengthSize, attribute: name)
        let (needed, overflow) = points.multipliedReportingOverflow(by: UInt64(element))
        guard !overflow, needed <= UInt64(size - valuesAt) else {
            throw Damage("attribute \(name): \(points) elements of \(element) bytes do not fit in the \(size - valuesAt) bytes after its dataspace")
        }
    }

    /// A datatype (HDF5 file format specification, "Datatype Message") from `at`, as libhdf5
    /// decodes it, with every part before `end`: the names of compound members and enumeration
    /// values end in NUL before `end` (libhdf5 copies them with `strdup`, then steps past each
    /// — padded to 8 bytes before version 3), an opaque tag, array dimensions and enumeration
    /// values lie before `end`, and member, base and parent types are checked the same way.
    /// Returns where the datatype ends.
    package static func checkDatatype(_ bytes: UnsafeRawBufferPointer, at start: Int, end: Int, depth: Int, context: String) throws(Damage) -> Int {
        guard depth < 32 else { throw Damage("\(context): datatypes nested more than 32 deep") }
        guard start + 8 <= end else { throw Damage("\(context): a datatype past the end of its message") }
        let version = Int(bytes[start] >> 4), typeClass = Int(bytes[start] & 0x0F)
        let bits = unsigned(bytes, at: start + 1, size: 3), size = unsigned(bytes, at: start + 4, size: 4)
        guard (1...5).contains(version) else { throw Damage("\(context): datatype version \(version)") }
        var p = start + 8
        func need(_ n: Int) throws(Damage) {
            guard n >= 0, p + n <= end else { throw Damage("\(context): a datatype of class \(typeClass) runs past the end of its message") }
        }
        func name() throws(Damage) {
            guard p < end, let nul = (p..<end).first(where: { bytes[$0] == 0 }) else {
                throw Damage("\(context): a member name without its terminating NUL")
            }
            let length = nul - p
            p += version < 3 ? (length + 8) / 8 * 8 : length + 1
        }
        switch typeClass {
        case 0, 4: try need(4); p += 4                   // fixed-point, bitfield: offset, precision
        case 1: try need(12); p += 12                    // floating point
        case 2: try need(2); p += 2                      // time
        case 3, 7: break                                 // string, reference
        case 5:                                          // opaque: its tag
            let tag = bits & 0xFF
            try need(tag)
            p += tag
        case 6:                                          // compound
            let members = bits & 0xFFFF
            let offsetBytes = version >= 3 ? Swift.max(1, (Int.bitWidth - size.leadingZeroBitCount + 7) / 8) : 4
            for _ in 0..<members {
                try name()
                try need(offsetBytes)
                p += offsetBytes
                if version == 1 {
                    try need(28)  // dimensionality, reserved, permutation, reserved, four dimensions
                    p += 28
                }
                p = try checkDatatype(bytes, at: p, end: end, depth: depth + 1, context: context)
            }
        case 8:                                          // enumeration: base type, names, values
            let members = bits & 0xFFFF
            p = try checkDatatype(bytes, at: p, end: end, depth: depth + 1, context: context)
            let baseSize = unsigned(bytes, at: start + 8 + 4, size: 4)
            for _ in 0..<members { try name() }
            let (values, overflow) = members.multipliedReportingOverflow(by: baseSize)
            guard !overflow else { throw Damage("\(context): enumeration values beyond any size") }
            try need(values)
            p += values
        case 9:                                          // variable length: base type
            p = try checkDatatype(bytes, at: p, end: end, depth: depth + 1, context: context)
        case 10:                                         // array: dimensions (and permutation before version 3), base type
            try need(4)
            let rank = Int(bytes[p])
            p += version >= 3 ? 1 : 4
            let dimensionBytes = rank * (version >= 3 ? 4 : 8)
            try need(dimensionBytes)
            p += dimensionBytes
            p = try checkDatatype(bytes, at: p, end: end, depth: depth + 1, context: context)
        default:
            throw Damage("\(context): datatype class \(typeClass)")
        }
        return p
    }

    /// A filter pipeline message of `size` bytes at `at`: every filter's name inside it and
    /// ending in NUL within its stated length (libhdf5 takes the name's `strlen`), its client
    /// values inside it.
    package static func checkFilterPipeline(_ bytes: UnsafeRawBufferPointer, at data: Int, size: Int) throws(Damage) {
        guard size >= 2 else { throw Damage("a filter pipeline message of \(size) bytes") }
        let version = bytes[data], filters = Int(bytes[data + 1])
        guard version == 1 || version == 2 else { throw Damage("filter pipeline version \(version)") }
        var p = data + (version == 1 ? 8 : 2)
        let end = data + size
        for k in 0..<filters {
            guard p + 2 <= end else { throw Damage("filter \(k + 1) of \(filters) past the end of the pipeline message") }
            let id = unsigned(bytes, at: p, size: 2)
            let named = version == 1 || id >= 256
            let head = named ? 8 : 6
            guard p + head <= end else { throw Damage("filter \(k + 1) of \(filters) past the end of the pipeline message") }
            let nameLength = named ? unsigned(bytes, at: p + 2, size: 2) : 0
            let values = unsigned(bytes, at: p + head - 2, size: 2)
            p += head
            if nameLength > 0 {
                let padded = version == 1 ? (nameLength + 7) / 8 * 8 : nameLength
                guard p + padded <= end, (p..<(p + nameLength)).contains(where: { bytes[$0] == 0 }) else {
                    throw Damage("filter \(k + 1) of \(filters): a name of \(nameLength) bytes without its terminating NUL inside the message")
                }
                p += padded
            }
            let valueBytes = 4 * values + (version == 1 && values % 2 == 1 ? 4 : 0)
            guard p + valueBytes <= end else { throw Damage("filter \(k + 1) of \(filters): \(values) values past the end of the pipeline message") }
            p += valueBytes
        }
    }

    /// The number of points of the dataspace message of `size` bytes at `at` (version 1:
    /// rank 0 is a scalar; version 2: its type, scalar, simple or null), with its dimensions
    /// — and its maximum dimensions, when its flags say they follow — inside the message.
    package static func points(_ bytes: UnsafeRawBufferPointer, at: Int, size: Int, lengthSize: Int, attribute: String) throws(Damage) -> UInt64 {
        try points(bytes, at: at, size: size, lengthSize: lengthSize, context: "attribute \(attribute)")
    }

    package static func points(_ bytes: UnsafeRawBufferPointer, at: Int, size: Int, lengthSize: Int, context: String) throws(Damage) -> UInt64 {
        guard size >= 4 else { throw Damage("\(context): a dataspace of \(size) bytes") }
        let version = bytes[at], rank = Int(bytes[at + 1]), maximaFollow = bytes[at + 2] & 1 != 0
        let dimensionsAt: Int
        switch version {
        case 1:
            if rank == 0 { return 1 }
            dimensionsAt = 8
        case 2:
            switch bytes[at + 3] {
            case 0: return 1
            case 1: dimensionsAt = 4
            case 2: return 0
            default: throw Damage("\(context): dataspace type \(bytes[at + 3])")
            }
        default:
            throw Damage("\(context): dataspace version \(version)")
        }
        guard rank <= 32, dimensionsAt + rank * lengthSize * (maximaFollow ? 2 : 1) <= size else {
            throw Damage("\(context): a dataspace of rank \(rank) in \(size) bytes")
        }
        var points: UInt64 = 1
        for d in 0..<rank {
            guard let extent = HDF5GlobalHeap.unsigned(bytes, at: at + dimensionsAt + d * lengthSize, size: lengthSize) else {
                throw Damage("\(context): a dimension beyond 64 bits")
            }
            let (product, overflow) = points.multipliedReportingOverflow(by: extent)
            guard !overflow else { throw Damage("\(context): more than 2⁶⁴ points") }
            points = product
        }
        return points
    }

    package static func describe(_ type: Int) -> String { String(format: "0x%04X", type) }

    /// The little-endian unsigned integer of `size` (≤ 4) bytes at `offset`.
    private static func unsigned(_ bytes: UnsafeRawBufferPointer, at offset: Int, size: Int) -> Int {
        Int(HDF5GlobalHeap.unsigned(bytes, at: offset, size: size)!)  // at most 4 bytes: always fits
    }
}
