/// Encoder for ITU T.81 lossless JPEG streams (process 14, SOF3, Huffman coding).
///
/// Writes SOI, SOF3, one DHT segment per component's table, DRI (when restarting),
/// SOS (Ss = predictor, Se = 0, Ah = 0, Al = 0), the entropy-coded data with byte stuffing
/// and RSTn markers, and EOI. Component identifiers are 0...components-1. The Huffman tables
/// are optimal for the samples being encoded (two passes over the data).
public enum LJ92Encoder {
    /// Encodes samples (row-major, components interleaved) as a lossless JPEG stream
    /// with Huffman tables optimised for these samples (length-limited to 16 bits), one table per component.
    ///
    /// Requirements, checked with `precondition` (violations are programming errors):
    /// `width` and `height` in 1...65535, `components` in 1...4, `precision` in 2...16,
    /// `predictor` in 1...7, `samples.count == width * height * components`, and
    /// `restartInterval` (in MCUs, i.e. pixels; 0 = no restart markers) in 0...65535 and a
    /// multiple of `width`: T.81 H.1.1 requires whole lines per restart interval in the
    /// lossless process, and conforming decoders reject anything else.
    /// - Throws: `LJ92Error.sampleExceedsPrecision` for the first sample that does not fit
    ///   in `precision` bits; nothing else.
    public static func encode(_ samples: UnsafeBufferPointer<UInt16>, width: Int, height: Int, components: Int,
                              precision: Int, predictor: Int = 1, restartInterval: Int = 0) throws(LJ92Error) -> [UInt8] {
        precondition((1...65535).contains(width) && (1...65535).contains(height), "frame size out of range")
        precondition((1...4).contains(components), "components must be 1...4")
        precondition((2...16).contains(precision), "precision must be 2...16")
        precondition((1...7).contains(predictor), "predictor must be 1...7")
        precondition((0...65535).contains(restartInterval) && restartInterval % width == 0,
                     "restart interval must be 0...65535 and a whole number of lines")
        let sampleCount = width * height * components
        precondition(samples.count == sampleCount, "sample count does not match the frame")
        guard let source = samples.baseAddress else { preconditionFailure("no samples") }

        if precision < 16 {
            let limit = UInt16((1 << precision) - 1)
            var largest: UInt16 = 0
            for i in 0..<sampleCount { largest = max(largest, source[i]) }
            if largest > limit, let index = (0..<sampleCount).first(where: { source[$0] > limit }) {
                throw .sampleExceedsPrecision(index: index, value: Int(source[index]), precision: precision)
            }
        }

        // Pass 1: differences and the category histogram of each component.
        let differences = UnsafeMutablePointer<UInt16>.allocate(capacity: sampleCount)
        defer { differences.deallocate() }
        let histogram = UnsafeMutablePointer<Int>.allocate(capacity: 4 * 17)
        defer { histogram.deallocate() }
        histogram.initialize(repeating: 0, count: 4 * 17)
        let stride = width * components
        let linesPerInterval = restartInterval == 0 ? height : restartInterval / width
        let initial = UInt16(1 << (precision - 1))
        var line = 0
        while line < height {
            let lines = min(linesPerInterval, height - line)
            computeDifferencesDispatch(predictor: predictor, components: components,
                                       samples: source + line * stride, differences: differences + line * stride,
                                       width: width, lines: lines, initial: initial, histogram: histogram)
            line += lines
        }

        // Tables, and the exact number of entropy-coded bits.
        var tables: [HuffmanCoding.Table] = []
        var totalBits = 0
        for c in 0..<components {
            let table = HuffmanCoding.table(frequencies: (0..<17).map { histogram[c * 17 + $0] })
            for category in 0...16 where table.lengths[category] > 0 {
                totalBits += histogram[c * 17 + category] * (table.lengths[category] + (category == 16 ? 0 : category))
            }
            tables.append(table)
        }

        // Headers.
        var header: [UInt8] = [0xFF, 0xD8]
        func append16(_ value: Int) { header.append(UInt8(value >> 8)); header.append(UInt8(value & 0xFF)) }
        header += [0xFF, 0xC3]
        append16(8 + 3 * components)
        header.append(UInt8(precision))
        append16(height)
        append16(width)
        header.append(UInt8(components))
        for c in 0..<components { header += [UInt8(c), 0x11, 0] }
        // One DHT segment per table: T.81 allows several tables in one segment, but some
        // decoders read only the first.
        for (c, table) in tables.enumerated() {
            header += [0xFF, 0xC4]
            append16(2 + 17 + table.symbols.count)
            header.append(UInt8(c))
            header += table.counts.map { UInt8($0) }
            header += table.symbols
        }
        if restartInterval > 0 {
            header += [0xFF, 0xDD]
            append16(4)
            append16(restartInterval)
        }
        header += [0xFF, 0xDA]
        append16(6 + 2 * components)
        header.append(UInt8(components))
        for c in 0..<components { header += [UInt8(c), UInt8(c << 4)] }
        header += [UInt8(predictor), 0, 0]

        // Pass 2: entropy-coded data. Every byte may need stuffing, every interval padding
        // and a marker.
        let intervals = (height + linesPerInterval - 1) / linesPerInterval
        let capacity = header.count + 2 * (totalBits / 8 + intervals) + 2 * intervals + 2 + 16
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        for (i, byte) in header.enumerated() { buffer[i] = byte }

        let codes = UnsafeMutablePointer<CategoryCode>.allocate(capacity: 4 * 17)
        defer { codes.deallocate() }
        for c in 0..<components {
            for category in 0...16 {
                let extra = category == 16 ? 0 : category
                let table = tables[c]
                codes[c * 17 + category] = CategoryCode(
                    prefix: UInt64(table.codes[category]) << UInt64(extra),
                    length: table.lengths[category] + extra,
                    mask: (1 << UInt64(extra)) - 1)
            }
        }

        var writer = BitWriter(output: buffer, position: header.count)
        line = 0
        var restartIndex = 0
        while line < height {
            let lines = min(linesPerInterval, height - line)
            writeDifferences(differences + line * stride, count: lines * stride, components: components,
                             codes: codes, writer: &writer)
            writer.padToByte()
            line += lines
            writer.marker(line < height ? 0xD0 + UInt8(restartIndex & 7) : 0xD9)
            restartIndex += 1
        }
        precondition(writer.position <= capacity)
        return Array(UnsafeBufferPointer(start: buffer, count: writer.position))
    }

