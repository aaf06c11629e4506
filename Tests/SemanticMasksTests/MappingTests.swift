import DNGWriter
import Foundation
import Testing
@testable import Batching
@testable import Engine
@testable import Measuring
@testable import Reporting
import SceneLinearKit
@testable import SimulationCheck
@testable import SemanticMasks
import TestSupport

/// Semantic masks through the pipeline: decoded from DNGs written by the project's writer,
/// mapped onto the output and compared with values worked out from the definition of the
/// mapping (bilinear at pixel centres, mask space stretched over the ActiveArea).
///
/// Tolerance: 1e-5 absolute in memory (the resampling runs in Double and stores Float);
/// the file round trips are compared bit for bit with the in-memory values rounded to half.
@Suite struct MappingTests {
    static func worst(_ actual: [Float], _ expected: [Double]) -> Double {
        zip(actual, expected).map { abs(Double($0) - $1) }.max() ?? .infinity
    }

    @Test func linearRawMasksMatchTheirDefinition() throws {
        let dir = TestData.temporaryDirectory("masks-linear")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("masks.dng").path
        try DNGWriter.write(MaskFixtures.linearRaw(), to: path)
        let developed = try Pipeline.develop(path: path)
        let image = developed.image
        #expect(image.width == 40 && image.height == 64)
        #expect(image.masks.map(\.name) == ["sky", "glasses", "skin_1", "skin_2"])
        #expect(image.masks.map(\.sourceIFD) == ["IFD0/SubIFD1", "IFD0/SubIFD2", "IFD0/SubIFD3", "IFD0/SubIFD4"])
        #expect(image.masks.map(\.semanticName) == [MaskFixtures.skyURN, MaskFixtures.glassesURN, MaskFixtures.skinURN, MaskFixtures.skinURN])
        #expect(image.masks.map(\.instanceID) == ["", "", "1", "2"])
        let expected = MaskFixtures.linearRawExpected()
        for layer in image.masks {
            #expect(layer.values.width == 40 && layer.values.height == 64)
            let error = Self.worst(layer.values.samples, expected[layer.name]!)
            #expect(error < 1e-5, "\(layer.name): off by up to \(error)")
        }
        // The glasses sub-area is really partial: inside, outside and the ramp between.
        let glasses = image.masks[1].values.samples
        #expect(glasses.contains(1) && glasses.contains(0) && glasses.contains { $0 > 0.2 && $0 < 0.8 })

        // Without masks nothing else changes.
        var options = DevelopOptions()
        options.includeMasks = false
        let plain = try Pipeline.develop(path: path, options: options).image
        #expect(plain.masks.isEmpty)
        #expect(plain.pixels.samples == image.pixels.samples)

        // EXR and HDF5 give the same layers back, rounded once to half.
        for ext in ["exr", "h5"] {
            let out = dir.appendingPathComponent("masks.\(ext)").path
            try Pipeline.export(image, format: ext == "exr" ? .exr : .hdf5, to: out)
            let back = ext == "exr" ? try EXRFile.readSceneLinear(out) : try HDF5File.readSceneLinear(out)
            #expect(back.masks.map(\.name) == image.masks.map(\.name), "\(ext)")
            #expect(back.masks.map(\.semanticName) == image.masks.map(\.semanticName), "\(ext)")
            #expect(back.masks.map(\.instanceID) == image.masks.map(\.instanceID), "\(ext)")
            #expect(back.masks.map(\.sourceIFD) == image.masks.map(\.sourceIFD), "\(ext)")
            for (a, b) in zip(back.masks, image.masks) {
                #expect(a.values.samples == b.values.samples.map { Float(Float16($0)) }, "\(ext) \(a.name)")
            }
        }
    }

