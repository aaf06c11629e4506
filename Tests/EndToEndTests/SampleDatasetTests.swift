import Foundation
import Testing
import DNGWriter
import CaptureSimulation
@testable import Batching
@testable import Engine
@testable import Measuring
@testable import Reporting
import SceneLinearKit
@testable import SimulationCheck
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
        let committed = try Data(contentsOf: Self.dng)
        #expect(try Self.content(path) == Self.content(Self.dng.path),
                "datasets/sample/chart.dng differs from the generator's output: run datasets/regenerate.sh")
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: TestData.packageRoot.appendingPathComponent("datasets/MANIFEST.json"))) as? [String: Any]
        let files = manifest?["files"] as? [[String: Any]] ?? []
        let entry = files.first { $0["file"] as? String == "sample/chart.dng" }
        #expect(entry?["sha256"] as? String == SHA256Digest.hex(of: committed))
    }

    /// The committed simulated captures are what `simulate` makes for their recorded seed, and
    /// they pass validation.
    @Test(arguments: ["sunset", "grey-ramp"])
    func simulatedCapturesReproduceAndValidate(name: String) throws {
        let dir = TestData.packageRoot.appendingPathComponent("datasets/sim")
        let record = try SimulationRecord.read(dir.appendingPathComponent("\(name).truth.json").path)
        let capture = try Simulator.capture(RenderedScene(record.scene), camera: record.camera)
        let tmp = TestData.temporaryDirectory("simdata")
        defer { try? FileManager.default.removeItem(at: tmp) }
        let path = tmp.appendingPathComponent("x.dng").path
        try DNGWriter.write(capture.dng, to: path)
        #expect(try Self.content(path) == Self.content(dir.appendingPathComponent("\(name).dng").path),
                "datasets/sim/\(name).dng differs from the simulator's output: run datasets/regenerate.sh")
        let report = try Pipeline.validate(dngPath: dir.appendingPathComponent("\(name).dng").path, record: record)
        #expect(report.passed, "\(report.text)")
        if name == "sunset" { #expect(report.ratios.first?.covered == true) }
    }

    /// What a DNG says, independent of how the TIFF library laid it out: for every IFD, every
    /// tag and its values, except those that only locate or size data in the file (strip and
    /// tile offsets and byte counts, SubIFD and Exif IFD offsets), and the SHA-256 of each
    /// image's decoded samples.
    static func content(_ path: String) throws -> [String] {
        let dng = try DNGFile.open(path: path)
        let values = EntryValues(file: dng.file, order: dng.byteOrder)
        let layoutTags: Set<UInt16> = [273, 279, 324, 325, 330, 34665]
        var lines: [String] = []
        for ifd in dng.structure.allIFDs {
            for e in ifd.entries where !layoutTags.contains(e.tag) {
                let v = e.type == .ascii ? try values.string(e, in: ifd.path) : "\(try values.bytes(e, in: ifd.path))"
                lines.append("\(ifd.path) \(e.tag) \(e.type.name) \(e.count) \(v)")
            }
        }
        for image in dng.images {
            let stored = try RawDecoder.decodeAnyImage(dng, ifd: image)
            let digest: String
            switch stored.samples {
            case .uint16(let b): digest = b.samples.withUnsafeBytes { SHA256Digest.hex(of: $0) }
            case .uint32(let b): digest = b.samples.withUnsafeBytes { SHA256Digest.hex(of: $0) }
            case .float32(let b): digest = b.samples.withUnsafeBytes { SHA256Digest.hex(of: $0) }
            }
            lines.append("\(image.path) samples \(digest)")
        }
        return lines
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
