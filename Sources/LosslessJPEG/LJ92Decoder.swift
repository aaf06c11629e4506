/// Decoder for ITU T.81 lossless JPEG streams (process 14, SOF3, Huffman coding), as used
/// for the tiles of DNG raw images.
///
/// Supports 1...4 components in one interleaved scan with 1×1 sampling, precision 2...16,
/// predictors 1...7, the point transform, and restart intervals of whole lines. Every
/// malformed stream is reported by a specific `LJ92Error`; the decoder never reads outside
/// the data or writes outside the first `sampleCount` slots of the output, and its work is
/// bounded by the frame size, which the header check bounds by the length of the data.
///
/// End of the entropy-coded data: each entropy-coded segment (the scan, or one restart
/// interval) must end with a marker: RSTn between intervals, EOI after the last one. If a
/// segment's bits run out before its last sample, zero bits are supplied, as other decoders
/// do, but at most `maximumZeroFillBits` of them — enough for an encoder that did not flush
/// its last partial byte; a segment that needs more is `LJ92Error.truncated`. Data left in a
/// segment after its last sample (such as the final byte's padding) is ignored.
public enum LJ92Decoder {
    /// The largest number of zero bits supplied after the end of an entropy-coded segment
    /// before the stream counts as truncated (less than one byte).
    public static let maximumZeroFillBits = 7

    /// Parses markers up to the first SOS and validates every header field; no pixel decoding.
    ///
    /// Checks SOI, the frame header (SOF3), the Huffman tables the scan selects, the restart
    /// interval and the scan header, and that the frame is not larger than the data after
    /// the scan header could encode (each sample takes at least one bit), so that its
    /// `sampleCount` is safe to allocate.
    /// - Throws: `LJ92Error` naming the first problem found.
    public static func readFrame(_ data: UnsafeRawBufferPointer) throws(LJ92Error) -> LJ92Frame {
        try parseHeader(data).frame
    }

    /// Decodes into `output` (needs at least frame.sampleCount slots): samples row-major,
    /// components interleaved per pixel — exactly the flat sample order of a DNG tile.
    ///
    /// Only the first `frame.sampleCount` slots are written; on error their contents are
    /// unspecified.
    /// - Throws: `LJ92Error.outputTooSmall` if `output` has fewer slots than the frame has
    ///   samples, or the `LJ92Error` naming the first problem in the stream.
    @discardableResult
    public static func decode(_ data: UnsafeRawBufferPointer,
                              into output: UnsafeMutableBufferPointer<UInt16>) throws(LJ92Error) -> LJ92Frame {
        try decode(data, into: output, lookups: .automatic)
    }

    /// How the entropy decoder looks codes up: one per lookup, two where a lookup holds two
    /// (`PairedLookups`), or the faster of the two for the scan's tables.
    enum Lookups { case automatic, single, paired }

    /// Whether a scan of `samples` samples in `entropyBytes` bytes of entropy-coded data
    /// decodes faster two codes per lookup (`pairedLookupMaximumBits`).
    static func pairsPay(entropyBytes: Int, samples: Int) -> Bool {
        Double(entropyBytes) * 8 <= pairedLookupMaximumBits * Double(samples)
    }

    /// `decode(_:into:)` with the lookup mode chosen (the tests decode both ways).
    @discardableResult
    static func decode(_ data: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt16>,
                       lookups: Lookups) throws(LJ92Error) -> LJ92Frame {
        let header = try parseHeader(data)
        try decodeScan(data, header: header, into: output, lookups: lookups)
        return header.frame
    }

