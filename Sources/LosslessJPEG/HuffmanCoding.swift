/// Huffman code design for the encoder: optimal code lengths limited to 16 bits without an
/// all-ones code, following the procedure of T.81 Annex K.2 (Figures K.1–K.3).
enum HuffmanCoding {
    /// A Huffman table for encoding: its DHT content and the code of each difference category.
    struct Table {
        /// Number of codes of each length 1...16 (BITS, `counts[0]` is length 1).
        var counts: [Int]
        /// Categories in code order (HUFFVAL).
        var symbols: [UInt8]
        /// Code of each category 0...16 (valid where `lengths` is nonzero).
        var codes: [UInt32]
        /// Code length of each category 0...16; 0 for categories that do not occur.
        var lengths: [Int]
    }

    /// Designs the table for the category frequencies `frequencies` (17 entries, at least
    /// one nonzero).
    ///
    /// Code lengths come from Huffman's procedure over the occurring categories plus one
    /// reserved code point, are limited to 16 bits by the adjustment of Figure K.3, and the
    /// reserved point is then dropped from the longest length, so no code consists of 1-bits
    /// only. The most frequent categories get the shortest codes.
    static func table(frequencies: [Int]) -> Table {
        precondition(frequencies.count == 17 && frequencies.contains { $0 > 0 })
        let used = (0..<17).filter { frequencies[$0] > 0 }

        // Huffman's procedure: leaves are the used categories and the reserved point
        // (weight 1, index `used.count`); depth counts the merges above each leaf.
        var weights = used.map { frequencies[$0] } + [1]
        var groups = (0..<weights.count).map { [$0] }
        var depth = [Int](repeating: 0, count: weights.count)
        while groups.count > 1 {
            // The two lightest groups; ties go to the earlier group, for repeatable output.
            var first = 0
            for g in 1..<groups.count where weights[g] < weights[first] { first = g }
            var second = first == 0 ? 1 : 0
            for g in 0..<groups.count where g != first && weights[g] < weights[second] { second = g }
            for leaf in groups[first] + groups[second] { depth[leaf] += 1 }
            let (keep, drop) = (min(first, second), max(first, second))
            groups[keep] += groups[drop]
            weights[keep] += weights[drop]
            groups.remove(at: drop)
            weights.remove(at: drop)
        }

        // BITS, then the length limit of Figure K.3: move pairs of the longest codes up.
        var bits = [Int](repeating: 0, count: 33)
        for d in depth { bits[d] += 1 }
        var longest = 32
        while longest > 16 {
            while bits[longest] > 0 {
                var j = longest - 2
                while bits[j] == 0 { j -= 1 }
                bits[longest] -= 2
                bits[longest - 1] += 1
                bits[j + 1] += 2
                bits[j] -= 1
            }
            longest -= 1
        }
        // Drop the reserved code point: the last (all-ones) code of the longest length.
        while bits[longest] == 0 { longest -= 1 }
        bits[longest] -= 1

        // Most frequent categories first; equal frequencies in category order.
        let order = used.sorted { frequencies[$0] != frequencies[$1] ? frequencies[$0] > frequencies[$1] : $0 < $1 }
        var lengths = [Int](repeating: 0, count: 17)
        var codes = [UInt32](repeating: 0, count: 17)
        var next = 0
        var code: UInt32 = 0
        for length in 1...16 {
            for _ in 0..<bits[length] {
                let category = order[next]
                lengths[category] = length
                codes[category] = code
                code += 1
                next += 1
            }
            code <<= 1
        }
        return Table(counts: Array(bits[1...16]), symbols: order.map { UInt8($0) }, codes: codes, lengths: lengths)
    }
}
