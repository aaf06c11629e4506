import Foundation
import Testing
import CaptureSimulation
import DNGWriter
@testable import Batching
@testable import Engine
@testable import Measuring
@testable import Reporting
import SceneLinearKit
@testable import SimulationCheck
import TestSupport

/// The engine gives, bit for bit, what the stages composed one after the other over the
/// whole image give (`StageByStageReference`), into Float and, through the writers' half
/// conversion, into half floats — pixels, clip mask, clipped count, processing notes and
/// semantic masks — for every orientation, crops, lossless-JPEG tiles and strips, CFA
/// demosaicing, position-dependent and area opcodes, TrimBounds, OpcodeList1, DefaultScale
/// and every Stage 1 storage, with tile seams at many positions.
@Suite struct StreamingDevelopTests {
    static func compare(_ path: String, options: DevelopOptions = DevelopOptions(), _ label: String) throws {
        let reference = try StageByStageReference.develop(path: path, options: options)
        // `develop` into Float (what the measurements read): the same values.
        let floats = try Pipeline.develop(path: path, options: options)
        #expect(floats.image.pixels.samples.map(\.bitPattern) == reference.image.pixels.samples.map(\.bitPattern), "\(label): Float pixels differ")
        #expect(floats.image.clipMask == reference.image.clipMask && floats.image.masks == reference.image.masks, "\(label)")
        #expect(floats.image.provenance == reference.image.provenance, "\(label): provenance differs")
        let streamed = try Pipeline.developHalf(path: path, options: options, keepClipMask: true)
        let a = HalfConversion.halves(reference.image.pixels.samples), b = streamed.image.pixels.samples
        #expect(streamed.image.width == reference.image.width && streamed.image.height == reference.image.height, "\(label)")
        #expect(a.map(\.bitPattern) == b.map(\.bitPattern), "\(label): pixels differ")
        #expect(streamed.image.clipMask == reference.image.clipMask, "\(label): clip masks differ")
        #expect(streamed.image.clippedPixelCount == reference.image.clippedPixelCount, "\(label)")
        #expect(streamed.image.provenance.processing == reference.image.provenance.processing, "\(label)")
        #expect(streamed.image.provenance.dng == reference.image.provenance.dng, "\(label)")
        #expect(streamed.image.masks == reference.image.masks, "\(label): masks differ")
        // Without the clip mask (EXR outputs): the same pixels, the count still kept.
        let lean = try Pipeline.developHalf(path: path, options: options, keepClipMask: false)
        #expect(lean.image.clipMask == nil && lean.image.clippedPixelCount == reference.image.clippedPixelCount, "\(label)")
        #expect(lean.image.pixels.samples.map(\.bitPattern) == b.map(\.bitPattern), "\(label): pixels differ without mask")
    }

    /// A simulated capture of the sunset scene, `width` × `height`, CFA unless `linearRaw`,
    /// exposed so that the sun clips a few samples, with `lensShading` (a GainMap in
    /// OpcodeList2) when given.
    static func sunsetCapture(width: Int, height: Int, seed: UInt64, cfa: Bool = true, lensShading: Double? = nil,
                              exposureTime: Double? = 0.04) throws -> LinearRawDNG {
        var camera = CameraModel()
        if cfa { camera.layout = "cfa" }
        camera.lensShading = lensShading
        camera.seed = seed
        if let exposureTime { camera.exposureTime = exposureTime }
        let scene = try RenderedScene(BuiltInScene.sunset.description(width: width, height: height))
        return try Simulator.capture(scene, camera: camera).dng
    }

