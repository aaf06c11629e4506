/// Bit reader over one entropy-coded segment with the byte stuffing already removed.
///
/// `buffer` holds the 64 next bits, most significant first; its top `count` bits are valid
/// (the bits below them are either zero or the same stream bits a later refill brings in).
/// Reads past `limit` return zero bits: the segment buffer is followed by 8 zero bytes and
/// loads are clamped to `limit`, so no read goes outside the buffer however far the position
/// runs; `consumedBits` tells whether the zeros were used.
struct BitReader {
    var buffer: UInt64 = 0
    var count: Int = 0
    /// Index of the next byte to load.
    var position: Int = 0
    /// The unstuffed bytes, followed by at least 8 zero bytes.
    let bytes: UnsafePointer<UInt8>
    /// Number of real bytes in `bytes`.
    let limit: Int
    /// Bit position of the first invalid Huffman code found, or -1.
    var invalidCodeAt: Int = -1

    init(bytes: UnsafePointer<UInt8>, limit: Int) {
        self.bytes = bytes
        self.limit = limit
    }

    /// Number of bits taken from the segment so far (may exceed `limit * 8` by the zero fill).
    var consumedBits: Int { position * 8 - count }

    /// Fills `buffer` to at least 56 valid bits with one unaligned 64-bit load.
    @inline(__always)
    mutating func refill() {
        let at = min(position, limit)
        let word = UInt64(bigEndian: UnsafeRawPointer(bytes + at).loadUnaligned(as: UInt64.self))
        buffer |= word &>> UInt64(truncatingIfNeeded: count)
        position &+= (63 &- count) &>> 3
        count |= 56
    }

    /// Drops `n` (< 64) bits.
    @inline(__always)
    mutating func consume(_ n: Int) {
        buffer &<<= UInt64(truncatingIfNeeded: n)
        count &-= n
    }

    /// The next `lookupBits` bits: the index into a lookup table.
    @inline(__always)
    var lookupIndex: Int { Int(truncatingIfNeeded: buffer &>> UInt64(64 - lookupBits)) }

    /// Decodes one difference; `count` must be at least 32 (one code and its extra bits).
    @inline(__always)
    mutating func decodeDifference(_ table: HuffmanLookup) -> UInt16 {
        decodeDifference(entry: table.fast[lookupIndex], table)
    }

    /// Decodes one difference whose lookup entry (low half) is `entry`; `count` must be at
    /// least 32.
    @inline(__always)
    mutating func decodeDifference(entry: UInt32, _ table: HuffmanLookup) -> UInt16 {
        if entry & fullEntryFlag != 0 {
            // The masking shift uses the low 6 bits of the entry, which are the length
            // (bit 5 is always clear), saving the mask on the dependency chain.
            buffer &<<= UInt64(truncatingIfNeeded: entry)
            count &-= Int(entry & 0x1F)
            return UInt16(truncatingIfNeeded: entry &>> 16)
        }
        if entry != 0 {
            // A code within the lookup whose extra bits (SSSS in 1...15) reach beyond it.
            consume(Int(entry & 0x1F))
            let category = (entry &>> 8) & 0x1F
            let bits = UInt32(truncatingIfNeeded: buffer &>> UInt64(64 &- category))
            consume(Int(category))
            let negative = bits &>> (category &- 1) == 0
            return UInt16(truncatingIfNeeded: negative ? bits &+ 1 &- (1 &<< category) : bits)
        }
        // A code longer than the lookup (or an invalid one): resolved out of line, from a
        // copy of the buffer, so that the reader itself never leaves registers.
        let (difference, bits) = Self.longCode(buffer, table)
        if bits == 0 {
            if invalidCodeAt < 0 { invalidCodeAt = consumedBits }
            return 0
        }
        consume(bits)
        return difference
    }

