import Foundation

/// Byte-level access to HDF5 files for damage tests: little-endian numbers, the keys of
/// version-1 B-tree chunk indexes (the chunk index of the project's files and of h5py's
/// default files, which carries no checksum), and hand-made zlib streams.
public enum HDF5Bytes {
    /// The little-endian unsigned integer of `size` bytes at `at`.
    public static func number(_ bytes: [UInt8], _ at: Int, _ size: Int) -> UInt64 {
        (0..<size).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
    }

    /// Stores `value` as `size` little-endian bytes at `at`.
    public static func put(_ value: UInt64, _ bytes: inout [UInt8], _ at: Int, _ size: Int) {
        for i in 0..<size { bytes[at + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
    }

    /// One chunk's entry in a version-1 B-tree leaf of a chunked dataset: the key (chunk
    /// size in bytes, 4; filter mask, 4; the chunk's offset in each dimension and a last
    /// 0 for the element, 8 each) followed by the chunk's address (8).
    public struct ChunkKey: Equatable, Sendable {
        /// File offset of the key.
        public let at: Int
        public let rank: Int
        public let size: UInt64
        public let filterMask: UInt64
        public let offsets: [UInt64]
        public let address: UInt64

        public var sizeField: Int { at }
        public var filterMaskField: Int { at + 4 }
        public func offsetField(_ dimension: Int) -> Int { at + 8 + 8 * dimension }
        public var addressField: Int { at + 8 + 8 * (rank + 1) }
    }

    /// The entries of every version-1 B-tree leaf ("TREE", node type 1, level 0) that reads
    /// as the chunk index of a dataset of `rank` dimensions (each key's element offset 0,
    /// each address inside the file and not 0), one array per leaf, in file order.
    public static func chunkLeaves(_ bytes: [UInt8], rank: Int) -> [[ChunkKey]] {
        let signature = Array("TREE".utf8)
        let keySize = 8 + 8 * (rank + 1)
        var leaves: [[ChunkKey]] = []
        var p = 0
        while p + 24 <= bytes.count {
            defer { p += 1 }
            guard Array(bytes[p..<(p + 4)]) == signature, bytes[p + 4] == 1, bytes[p + 5] == 0 else { continue }
            let entries = Int(number(bytes, p + 6, 2))
            var keys: [ChunkKey] = []
            for i in 0..<entries {
                let at = p + 24 + i * (keySize + 8)
                guard at + keySize + 8 <= bytes.count else { break }
                let offsets = (0...rank).map { number(bytes, at + 8 + 8 * $0, 8) }
                let address = number(bytes, at + keySize, 8)
                guard offsets[rank] == 0, address > 0, address < UInt64(bytes.count) else { break }
                keys.append(ChunkKey(at: at, rank: rank, size: number(bytes, at, 4), filterMask: number(bytes, at + 4, 4),
                                     offsets: Array(offsets.prefix(rank)), address: address))
            }
            if entries > 0 && keys.count == entries { leaves.append(keys) }
        }
        return leaves
    }

    /// A zlib stream holding `data` in stored (uncompressed) deflate blocks.
    public static func storedZlib(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var rest = data[...]
        repeat {
            let n = min(65535, rest.count)
            out.append(n == rest.count ? 1 : 0)
            out += [UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += rest.prefix(n)
            rest = rest.dropFirst(n)
        } while !rest.isEmpty
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        let adler = b << 16 | a
        out += [UInt8(adler >> 24), UInt8((adler >> 16) & 0xFF), UInt8((adler >> 8) & 0xFF), UInt8(adler & 0xFF)]
        return out
    }
}
