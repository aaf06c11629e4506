import Foundation
import Testing
import ImageCore

/// The half conversion rounds as `Float16(_:)` does and counts the values that came out
/// infinite or NaN, in the vector loop and in its scalar tail, on one thread and split.
@Suite struct HalfConversionTests {
    @Test func countsValuesBeyondTheRange() throws {
        // 65519.99 rounds to 65504; 65520 and beyond round to infinity.
        let edge: [Float] = [1, -2.5, 65504, 65519.99, 65520, -65520, 1e6, .infinity, -.infinity, .nan, 0, 6e-8]
        let expectedNonFinite = 6
        for length in [edge.count, 8, 9, 17, 1000] {
            // The edge values at the start (vector loop) and at the end (tail) of the buffer.
            var values = [Float](repeating: 0.5, count: max(length, edge.count))
            for (i, v) in edge.enumerated() { values[i] = v }
            var out = [Float16](repeating: 0, count: values.count)
            let n = values.withUnsafeBufferPointer { s in out.withUnsafeMutableBufferPointer { HalfConversion.convert(s, to: $0) } }
            #expect(n == expectedNonFinite, "length \(length)")
            for (v, h) in zip(values, out) where !v.isNaN {
                #expect(h.bitPattern == Float16(v).bitPattern, "\(v)")
            }
            var tail = [Float](repeating: 0.25, count: length)
            for (i, v) in edge.suffix(min(length, edge.count)).enumerated() { tail[length - min(length, edge.count) + i] = v }
            var tailOut = [Float16](repeating: 0, count: length)
            let m = tail.withUnsafeBufferPointer { s in tailOut.withUnsafeMutableBufferPointer { HalfConversion.convert(s, to: $0) } }
            #expect(m == tail.filter { !Float16($0).isFinite }.count, "tail, length \(length)")
        }
        // Large buffers are split across threads: the counts add up.
        var big = [Float](repeating: 1, count: 3 << 19)
        for i in stride(from: 5, to: big.count, by: 100_003) { big[i] = 1e9 }
        var bigOut = [Float16](repeating: 0, count: big.count)
        let count = big.withUnsafeBufferPointer { s in bigOut.withUnsafeMutableBufferPointer { HalfConversion.convert(s, to: $0) } }
        #expect(count == Array(stride(from: 5, to: big.count, by: 100_003)).count)
        #expect(throws: HalfRangeError(what: "x.exr", count: 1)) { try HalfConversion.checkedHalves([1, 70000], what: "x.exr") }
        #expect(try HalfConversion.checkedHalves([1, 65504], what: "x.exr") == [1, 65504])
    }
}