    /// Codes longer than `lookupBits` (T.81 F.2.2.3) at the top of `buffer`: the difference
    /// and the bits it takes (code and extra bits), or 0 bits for an invalid code (the
    /// difference is then 0 and nothing is consumed). Needs at least 32 valid bits.
    @inline(never)
    static func longCode(_ buffer: UInt64, _ table: HuffmanLookup) -> (difference: UInt16, bits: Int) {
        let peek = Int32(truncatingIfNeeded: buffer &>> 48)
        var length = lookupBits + 1
        var category: UInt32
        while true {
            if length > 16 { return (0, 0) }
            let code = peek &>> Int32(16 - length)
            if code <= table.maxCode[length] {
                category = UInt32(table.symbols[Int(table.valueOffset[length] &+ code)])
                break
            }
            length += 1
        }
        guard category != 0 && category != 16 else { return (category == 0 ? 0 : 0x8000, length) }
        let bits = UInt32(truncatingIfNeeded: (buffer &<< UInt64(length)) &>> UInt64(64 - category))
        return (extendDifference(bits, category: category), length + Int(category))
    }
}

// MARK: - Predictors (T.81 Table H.1)

/// A predictor selection value: the prediction from the reconstructed neighbours Ra (left),
/// Rb (above) and Rc (above left). Arithmetic is in Int32; the decoder adds the difference
/// and keeps the result modulo 2^16. Right shifts are arithmetic (T.81 H.1.2.1).
protocol Predictor {
    static func predict(_ a: Int32, _ b: Int32, _ c: Int32) -> Int32
}

enum PredictorA: Predictor {
    @inline(__always) static func predict(_ a: Int32, _ b: Int32, _ c: Int32) -> Int32 { a }
}
enum PredictorB: Predictor {
    @inline(__always) static func predict(_ a: Int32, _ b: Int32, _ c: Int32) -> Int32 { b }
}
enum PredictorC: Predictor {
    @inline(__always) static func predict(_ a: Int32, _ b: Int32, _ c: Int32) -> Int32 { c }
}
enum PredictorABC: Predictor {
    @inline(__always) static func predict(_ a: Int32, _ b: Int32, _ c: Int32) -> Int32 { a &+ b &- c }
}
enum PredictorAHalfBC: Predictor {
    @inline(__always) static func predict(_ a: Int32, _ b: Int32, _ c: Int32) -> Int32 { a &+ ((b &- c) &>> 1) }
}
enum PredictorBHalfAC: Predictor {
    @inline(__always) static func predict(_ a: Int32, _ b: Int32, _ c: Int32) -> Int32 { b &+ ((a &- c) &>> 1) }
}
enum PredictorMeanAB: Predictor {
    @inline(__always) static func predict(_ a: Int32, _ b: Int32, _ c: Int32) -> Int32 { (a &+ b) &>> 1 }
}

/// Codes per lookup, as a type so that each way has its own loop (sharing one, the paired
/// way's registers slowed the single way by 8 %).
protocol LookupWidth {
    static var paired: Bool { get }
}
enum OneCodePerLookup: LookupWidth { @inline(__always) static var paired: Bool { false } }
enum TwoCodesPerLookup: LookupWidth { @inline(__always) static var paired: Bool { true } }

/// The number of interleaved components, as a type so that the per-pixel loop is unrolled.
protocol ComponentCount {
    static var value: Int { get }
}
enum OneComponent: ComponentCount { @inline(__always) static var value: Int { 1 } }
enum TwoComponents: ComponentCount { @inline(__always) static var value: Int { 2 } }
enum ThreeComponents: ComponentCount { @inline(__always) static var value: Int { 3 } }
enum FourComponents: ComponentCount { @inline(__always) static var value: Int { 4 } }

// MARK: - The decoding loop

/// Outcome of decoding the lines of one restart interval.
enum IntervalResult {
    case ok
    /// An invalid Huffman code at this bit position of the segment.
    case invalidCode(bitPosition: Int)
    /// The segment ran out of data (more zero fill than allowed).
    case exhausted
}

