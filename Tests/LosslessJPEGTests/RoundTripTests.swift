import LosslessJPEG
import Testing
import TestSupport

/// Random samples of `precision` bits.
func randomSamples(_ count: Int, precision: Int, generator: inout SeededGenerator) -> [UInt16] {
    let top = UInt16((1 << precision) - 1)
    return (0..<count).map { _ in UInt16.random(in: 0...top, using: &generator) }
}

/// A smooth image (gradients, a little noise) of `precision` bits, like camera data.
func smoothSamples(width: Int, height: Int, components: Int, precision: Int,
                   generator: inout SeededGenerator) -> [UInt16] {
    let top = (1 << precision) - 1
    var out = [UInt16](repeating: 0, count: width * height * components)
    for y in 0..<height {
        for x in 0..<width {
            for c in 0..<components {
                let base = (x * 3 + y * 2 + c * 100) % (top + 1)
                let noise = Int.random(in: -3...3, using: &generator)
                out[(y * width + x) * components + c] = UInt16(min(max(base + noise, 0), top))
            }
        }
    }
    return out
}

/// Encodes, decodes, and checks samples and frame; returns the stream.
@discardableResult
func roundTrip(_ samples: [UInt16], width: Int, height: Int, components: Int, precision: Int,
               predictor: Int, restartLines: Int = 0,
               sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
    let interval = restartLines * width
    let stream = try LJ92Encoder.encode(samples, width: width, height: height, components: components,
                                        precision: precision, predictor: predictor, restartInterval: interval)
    let (frame, decoded) = try LJ92Decoder.decode(stream)
    let expected = LJ92Frame(width: width, height: height, components: components, precision: precision,
                             predictor: predictor, pointTransform: 0, restartInterval: interval)
    #expect(frame == expected, sourceLocation: sourceLocation)
    #expect(decoded == samples,
            "round trip \(width)×\(height)×\(components), \(precision) bits, predictor \(predictor), restart \(restartLines) lines",
            sourceLocation: sourceLocation)
    return stream
}

@Suite("Encoder and decoder round trips")
struct RoundTripTests {
    static let sizes: [(width: Int, height: Int)] = [(1, 1), (1, 9), (9, 1), (17, 13), (2, 2), (31, 3)]
    static let precisions = [2, 8, 12, 14, 16]

    @Test("Random samples: components × precisions × sizes × restart intervals", arguments: 1...7)
    func randomRoundTrips(predictor: Int) throws {
        var generator = SeededGenerator(seed: UInt64(predictor) * 7919)
        for components in 1...4 {
            for precision in Self.precisions {
                for size in Self.sizes {
                    for restartLines in [0, 1, 7] {
                        let samples = randomSamples(size.width * size.height * components, precision: precision,
                                                    generator: &generator)
                        try roundTrip(samples, width: size.width, height: size.height, components: components,
                                      precision: precision, predictor: predictor, restartLines: restartLines)
                    }
                }
            }
        }
    }

    @Test("Smooth samples compress and round-trip", arguments: 1...7)
    func smoothRoundTrips(predictor: Int) throws {
        var generator = SeededGenerator(seed: 42 + UInt64(predictor))
        for components in 1...4 {
            for precision in [12, 14, 16] {
                let samples = smoothSamples(width: 64, height: 40, components: components, precision: precision,
                                            generator: &generator)
                let stream = try roundTrip(samples, width: 64, height: 40, components: components,
                                           precision: precision, predictor: predictor, restartLines: 8)
                // Noise of ±3 costs about 3–5 bits a sample; the raw samples take `precision`.
                #expect(stream.count * 8 < samples.count * 7, "\(stream.count) bytes for \(samples.count) samples")
            }
        }
    }

    @Test("Constant images take about one bit per sample")
    func constantImage() throws {
        let samples = [UInt16](repeating: 1234, count: 100 * 50 * 3)
        let stream = try roundTrip(samples, width: 100, height: 50, components: 3, precision: 12, predictor: 1)
        let layout = StreamLayout(stream)
        // One category (0, after the first sample) dominates: a 1-bit code.
        #expect(layout.tables.count == 3)
        #expect(stream.count - layout.scanStart < samples.count / 8 + 16)
    }

