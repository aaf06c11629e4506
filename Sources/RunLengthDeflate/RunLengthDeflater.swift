internal import CDeflate

/// A fast zlib-format (RFC 1950/1951) compressor for image data after byte reordering.
///
/// EXR's ZIP and HDF5's shuffle + deflate both split half floats into byte planes before
/// deflating them. What is left to gain in those planes is almost all in their byte
/// statistics, in runs of one repeated byte (high bytes of a smooth image, zero
/// differences) and, for interleaved pixels, in bytes equal to the same byte of the
/// previous pixel. So this encoder looks only for matches at distance 1 and, optionally,
/// at one pixel `period` (2–4 bytes), each 3–258 bytes long, and gives every block of up
/// to 65,535 input bytes its own Huffman codes, built from that block's counts. It does no
/// general match search, and it scans each block for matches once, skipping eight
/// positions at a time where none can start; it runs about three times as fast as
/// libdeflate's fastest level and five times as fast as zlib at level 4, and on such data
/// its output is about as small (docs/performance.md).
///
/// Each block is written as the cheapest of: Huffman codes with the matches, Huffman codes
/// of the bytes alone (better when matches are short and rare, as in noise), and a stored
/// block; sizes are computed exactly before writing, so the output is never larger than
/// `zlibBound(count)`. The stream is plain deflate: zlib, libdeflate and every EXR and
/// HDF5 reader decode it.
///
/// One instance per thread: it keeps its code tables between calls.
public final class RunLengthDeflater {
    /// Largest input of one block (the most a stored block can hold).
    static let blockSize = 65_535
    /// The second match distance (1 = runs only).
    let period: Int
    /// Per block: each literal/length symbol's bit-reversed code | length << 16, and each
    /// match length's whole code (length code, extra bits, distance code) | bits << 32,
    /// for distance 1; the distance-`period` code differs only in its last bit.
    private let symbolCodes: UnsafeMutablePointer<UInt32>
    private let matchCodes: UnsafeMutablePointer<UInt64>
    /// The current block's matches (`findMatches`); a block holds at most one per 3 bytes.
    private let matches: UnsafeMutablePointer<UInt32>

    /// - Parameter period: also look for matches at this distance, 2–4 (e.g. 3 for the
    ///   byte planes of interleaved RGB samples); 1 looks for runs only.
    public init(period: Int = 1) {
        precondition((1...4).contains(period), "period must be 1...4")
        self.period = period
        symbolCodes = .allocate(capacity: 286)
        matchCodes = .allocate(capacity: 259)
        matches = .allocate(capacity: Self.blockSize / 3 + 1)
    }

    deinit {
        symbolCodes.deallocate()
        matchCodes.deallocate()
        matches.deallocate()
    }

    /// The most bytes `zlibCompress` writes for `count` input bytes.
    public static func zlibBound(_ count: Int) -> Int {
        let blocks = max(1, (count + blockSize - 1) / blockSize)
        return 2 + count + 5 * blocks + 4 + 8
    }

    /// Compresses `count` bytes into a zlib stream at `output` (header, deflate blocks,
    /// Adler-32).
    /// - Returns: the stream's size, or 0 when `capacity` is below `zlibBound(count)`.
    public func zlibCompress(_ input: UnsafePointer<UInt8>, count: Int, into output: UnsafeMutablePointer<UInt8>,
                             capacity: Int) -> Int {
        guard capacity >= Self.zlibBound(count) else { return 0 }
        output[0] = 0x78  // deflate, 32 KiB window
        output[1] = 0x01  // fastest-compression hint; (0x78 << 8 | 0x01) is a multiple of 31
        var writer = BitWriter(output + 2)
        var start = 0
        repeat {
            let end = min(count, start + Self.blockSize)
            writeBlock(input, start: start, end: end, final: end == count, &writer)
            start = end
        } while start < count
        var size = 2 + writer.finish()
        let adler = UInt32(truncatingIfNeeded: libdeflate_adler32(1, input, count))
        for k in 0..<4 { output[size + k] = UInt8(truncatingIfNeeded: adler >> UInt32(24 - 8 * k)) }
        size += 4
        return size
    }

