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

/// Every damaged variant of the project's own DNGs (see `MalformedCorpus`) fails with a
/// specific error of the expected category — never a crash, never an internal error, never
/// an image — and through the command line with that category's exit code, the file named
/// in the message, and no output file.
@Suite struct MalformedCorpusTests {
    /// Valid, small sources covering the layouts: lossless-JPEG tiles (test chart),
    /// uncompressed strips (test chart), a CFA capture and a capture with a GainMap opcode.
    static func sources() throws -> [(String, Data)] {
        var out: [(String, Data)] = []
        let dir = TestData.temporaryDirectory("malformed-src")
        defer { try? FileManager.default.removeItem(at: dir) }
        let chart = try TestChart.make(width: 96, height: 64, tileSize: (32, 32))
        let tiled = dir.appendingPathComponent("tiled.dng").path
        try DNGWriter.write(chart.dng, to: tiled)
        out.append(("lj92-tiles", try Data(contentsOf: URL(fileURLWithPath: tiled))))
        var strips = chart.dng
        strips.compression = .uncompressed
        strips.tileSize = nil
        strips.rowsPerStrip = 16
        let stripped = dir.appendingPathComponent("strips.dng").path
        try DNGWriter.write(strips, to: stripped)
        out.append(("uncompressed-strips", try Data(contentsOf: URL(fileURLWithPath: stripped))))
        for (name, layout, shading) in [("cfa", "cfa", nil), ("gainmap", "linear-raw", 0.3)] as [(String, String, Double?)] {
            var camera = CameraModel()
            camera.layout = layout
            camera.lensShading = shading
            camera.seed = 7
            let scene = try RenderedScene(BuiltInScene.greyRamp.description(width: 48, height: 32))
            let capture = try Simulator.capture(scene, camera: camera)
            let path = dir.appendingPathComponent("\(name).dng").path
            try DNGWriter.write(capture.dng, to: path)
            out.append((name, try Data(contentsOf: URL(fileURLWithPath: path))))
        }
        return out
    }

    @Test func everyDamagedFileFailsSpecifically() throws {
        let dir = TestData.temporaryDirectory("malformed")
        defer { try? FileManager.default.removeItem(at: dir) }
        var all: [MalformedCorpus.Case] = []
        for (label, data) in try Self.sources() {
            // The undamaged source develops.
            _ = try Pipeline.develop(DNGFile(file: FileBytes(data: data, path: label)))
            all += try MalformedCorpus(data, label: label).cases
        }
        #expect(all.count >= 150, "\(all.count) cases")
        var byCategory: [FailureCategory: Int] = [:]
        var written: [(MalformedCorpus.Case, String)] = []
        for (i, c) in all.enumerated() {
            let category: FailureCategory?
            do {
                let dng = try DNGFile(file: FileBytes(data: c.bytes, path: "case\(i).dng"))
                _ = try Pipeline.develop(dng)
                category = nil
            } catch let failure as any SceneLinearFailure {
                category = failure.category
                #expect(failure.description.contains("case\(i).dng"), "\(c.name): \(failure.description)")
            }
            #expect(category != nil, "\(c.name): developed without an error")
            if let category {
                #expect(c.expected.contains(category), "\(c.name): \(category.name), expected \(c.expected.map(\.name))")
                byCategory[category, default: 0] += 1
            }
            let path = dir.appendingPathComponent(String(format: "case%03d.dng", i)).path
            try c.bytes.write(to: URL(fileURLWithPath: path))
            written.append((c, path))
        }
        print("malformed corpus: \(all.count) cases; " + byCategory.sorted { $0.key.rawValue < $1.key.rawValue }
            .map { "\($0.key.name) \($0.value)" }.joined(separator: ", "))

        // The command line: the category's exit code, the file named, nothing written. Under
        // AddressSanitizer every eighth case (each case is developed in this process above,
        // and every case goes through the command line in the main suite).
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let step = TestData.underAddressSanitizer ? 8 : 1
        for (c, path) in stride(from: 0, to: written.count, by: step).map({ written[$0] }) {
            let r = try CLI.run(["convert", path, "-o", out.path + "/", "--format", "exr,hdf5", "--json"])
            let json = try? JSONSerialization.jsonObject(with: Data(r.stderr.utf8)) as? [String: Any]
            let code = Int32(json?["exitCode"] as? Int ?? -1)
            #expect(r.status == code && c.expected.map(\.exitCode).contains(r.status), "\(c.name): exit \(r.status): \(r.stderr)")
            #expect((json?["message"] as? String)?.contains(URL(fileURLWithPath: path).lastPathComponent) == true, "\(c.name): \(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
    }

    /// The pixel and memory caps refuse a valid file before decoding it: exit 17, the file
    /// and the limit named, nothing written; the estimate scales with the image.
    @Test func resourceLimits() throws {
        let dir = TestData.temporaryDirectory("limits")
        defer { try? FileManager.default.removeItem(at: dir) }
        let chart = try TestChart.make(width: 96, height: 64, tileSize: (32, 32))
        let path = dir.appendingPathComponent("chart.dng").path
        try DNGWriter.write(chart.dng, to: path)
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        for (flag, value, text) in [("--max-pixels", "6K", "96×64 pixels, more than the limit of 6000 (--max-pixels)"),
                                    ("--max-memory", "100K", "more than the limit of 0.1 MiB (--max-memory)")] {
            let r = try CLI.run(["convert", path, "-o", out.path + "/", flag, value])
            #expect(r.status == 17, "\(flag): \(r.stderr)")
            #expect(r.stderr.contains("chart.dng: too large:") && r.stderr.contains(text), "\(r.stderr)")
            let stats = try CLI.run(["stats", path, flag, value, "--json"])
            #expect(stats.status == 17, "\(stats.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
        let raw = try DNGFile.open(path: path).mainRawImage()
        // The library's error carries the values that exceeded the limit.
        var few = DevelopOptions()
        few.limits.maxPixels = 6000
        let refused = try #require(throws: LimitError.self) { try Pipeline.develop(path: path, options: few) }
        #expect(refused.kind == .pixels(ifd: raw.path, width: 96, height: 64, limit: 6000) && refused.category == .limitExceeded)
        #expect(refused.description == "\(path): too large: the raw image (\(raw.path)) is 96×64 pixels, more than the limit of 6000 (--max-pixels)")
        // One EXR written as its rows are made: the process's base, 20 MiB and 1.6 bytes per pixel.
        let streamed = Pipeline.estimatedPeakBytes(raw, route: .streamedEXR)
        #expect(streamed == Pipeline.processBaseBytes + Int(Double(96 * 64) * 1.6 + Double(20 << 20)))
        let justOver = try CLI.run(["convert", path, "-o", out.path + "/", "--max-memory", "\(streamed / 1024 - 1)K"])
        #expect(justOver.status == 17, "\(justOver.stderr)")
        let ok = try CLI.run(["convert", path, "-o", out.path + "/", "--max-pixels", "6144", "--max-memory", "\(streamed / 1024 + 1)K"])
        #expect(ok.status == 0, "\(ok.stderr)")
        // Developed whole, stage after stage: 2·3 stored + 4·3 linear + 12 + 12 + 6 + 2 bytes per pixel.
        #expect(Pipeline.wholeImagePeakBytes(raw) == 96 * 64 * 50)
    }
}
