/// Number of leading bits resolved by one lookup in `HuffmanLookup.fast`.
let lookupBits = 11

/// Flag in a `HuffmanLookup.fast` entry: the entry holds the complete difference.
let fullEntryFlag: UInt32 = 0x80

/// Flag in a `PairedLookups` entry: the entry holds two complete differences.
let pairFlag: UInt32 = 0x40

/// The mean bits per sample of a scan's entropy-coded data up to which it is decoded two
/// codes per lookup. Measured on 256 × 256 three-component tiles (`LJ92_BENCH=1`): at 2.5
/// and 4.5 bits per sample pairs decode 1.3–1.4× faster, at 5.5 as fast, at 6.9 a third
/// slower (each lookup's table then waits on the one before, and two codes rarely fit).
let pairedLookupMaximumBits = 5.0

/// Raw pointers into a `HuffmanDecodingTable`, for the decoding loop (no reference counting).
///
/// `fast` has `1 << lookupBits` entries indexed by the next `lookupBits` bits of the stream:
/// - `fullEntryFlag` set: bits 0–4 give the number of bits to consume (code and extra bits
///   together) and bits 16–31 the difference, modulo 2^16;
/// - otherwise, if nonzero: bits 0–4 give the code length and bits 8–12 the difference
///   category SSSS, whose extra bits follow the code;
/// - zero: no code of up to `lookupBits` bits matches; longer codes are found through
///   `maxCode`, `valueOffset` and `symbols` (T.81 F.2.2.3), else the bits are invalid.
struct HuffmanLookup {
    var fast: UnsafePointer<UInt32>
    /// Largest code of each length (index 1...16), -1 where there is none.
    var maxCode: UnsafePointer<Int32>
    /// For each length: index into `symbols` of the code with value 0 of that length
    /// (may be negative; only used with codes of that length).
    var valueOffset: UnsafePointer<Int32>
    /// HUFFVAL: difference categories in code order.
    var symbols: UnsafePointer<UInt8>
}

/// The difference coded by `bits` (the `category` extra bits that follow a code), modulo
/// 2^16 (T.81 H.1.2.2 and F.2.2.1, Table H.2). Category 16 has no extra bits and means 32768.
@inline(__always)
func extendDifference(_ bits: UInt32, category: UInt32) -> UInt16 {
    if category == 16 { return 0x8000 }
    if category == 0 { return 0 }
    // Values below 2^(SSSS-1) stand for the negative differences bits - (2^SSSS - 1).
    let negative = bits < (1 &<< (category &- 1))
    let value = negative ? bits &+ 1 &- (1 &<< category) : bits
    return UInt16(truncatingIfNeeded: value)
}

/// A Huffman table prepared for decoding: the lookup table and the long-code arrays in one
/// allocation, owned by this object.
final class HuffmanDecodingTable {
    private let storage: UnsafeMutableRawPointer
    /// Pointers into `storage`, valid while this object lives.
    let lookup: HuffmanLookup

    /// Builds the tables from a validated specification (code space not overfull, symbols
    /// at most 16).
    init(_ spec: HuffmanSpec) {
        let fastCount = 1 << lookupBits
        let symbolCount = spec.symbols.count
        let fastBytes = fastCount * 4
        let arrayBytes = 17 * 4
        let size = fastBytes + 2 * arrayBytes + max(symbolCount, 1)
        storage = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)
        let fast = storage.bindMemory(to: UInt32.self, capacity: fastCount)
        fast.initialize(repeating: 0, count: fastCount)
        let maxCode = (storage + fastBytes).bindMemory(to: Int32.self, capacity: 17)
        maxCode.initialize(repeating: -1, count: 17)
        let valueOffset = (storage + fastBytes + arrayBytes).bindMemory(to: Int32.self, capacity: 17)
        valueOffset.initialize(repeating: 0, count: 17)
        let symbols = (storage + fastBytes + 2 * arrayBytes).bindMemory(to: UInt8.self, capacity: max(symbolCount, 1))
        symbols.initialize(repeating: 0, count: max(symbolCount, 1))
        for i in 0..<symbolCount { symbols[i] = spec.symbols[i] }