    /// The match starting at `i` (`i ≥ 1`): its length (3–258, not past `end`; 0 when no
    /// match of 3 bytes starts there) and whether it is at distance `period` rather than 1
    /// (the longer one; distance 1 on a tie).
    @inline(__always)
    private static func match(_ input: UnsafePointer<UInt8>, at i: Int, end: Int, period: Int) -> (length: Int, far: Bool) {
        let limit = min(end, i &+ 258)
        var best = equalLength(input, from: i, limit: limit, distance: 1), far = false
        if period > 1 && i >= period && best < limit &- i {
            let other = equalLength(input, from: i, limit: limit, distance: period)
            if other > best {
                best = other
                far = true
            }
        }
        return best >= 3 ? (best, far) : (0, false)
    }

    /// How many bytes from `i` on (up to `limit`) equal the byte `distance` before them,
    /// compared eight at a time.
    @inline(__always)
    private static func equalLength(_ input: UnsafePointer<UInt8>, from i: Int, limit: Int, distance: Int) -> Int {
        var j = i
        while j &+ 8 <= limit {
            let x = UInt64(littleEndian: UnsafeRawPointer(input + j).loadUnaligned(as: UInt64.self))
                ^ UInt64(littleEndian: UnsafeRawPointer(input + (j &- distance)).loadUnaligned(as: UInt64.self))
            if x != 0 { return j &+ x.trailingZeroBitCount &>> 3 &- i }
            j &+= 8
        }
        while j < limit && input[j] == input[j &- distance] { j &+= 1 }
        return j &- i
    }

    /// The high bit of every zero byte of `x` (exactly: no false positives from borrows).
    @inline(__always)
    private static func zeroBytes(_ x: UInt64) -> UInt64 {
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        return ~(((x & low7) &+ low7) | x | low7)
    }

    /// The high bit of byte k set when `input[i + k ..< i + k + 3]` equals the three bytes
    /// `distance` before them, i.e. when a match of at least 3 bytes can start at `i + k`.
    /// Needs `i ≥ distance` and `i + 10 ≤` the input's size.
    @inline(__always)
    private static func matchStarts(_ input: UnsafePointer<UInt8>, at i: Int, distance: Int) -> UInt64 {
        func differences(_ j: Int) -> UInt64 {
            UnsafeRawPointer(input + j).loadUnaligned(as: UInt64.self)
                ^ UnsafeRawPointer(input + (j &- distance)).loadUnaligned(as: UInt64.self)
        }
        let first = zeroBytes(differences(i))
        if first == 0 { return 0 }  // no byte equals the one before it: the common case in noise
        return first & zeroBytes(differences(i &+ 1)) & zeroBytes(differences(i &+ 2))
    }

    /// A recorded match: its offset in the block (< 65,536) | length (3–258) << 16 | far << 25.
    @inline(__always)
    private static func token(offset: Int, length: Int, far: Bool) -> UInt32 {
        UInt32(truncatingIfNeeded: offset) | UInt32(truncatingIfNeeded: length) << 16 | (far ? 1 << 25 : 0)
    }

    @inline(__always)
    private static func unpack(_ token: UInt32) -> (offset: Int, length: Int, far: Bool) {
        (Int(token & 0xFFFF), Int(token >> 16 & 0x1FF), token >> 25 != 0)
    }