/// Decodes `lines` lines of one restart interval (or the whole scan) into `output`, which
/// points at the first sample of the interval's first line: two codes per lookup when
/// `pairs` (`PairedLookups.entries`) is given, else one.
///
/// The first line predicts from the left neighbour (its first pixel from `initial`), every
/// later line starts from the sample above (T.81 H.1.2.1), and all other samples use `P`.
/// Stops early, with the reason, when a line hits an invalid code or runs out of data.
@inline(__always)
func decodeInterval<P: Predictor, C: ComponentCount, L: LookupWidth>(
    _: P.Type, _: C.Type, _: L.Type, reader caller: inout BitReader, tables: UnsafePointer<HuffmanLookup>,
    pairs: UnsafePointer<UInt64>?, output: UnsafeMutablePointer<UInt16>, width: Int, lines: Int, initial: UInt16
) -> IntervalResult {
    let n = C.value
    let stride = width * n
    let slack = LJ92Decoder.maximumZeroFillBits
    // A local copy, written back on return: nothing takes its address, so its fields stay
    // in registers through the loop.
    var reader = caller
    defer { caller = reader }

    // First line: the first pixel from the default prediction, the rest from the left.
    var line = output
    for k in 0..<n {
        if reader.count < 32 { reader.refill() }
        line[k] = initial &+ reader.decodeDifference(tables[k])
    }
    decodeLine(PredictorA.self, C.self, L.self, reader: &reader, tables: tables, pairs: pairs, line: line, above: line, end: stride)
    if reader.invalidCodeAt >= 0 { return .invalidCode(bitPosition: reader.invalidCodeAt) }
    if reader.consumedBits > reader.limit * 8 + slack { return .exhausted }

    var remaining = lines - 1
    while remaining > 0 {
        let above = UnsafePointer(line)
        line += stride
        for k in 0..<n {
            if reader.count < 32 { reader.refill() }
            line[k] = above[k] &+ reader.decodeDifference(tables[k])
        }
        decodeLine(P.self, C.self, L.self, reader: &reader, tables: tables, pairs: pairs, line: line, above: above, end: stride)
        if reader.invalidCodeAt >= 0 { return .invalidCode(bitPosition: reader.invalidCodeAt) }
        if reader.consumedBits > reader.limit * 8 + slack { return .exhausted }
        remaining -= 1
    }
    return .ok
}

/// Samples `C.value..<end` of one line, predicted by `P` from the line itself (left) and
/// `above` (the first line passes `PredictorA` and itself, so only the left sample is read):
/// two codes per lookup with `pairs`, else one.
@inline(__always)
func decodeLine<P: Predictor, C: ComponentCount, L: LookupWidth>(
    _ p: P.Type, _ c: C.Type, _: L.Type, reader: inout BitReader, tables: UnsafePointer<HuffmanLookup>,
    pairs: UnsafePointer<UInt64>?, line: UnsafeMutablePointer<UInt16>, above: UnsafePointer<UInt16>, end: Int
) {
    if L.paired, let pairs {
        decodeLinePaired(p, c, reader: &reader, tables: tables, pairs: pairs, line: line, above: above, end: end)
        return
    }
    // One code per lookup, component after component.
    let n = C.value
    var i = n
    while i < end {
        for k in 0..<n {
            if reader.count < 32 { reader.refill() }
            let a = Int32(line[i &+ k &- n]), b = Int32(above[i &+ k]), c = Int32(above[i &+ k &- n])
            line[i &+ k] = UInt16(truncatingIfNeeded: P.predict(a, b, c)) &+ reader.decodeDifference(tables[k])
        }
        i &+= n
    }
}

/// Samples `C.value..<end` of one line, two per lookup wherever the `pairs` entry holds two
/// complete codes. Each lookup's table then depends on the one before (the component after
/// a pair is not the one after a single code), which costs more than pairs save when they
/// are rare (`pairedLookupMaximumBits`).
@inline(__always)
func decodeLinePaired<P: Predictor, C: ComponentCount>(
    _: P.Type, _: C.Type, reader: inout BitReader, tables: UnsafePointer<HuffmanLookup>,
    pairs: UnsafePointer<UInt64>, line: UnsafeMutablePointer<UInt16>, above: UnsafePointer<UInt16>, end: Int
) {
    let n = C.value
    @inline(__always) func predicted(_ i: Int) -> UInt16 {
        UInt16(truncatingIfNeeded: P.predict(Int32(line[i &- n]), Int32(above[i]), Int32(above[i &- n])))
    }
    var i = n
    var table = 0  // the index in `pairs` of the table of sample i's component
    let last = end &- 1
    while i < last {
        if reader.count < 32 { reader.refill() }
        let entry = pairs[table &+ reader.lookupIndex]
        if UInt32(truncatingIfNeeded: entry) & fullEntryFlag != 0 {
            // Without a branch on whether a second code follows: both samples are stored,
            // and when there is none the next step overwrites the second (i + 1 < end).
            // As in `decodeDifference`, the masking shift uses the low 6 bits, the length.
            reader.buffer &<<= entry
            reader.count &-= Int(truncatingIfNeeded: entry & 0x1F)
            line[i] = predicted(i) &+ UInt16(truncatingIfNeeded: entry &>> 16)
            line[i &+ 1] = predicted(i &+ 1) &+ UInt16(truncatingIfNeeded: entry &>> 32)
            i &+= 1 &+ Int(truncatingIfNeeded: entry &>> 6 & 1)
        } else {
            let k = table &>> lookupBits
            line[i] = predicted(i) &+ reader.decodeDifference(entry: UInt32(truncatingIfNeeded: entry), tables[k])
            i &+= 1
        }
        table = Int(truncatingIfNeeded: entry &>> 48)
    }
    if i < end {
        if reader.count < 32 { reader.refill() }
        line[i] = predicted(i) &+ reader.decodeDifference(tables[table &>> lookupBits])
    }
}

