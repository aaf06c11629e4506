/// A Huffman table specification as sent in a DHT segment (T.81 B.2.4.2).
struct HuffmanSpec: Sendable {
    /// Number of codes of each length 1...16 (BITS, `counts[0]` is length 1).
    var counts: [Int]
    /// The symbols (difference categories 0...16) in order of increasing code length (HUFFVAL).
    var symbols: [UInt8]
}

/// Everything the entropy decoder needs from the marker segments before the first scan.
struct LJ92Header: Sendable {
    /// The validated frame parameters.
    var frame: LJ92Frame
    /// The Huffman table of each component, in frame (= scan) order.
    var tables: [HuffmanSpec]
    /// For each component, the table destination (0...3) it uses; equal values share a table.
    var tableIDs: [Int]
    /// Offset of the first byte of entropy-coded data (just after the SOS segment).
    var scanStart: Int
}

/// The minimum number of entropy-coded bits an image needs: every sample takes a Huffman
/// code of at least one bit, less the zero bits a decoder may supply at the end of each
/// entropy-coded segment (see `LJ92Decoder.maximumZeroFillBits`).
func plausibleSampleLimit(entropyBytes: Int, intervals: Int) -> Int {
    entropyBytes * 8 + intervals * LJ92Decoder.maximumZeroFillBits
}

/// One marker segment before the first scan: its marker, the offset of its 0xFF, its length
/// field and the range of its body.
struct MarkerSegment {
    let marker: UInt8
    let offset: Int
    let length: Int
    /// The first byte after the length field, and the first byte after the segment.
    let body: Int, end: Int

    /// The error for a length this segment cannot have.
    var badLength: LJ92Error { .invalidSegmentLength(marker: marker, offset: offset, length: length) }
}

/// The fields of the SOF3 frame header.
struct FrameFields {
    let precision: Int, height: Int, width: Int
    /// The component identifiers, in frame order.
    let ids: [Int]
}

extension LJ92Decoder {
    /// Reads the marker segments from SOI up to and including the first SOS.
    ///
    /// Validates every field the decoder relies on and checks that the frame is not larger
    /// than the remaining data could possibly encode.
    /// - Throws: `LJ92Error` naming the first problem found.
    static func parseHeader(_ data: UnsafeRawBufferPointer) throws(LJ92Error) -> LJ92Header {
        guard data.count >= 2, data[0] == 0xFF, data[1] == 0xD8 else { throw .missingSOI }
        var pos = 2
        var frame: FrameFields?
        var specs = [HuffmanSpec?](repeating: nil, count: 4)
        var restartInterval = 0
        while true {
            let segment = try nextSegment(data, at: pos)
            switch segment.marker {
            case 0xC3:  // SOF3
                guard frame == nil else { throw .duplicateFrameHeader(offset: segment.offset) }
                frame = try parseFrame(data, segment)
            case 0xC4:  // DHT: one or more tables
                try parseHuffmanTables(data, segment, into: &specs)
            case 0xDD:  // DRI
                guard segment.length == 4 else { throw segment.badLength }
                restartInterval = u16(data, segment.body)
            case 0xDA:  // SOS
                guard let frame else { throw .missingFrameHeader(offset: segment.offset) }
                return try parseScan(data, segment, frame: frame, specs: specs, restartInterval: restartInterval)
            default:
                // APPn, COM, DQT, DAC, JPGn: nothing the lossless decoder needs.
                break
            }
            pos = segment.end
        }
    }

    /// A big-endian 16-bit value at `at`, which the caller has bounds-checked.
    private static func u16(_ data: UnsafeRawBufferPointer, _ at: Int) -> Int { Int(data[at]) << 8 | Int(data[at + 1]) }

    /// The marker at `pos` (0xFF, any number of fill bytes 0xFF, the marker code) and its
    /// segment's length; markers of other processes and markers that cannot come before the
    /// first scan are refused.
    private static func nextSegment(_ data: UnsafeRawBufferPointer, at start: Int) throws(LJ92Error) -> MarkerSegment {
        let count = data.count
        var pos = start
        guard pos < count else { throw .truncated(offset: count) }
        guard data[pos] == 0xFF else { throw .expectedMarker(offset: pos, found: data[pos]) }
        while pos < count && data[pos] == 0xFF { pos += 1 }
        guard pos < count else { throw .truncated(offset: count) }
        let marker = data[pos]
        let markerOffset = pos - 1
        pos += 1
        switch marker {
        case 0xC0, 0xC1, 0xC2, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF, 0xDE, 0xDF:
            throw .unsupportedProcess(marker: marker, offset: markerOffset)
        case 0x00, 0x01, 0x02...0xBF, 0xC8, 0xD0...0xD9, 0xDC:
            // Stuffed zero, TEM, reserved, JPG, RSTn, SOI, EOI (before any scan), DNL.
            throw .unexpectedMarker(marker: marker, offset: markerOffset)
        default:
            break
        }
        // Every remaining marker starts a segment with a 16-bit length.
        guard pos + 2 <= count else { throw .truncated(offset: count) }
        let length = u16(data, pos)
        guard length >= 2 else { throw .invalidSegmentLength(marker: marker, offset: markerOffset, length: length) }
        guard pos + length <= count else { throw .truncated(offset: count) }
        return MarkerSegment(marker: marker, offset: markerOffset, length: length, body: pos + 2, end: pos + length)
    }

