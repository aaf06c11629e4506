import Foundation
import Testing
import CaptureSimulation
import DNGWriter
import SceneLinearKit
import TestSupport

/// Means over a CFA image's raw sites (`SiteLayout`) do not depend on the demosaic: every
/// interpolating method keeps the raw samples at their sites, so RCD and bilinear give the
/// same region means when each output pixel is placed on the right site — for every
/// orientation, an ActiveArea and a crop that start on odd rows and columns. A wrong site
/// would take interpolated values, which differ between the two methods.
@Suite struct SiteLayoutTests {
    @Test func rawSiteMeansAreTheSameForEveryDemosaic() throws {
        let dir = TestData.temporaryDirectory("site-layout")
        defer { try? FileManager.default.removeItem(at: dir) }
        var capture = try StreamingDevelopTests.sunsetCapture(width: 210, height: 150, seed: 8, lensShading: 0.4)
        for (k, orientation) in [1, 6, 3, 8, 2, 5].enumerated() {
            // (A one-pixel region holds one plane's site only: its mean is the pixel's.)
            capture.orientation = orientation
            capture.activeArea = k % 2 == 0 ? nil : PixelRect(top: 3, left: 1, bottom: 147, right: 207)
            capture.defaultCrop = k >= 2 ? (origin: [5, 3], size: [181, 121]) : nil
            let path = dir.appendingPathComponent("cfa\(k).dng").path
            try DNGWriter.write(capture, to: path)
            var means: [[String: Double]] = []
            for method in [DemosaicMethod.rcd, .bilinear] {
                var request = AnalysisRequest()
                request.develop.demosaic = method
                // Regions of odd size at odd offsets (and the whole image).
                request.regions = [try Region.parse("a=7,9,58,77"), try Region.parse("b=31,40,34,43"), try Region.parse("c=1,1,100,100"),
                                   try Region.parse("d=20,20,21,21")]
                let analysis = try Pipeline.analyze(path, request: request)
                let fromSites = analysis.regions.map(\.meanFromRawSites)
                #expect(fromSites == [true, true, true, false], "orientation \(orientation) \(method)")
                var m: [String: Double] = [:]
                for r in analysis.regions { for (q, s) in r.measurement.channels { m["\(r.name).\(q)"] = s.mean } }
                means.append(m)
            }
            for (key, rcd) in means[0] where !key.hasPrefix("d.") {
                let bilinear = try #require(means[1][key])
                #expect(abs(rcd - bilinear) <= 1e-6 * max(abs(bilinear), 1e-3), "k \(k) orientation \(orientation) \(key): rcd \(rcd), bilinear \(bilinear)")
            }
        }
    }
}
