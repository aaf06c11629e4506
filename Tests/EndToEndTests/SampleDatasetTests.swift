import Foundation
import Testing
import DNGWriter
@testable import SceneLinearKit
import TestSupport

/// The committed sample (`datasets/sample`) is what the generator makes, and decodes to its
/// committed exact expectation.
@Suite struct SampleDatasetTests {
    static let dng = TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng")
    static let expected = TestData.packageRoot.appendingPathComponent("datasets/sample/chart-expected.h5")

    @Test func sampleIsReproducible() throws {
        let dir = TestData.temporaryDirectory("sample")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("chart.dng").path
        try DNGWriter.write(try TestChart.make().dng, to: path)
        let regenerated = try Data(contentsOf: URL(fileURLWithPath: path))
        let committed = try Data(contentsOf: Self.dng)
        #expect(regenerated == committed, "datasets/sample/chart.dng differs from the generator's output: run datasets/regenerate.sh")
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: TestData.packageRoot.appendingPathComponent("datasets/MANIFEST.json"))) as? [String: Any]
        let files = manifest?["files"] as? [[String: Any]] ?? []
        let entry = files.first { $0["file"] as? String == "sample/chart.dng" }
        #expect(entry?["sha256"] as? String == SHA256Digest.hex(of: committed))
    }

    @Test func sampleDecodesToTheCommittedExpectation() throws {
        let developed = try Pipeline.develop(path: Self.dng.path)
        let expected = try HDF5File.readSceneLinear(Self.expected.path)
        #expect(expected.width == 1008 && expected.height == 756)
        #expect(developed.image.clipMask == expected.clipMask)
        var failures = 0
        for (a, e) in zip(developed.image.pixels.samples, expected.pixels.samples) {
            // The expectation was rounded to half once; the decode must round to the same half.
            if Float16(a) != Float16(e) && !isHalfClose(Double(a), Double(e)) { failures += 1 }
        }
        #expect(failures == 0)
        let clipped = developed.image.clippedPixelCount
        #expect(clipped == 38997, "the brightest ramp step and the beyond-white patch clip")
        #expect(abs(developed.color.whiteXY.x - 0.3324) < 1e-4 && abs(developed.color.whiteXY.y - 0.3474) < 1e-4)
    }
}