    @Test("Difference category 16 (difference 32768) in 16-bit data")
    func category16() throws {
        // 0, 32768, 0, ...: every difference is 32768 modulo 2^16, including the first
        // (0 - 32768 from the default prediction).
        let halves = (0..<(9 * 7)).map { UInt16($0 % 2 == 0 ? 0 : 32768) }
        for predictor in 1...7 {
            let stream = try roundTrip(halves, width: 9, height: 7, components: 1, precision: 16, predictor: predictor)
            let layout = StreamLayout(stream)
            #expect(layout.tables[0].symbols.contains(16), "predictor \(predictor) codes category 16")
        }
        // Extremes 0 and 65535 alternating, per pixel and per component.
        let extremes = (0..<(11 * 5 * 2)).map { UInt16(($0 / 2 + $0 / 22) % 2 == 0 ? 0 : 65535) }
        for predictor in 1...7 {
            for restartLines in [0, 1, 2] {
                try roundTrip(extremes, width: 11, height: 5, components: 2, precision: 16, predictor: predictor,
                              restartLines: restartLines)
            }
        }
        let stream = try roundTrip(extremes, width: 11, height: 5, components: 2, precision: 16, predictor: 1)
        #expect(StreamLayout(stream).tables.allSatisfy { $0.symbols.contains(16) })
    }

    @Test("Restart markers: one per interval boundary, RST0...RST7 cycling, EOI last")
    func restartMarkers() throws {
        var generator = SeededGenerator(seed: 5)
        let samples = randomSamples(3 * 20 * 2, precision: 10, generator: &generator)
        let stream = try roundTrip(samples, width: 3, height: 20, components: 2, precision: 10, predictor: 4,
                                   restartLines: 1)
        let layout = StreamLayout(stream)
        #expect(layout.headerMarkers == [0xD8, 0xC3, 0xC4, 0xC4, 0xDD, 0xDA])
        #expect(layout.scanMarkers == (0..<19).map { 0xD0 + UInt8($0 % 8) } + [0xD9])

        let unrestarted = try roundTrip(samples, width: 3, height: 20, components: 2, precision: 10, predictor: 4)
        let plain = StreamLayout(unrestarted)
        #expect(plain.headerMarkers == [0xD8, 0xC3, 0xC4, 0xC4, 0xDA])
        #expect(plain.scanMarkers == [0xD9])

        // A restart interval longer than the image: no RST markers.
        let long = try roundTrip(samples, width: 3, height: 20, components: 2, precision: 10, predictor: 4,
                                 restartLines: 25)
        #expect(StreamLayout(long).scanMarkers == [0xD9])
    }

    @Test("Huffman code lengths are limited to 16 bits and never all ones")
    func lengthLimitedCodes() throws {
        // Category c occurs fib(c + 2) times: an unlimited Huffman code would need 17 bits.
        var fib = [1, 1]
        while fib.count < 19 { fib.append(fib[fib.count - 1] + fib[fib.count - 2]) }
        var differences: [Int] = []
        for category in 0...16 {
            let d = category == 0 ? 0 : (category == 16 ? 32768 : 1 << (category - 1))
            differences += [Int](repeating: d, count: fib[category + 2])
        }
        var generator = SeededGenerator(seed: 99)
        differences.shuffle(using: &generator)
        var value = 32768
        let samples = differences.map { d -> UInt16 in
            value = (value + d) & 0xFFFF
            return UInt16(value)
        }
        let stream = try roundTrip(samples, width: samples.count, height: 1, components: 1, precision: 16,
                                   predictor: 1)
        let table = try #require(StreamLayout(stream).tables.first)
        #expect(table.symbols.count == 17)
        #expect(table.longestCode == 16)
        #expect(table.kraftSum < 65536, "the all-ones code is reserved")
        // The most frequent category has the shortest code.
        #expect(table.symbols.first == 16)
    }

    @Test("Every table of random streams is a complete code less the all-ones point")
    func tablesAreTight() throws {
        var generator = SeededGenerator(seed: 3)
        for precision in [2, 8, 16] {
            let samples = randomSamples(50 * 20 * 3, precision: precision, generator: &generator)
            let stream = try roundTrip(samples, width: 50, height: 20, components: 3, precision: precision,
                                       predictor: 6)
            for table in StreamLayout(stream).tables {
                #expect(table.longestCode <= 16)
                #expect(table.kraftSum == 65536 - (65536 >> table.longestCode))
                #expect(Set(table.symbols).count == table.symbols.count)
            }
        }
    }

    @Test("A sample wider than the precision is refused")
    func sampleOutOfRange() {
        #expect(throws: LJ92Error.sampleExceedsPrecision(index: 3, value: 4, precision: 2)) {
            try LJ92Encoder.encode([0, 1, 3, 4, 2, 7], width: 3, height: 2, components: 1, precision: 2)
        }
        #expect(throws: LJ92Error.sampleExceedsPrecision(index: 1, value: 4096, precision: 12)) {
            try LJ92Encoder.encode([4095, 4096], width: 1, height: 1, components: 2, precision: 12)
        }
    }
}
