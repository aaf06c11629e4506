import Foundation
import ImageCore
import EXRExchange
import HDF5Exchange
import Testing
import TestSupport

/// Write/read timings and file sizes for every EXR compression and HDF5 setting on a
/// 12-megapixel noisy image. Runs only with `SCENELINEAR_BENCHMARK=1` (use a release
/// build: `swift test -c release --filter ExchangeBenchmark`); prints a table, asserts
/// nothing about time.
@Suite("Exchange benchmark", .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["SCENELINEAR_BENCHMARK"] == "1"))
struct ExchangeBenchmark {
    /// 4032×3024 RGB: a smooth scene spanning 14 stops (2^-14 … 1, some highlights up to 4)
    /// with seeded shot and read noise, as a demosaiced raw photo looks.
    static func noisyImage(width: Int = 4032, height: Int = 3024) -> SceneLinearImage {
        var samples = [Float](repeating: 0, count: width * height * 3)
        var rng = SeededGenerator(seed: 2024)
        let tint: [Float] = [0.82, 1.0, 0.67]
        for y in 0..<height {
            let fy = Float(y) / Float(height)
            for x in 0..<width {
                let fx = Float(x) / Float(width)
                let stops = 14 * (0.5 + 0.35 * sinf(6.1 * fx + 2.3 * fy) + 0.15 * cosf(17 * fy * fx))
                let base = exp2f(2 - min(16, max(0, stops)))
                for c in 0..<3 {
                    let signal = base * tint[c]
                    // Sum of uniforms ≈ Gaussian; shot noise ∝ √signal plus read noise.
                    let u = Float(rng.next() >> 40) / Float(1 << 24) + Float(rng.next() >> 40) / Float(1 << 24) - 1
                    let sigma = (signal / 4000).squareRoot() + 0.0002
                    samples[(y * width + x) * 3 + c] = signal + 2.45 * u * sigma
                }
            }
        }
        return SceneLinearImage(pixels: ImageBuffer(width: width, height: height, channels: 3, samples: samples),
                                clipMask: nil, encoding: .linearRec2020, exposure: .none,
                                provenance: Fixture.provenance())
    }

    static func time(_ body: () throws -> Void) rethrows -> Double { try bestTime(2, body) }

    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
    }

    @Test("EXR and HDF5 write/read times and sizes")
    func table() throws {
        let dir = TestData.temporaryDirectory("bench")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Self.noisyImage()
        let raw = Double(image.width * image.height * 3 * 2)
        var lines = ["| format | setting | threads | write s | read s | MB | ratio |", "|---|---|---|---|---|---|---|"]
        func row(_ format: String, _ setting: String, _ threads: Int, _ w: Double, _ r: Double, _ bytes: Int) {
            lines.append(String(format: "| %@ | %@ | %d | %.3f | %.3f | %.1f | %.2f |", format, setting, threads, w, r,
                                Double(bytes) / 1e6, raw / Double(bytes)))
            print(lines.last!)
        }
        var exrCases: [(String, EXROptions)] = EXRCompression.allCases.map {
            ($0.rawValue + ($0 == .zip || $0 == .zips ? " (run-length deflate)" : ""), EXROptions(compression: $0, zipLevel: nil))
        }
        if ProcessInfo.processInfo.environment["SCENELINEAR_BENCHMARK_HDF5_ONLY"] == "1" { exrCases = [] }
        for level in [1, 4, 6] where !exrCases.isEmpty {
            exrCases.append(("zip, libdeflate level \(level)", EXROptions(compression: .zip, zipLevel: level)))
        }
        for (name, options) in exrCases {
            for threads in [1, 2] {
                let path = dir.appendingPathComponent("b.exr").path
                let w = try withThreadCount(threads) { try Self.time { try EXRFile.write(image, to: path, options: options) } }
                let r = try withThreadCount(threads) { try Self.time { _ = try EXRFile.read(path) } }
                row("EXR", name, threads, w, r, Self.size(path))
            }
        }
        let h5Cases: [(String, HDF5Options)] = [
            ("none", HDF5Options(compression: .none)),
            ("run-length deflate + shuffle (default)", HDF5Options()),
            ("run-length deflate, no shuffle", HDF5Options(shuffle: false)),
            ("deflate 1 + shuffle", HDF5Options(compression: .deflate(level: 1))),
            ("deflate 4 + shuffle", HDF5Options(compression: .deflate(level: 4))),
            ("deflate 6 + shuffle", HDF5Options(compression: .deflate(level: 6))),
            ("deflate 4, no shuffle", HDF5Options(compression: .deflate(level: 4), shuffle: false)),
            ("run-length deflate + shuffle, 4 rows", HDF5Options(chunkRows: 4)),
            ("run-length deflate + shuffle, 64 rows", HDF5Options(chunkRows: 64)),
            ("run-length deflate + shuffle, 256 rows", HDF5Options(chunkRows: 256)),
        ]
        for (name, options) in h5Cases {
            for threads in [1, 2] {
                let path = dir.appendingPathComponent("b.h5").path
                let w = try withThreadCount(threads) { try Self.time { try HDF5File.write(image, to: path, options: options) } }
                let r = try withThreadCount(threads) { try Self.time { _ = try HDF5File.readSceneLinear(path) } }
                row("HDF5", name, threads, w, r, Self.size(path))
            }
        }
        print(lines.joined(separator: "\n"))
    }
}
