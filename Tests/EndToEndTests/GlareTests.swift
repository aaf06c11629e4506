import CaptureSimulation
import Foundation
@testable import Measuring
@testable import Reporting
@testable import Glare
import SceneLinearKit
import Testing
import TestSupport

/// Glare metrics (docs/glare.md): a sky with a 3° sun 60 times the zenith's radiance, merged
/// from a bracket, against Radiance's evalglare on our .hdr; the same sky in one frame, where
/// the sun clips, reports lower bounds below the merged values; the position index against
/// hand-worked values of Guth's equation; the draws repeat with their seed.
@Suite struct GlareTests {
    static func sky(size: Int = 512) -> SceneDescription {
        SceneDescription(name: "glare-sky", width: size, height: size, background: [0, 0, 0], elements: [
            .init(type: "sky", name: "sky", rgb: [0.45, 0.5, 0.6], projection: "equidistant", fov: 180, model: "cie-overcast",
                  sun: [40, 100, 3], sunRGB: [30, 29, 27]),
        ])
    }

    static let lens = FisheyeLens(projection: .equidistant, fieldOfView: 180, width: 512, height: 512)

    /// The bracket merged in luminance, with its standard deviation layer.
    static func merged(in dir: URL) throws -> (input: AnalysisInput, frames: [String]) {
        let sim = try Pipeline.simulateBracket(scene: try RenderedScene(sky()), camera: IlluminanceTests.camera, stops: [-8, -4, 0],
                                               name: "sky", directory: dir.path)
        var options = MergeOptions()
        options.develop = IlluminanceTests.luminanceOptions()
        let merged = try Pipeline.merge(paths: sim.frames, options: options)
        try #require(merged.report.lowerBoundPixels == 0)
        return (AnalysisInput.prepared(path: "merged", image: merged.image, deviation: merged.standardDeviation.samples), sim.frames)
    }

    @Test func evalglareAgreesOnAnUnclippedSky() throws {
        guard let bin = try RadianceOutputTests.radianceBin() else {
            try TestRequirement.unavailable("pyradiance (Radiance's evalglare)", installedByBootstrap: true)
        }
        let dir = TestData.temporaryDirectory("glare-evalglare")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (input, _) = try Self.merged(in: dir)
        let ours = try Pipeline.glare(input, lens: Self.lens)
        let hdr = dir.appendingPathComponent("sky.hdr").path
        _ = try Pipeline.writeFisheyeRadiance(input.image, lens: Self.lens, to: hdr)
        // evalglare -d: the sources' table (its first field the number of sources), then
        // "dgp,av_lum,E_v,lum_backg,E_v_dir,dgi,ugr,...: values".
        let run = try TestData.run(bin.appendingPathComponent("evalglare"), ["-d", hdr])
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let table = try #require(lines.first { $0.contains("No pixels") }, "\(run.stdout) \(run.stderr)")
        let summary = try #require(lines.last { $0.hasPrefix("dgp,") }?.split(separator: ":").last, "\(run.stdout)")
        let v = summary.split(separator: " ").compactMap { Double($0) }
        try #require(v.count > 6)
        let (dgp, ev, background, dgi, ugr) = (v[0], v[2], v[3], v[5], v[6])
        #expect(Int(table.split(separator: " ").first ?? "") == ours.sources.count, "\(table)")
        #expect(ours.sources.count == 1 && ours.kind(of: \.daylightGlareProbability) == .value)
        #expect(abs(ours.daylightGlareProbability.value / dgp - 1) < 0.01, "DGP \(ours.daylightGlareProbability.value) against \(dgp)")
        #expect(abs(ours.illuminance.value / ev - 1) < 0.005, "E_v \(ours.illuminance.value) against \(ev)")
        #expect(abs(ours.backgroundLuminance / background - 1) < 0.005, "L_b \(ours.backgroundLuminance) against \(background)")
        // evalglare places a source at its pixels' corners, half a pixel from their centres
        // (0.18° here): the position index differs by about 1 %, DGI and UGR by under 0.15.
        #expect(abs(ours.daylightGlareIndex.value - dgi) < 0.15, "DGI \(ours.daylightGlareIndex.value) against \(dgi)")
        #expect(abs(try #require(ours.unifiedGlareRating).value - ugr) < 0.15, "UGR \(String(describing: ours.unifiedGlareRating)) against \(ugr)")
        // The sun at 40° from the axis, 10° from up towards the right.
        let sun = try #require(ours.sources.first)
        #expect(abs(sun.sigma - 40) < 0.3 && abs(sun.tau - 10) < 0.5, "\(sun)")
        for m in [ours.daylightGlareProbability, ours.daylightGlareIndex, ours.illuminance] {
            #expect(m.low95! < m.value && m.value < m.high95!, "\(m)")
        }
    }

