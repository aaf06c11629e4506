import ExchangeCore
import Foundation
import ImageCore

/// Checks, before libhdf5 opens a file of the earliest file format (superblock version 0 or
/// 1), the root group's symbol table as libhdf5 would walk it to find a name: its B-tree
/// nodes, the symbol-table nodes they point to and the local heap of names must lie inside
/// the file and carry their signatures. libhdf5 follows these addresses without checking
/// them (an undefined child address made it copy into a null buffer), so a damaged table is
/// refused here as corrupt data.
enum HDF5SymbolTable {
    static func check(_ path: String) throws {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe) else { return }
        let bytes = [UInt8](data)
        func fail(_ what: String) -> ExchangeError {
            ExchangeError(path: path, operation: "HDF5 symbol table", message: "the root group's symbol table is damaged: \(what)",
                          category: .corruptData)
        }
        let signature: [UInt8] = [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]
        var start = 0
        while start + 8 <= bytes.count, Array(bytes[start..<(start + 8)]) != signature {
            start = start == 0 ? 512 : start * 2
        }
        guard start + 24 <= bytes.count else { return }
        let version = bytes[start + 8]
        guard version <= 1 else { return }  // later formats: object headers with checksums
        let o = Int(bytes[start + 13]), l = Int(bytes[start + 14])
        guard o == 4 || o == 8, l == 4 || l == 8 else { throw fail("sizes of offsets and lengths \(o), \(l)") }
        let leafK = Int(bytes[start + 16]) | Int(bytes[start + 17]) << 8
        let internalK = Int(bytes[start + 18]) | Int(bytes[start + 19]) << 8
        var at = start + 24 + (version == 1 ? 4 : 0)
        func number(_ offset: Int, _ size: Int) -> UInt64? {
            guard offset >= 0, offset + size <= bytes.count else { return nil }
            var v: UInt64 = 0
            for i in 0..<size { v |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
            return v
        }
        guard let base = number(at, o) else { return }
        at += 4 * o  // base, free-space, end-of-file and driver information addresses
        // The root group's symbol table entry: name offset, object header address, cache type,
        // reserved, scratch pad (B-tree and local heap addresses when the cache type is 1).
        guard let cache = number(at + 2 * o, 4), cache == 1,
              let tree = number(at + 2 * o + 8, o), let heap = number(at + 3 * o + 8, o) else { return }
        let undefined = o == 8 ? UInt64.max : UInt64(UInt32.max)
        /// The file offset of `address` with `length` bytes there, or nil when they are not in the file.
        func place(_ address: UInt64, _ length: Int) -> Int? {
            guard address != undefined, length >= 0 else { return nil }
            let (sum, overflow) = address.addingReportingOverflow(base)
            guard !overflow, sum <= UInt64(bytes.count), Int(sum) + length <= bytes.count else { return nil }
            return Int(sum)
        }
        func has(_ offset: Int, _ text: String) -> Bool { Array(bytes[offset..<(offset + 4)]) == Array(text.utf8) }
        // Local heap: signature, version, reserved, data size (l), free list (l), data address (o).
        guard let h = place(heap, 8 + 2 * l + o), has(h, "HEAP"), let size = number(h + 8, l), let segment = number(h + 8 + 2 * l, o),
              size <= UInt64(bytes.count), place(segment, Int(size)) != nil else {
            throw fail("its local heap of names is not in the file")
        }
        func node(_ address: UInt64, depth: Int) throws {
            guard depth < 32 else { throw fail("its B-tree is deeper than 32 levels") }
            // Signature, type (0: group), level, entries, two sibling addresses, then keys (l, heap
            // offsets of names) and children (o) alternating: key₀ child₀ … child₍ₙ₋₁₎ keyₙ.
            guard let n = place(address, 8 + 2 * o), has(n, "TREE"), bytes[n + 4] == 0 else {
                throw fail("a B-tree node is not in the file or not a group node")
            }
            let level = Int(bytes[n + 5]), entries = Int(bytes[n + 6]) | Int(bytes[n + 7]) << 8
            guard entries <= 2 * max(internalK, leafK, 1), place(address, 8 + 2 * o + (entries + 1) * l + entries * o) != nil else {
                throw fail("a B-tree node has \(entries) entries")
            }
            for k in 0..<entries {
                guard let child = number(n + 8 + 2 * o + l + k * (l + o), o) else { throw fail("a B-tree child") }
                if level > 0 {
                    try node(child, depth: depth + 1)
                } else {
                    guard let s = place(child, 8), has(s, "SNOD") else { throw fail("a symbol-table node is not in the file") }
                    let count = Int(bytes[s + 6]) | Int(bytes[s + 7]) << 8
                    guard count <= 2 * max(leafK, 1), place(child, 8 + count * (2 * o + 24)) != nil else {
                        throw fail("a symbol-table node holds \(count) entries")
                    }
                }
            }
        }
        try node(tree, depth: 0)
    }
}
