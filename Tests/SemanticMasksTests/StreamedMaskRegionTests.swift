import DNGWriter
import Foundation
import Testing
@testable import Measuring
@testable import Reporting
import SceneLinearKit
import TestSupport

/// Regions given by semantic masks are measured without holding the image: the masks are
/// decoded onto the output grid before the first patch, and the streamed statistics equal
/// those of the image developed whole (counts, weights and order statistics exactly, means
/// and spreads to the regrouped sums' rounding).
@Suite struct StreamedMaskRegionTests {
    @Test func maskRegionsStream() throws {
        let dir = TestData.temporaryDirectory("masks-streamed")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = try CommandLineMaskTests.write(MaskFixtures.linearRaw(), dir, "masks.dng")
        var request = AnalysisRequest()
        request.regions = [try Region.parse("sky=mask:sky"), try Region.parse("g=mask:\(MaskFixtures.glassesURN)"),
                           try Region.parse("box=2,3,20,30")]
        let (streamed, picture) = try #require(try Pipeline.analyzeStreaming(dng, request: request, picture: 50), "not streamed")
        let whole = try Pipeline.analyze(try AnalysisInput.load(dng, options: request.develop), request: request)
        #expect(streamed.regions.map(\.name) == ["sky", "g", "box"])
        for (a, b) in zip(streamed.regions, whole.regions) {
            let m = a.measurement, n = b.measurement
            #expect(m.pixels == n.pixels && m.pixels > 0, "\(a.name): \(m.pixels) against \(n.pixels)")
            for q in RegionStatistics.quantities {
                let x = try #require(m.channels[q]), y = try #require(n.channels[q])
                #expect(x.count == y.count && x.weight == y.weight && x.minimum == y.minimum && x.maximum == y.maximum, "\(a.name) \(q)")
                #expect(Tolerance.close(x.mean, y.mean, relative: 1e-12), "\(a.name) \(q): \(x.mean) against \(y.mean)")
                #expect(Tolerance.close(x.standardDeviation, y.standardDeviation, relative: 1e-9), "\(a.name) \(q)")
            }
        }
        // The EV map outlines the mask regions too (their weights resolved from the masks).
        let map = try #require(picture)
        #expect(request.regions.allSatisfy { map.weights($0) != nil })
    }
}