        // Canonical code assignment (T.81 C.2): codes of each length are consecutive values,
        // and the first code of a length is (last code of the previous length + 1) << 1.
        var code = 0
        var k = 0
        for length in 1...16 {
            let n = spec.counts[length - 1]
            if n > 0 {
                valueOffset[length] = Int32(k - code)
                maxCode[length] = Int32(code + n - 1)
            }
            for _ in 0..<n {
                let category = Int(spec.symbols[k])
                if length <= lookupBits {
                    let spare = lookupBits - length  // lookup bits after the code
                    let base = code << spare
                    for j in 0..<(1 << spare) {
                        let entry: UInt32
                        if category == 16 || length + category <= lookupBits {
                            let total = category == 16 ? length : length + category
                            let extra = category == 16 || category == 0
                                ? 0 : UInt32((j >> (spare - category)) & ((1 << category) - 1))
                            let difference = extendDifference(extra, category: UInt32(category))
                            entry = UInt32(total) | fullEntryFlag | UInt32(difference) << 16
                        } else {
                            entry = UInt32(length) | UInt32(category) << 8
                        }
                        fast[base + j] = entry
                    }
                }
                code += 1
                k += 1
            }
            code <<= 1
        }
        lookup = HuffmanLookup(fast: fast, maxCode: maxCode, valueOffset: valueOffset, symbols: symbols)
    }

    deinit { storage.deallocate() }
}

/// The lookup tables of a scan's components with pairs of codes (`PairedLookups.entries`):
/// the decoding loop reads two samples in one lookup wherever both codes are complete within
/// the lookup bits, which halves the lookups, and the dependency chain through them, of a
/// typical raw image.
final class PairedLookups {
    private let storage: UnsafeMutablePointer<UInt64>
    /// `components << lookupBits` entries: component k's table first at `entries + k << lookupBits`,
    /// indexed by the next `lookupBits` bits of the stream.
    /// - Bits 0–31: component k's `HuffmanLookup.fast` entry, except that for a complete code
    ///   (`fullEntryFlag`) followed, within the lookup bits, by a complete code of component
    ///   k + 1's table (component 0 after the last), bits 0–4 give the bits both codes take,
    ///   bit 6 (`pairFlag`) is set and bits 32–47 hold the second difference.
    /// - Bits 48–63: the index in `entries` of the table of the component after the samples
    ///   decoded (k + 1 or k + 2, modulo the component count) << `lookupBits`: the next
    ///   lookup's address is one shift and one add from this entry, as short a dependency as
    ///   the bit buffer's own.
    let entries: UnsafePointer<UInt64>

    init(_ tables: UnsafePointer<HuffmanLookup>, components: Int) {
        let size = 1 << lookupBits
        let mask = size - 1
        storage = .allocate(capacity: components * size)
        for k in 0..<components {
            let first = tables[k].fast, next = tables[(k + 1) % components].fast
            let out = storage + k * size
            for j in 0..<size {
                let entry = first[j]
                let firstBits = Int(entry & 0x1F)
                var paired = UInt64(entry) | UInt64(((k + 1) % components) << lookupBits) << 48
                if entry & fullEntryFlag != 0 {
                    // A complete entry depends only on its first bits: the entry at the index
                    // shifted left past the first code (zeros shifted in) is the second
                    // code's whenever that code ends within the bits the index holds.
                    let second = firstBits < lookupBits ? next[(j << firstBits) & mask] : 0
                    let secondBits = Int(second & 0x1F)
                    if second & fullEntryFlag != 0, secondBits <= lookupBits - firstBits {
                        paired = UInt64(entry & ~0x1F | pairFlag) | UInt64(firstBits + secondBits)
                            | UInt64(second >> 16) << 32 | UInt64(((k + 2) % components) << lookupBits) << 48
                    }
                }
                out[j] = paired
            }
        }
        entries = UnsafePointer(storage)
    }

    deinit { storage.deallocate() }
}
