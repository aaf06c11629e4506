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
@testable import ImageGeometry
import TestSupport

/// The whole pipeline against DNGs written by the project's own writer, whose correct
/// decode is computed independently in double precision.
@Suite struct RoundTripTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let black: Double
        let white: Int
        let compressed: Bool
        var testDescription: String { "black \(Int(black)) white \(white) \(compressed ? "LJ92" : "uncompressed")" }
    }

    static let cases: [Case] = [
        Case(black: 0, white: 64800, compressed: true), Case(black: 0, white: 65535, compressed: false),
        Case(black: 4000, white: 64800, compressed: false), Case(black: 4000, white: 65535, compressed: true),
        Case(black: 800, white: 64800, compressed: true),
    ]

    /// The chart (two-illuminant colour matrices, as-shot neutral, 12-bit companding table)
    /// decodes to its exact expectation to half-float rounding, through both file formats.
    @Test(arguments: cases)
    func chartDecodesToItsExactExpectation(_ c: Case) throws {
        let dir = TestData.temporaryDirectory("roundtrip")
        defer { try? FileManager.default.removeItem(at: dir) }
        let chart = try TestChart.make(width: 300, height: 200, black: c.black, white: c.white,
                                       compression: c.compressed ? .losslessJPEG(predictor: 1) : .uncompressed,
                                       tileSize: (128, 96))
        let dng = dir.appendingPathComponent("chart.dng").path
        try DNGWriter.write(chart.dng, to: dng)
        let developed = try Pipeline.develop(path: dng)
        let (expected, mask) = chart.expected(cameraToOutput: developed.color.matrix)
        #expect(developed.image.clipMask == mask)
        #expect(mask.contains { $0 != 0 }, "the chart has a clipped step")

        try Pipeline.export(developed.image, format: .exr, to: dir.appendingPathComponent("c.exr").path)
        try Pipeline.export(developed.image, format: .hdf5, to: dir.appendingPathComponent("c.h5").path)
        let fromEXR = try EXRFile.readSceneLinear(dir.appendingPathComponent("c.exr").path)
        let fromHDF5 = try HDF5File.readSceneLinear(dir.appendingPathComponent("c.h5").path)
        for (name, image) in [("in memory", developed.image), ("EXR", fromEXR), ("HDF5", fromHDF5)] {
            var worst = 0.0
            var failures = 0
            for (a, e) in zip(image.pixels.samples, expected) where !isHalfClose(Double(a), e) {
                failures += 1
                worst = max(worst, abs(Double(a) - e))
            }
            #expect(failures == 0, "\(name): \(failures) values off by up to \(worst)")
        }
        #expect(fromHDF5.clipMask == mask)
        #expect(fromEXR.provenance.sourceSHA256 == developed.image.provenance.sourceSHA256)
    }

    /// A camera whose native space is linear Rec.2020 (the writer's default colour tags):
    /// the output is Stage 2 alone, so the expectation needs no colour maths at all.
    @Test(arguments: [false, true])
    func rec2020CameraOutputIsStage2(compressed: Bool) throws {
        let dir = TestData.temporaryDirectory("rec2020cam")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (w, h) = (97, 53)
        var rng = SeededGenerator(seed: 7)
        var spec = LinearRawDNG(width: w, height: h, samples: (0..<(w * h * 3)).map { _ in UInt16.random(in: 0...4095, using: &rng) })
        spec.bitsPerSample = 12
        spec.compression = compressed ? .losslessJPEG(predictor: 6) : .uncompressed
        spec.tileSize = (32, 32)
        spec.linearizationTable = CompandingCurve(codeBits: 12, maximum: 64800).table
        spec.blackLevel = [4000, 4000, 4000] // the table starts at 0: codes below black give negative values
        spec.whiteLevel = [64800, 64800, 64800]
        let path = dir.appendingPathComponent("r.dng").path
        try DNGWriter.write(spec, to: path)
        let image = try Pipeline.develop(path: path).image
        let table = spec.linearizationTable!.map(Double.init)
        var failures = 0
        for i in 0..<(w * h * 3) {
            let expected = min((table[Int(spec.samples[i])] - 4000) / (64800 - 4000), 1)
            if !isHalfClose(Double(Float16(image.pixels.samples[i])), expected) { failures += 1 }
        }
        #expect(failures == 0)
        // Negative values (table entries below black) survive.
        #expect(image.pixels.samples.contains { $0 < 0 })
    }

    /// A 65,536-entry LinearizationTable (one more than libtiff 4.5 reads back) survives the
    /// round trip and is applied.
    @Test func fullSixteenBitLinearizationTable() throws {
        let dir = TestData.temporaryDirectory("lut65536")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (w, h) = (64, 32)
        var rng = SeededGenerator(seed: 11)
        var spec = LinearRawDNG(width: w, height: h, samples: (0..<(w * h * 3)).map { _ in UInt16.random(in: 0...65535, using: &rng) })
        // A reversing table: entry v = 65535 − v, so any off-by-one or dropped table shows.
        spec.linearizationTable = (0..<65536).map { UInt16(65535 - $0) }
        let path = dir.appendingPathComponent("t.dng").path
        try DNGWriter.write(spec, to: path)
        let dng = try DNGFile.open(path: path)
        let raw = try dng.mainRawImage()
        #expect(raw.linearizationTable?.count == 65536)
        #expect(raw.linearizationTable == spec.linearizationTable)
        let image = try Pipeline.develop(path: path).image
        for i in stride(from: 0, to: w * h * 3, by: 7) {
            let expected = Double(65535 - Int(spec.samples[i])) / 65535
            #expect(isHalfClose(Double(Float16(image.pixels.samples[i])), expected))
        }
    }

    /// Exposure scaling multiplies by 2^(BaselineExposure + BaselineExposureOffset) and is recorded.
    @Test func baselineExposureScaling() throws {
        let dir = TestData.temporaryDirectory("baseline")
        defer { try? FileManager.default.removeItem(at: dir) }
        var spec = LinearRawDNG(width: 16, height: 16, samples: Array(repeating: 30000, count: 16 * 16 * 3))
        spec.baselineExposure = -0.75
        spec.baselineExposureOffset = 0.25
        let path = dir.appendingPathComponent("b.dng").path
        try DNGWriter.write(spec, to: path)
        let none = try Pipeline.develop(path: path).image
        let baseline = try Pipeline.develop(path: path, options: DevelopOptions(exposure: .baseline)).image
        #expect(baseline.exposure.mode == .baseline)
        #expect(abs(baseline.exposure.factor - pow(2, -0.5)) < 1e-6)
        #expect(abs(Double(baseline.pixels.samples[0]) / Double(none.pixels.samples[0]) - pow(2, -0.5)) < 1e-5)
        #expect(abs(Double(none.pixels.samples[0]) - 30000.0 / 65535) < 1e-6)
    }
}