    /// SOF3: precision, size and components (each sampled 1 × 1).
    private static func parseFrame(_ data: UnsafeRawBufferPointer, _ segment: MarkerSegment) throws(LJ92Error) -> FrameFields {
        let body = segment.body
        guard segment.length >= 8 else { throw segment.badLength }
        let precision = Int(data[body])
        let height = u16(data, body + 1)
        let width = u16(data, body + 3)
        let nf = Int(data[body + 5])
        guard (2...16).contains(precision) else { throw .invalidPrecision(precision) }
        guard width > 0, height > 0 else { throw .invalidDimensions(width: width, height: height) }
        guard (1...4).contains(nf) else { throw .invalidComponentCount(nf) }
        guard segment.length == 8 + 3 * nf else { throw segment.badLength }
        var ids: [Int] = []
        for c in 0..<nf {
            let at = body + 6 + 3 * c
            let id = Int(data[at])
            let sampling = data[at + 1]
            guard !ids.contains(id) else { throw .duplicateComponentID(id: id, offset: at) }
            guard sampling == 0x11 else {
                throw .unsupportedSampling(componentID: id, horizontal: Int(sampling >> 4), vertical: Int(sampling & 15))
            }
            // Tq (quantization table) has no meaning in the lossless process; ignored.
            ids.append(id)
        }
        return FrameFields(precision: precision, height: height, width: width, ids: ids)
    }

    /// DHT: the DC tables it holds into `specs` (by destination), their code lengths checked
    /// for overflow and their symbols for range; AC tables are skipped.
    private static func parseHuffmanTables(_ data: UnsafeRawBufferPointer, _ segment: MarkerSegment,
                                           into specs: inout [HuffmanSpec?]) throws(LJ92Error) {
        var at = segment.body
        while at < segment.end {
            let tcth = data[at]
            let tc = Int(tcth >> 4), th = Int(tcth & 15)
            guard tc <= 1, th <= 3 else { throw .invalidHuffmanTableID(classAndID: tcth, offset: at) }
            guard at + 17 <= segment.end else { throw segment.badLength }
            var counts = [Int](repeating: 0, count: 16)
            var total = 0
            var codeSpace = 0  // next code value at the current length
            for l in 0..<16 {
                counts[l] = Int(data[at + 1 + l])
                total += counts[l]
                codeSpace = (codeSpace << 1) + counts[l]
                if tc == 0 && codeSpace > (2 << l) { throw .huffmanCodeOverflow(table: th, offset: at) }
            }
            let symbolStart = at + 17
            guard symbolStart + total <= segment.end else { throw segment.badLength }
            if tc == 0 {
                var symbols = [UInt8](repeating: 0, count: total)
                for i in 0..<total {
                    let symbol = data[symbolStart + i]
                    guard symbol <= 16 else { throw .invalidHuffmanSymbol(table: th, symbol: Int(symbol), offset: symbolStart + i) }
                    symbols[i] = symbol
                }
                specs[th] = HuffmanSpec(counts: counts, symbols: symbols)
            }
            // Class 1 (AC) tables have no use in the lossless process: skipped.
            at = symbolStart + total
        }
    }

    /// SOS: every frame component in frame order with a table given before, the predictor
    /// and point transform, the restart interval checked against the width, and a frame no
    /// larger than the data left could encode.
    private static func parseScan(_ data: UnsafeRawBufferPointer, _ segment: MarkerSegment, frame: FrameFields,
                                  specs: [HuffmanSpec?], restartInterval: Int) throws(LJ92Error) -> LJ92Header {
        let body = segment.body
        guard segment.length >= 3 else { throw segment.badLength }
        let ns = Int(data[body])
        guard segment.length == 6 + 2 * ns else { throw segment.badLength }
        let nf = frame.ids.count
        guard ns == nf else { throw .unsupportedScanComponents(scan: ns, frame: nf) }
        var tables: [HuffmanSpec] = []
        var tableIDs: [Int] = []
        for i in 0..<ns {
            let id = Int(data[body + 1 + 2 * i])
            guard id == frame.ids[i] else { throw .scanComponentMismatch(index: i, expectedID: frame.ids[i], foundID: id) }
            // Td selects the table; Ta (AC table) has no meaning here and is ignored.
            let td = Int(data[body + 2 + 2 * i] >> 4)
            guard td <= 3, let spec = specs[td] else { throw .missingHuffmanTable(table: td, offset: segment.offset) }
            guard !spec.symbols.isEmpty else { throw .emptyHuffmanTable(table: td, offset: segment.offset) }
            tables.append(spec)
            tableIDs.append(td)
        }
        let ss = Int(data[body + 1 + 2 * ns])
        // Se (data[body + 2 + 2 * ns]) and Ah are 0 in the lossless process; not checked.
        let al = Int(data[body + 3 + 2 * ns] & 15)
        guard (1...7).contains(ss) else { throw .invalidPredictor(ss) }
        guard al < frame.precision else { throw .invalidPointTransform(al) }
        if restartInterval > 0 && restartInterval % frame.width != 0 {
            throw .invalidRestartInterval(interval: restartInterval, width: frame.width)
        }
        let result = LJ92Frame(width: frame.width, height: frame.height, components: nf, precision: frame.precision,
                               predictor: ss, pointTransform: al, restartInterval: restartInterval)
        let linesPerInterval = restartInterval == 0 ? frame.height : restartInterval / frame.width
        let intervals = (frame.height + linesPerInterval - 1) / linesPerInterval
        guard result.sampleCount <= plausibleSampleLimit(entropyBytes: data.count - segment.end, intervals: intervals) else {
            throw .truncated(offset: data.count)
        }
        return LJ92Header(frame: result, tables: tables, tableIDs: tableIDs, scanStart: segment.end)
    }
}
