import Dispatch
import Foundation
import Testing
import DNGContainer
import DNGWriter
import ImageCore
import RawDecode
import TestSupport

/// Stage 1 throughput, printed only: run with `SCENELINEAR_BENCHMARK=1 swift test -c release
/// --filter RawDecodeTests.Benchmarks`. Nothing here is asserted on time.
@Suite("Stage 1 benchmarks (SCENELINEAR_BENCHMARK=1)",
       .enabled(if: ProcessInfo.processInfo.environment["SCENELINEAR_BENCHMARK"] == "1"), .serialized)
struct Benchmarks {
    static func bestTime(_ repeats: Int, _ body: () throws -> Void) rethrows -> Double {
        var best = Double.infinity
        for _ in 0..<repeats {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        return best
    }

    /// A 4032×3024 LinearRaw image like a ProRAW capture: 12-bit, a smooth scene plus noise
    /// of a few codes (about 4–5 bits/sample after lossless JPEG), 504×378 tiles.
    static func noisySamples(width: Int, height: Int, bits: Int) -> [UInt16] {
        var rng = SeededGenerator(seed: 42)
        let top = Double((1 << bits) - 1)
        var out = [UInt16](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let base = 0.05 + 0.6 * Double(x) / Double(width) * Double(y) / Double(height)
                for p in 0..<3 {
                    let v = base * top * (0.7 + 0.15 * Double(p)) + Double(Int.random(in: -12...12, using: &rng))
                    out[(y * width + x) * 3 + p] = UInt16(max(0, min(top, v)))
                }
            }
        }
        return out
    }

    @Test("12 MP lossless-JPEG LinearRaw decode")
    func losslessJPEG12MP() throws {
        let dir = TestData.temporaryDirectory("bench")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (w, h) = (4032, 3024)
        var spec = LinearRawDNG(width: w, height: h, samples: Self.noisySamples(width: w, height: h, bits: 12))
        spec.bitsPerSample = 12
        spec.whiteLevel = [4095, 4095, 4095]
        spec.compression = .losslessJPEG(predictor: 1)
        spec.tileSize = (512, 384)
        let path = dir.appendingPathComponent("lj92.dng").path
        try DNGWriter.write(spec, to: path)
        let dng = try DNGFile.open(path: path)
        let raw = try dng.mainRawImage()
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        _ = try RawDecoder.decode(dng, ifd: raw)
        let seconds = try Self.bestTime(7) { _ = try RawDecoder.decode(dng, ifd: raw) }
        print(String(format: "Stage 1, 12 MP LJ92 (%.2f bits/sample, %d threads): %.1f ms, %.0f Msamples/s",
                     Double(size * 8) / Double(w * h * 3), Parallel.threadCount, seconds * 1e3, Double(w * h * 3) / seconds / 1e6))
    }
}
