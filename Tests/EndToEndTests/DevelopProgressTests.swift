import Foundation
import SceneLinearKit
import Synchronization
import Testing
import TestSupport

/// A development reports its progress: rising fractions, each percent at most once, ending
/// at 1 — on the streamed route and on a collected one.
@Suite struct DevelopProgressTests {
    final class Seen: Sendable {
        let fractions = Mutex<[Double]>([])
    }

    @Test func fractionsRiseToOne() throws {
        let path = TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng").path
        for route in ["streamed", "float image"] {
            let seen = Seen()
            var options = DevelopOptions()
            options.progress = DevelopProgress { f in seen.fractions.withLock { $0.append(f) } }
            if route == "streamed" {
                _ = try Pipeline.developHalf(path: path, options: options, keepClipMask: false)
            } else {
                _ = try Pipeline.develop(path: path, options: options)
            }
            let fractions = seen.fractions.withLock { $0 }
            #expect(fractions.last == 1, "\(route): \(fractions)")
            #expect(!fractions.isEmpty && fractions.count <= 101, "\(route): \(fractions.count) reports")
            let percents = fractions.map { Int($0 * 100) }
            #expect(Set(percents).count == percents.count, "\(route): a percent reported twice")
            #expect(fractions.allSatisfy { (0...1).contains($0) })
        }
    }
}
