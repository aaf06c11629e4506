import ExchangeCore
import Foundation
import ImageCore

/// The earliest file format's superblock (version 0 or 1) and its groups' symbol tables,
/// checked before libhdf5 reads them.
///
/// libhdf5 follows a symbol table's addresses and name offsets without checking them (an
/// undefined child address made it copy into a null buffer), and these structures carry no
/// checksum. So the superblock is checked before libhdf5 opens the file, with the root
/// group's table; every other group's table is checked when its object header is
/// (`HDF5ObjectHeader`, the symbol-table message), before the group is opened or listed.
package enum HDF5SymbolTable {
    /// Checks the superblock of the file at `path` (versions 0 and 1; later ones carry a
    /// checksum, which libhdf5 verifies), the root group's object header and, for versions 0
    /// and 1, the root group's symbol table.
    /// - Throws: `ExchangeError` `.corruptData` for damage, `.unsupportedFeature` for a file
    ///   stored in several parts or a message this reader does not check.
    package static func check(_ path: String) throws {
        guard let file = try? HDF5MappedFile(path: path, base: 0) else { return }
        let bytes = file.bytes
        func fail(_ what: String, _ category: FailureCategory = .corruptData) -> ExchangeError {
            ExchangeError(path: path, operation: "HDF5 superblock", message: what, category: category)
        }
        let signature: [UInt8] = [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]
        var start = 0
        while start + 8 <= bytes.count, !(0..<8).allSatisfy({ bytes[start + $0] == signature[$0] }) {
            start = start == 0 ? 512 : start * 2
        }
        guard start + 24 <= bytes.count else { return }
        let version = bytes[start + 8]
        guard version <= 1 else {
            // Later superblocks carry a checksum; the root group's header they name is walked
            // before libhdf5 opens the file (it reads that header then).
            let o = Int(bytes[start + 9]), l = Int(bytes[start + 10])
            guard o == 4 || o == 8, l == 4 || l == 8, start + 12 + 4 * o <= bytes.count,
                  let based = try? HDF5MappedFile(path: path, base: number(bytes, start + 12, o)),
                  based.offset(of: 0, count: number(bytes, start + 12 + 2 * o, o)) != nil else { return }  // (truncated: libhdf5 says so)
            try checkRootHeader(based, at: number(bytes, start + 12 + 3 * o, o), sizes: .init(offsets: o, lengths: l))
            return
        }
        guard bytes[start + 9] == 0, bytes[start + 10] == 0, bytes[start + 12] == 0 else {
            throw fail("superblock version \(version) with free-space, root-group or shared-header versions \(bytes[start + 9]), \(bytes[start + 10]), \(bytes[start + 12]) (0 expected)")
        }
        let o = Int(bytes[start + 13]), l = Int(bytes[start + 14])
        guard o == 4 || o == 8, l == 4 || l == 8 else { throw fail("sizes of offsets and lengths \(o), \(l)") }
        let leafK = unsigned(bytes, start + 16, 2), internalK = unsigned(bytes, start + 18, 2)
        guard leafK >= 1, internalK >= 1 else { throw fail("symbol-table B-tree ranks \(leafK), \(internalK) (at least 1)") }
        let at = start + 24 + (version == 1 ? 4 : 0)
        // Base, free-space, end-of-file and driver-information addresses, then the root
        // group's symbol-table entry: name offset, object header address, cache type,
        // reserved, scratch pad (B-tree and local heap addresses when the cache type is 1).
        let entry = at + 4 * o
        guard entry + 2 * o + 8 + 16 <= bytes.count else { throw fail("the superblock runs past the end of the file (\(bytes.count) bytes)") }
        let undefined = o == 8 ? UInt64.max : UInt64(UInt32.max)
        guard number(bytes, at + 3 * o, o) == undefined else {
            throw fail("the file is stored in several parts (it names driver information: a family, multi or split file); only single files are read",
                       .unsupportedFeature)
        }
        let sizes = HDF5ObjectHeader.Sizes(offsets: o, lengths: l, leafK: leafK, internalK: internalK)
        guard let based = try? HDF5MappedFile(path: path, base: number(bytes, at, o)) else { return }
        // A file shorter than its stated end is left to libhdf5, which reports it truncated.
        guard based.offset(of: 0, count: number(bytes, at + 2 * o, o)) != nil else { return }
        try checkRootHeader(based, at: number(bytes, entry + o, o), sizes: sizes)
        guard unsigned(bytes, entry + 2 * o, 4) == 1 else { return }
        do {
            try checkTree(based, tree: number(bytes, entry + 2 * o + 8, o), heap: number(bytes, entry + 3 * o + 8, o), sizes: sizes)
        } catch {
            throw ExchangeError(path: path, operation: "HDF5 symbol table", message: "the root group's symbol table is damaged: \(error)",
                                category: .corruptData)
        }
    }

    /// Walks the root group's object header (`HDF5ObjectHeader`), which libhdf5 reads when it
    /// opens the file.
    private static func checkRootHeader(_ file: HDF5MappedFile, at address: UInt64, sizes: HDF5ObjectHeader.Sizes) throws {
        do {
            try HDF5ObjectHeader.check(file, at: address, sizes: sizes)
        } catch {
            throw ExchangeError(path: file.path, operation: "object header", message: "/ at address \(address): \(error)",
                                category: error.unsupported ? .unsupportedFeature : .corruptData)
        }
    }

    /// Checks a group's symbol table — the version-1 B-tree at `tree` and the local heap of
    /// names at `heap` — as libhdf5 walks it to find or list names: every node inside the file
    /// with its signature and a count of entries its rank allows, at most 32 levels, every
    /// symbol-table node inside the file, and every name offset (B-tree keys, symbol entries)
    /// naming a NUL-terminated name inside the heap's data.
    package static func checkTree(_ file: HDF5MappedFile, tree: UInt64, heap: UInt64, sizes: HDF5ObjectHeader.Sizes) throws(HDF5ObjectHeader.Damage) {
        let o = sizes.offsets, l = sizes.lengths, bytes = file.bytes
        let names = try localHeap(file, at: heap, sizes: sizes)
        func fail(_ what: String) -> HDF5ObjectHeader.Damage { HDF5ObjectHeader.Damage(what) }
        func name(_ offset: UInt64, _ what: String) throws(HDF5ObjectHeader.Damage) {
            guard names.holdsName(at: offset, in: bytes) else { throw fail("\(what) names offset \(offset) of a heap of \(names.size) bytes, not a name in it") }
        }
        func node(_ address: UInt64, depth: Int) throws(HDF5ObjectHeader.Damage) {
            guard depth < 32 else { throw fail("its B-tree is deeper than 32 levels") }
            // Signature, type (0: group), level, entries, two sibling addresses, then keys (l, heap
            // offsets of names) and children (o) alternating: key₀ child₀ … child₍ₙ₋₁₎ keyₙ.
            guard let n = file.offset(of: address, count: UInt64(8 + 2 * o)), has(bytes, n, "TREE"), bytes[n + 4] == 0 else {
                throw fail("a B-tree node is not in the file or not a group node")
            }
            let level = Int(bytes[n + 5]), entries = unsigned(bytes, n + 6, 2)
            guard entries <= 2 * max(sizes.internalK, sizes.leafK, 1),
                  file.offset(of: address, count: UInt64(8 + 2 * o + (entries + 1) * l + entries * o)) != nil else {
                throw fail("a B-tree node has \(entries) entries")
            }
            for k in 0...entries {
                let key = n + 8 + 2 * o + k * (l + o)
                try name(number(bytes, key, l), "a B-tree key")
                guard k < entries else { break }
                let child = number(bytes, key + l, o)
                if level > 0 {
                    try node(child, depth: depth + 1)
                    continue
                }
                guard let s = file.offset(of: child, count: 8), has(bytes, s, "SNOD") else { throw fail("a symbol-table node is not in the file") }
                let count = unsigned(bytes, s + 6, 2), entrySize = 2 * o + 24
                guard count <= 2 * max(sizes.leafK, 1), file.offset(of: child, count: UInt64(8 + count * entrySize)) != nil else {
                    throw fail("a symbol-table node holds \(count) entries")
                }
                for e in 0..<count { try name(number(bytes, s + 8 + e * entrySize, o), "a symbol-table entry") }
            }
        }
        try node(tree, depth: 0)
    }

    /// A local heap (signature, version 0, reserved, data size, free-list offset, data address)
    /// whose data lies inside the file.
    package static func localHeap(_ file: HDF5MappedFile, at address: UInt64, sizes: HDF5ObjectHeader.Sizes) throws(HDF5ObjectHeader.Damage) -> LocalHeap {
        let o = sizes.offsets, l = sizes.lengths, bytes = file.bytes
        guard let h = file.offset(of: address, count: UInt64(8 + 2 * l + o)), has(bytes, h, "HEAP"), bytes[h + 4] == 0 else {
            throw HDF5ObjectHeader.Damage("its local heap of names is not in the file")
        }
        let size = number(bytes, h + 8, l)
        guard let data = file.offset(of: number(bytes, h + 8 + 2 * l, o), count: size) else {
            throw HDF5ObjectHeader.Damage("its local heap's \(size) bytes of names are not in the file")
        }
        return LocalHeap(start: data, size: Int(size))
    }

    /// A local heap's data: `size` bytes at file offset `start`.
    package struct LocalHeap {
        package let start: Int, size: Int

        /// Whether `offset` starts a name that ends in NUL inside the heap's data.
        package func holdsName(at offset: UInt64, in bytes: UnsafeRawBufferPointer) -> Bool {
            guard offset < UInt64(size) else { return false }
            return (start + Int(offset)..<(start + size)).contains { bytes[$0] == 0 }
        }
    }

    /// Whether the 4 bytes at `offset` are the signature `text` ("TREE", "SNOD", "HEAP").
    package static func has(_ bytes: UnsafeRawBufferPointer, _ offset: Int, _ text: StaticString) -> Bool {
        (0..<4).allSatisfy { bytes[offset + $0] == text.utf8Start[$0] }
    }

    /// The little-endian unsigned integer of `size` (at most 8) bytes at `offset` (inside `bytes`).
    package static func number(_ bytes: UnsafeRawBufferPointer, _ offset: Int, _ size: Int) -> UInt64 {
        HDF5GlobalHeap.unsigned(bytes, at: offset, size: size) ?? .max  // (nil only past 8 bytes)
    }

    private static func unsigned(_ bytes: UnsafeRawBufferPointer, _ offset: Int, _ size: Int) -> Int { Int(number(bytes, offset, size)) }
}
