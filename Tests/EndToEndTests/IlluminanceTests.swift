import CaptureSimulation
import Foundation
import SceneLinearKit
import SimulationCheck
import Testing
import TestSupport

/// Illuminance from fisheye images in closed loop (docs/fisheye.md): a simulated CIE overcast
/// dome through each projection gives E_v within 0.5 % of 7π/9 · L_z, its interval covering
/// it; Radiance's evalglare -V on our .hdr agrees within 1 %; a sky with the sun merged from a
/// bracket; a clipped sun makes a lower bound; calibrate --illuminance-vertical recovers K.
@Suite struct IlluminanceTests {
    /// A camera whose ISO label is exact, so that the estimate K = 120 is the true constant.
    static var camera: CameraModel {
        var c = CameraModel()
        c.sensitivityOffset = 0
        return c
    }

    static func dome(_ projection: FisheyeProjection, sun: Bool = false, size: Int = 512) -> SceneDescription {
        SceneDescription(name: "dome-\(projection.rawValue)", width: size, height: size, background: [0, 0, 0], elements: [
            .init(type: "sky", name: "sky", rgb: [0.45, 0.5, 0.6], projection: projection.rawValue, fov: 180, model: "cie-overcast",
                  sun: sun ? [30, 60, 0.2665] : nil, sunRGB: sun ? [2.4e5, 2.3e5, 2.1e5] : nil),
        ])
    }

    static func luminanceOptions() -> DevelopOptions {
        var o = DevelopOptions()
        o.exposure = .luminance
        o.includeMasks = false
        return o
    }

