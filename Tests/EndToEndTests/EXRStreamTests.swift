import Foundation
import Testing
import DNGWriter
@testable import Engine
@testable import EXRExchange
import HDF5Exchange
import SceneLinearKit
@testable import SimulationCheck
import TestSupport

/// `Pipeline.convert` writes an EXR the EXR as the rows are made (`EXRStreamWriter`): the file
/// is byte for byte the one `EXRFile.write` makes of `developHalf`'s image, in every
/// orientation, with crops, semantic masks, the clip mask channel, ZIP and ZIPS at the
/// default and a chosen deflate level, LinearRaw and CFA; the cases it leaves to the
/// whole-image writer (DefaultScale, `--ignore-digest`,
/// other compressions) give the same bytes too.
@Suite struct EXRStreamTests {
    /// Converts `path` both ways and compares the files; returns whether the EXR was written
    /// as the rows were made.
    @discardableResult
    static func compare(_ path: String, options: DevelopOptions = DevelopOptions(), exr: EXROptions = EXROptions(),
                        in dir: URL, _ label: String) throws -> Bool {
        let whole = dir.appendingPathComponent("whole.exr").path, streamed = dir.appendingPathComponent("streamed.exr").path
        let image = try Pipeline.developHalf(path: path, options: options, keepClipMask: exr.includeClipMask).image
        try EXRFile.write(image, to: whole, options: exr)
        let converted = try Pipeline.convert(path: path, options: options, format: .exr, export: ExportOptions(exr: exr), to: streamed)
        // Compared outside the expectation: a failed `==` of two large `Data` values would be
        // described byte by byte.
        let wholeBytes = Self.bytes(whole), streamedBytes = Self.bytes(streamed)
        let same = wholeBytes == streamedBytes
        #expect(same, "\(label): the files differ (\(wholeBytes.count) and \(streamedBytes.count) bytes)")
        #expect(converted.description.provenance == image.provenance, "\(label)")
        // The streamed file's masks are held in half floats (or 8-bit codes of half-float
        // levels): the `Float` weights rounded.
        #expect(converted.description.masks.map(\.name) == image.masks.map(\.name)
                && converted.description.masks.map(\.halves) == image.masks.map(\.halves), "\(label)")
        #expect(converted.description.masks.allSatisfy { if case .float = $0.samples { false } else { true } } || converted.image != nil,
                "\(label)")
        #expect(converted.clippedPixelCount == image.clippedPixelCount, "\(label)")
        // Nothing but the output is left in the directory.
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".exr") || $0.contains(".tmp") }
        #expect(Set(left) == ["whole.exr", "streamed.exr"], "\(label): \(left)")
        return converted.image == nil
    }

    static func bytes(_ path: String) -> Data { (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data() }

    static func chart() throws -> LinearRawDNG {
        var chart = try TestChart.make(width: 200, height: 136, tileSize: (64, 48)).dng
        chart.defaultCrop = (origin: [6, 4], size: [180, 120])
        chart.defaultUserCrop = [0.1, 0.05, 0.9, 0.95]
        let sky: [UInt8] = (0..<(68 * 100)).map { i in UInt8((i % 100) * 255 / 99) }
        // A half-resolution mask (resampled) and one at the raw image's own size (on its grid:
        // held as its 8-bit codes with their levels' half floats, then cropped and turned as
        // the image is).
        let skin: [UInt8] = (0..<(136 * 200)).map { i in UInt8((i * 37) % 256) }
        chart.semanticMasks = [SemanticMaskDNG(width: 100, height: 68, samples: sky, semanticName: "urn:com:apple:photo:2020:aux:semanticskymatte"),
                               SemanticMaskDNG(width: 200, height: 136, samples: skin, semanticName: "urn:com:apple:photo:2020:aux:semanticskinmatte")]
        return chart
    }

    @Test func sameBytesAsTheWholeImageWriter() throws {
        let dir = TestData.temporaryDirectory("exr-stream")
        defer { try? FileManager.default.removeItem(at: dir) }
        var chart = try Self.chart()
        let path = dir.appendingPathComponent("chart.dng").path
        for orientation in [1, 3, 6, 8] {
            chart.orientation = orientation
            try DNGWriter.write(chart, to: path)
            #expect(try Self.compare(path, in: dir, "orientation \(orientation)"))
            #expect(try Self.compare(path, exr: EXROptions(includeClipMask: true), in: dir, "orientation \(orientation), clip mask"))
        }
        #expect(try Self.compare(path, exr: EXROptions(compression: .zips, includeClipMask: true), in: dir, "ZIPS"))
        #expect(try Self.compare(path, exr: EXROptions(zipLevel: 4, layout: .layers), in: dir, "libdeflate level 4, layers"))
        var noMasks = DevelopOptions()
        noMasks.includeMasks = false
        #expect(try Self.compare(path, options: noMasks, in: dir, "no masks"))
        var noOrientation = DevelopOptions()
        noOrientation.applyOrientation = false
        #expect(try Self.compare(path, options: noOrientation, in: dir, "sensor orientation"))
        // CFA, every demosaicing method, with the digest skipped.
        let cfa = try StreamingDevelopTests.sunsetCapture(width: 160, height: 120, seed: 5)
        let cfaPath = dir.appendingPathComponent("cfa.dng").path
        try DNGWriter.write(cfa, to: cfaPath)
        for method in DemosaicMethod.allCases {
            var options = DevelopOptions()
            options.demosaic = method
            #expect(try Self.compare(cfaPath, options: options, in: dir, "CFA \(method)"))
        }
        var skip = DevelopOptions()
        skip.digest = .skip
        #expect(try Self.compare(cfaPath, options: skip, in: dir, "digest skipped"))
    }

    /// What the header cannot know before the pass: written whole, the same bytes.
    @Test func wholeImageCasesGiveTheSameBytes() throws {
        let dir = TestData.temporaryDirectory("exr-stream-whole")
        defer { try? FileManager.default.removeItem(at: dir) }
        var chart = try Self.chart()
        let path = dir.appendingPathComponent("chart.dng").path
        try DNGWriter.write(chart, to: path)
        var ignore = DevelopOptions()
        ignore.digest = .ignoreMismatch
        #expect(try !Self.compare(path, options: ignore, in: dir, "--ignore-digest"))
        #expect(try !Self.compare(path, exr: EXROptions(compression: .piz), in: dir, "PIZ"))
        #expect(try !Self.compare(path, exr: EXROptions(pixelType: .float), in: dir, "FLOAT"))
        chart.defaultScale = [2, 1]
        try DNGWriter.write(chart, to: path)
        #expect(try !Self.compare(path, in: dir, "DefaultScale"))
    }

    /// A GainMap in OpcodeList2, run region by region: its note is made before the pass, so the
    /// file is written as its rows are made, the same bytes as the whole-image writer's
    /// (LinearRaw and CFA).
    @Test func perRegionListIsStreamed() throws {
        let dir = TestData.temporaryDirectory("exr-stream-list")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("shaded.dng").path
        for cfa in [false, true] {
            let shaded = try StreamingDevelopTests.sunsetCapture(width: 160, height: 120, seed: 6, cfa: cfa, lensShading: 0.3)
            try DNGWriter.write(shaded, to: path)
            let notes = try Pipeline.developHalf(path: path, options: DevelopOptions(), keepClipMask: false).image.provenance.processing
            #expect(notes.contains { $0.key == "opcodeList2" }, "cfa \(cfa): \(notes.map { $0.key })")
            #expect(try Self.compare(path, in: dir, "GainMap, cfa \(cfa)"))
        }
    }

    /// A damaged tile: the conversion into an EXR or an HDF5 file fails and leaves nothing.
    @Test func damagedInputLeavesNoFile() throws {
        let dir = TestData.temporaryDirectory("exr-stream-damaged")
        defer { try? FileManager.default.removeItem(at: dir) }
        var chart = try Self.chart()
        chart.compression = .losslessJPEG(predictor: 1)
        let path = dir.appendingPathComponent("chart.dng").path
        try DNGWriter.write(chart, to: path)
        var bytes = Self.bytes(path)
        // Overwrite the middle tile's data with garbage (the masks' samples, also in the file, take any value).
        let tiles = try #require(try DNGFile.open(path: path).mainRawImage().layout)
        let middle = Int(tiles.offsets[tiles.offsets.count / 2]) + 16
        for i in middle..<min(bytes.count, middle + 2000) { bytes[i] = UInt8(truncatingIfNeeded: i &* 131) }
        let bad = dir.appendingPathComponent("bad.dng").path
        try bytes.write(to: URL(fileURLWithPath: bad))
        #expect(throws: (any Error).self) {
            try Pipeline.convert(path: bad, options: DevelopOptions(), format: .exr, export: ExportOptions(), to: dir.appendingPathComponent("out.exr").path)
        }
        #expect(throws: (any Error).self) {
            try Pipeline.convert(path: bad, options: DevelopOptions(), format: .hdf5, export: ExportOptions(), to: dir.appendingPathComponent("out.h5").path)
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(Set(left) == ["chart.dng", "bad.dng"], "\(left)")
    }
}