    @Test func superpixelCFAMasksMatchTheirDefinition() throws {
        let dir = TestData.temporaryDirectory("masks-cfa")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("cfa.dng").path
        try DNGWriter.write(MaskFixtures.cfa(), to: path)
        var options = DevelopOptions()
        options.demosaic = .superpixel
        let image = try Pipeline.develop(path: path, options: options).image
        #expect(image.width == 44 && image.height == 56)
        #expect(image.masks.map(\.name) == ["sky", "disc"])
        #expect(image.masks.map(\.sourceIFD) == ["IFD0/SubIFD0", "IFD0/SubIFD1"])
        let expected = MaskFixtures.cfaExpected()
        for layer in image.masks {
            let error = Self.worst(layer.values.samples, expected[layer.name]!)
            #expect(error < 1e-5, "\(layer.name): off by up to \(error)")
        }
        // Full-size demosaicing: a Stage 3 grid twice as fine, the same mask space.
        let full = try Pipeline.develop(path: path).image
        #expect(full.width == 88 && full.height == 112)
        let sky = full.masks[0].values
        for oy in stride(from: 0, to: 112, by: 7) {
            for ox in stride(from: 0, to: 88, by: 5) {
                // Orientation 8, crop (top 4, left 8) of the 128 × 96 ActiveArea.
                let x = 8 + (112 - 1 - oy), y = 4 + ox
                let X = MaskFixtures.maskCoordinate(x, span: 128, full: 64), Y = MaskFixtures.maskCoordinate(y, span: 96, full: 48)
                let value = (X + 2 * Y + 5) / 255
                #expect(abs(Double(sky[oy, ox, 0]) - value) < 1e-5, "(\(ox), \(oy))")
            }
        }
    }