    @Test(arguments: FisheyeProjection.allCases)
    func overcastDomeAgainstItsAnalyticIlluminance(_ projection: FisheyeProjection) throws {
        let dir = TestData.temporaryDirectory("dome-\(projection.rawValue)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = try Pipeline.simulate(scene: try RenderedScene(Self.dome(projection)), camera: Self.camera, name: "dome", directory: dir.path)
        let truth = try #require(out.record.photometry?.illuminance)
        let lens = FisheyeLens(projection: projection, fieldOfView: 180, width: 512, height: 512)
        let r = try Pipeline.illuminance(out.files["dng"]!, lens: lens, options: Self.luminanceOptions())
        #expect(abs(r.illuminance / truth - 1) < 0.005, "\(projection): \(r.illuminance) lx against \(truth) lx")
        #expect(r.kind == .value && r.low95! <= truth && truth <= r.high95!)
        #expect(!r.isLowerBound && r.noiseUncertainty != nil && r.noiseUncertainty! < 0.001 * truth)
        #expect(abs(r.solidAngle / (2 * .pi) - 1) < 0.002)
    }

    /// evalglare -V reads our picture's VIEW= line (equidistant, and equisolid remapped to it).
    @Test(arguments: [FisheyeProjection.equidistant, .equisolid, .stereographic])
    func evalglareAgrees(_ projection: FisheyeProjection) throws {
        guard let bin = try RadianceOutputTests.radianceBin() else {
            try TestRequirement.unavailable("pyradiance (Radiance's evalglare)", installedByBootstrap: true)
        }
        let dir = TestData.temporaryDirectory("evalglare-\(projection.rawValue)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = try Pipeline.simulate(scene: try RenderedScene(Self.dome(projection)), camera: Self.camera, name: "dome", directory: dir.path)
        let hdr = dir.appendingPathComponent("dome.hdr").path
        let r = try CLI.run(["illuminance", out.files["dng"]!, "--projection", projection.rawValue, "--json", "-o", hdr])
        try #require(r.status == 0, "\(r.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let ours = try #require(((doc["results"] as? [[String: Any]])?.first?["illuminance"]) as? Double)
        // evalglare -V prints E_v (and exits 1 even when it succeeds).
        let glare = try TestData.run(bin.appendingPathComponent("evalglare"), ["-V", hdr])
        let theirs = try #require(Double(glare.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(glare.stdout) \(glare.stderr)")
        #expect(abs(theirs / ours - 1) < 0.01, "\(projection): evalglare \(theirs) lx, ours \(ours) lx")
        let info = try TestData.run(bin.appendingPathComponent("getinfo"), [hdr]).stdout
        #expect(info.contains("VIEW= \(projection == .stereographic ? "-vts" : "-vta")"), "\(info)")
    }

    /// The sun in a four-frame bracket (noise-free, so the sun's few pixels carry no noise):
    /// the merge's E_v within 0.5 % of the sky's and the sun's; a single frame clips the sun
    /// and reports a lower bound.
    @Test func sunDomeMergedFromABracket() throws {
        let dir = TestData.temporaryDirectory("sun-dome")
        defer { try? FileManager.default.removeItem(at: dir) }
        var camera = Self.camera
        camera.noise = false
        let sim = try Pipeline.simulateBracket(scene: try RenderedScene(Self.dome(.equidistant, sun: true, size: 768)), camera: camera,
                                               stops: [-18, -12, -6, 0], name: "sun", directory: dir.path)
        let truth = try #require(sim.record.photometry?.illuminance)
        var options = MergeOptions()
        options.develop = Self.luminanceOptions()
        options.allowUncheckedRatios = true
        let merged = try Pipeline.merge(paths: sim.frames, options: options)
        #expect(merged.report.lowerBoundPixels == 0)
        // The sun-only frames share too few pixels with their neighbours: merged at their
        // metadata's exposure, reported unchecked; without --unchecked-ratios they are refused.
        #expect(merged.report.frames.map(\.exposureSource).contains("metadata, unchecked"), "\(merged.report.frames.map(\.exposureSource))")
        #expect(abs(merged.report.frames[0].exposure * pow(2, 18 - 12) - 1) < 1e-9, "\(merged.report.frames[0].exposure)")
        options.allowUncheckedRatios = false
        #expect(throws: MergeError.self) { try Pipeline.merge(paths: sim.frames, options: options) }
        let lens = FisheyeLens(projection: .equidistant, fieldOfView: 180, width: 768, height: 768)
        let input = AnalysisInput(path: "merged", image: merged.image, noise: nil)
        let r = try Pipeline.illuminance(input, lens: lens)
        #expect(abs(r.illuminance / truth - 1) < 0.005, "\(r.illuminance) lx against \(truth) lx")
        // One frame alone: the sun clipped, the value a lower bound below the truth.
        let single = try Pipeline.illuminance(sim.frames[3], lens: lens, options: Self.luminanceOptions())
        #expect(single.isLowerBound && single.lowerBoundShare > 0 && single.illuminance < truth, "\(single)")
    }

    /// A sky rendered by Radiance itself (gensky's CIE overcast sky through rpict's 180°
    /// angular fisheye) is photographed by the simulator (`simulate --scene sky.hdr`, a scene in
    /// cd/m²), and our illuminance of the DNG, at the simulation's true camera constant, agrees
    /// with evalglare's on the rendered picture within 1 %.
    @Test func radianceRenderedSkyPhotographed() throws {
        guard let bin = try RadianceOutputTests.radianceBin() else {
            try TestRequirement.unavailable("pyradiance (Radiance's gensky, oconv, rpict, evalglare)", installedByBootstrap: true)
        }
        let dir = TestData.temporaryDirectory("rpict-sky")
        defer { try? FileManager.default.removeItem(at: dir) }
        let sky = "!gensky 3 21 12 -c -a 40 -B 55.8\nskyfunc glow skyglow\n0\n0\n4 1 1 1 0\nskyglow source sky\n0\n0\n4 0 0 1 180\n"
        try sky.write(to: dir.appendingPathComponent("sky.rad"), atomically: true, encoding: .utf8)
        let script = "cd \"$1\" && PATH=\"$2:$PATH\" && RAYPATH=\"$2/../lib\" && export PATH RAYPATH && oconv sky.rad > sky.oct && "
            + "rpict -vta -vp 0 0 0 -vd 0 0 1 -vu 0 1 0 -vh 180 -vv 180 -x 256 -y 256 -ab 0 sky.oct > sky.hdr 2>/dev/null"
        let render = try TestData.run(URL(fileURLWithPath: "/bin/sh"), ["-c", script, "sh", dir.path, bin.path])
        try #require(render.status == 0, "\(render.stderr)")
        let hdr = dir.appendingPathComponent("sky.hdr").path
        let glare = try TestData.run(bin.appendingPathComponent("evalglare"), ["-V", hdr])
        let theirs = try #require(Double(glare.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(glare.stdout) \(glare.stderr)")
        let picture = try RadianceFile.read(hdr)
        #expect(picture.width == 256 && picture.height == 256 && picture.view?.contains("-vta") == true)
        var camera = CameraModel()
        camera.quantumScale = 600  // the zenith (about 4000 cd/m²) below the full well
        camera.sensitivityOffset = 0
        let out = try Pipeline.simulate(scene: try Pipeline.radianceMapScene(hdr), camera: camera, name: "sky", directory: dir.path)
        let truth = try #require(out.record.photometry)
        let lens = FisheyeLens(projection: .equidistant, fieldOfView: 180, width: 256, height: 256)
        let r = try Pipeline.illuminance(out.files["dng"]!, lens: lens, options: Self.luminanceOptions())
        let ours = r.illuminance * truth.cameraConstant / Photometry.estimatedConstant
        #expect(!r.isLowerBound)
        #expect(abs(ours / theirs - 1) < 0.01, "ours \(ours) lx, evalglare \(theirs) lx")
    }

    /// `stats --projection`: every pixel weighted by its solid angle, so the mean of an overcast
    /// dome's luminance is its mean per steradian, 2/3 · L_z (to 0.1 %); without the weights
    /// the black corners and the projection's uneven pixels make it something else.
    @Test func solidAngleWeightedStatistics() throws {
        let dir = TestData.temporaryDirectory("stats-fisheye")
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = try Pipeline.simulate(scene: try RenderedScene(Self.dome(.equidistant)), camera: Self.camera, name: "dome", directory: dir.path)
        let zenith = try #require(out.record.photometry?.illuminance) * 9 / (7 * .pi)
        func meanY(_ extra: [String]) throws -> Double {
            let r = try CLI.run(["stats", out.files["dng"]!, "--units", "luminance", "--json"] + extra)
            try #require(r.status == 0, "\(r.stderr)")
            let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let files = try #require(doc["files"] as? [[String: Any]])
            let region = try #require((files[0]["regions"] as? [[String: Any]])?.first)
            let channels = try #require((region["measurement"] as? [String: Any])?["channels"] as? [String: Any])
            return try #require((channels["Y"] as? [String: Any])?["mean"] as? Double)
        }
        let weighted = try meanY(["--projection", "equidistant"])
        #expect(abs(weighted / (2 * zenith / 3) - 1) < 0.001, "\(weighted) against \(2 * zenith / 3)")
        let plain = try meanY([])
        #expect(abs(plain / (2 * zenith / 3) - 1) > 0.1, "\(plain)")
        #expect(try CLI.run(["stats", out.files["dng"]!, "--circle", "1,1,1"]).status == 64)
    }

    /// The built-in sky with its sun simulates in one frame: the truth, beyond half's range,
    /// is written in 32-bit floats; the frame's illuminance is a lower bound below the truth.
    @Test func skyDomeInOneFrame() throws {
        let dir = TestData.temporaryDirectory("sky-dome-one")
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLI.run(["simulate", "--scene", "sky-dome", "--size", "768x768", "-o", dir.path, "-q"])
        try #require(r.status == 0, "\(r.stderr)")
        let truth = try EXRFile.readSceneLinear(dir.appendingPathComponent("sky-dome.truth.exr").path)
        #expect((truth.pixels.samples.max() ?? 0) > 1e5)
        let record = try SimulationRecord.read(dir.appendingPathComponent("sky-dome.truth.json").path)
        let lens = FisheyeLens(projection: .equidistant, fieldOfView: 180, width: 768, height: 768)
        let e = try Pipeline.illuminance(dir.appendingPathComponent("sky-dome.dng").path, lens: lens, options: Self.luminanceOptions())
        #expect(e.isLowerBound && e.illuminance < record.photometry!.illuminance!)
    }

    /// A clipped sun in a fisheye's .hdr (equisolid, remapped to -vta): the mask next to the
    /// picture is the clip mask through the same crop and remap (any picture pixel drawing on
    /// a clipped one is flagged), with the picture's VIEW=; the header's share is of the
    /// picture's solid angle; the JSON names the mask; evalglare still reads the picture.
    @Test func clippedSunMarkedInTheFisheyePicture() throws {
        let dir = TestData.temporaryDirectory("fisheye-clip")
        defer { try? FileManager.default.removeItem(at: dir) }
        try #require(try CLI.run(["simulate", "--scene", "sky-dome", "--size", "384x384", "-o", dir.path, "-q"]).status == 0)
        let dng = dir.appendingPathComponent("sky-dome.dng").path, hdr = dir.appendingPathComponent("sky.hdr").path
        let r = try CLI.run(["illuminance", dng, "--projection", "equisolid", "--json", "-o", hdr])
        try #require(r.status == 0, "\(r.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let bounds = try #require(doc["lowerBounds"] as? [String: Any])
        let maskPath = dir.appendingPathComponent("sky.clip.hdr").path
        #expect(doc["output"] as? String == hdr && bounds["mask"] as? String == maskPath && bounds["shareOf"] as? String == "solid angle")
        #expect(r.stderr.contains("warning: \(hdr) holds"), "\(r.stderr)")

        let input = try AnalysisInput.load(dng, options: Self.luminanceOptions())
        let clip = try #require(input.image.clipMask)
        let lens = FisheyeLens(projection: .equisolid, fieldOfView: 180, width: 384, height: 384)
        let expected = lens.radianceSquare(clip.map { $0 != 0 ? 1 : 0 }, width: 384, height: 384, channels: 1).map { $0 > 0 }
        let picture = try RadianceFile.read(hdr), mask = try RadianceFile.read(maskPath)
        #expect(mask.width == picture.width && mask.height == picture.height && mask.view == picture.view)
        let flagged = (0..<(mask.width * mask.height)).map { mask.rec2020[3 * $0] > 0.5 }
        #expect(flagged == expected && flagged.contains(true))
        #expect(bounds["pixels"] as? Int == flagged.filter { $0 }.count)
        let omega = FisheyeGeometry(lens: lens.radianceSquareLens, width: mask.width, height: mask.height).arrays.solidAngle
        let share = zip(flagged, omega).filter(\.0).map(\.1).reduce(0, +) / omega.reduce(0, +)
        #expect(abs((bounds["share"] as? Double ?? 0) / share - 1) < 1e-9)
        // The sun, the picture's brightest pixel, is among the flagged ones.
        let luminance = (0..<(picture.width * picture.height)).map { picture.rec2020[3 * $0 + 1] }
        #expect(flagged[luminance.indices.max { luminance[$0] < luminance[$1] }!])

        guard let bin = try RadianceOutputTests.radianceBin() else {
            try TestRequirement.unavailable("pyradiance (Radiance's evalglare)", installedByBootstrap: true)
        }
        let glare = try TestData.run(bin.appendingPathComponent("evalglare"), ["-V", hdr])
        #expect(Double(glare.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) != nil, "\(glare.stdout) \(glare.stderr)")
    }

    @Test func calibrationFromVerticalIlluminance() throws {
        let dir = TestData.temporaryDirectory("calibrate-ev")
        defer { try? FileManager.default.removeItem(at: dir) }
        var camera = CameraModel()
        camera.sensitivityOffset = -1.0 / 3  // the true K is 151.19, the estimate 120
        let out = try Pipeline.simulate(scene: try RenderedScene(Self.dome(.equisolid)), camera: camera, name: "dome", directory: dir.path)
        let truth = try #require(out.record.photometry)
        let cal = dir.appendingPathComponent("cal.json").path
        let r = try CLI.run(["calibrate", out.files["dng"]!, "--illuminance-vertical", String(truth.illuminance!), "--projection", "equisolid",
                             "--meter-uncertainty", "0", "-o", cal])
        try #require(r.status == 0, "\(r.stderr)")
        let calibration = try CameraCalibration.read(cal)
        #expect(abs(calibration.constant / truth.cameraConstant - 1) < 0.005, "K \(calibration.constant) against \(truth.cameraConstant)")
        // Regions and --illuminance-vertical exclude each other; relative files are refused by illuminance.
        let both = try CLI.run(["calibrate", out.files["dng"]!, "--illuminance-vertical", "100", "--projection", "equisolid",
                                "--region", "a=0,0,10,10", "-o", cal])
        #expect(both.status == 64)
        let exr = dir.appendingPathComponent("relative.exr").path
        try #require(try CLI.run(["convert", out.files["dng"]!, "-o", exr, "-q"]).status == 0)
        let relative = try CLI.run(["illuminance", exr, "--projection", "equisolid"])
        #expect(relative.status == 14 && relative.stderr.contains("absolute"), "\(relative.status) \(relative.stderr)")
    }
}