    /// Decodes a whole stream into a new array (see `decode(_:into:)`).
    ///
    /// The array is sized from the validated frame, which `readFrame` bounds by the length
    /// of `data`.
    /// - Throws: the `LJ92Error` naming the first problem in the stream.
    public static func decode(_ data: [UInt8]) throws(LJ92Error) -> (frame: LJ92Frame, samples: [UInt16]) {
        // The standard library's `withUnsafe…` methods rethrow untyped errors, so the typed
        // error travels out of the closures as a `Result`.
        let result = data.withUnsafeBytes { raw -> Result<(frame: LJ92Frame, samples: [UInt16]), LJ92Error> in
            do throws(LJ92Error) {
                let header = try parseHeader(raw)
                var samples = [UInt16](repeating: 0, count: header.frame.sampleCount)
                let decoded = samples.withUnsafeMutableBufferPointer { output -> Result<Void, LJ92Error> in
                    do throws(LJ92Error) {
                        try decodeScan(raw, header: header, into: output)
                        return .success(())
                    } catch {
                        return .failure(error)
                    }
                }
                try decoded.get()
                return .success((header.frame, samples))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    // MARK: - Scan decoding

    /// Decodes the entropy-coded data that follows the header, restart interval by restart
    /// interval, and applies the point transform.
    /// - Throws: `LJ92Error` naming the first problem found.
    static func decodeScan(_ data: UnsafeRawBufferPointer, header: LJ92Header,
                           into output: UnsafeMutableBufferPointer<UInt16>,
                           lookups mode: Lookups = .automatic) throws(LJ92Error) {
        let frame = header.frame
        let sampleCount = frame.sampleCount
        guard output.count >= sampleCount else {
            throw .outputTooSmall(needed: sampleCount, available: output.count)
        }
        guard let source = data.baseAddress?.assumingMemoryBound(to: UInt8.self),
              let out = output.baseAddress else { throw .truncated(offset: data.count) }

        // One decoding table per distinct table destination, shared by the components using it.
        var built: [Int: HuffmanDecodingTable] = [:]
        let lookups = UnsafeMutablePointer<HuffmanLookup>.allocate(capacity: frame.components)
        defer { lookups.deallocate() }
        for (c, id) in header.tableIDs.enumerated() {
            let table = built[id] ?? HuffmanDecodingTable(header.tables[c])
            built[id] = table
            (lookups + c).initialize(to: table.lookup)
        }
        let pairs = mode == .paired || (mode == .automatic && pairsPay(entropyBytes: data.count - header.scanStart,
                                                                         samples: sampleCount))
            ? PairedLookups(lookups, components: frame.components) : nil

        // Scratch for one unstuffed segment plus the 8 zero bytes the bit reader may load.
        let scratchCapacity = data.count - header.scanStart + 8
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: scratchCapacity)
        defer { scratch.deallocate() }
        var stuffing: [StuffedByte] = []

        let stride = frame.width * frame.components
        let linesPerInterval = frame.restartInterval == 0
            ? frame.height : frame.restartInterval / frame.width
        let initial = UInt16(1 << (frame.precision - frame.pointTransform - 1))
        var line = 0
        var position = header.scanStart
        var restartIndex = 0

        try withExtendedLifetime((built, pairs)) { () throws(LJ92Error) in
            while line < frame.height {
                let segment = unstuff(source, count: data.count, from: position, into: scratch, stuffing: &stuffing)
                (scratch + segment.length).initialize(repeating: 0, count: 8)
                guard let marker = segment.marker else { throw .truncated(offset: data.count) }

                let lines = min(linesPerInterval, frame.height - line)
                var reader = BitReader(bytes: scratch, limit: segment.length)
                let result = decodeIntervalDispatch(
                    predictor: frame.predictor, components: frame.components, reader: &reader,
                    tables: lookups, pairs: pairs?.entries, output: out + line * stride, width: frame.width, lines: lines,
                    initial: initial)
                switch result {
                case .ok:
                    break
                case .invalidCode(let bit):
                    let offset = bit / 8 < segment.length
                        ? inputOffset(ofClean: bit / 8, start: position, stuffing: stuffing)
                        : segment.markerOffset
                    throw .invalidHuffmanCode(offset: offset)
                case .exhausted:
                    throw .truncated(offset: segment.markerOffset)
                }

                line += lines
                if line < frame.height {
                    guard marker == 0xD0 + UInt8(restartIndex & 7) else {
                        throw .restartMismatch(expected: restartIndex & 7, found: marker,
                                               offset: segment.markerOffset)
                    }
                    restartIndex += 1
                    position = segment.next
                } else {
                    guard marker == 0xD9 else {
                        throw .unexpectedMarker(marker: marker, offset: segment.markerOffset)
                    }
                }
            }
        }

        if frame.pointTransform > 0 {
            let shift = UInt16(frame.pointTransform)
            for i in 0..<sampleCount { out[i] &<<= shift }
        }
    }

    // MARK: - Byte stuffing

    /// Where the unstuffed bytes resume one-to-one after a stuffed 0xFF 0x00.
    struct StuffedByte {
        /// Index in the unstuffed segment.
        var clean: Int
        /// Offset of the same byte in the input.
        var input: Int
    }

    /// One entropy-coded segment after unstuffing.
    struct Segment {
        /// Number of unstuffed bytes.
        var length: Int
        /// The marker code that ends the segment, or nil if the data ends first.
        var marker: UInt8?
        /// Offset of the 0xFF that begins the marker (or the data length).
        var markerOffset: Int
        /// Offset just after the marker code.
        var next: Int
    }

    /// Copies the entropy-coded bytes from `start` up to the next marker into `destination`,
    /// replacing each 0xFF 0x00 by 0xFF (fill bytes 0xFF before the 0x00 are dropped too).
    ///
    /// Eight bytes at a time while they contain no 0xFF. `destination` must have room for
    /// `count - start` bytes.
    static func unstuff(_ source: UnsafePointer<UInt8>, count: Int, from start: Int,
                        into destination: UnsafeMutablePointer<UInt8>,
                        stuffing: inout [StuffedByte]) -> Segment {
        stuffing.removeAll(keepingCapacity: true)
        var i = start
        var o = 0
        while i < count {
            if i + 8 <= count {
                let word = UnsafeRawPointer(source + i).loadUnaligned(as: UInt64.self)
                let inverted = ~word  // a 0xFF byte becomes a zero byte
                let hasFF = (inverted &- 0x0101_0101_0101_0101) & ~inverted & 0x8080_8080_8080_8080
                if hasFF == 0 {
                    UnsafeMutableRawPointer(destination + o).storeBytes(of: word, as: UInt64.self)
                    i += 8
                    o += 8
                    continue
                }
            }
            let byte = source[i]
            if byte != 0xFF {
                destination[o] = byte
                i += 1
                o += 1
                continue
            }
            var j = i + 1
            while j < count && source[j] == 0xFF { j += 1 }
            guard j < count else { return Segment(length: o, marker: nil, markerOffset: count, next: count) }
            if source[j] == 0x00 {
                destination[o] = 0xFF
                o += 1
                i = j + 1
                stuffing.append(StuffedByte(clean: o, input: i))
                continue
            }
            return Segment(length: o, marker: source[j], markerOffset: j - 1, next: j + 1)
        }
        return Segment(length: o, marker: nil, markerOffset: count, next: count)
    }

    /// The input offset of unstuffed byte `clean` of the segment that began at `start`.
    static func inputOffset(ofClean clean: Int, start: Int, stuffing: [StuffedByte]) -> Int {
        var anchor = StuffedByte(clean: 0, input: start)
        for entry in stuffing {
            if entry.clean > clean { break }
            anchor = entry
        }
        return anchor.input + (clean - anchor.clean)
    }
}