    /// Finds the block's matches, greedily from its start (`match` decides each), and
    /// records them in `matches` (see `token`). Eight
    /// positions at a time are skipped when no match starts among them.
    /// - Returns: how many matches were recorded.
    private static func findMatches(_ input: UnsafePointer<UInt8>, start: Int, end: Int, period: Int,
                                    into matches: UnsafeMutablePointer<UInt32>) -> Int {
        var n = 0
        var i = max(start, 1)
        while i < end {
            if i >= period && i &+ 10 <= end {
                var starts = matchStarts(input, at: i, distance: 1)
                if period > 1 { starts |= matchStarts(input, at: i, distance: period) }
                if starts == 0 {
                    i &+= 8
                    continue
                }
                i &+= starts.trailingZeroBitCount &>> 3
            }
            let (length, far) = match(input, at: i, end: end, period: period)
            if length > 0 {
                matches[n] = Self.token(offset: i &- start, length: length, far: far)
                n &+= 1
                i &+= length
            } else {
                i &+= 1
            }
        }
        return n
    }

    /// One block: matches and literals of `input[start..<end]`, written as the cheapest of
    /// dynamic Huffman coding with matches, without them, and a stored block.
    private func writeBlock(_ input: UnsafePointer<UInt8>, start: Int, end: Int, final: Bool, _ w: inout BitWriter) {
        let matchCount = Self.findMatches(input, start: start, end: end, period: period, into: matches)
        var literalsOnly = [UInt32](repeating: 0, count: 286)
        literalsOnly.withUnsafeMutableBufferPointer { Self.countBytes(input, start: start, end: end, into: $0.baseAddress!) }
        literalsOnly[256] = 1
        var withMatches = literalsOnly
        if matchCount > 0 {
            // Every byte was counted as a literal; the bytes of each match come off.
            withMatches.withUnsafeMutableBufferPointer { buffer in
                let counts = buffer.baseAddress!
                for m in 0..<matchCount {
                    let (offset, length, far) = Self.unpack(matches[m])
                    let i = start &+ offset
                    counts[LengthSymbols.symbol[length]] &+= 1
                    if !far {
                        counts[Int(input[i &- 1])] &-= UInt32(truncatingIfNeeded: length)  // a run of one byte
                    } else {
                        for k in i..<(i &+ length) { counts[Int(input[k])] &-= 1 }
                    }
                }
            }
        }
        // Distance codes: distance 1 is code 0, distance `period` code `period - 1`; one bit
        // each (a complete code every inflater accepts).
        var distanceLengths = [UInt8](repeating: 0, count: max(2, period))
        distanceLengths[0] = 1
        distanceLengths[max(1, period - 1)] = 1
        let literalPlan = BlockPlan(counts: literalsOnly, distanceLengths: distanceLengths)
        let matchPlan = matchCount > 0 ? BlockPlan(counts: withMatches, distanceLengths: distanceLengths) : literalPlan
        let storedBits = 3 + (8 - (w.pendingBits + 3) % 8) % 8 + 32 + 8 * (end - start)
        if min(matchPlan.bits, literalPlan.bits) >= storedBits {
            w.put(final ? 1 : 0, 3)  // BFINAL, BTYPE 00
            w.alignToByte()
            let n = end - start
            w.put(UInt64(n) | UInt64(~n & 0xFFFF) << 16, 32)
            w.copyBytes(input + start, n)
            return
        }
        let literalsOnlyWin = matchCount == 0 || literalPlan.bits < matchPlan.bits
        let plan = literalsOnlyWin ? literalPlan : matchPlan
        w.put(final ? 0b101 : 0b100, 3)  // BFINAL, BTYPE 10
        plan.header.write(&w)
        for s in 0..<286 { symbolCodes[s] = UInt32(plan.code.codes[s]) | UInt32(plan.code.lengths[s]) << 16 }
        let fourPerFlush = (plan.code.lengths[0..<256].max() ?? 15) <= 14
        if literalsOnlyWin {
            Self.encodeLiterals(input, from: start, to: end, symbolCodes, fourPerFlush: fourPerFlush, &w)
        } else {
            for length in 3...258 {
                let symbol = LengthSymbols.symbol[length]
                let codeBits = Int(plan.code.lengths[symbol])
                let value = UInt64(length - LengthSymbols.base[symbol - 257])
                // Length code, its extra bits, then the distance code's bit (0 = distance 1).
                let bits = codeBits + LengthSymbols.extraBits[symbol - 257] + 1
                matchCodes[length] = (UInt64(plan.code.codes[symbol]) | value << UInt64(codeBits)) | UInt64(bits) << 32
            }
            var i = start
            for m in 0..<matchCount {
                let (offset, length, far) = Self.unpack(matches[m])
                let at = start &+ offset
                if at > i { Self.encodeLiterals(input, from: i, to: at, symbolCodes, fourPerFlush: fourPerFlush, &w) }
                let e = matchCodes[length]
                let bits = Int(e >> 32)
                let code = (e & 0xFFFF_FFFF) | (far ? UInt64(1) << UInt64(bits &- 1) : 0)
                w.put(code, bits)
                i = at &+ length
            }
            if end > i { Self.encodeLiterals(input, from: i, to: end, symbolCodes, fourPerFlush: fourPerFlush, &w) }
        }
        let eob = symbolCodes[256]
        w.put(UInt64(eob & 0xFFFF), Int(eob >> 16))
    }

