import Foundation

/// The message types of a version-1 object header besides the datatype, filter pipeline,
/// attribute, continuation and symbol-table messages (`HDF5ObjectHeader`), each with the
/// layout the HDF5 file format specification gives it ("Header Message" sections): what a
/// message of that type must hold inside its stated size before libhdf5 may decode it.
package enum HDF5HeaderMessage: Int {
    case null = 0x00
    case dataspace = 0x01
    case linkInfo = 0x02
    case oldFillValue = 0x04
    case fillValue = 0x05
    case link = 0x06
    case externalFiles = 0x07
    case layout = 0x08
    case groupInfo = 0x0A
    case comment = 0x0D
    case oldModificationTime = 0x0E
    case sharedMessageTable = 0x0F
    case modificationTime = 0x12
    case btreeK = 0x13
    case driverInfo = 0x14
    case attributeInfo = 0x15
    case referenceCount = 0x16

    package typealias Damage = HDF5ObjectHeader.Damage

    /// Checks the message of `size` bytes at `data`.
    package func check(_ file: HDF5MappedFile, at data: Int, size: Int, sizes: HDF5ObjectHeader.Sizes) throws(Damage) {
        let bytes = file.bytes
        var reader = MessageReader(bytes: bytes, start: data, end: data + size, name: name)
        let o = sizes.offsets, l = sizes.lengths
        switch self {
        case .null:
            break
        case .dataspace:
            _ = try HDF5ObjectHeader.points(bytes, at: data, size: size, lengthSize: l, context: "the dataspace")
        case .oldFillValue:
            try reader.sized(4)
        case .fillValue:
            try checkFillValue(&reader)
        case .link:
            try checkLink(&reader, offsets: o)
        case .externalFiles:
            // Version, 3 reserved, slots allocated (2) and used (2), the local heap of names,
            // then per slot its name's offset, the offset in that file and the size.
            try reader.version(1...1)
            try reader.skip(3)
            let allocated = try reader.integer(2), used = try reader.integer(2)
            guard used <= allocated else { throw Damage("an external-file list using \(used) of \(allocated) slots") }
            let heap = try HDF5SymbolTable.localHeap(file, at: try reader.number(o), sizes: sizes)
            for slot in 0..<used {
                guard heap.holdsName(at: try reader.number(l), in: bytes) else { throw Damage("external file \(slot + 1) of \(used): its name is not in the list's heap") }
                try reader.skip(2 * l)
            }
        case .layout:
            if let tree = try Self.chunkTree(bytes, at: data, size: size, sizes: sizes) {
                try HDF5ChunkTree.check(file, root: tree.address, dimensionality: tree.dimensionality, sizes: sizes)
            }
        case .linkInfo, .attributeInfo:
            // Version 0, flags; the largest creation index (8 bytes for links, 2 for
            // attributes) when flag 0 is set; a fractal heap and a name index; a creation-order
            // index when flag 1 is set.
            try reader.version(0...0)
            let flags = try reader.integer(1)
            try reader.skip((flags & 1 != 0 ? (self == .linkInfo ? 8 : 2) : 0) + 2 * o + (flags & 2 != 0 ? o : 0))
        case .groupInfo:
            try reader.version(0...0)
            let flags = try reader.integer(1)
            try reader.skip((flags & 1 != 0 ? 4 : 0) + (flags & 2 != 0 ? 4 : 0))
        case .comment:
            guard (data..<(data + size)).contains(where: { bytes[$0] == 0 }) else { throw Damage("a comment without its terminating NUL") }
        case .oldModificationTime:
            try reader.skip(16)
        case .sharedMessageTable:
            try reader.version(0...0)
            try reader.skip(o + 1)
        case .modificationTime:
            try reader.version(1...1)
            try reader.skip(7)
        case .btreeK:
            try reader.version(0...0)
            try reader.skip(6)
        case .driverInfo:
            try reader.version(0...0)
            try reader.skip(8)
            try reader.sized(2)
        case .referenceCount:
            try reader.version(0...0)
            try reader.skip(4)
        }
    }

    /// The version-1 B-tree chunk index a data layout message of `size` bytes at `data` names
    /// (its root and the layout's dimensionality), or nil when it names none.
    /// - Throws: `Damage` when the message does not hold its layout.
    static func chunkTree(_ bytes: UnsafeRawBufferPointer, at data: Int, size: Int, sizes: HDF5ObjectHeader.Sizes) throws(Damage)
        -> (address: UInt64, dimensionality: Int)? {
        var reader = MessageReader(bytes: bytes, start: data, end: data + size, name: HDF5HeaderMessage.layout.name)
        return try checkLayout(&reader, sizes: sizes)
    }

    /// Fill value, versions 1–3: the value and its size (4 bytes) follow — in version 1
    /// always, in version 2 when the value is defined, in version 3 when flag 5 is set.
    private func checkFillValue(_ reader: inout MessageReader) throws(Damage) {
        let version = try reader.version(1...3)
        if version == 3 {
            if try reader.integer(1) & 0x20 != 0 { try reader.sized(4) }
            return
        }
        try reader.skip(2)  // allocation and write times
        let defined = try reader.integer(1)
        if version == 1 || defined != 0 { try reader.sized(4) }
    }

    /// Link, version 1: flags; the link type, creation order and name encoding when flags 3,
    /// 2 and 4 say so; the name's length in 1, 2, 4 or 8 bytes (flags 0–1) and the name;
    /// then an address (a hard link) or a length and that many bytes (soft, external).
    private func checkLink(_ reader: inout MessageReader, offsets: Int) throws(Damage) {
        try reader.version(1...1)
        let flags = try reader.integer(1)
        let type = flags & 0x08 != 0 ? try reader.integer(1) : 0
        try reader.skip((flags & 0x04 != 0 ? 8 : 0) + (flags & 0x10 != 0 ? 1 : 0))
        let length = try reader.integer(1 << (flags & 3))
        guard length >= 1 else { throw Damage("a link with an empty name") }
        try reader.skip(length)
        if type == 0 { try reader.skip(offsets) } else { try reader.sized(2) }
    }

    /// Data layout, versions 1–4 (HDF5 file format specification, "Data Layout Message").
    /// Returns the root of a version-1 B-tree chunk index (layout versions 1–3, chunked) and
    /// the layout's dimensionality, which that tree's keys hold.
    private static func checkLayout(_ reader: inout MessageReader, sizes: HDF5ObjectHeader.Sizes) throws(Damage)
        -> (address: UInt64, dimensionality: Int)? {
        let o = sizes.offsets, l = sizes.lengths
        let version = try reader.version(1...4)
        if version < 3 {
            // Rank, class, 5 reserved; the address unless compact; the dimensions (4 bytes
            // each); the element size when chunked; the data's size and the data when compact.
            let rank = try reader.integer(1), layoutClass = try reader.integer(1)
            guard (1...33).contains(rank), (0...2).contains(layoutClass) else {
                throw Damage("a layout of class \(layoutClass) and rank \(rank)")
            }
            try reader.skip(5)
            let address = layoutClass == 0 ? nil : try reader.number(o)
            try reader.skip(4 * rank + (layoutClass == 2 ? 4 : 0))
            if layoutClass == 0 { try reader.sized(4) }
            return layoutClass == 2 ? address.map { ($0, rank + 1) } : nil  // (libhdf5 adds the element-size dimension)
        }
        switch try reader.integer(1) {
        case 0: try reader.sized(2)                       // compact: size, data
        case 1: try reader.skip(o + l)                    // contiguous: address, size
        case 2 where version == 3:                        // chunked: rank, address, dimensions
            let rank = try reader.integer(1)
            guard (1...33).contains(rank) else { throw Damage("a chunked layout of rank \(rank)") }
            let address = try reader.number(o)
            try reader.skip(4 * rank)
            return (address, rank)
        case 2:
            // Flags, rank, the dimensions' byte width and the dimensions, the chunk index's
            // type and its parameters, the index's address.
            let flags = try reader.integer(1), rank = try reader.integer(1), width = try reader.integer(1)
            guard (1...33).contains(rank), (1...8).contains(width) else { throw Damage("a chunked layout of rank \(rank) in \(width)-byte dimensions") }
            try reader.skip(rank * width)
            let parameters: Int
            switch try reader.integer(1) {
            case 1: parameters = flags & 2 != 0 ? l + 4 : 0  // single chunk: its filtered size and filter mask
            case 2: parameters = 0                           // implicit
            case 3: parameters = 1                           // fixed array
            case 4: parameters = 5                           // extensible array
            case 5: parameters = 6                           // version-2 B-tree
            case let index: throw Damage("chunk index type \(index)")
            }
            try reader.skip(parameters + o)
        case 3 where version == 4:                        // virtual: global heap address, index
            try reader.skip(o + 4)
        case let layoutClass:
            throw Damage("layout version \(version) of class \(layoutClass)")
        }
        return nil
    }

    package var name: String {
        switch self {
        case .null: "null"
        case .dataspace: "dataspace"
        case .linkInfo: "link info"
        case .oldFillValue, .fillValue: "fill value"
        case .link: "link"
        case .externalFiles: "external file list"
        case .layout: "data layout"
        case .groupInfo: "group info"
        case .comment: "comment"
        case .oldModificationTime, .modificationTime: "modification time"
        case .sharedMessageTable: "shared message table"
        case .btreeK: "B-tree rank"
        case .driverInfo: "driver info"
        case .attributeInfo: "attribute info"
        case .referenceCount: "reference count"
        }
    }
}

