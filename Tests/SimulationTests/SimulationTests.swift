import Foundation
import Testing
import Analysis
@testable import CaptureSimulation
import DNGWriter
@testable import Batching
@testable import Engine
@testable import Measuring
@testable import Reporting
import SceneLinearKit
@testable import SimulationCheck
import DNGContainer
import RawDecode
import Linearize
import TestSupport

/// Simulated captures decoded by the pipeline against their ground truth (issue acceptance:
/// exact noise-free decode, unbiased means, NoiseProfile-consistent noise, recovered ratios).
@Suite struct SimulationTests {
    static func simulate(_ scene: BuiltInScene, width: Int = 256, height: Int = 192, configure: (inout CameraModel) -> Void = { _ in })
        throws -> (SimulationOutput, URL) {
        let dir = TestData.temporaryDirectory("sim")
        var camera = CameraModel()
        configure(&camera)
        let output = try Pipeline.simulate(scene: RenderedScene(scene.description(width: width, height: height)), camera: camera,
                                           name: scene.rawValue, directory: dir.path)
        return (output, dir)
    }

    @Test(arguments: ["lossless-jpeg", "uncompressed"])
    func noiseFreeDecodeEqualsTheExpectedValues(storage: String) throws {
        let (output, dir) = try Self.simulate(.greyRamp) { $0.noise = false; $0.storage = storage }
        defer { try? FileManager.default.removeItem(at: dir) }
        let report = try Pipeline.validate(dngPath: output.files["dng"]!, record: output.record)
        #expect(report.exactDecode.passed, "\(report.text)")
        #expect(report.exactDecode.failures == 0)
        // The written expected file holds the same values (half floats).
        let expected = try HDF5File.readSceneLinear(output.files["expected-hdf5"]!)
        let decoded = try Pipeline.develop(path: output.files["dng"]!, options: { var o = DevelopOptions(); o.crop = .none; return o }())
        #expect(decoded.image.pixels.samples.map(Float16.init) == expected.pixels.samples.map(Float16.init))
        // Noise free, the truth is recovered to the quantisation of the ADC (±0.5 DN) and the
        // companding (±half a code step, ≤ 0.07 %): with the weakest camera channel at half the
        // signal, |bias| ≤ 1 DN / (0.5 · signal in DN) + 0.1 %. Above 4 stops below white that is
        // within 0.25 %.
        let range = output.record.camera.whiteLevel - output.record.camera.blackLevel
        for patch in report.patches where patch.clippedFraction == 0 {
            for (bias, truth) in zip(patch.relativeBias, patch.truth) {
                let bound = 1.0 / (0.5 * truth * range) + 0.001
                #expect(abs(bias) <= bound, "\(patch.name): bias \(bias), bound \(bound)")
            }
            if patch.stopsBelowWhite < 4 {
                #expect(patch.relativeBias.allSatisfy { abs($0) < 0.0025 }, "\(patch.name): \(patch.relativeBias)")
            }
        }
    }

    @Test func noisyCaptureIsUnbiasedAndMatchesItsNoiseProfile() throws {
        let (output, dir) = try Self.simulate(.greyRamp, width: 1024, height: 384)
        defer { try? FileManager.default.removeItem(at: dir) }
        let report = try Pipeline.validate(dngPath: output.files["dng"]!, record: output.record)
        #expect(report.passed, "\(report.text)")
        let unclipped = report.patches.filter { $0.clippedFraction == 0 }
        // 17 unclipped steps cover more than 14 stops.
        #expect(unclipped.count == 17)
        #expect((unclipped.map(\.stopsBelowWhite).max() ?? 0) - (unclipped.map(\.stopsBelowWhite).min() ?? 0) > 14)
        for p in unclipped {
            #expect(p.biasPassed == true, "\(p.name) bias \(p.relativeBias)")
            #expect(p.variancePassed == true, "\(p.name) variance ratio \(p.varianceRatio ?? [])")
            // Where noise allows, the bias is below 0.1 % outright.
            if p.standardError.allSatisfy({ $0 * 3 < 0.001 * p.truth.min()! }) {
                #expect(p.relativeBias.allSatisfy { abs($0) < 0.001 }, "\(p.name): \(p.relativeBias)")
            }
        }
        let clipped = try #require(report.patches.first { $0.name == "grey/17" })
        #expect(clipped.clippedFraction == 1)
    }

