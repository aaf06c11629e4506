import CEXRZip
import Testing

/// The ZIP chunk kernels (16 bytes at a time) against the format's definition, one byte at a
/// time, over lengths that leave every tail and on random bytes.
struct EXRZipKernelTests {
    /// A small deterministic generator (xorshift64*), so a failure repeats.
    struct Bytes {
        var state: UInt64
        mutating func next() -> UInt8 {
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            return UInt8(truncatingIfNeeded: (state &* 0x2545_F491_4F6C_DD1D) >> 56)
        }
        mutating func array(_ count: Int) -> [UInt8] { (0..<count).map { _ in next() } }
    }

    @Test func unpredictMatchesTheDefinition() {
        var random = Bytes(state: 0x9E37_79B9_7F4A_7C15)
        for count in Array(0...70) + [1023, 4096, 65_537] {
            let stored = random.array(count)
            var expected = stored
            for i in expected.indices.dropFirst() { expected[i] = expected[i - 1] &+ stored[i] &- 128 }
            var actual = stored
            actual.withUnsafeMutableBufferPointer { cexrzip_unpredict($0.baseAddress, count) }
            #expect(actual == expected, "\(count) bytes")
        }
    }

    @Test func interleaveMatchesTheDefinition() {
        var random = Bytes(state: 42)
        for pairs in Array(0...40) + [1000, 4099] {
            let low = random.array(pairs), high = random.array(pairs)
            var expected = [UInt8](repeating: 0, count: 2 * pairs)
            for i in 0..<pairs { expected[2 * i] = low[i]; expected[2 * i + 1] = high[i] }
            var actual = [UInt8](repeating: 0xAA, count: 2 * pairs)
            actual.withUnsafeMutableBufferPointer { out in cexrzip_interleave(low, high, pairs, out.baseAddress) }
            #expect(actual == expected, "\(pairs) pairs")
        }
    }
}