/// Reads a message's fields in order, each inside the message.
private struct MessageReader {
    package let bytes: UnsafeRawBufferPointer
    package let start: Int, end: Int
    package var position: Int
    package let name: String

    package init(bytes: UnsafeRawBufferPointer, start: Int, end: Int, name: String) {
        self.bytes = bytes
        self.start = start
        self.end = end
        self.position = start
        self.name = name
    }

    private func need(_ n: Int) throws(HDF5ObjectHeader.Damage) {
        guard n >= 0, n <= end - position else {
            throw HDF5ObjectHeader.Damage("a \(name) message of \(end - start) bytes runs short")
        }
    }

    package mutating func skip(_ n: Int) throws(HDF5ObjectHeader.Damage) {
        try need(n)
        position += n
    }

    /// A little-endian unsigned integer of `size` bytes (at most 8; its value must fit an `Int32`).
    package mutating func integer(_ size: Int) throws(HDF5ObjectHeader.Damage) -> Int {
        try need(size)
        guard let value = HDF5GlobalHeap.unsigned(bytes, at: position, size: size), value <= UInt64(Int32.max) else {
            throw HDF5ObjectHeader.Damage("a \(name) message holds a field of \(size) bytes beyond any size")
        }
        position += size
        return Int(value)
    }

    /// An address or length of `size` bytes, unchecked.
    package mutating func number(_ size: Int) throws(HDF5ObjectHeader.Damage) -> UInt64 {
        try need(size)
        defer { position += size }
        return HDF5SymbolTable.number(bytes, position, size)
    }

    /// The version byte, which must be in `accepted`.
    @discardableResult
    package mutating func version(_ accepted: ClosedRange<Int>) throws(HDF5ObjectHeader.Damage) -> Int {
        let version = try integer(1)
        guard accepted.contains(version) else { throw HDF5ObjectHeader.Damage("\(name) message version \(version)") }
        return version
    }

    /// A size of `width` bytes and that many bytes after it.
    package mutating func sized(_ width: Int) throws(HDF5ObjectHeader.Damage) {
        try skip(try integer(width))
    }
}