    @Test func sameBitsAsDevelop() throws {
        let dir = TestData.temporaryDirectory("streaming")
        defer { try? FileManager.default.removeItem(at: dir) }
        // A test chart with clipped steps, tiles that do not divide the image, a DefaultCrop
        // and a user crop, in all eight orientations.
        var chart = try TestChart.make(width: 200, height: 136, tileSize: (64, 48)).dng
        chart.defaultCrop = (origin: [6, 4], size: [180, 120])
        chart.defaultUserCrop = [0.1, 0.05, 0.9, 0.95]
        // A half-resolution sky matte (a horizontal gradient) and a sub-area disc.
        let sky: [UInt8] = (0..<(68 * 100)).map { i in UInt8((i % 100) * 255 / 99) }
        var disc = [UInt8](repeating: 0, count: 40 * 40)
        for i in 0..<disc.count {
            let x = Double(i % 40) - 19.5, y = Double(i / 40) - 19.5
            if x * x + y * y < 300 { disc[i] = 255 }
        }
        chart.semanticMasks = [SemanticMaskDNG(width: 100, height: 68, samples: sky, semanticName: "urn:com:apple:photo:2020:aux:semanticskymatte"),
                               SemanticMaskDNG(width: 40, height: 40, samples: disc, semanticName: "urn:example:disc",
                                               maskSubArea: [20, 50, 200, 136], deflate: true)]
        for orientation in 1...8 {
            chart.orientation = orientation
            let path = dir.appendingPathComponent("chart\(orientation).dng").path
            try DNGWriter.write(chart, to: path)
            try Self.compare(path, "chart orientation \(orientation)")
        }
        // Uncompressed strips, baseline exposure scaling, camera colour.
        chart.orientation = 1
        chart.semanticMasks = []
        chart.compression = .uncompressed
        chart.tileSize = nil
        chart.rowsPerStrip = 5
        let strips = dir.appendingPathComponent("strips.dng").path
        try DNGWriter.write(chart, to: strips)
        var options = DevelopOptions(exposure: .baseline, encoding: .cameraNative)
        try Self.compare(strips, options: options, "strips, baseline, camera")
        options.crop = .none
        try Self.compare(strips, options: options, "strips, no crop")

        // A simulated capture with lens shading (a GainMap in OpcodeList2), plus a
        // DeltaPerRow and a MapPolynomial appended to the list.
        var capture = try Self.sunsetCapture(width: 160, height: 120, seed: 3, cfa: false, lensShading: 0.4, exposureTime: nil)
        capture.tileSize = (64, 48)  // several tiles, the last column and row partly outside
        let shaded = dir.appendingPathComponent("shaded.dng").path
        try DNGWriter.write(capture, to: shaded)
        try Self.compare(shaded, "GainMap")
        let shading = try #require(capture.opcodeLists[2])
        capture.opcodeLists[2] = Self.appendingRowColumnAndPolynomial(to: shading, width: 160, rows: 120)
        let more = dir.appendingPathComponent("opcodes.dng").path
        try DNGWriter.write(capture, to: more)
        try Self.compare(more, "GainMap + DeltaPerRow + ScalePerColumn + MapPolynomial")
        let notes = try Pipeline.develop(path: more).image.provenance.processingValue("opcodeList2")
        #expect(notes == .text("DeltaPerRow ×1 applied; GainMap ×1 applied; MapPolynomial ×1 applied; ScalePerColumn ×1 applied"))
    }

    /// CFA captures: the Stage 2 mosaic gathered tile by tile (with a lens-shading GainMap
    /// in OpcodeList2 applied strip by strip), then demosaiced, OpcodeList3, colour and
    /// output band by band — the same bits as the whole-image path for every method, tile
    /// grid (tile seams at every position a 16-pixel grid allows relative to RCD's 64-row
    /// bands), ActiveArea phase, orientation and crop.
    @Test(arguments: [DemosaicMethod.rcd, .bilinear, .superpixel])
    func cfaSameBitsAsDevelop(method: DemosaicMethod) throws {
        let dir = TestData.temporaryDirectory("streaming-cfa-\(method)")
        defer { try? FileManager.default.removeItem(at: dir) }
        var capture = try Self.sunsetCapture(width: 210, height: 150, seed: 8, lensShading: 0.4)
        var options = DevelopOptions()
        options.demosaic = method
        for (k, tile) in [(48, 32), (64, 48), (16, 16), (80, 112)].enumerated() {
            capture.tileSize = tile
            capture.orientation = [1, 6, 3, 8][k]
            capture.activeArea = k % 2 == 0 ? nil : PixelRect(top: 2, left: 3, bottom: 147, right: 207)
            capture.defaultCrop = k == 2 ? (origin: [5, 4], size: [180, 120]) : nil
            if k == 3 {
                capture.compression = .losslessJPEG(predictor: 1)
                capture.opcodeLists[3] = Self.appendingRowColumnAndPolynomial(to: [0, 0, 0, 0], width: 210, rows: 150)
            }
            let path = dir.appendingPathComponent("cfa\(k).dng").path
            try DNGWriter.write(capture, to: path)
            try Self.compare(path, options: options, "CFA \(method) tiles \(tile) orientation \(capture.orientation)")
        }
        let notes = try Pipeline.develop(path: dir.appendingPathComponent("cfa3.dng").path, options: options).image.provenance.processing
        #expect(notes.map(\.key).filter { $0.hasPrefix("opcodeList") || $0 == "demosaic" } == ["opcodeList2", "demosaic", "opcodeList3"])
    }