    /// Encodes samples held in an array (see the pointer variant for the requirements).
    /// - Throws: `LJ92Error.sampleExceedsPrecision` for the first sample that does not fit
    ///   in `precision` bits; nothing else.
    public static func encode(_ samples: [UInt16], width: Int, height: Int, components: Int,
                              precision: Int, predictor: Int = 1, restartInterval: Int = 0) throws(LJ92Error) -> [UInt8] {
        // `withUnsafeBufferPointer` rethrows untyped errors; the typed error goes out as a `Result`.
        let result = samples.withUnsafeBufferPointer { buffer -> Result<[UInt8], LJ92Error> in
            do throws(LJ92Error) {
                return .success(try encode(buffer, width: width, height: height, components: components,
                                           precision: precision, predictor: predictor,
                                           restartInterval: restartInterval))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// The bits written for one difference category of one component: the Huffman code shifted
/// left over the category's extra bits, the total length, and the mask for the extra bits.
struct CategoryCode {
    var prefix: UInt64
    var length: Int
    var mask: UInt64
}

/// Writes bits most significant first, stuffing a zero byte after every 0xFF.
struct BitWriter {
    /// The pending bits are the low `count` bits.
    var bits: UInt64 = 0
    var count: Int = 0
    let output: UnsafeMutablePointer<UInt8>
    var position: Int

    init(output: UnsafeMutablePointer<UInt8>, position: Int) {
        self.output = output
        self.position = position
    }

    /// Appends the low `length` (≤ 32) bits of `value` (no bits above them may be set).
    @inline(__always)
    mutating func write(_ value: UInt64, length: Int) {
        bits = bits &<< UInt64(truncatingIfNeeded: length) | value
        count &+= length
        if count >= 32 {
            count &-= 32
            emit(UInt32(truncatingIfNeeded: bits &>> UInt64(truncatingIfNeeded: count)))
        }
    }

    /// Writes four bytes, most significant first.
    @inline(__always)
    mutating func emit(_ word: UInt32) {
        let inverted = ~word
        if (inverted &- 0x0101_0101) & ~inverted & 0x8080_8080 == 0 {
            UnsafeMutableRawPointer(output + position).storeBytes(of: word.bigEndian, as: UInt32.self)
            position &+= 4
        } else {
            emitByte(UInt8(truncatingIfNeeded: word >> 24))
            emitByte(UInt8(truncatingIfNeeded: word >> 16))
            emitByte(UInt8(truncatingIfNeeded: word >> 8))
            emitByte(UInt8(truncatingIfNeeded: word))
        }
    }

    /// Writes one byte, stuffing 0x00 after 0xFF.
    @inline(__always)
    mutating func emitByte(_ byte: UInt8) {
        output[position] = byte
        position &+= 1
        if byte == 0xFF {
            output[position] = 0
            position &+= 1
        }
    }

    /// Completes the last byte with 1-bits (T.81 F.1.2.3) and writes the pending bytes.
    mutating func padToByte() {
        let pad = (8 - count % 8) % 8
        bits = bits << UInt64(pad) | ((1 << UInt64(pad)) - 1)
        count += pad
        while count >= 8 {
            count -= 8
            emitByte(UInt8(truncatingIfNeeded: bits >> UInt64(count)))
        }
        bits = 0
    }

    /// Writes a marker (0xFF, `code`); the writer must be at a byte boundary.
    mutating func marker(_ code: UInt8) {
        output[position] = 0xFF
        output[position + 1] = code
        position += 2
    }
}

/// The difference category SSSS of a difference modulo 2^16 (T.81 Table H.2): the bit length
/// of its magnitude; 32768 has category 16.
@inline(__always)
func differenceCategory(_ difference: UInt16) -> Int {
    let magnitude = difference < 0x8000 ? difference : 0 &- difference
    return 16 - magnitude.leadingZeroBitCount
}

/// Writes the codes of `count` differences of interleaved components.
func writeDifferences(_ differences: UnsafePointer<UInt16>, count: Int, components: Int,
                      codes: UnsafePointer<CategoryCode>, writer: inout BitWriter) {
    var i = 0
    while i < count {
        for k in 0..<components {
            let difference = differences[i + k]
            let code = codes[k * 17 + differenceCategory(difference)]
            // Extra bits: the difference if positive, else difference - 1, low SSSS bits.
            let extra = UInt64(difference < 0x8000 ? difference : difference &- 1) & code.mask
            writer.write(code.prefix | extra, length: code.length)
        }
        i += components
    }
}

/// Computes the differences of `lines` lines of one restart interval and adds their
/// categories to `histogram` (17 counters per component), with the same prediction rules as
/// the decoder: the first line from the left (its first pixel from `initial`), the first
/// pixel of later lines from above, all others with `P`.
@inline(__always)
func computeDifferences<P: Predictor, C: ComponentCount>(
    _: P.Type, _: C.Type, samples: UnsafePointer<UInt16>, differences: UnsafeMutablePointer<UInt16>,
    width: Int, lines: Int, initial: UInt16, histogram: UnsafeMutablePointer<Int>
) {
    let n = C.value
    let stride = width * n
    var line = samples
    var out = differences
    for k in 0..<n {
        let d = line[k] &- initial
        out[k] = d
        histogram[k * 17 + differenceCategory(d)] += 1
    }
    var i = n
    while i < stride {
        for k in 0..<n {
            let d = line[i + k] &- line[i + k - n]
            out[i + k] = d
            histogram[k * 17 + differenceCategory(d)] += 1
        }
        i += n
    }
    for _ in 1..<max(lines, 1) {
        let above = line
        line += stride
        out += stride
        for k in 0..<n {
            let d = line[k] &- above[k]
            out[k] = d
            histogram[k * 17 + differenceCategory(d)] += 1
        }
        i = n
        while i < stride {
            for k in 0..<n {
                let a = Int32(line[i + k - n]), b = Int32(above[i + k]), c = Int32(above[i + k - n])
                let d = line[i + k] &- UInt16(truncatingIfNeeded: P.predict(a, b, c))
                out[i + k] = d
                histogram[k * 17 + differenceCategory(d)] += 1
            }
            i += n
        }
    }
}

/// `computeDifferences` specialised for one predictor and component count.
func computeDifferencesDispatch(
    predictor: Int, components: Int, samples: UnsafePointer<UInt16>, differences: UnsafeMutablePointer<UInt16>,
    width: Int, lines: Int, initial: UInt16, histogram: UnsafeMutablePointer<Int>
) {
    func run<P: Predictor>(_ p: P.Type) {
        switch components {
        case 1: computeDifferences(p, OneComponent.self, samples: samples, differences: differences, width: width,
                                   lines: lines, initial: initial, histogram: histogram)
        case 2: computeDifferences(p, TwoComponents.self, samples: samples, differences: differences, width: width,
                                   lines: lines, initial: initial, histogram: histogram)
        case 3: computeDifferences(p, ThreeComponents.self, samples: samples, differences: differences, width: width,
                                   lines: lines, initial: initial, histogram: histogram)
        default: computeDifferences(p, FourComponents.self, samples: samples, differences: differences, width: width,
                                    lines: lines, initial: initial, histogram: histogram)
        }
    }
    switch predictor {
    case 1: run(PredictorA.self)
    case 2: run(PredictorB.self)
    case 3: run(PredictorC.self)
    case 4: run(PredictorABC.self)
    case 5: run(PredictorAHalfBC.self)
    case 6: run(PredictorBHalfAC.self)
    default: run(PredictorMeanAB.self)
    }
}
