import Foundation

/// The version-1 B-tree that indexes a chunked dataset's chunks (data layout versions 1–3:
/// the earliest file format's, and h5py's default), walked before libhdf5 lists the chunks.
///
/// The tree has no checksum, and libhdf5 reads each node by the size its rank K gives (2K
/// entries) and follows each child address the node states. So every node is checked first:
/// inside the file with the signature `TREE`, node type 1 (raw data chunks), one level below
/// its parent, at most 2K entries, its keys — a chunk's stored size (4 bytes), its filter mask
/// (4) and its offsets (8 bytes for each of the layout's dimensions, the element's included) —
/// and children inside the file; no node twice, at most 32 levels. The chunks the leaves
/// point to are checked when they are read (`HDF5ChunkedDataset`).
package enum HDF5ChunkTree {
    /// Most nodes one tree may have (a 2³²-chunk dataset with K = 32 needs far fewer).
    package static let nodeLimit = 1 << 22

    /// Checks the tree at `root` of a layout with `dimensionality` dimensions.
    package static func check(_ file: HDF5MappedFile, root: UInt64, dimensionality: Int,
                              sizes: HDF5ObjectHeader.Sizes) throws(HDF5ObjectHeader.Damage) {
        let o = sizes.offsets
        let undefined = o >= 8 ? UInt64.max : (UInt64(1) << (8 * o)) - 1
        guard root != undefined else { return }  // no chunk written yet
        let bytes = file.bytes, keySize = 8 + 8 * dimensionality, most = 2 * max(sizes.chunkK, 1)
        var pending: [(address: UInt64, level: Int?)] = [(root, nil)], seen: Set<UInt64> = []
        while let (address, expected) = pending.popLast() {
            guard seen.insert(address).inserted else { throw HDF5ObjectHeader.Damage("the chunk index reaches the node at address \(address) twice") }
            guard seen.count <= nodeLimit else { throw HDF5ObjectHeader.Damage("the chunk index has more than \(nodeLimit) nodes") }
            guard let n = file.offset(of: address, count: UInt64(8 + 2 * o)), HDF5SymbolTable.has(bytes, n, "TREE") else {
                throw HDF5ObjectHeader.Damage("the chunk index node at address \(address) is not in the file or has no TREE signature")
            }
            let type = Int(bytes[n + 4]), level = Int(bytes[n + 5]), entries = Int(bytes[n + 6]) | Int(bytes[n + 7]) << 8
            guard type == 1 else { throw HDF5ObjectHeader.Damage("the chunk index node at address \(address) is of type \(type), not 1 (chunks)") }
            guard level < 32, expected == nil || level == expected else {
                throw HDF5ObjectHeader.Damage("the chunk index node at address \(address) is at level \(level)\(expected.map { ", its parent's child level \($0)" } ?? "")")
            }
            guard entries <= most else {
                throw HDF5ObjectHeader.Damage("the chunk index node at address \(address) has \(entries) entries, more than \(most)")
            }
            let span = 8 + 2 * o + (entries + 1) * keySize + entries * o
            guard file.offset(of: address, count: UInt64(span)) != nil else {
                throw HDF5ObjectHeader.Damage("the chunk index node at address \(address) (\(entries) entries) runs past the end of the file")
            }
            guard level > 0 else { continue }
            for k in 0..<entries {
                pending.append((HDF5SymbolTable.number(bytes, n + 8 + 2 * o + (k + 1) * keySize + k * o, o), level - 1))
            }
        }
    }
}
