import Foundation
@testable import Engine
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

    /// A decoder that reports its pixels first (a one-tile JPEG XL image) takes the first
    /// half of the bar, Stage 2 the second; the bar still ends at exactly 1.
    @Test func pixelsDecodedFirstTakeTheirShare() {
        let seen = Seen()
        let progress = DevelopProgress { f in seen.fractions.withLock { $0.append(f) } }
        progress.start(pixels: 1000, decodedFirst: 1000)
        for _ in 0..<10 { progress.add(100) }  // the decoder's rows
        let decoded = seen.fractions.withLock { $0 }
        for _ in 0..<4 { progress.add(250) }  // Stage 2's strips
        let fractions = seen.fractions.withLock { $0 }
        #expect(decoded.last == 0.5 && decoded.count == 10, "\(decoded)")
        #expect(fractions.last == 1 && fractions.count == 14, "\(fractions)")
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 < $1 })
    }
}
