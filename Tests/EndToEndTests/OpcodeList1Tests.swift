import Foundation
import Testing
import CaptureSimulation
import DNGWriter
import Opcodes
@testable import Batching
@testable import Engine
@testable import Measuring
@testable import Reporting
import SceneLinearKit
@testable import SimulationCheck
import TestSupport

/// OpcodeList1 runs on the Stage 1 samples, before linearization, in stored units.
@Suite struct OpcodeList1Tests {
    /// A big-endian opcode list of one opcode (DNG chapter 7 layout).
    static func list(id: UInt32, parameters: [UInt32]) -> [UInt8] {
        var out: [UInt8] = []
        func u32(_ v: UInt32) { out += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        u32(1)
        u32(id)
        u32(0x0103_0000)
        u32(0)
        u32(UInt32(4 * parameters.count))
        parameters.forEach(u32)
        return out
    }

    /// A flat RGGB mosaic (R 20000, G 30000, B 10000 above black 1000) with dead pixels
    /// (stored 0) marked for FixBadPixelsConstant: with the list every superpixel equals the
    /// flat value; without it the cells holding a dead pixel are darker.
    @Test func badPixelsAreFixedBeforeLinearization() throws {
        let w = 32, h = 24
        var samples = [UInt16](repeating: 0, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                let colour = (y % 2) * 2 + x % 2  // RGGB: 0 R, 1 G, 2 G, 3 B
                samples[y * w + x] = [21000, 31000, 31000, 11000][colour]
            }
        }
        let dead = [(5, 7), (10, 10), (17, 3), (20, 28)]
        for (y, x) in dead { samples[y * w + x] = 0 }
        var dng = RawDNG(width: w, height: h, samples: samples)
        dng.cfaPattern = [0, 1, 1, 2]
        dng.blackLevel = [1000]
        dng.whiteLevel = [60000]
        dng.tileSize = nil
        let dir = TestData.temporaryDirectory("opcodelist1")
        defer { try? FileManager.default.removeItem(at: dir) }
        var options = DevelopOptions()
        options.demosaic = .superpixel
        options.crop = .none
        let plain = dir.appendingPathComponent("plain.dng").path
        try DNGWriter.write(dng, to: plain)
        // FixBadPixelsConstant (ID 4): constant 0, BayerPhase 1 (the DNG SDK's numbering:
        // 0 green-red, 1 red-green, 2 blue-green, 3 green-blue along the first row).
        dng.opcodeLists[1] = Self.list(id: 4, parameters: [0, 1])
        let fixed = dir.appendingPathComponent("fixed.dng").path
        try DNGWriter.write(dng, to: fixed)

        let a = try Pipeline.develop(path: fixed, options: options).image
        let values = a.pixels.samples
        for c in 0..<3 {
            let plane = stride(from: c, to: values.count, by: 3).map { values[$0] }
            let spread = (plane.max() ?? 0) - (plane.min() ?? 0)
            #expect(spread == 0, "channel \(c) spread \(spread)")
        }
        #expect(a.provenance.processingValue("opcodeList1") == .text("FixBadPixelsConstant ×1 applied"))
        let b = try Pipeline.develop(path: plain, options: options).image
        let cells = Set(dead.map { ($0.0 / 2) * (w / 2) + $0.1 / 2 })
        for i in 0..<(w / 2 * h / 2) {
            let darker = b.pixels.samples[3 * i + 1] < a.pixels.samples[3 * i + 1]
                || b.pixels.samples[3 * i] < a.pixels.samples[3 * i] || b.pixels.samples[3 * i + 2] < a.pixels.samples[3 * i + 2]
            #expect(darker == cells.contains(i), "cell \(i)")
        }
    }

    /// A GainMap in OpcodeList1 scales stored codes (before black subtraction) and the
    /// results are rounded back to integers: stored 10000, black 1000, gain 1.5 → 15000 →
    /// (15000 − 1000) / (61000 − 1000).
    @Test func gainMapScalesStoredCodes() throws {
        let w = 16, h = 16
        var dng = RawDNG(width: w, height: h, samples: [UInt16](repeating: 10000, count: w * h * 3))
        dng.blackLevel = [1000, 1000, 1000]
        dng.whiteLevel = [61000, 61000, 61000]
        dng.tileSize = nil
        let map = GainMap(area: OpcodeArea(top: 0, left: 0, bottom: h, right: w, plane: 0, planes: 3, rowPitch: 1, colPitch: 1),
                          pointsV: 2, pointsH: 2, spacingV: 1, spacingH: 1, originV: 0, originH: 0, mapPlanes: 1,
                          gains: [1.5, 1.5, 1.5, 1.5])
        dng.opcodeLists[1] = LensShading.encodeList([map])
        let dir = TestData.temporaryDirectory("opcodelist1-gain")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("gain.dng").path
        try DNGWriter.write(dng, to: path)
        var options = DevelopOptions()
        options.encoding = .cameraNative
        let image = try Pipeline.develop(path: path, options: options).image
        let expected = Float(14000.0 / 60000.0)
        #expect(image.pixels.samples.allSatisfy { abs($0 - expected) <= expected * 1e-6 }, "\(image.pixels.samples.prefix(3))")
    }
}
