/// Test-side reading of a lossless-JPEG stream's structure, independent of the decoder:
/// the marker segments before the scan and the markers inside the entropy-coded data.
struct StreamLayout {
    /// A Huffman table from a DHT segment.
    struct Table {
        var id: Int
        var counts: [Int]
        var symbols: [UInt8]
    }

    /// Marker codes of the header segments, in order (SOI first).
    var headerMarkers: [UInt8] = []
    var tables: [Table] = []
    /// Marker codes found after SOS (RSTn ..., EOI), in order.
    var scanMarkers: [UInt8] = []
    /// Offset of the first entropy-coded byte.
    var scanStart = 0

    init(_ bytes: [UInt8]) {
        headerMarkers.append(bytes[1])
        var pos = 2
        while pos + 4 <= bytes.count {
            let marker = bytes[pos + 1]
            let length = Int(bytes[pos + 2]) << 8 | Int(bytes[pos + 3])
            headerMarkers.append(marker)
            if marker == 0xC4 {
                var at = pos + 4
                while at < pos + 2 + length {
                    let counts = (0..<16).map { Int(bytes[at + 1 + $0]) }
                    let total = counts.reduce(0, +)
                    tables.append(Table(id: Int(bytes[at] & 15), counts: counts,
                                        symbols: Array(bytes[(at + 17)..<(at + 17 + total)])))
                    at += 17 + total
                }
            }
            pos += 2 + length
            if marker == 0xDA { break }
        }
        scanStart = pos
        var i = pos
        while i + 1 < bytes.count {
            if bytes[i] == 0xFF && bytes[i + 1] != 0 {
                scanMarkers.append(bytes[i + 1])
                i += 2
            } else {
                i += 1
            }
        }
    }
}

extension StreamLayout.Table {
    /// Sum over codes of 2^-length, as a fraction of 2^16 (65536 means the code space is full).
    var kraftSum: Int { counts.enumerated().reduce(0) { $0 + $1.element << (15 - $1.offset) } }
    /// The longest code length used.
    var longestCode: Int { (counts.lastIndex { $0 > 0 } ?? -1) + 1 }
}
