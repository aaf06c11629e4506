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

extension LJ92Decoder {
    /// Reads the marker segments from SOI up to and including the first SOS.
    ///
    /// Validates every field the decoder relies on and checks that the frame is not larger
    /// than the remaining data could possibly encode.
    /// - Throws: `LJ92Error` naming the first problem found.
    static func parseHeader(_ data: UnsafeRawBufferPointer) throws(LJ92Error) -> LJ92Header {
        let count = data.count
        guard count >= 2, data[0] == 0xFF, data[1] == 0xD8 else { throw .missingSOI }

        var pos = 2
        var frame: (precision: Int, height: Int, width: Int, ids: [Int])?
        var specs = [HuffmanSpec?](repeating: nil, count: 4)
        var restartInterval = 0

        /// Reads a big-endian 16-bit value at `at`, which the caller has bounds-checked.
        func u16(_ at: Int) -> Int { Int(data[at]) << 8 | Int(data[at + 1]) }

        while true {
            // A marker: 0xFF, any number of fill bytes 0xFF, then the marker code.
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
            let length = u16(pos)
            guard length >= 2 else {
                throw .invalidSegmentLength(marker: marker, offset: markerOffset, length: length)
            }
            let end = pos + length
            guard end <= count else { throw .truncated(offset: count) }
            let body = pos + 2

            switch marker {
            case 0xC3:  // SOF3
                guard frame == nil else { throw .duplicateFrameHeader(offset: markerOffset) }
                guard length >= 8 else {
                    throw .invalidSegmentLength(marker: marker, offset: markerOffset, length: length)
                }
                let precision = Int(data[body])
                let height = u16(body + 1)
                let width = u16(body + 3)
                let nf = Int(data[body + 5])
                guard (2...16).contains(precision) else { throw .invalidPrecision(precision) }
                guard width > 0, height > 0 else { throw .invalidDimensions(width: width, height: height) }
                guard (1...4).contains(nf) else { throw .invalidComponentCount(nf) }
                guard length == 8 + 3 * nf else {
                    throw .invalidSegmentLength(marker: marker, offset: markerOffset, length: length)
                }
                var ids: [Int] = []
                for c in 0..<nf {
                    let at = body + 6 + 3 * c
                    let id = Int(data[at])
                    let sampling = data[at + 1]
                    guard !ids.contains(id) else { throw .duplicateComponentID(id: id, offset: at) }
                    guard sampling == 0x11 else {
                        throw .unsupportedSampling(componentID: id, horizontal: Int(sampling >> 4),
                                                   vertical: Int(sampling & 15))
                    }
                    // Tq (quantization table) has no meaning in the lossless process; ignored.
                    ids.append(id)
                }
                frame = (precision, height, width, ids)

            case 0xC4:  // DHT: one or more tables
                var at = body
                while at < end {
                    let tcth = data[at]
                    let tc = Int(tcth >> 4), th = Int(tcth & 15)
                    guard tc <= 1, th <= 3 else { throw .invalidHuffmanTableID(classAndID: tcth, offset: at) }
                    guard at + 17 <= end else {
                        throw .invalidSegmentLength(marker: marker, offset: markerOffset, length: length)
                    }
                    var counts = [Int](repeating: 0, count: 16)
                    var total = 0
                    var codeSpace = 0  // next code value at the current length
                    for l in 0..<16 {
                        counts[l] = Int(data[at + 1 + l])
                        total += counts[l]
                        codeSpace = (codeSpace << 1) + counts[l]
                        if tc == 0 && codeSpace > (2 << l) {
                            throw .huffmanCodeOverflow(table: th, offset: at)
                        }
                    }
                    let symbolStart = at + 17
                    guard symbolStart + total <= end else {
                        throw .invalidSegmentLength(marker: marker, offset: markerOffset, length: length)
                    }
                    if tc == 0 {
                        var symbols = [UInt8](repeating: 0, count: total)
                        for i in 0..<total {
                            let symbol = data[symbolStart + i]
                            guard symbol <= 16 else {
                                throw .invalidHuffmanSymbol(table: th, symbol: Int(symbol), offset: symbolStart + i)
                            }
                            symbols[i] = symbol
                        }
                        specs[th] = HuffmanSpec(counts: counts, symbols: symbols)
                    }
                    // Class 1 (AC) tables have no use in the lossless process: skipped.
                    at = symbolStart + total
                }

            case 0xDD:  // DRI
                guard length == 4 else {
                    throw .invalidSegmentLength(marker: marker, offset: markerOffset, length: length)
                }
                restartInterval = u16(body)

            case 0xDA:  // SOS
                guard let frame else { throw .missingFrameHeader(offset: markerOffset) }
                guard length >= 3 else {
                    throw .invalidSegmentLength(marker: marker, offset: markerOffset, length: length)
                }
                let ns = Int(data[body])
                guard length == 6 + 2 * ns else {
                    throw .invalidSegmentLength(marker: marker, offset: markerOffset, length: length)
                }
                let nf = frame.ids.count
                guard ns == nf else { throw .unsupportedScanComponents(scan: ns, frame: nf) }
                var tables: [HuffmanSpec] = []
                var tableIDs: [Int] = []
                for i in 0..<ns {
                    let id = Int(data[body + 1 + 2 * i])
                    guard id == frame.ids[i] else {
                        throw .scanComponentMismatch(index: i, expectedID: frame.ids[i], foundID: id)
                    }
                    // Td selects the table; Ta (AC table) has no meaning here and is ignored.
                    let td = Int(data[body + 2 + 2 * i] >> 4)
                    guard td <= 3, let spec = specs[td] else {
                        throw .missingHuffmanTable(table: td, offset: markerOffset)
                    }
                    guard !spec.symbols.isEmpty else { throw .emptyHuffmanTable(table: td, offset: markerOffset) }
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
                let result = LJ92Frame(width: frame.width, height: frame.height, components: nf,
                                       precision: frame.precision, predictor: ss, pointTransform: al,
                                       restartInterval: restartInterval)
                let linesPerInterval = restartInterval == 0 ? frame.height : restartInterval / frame.width
                let intervals = (frame.height + linesPerInterval - 1) / linesPerInterval
                guard result.sampleCount <= plausibleSampleLimit(entropyBytes: count - end, intervals: intervals)
                else { throw .truncated(offset: count) }
                return LJ92Header(frame: result, tables: tables, tableIDs: tableIDs, scanStart: end)

            default:
                // APPn, COM, DQT, DAC, JPGn: nothing the lossless decoder needs.
                break
            }
            pos = end
        }
    }
}
