import Foundation
import ImageCore
import Opcodes
import Testing
import TestSupport

/// Speed of GainMap on a 12 MP 3-plane image (4032 × 3024), for docs/opcodes.md.
///
/// Timing is meaningful only in a release build, so it runs only when
/// `SCENELINEAR_OPCODE_BENCH=1`:
///
///     SCENELINEAR_OPCODE_BENCH=1 swift test -c release --filter GainMapBenchmark
@Suite struct GainMapBenchmark {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["SCENELINEAR_OPCODE_BENCH"] == "1"))
    func twelveMegapixelThreePlanes() throws {
        let (width, height) = (4032, 3024)
        var rng = SeededGenerator(seed: 5)
        let map = GainMap(area: OpcodeArea(top: 0, left: 0, bottom: height, right: width, plane: 0, planes: 3),
                          pointsV: 13, pointsH: 17, spacingV: 1.0 / 12, spacingH: 1.0 / 16, originV: 0, originH: 0, mapPlanes: 3,
                          gains: (0..<(13 * 17 * 3)).map { _ in Float.random(in: 1...3, using: &rng) })
        let list = try OpcodeList.parse(OpcodeListBuilder.list(.gainMap(map)), list: .list2)
        var image = ImageBuffer<Float>(width: width, height: height, channels: 3, repeating: 0.2)
        for policy in ClippingPolicy.allCases {
            var times: [Double] = []
            for _ in 0..<7 {
                let context = OpcodeContext(wholeImage: image, clipping: policy)
                let start = DispatchTime.now().uptimeNanoseconds
                let report = try OpcodeApplier.apply(list, to: &image, context: context)
                times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
                #expect(report.applied.count == 1)
                for i in image.samples.indices { image.samples[i] = 0.2 }
            }
            times.sort()
            print("GainMap 4032×3024×3, \(policy.rawValue), \(Parallel.threadCount) threads: median \(String(format: "%.1f", times[3])) ms, best \(String(format: "%.1f", times[0])) ms")
        }
    }
}