    /// The mosaic window: blocks arrive a row of blocks at a time (rows of short blocks taken
    /// together until they span 64 rows) and each demosaicing band runs once the rows it
    /// reads are in, so block-row boundaries must be tried at every offset against the bands
    /// and their reach (RCD: 64-row bands reading 10 rows more on each side; bilinear and
    /// superpixel: 32-row bands, bilinear reading 1 more): 16-row tiles under an ActiveArea
    /// moved down by 0 to 15 rows (boundaries at every row offset modulo 64), tile heights up
    /// to 144, and strips of 1, 7, 63, 64 and 65 rows — the same bits as the stage-by-stage
    /// reference each time.
    @Test(arguments: [DemosaicMethod.rcd, .bilinear, .superpixel])
    func mosaicWindowAtEveryBoundary(method: DemosaicMethod) throws {
        let dir = TestData.temporaryDirectory("streaming-window-\(method)")
        defer { try? FileManager.default.removeItem(at: dir) }
        var capture = try Self.sunsetCapture(width: 64, height: 302, seed: 5)
        var options = DevelopOptions()
        options.demosaic = method
        let layouts: [(top: Int, tile: (Int, Int)?, rowsPerStrip: Int)] = (0..<16).map { ($0, (32, 16), 64) }
            + stride(from: 32, through: 144, by: 16).map { (1, (32, $0), 64) }
            + [1, 7, 63, 64, 65].map { (3, nil, $0) }
        for layout in layouts {
            capture.activeArea = PixelRect(top: layout.top, left: 2, bottom: layout.top + 286, right: 64)
            capture.tileSize = layout.tile
            capture.rowsPerStrip = layout.rowsPerStrip
            let path = dir.appendingPathComponent("w.dng").path
            try DNGWriter.write(capture, to: path)
            try Self.compare(path, options: options, "CFA \(method), ActiveArea top \(layout.top), "
                             + (layout.tile.map { "tiles \($0)" } ?? "strips of \(layout.rowsPerStrip)"))
        }
    }

