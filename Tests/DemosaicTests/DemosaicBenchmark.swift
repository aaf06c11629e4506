import DNGContainer
import Demosaic
import Foundation
import ImageCore
import Linearize
import Testing
import TestSupport

/// Throughput of every method on a 12-megapixel (4032 × 3024) mosaic. Runs only with
/// `DEMOSAIC_BENCH=1`, and means something only in a release build:
/// `DEMOSAIC_BENCH=1 swift test -c release -Xswiftc -enable-testing --filter DemosaicBenchmark`
/// (other test targets use `@testable`). Prints a table (best of three runs per method);
/// asserts nothing about time.
@Suite("Demosaic benchmark", .serialized, .enabled(if: ProcessInfo.processInfo.environment["DEMOSAIC_BENCH"] == "1"))
struct DemosaicBenchmark {
    /// A noisy RGGB mosaic (12 MP by default) spanning 8 stops, with a few clipped highlights.
    static func mosaic(width: Int = 4032, height: Int = 3024) -> (image: LinearImage, cfa: CFADescription) {
        var values = [Float](repeating: 0, count: width * height)
        var clip = [UInt8](repeating: 0, count: width * height)
        var rng = SeededGenerator(seed: 12)
        for y in 0..<height {
            let fy = Float(y) / Float(height)
            for x in 0..<width {
                let fx = Float(x) / Float(width)
                let stops = 10 * (0.5 + 0.4 * sinf(7.3 * fx + 3.1 * fy) * cosf(11 * fy - 2 * fx))
                let u = Float(rng.next() >> 40) / Float(1 << 24) - 0.5
                let v = exp2f(1 - stops) * (1 + 0.02 * u) + 0.0005 * u
                values[y * width + x] = min(v, 1)
                clip[y * width + x] = v >= 1 ? 1 : 0
            }
        }
        let cfa = Phase.rggb.cfa
        return (Mosaicking.linearImage(values: values, clip: clip, width: width, height: height, cfa: cfa), cfa)
    }

    /// CPU time used by the whole process so far, in seconds.
    static func processCPUSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// Wall-clock throughput (best of three) and throughput per CPU-second (the second
    /// does not depend on other load on a shared machine).
    @Test("Mpixel/s per method on 12 MP")
    func throughput() throws {
        // DEMOSAIC_BENCH_SIZE=8064x6048 measures a 48 MP mosaic instead.
        let size = (ProcessInfo.processInfo.environment["DEMOSAIC_BENCH_SIZE"] ?? "4032x3024").split(separator: "x")
        let (image, cfa) = Self.mosaic(width: Int(size[0]) ?? 4032, height: Int(size.last!) ?? 3024)
        let megapixels = Double(image.width * image.height) / 1e6
        var lines = ["| method | threads | best wall s | Mpixel/s (wall) | Mpixel per CPU-second |", "|---|---|---|---|---|"]
        for method in DemosaicMethod.allCases {
            var best = Double.infinity, bestCPU = Double.infinity
            for _ in 0..<3 {
                let start = DispatchTime.now().uptimeNanoseconds, cpu = Self.processCPUSeconds()
                let out = try Demosaicer.demosaic(image, cfa: cfa, method: method)
                best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                bestCPU = min(bestCPU, Self.processCPUSeconds() - cpu)
                #expect(out.planes == 3)
            }
            lines.append(String(format: "| %@ | %d | %.3f | %.0f | %.0f |", method.rawValue, Parallel.threadCount, best,
                                megapixels / best, megapixels / bestCPU))
        }
        print(lines.joined(separator: "\n"))
    }
}