    /// Counts the bytes of `input[start..<end]` into `counts[0..<256]`, in four interleaved
    /// tables so that repeated bytes do not wait on each other's increments.
    private static func countBytes(_ input: UnsafePointer<UInt8>, start: Int, end: Int, into counts: UnsafeMutablePointer<UInt32>) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 1024) { tables in
            let h = tables.baseAddress!
            h.initialize(repeating: 0, count: 1024)
            var i = start
            while i &+ 4 <= end {
                h[Int(input[i])] &+= 1
                h[256 &+ Int(input[i &+ 1])] &+= 1
                h[512 &+ Int(input[i &+ 2])] &+= 1
                h[768 &+ Int(input[i &+ 3])] &+= 1
                i &+= 4
            }
            while i < end {
                h[Int(input[i])] &+= 1
                i &+= 1
            }
            for b in 0..<256 { counts[b] = h[b] &+ h[256 &+ b] &+ h[512 &+ b] &+ h[768 &+ b] }
        }
    }

    /// Appends the literal codes of `input[i]`, `input[i + 1]`, ... (`n` ≤ 4 of them) and
    /// flushes. Three codes of at most 15 bits always fit the 64-bit buffer after up to 7
    /// pending bits; four fit when none is longer than 14 bits.
    @inline(__always)
    private static func putLiterals(_ input: UnsafePointer<UInt8>, _ i: Int, _ n: Int, _ codes: UnsafePointer<UInt32>,
                                    _ out: inout UnsafeMutablePointer<UInt8>, _ buffer: inout UInt64, _ filled: inout Int) {
        for k in 0..<n {
            let e = codes[Int(input[i &+ k])]
            buffer |= UInt64(e & 0xFFFF) << UInt64(filled)
            filled &+= Int(e >> 16)
        }
        BitWriter.flushWholeBytes(&out, &buffer, &filled)
    }

    /// Writes `input[from..<to]` as literals: four codes per flush when `fourPerFlush` (no
    /// literal code longer than 14 bits), else three.
    @inline(__always)
    private static func encodeLiterals(_ input: UnsafePointer<UInt8>, from: Int, to end: Int,
                                       _ codes: UnsafePointer<UInt32>, fourPerFlush: Bool, _ w: inout BitWriter) {
        var out = w.position, buffer = w.buffer, filled = w.count
        var i = from
        if fourPerFlush {
            while i &+ 4 <= end {
                putLiterals(input, i, 4, codes, &out, &buffer, &filled)
                i &+= 4
            }
        } else {
            while i &+ 3 <= end {
                putLiterals(input, i, 3, codes, &out, &buffer, &filled)
                i &+= 3
            }
        }
        if i < end { putLiterals(input, i, end &- i, codes, &out, &buffer, &filled) }
        w.position = out
        w.buffer = buffer
        w.count = filled
    }
}

