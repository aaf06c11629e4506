import Foundation

/// A version-2 object header (`OHDR`, the file format 1.8's, as the project writes), read
/// only to find its data layout message: the header is checksummed, and libhdf5 verifies it
/// before decoding, but a chunked layout of version 3 indexes its chunks with a version-1
/// B-tree, which has no checksum and which libhdf5 walks. That tree is checked like an
/// earliest-format file's (`HDF5ChunkTree`).
///
/// The header (HDF5 file format specification, "Version 2 Object Header"): `OHDR`, version
/// 2, flags; four times when flag 5 is set, two attribute-storage limits when flag 4 is set;
/// the size of chunk 0 in 1, 2, 4 or 8 bytes (flags 0–1); then messages — type (1 byte),
/// size (2), flags (1), a creation order (2) when flag 2 is set, their data — and a 4-byte
/// checksum. Continuation messages (type 0x10) name further chunks, each `OCHK`, messages and
/// a checksum.
enum HDF5VersionTwoHeader {
    typealias Damage = HDF5ObjectHeader.Damage

    /// Checks the chunk index of the header's chunked layout, if it has one. Damage to the
    /// header itself is left to libhdf5, which finds it by the checksum (with its own message):
    /// the walk stops where the header does not hold together.
    static func checkChunkIndex(_ file: HDF5MappedFile, at address: UInt64, sizes: HDF5ObjectHeader.Sizes) throws(Damage) {
        let bytes = file.bytes, o = sizes.offsets, l = sizes.lengths
        guard let start = file.offset(of: address, count: 6), bytes[start + 4] == 2 else { return }
        let flags = bytes[start + 5]
        let sizeWidth = 1 << Int(flags & 3)
        let prefix = 6 + (flags & 0x20 != 0 ? 16 : 0) + (flags & 0x10 != 0 ? 4 : 0)
        guard let sizeAt = file.offset(of: address + UInt64(prefix), count: UInt64(sizeWidth)) else { return }
        let messageHead = 4 + (flags & 0x04 != 0 ? 2 : 0)
        // Each chunk's messages: where they start and how many bytes they take (the checksum after).
        var chunks = [(from: address + UInt64(prefix + sizeWidth), length: HDF5SymbolTable.number(bytes, sizeAt, sizeWidth))]
        var seen: Set<UInt64> = []
        while let chunk = chunks.popLast() {
            guard seen.insert(chunk.from).inserted, seen.count <= HDF5ObjectHeader.chunkLimit,
                  let from = file.offset(of: chunk.from, count: chunk.length) else { return }
            let end = from + Int(chunk.length)
            var p = from
            while p + messageHead <= end {
                let type = Int(bytes[p]), size = Int(bytes[p + 1]) | Int(bytes[p + 2]) << 8
                let data = p + messageHead
                guard data + size <= end else { return }
                if type == 0x10, size >= o + l {
                    // A continuation: `OCHK` and messages, then the chunk's checksum (4 bytes).
                    let target = HDF5SymbolTable.number(bytes, data, o), length = HDF5SymbolTable.number(bytes, data + o, l)
                    guard length >= 8, target < UInt64.max - 4 else { return }
                    chunks.append((target + 4, length - 8))
                } else if type == 0x08, bytes[p + 3] & 0x02 == 0,
                          let tree = try? HDF5HeaderMessage.chunkTree(bytes, at: data, size: size, sizes: sizes) {
                    try HDF5ChunkTree.check(file, root: tree.address, dimensionality: tree.dimensionality, sizes: sizes)
                }
                p = data + size
            }
        }
    }
}