    /// A big-endian opcode list of (ID, LONG parameters) records, version 1.3.0.0.
    static func longList(_ opcodes: [(id: UInt32, parameters: [UInt32])]) -> [UInt8] {
        var out: [UInt8] = []
        func u32(_ v: UInt32) { out += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        u32(UInt32(opcodes.count))
        for op in opcodes {
            u32(op.id); u32(0x0103_0000); u32(0); u32(UInt32(4 * op.parameters.count))
            op.parameters.forEach(u32)
        }
        return out
    }

    /// Stages that need more than a region — FixBadPixelsList and FixBadPixelsConstant (which
    /// read their neighbours), TrimBounds, OpcodeList1, DefaultScale resampling — collect
    /// what comes before them: the same bits as the stage-by-stage reference with tile seams
    /// at many positions (bad points and a bad rectangle on the seams of a 16-pixel grid).
    @Test(arguments: [DemosaicMethod.rcd, .bilinear, .superpixel])
    func collectingStagesSameBits(method: DemosaicMethod) throws {
        let dir = TestData.temporaryDirectory("streaming-collect-\(method)")
        defer { try? FileManager.default.removeItem(at: dir) }
        var capture = try Self.sunsetCapture(width: 130, height: 98, seed: 3)
        var options = DevelopOptions()
        options.demosaic = method
        let phase = UInt32(Pipeline.activeAreaBayerPhase(try DNGFile.open(path: {
            let p = dir.appendingPathComponent("probe.dng").path
            try DNGWriter.write(capture, to: p)
            return p
        }()).mainRawImage())!)
        // Bad points on tile seams (rows/columns 15, 16, 31, 32, 47, 48) and a rectangle across one.
        let points: [UInt32] = [15, 16, 16, 31, 31, 32, 32, 47, 47, 48, 48, 15, 63, 64]
        let badList = (id: UInt32(5), parameters: [phase, UInt32(points.count / 2), 1] + points + [30, 28, 35, 37])
        let cases: [(String, [Int: [UInt8]], (Int, Int))] = [
            ("bad pixels in OpcodeList2", [2: Self.longList([badList])], (16, 16)),
            ("bad pixels and TrimBounds in OpcodeList2", [2: Self.longList([badList, (6, [2, 4, 94, 124])])], (48, 32)),
            ("FixBadPixelsConstant in OpcodeList1, TrimBounds in OpcodeList3",
             [1: Self.longList([(4, [0, phase])]), 3: Self.longList([(6, method == .superpixel ? [3, 1, 40, 60] : [3, 1, 60, 97])])], (32, 48)),
        ]
        for (label, lists, tile) in cases {
            capture.tileSize = tile
            capture.opcodeLists = lists
            let path = dir.appendingPathComponent("c.dng").path
            try DNGWriter.write(capture, to: path)
            try Self.compare(path, options: options, "CFA \(method): \(label), tiles \(tile)")
            let notes = try Pipeline.develop(path: path, options: options).image.provenance.processing
            if lists[2] != nil {
                #expect(notes.contains { $0.key == "opcodeList2" && "\($0.value)".contains("FixBadPixelsList ×1 applied") }, "\(label)")
            }
        }
        // LinearRaw: DefaultScale resampling and TrimBounds in both lists, over several tile grids,
        // and an ActiveArea with whole tiles outside it.
        for (k, tile) in [(16, 16), (48, 16), (16, 48)].enumerated() {
            var chart = try TestChart.make(width: 96, height: 80, tileSize: tile).dng
            chart.defaultScale = [[2, 1], [1, 1], [1, 1.5]][k]
            chart.orientation = [1, 6, 3][k]
            // Whole tiles in the masked border above, left of and below the ActiveArea.
            chart.activeArea = k == 0 ? PixelRect(top: 17, left: 16, bottom: 60, right: 90) : nil
            chart.opcodeLists = k == 2 ? [2: Self.longList([(6, [1, 2, 77, 93])]), 3: Self.longList([(6, [4, 0, 70, 90])])]
                : k == 1 ? [3: Self.longList([(6, [0, 5, 80, 96])])] : [:]
            let path = dir.appendingPathComponent("l\(k).dng").path
            try DNGWriter.write(chart, to: path)
            try Self.compare(path, options: options, "LinearRaw scale \(chart.defaultScale) tiles \(tile)")
        }
    }

    /// Adds DeltaPerRow (ID 10: +0.001 per row over the whole image), ScalePerColumn (ID 13:
    /// × (1 + 0.0005 per column)) and MapPolynomial (ID 8: x + 0.01 x²) to a big-endian
    /// opcode list.
    static func appendingRowColumnAndPolynomial(to list: [UInt8], width: Int, rows: Int) -> [UInt8] {
        func u32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        func f32(_ v: Float) -> [UInt8] { u32(v.bitPattern) }
        func f64(_ v: Double) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v.bitPattern >> UInt64(56 - 8 * $0)) } }
        let area = [0, 0, rows, width, 0, 3, 1, 1].flatMap { u32(UInt32($0)) }  // whole image, planes 0…2, pitch 1
        var delta = area + u32(UInt32(rows))
        for r in 0..<rows { delta += f32(Float(r) * 0.001) }
        var scale = area + u32(UInt32(width))
        for c in 0..<width { scale += f32(1 + Float(c) * 0.0005) }
        let polynomial = area + u32(2) + f64(0) + f64(1) + f64(0.01)
        var out = u32(UInt32(list[0]) << 24 | UInt32(list[1]) << 16 | UInt32(list[2]) << 8 | UInt32(list[3]) + 3)
        out += list[4...]
        out += u32(10) + u32(0x0103_0000) + u32(0) + u32(UInt32(delta.count)) + delta
        out += u32(13) + u32(0x0103_0000) + u32(0) + u32(UInt32(scale.count)) + scale
        out += u32(8) + u32(0x0103_0000) + u32(0) + u32(UInt32(polynomial.count)) + polynomial
        return out
    }
}