/// The Huffman code, header and exact size of one dynamic block for given symbol counts.
struct BlockPlan {
    let code: HuffmanCode
    let header: DynamicHeader
    /// Block size in bits, from BFINAL to the end-of-block code.
    let bits: Int

    init(counts: [UInt32], distanceLengths: [UInt8]) {
        code = HuffmanCode(counts: counts, maxBits: 15)
        header = DynamicHeader(litlen: code.lengths, distance: distanceLengths)
        var data = 0
        for s in 0..<286 where counts[s] > 0 {
            let extra = s > 256 ? LengthSymbols.extraBits[s - 257] + 1 : 0  // + the distance bit
            data += Int(counts[s]) * (Int(code.lengths[s]) + extra)
        }
        bits = 3 + header.bits + data
    }
}

/// Deflate's length symbols 257–285: the symbol of each match length 3–258, and each
/// symbol's base length and number of extra bits (RFC 1951, 3.2.5).
enum LengthSymbols {
    static let base: [Int] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59,
                              67, 83, 99, 115, 131, 163, 195, 227, 258]
    static let extraBits: [Int] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3,
                                   4, 4, 4, 4, 5, 5, 5, 5, 0]
    /// Indexed by length (0–258); entries below 3 are unused.
    static let symbol: [Int] = {
        var table = [Int](repeating: 0, count: 259)
        for s in 0..<29 {
            let top = s == 28 ? 258 : (s == 27 ? 257 : base[s + 1] - 1)
            for length in base[s]...top { table[length] = 257 + s }
        }
        return table
    }()
}

/// A length-limited canonical Huffman code for symbol counts (RFC 1951, 3.2.2), with its
/// codes bit-reversed for an LSB-first bit writer.
struct HuffmanCode {
    let lengths: [UInt8]
    let codes: [UInt16]

    init(counts: [UInt32], maxBits: Int) {
        lengths = Self.lengths(counts, maxBits: maxBits)
        codes = Self.canonicalCodes(lengths, maxBits: maxBits)
    }

    /// Code lengths of at most `maxBits` bits; symbols with count 0 get none. A lone used
    /// symbol gets one bit, and so does a second (unused) one, so the code is complete.
    static func lengths(_ counts: [UInt32], maxBits: Int) -> [UInt8] {
        var lengths = [UInt8](repeating: 0, count: counts.count)
        var used = counts.indices.filter { counts[$0] > 0 }
        if used.count <= 1 {
            let first = used.first ?? 0
            lengths[first] = 1
            lengths[first == 0 ? 1 : 0] = 1
            return lengths
        }
        // Ascending counts, ties by symbol: one sort of count << 16 | symbol keys.
        var keys = used.map { UInt64(counts[$0]) << 16 | UInt64($0) }
        keys.sort()
        used = keys.map { Int($0 & 0xFFFF) }
        // Minimum-redundancy lengths (Moffat and Katajainen's in-place method): `a` holds
        // the ascending counts, then parent links, then depths.
        var a = used.map { Int(counts[$0]) }
        let n = a.count
        a[0] += a[1]
        var root = 0, leaf = 2
        for next in 1..<(n - 1) {
            if leaf >= n || a[root] < a[leaf] {
                a[next] = a[root]; a[root] = next; root += 1
            } else {
                a[next] = a[leaf]; leaf += 1
            }
            if leaf >= n || (root < next && a[root] < a[leaf]) {
                a[next] += a[root]; a[root] = next; root += 1
            } else {
                a[next] += a[leaf]; leaf += 1
            }
        }
        a[n - 2] = 0
        if n >= 3 { for next in stride(from: n - 3, through: 0, by: -1) { a[next] = a[a[next]] + 1 } }
        var available = 1, usedNodes = 0, depth = 0, r = n - 2, next = n - 1
        while available > 0 {
            while r >= 0 && a[r] == depth { usedNodes += 1; r -= 1 }
            while available > usedNodes { a[next] = depth; next -= 1; available -= 1 }
            available = 2 * usedNodes
            depth += 1
            usedNodes = 0
        }
        // Limit the lengths: move the leaves deeper than maxBits up, then lengthen the
        // shallowest codes that keep the Kraft sum exactly 1.
        var perLength = [Int](repeating: 0, count: max(depth, maxBits) + 2)
        for d in a { perLength[d] += 1 }
        if perLength.count > maxBits + 1 {
            for d in (maxBits + 1)..<perLength.count { perLength[maxBits] += perLength[d]; perLength[d] = 0 }
        }
        var kraft = 0
        for d in 1...maxBits { kraft += perLength[d] << (maxBits - d) }
        while kraft > 1 << maxBits {
            perLength[maxBits] -= 1
            for d in stride(from: maxBits - 1, through: 1, by: -1) where perLength[d] > 0 {
                perLength[d] -= 1
                perLength[d + 1] += 2
                break
            }
            kraft -= 1
        }
        // The least frequent symbols (first in `used`) get the longest codes.
        var k = 0
        for d in stride(from: maxBits, through: 1, by: -1) {
            for _ in 0..<perLength[d] {
                lengths[used[k]] = UInt8(d)
                k += 1
            }
        }
        return lengths
    }