    @Test func sunsetRatioIsRecovered() throws {
        let (output, dir) = try Self.simulate(.sunset, width: 512, height: 384)
        defer { try? FileManager.default.removeItem(at: dir) }
        let report = try Pipeline.validate(dngPath: output.files["dng"]!, record: output.record)
        let ratio = try #require(report.ratios.first)
        #expect(abs(ratio.trueRatio - 0.12) < 1e-12)
        #expect(ratio.covered, "\(report.text)")
        #expect(ratio.measured.kind == .value)
        #expect(abs(ratio.measured.ratio - 0.12) < 0.001)
    }

    /// The 95 % interval of a ratio contains the true ratio in about 95 % of seeded trials.
    @Test func ratioIntervalCoverage() throws {
        let dir = TestData.temporaryDirectory("coverage")
        defer { try? FileManager.default.removeItem(at: dir) }
        // A small, dark sunset so each trial is fast and the interval is wide.
        let scene = try RenderedScene(BuiltInScene.sunset.description(width: 96, height: 64))
        var covered = 0
        let trials = 200
        for seed in 0..<trials {
            var camera = CameraModel()
            camera.seed = UInt64(1000 + seed)
            camera.exposureTime = 0.0025 // two stops darker: noisier
            camera.storage = "uncompressed"
            let output = try Pipeline.simulate(scene: scene, camera: camera, name: "t\(seed)", directory: dir.path)
            let report = try Pipeline.validate(dngPath: output.files["dng"]!, record: output.record)
            if report.ratios.first?.covered == true { covered += 1 }
            for file in output.files.values { try? FileManager.default.removeItem(atPath: file) }
        }
        // Binomial(200, 0.95): mean 190, sd 3.1; accept 180...199.
        #expect((180...199).contains(covered), "\(covered) of \(trials) intervals covered the true ratio")
    }

    @Test func capturesAreReproducible() throws {
        let scene = try RenderedScene(BuiltInScene.colourChart.description(width: 128, height: 96))
        var camera = CameraModel()
        camera.seed = 77
        let a = try Simulator.capture(scene, camera: camera)
        let b = try Simulator.capture(scene, camera: camera)
        #expect(a.dng.samples == b.dng.samples)
        camera.seed = 78
        let c = try Simulator.capture(scene, camera: camera)
        #expect(a.dng.samples != c.dng.samples)
    }

    /// The NoiseProfile written follows from the camera: S = gain / (W − B),
    /// O = (gain² σ² + 1/12) / (W − B)².
    @Test func noiseProfileFollowsTheCamera() {
        var camera = CameraModel()
        camera.iso = 400
        let range = camera.whiteLevel - camera.blackLevel
        #expect(abs(camera.gain - (16383 - 512) / 12000 * 4) < 1e-12)
        #expect(camera.whiteLevel == 16383)
        #expect(abs(camera.noiseProfile[0] - camera.gain / range) < 1e-15)
        #expect(abs(camera.noiseProfile[1] - (camera.gain * camera.gain * 6.25 + 1.0 / 12) / (range * range)) < 1e-15)
    }