/// DefaultCrop, DefaultUserCrop and Orientation applied to the whole pipeline's output.
@Suite struct GeometryPipelineTests {
    @Test(arguments: [1, 3, 6, 8])
    func cropAndOrientation(orientation: Int) throws {
        let dir = TestData.temporaryDirectory("geometry")
        defer { try? FileManager.default.removeItem(at: dir) }
        var chart = try TestChart.make(width: 128, height: 96, compression: .uncompressed, tileSize: (64, 48))
        chart.dng.orientation = orientation
        chart.dng.defaultCrop = (origin: [8, 4], size: [112, 88])
        chart.dng.defaultUserCrop = [0.25, 0.125, 0.75, 0.875]
        let path = dir.appendingPathComponent("g.dng").path
        try DNGWriter.write(chart.dng, to: path)
        let full = try Pipeline.develop(path: path, options: { var o = DevelopOptions(); o.crop = .none; o.applyOrientation = false; return o }())
        let developed = try Pipeline.develop(path: path)
        // User crop of the default crop: rows 4 + 22...4 + 66, columns 8 + 14...8 + 98.
        let crop = PixelRect(top: 26, left: 22, bottom: 70, right: 106)
        #expect(developed.geometry.crop == crop)
        let expected = ImageGeometry.orient(ImageGeometry.crop(full.image.pixels, to: crop), orientation)
        #expect(developed.image.pixels.samples == expected.samples)
        #expect(developed.image.width == expected.width && developed.image.height == expected.height)
        let swapped = orientation >= 5
        #expect(developed.image.width == (swapped ? 44 : 84))
        let keep = try Pipeline.develop(path: path, options: { var o = DevelopOptions(); o.applyOrientation = false; return o }())
        #expect(keep.image.width == 84 && keep.image.height == 44)
    }
}