    @Test func maskSubAreaIsReadAsTheSDKDoes() {
        #expect(MaskSubArea.read(nil, maskWidth: 10, maskHeight: 8) == .absent)
        #expect(MaskSubArea.read([2, 3, 20, 16], maskWidth: 10, maskHeight: 8)
            == .subArea(MaskSubArea(top: 2, left: 3, fullWidth: 20, fullHeight: 16)))
        #expect(MaskSubArea.read([8, 10, 20, 16], maskWidth: 10, maskHeight: 8)
            == .subArea(MaskSubArea(top: 8, left: 10, fullWidth: 20, fullHeight: 16)))
        guard case .ignored = MaskSubArea.read([0, 0, 0, 0], maskWidth: 10, maskHeight: 8) else {
            Issue.record("all zero must be ignored")
            return
        }
        guard case .ignored = MaskSubArea.read([9, 10, 20, 16], maskWidth: 10, maskHeight: 8) else {
            Issue.record("a mask reaching past the mask space must be ignored")
            return
        }
        guard case .ignored = MaskSubArea.read([1, 2, 3], maskWidth: 10, maskHeight: 8) else {
            Issue.record("three values must be ignored")
            return
        }
    }

    /// A half-resolution mask (as ProRAW stores them) on a full-resolution grid: each output
    /// value is the bilinear interpolation at X = x/2 − 1/4, clamped at the edges.
    @Test func halfResolutionMaskInterpolates() {
        let mask = ImageBuffer<Float>(width: 3, height: 1, channels: 1, samples: [0, 1, 0.5])
        let grid = Stage3Grid(width: 6, height: 2, activeWidth: 6, activeHeight: 2)
        let out = MaskResampler.resample(mask, subArea: nil, onto: grid)
        let row: [Float] = [0, 0.25, 0.75, 0.875, 0.625, 0.5]
        #expect(out.samples == row + row)
    }

    /// A mask stored at the grid's own size is its own resampling — each value given back bit
    /// for bit — and any other mapping is not (half resolution, a trim, a sub-area, superpixels).
    @Test func maskOnItsOwnGridIsTheIdentity() {
        let codes: [UInt16] = (0..<(37 * 23)).map { UInt16(($0 * 7919) % 65536) }
        let mask = ImageBuffer<Float>(width: 37, height: 23, channels: 1, samples: codes.map { Float($0) * Float(1.0 / 65535) })
        let grid = Stage3Grid(width: 37, height: 23, activeWidth: 37, activeHeight: 23)
        #expect(MaskResampler.isIdentity(width: 37, height: 23, subArea: nil, onto: grid))
        #expect(MaskResampler.resample(mask, subArea: nil, onto: grid).samples.map(\.bitPattern) == mask.samples.map(\.bitPattern))
        #expect(!MaskResampler.isIdentity(width: 19, height: 12, subArea: nil, onto: grid))
        #expect(!MaskResampler.isIdentity(width: 36, height: 23, subArea: nil,
                                          onto: Stage3Grid.pipeline(activeArea: PixelRect(width: 37, height: 23), binning: 1, width: 36,
                                                                    height: 23, trim2: PixelRect(top: 0, left: 1, bottom: 23, right: 37))))
        #expect(!MaskResampler.isIdentity(width: 37, height: 23, subArea: MaskSubArea(top: 0, left: 1, fullWidth: 38, fullHeight: 23),
                                          onto: grid))
        #expect(!MaskResampler.isIdentity(width: 18, height: 11, subArea: nil,
                                          onto: Stage3Grid.pipeline(activeArea: PixelRect(width: 37, height: 23), binning: 2, width: 18, height: 11)))
    }

    /// An 8-bit mask on the grid's own pixels, for a file written as its rows are made: held as
    /// one byte a pixel (decoded block by block, strips or Deflate tiles) whose levels are the
    /// half floats the 16-bit route would give, bit for bit; a resampled mask is not.
    @Test func eightBitMaskOnItsGridIsHeldAsBytes() throws {
        let dir = TestData.temporaryDirectory("mask-bytes")
        defer { try? FileManager.default.removeItem(at: dir) }
        var dng = try TestChart.make(width: 64, height: 48, tileSize: (32, 16)).dng
        let codes: [UInt8] = (0..<(64 * 48)).map { UInt8(($0 * 37) % 256) }
        dng.semanticMasks = [SemanticMaskDNG(width: 64, height: 48, samples: codes, semanticName: "urn:com:apple:photo:2020:aux:semanticskinmatte"),
                             SemanticMaskDNG(width: 64, height: 48, samples: codes.reversed(), semanticName: "urn:com:apple:photo:2020:aux:hairmatte",
                                             deflate: true),
                             SemanticMaskDNG(width: 32, height: 24, samples: Array(codes.prefix(768)), semanticName: "urn:com:apple:photo:2020:aux:semanticskymatte")]
        let path = dir.appendingPathComponent("masks.dng").path
        try DNGWriter.write(dng, to: path)
        let file = try DNGFile.open(path: path)
        let grid = Stage3Grid(width: 64, height: 48, activeWidth: 64, activeHeight: 48)
        for orientation in [1, 6] {
            var plan = GeometryPlan.identity(width: 64, height: 48)
            plan.orientation = orientation
            let halves = try SemanticMasks.layers(file, grid: grid, plan: plan, half: true)
            let floats = try SemanticMasks.layers(file, grid: grid, plan: plan, half: false)
            #expect(halves.count == 3 && floats.count == 3)
            for (h, f) in zip(halves, floats) {
                #expect(h.halves.map(\.bitPattern) == HalfConversion.halves(f.values.samples).map(\.bitPattern), "\(h.name), orientation \(orientation)")
                #expect(h.width == f.width && h.height == f.height)
            }
            let coded = halves.map { if case .coded = $0.samples { true } else { false } }
            #expect(coded == [true, true, false], "orientation \(orientation)")
        }
    }

    /// The real iPhone 12 Pro ProRAW header: its sky matte is listed with its geometry, and
    /// decoding it names the truncation and the way around it.
    @Test func realProRAWSkyMatte() throws {
        let url = try TestData.shared("real/iphone12pro_proraw_header_only.dng")
        let dng = try DNGFile.open(path: url.path)
        let geometry = MaskGeometry.describe(dng)
        #expect(geometry.count == 1)
        let g = try #require(geometry.first)
        #expect(g.ifd == "IFD0/SubIFD1" && g.layer == "sky" && g.maskSubAreaUse == "absent")
        #expect(g.maskWidth == 2016 && g.maskHeight == 1512 && g.coversWidth == 4032 && g.coversHeight == 3024)
        #expect(g.outputWidth == 3024 && g.outputHeight == 4032 && g.outputOrientation == 6)
        let error = try #require(throws: SemanticMaskError.self) { try SemanticMasks.decode(dng, ifd: dng.semanticMasks[0]) }
        #expect(error.category == .truncated)
        #expect(error.description.hasPrefix(url.path + ": truncated file: strip 0 of IFD0/SubIFD1"), "\(error)")
        #expect(error.description.contains("--no-masks"), "\(error)")
    }
}
