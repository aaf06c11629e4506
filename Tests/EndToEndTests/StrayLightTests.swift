import CaptureSimulation
import Foundation
import SceneLinearKit
import Testing
import TestSupport

/// Stated stray light in E_v (docs/lens.md#stray-light): a dim overcast dome with a bright
/// disc (a lamp or a hazy sun, 6° across, below white) photographed through a lens that spreads
/// 2 % of every pixel's light over about 9° about it. With `--stray-light 2` the disc is found
/// as the one source, the pixels about it are flagged with their part of E_v, the interval is
/// widened by the bound and holds the truth; refused values are refused.
@Suite struct StrayLightTests {
    static func scene() -> SceneDescription {
        SceneDescription(name: "lamp-dome", width: 512, height: 512, background: [0, 0, 0], elements: [
            .init(type: "sky", name: "sky", rgb: [0.0009, 0.001, 0.0012], projection: "equidistant", fov: 180, model: "cie-overcast",
                  sun: [30, 60, 3], sunRGB: [0.8, 0.8, 0.75]),
        ])
    }

    @Test func sourceFlaggedAndIntervalHolds() throws {
        let dir = TestData.temporaryDirectory("stray-light")
        defer { try? FileManager.default.removeItem(at: dir) }
        var camera = IlluminanceTests.camera
        camera.strayLight = SimulatedStrayLight(fraction: 0.02, radius: 0.05)
        let sim = try Pipeline.simulate(scene: try RenderedScene(Self.scene()), camera: camera, name: "dome", directory: dir.path)
        let truth = try #require(sim.record.photometry?.illuminance)
        var request = FisheyeLensRequest(projection: .equidistant)
        let plain = try Pipeline.illuminance(sim.files["dng"]!, lens: request, options: IlluminanceTests.luminanceOptions())
        #expect(plain.strayLight == nil && plain.kind == .value)
        request.strayLight = StrayLightRequest(fraction: 0.02, angle: 10, threshold: 100)
        let r = try Pipeline.illuminance(sim.files["dng"]!, lens: request, options: IlluminanceTests.luminanceOptions())
        let stray = try #require(r.strayLight)
        // One source: the disc (radius 3°: about 8.5 px on this 512 px circle, some 230 pixels).
        #expect(stray.sources == 1 && stray.zonedSources == 1 && (180...320).contains(stray.sourcePixels), "\(stray)")
        // The zone: the pixels within 10° of the disc's edge, about π (13°)² / (90°/256 px)² − 230 ≈ 4100.
        #expect((3000...5500).contains(stray.flaggedPixels), "\(stray)")
        #expect(stray.sourceShare > 0.5 && stray.flaggedShare > 0 && stray.flaggedShare < 0.2, "\(stray)")
        // The bound f · α · Σ L ω, and the interval widened by it on both sides.
        #expect(stray.bound > 0 && abs(r.low95! - (plain.low95! - stray.bound)) < 1e-9 * r.illuminance
                && abs(r.high95! - (plain.high95! + stray.bound)) < 1e-9 * r.illuminance, "\(r)")
        #expect(r.illuminance == plain.illuminance)
        #expect(r.low95! <= truth && truth <= r.high95!, "\(r.illuminance) [\(r.low95!), \(r.high95!)] against \(truth)")
        // Refused: a share of 1 or more, an angle beyond 90°, a threshold of 1 or less.
        #expect(StrayLightRequest(fraction: 1).problem != nil && StrayLightRequest(fraction: 0.02, angle: 120).problem != nil
                && StrayLightRequest(fraction: 0.02, threshold: 1).problem != nil && StrayLightRequest(fraction: 0.02).problem == nil)
    }

    /// Regions (stats): one 5° from the disc's edge, flagged, whose mean the veiling light
    /// lifts — by less than its bound — and whose budget's lower end is lowered by the bound
    /// to below the stray-light-free value; one across the sky, not flagged, bound 0. Noise-free
    /// captures with and without the stray light give the veiling light exactly.
    @Test func regionsListTheirPart() throws {
        let dir = TestData.temporaryDirectory("stray-regions")
        defer { try? FileManager.default.removeItem(at: dir) }
        var clean = IlluminanceTests.camera
        clean.noise = false
        var veiled = clean
        veiled.strayLight = SimulatedStrayLight(fraction: 0.02, radius: 0.05)
        let a = try Pipeline.simulate(scene: try RenderedScene(Self.scene()), camera: clean, name: "clean", directory: dir.path).files["dng"]!
        let b = try Pipeline.simulate(scene: try RenderedScene(Self.scene()), camera: veiled, name: "veiled", directory: dir.path).files["dng"]!
        // The disc's centre: the brightest pixel of the clean capture.
        let image = try Pipeline.develop(path: a, options: IlluminanceTests.luminanceOptions()).image
        let px = image.pixels.samples
        let peak = (0..<(image.width * image.height)).max { px[3 * $0 + 1] < px[3 * $1 + 1] }!
        let (cx, cy) = (peak % image.width, peak / image.width)
        // Near: 14 px (5°) beyond the disc's radius of 8.5 px, away from the image's centre.
        let dx = Double(cx - 256), dy = Double(cy - 256), n = (dx * dx + dy * dy).squareRoot()
        let nx = cx + Int((dx / n * 23).rounded()), ny = cy + Int((dy / n * 23).rounded())
        var request = AnalysisRequest()
        request.develop = IlluminanceTests.luminanceOptions()
        request.fisheye = FisheyeSpec(projection: .equidistant, fieldOfView: 180)
        request.regions = [try Region.parse("near=\(ny - 3),\(nx - 3),\(ny + 3),\(nx + 3)"),
                           try Region.parse("far=\(512 - cy - 5),\(512 - cx - 5),\(512 - cy + 5),\(512 - cx + 5)")]
        let without = try Pipeline.analyze(b, request: request).regions
        #expect(without.allSatisfy { $0.strayLight == nil })
        request.strayLight = StrayLightRequest(fraction: 0.02, angle: 10, threshold: 100)
        let with = try Pipeline.analyze(b, request: request).regions
        let truth = try Pipeline.analyze(a, request: request).regions
        let near = try #require(with[0].strayLight), far = try #require(with[1].strayLight)
        #expect(near.flaggedPixels == 36 && near.sourcePixels == 0 && near.bound > 0 && near.nearbySourceLight > 0, "\(near)")
        #expect(far.flaggedPixels == 0 && far.bound == 0, "\(far)")
        let lifted = with[0].measurement.channels["Y"]!.mean / truth[0].measurement.channels["Y"]!.mean - 1
        #expect(lifted > 0 && lifted <= near.bound, "lifted \(lifted), bound \(near.bound)")
        let budget = try #require(with[0].budgets?.first { $0.quantity == "Y" && $0.statistic == "mean" })
        let plain = try #require(without[0].budgets?.first { $0.quantity == "Y" && $0.statistic == "mean" })
        #expect(abs(budget.low95! - (plain.low95! - budget.value * near.bound)) < 1e-9 * budget.value && budget.high95 == plain.high95)
        #expect(budget.low95! <= truth[0].measurement.channels["Y"]!.mean && budget.notIncluded.contains { $0.hasPrefix("stray light") })
    }
}
