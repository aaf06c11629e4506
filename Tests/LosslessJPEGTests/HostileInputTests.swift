import Foundation
import LosslessJPEG
import Testing
import TestSupport

/// A marker segment: 0xFF, the marker, the 16-bit length, the body.
func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
    let length = body.count + 2
    return [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + body
}

/// SOF3 body: precision, lines, samples per line, and (id, sampling) per component.
func frameHeader(precision: Int = 8, width: Int = 1, height: Int = 1, components: [(UInt8, UInt8)] = [(0, 0x11)]) -> [UInt8] {
    var body: [UInt8] = [UInt8(precision), UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF),
                         UInt8(components.count)]
    for (id, sampling) in components { body += [id, sampling, 0] }
    return segment(0xC3, body)
}

/// DHT with one table (class 0) of `counts` code lengths and `symbols`.
func huffmanTable(id: UInt8 = 0, counts: [Int], symbols: [UInt8]) -> [UInt8] {
    let padded = counts + [Int](repeating: 0, count: 16 - counts.count)
    return segment(0xC4, [id] + padded.map { UInt8($0) } + symbols)
}

/// SOS for components 0..<n, all with table 0.
func scanHeader(components: Int = 1, predictor: Int = 1, pointTransform: Int = 0) -> [UInt8] {
    var body: [UInt8] = [UInt8(components)]
    for c in 0..<components { body += [UInt8(c), 0] }
    body += [UInt8(predictor), 0, UInt8(pointTransform)]
    return segment(0xDA, body)
}

let soi: [UInt8] = [0xFF, 0xD8]
let eoi: [UInt8] = [0xFF, 0xD9]
/// A table whose only code is "0" (length 1) for category 0.
let zeroTable = huffmanTable(counts: [1], symbols: [0])

/// Decodes and returns the error, or nil if the stream decoded.
func decodeError(_ bytes: [UInt8]) -> LJ92Error? {
    do {
        _ = try LJ92Decoder.decode(bytes)
        return nil
    } catch {
        return error
    }
}

/// Offsets of the header markers of a stream (marker code → offset of its 0xFF).
func headerOffsets(_ bytes: [UInt8]) -> [UInt8: Int] {
    var result: [UInt8: Int] = [:]
    var pos = 2
    while pos + 4 <= bytes.count {
        let marker = bytes[pos + 1]
        if result[marker] == nil { result[marker] = pos }
        if marker == 0xDA { break }
        pos += 2 + (Int(bytes[pos + 2]) << 8 | Int(bytes[pos + 3]))
    }
    return result
}

/// Scale for the randomized tests: `LJ92_FUZZ_SCALE=100` runs a hundred times as many trials.
let fuzzScale = max(1, Int(ProcessInfo.processInfo.environment["LJ92_FUZZ_SCALE"] ?? "") ?? 1)

@Suite("Hostile and malformed input")
struct HostileInputTests {
    /// A small stream with two components, restart markers and several entropy segments.
    static func smallStream() throws -> (stream: [UInt8], samples: [UInt16]) {
        var generator = SeededGenerator(seed: 11)
        let samples = randomSamples(6 * 5 * 2, precision: 12, generator: &generator)
        let stream = try LJ92Encoder.encode(samples, width: 6, height: 5, components: 2, precision: 12, predictor: 7,
                                            restartInterval: 12)
        return (stream, samples)
    }

    @Test("Every truncation of a small stream throws `truncated` at its end")
    func everyTruncation() throws {
        let (stream, samples) = try Self.smallStream()
        #expect(try LJ92Decoder.decode(stream).samples == samples)
        for length in 0..<stream.count {
            let cut = Array(stream[0..<length])
            let expected: LJ92Error = length < 2 ? .missingSOI : .truncated(offset: length)
            #expect(decodeError(cut) == expected, "cut at \(length)")
        }
    }

    @Test("Truncations of real streams throw `truncated`")
    func realTruncations() throws {
        for name in ["1px.ljp", "dng3.ljp", "linearraw.ljp"] {
            let stream = try sharedStream(name)
            var lengths = Array(stride(from: 0, to: stream.count, by: max(1, stream.count / 97)))
            lengths += (max(0, stream.count - 40)..<stream.count)
            for length in lengths {
                let expected: LJ92Error = length < 2 ? .missingSOI : .truncated(offset: length)
                #expect(decodeError(Array(stream[0..<length])) == expected, "\(name) cut at \(length)")
            }
        }
    }