    /// Scenes from JSON: elements, patches, defaults and errors.
    @Test func sceneDescriptions() throws {
        let json = """
            {"name": "t", "width": 64, "height": 32,
             "elements": [{"type": "rect", "name": "a", "rect": [0, 0, 0.5, 0.5], "rgb": [0.1, 0.2, 0.3]},
                          {"type": "ramp", "name": "r", "rect": [16, 0, 32, 64], "steps": 4, "top": 0.8, "rgb": [1, 1, 1]}]}
            """
        let description = try JSONDecoder().decode(SceneDescription.self, from: Data(json.utf8))
        #expect(description.unit == .relative && description.background == [0, 0, 0])
        let scene = try RenderedScene(description)
        #expect(scene.patches.map(\.name) == ["a", "r/0", "r/1", "r/2", "r/3"])
        #expect(scene.radiance[0, 0, 1] == 0.2)
        #expect(scene.radiance[20, 63, 0] == 0.8 && scene.radiance[20, 0, 0] == 0.1)
        let bad = SceneDescription(name: "b", width: 64, height: 32, background: [0, 0, 0],
                                   elements: [.init(type: "star", rgb: [1, 1, 1])])
        #expect(throws: SceneError.self) { try RenderedScene(bad) }
        let camera = try JSONDecoder().decode(CameraModel.self, from: Data(#"{"iso": 800, "companding": null}"#.utf8))
        #expect(camera.iso == 800 && camera.companding == nil && camera.fullWell == 12000)
    }
}

/// Simulated DNGs in independent readers: tifffile + imagecodecs decode the stored codes and
/// numpy applies DNG Stage 2 from the tags (float32, the same operation order); the result
/// equals SceneLinear's Stage 2 bit for bit. exiftool reads the tags.
@Suite struct SimulatedDNGIndependentReaderTests {
    @Test(arguments: ["linear-raw", "cfa"])
    func stage2BitExactInNumpy(layout: String) throws {
        let dir = TestData.temporaryDirectory("sim-indep")
        defer { try? FileManager.default.removeItem(at: dir) }
        var camera = CameraModel()
        camera.layout = layout
        camera.cfaPattern = "GRBG"
        let scene = try RenderedScene(BuiltInScene.greyRamp.description(width: 160, height: 96))
        let capture = try Simulator.capture(scene, camera: camera)
        let path = dir.appendingPathComponent("s.dng").path
        try DNGWriter.write(capture.dng, to: path)

        let dng = try DNGFile.open(path: path)
        let raw = try dng.mainRawImage()
        let linear = try Linearizer.linearize(try RawDecoder.decode(dng, ifd: raw), path: path)
        let ours = dir.appendingPathComponent("ours.f32").path
        try linear.values.samples.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: ours))
        let script = """
            import sys, numpy as np, tifffile
            path, ours = sys.argv[1], sys.argv[2]
            with tifffile.TiffFile(path) as t:
                page = t.pages[0].pages[0]
                codes = page.asarray()
                tags = {tag.code: tag.value for tag in page.tags.values()}
            table = np.asarray(tags[50712], dtype=np.uint16)
            black = np.float32(np.asarray(tags[50714], dtype=np.float64).reshape(-1)[0])
            white = float(np.asarray(tags[50717]).reshape(-1)[0])
            scale = np.float32(1.0 / (white - float(black)))
            lin = table[np.minimum(codes.astype(np.int64), len(table) - 1)].astype(np.float32)
            x = np.minimum((lin - black) * scale, np.float32(1))
            mine = np.fromfile(ours, dtype='<f4').reshape(x.shape)
            print('shape', x.shape, 'bit-exact', bool(np.array_equal(x.view(np.uint32), mine.view(np.uint32))))
            """
        let py = try TestData.runPython(script, [path, ours])
        #expect(py.status == 0, "\(py.stderr)")
        #expect(py.stdout.contains("bit-exact True"), "\(py.stdout)")

        do { let exiftool = try TestData.tool("exiftool")
            let tags = try TestData.run(exiftool, ["-s", "-s", "-s", "-NoiseProfile", "-ISO", "-ExposureTime", "-BlackLevel", path]).stdout
            let lines = tags.split(separator: "\n").map(String.init)
            #expect(lines.count == 4, "\(tags)")
            let profile = lines.first?.split(separator: " ").compactMap { Double($0) } ?? []
            #expect(profile.count == 2 && abs(profile[0] - camera.noiseProfile[0]) < 1e-9 * camera.noiseProfile[0] * 1e3)
            #expect(lines.contains("100"))
        }
    }
}

/// Lens shading written as a GainMap (OpcodeList2) and undone by the decoder.
@Suite struct LensShadingTests {
    @Test func gainMapUndoesTheShading() throws {
        let dir = TestData.temporaryDirectory("shading")
        defer { try? FileManager.default.removeItem(at: dir) }
        var camera = CameraModel()
        camera.lensShading = 0.5
        let output = try Pipeline.simulate(scene: RenderedScene(BuiltInScene.greyRamp.description(width: 512, height: 256)),
                                           camera: camera, name: "s", directory: dir.path)
        let report = try Pipeline.validate(dngPath: output.files["dng"]!, record: output.record)
        #expect(report.passed, "\(report.text)")
        let developed = try Pipeline.develop(path: output.files["dng"]!)
        let note = developed.image.provenance.processingValue("opcodeList2")
        #expect(note == .text("GainMap ×1 applied"), "\(String(describing: note))")
        // Without the opcode the corners would be darker: the stored corner codes are lower than the centre's
        // for the same radiance (the background), by about the shading.
        let gains = try #require(output.capture.pixelGains)
        #expect(abs(Double(gains[0]) - 1 / (1 - 0.5 * 0.98)) < 0.05)
        #expect(abs(Double(gains[128 * 512 + 256]) - 1) < 0.01)
    }
}