/// `decodeInterval` specialised for one predictor, component count and lookup width (opens
/// the existential types so that the generic loop is specialised).
func decodeIntervalDispatch(
    predictor: Int, components: Int, reader: inout BitReader, tables: UnsafePointer<HuffmanLookup>,
    pairs: UnsafePointer<UInt64>?, output: UnsafeMutablePointer<UInt16>, width: Int, lines: Int, initial: UInt16
) -> IntervalResult {
    func run<P: Predictor, C: ComponentCount>(_ p: P.Type, _ c: C.Type) -> IntervalResult {
        if pairs == nil {
            return decodeInterval(p, c, OneCodePerLookup.self, reader: &reader, tables: tables, pairs: nil, output: output,
                                  width: width, lines: lines, initial: initial)
        }
        return decodeInterval(p, c, TwoCodesPerLookup.self, reader: &reader, tables: tables, pairs: pairs, output: output,
                              width: width, lines: lines, initial: initial)
    }
    switch (predictor, components) {
    case (1, 1): return run(PredictorA.self, OneComponent.self)
    case (1, 2): return run(PredictorA.self, TwoComponents.self)
    case (1, 3): return run(PredictorA.self, ThreeComponents.self)
    case (1, _): return run(PredictorA.self, FourComponents.self)
    case (2, 1): return run(PredictorB.self, OneComponent.self)
    case (2, 2): return run(PredictorB.self, TwoComponents.self)
    case (2, 3): return run(PredictorB.self, ThreeComponents.self)
    case (2, _): return run(PredictorB.self, FourComponents.self)
    case (3, 1): return run(PredictorC.self, OneComponent.self)
    case (3, 2): return run(PredictorC.self, TwoComponents.self)
    case (3, 3): return run(PredictorC.self, ThreeComponents.self)
    case (3, _): return run(PredictorC.self, FourComponents.self)
    case (4, 1): return run(PredictorABC.self, OneComponent.self)
    case (4, 2): return run(PredictorABC.self, TwoComponents.self)
    case (4, 3): return run(PredictorABC.self, ThreeComponents.self)
    case (4, _): return run(PredictorABC.self, FourComponents.self)
    case (5, 1): return run(PredictorAHalfBC.self, OneComponent.self)
    case (5, 2): return run(PredictorAHalfBC.self, TwoComponents.self)
    case (5, 3): return run(PredictorAHalfBC.self, ThreeComponents.self)
    case (5, _): return run(PredictorAHalfBC.self, FourComponents.self)
    case (6, 1): return run(PredictorBHalfAC.self, OneComponent.self)
    case (6, 2): return run(PredictorBHalfAC.self, TwoComponents.self)
    case (6, 3): return run(PredictorBHalfAC.self, ThreeComponents.self)
    case (6, _): return run(PredictorBHalfAC.self, FourComponents.self)
    case (_, 1): return run(PredictorMeanAB.self, OneComponent.self)
    case (_, 2): return run(PredictorMeanAB.self, TwoComponents.self)
    case (_, 3): return run(PredictorMeanAB.self, ThreeComponents.self)
    default: return run(PredictorMeanAB.self, FourComponents.self)
    }
}