    /// The low 16 bits of `x` in reverse order.
    static func reversed16(_ x: Int) -> Int {
        var v = UInt16(truncatingIfNeeded: x)
        v = (v & 0x5555) << 1 | (v >> 1) & 0x5555
        v = (v & 0x3333) << 2 | (v >> 2) & 0x3333
        v = (v & 0x0F0F) << 4 | (v >> 4) & 0x0F0F
        return Int(v.byteSwapped)
    }

    /// Canonical codes for `lengths`, bit-reversed.
    static func canonicalCodes(_ lengths: [UInt8], maxBits: Int) -> [UInt16] {
        var perLength = [Int](repeating: 0, count: maxBits + 1)
        for l in lengths where l > 0 { perLength[Int(l)] += 1 }
        var next = [Int](repeating: 0, count: maxBits + 2)
        var code = 0
        for bits in 1...maxBits {
            code = (code + perLength[bits - 1]) << 1
            next[bits] = code
        }
        var codes = [UInt16](repeating: 0, count: lengths.count)
        for (s, l) in lengths.enumerated() where l > 0 {
            let c = next[Int(l)]
            next[Int(l)] += 1
            codes[s] = UInt16(truncatingIfNeeded: Self.reversed16(c) >> (16 - Int(l)))
        }
        return codes
    }
}

/// The header of a dynamic Huffman block: HLIT, HDIST, HCLEN and the run-length coded
/// code lengths (RFC 1951, 3.2.7).
struct DynamicHeader {
    static let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
    let hlit: Int
    let hdist: Int
    let hclen: Int
    /// Code-length symbols 0–18 with their extra-bit values.
    let items: [(symbol: Int, extra: Int)]
    let lengthCode: HuffmanCode
    /// Size of the header in bits.
    let bits: Int