    /// The −4 EV frame alone clips the sun above the threshold: a glare source with clipped
    /// pixels, every metric a lower bound (its low end only) below the merged bracket's value.
    /// The 0 EV frame clips it below the threshold: clipped pixels outside every source, which
    /// may move the metrics either way — undetermined, without an interval.
    @Test func aClippedSunGivesLowerBounds() throws {
        let dir = TestData.temporaryDirectory("glare-clipped")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (input, frames) = try Self.merged(in: dir)
        let merged = try Pipeline.glare(input, lens: Self.lens)
        let request = FisheyeLensRequest(projection: .equidistant, fieldOfView: 180)
        let single = try Pipeline.glare(frames[1], lens: request, options: IlluminanceTests.luminanceOptions())
        for (bound, value) in [(single.daylightGlareProbability, merged.daylightGlareProbability), (single.daylightGlareIndex, merged.daylightGlareIndex)] {
            #expect(bound.kind == .lowerBound && bound.high95 == nil && bound.low95! <= bound.value, "\(bound)")
            #expect(bound.value < value.value, "bound \(bound.value) against \(value.value)")
        }
        #expect(single.sources.contains { $0.clippedPixels > 0 } && single.clippedOutsideSources == 0)
        let white = try Pipeline.glare(frames[2], lens: request, options: IlluminanceTests.luminanceOptions())
        #expect(white.clippedOutsideSources > 0 && white.daylightGlareProbability.kind == .undetermined)
        #expect(white.daylightGlareProbability.low95 == nil && white.daylightGlareProbability.high95 == nil)
    }

    /// Guth's index by hand: σ = 30°, τ = 90° (to the side) gives
    /// exp((35.2 − 0.31889·90 − 1.22e^−20)·0.03 + (21 + 0.26667·90 − 0.002963·90²)·0.009) = 1.4681;
    /// on the axis 1; below the line of sight (σ = 30°, τ = 180°) Iwata and Osterhaus's
    /// exp(6.49e-3 β + 21e-5 β²) with β = atan(tan 30° · √1.3225) = 33.58°: 1.5758.
    @Test func positionIndexByHand() {
        let lens = Self.lens, f = lens.focalLength, c = SIMD2(lens.centerX, lens.centerY)
        let r30 = f * 30 * .pi / 180
        let side = GlareEvaluation.positionIndex(lens, at: c + SIMD2(r30, 0))
        #expect(abs(side.index - 1.4681) < 2e-4 && abs(side.sigma - 30) < 1e-9 && abs(side.tau - 90) < 1e-9, "\(side)")
        #expect(abs(GlareEvaluation.positionIndex(lens, at: c).index - 1) < 1e-12)
        let below = GlareEvaluation.positionIndex(lens, at: c + SIMD2(0, r30))
        #expect(abs(below.index - 1.5758) < 2e-4 && abs(below.tau - 180) < 1e-9, "\(below)")
        let far = GlareEvaluation.positionIndex(lens, at: c + SIMD2(0, -f * 89 * .pi / 180))
        #expect(far.index == 16, "capped at 16: \(far)")
    }

    /// The same seed gives the same intervals whatever the threads; another seed other draws.
    @Test func drawsRepeatWithTheirSeed() throws {
        let dir = TestData.temporaryDirectory("glare-seed")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (input, _) = try Self.merged(in: dir)
        var request = GlareRequest()
        request.draws = 60
        let a = try Pipeline.glare(input, lens: Self.lens, request: request)
        let b = try Parallel.withThreadCount(1) { try Pipeline.glare(input, lens: Self.lens, request: request) }
        #expect(a == b)
        request.seed = 2
        let c = try Pipeline.glare(input, lens: Self.lens, request: request)
        #expect(c.daylightGlareProbability.value == a.daylightGlareProbability.value && c.daylightGlareProbability.low95 != a.daylightGlareProbability.low95)
        request.draws = 10
        #expect(throws: PhotometryError.self) { try Pipeline.glare(input, lens: Self.lens, request: request) }
    }
}

extension GlareTests {
    /// The sources a draw finds are the same whether the pixels above the threshold in every
    /// draw start joined (`GlareDetection.prepare`) or not: over 40 draws of the merged sky's
    /// candidates with noise and one scale factor each, and over draws that leave a sure pixel
    /// below the threshold (the full clustering then runs).
    @Test func preparedDetectionEqualsTheFullOne() throws {
        let dir = TestData.temporaryDirectory("glare-prepared")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (input, _) = try Self.merged(in: dir)
        let evaluation = GlareEvaluation(input, geometry: FisheyeGeometry(lens: Self.lens, width: 512, height: 512), request: GlareRequest(),
                                         scaleU: 0.05)
        let full = GlareDetection(candidates: evaluation.candidates, mergeAngle: 0.1, imageWidth: 512)
        var random = GlareRandom(seed: 7, stream: 0)
        var compared = 0
        for d in 0..<40 {
            let k = exp(0.05 * random.normal()) * (d % 10 == 9 ? 0.5 : 1)
            let l = evaluation.candidates.luminance.indices.map { i in
                k * (evaluation.candidates.luminance[i] + evaluation.candidates.deviation[i] * random.normal())
            }
            let a = evaluation.detection.sources(luminance: l, threshold: 2000, peakLimit: 50_000)
            let b = full.sources(luminance: l, threshold: 2000, peakLimit: 50_000)
            #expect(a.labels == b.labels && a.sources.map(\.pixels) == b.sources.map(\.pixels), "draw \(d)")
            compared += a.sources.isEmpty ? 0 : 1
        }
        #expect(compared >= 36)
    }
}

extension GlareResult {
    func kind(of metric: KeyPath<GlareResult, GlareMetric>) -> ResultKind { self[keyPath: metric].kind }
}