    @Test("Random byte changes never crash", arguments: ["dng1.ljp", "dng5.ljp", "linearraw.ljp", "encoded"])
    func randomCorruption(name: String) throws {
        let stream: [UInt8]
        if name == "encoded" {
            stream = try Self.smallStream().stream
        } else {
            let shared = try sharedStream(name)
            stream = shared
        }
        let headerEnd = StreamLayout(stream).scanStart
        var generator = SeededGenerator(seed: UInt64(stream.count))
        let trials = (stream.count > 200_000 ? 40 : 250) * fuzzScale
        var thrown = 0
        var decoded = 0
        for trial in 0..<trials {
            var bytes = stream
            let changes = Int.random(in: 1...4, using: &generator)
            for _ in 0..<changes {
                // Half of the trials hit the headers, where every field matters.
                let index = trial % 2 == 0
                    ? Int.random(in: 0..<headerEnd, using: &generator)
                    : Int.random(in: 0..<bytes.count, using: &generator)
                if Bool.random(using: &generator) {
                    bytes[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &generator)
                } else {
                    bytes[index] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            do {
                let frame = try bytes.withUnsafeBytes { raw in try LJ92Decoder.readFrame(raw) }
                var output = [UInt16](repeating: 0, count: frame.sampleCount + 1)
                output[frame.sampleCount] = 0x5A5A
                _ = try bytes.withUnsafeBytes { raw in
                    try output.withUnsafeMutableBufferPointer { out in try LJ92Decoder.decode(raw, into: out) }
                }
                #expect(output[frame.sampleCount] == 0x5A5A, "no write past the frame")
                decoded += 1
            } catch let error as LJ92Error {
                #expect(!error.description.isEmpty)
                thrown += 1
            } catch {
                Issue.record("not an LJ92Error: \(error)")
            }
        }
        #expect(thrown + decoded == trials)
        // Seeded, so the split is exact: changes that leave a valid stream decode, the rest
        // are refused (counts for the default scale; with LJ92_FUZZ_SCALE only the total).
        let expectedThrown = ["dng1.ljp": 134, "dng5.ljp": 130, "linearraw.ljp": 27, "encoded": 215]
        if fuzzScale == 1 { #expect(thrown == expectedThrown[name], "\(name)") }
    }

    @Test("Random garbage and random entropy data never crash")
    func garbage() {
        var generator = SeededGenerator(seed: 77)
        for trial in 0..<(400 * fuzzScale) {
            let count = Int.random(in: 0...300, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if trial % 2 == 1 {
                // Valid headers, random entropy-coded data (markers in it are likely).
                let width = Int.random(in: 1...20, using: &generator), height = Int.random(in: 1...20, using: &generator)
                let table = huffmanTable(counts: [0, 2, 3, 4, 4, 3], symbols: Array(0...15))
                bytes = soi + frameHeader(precision: 12, width: width, height: height) + table
                    + scanHeader(predictor: Int.random(in: 1...7, using: &generator)) + bytes + eoi
            }
            do {
                let (frame, samples) = try LJ92Decoder.decode(bytes)
                #expect(samples.count == frame.sampleCount)
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
    }

    // MARK: - Specific errors

    @Test("No SOI")
    func noSOI() {
        #expect(decodeError([]) == .missingSOI)
        #expect(decodeError([0xFF]) == .missingSOI)
        #expect(decodeError([0x00, 0xD8, 0xFF, 0xC3]) == .missingSOI)
        #expect(decodeError([0xFF, 0xD9]) == .missingSOI)
    }

    @Test("Lossy and other processes are refused, never decoded as lossless",
          arguments: [0xC0, 0xC1, 0xC2, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF, 0xDE, 0xDF] as [UInt8])
    func otherProcesses(marker: UInt8) throws {
        let (stream, _) = try Self.smallStream()
        let offset = try #require(headerOffsets(stream)[0xC3])
        var patched = stream
        patched[offset + 1] = marker
        #expect(decodeError(patched) == .unsupportedProcess(marker: marker, offset: offset))
        let error = LJ92Error.unsupportedProcess(marker: marker, offset: offset)
        #expect(error.category == .unsupported)
        if marker == 0xC0 { #expect(error.description.contains("baseline DCT (lossy)")) }
    }

    @Test("A baseline (lossy) JPEG from an independent encoder is refused")
    func realBaselineJPEG() throws {
        let script = importImagecodecs + "\n" + """
        import numpy as np
        sys.stdout.write(imagecodecs.jpeg8_encode(np.full((8, 8), 100, np.uint8), level=90).hex())
        """
        let result = try TestData.runPython(script)
        try skipWithoutImagecodecs(result)
        try #require(result.status == 0, "python failed: \(result.stderr)")
        let hex = Array(result.stdout.utf8)
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: hex.count - 1, by: 2) {
            bytes.append(UInt8(String(decoding: hex[i...(i + 1)], as: UTF8.self), radix: 16)!)
        }
        let offset = try #require(headerOffsets(bytes)[0xC0])
        #expect(decodeError(bytes) == .unsupportedProcess(marker: 0xC0, offset: offset))
    }

    @Test("Missing Huffman table")
    func missingTable() throws {
        let (stream, _) = try Self.smallStream()
        let layout = headerOffsets(stream)
        let dht = try #require(layout[0xC4]), sos = try #require(layout[0xDA])
        let withoutTables = Array(stream[0..<dht]) + Array(stream[sos...])
        #expect(decodeError(withoutTables) == .missingHuffmanTable(table: 0, offset: dht))
        // A scan selecting destination 2, which the stream never defines.
        let handMade = soi + frameHeader() + zeroTable + segment(0xDA, [1, 0, 0x20, 1, 0, 0]) + [0x00] + eoi
        #expect(decodeError(handMade) == .missingHuffmanTable(table: 2, offset: 2 + 13 + 22))
    }

    @Test("Frame header values out of range")
    func frameHeaderValues() throws {
        let tail = zeroTable + scanHeader() + [0x00] + eoi
        #expect(decodeError(soi + frameHeader(precision: 17) + tail) == .invalidPrecision(17))
        #expect(decodeError(soi + frameHeader(precision: 1) + tail) == .invalidPrecision(1))
        #expect(decodeError(soi + frameHeader(components: []) + tail) == .invalidComponentCount(0))
        let five = (0..<5).map { (UInt8($0), UInt8(0x11)) }
        #expect(decodeError(soi + frameHeader(components: five) + tail) == .invalidComponentCount(5))
        #expect(decodeError(soi + frameHeader(width: 0) + tail) == .invalidDimensions(width: 0, height: 1))
        #expect(decodeError(soi + frameHeader(height: 0) + tail) == .invalidDimensions(width: 1, height: 0))
        #expect(decodeError(soi + frameHeader(components: [(3, 0x21)]) + tail)
                == .unsupportedSampling(componentID: 3, horizontal: 2, vertical: 1))
        #expect(decodeError(soi + frameHeader(components: [(4, 0x11), (4, 0x11)]) + tail)
                == .duplicateComponentID(id: 4, offset: 2 + 4 + 6 + 3))
        var badLength = frameHeader()
        badLength[3] += 1
        #expect(decodeError(soi + badLength + [0] + tail) == .invalidSegmentLength(marker: 0xC3, offset: 2, length: 12))
        #expect(decodeError(soi + frameHeader() + frameHeader() + tail) == .duplicateFrameHeader(offset: 2 + 13))
        #expect(decodeError(soi + zeroTable + scanHeader() + [0] + eoi) == .missingFrameHeader(offset: 2 + 22))
    }

    @Test("Scan header values out of range")
    func scanHeaderValues() throws {
        let head = soi + frameHeader(precision: 8) + zeroTable
        for predictor in [0, 8, 255] {
            #expect(decodeError(head + scanHeader(predictor: predictor) + [0] + eoi) == .invalidPredictor(predictor))
        }
        #expect(decodeError(head + scanHeader(pointTransform: 8) + [0] + eoi) == .invalidPointTransform(8))
        #expect(decodeError(head + scanHeader(components: 2) + [0] + eoi) == .unsupportedScanComponents(scan: 2, frame: 1))
        #expect(decodeError(head + segment(0xDA, [1, 9, 0, 1, 0, 0]) + [0] + eoi)
                == .scanComponentMismatch(index: 0, expectedID: 0, foundID: 9))
        let emptyTable = huffmanTable(counts: [], symbols: [])
        #expect(decodeError(soi + frameHeader() + emptyTable + scanHeader() + [0] + eoi)
                == .emptyHuffmanTable(table: 0, offset: 2 + 13 + 21))
    }

    @Test("Malformed Huffman tables")
    func huffmanTables() {
        let head = soi + frameHeader()
        let tail = scanHeader() + [0] + eoi
        // Three codes of length 1 do not fit.
        #expect(decodeError(head + huffmanTable(counts: [3], symbols: [0, 1, 2]) + tail)
                == .huffmanCodeOverflow(table: 0, offset: 2 + 13 + 4))
        #expect(decodeError(head + huffmanTable(counts: [1, 1], symbols: [0, 17]) + tail)
                == .invalidHuffmanSymbol(table: 0, symbol: 17, offset: 2 + 13 + 4 + 18))
        #expect(decodeError(head + huffmanTable(id: 0x04, counts: [1], symbols: [0]) + tail)
                == .invalidHuffmanTableID(classAndID: 0x04, offset: 2 + 13 + 4))
        #expect(decodeError(head + huffmanTable(id: 0x20, counts: [1], symbols: [0]) + tail)
                == .invalidHuffmanTableID(classAndID: 0x20, offset: 2 + 13 + 4))
        // Counts promise more symbols than the segment holds.
        #expect(decodeError(head + huffmanTable(counts: [2], symbols: [0]) + tail)
                == .invalidSegmentLength(marker: 0xC4, offset: 2 + 13, length: 20))
        // A complete code (all-ones included) is accepted, and an AC-class table is skipped.
        let full = huffmanTable(counts: [2], symbols: [0, 1])
        let ac = huffmanTable(id: 0x10, counts: [3], symbols: [0, 1, 200])
        #expect(decodeError(head + ac + full + tail) == nil)
    }

    @Test("Wrong restart marker sequence")
    func restartSequence() throws {
        let (stream, samples) = try Self.smallStream()
        let layout = StreamLayout(stream)
        #expect(layout.scanMarkers == [0xD0, 0xD1, 0xD9])
        let rstOffsets = (layout.scanStart..<(stream.count - 1)).filter { stream[$0] == 0xFF && (0xD0...0xD7).contains(stream[$0 + 1]) }
        #expect(rstOffsets.count == 2)
        var swapped = stream
        swapped[rstOffsets[0] + 1] = 0xD1
        #expect(decodeError(swapped) == .restartMismatch(expected: 0, found: 0xD1, offset: rstOffsets[0]))
        var second = stream
        second[rstOffsets[1] + 1] = 0xD7
        #expect(decodeError(second) == .restartMismatch(expected: 1, found: 0xD7, offset: rstOffsets[1]))
        var eoiInstead = stream
        eoiInstead[rstOffsets[0] + 1] = 0xD9
        #expect(decodeError(eoiInstead) == .restartMismatch(expected: 0, found: 0xD9, offset: rstOffsets[0]))
        // A DRI that is not a whole number of lines.
        var dri = stream
        let driOffset = try #require(headerOffsets(stream)[0xDD])
        dri[driOffset + 5] = 7
        #expect(decodeError(dri) == .invalidRestartInterval(interval: 7, width: 6))
        // Fill bytes before a restart marker are allowed.
        let filled = Array(stream[0..<rstOffsets[0]]) + [0xFF, 0xFF] + Array(stream[rstOffsets[0]...])
        #expect(try LJ92Decoder.decode(filled).samples == samples)
    }

    @Test("Output buffer too small")
    func outputTooSmall() throws {
        let (stream, _) = try Self.smallStream()
        var output = [UInt16](repeating: 0, count: 59)
        let error = stream.withUnsafeBytes { raw in
            output.withUnsafeMutableBufferPointer { out -> LJ92Error? in
                do throws(LJ92Error) { try LJ92Decoder.decode(raw, into: out); return nil } catch { return error }
            }
        }
        #expect(error == .outputTooSmall(needed: 60, available: 59))
        #expect(error?.category == .invalidArgument)
    }

    @Test("Invalid Huffman codes, markers and segment structure")
    func entropyAndMarkers() {
        let head = soi + frameHeader(width: 4) + zeroTable + scanHeader()
        let scanStart = head.count
        // "0000 0000" decodes four zero differences; a 1-bit matches no code.
        #expect(decodeError(head + [0x00] + eoi) == nil)
        #expect(decodeError(head + [0x08] + eoi) == nil, "bits after the last sample are ignored")
        #expect(decodeError(head + [0x80] + eoi) == .invalidHuffmanCode(offset: scanStart))
        #expect(decodeError(head + [0xFF, 0x00] + eoi) == .invalidHuffmanCode(offset: scanStart))
        let error = LJ92Error.invalidHuffmanCode(offset: 1234)
        #expect(error.description == "corrupt lossless-JPEG stream: invalid Huffman code at byte 1234")
        // Offsets count stuffed bytes: the third byte of the data is the bad one.
        let wide = soi + frameHeader(width: 40) + huffmanTable(counts: [1, 1], symbols: [0, 8]) + scanHeader()
        // Six "0" codes, "10" (category 8) with extra bits 1111 1111 (stuffed as FF 00),
        // eight "0" codes, six more, then "11", which is no code.
        let data: [UInt8] = [0b0000_0010, 0xFF, 0x00, 0x00, 0b0000_0011]
        #expect(decodeError(wide + data + eoi) == .invalidHuffmanCode(offset: wide.count + 4))
        // No EOI, or something else after the scan.
        #expect(decodeError(head + [0x00]) == .truncated(offset: scanStart + 1))
        #expect(decodeError(head + [0x00, 0xFF, 0xD8]) == .unexpectedMarker(marker: 0xD8, offset: scanStart + 1))
        #expect(decodeError(head + [0x00, 0xFF, 0xD0]) == .unexpectedMarker(marker: 0xD0, offset: scanStart + 1))
        // Markers in the wrong place, and bytes where a marker must be.
        #expect(decodeError(soi + [0xFF, 0xD0] + frameHeader()) == .unexpectedMarker(marker: 0xD0, offset: 2))
        #expect(decodeError(soi + eoi) == .unexpectedMarker(marker: 0xD9, offset: 2))
        #expect(decodeError(soi + [0xFF, 0xDC, 0, 4, 0, 1]) == .unexpectedMarker(marker: 0xDC, offset: 2))
        #expect(decodeError(soi + [0x12] + frameHeader()) == .expectedMarker(offset: 2, found: 0x12))
        #expect(decodeError(soi + segment(0xDD, [0, 1, 2]) + frameHeader())
                == .invalidSegmentLength(marker: 0xDD, offset: 2, length: 5))
        #expect(decodeError(soi + [0xFF, 0xFE, 0, 1]) == .invalidSegmentLength(marker: 0xFE, offset: 2, length: 1))
        // APPn and COM segments and fill bytes are skipped.
        let decorated = soi + segment(0xE1, [1, 2, 3]) + [0xFF, 0xFF] + segment(0xFE, Array("hi".utf8))
            + frameHeader(width: 4) + zeroTable + scanHeader() + [0x00] + eoi
        #expect(decodeError(decorated) == nil)
    }

    @Test("At most 7 missing bits at the end of a segment are read as zeros")
    func zeroFillLimit() throws {
        // Each sample takes one bit ("0"), and the entropy-coded data is empty.
        for width in 1...7 {
            let stream = soi + frameHeader(precision: 8, width: width) + zeroTable + scanHeader() + eoi
            let (_, samples) = try LJ92Decoder.decode(stream)
            #expect(samples == [UInt16](repeating: 128, count: width))
        }
        let eight = soi + frameHeader(precision: 8, width: 8) + zeroTable + scanHeader()
        #expect(decodeError(eight + eoi) == .truncated(offset: eight.count))
        // With one byte of data, 15 samples work (8 bits, 7 zeros) and 16 do not.
        let fifteen = soi + frameHeader(precision: 8, width: 15) + zeroTable + scanHeader()
        #expect(try LJ92Decoder.decode(fifteen + [0x00] + eoi).samples == [UInt16](repeating: 128, count: 15))
        let sixteen = soi + frameHeader(precision: 8, width: 16) + zeroTable + scanHeader()
        #expect(decodeError(sixteen + [0x00] + eoi) == .truncated(offset: sixteen.count + 1))
        // The same holds for each restart interval: 2 lines of 7, restart every line.
        let restarted = soi + frameHeader(precision: 8, width: 7, height: 2) + zeroTable + segment(0xDD, [0, 7])
            + scanHeader() + [0xFF, 0xD0] + eoi
        #expect(try LJ92Decoder.decode(restarted).samples == [UInt16](repeating: 128, count: 14))
    }

    @Test("Equivalent header layouts decode identically")
    func headerLayouts() throws {
        var generator = SeededGenerator(seed: 21)
        let samples = randomSamples(7 * 6 * 3, precision: 14, generator: &generator)
        let stream = try LJ92Encoder.encode(samples, width: 7, height: 6, components: 3, precision: 14, predictor: 6)
        // Split the encoder's stream into its segments.
        var segments: [[UInt8]] = []
        var pos = 2
        while true {
            let length = Int(stream[pos + 2]) << 8 | Int(stream[pos + 3])
            segments.append(Array(stream[pos..<(pos + 2 + length)]))
            pos += 2 + length
            if segments.last![1] == 0xDA { break }
        }
        let entropy = Array(stream[pos...])
        let sof = segments.first { $0[1] == 0xC3 }!, sos = segments.last!
        let tables = segments.filter { $0[1] == 0xC4 }
        #expect(tables.count == 3)

        // All three tables in one DHT segment, before the frame header.
        let merged = segment(0xC4, tables.flatMap { $0[4...] })
        let variant1 = soi + merged + sof + sos + entropy
        // Fill bytes, APPn and COM segments, a DRI of 0, and a table defined twice (the
        // later definition wins).
        let decoy = huffmanTable(id: 1, counts: [2], symbols: [0, 1])
        let variant2 = soi + segment(0xE0, Array("JFIF\u{0}".utf8)) + [0xFF, 0xFF, 0xFF] + sof + decoy
            + segment(0xFE, Array("comment".utf8)) + tables.flatMap { $0 } + segment(0xDD, [0, 0]) + [0xFF] + sos + entropy
        for variant in [variant1, variant2] {
            let (frame, decoded) = try LJ92Decoder.decode(variant)
            #expect(decoded == samples)
            #expect(frame.predictor == 6 && frame.components == 3 && frame.precision == 14)
        }
    }

    @Test("A frame larger than the data could encode is refused before any allocation")
    func implausibleFrame() {
        let huge = soi + frameHeader(precision: 16, width: 65535, height: 65535,
                                     components: [(0, 0x11), (1, 0x11), (2, 0x11), (3, 0x11)])
            + zeroTable + scanHeader(components: 4) + [0x00] + eoi
        let count = huge.count
        #expect(decodeError(huge) == .truncated(offset: count))
        let frameError: LJ92Error? = huge.withUnsafeBytes { raw in
            do throws(LJ92Error) { _ = try LJ92Decoder.readFrame(raw); return nil } catch { return error }
        }
        #expect(frameError == .truncated(offset: count))
    }

    @Test("Point transform: decoded values are shifted left by Pt")
    func pointTransform() throws {
        var generator = SeededGenerator(seed: 8)
        let samples = randomSamples(9 * 4, precision: 10, generator: &generator)
        // Coded with 10 bits; declared as 12 bits with Pt = 2, the default prediction
        // 2^(12-2-1) is the same, and the values come out multiplied by 4.
        var stream = try LJ92Encoder.encode(samples, width: 9, height: 4, components: 1, precision: 10, predictor: 5)
        let offsets = headerOffsets(stream)
        let sof = try #require(offsets[0xC3]), sos = try #require(offsets[0xDA])
        stream[sof + 4] = 12
        stream[sos + 4 + 1 + 2 + 2] = 2
        let (frame, decoded) = try LJ92Decoder.decode(stream)
        #expect(frame.pointTransform == 2)
        #expect(frame.precision == 12)
        #expect(decoded == samples.map { $0 << 2 })
    }
}
