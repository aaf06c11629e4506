import Dispatch
import Foundation
import LosslessJPEG
import Testing
import TestSupport

/// Throughput measurements, printed only: run with `LJ92_BENCH=1 swift test -c release
/// --filter LosslessJPEGTests.Benchmarks`. Nothing here is asserted on time.
@Suite("Benchmarks (LJ92_BENCH=1)", .enabled(if: ProcessInfo.processInfo.environment["LJ92_BENCH"] == "1"),
       .serialized)
struct Benchmarks {
    @Test("Decode throughput of the shared streams", arguments: ["linearraw.ljp", "dng1.ljp", "dng7.ljp"])
    func decode(name: String) throws {
        let stream = try sharedStream(name)
        let frame = try stream.withUnsafeBytes { try LJ92Decoder.readFrame($0) }
        var output = [UInt16](repeating: 0, count: frame.sampleCount)
        let seconds = try stream.withUnsafeBytes { raw in
            try output.withUnsafeMutableBufferPointer { out in
                try bestTime(200) { _ = try LJ92Decoder.decode(raw, into: out) }
            }
        }
        print(String(format: "LJ92 decode %@: %d samples in %.3f ms: %.1f Msamples/s (%.2f bits/sample)",
                     name, frame.sampleCount, seconds * 1e3, Double(frame.sampleCount) / seconds / 1e6,
                     Double(stream.count * 8) / Double(frame.sampleCount)))
    }

    @Test("Encode throughput (ProRAW tile, and a 12 MP image in 64 tiles on all cores)")
    func encode() throws {
        let stream = try sharedStream("linearraw.ljp")
        let (frame, samples) = try LJ92Decoder.decode(stream)
        var encoded: [UInt8] = []
        let seconds = try bestTime(50) {
            encoded = try LJ92Encoder.encode(samples, width: frame.width, height: frame.height,
                                             components: frame.components, precision: frame.precision, predictor: 7)
        }
        #expect(try LJ92Decoder.decode(encoded).samples == samples)
        print(String(format: "LJ92 encode linearraw: %.3f ms: %.1f Msamples/s, %d bytes (original %d)",
                     seconds * 1e3, Double(frame.sampleCount) / seconds / 1e6, encoded.count, stream.count))

        let tiles = 64
        let image = bestTime(5) {
            DispatchQueue.concurrentPerform(iterations: tiles) { _ in
                _ = try? LJ92Encoder.encode(samples, width: frame.width, height: frame.height,
                                            components: frame.components, precision: frame.precision, predictor: 7)
            }
        }
        print(String(format: "LJ92 encode %d tiles (%.1f Msamples) on %d cores: %.3f s",
                     tiles, Double(tiles * frame.sampleCount) / 1e6, ProcessInfo.processInfo.activeProcessorCount, image))

        let decodeImage = try stream.withUnsafeBytes { raw in
            try bestTime(5) {
                for _ in 0..<tiles {
                    var out = [UInt16](repeating: 0, count: frame.sampleCount)
                    try out.withUnsafeMutableBufferPointer { _ = try LJ92Decoder.decode(raw, into: $0) }
                }
            }
        }
        print(String(format: "LJ92 decode %d tiles single-threaded (with output allocation): %.3f s", tiles, decodeImage))
    }
}
