import Foundation
import Testing
import DNGWriter
@testable import Engine
@testable import EXRExchange
@testable import HDF5Exchange
import SceneLinearKit
import TestSupport

/// Floating-point raw samples (SampleFormat 3: half, 24-bit and single floats) are developed
/// block by block like 16-bit integers — streamed (LinearRaw) or through the mosaic window
/// (CFA) — and give, bit for bit, what the stages composed over the whole image give (the
/// whole-image route of Stage 1 and `Linearizer.linearize`): pixels, clip mask, NaN and
/// infinities, processing notes, the raw-image digest, and the EXR and HDF5 files. Planar
/// floats, still decoded whole, give the same pixels.
@Suite struct FloatStorageTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var bits: Int
        var cfa = false
        var tiled = true
        var compression = 1
        var predictor = 1
        var bigEndian = false
        /// A 2×2 black pattern with both delta tables and an ActiveArea inside the image.
        var patternedBlack = false
        /// A GainMap in OpcodeList2 (run per region).
        var lensShading = false
        var testDescription: String {
            "float\(bits) \(cfa ? "CFA" : "LinearRaw") \(tiled ? "tiles" : "strips") compression \(compression) predictor \(predictor)"
                + (bigEndian ? " big-endian" : "") + (patternedBlack ? " patterned black" : "") + (lensShading ? " GainMap" : "")
        }
    }

    static let cases: [Case] = [
        Case(bits: 16),
        Case(bits: 16, tiled: false, compression: 8, predictor: 3, lensShading: true),
        Case(bits: 32, compression: 8, predictor: 34895, bigEndian: true, patternedBlack: true),
        Case(bits: 32, tiled: false),
        Case(bits: 24, compression: 8, predictor: 34894),
        Case(bits: 16, cfa: true, compression: 8, predictor: 34894),
        Case(bits: 16, cfa: true, tiled: false, patternedBlack: true, lensShading: true),
        Case(bits: 32, cfa: true, tiled: false, compression: 8, predictor: 3, bigEndian: true),
        Case(bits: 32, cfa: true),
    ]

    /// The float file of `c`: a simulated sunset at 150 × 100 (0 at its black level, 1.1 at
    /// its white level), with a few samples far above white and below black, the smallest
    /// subnormal half, −0 and white itself;
    /// with `specials`, NaN and ±∞ in a few samples too (a LinearRaw file: no half output
    /// holds them, and demosaicing would spread them).
    static func file(_ c: Case, specials: Bool = false, seed: UInt64 = 3) throws -> FloatDNG {
        let capture = try StreamingDevelopTests.sunsetCapture(width: 150, height: 100, seed: seed, cfa: c.cfa,
                                                              lensShading: c.lensShading ? 0.3 : nil)
        var file = FloatDNG(capture, scale: 1.1)
        file.bits = c.bits
        file.tile = c.tiled ? (48, 32) : nil
        file.compression = c.compression
        file.predictor = c.predictor
        file.bigEndian = c.bigEndian
        if c.patternedBlack {
            let area = PixelRect(top: 4, left: 2, bottom: 98, right: 146)
            file.activeArea = area
            file.blackLevelRepeatDim = (2, 2)
            file.blackLevel = c.cfa ? [0.01, 0.012, 0.008, 0.011] : [0.01, 0.012, 0.008, 0.011, 0.009, 0.01,
                                                                     0.013, 0.01, 0.007, 0.01, 0.011, 0.012]
            file.blackLevelDeltaH = (0..<area.width).map { Double($0 % 7) * 0.0004 - 0.001 }
            file.blackLevelDeltaV = (0..<area.height).map { Double($0 % 5) * 0.0003 }
        }
        var values: [Float] = [-0.25, 7, -0.0, 0x1p-24, 1, 1.0009765625, 1.25, 1.5]
        if specials {
            precondition(!c.cfa)
            values += [.nan, .infinity, -.infinity]
        }
        let spp = c.cfa ? 1 : 3
        for (i, v) in values.enumerated() { file.samples[((10 + 7 * i) * 150 + 20 + 11 * i) * spp + i % spp] = v }
        return file
    }

    @Test(arguments: cases)
    func developsBlockByBlockWithTheWholeImageBits(_ c: Case) throws {
        let dir = TestData.temporaryDirectory("float-storage")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("float.dng").path
        try Self.file(c).write(to: path)
        let dng = try DNGFile.open(path: path)
        let plan = try Pipeline.plan(dng, options: DevelopOptions(), request: DevelopRequest(output: .exr(streamable: true)))
        #expect(plan.stage2 == (c.cfa ? .mosaicWindow : .streamed) && plan.memoryRoute == .streamedEXR, "\(plan.summary)")
        let developed = try Pipeline.develop(path: path, options: DevelopOptions())
        #expect(developed.image.provenance.processing.contains(MetadataItem("digest", .text("verified"))),
                "the raw-image digest fed block by block: \(developed.image.provenance.processing)")
        #expect(developed.image.clippedPixelCount > 0)
        try StreamingDevelopTests.compare(path, "\(c)")
        if c.cfa {
            for method in DemosaicMethod.allCases {
                var options = DevelopOptions()
                options.demosaic = method
                try StreamingDevelopTests.compare(path, options: options, "\(c), \(method)")
            }
        }
    }

    /// NaN and ±∞ samples (LinearRaw): developed block by block into `Float`, the bits of the
    /// whole-image route — NaN kept and unflagged, +∞ clipped to 1 and flagged, −∞ kept.
    @Test(arguments: [cases[0], cases[2], cases[4]])
    func nanAndInfinitiesAsTheWholeImageRoute(_ c: Case) throws {
        let dir = TestData.temporaryDirectory("float-storage-specials")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("float.dng").path
        try Self.file(c, specials: true).write(to: path)
        let reference = try StageByStageReference.develop(path: path).image
        let developed = try Pipeline.develop(path: path, options: DevelopOptions()).image
        #expect(developed.pixels.samples.contains { $0.isNaN } && developed.pixels.samples.contains { $0 == -.infinity })
        #expect(developed.pixels.samples.map(\.bitPattern) == reference.pixels.samples.map(\.bitPattern))
        #expect(developed.clipMask == reference.clipMask && developed.provenance == reference.provenance)
    }

    /// The EXR and HDF5 files `convert` writes as the rows are made, block by block, are those
    /// the whole-image writers make of the stages composed over the whole image.
    @Test(arguments: [cases[1], cases[2], cases[6]])
    func exrAndHDF5AreTheWholeImageRoutesFiles(_ c: Case) throws {
        let dir = TestData.temporaryDirectory("float-storage-files")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("float.dng").path
        try Self.file(c).write(to: path)
        try Self.expectWholeImageRouteFiles(path, in: dir, "\(c)")
        #expect(try EXRStreamTests.compare(path, in: dir, "\(c)"))
        #expect(try HDF5StreamTests.compare(path, in: dir, "\(c)"))
    }

    /// Converts `path` into an EXR (and, with `hdf5`, an HDF5 file) and compares them with
    /// the files the whole-image writers make of `StageByStageReference`'s image: the EXR
    /// byte for byte, the HDF5 file's pixels, masks and attributes (but the time of writing).
    static func expectWholeImageRouteFiles(_ path: String, hdf5: Bool = true, in dir: URL, _ label: String) throws {
        let wholeEXR = dir.appendingPathComponent("reference.exr").path, streamedEXR = dir.appendingPathComponent("converted.exr").path
        let wholeHDF5 = dir.appendingPathComponent("reference.h5").path, streamedHDF5 = dir.appendingPathComponent("converted.h5").path
        do {
            // The reference's image is let go before the conversions run.
            let reference = try StageByStageReference.develop(path: path).image
            func half(clipMask: Bool) -> HalfSceneLinearImage {
                HalfSceneLinearImage(pixels: ImageBuffer(width: reference.width, height: reference.height, channels: 3,
                                                         samples: HalfConversion.halves(reference.pixels.samples)),
                                     clipMask: clipMask ? reference.clipMask : nil, clippedPixelCount: reference.clippedPixelCount,
                                     encoding: reference.encoding, exposure: reference.exposure, provenance: reference.provenance,
                                     masks: reference.masks)
            }
            try EXRFile.write(half(clipMask: EXROptions().includeClipMask), to: wholeEXR, options: EXROptions())
            if hdf5 { try HDF5File.write(half(clipMask: true), to: wholeHDF5, options: HDF5Options()) }
        }
        let exr = try Pipeline.convert(path: path, options: DevelopOptions(), format: .exr, export: ExportOptions(), to: streamedEXR)
        #expect(exr.image == nil, "\(label): the EXR is written as its rows are made")
        let (x, y) = (EXRStreamTests.bytes(wholeEXR), EXRStreamTests.bytes(streamedEXR))
        // (Compared here, not inside #expect, which would describe the difference of two large files.)
        let firstDifference = x == y ? nil : zip(x, y).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(x.count, y.count)
        #expect(firstDifference == nil, "\(label): the EXR files differ from byte \(firstDifference ?? 0) (\(x.count) and \(y.count) bytes)")
        guard hdf5 else { return }
        let converted = try Pipeline.convert(path: path, options: DevelopOptions(), format: .hdf5, export: ExportOptions(), to: streamedHDF5)
        #expect(converted.image == nil, "\(label): the HDF5 file is written as its rows are made")
        let a = try HDF5File.readSceneLinear(wholeHDF5), b = try HDF5File.readSceneLinear(streamedHDF5)
        #expect(a.pixels.samples.map(\.bitPattern) == b.pixels.samples.map(\.bitPattern), "\(label): HDF5 pixels differ")
        #expect(a.clipMask == b.clipMask && a.masks == b.masks && a.provenance == b.provenance, "\(label): HDF5 contents differ")
        for object in ["/", "/image", "/clip_mask"] {
            var x = try HDF5File.readAttributes(wholeHDF5, object: object), y = try HDF5File.readAttributes(streamedHDF5, object: object)
            x["created"] = nil
            y["created"] = nil
            #expect(x == y, "\(label): attributes of \(object) differ")
        }
        for file in [wholeEXR, streamedEXR, wholeHDF5, streamedHDF5] { try FileManager.default.removeItem(atPath: file) }
    }

    /// Planar floats (one plane per block) are decoded whole, then cut into strips that go on
    /// as blocks do (the route's estimate with the decoded samples besides): the same pixels
    /// and clip mask as the same samples stored chunky and developed block by block.
    @Test func planarFloatsDecodedWholeGiveTheSamePixels() throws {
        let dir = TestData.temporaryDirectory("float-storage-planar")
        defer { try? FileManager.default.removeItem(at: dir) }
        var file = try Self.file(Case(bits: 16, compression: 8, predictor: 3))
        let chunky = dir.appendingPathComponent("chunky.dng").path, planar = dir.appendingPathComponent("planar.dng").path
        try file.write(to: chunky)
        file.planar = 2
        try file.write(to: planar)
        let request = DevelopRequest(output: .exr(streamable: true))
        let planarPlan = try Pipeline.plan(try DNGFile.open(path: planar), options: DevelopOptions(), request: request)
        #expect(planarPlan.stage1 == .collected && planarPlan.stage2 == .streamed && planarPlan.memoryRoute == .streamedEXR,
                "\(planarPlan.summary)")
        let a = try Pipeline.developHalf(path: chunky, options: DevelopOptions(), keepClipMask: true).image
        let b = try Pipeline.developHalf(path: planar, options: DevelopOptions(), keepClipMask: true).image
        #expect(a.pixels.samples.map(\.bitPattern) == b.pixels.samples.map(\.bitPattern))
        #expect(a.clipMask == b.clipMask && a.clippedPixelCount == b.clippedPixelCount)
        try StreamingDevelopTests.compare(planar, "planar float16")
    }

    /// The memory estimate from the IFD alone (`--max-memory` of commands that plan no
    /// route, batch reservations) is the block-by-block route's for chunky floats, as the
    /// plan's, and the whole image's for planar ones; the plan of planar ones adds the
    /// decoded samples (4 bytes each) to the route's.
    @Test func memoryEstimates() throws {
        let dir = TestData.temporaryDirectory("float-storage-estimate")
        defer { try? FileManager.default.removeItem(at: dir) }
        var file = try Self.file(Case(bits: 32))
        let path = dir.appendingPathComponent("float.dng").path
        for planar in [1, 2] {
            file.planar = planar
            try file.write(to: path)
            let dng = try DNGFile.open(path: path)
            let raw = try dng.mainRawImage()
            let plan = try Pipeline.plan(dng, options: DevelopOptions(), request: DevelopRequest(output: .exr(streamable: true)))
            let fromIFD = Pipeline.estimatedPeakBytes(raw, route: .streamedEXR)
            let planned = Pipeline.estimatedPeakBytes(raw, plannedRoute: plan.memoryRoute) + Pipeline.collectedStage1Bytes(raw, plan: plan)
            let route = Pipeline.estimatedPeakBytes(raw, plannedRoute: .streamedEXR)
            #expect(planned == (planar == 1 ? fromIFD : route + raw.width * raw.height * 3 * 4), "planar \(planar)")
            #expect(Pipeline.developsByBlocks(raw) == (planar == 1))
            #expect((fromIFD == Pipeline.estimatedPeakBytes(raw, route: nil)) == (planar == 2), "planar \(planar)")
        }
    }

    /// The DNG SDK's LinearRaw sample of float16 JPEG XL tiles (skipped when not fetched):
    /// developed tile by tile into an EXR written as its rows are made, the file the
    /// whole-image route makes (HDF5 files, the same pixels, are compared on the files above).
    @Test func jpegXLFloatSample() throws {
        let path = try TestData.dngSDKSample("02_jxl_linear_raw_float.dng").path
        let dir = TestData.temporaryDirectory("float-storage-jxl")
        defer { try? FileManager.default.removeItem(at: dir) }
        let plan = try Pipeline.plan(try DNGFile.open(path: path), options: DevelopOptions(),
                                     request: DevelopRequest(output: .hdf5(streamable: true)))
        #expect(plan.stage2 == .streamed && plan.memoryRoute == .streamedHDF5, "\(plan.summary)")
        try Self.expectWholeImageRouteFiles(path, hdf5: false, in: dir, "02")
    }
}