    init(litlen: [UInt8], distance: [UInt8]) {
        var hlit = 286
        while hlit > 257 && litlen[hlit - 1] == 0 { hlit -= 1 }
        var hdist = distance.count
        while hdist > 1 && distance[hdist - 1] == 0 { hdist -= 1 }
        let all = Array(litlen[0..<hlit]) + Array(distance[0..<hdist])
        var items: [(symbol: Int, extra: Int)] = []
        var i = 0
        while i < all.count {
            let l = all[i]
            var run = 1
            while i + run < all.count && all[i + run] == l { run += 1 }
            if l == 0 && run >= 3 {
                let take = min(run, 138)
                items.append(take >= 11 ? (18, take - 11) : (17, take - 3))
                i += take
            } else if l != 0 && run >= 4 {
                items.append((Int(l), 0))
                let take = min(run - 1, 6)
                items.append((16, take - 3))
                i += 1 + take
            } else {
                items.append((Int(l), 0))
                i += 1
            }
        }
        var counts = [UInt32](repeating: 0, count: 19)
        for item in items { counts[item.symbol] += 1 }
        let code = HuffmanCode(counts: counts, maxBits: 7)
        var hclen = 19
        while hclen > 4 && code.lengths[Self.order[hclen - 1]] == 0 { hclen -= 1 }
        var bits = 5 + 5 + 4 + 3 * hclen
        for item in items {
            bits += Int(code.lengths[item.symbol]) + (item.symbol == 16 ? 2 : item.symbol == 17 ? 3 : item.symbol == 18 ? 7 : 0)
        }
        self.hlit = hlit
        self.hdist = hdist
        self.hclen = hclen
        self.items = items
        self.lengthCode = code
        self.bits = bits
    }

    func write(_ w: inout BitWriter) {
        w.put(UInt64(hlit - 257), 5)
        w.put(UInt64(hdist - 1), 5)
        w.put(UInt64(hclen - 4), 4)
        for k in 0..<hclen { w.put(UInt64(lengthCode.lengths[Self.order[k]]), 3) }
        for item in items {
            w.put(UInt64(lengthCode.codes[item.symbol]), Int(lengthCode.lengths[item.symbol]))
            switch item.symbol {
            case 16: w.put(UInt64(item.extra), 2)
            case 17: w.put(UInt64(item.extra), 3)
            case 18: w.put(UInt64(item.extra), 7)
            default: break
            }
        }
    }
}

/// LSB-first bit output into a buffer the caller sized (`RunLengthDeflater.zlibBound`, which
/// leaves the 8 bytes of slack the whole-word stores need).
struct BitWriter {
    let start: UnsafeMutablePointer<UInt8>
    var position: UnsafeMutablePointer<UInt8>
    /// Bits not yet written out (fewer than 8 between calls), low bits first.
    var buffer: UInt64 = 0
    var count = 0

    init(_ output: UnsafeMutablePointer<UInt8>) {
        start = output
        position = output
    }

    /// Bits written since the last whole byte.
    var pendingBits: Int { count }

    /// Stores the buffer's 8 bytes and moves on by its whole bytes (at most 7 bits stay).
    @inline(__always)
    static func flushWholeBytes(_ position: inout UnsafeMutablePointer<UInt8>, _ buffer: inout UInt64, _ count: inout Int) {
        UnsafeMutableRawPointer(position).storeBytes(of: buffer.littleEndian, as: UInt64.self)
        let bytes = count &>> 3
        position += bytes
        buffer = bytes == 8 ? 0 : buffer &>> UInt64(bytes &<< 3)
        count &= 7
    }

    /// Appends the low `n` bits of `bits` (n ≤ 56; the bits above `n` must be zero).
    @inline(__always)
    mutating func put(_ bits: UInt64, _ n: Int) {
        buffer |= bits << UInt64(count)
        count += n
        Self.flushWholeBytes(&position, &buffer, &count)
    }

    /// Pads with zero bits to a byte boundary.
    mutating func alignToByte() {
        if count > 0 {
            count = 8
            Self.flushWholeBytes(&position, &buffer, &count)
        }
    }

    /// Copies bytes after `alignToByte`.
    mutating func copyBytes(_ source: UnsafePointer<UInt8>, _ n: Int) {
        position.update(from: source, count: n)
        position += n
    }

    /// Flushes the last partial byte; returns the bytes written.
    mutating func finish() -> Int {
        alignToByte()
        return position - start
    }
}
