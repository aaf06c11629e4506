import CDeflate
import CZlib
import Foundation
@testable import RunLengthDeflate
import Testing
import TestSupport

/// The encoder's streams decode, with zlib and with libdeflate, to the exact input, for
/// data of every kind a block can meet; its Huffman codes are valid and length-limited.
@Suite struct RunLengthDeflaterTests {
    static func compress(_ data: [UInt8], period: Int = 1) -> [UInt8] {
        let deflater = RunLengthDeflater(period: period)
        var out = [UInt8](repeating: 0, count: RunLengthDeflater.zlibBound(data.count))
        let size = data.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                deflater.zlibCompress(src.baseAddress ?? UnsafePointer(bitPattern: 1)!, count: data.count,
                                      into: dst.baseAddress!, capacity: dst.count)
            }
        }
        return Array(out[0..<size])
    }

    /// Decodes with zlib's `uncompress` and with libdeflate; both must give `expected`.
    static func checkRoundTrip(_ data: [UInt8], _ label: String, period: Int = 1) {
        let stream = compress(data, period: period)
        #expect(stream.count > 0 && stream.count <= RunLengthDeflater.zlibBound(data.count), "\(label)")
        var decoded = [UInt8](repeating: 0, count: max(1, data.count))
        var length = uLongf(decoded.count)
        let status = uncompress(&decoded, &length, stream, uLong(stream.count))
        #expect(status == Z_OK, "\(label): zlib status \(status)")
        #expect(Int(length) == data.count && Array(decoded[0..<Int(length)]) == data, "\(label): zlib output differs")

        let d = libdeflate_alloc_decompressor()!
        defer { libdeflate_free_decompressor(d) }
        var again = [UInt8](repeating: 0, count: max(1, data.count))
        var actual = 0
        let result = libdeflate_zlib_decompress(d, stream, stream.count, &again, again.count, &actual)
        #expect(result == LIBDEFLATE_SUCCESS && actual == data.count && Array(again[0..<actual]) == data,
                "\(label): libdeflate result \(result.rawValue)")
    }

    @Test func roundTripsEveryKindOfInput() {
        var rng = SeededGenerator(seed: 42)
        Self.checkRoundTrip([], "empty")
        Self.checkRoundTrip([7], "one byte")
        Self.checkRoundTrip([7, 7], "two equal bytes")
        Self.checkRoundTrip([7, 7, 7, 7], "a run after the first byte")
        Self.checkRoundTrip([UInt8](repeating: 0, count: 300_000), "all zero (runs of 258 across blocks)")
        Self.checkRoundTrip((0..<200_000).map { _ in UInt8.random(in: 0...255, using: &rng) }, "uniform noise (stored blocks)")
        Self.checkRoundTrip((0..<(65_535 * 2 + 1)).map { _ in UInt8.random(in: 0...255, using: &rng) }, "noise, block edge + 1")
        // Skewed: a geometric distribution around 128, as differences of smooth data.
        let skewed = (0..<150_000).map { _ -> UInt8 in
            var v = 128
            while Int.random(in: 0..<3, using: &rng) == 0 { v += Bool.random(using: &rng) ? 1 : -1 }
            return UInt8(v)
        }
        Self.checkRoundTrip(skewed, "skewed")
        // Runs of every length 1–300 between literals, and of two alternating bytes.
        var runs: [UInt8] = []
        for length in 1...300 { runs += [UInt8](repeating: UInt8(length % 7), count: length) + [200] }
        Self.checkRoundTrip(runs, "runs of every length")
        Self.checkRoundTrip((0..<70_000).map { UInt8($0 % 2) }, "alternating")
        // Half-float byte planes of a noisy ramp, as EXR's ZIP prepares them.
        var planes: [UInt8] = []
        let values = (0..<60_000).map { i in Float16(Float(i) / 60_000 + Float.random(in: 0..<0.001, using: &rng)) }
        planes += values.map { UInt8(truncatingIfNeeded: $0.bitPattern) }
        planes += values.map { UInt8(truncatingIfNeeded: $0.bitPattern >> 8) }
        Self.checkRoundTrip(planes, "half-float byte planes")
        for n in [3, 257, 258, 259, 65_534, 65_535, 65_536] {
            Self.checkRoundTrip((0..<n).map { UInt8(($0 / 300) % 3) }, "runs, \(n) bytes")
        }
    }

    /// Random lengths and contents: a small fuzz of the block logic.
    @Test func randomInputsRoundTrip() {
        var rng = SeededGenerator(seed: 7)
        for trial in 0..<60 {
            let n = Int.random(in: 0..<140_000, using: &rng)
            let alphabet = Int.random(in: 1...256, using: &rng)
            let runChance = Double.random(in: 0..<1, using: &rng)
            var data: [UInt8] = []
            data.reserveCapacity(n)
            while data.count < n {
                if let last = data.last, Double.random(in: 0..<1, using: &rng) < runChance {
                    data += [UInt8](repeating: last, count: min(n - data.count, Int.random(in: 1...400, using: &rng)))
                } else {
                    data.append(UInt8(Int.random(in: 0..<alphabet, using: &rng)))
                }
            }
            let period = trial % 4 + 1
            Self.checkRoundTrip(data, "trial \(trial): \(n) bytes, alphabet \(alphabet), runs \(runChance), period \(period)",
                                period: period)
        }
    }

    /// Interleaved three-byte pixels: matches at distance 3 round-trip and pay off.
    @Test func periodMatches() {
        var rng = SeededGenerator(seed: 5)
        var pixels: [UInt8] = []
        for i in 0..<120_000 {
            let base: [UInt8] = [UInt8(40 + i / 4000), UInt8(90 + i / 6000), UInt8(10 + i / 9000)]
            pixels += base.map { Int.random(in: 0..<6, using: &rng) == 0 ? $0 &+ 1 : $0 }
        }
        for period in 1...4 { Self.checkRoundTrip(pixels, "pixels, period \(period)", period: period) }
        Self.checkRoundTrip([1, 2, 3, 1, 2, 3, 1, 2, 3, 1], "tiny, period 3", period: 3)
        let runsOnly = Self.compress(pixels).count, withPeriod = Self.compress(pixels, period: 3).count
        #expect(Double(withPeriod) < 0.8 * Double(runsOnly), "period 3: \(withPeriod) bytes, runs only \(runsOnly)")
    }

    /// Compressible data gets much smaller; incompressible data grows by at most 5 bytes a
    /// block plus the zlib header and checksum.
    @Test func sizes() {
        #expect(Self.compress([UInt8](repeating: 9, count: 1_000_000)).count < 6_000)
        var rng = SeededGenerator(seed: 3)
        let noise = (0..<1_000_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let blocks = (noise.count + 65_534) / 65_535
        #expect(Self.compress(noise).count <= noise.count + 5 * blocks + 6)
        // Data whose redundancy is in its byte statistics and runs: no larger than zlib's
        // default level makes it (+1 %), which searches matches at every distance.
        let four = (0..<400_000).map { _ in UInt8.random(in: 0..<4, using: &rng) * 50 + 1 }
        var skewed: [UInt8] = []
        for _ in 0..<300_000 {
            var v = 128
            while Int.random(in: 0..<3, using: &rng) == 0 { v += Bool.random(using: &rng) ? 1 : -1 }
            skewed += [UInt8](repeating: UInt8(v), count: Int.random(in: 0..<8, using: &rng) == 0 ? 5 : 1)
        }
        for (data, label) in [(four, "four symbols"), (skewed, "skewed with runs")] {
            var bound = compressBound(uLong(data.count))
            var reference = [UInt8](repeating: 0, count: Int(bound))
            #expect(compress2(&reference, &bound, data, uLong(data.count), 6) == Z_OK)
            let size = Self.compress(data).count
            #expect(Double(size) <= Double(bound) * 1.01, "\(label): \(size) bytes, zlib level 6 \(bound)")
        }
    }

    /// Lengths form a complete prefix code (Kraft sum 1) within the limit, also for counts
    /// whose optimal code would be deeper (Fibonacci counts).
    @Test func huffmanLengthsAreLimitedAndComplete() {
        var fibonacci: [UInt32] = [1, 1]
        while fibonacci.count < 30 { fibonacci.append(fibonacci[fibonacci.count - 1] + fibonacci[fibonacci.count - 2]) }
        var rng = SeededGenerator(seed: 11)
        let cases: [([UInt32], Int)] = [
            (fibonacci, 15), (fibonacci, 7), (Array(fibonacci.prefix(19)), 7),
            ((0..<286).map { _ in UInt32.random(in: 0...1000, using: &rng) }, 15),
            ([0, 0, 5, 0], 15), ([3, 3], 7), ((0..<286).map { UInt32($0 % 5 == 0 ? 1 << ($0 % 25) : 0) }, 15),
        ]
        for (counts, maxBits) in cases {
            let lengths = HuffmanCode.lengths(counts, maxBits: maxBits)
            #expect(lengths.allSatisfy { $0 <= maxBits })
            for (s, c) in counts.enumerated() where c > 0 { #expect(lengths[s] > 0) }
            let kraft = lengths.reduce(0.0) { $1 > 0 ? $0 + pow(2.0, -Double($1)) : $0 }
            #expect(abs(kraft - 1) < 1e-12, "counts \(counts.prefix(8))…, max \(maxBits): Kraft sum \(kraft)")
        }
        // Unlimited, the lengths are optimal: equal to the depths of a Huffman tree.
        let lengths = HuffmanCode.lengths([1, 1, 2, 4, 8], maxBits: 15)
        #expect(lengths == [4, 4, 3, 2, 1])
    }
}
