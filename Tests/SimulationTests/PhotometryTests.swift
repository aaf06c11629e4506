import Foundation
import Testing
import Analysis
@testable import CaptureSimulation
@testable import Engine
@testable import Measuring
@testable import Reporting
import SceneLinearKit
@testable import SimulationCheck
import TestSupport

/// Absolute units in closed loop against the simulator's truth: a calibration on one patch
/// of a grey ramp with its true luminance measures every other patch's cd/m² inside its 95 %
/// interval at the stated rate; the estimate from the exposure metadata lands within its own
/// stated uncertainty; the fit's arithmetic; another camera body refused.
@Suite struct PhotometryTests {
    static func region(_ patch: Patch, inset: Int = 4) throws -> Region {
        let r = patch.rect
        return try Region.parse("\(patch.name.replacingOccurrences(of: "/", with: "-"))=\(r.top + inset),\(r.left + inset),\(r.bottom - inset),\(r.right - inset)")
    }

    static func simulate(seed: UInt64, in dir: URL, configure: (inout CameraModel) -> Void = { _ in }) throws -> SimulationOutput {
        var camera = CameraModel()
        camera.seed = seed
        configure(&camera)
        return try Pipeline.simulate(scene: RenderedScene(BuiltInScene.greyRamp.description(width: 512, height: 256)), camera: camera,
                                     name: "ramp\(seed)", directory: dir.path)
    }

    /// Measures `patches` of a capture in `mode` with `calibration`: (patch, Y mean, budget).
    static func measure(_ output: SimulationOutput, patches: [Patch], mode: ExposureMode,
                        calibration: CameraCalibration?) throws -> [(Patch, RegionAnalysis)] {
        var request = AnalysisRequest()
        request.regions = try patches.map { try region($0) }
        request.percentiles = []
        request.develop.exposure = mode
        request.develop.calibration = calibration
        let result = try Pipeline.analyze(output.files["dng"]!, request: request)
        return Array(zip(patches, result.regions))
    }

    @Test func calibratedLuminanceCoversTheTruth() throws {
        let dir = TestData.temporaryDirectory("photometry-loop")
        defer { try? FileManager.default.removeItem(at: dir) }
        var inside = 0, trials = 0, precise = 0
        for seed in UInt64(1)...10 {
            let output = try Self.simulate(seed: seed, in: dir)
            let truth = try #require(output.record.photometry)
            let grey = output.record.patches.filter { $0.name.hasPrefix("grey/") }
            let reference = try #require(grey.first { $0.name == "grey/12" })
            let calibration = try Pipeline.calibrate(
                [CalibrationReference(photo: output.files["dng"]!, region: try Self.region(reference),
                                      luminance: truth.patchLuminance[reference.name]!, relativeUncertainty: 0, method: "truth")],
                develop: DevelopOptions(), meterRelativeUncertainty: 0)
            #expect(abs(calibration.constant / truth.cameraConstant - 1) < 0.002, "seed \(seed): K \(calibration.constant)")
            for (patch, analysis) in try Self.measure(output, patches: grey.filter { $0.name != reference.name }, mode: .luminance,
                                                      calibration: calibration) {
                guard analysis.measurement.clippedPixels == 0, let budget = analysis.budgets?.first else { continue }
                let l = truth.patchLuminance[patch.name]!
                #expect(budget.statistic == "mean" && budget.value == analysis.measurement.channels["Y"]!.mean)
                trials += 1
                if budget.kind == .value, let low = budget.low95, let high = budget.high95, low <= l && l <= high { inside += 1 }
                // Above the noise floor (a relative uncertainty under 0.2 %): within 0.5 % of the truth.
                if budget.relativeStandardUncertainty < 0.002 {
                    precise += 1
                    #expect(abs(budget.value / l - 1) < 0.005, "seed \(seed) \(patch.name): \(budget.value) against \(l)")
                }
            }
        }
        // 10 seeds × the ramp's unclipped patches; the 200-seed figure is in docs/photometry.md.
        let coverage = Double(inside) / Double(trials)
        #expect(trials >= 100 && precise >= 30, "\(trials) trials, \(precise) precise")
        #expect(coverage >= 0.88 && coverage <= 1, "coverage \(coverage) over \(trials)")
    }

    /// The sky/sun ratio of simulated CFA captures with the default demosaic (rcd): its 95 %
    /// interval held the truth in 27 of 40 seeds while the standard errors treated the
    /// interpolated pixels as independent; counted over the raw samples (`samplingVarianceScale`)
    /// it holds at the stated rate. Seeded, so the counts are exact.
    @Test func cfaRatioIntervalsHoldAtTheirRate() throws {
        let dir = TestData.temporaryDirectory("photometry-cfa-ratio")
        defer { try? FileManager.default.removeItem(at: dir) }
        var held = 0, widthRatios: [Double] = []
        for seed in UInt64(1)...40 {
            var camera = CameraModel()
            camera.layout = "cfa"
            camera.seed = seed
            let output = try Pipeline.simulate(scene: RenderedScene(BuiltInScene.sunset.description(width: 256, height: 192)),
                                               camera: camera, name: "sunset\(seed)", directory: dir.path)
            let sky = try #require(output.record.patches.first { $0.name == "sky" })
            let sun = try #require(output.record.patches.first { $0.name == "sun" })
            // The sun's disk: the square inside it.
            let c = (Double(sun.rect.top + sun.rect.bottom) / 2, Double(sun.rect.left + sun.rect.right) / 2)
            let h = Double(sun.rect.width) / 2 / 2.squareRoot() - 2
            var request = AnalysisRequest()
            request.regions = [try Self.region(sky, inset: 3),
                               try Region.parse("sun=\(Int(c.0 - h)),\(Int(c.1 - h)),\(Int(c.0 + h)),\(Int(c.1 + h))")]
            request.ratios = [("sky", "sun")]
            let ratio = try #require(try Pipeline.analyze(output.files["dng"]!, request: request).ratios.first)
            func y(_ p: Patch) -> Double { (SIMD3(p.rgb[0], p.rgb[1], p.rgb[2]) * Rec2020.luminanceWeights).sum() }
            let truth = y(sky) / y(sun)
            #expect(ratio.kind == .value)
            if let low = ratio.low95, let high = ratio.high95, low <= truth, truth <= high { held += 1 }
            widthRatios.append(abs(ratio.ratio / truth - 1) / ratio.relativeStandardError!)
        }
        // 95 % of 40 is 38; 34 or more is within the binomial's 99.5 % range.
        #expect(held >= 34, "\(held) of 40 intervals held the true ratio")
        // The errors in units of their stated standard error spread as a unit normal's |z|
        // (mean 0.80): 1.87 times that before.
        let meanZ = widthRatios.reduce(0, +) / Double(widthRatios.count)
        #expect(meanZ > 0.55 && meanZ < 1.1, "mean |z| \(meanZ)")
    }

    @Test func exposureMetadataEstimateIsWithinItsStatedUncertainty() throws {
        let dir = TestData.temporaryDirectory("photometry-estimate")
        defer { try? FileManager.default.removeItem(at: dir) }
        // Sensors off their ISO label by up to about 0.7 stop are inside the estimate's interval.
        for (offset, iso, time) in [(-1.0 / 3, 100.0, 0.01), (0, 400, 0.002), (-0.6, 50, 0.05), (0.5, 200, 0.004)] {
            let output = try Self.simulate(seed: 3, in: dir) {
                $0.sensitivityOffset = offset
                $0.iso = iso
                $0.exposureTime = time
            }
            let truth = try #require(output.record.photometry)
            let patch = try #require(output.record.patches.first { $0.name == "grey/10" })
            let (_, analysis) = try #require(try Self.measure(output, patches: [patch], mode: .luminance, calibration: nil).first)
            let budget = try #require(analysis.budgets?.first)
            let l = truth.patchLuminance[patch.name]!
            #expect(budget.items.map(\.name) == ["noise", "exposure metadata"]
                    && budget.items[1].relative == Photometry.estimateRelativeUncertainty)
            #expect(budget.kind == .value && budget.low95! <= l && l <= budget.high95!, "offset \(offset): \(budget.value) against \(l)")
            // The estimate is off by exactly the sensor's offset from its label.
            #expect(abs(log(budget.value / l) - offset * log(2)) < 0.01, "offset \(offset)")
        }
    }

    /// `validate` checks the constant in use against the simulation's true one.
    @Test func validateChecksTheAbsoluteScale() throws {
        let dir = TestData.temporaryDirectory("photometry-validate")
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = try Self.simulate(seed: 2, in: dir)
        let report = try Pipeline.validate(dngPath: output.files["dng"]!, record: output.record)
        let absolute = try #require(report.absolute)
        #expect(abs(absolute.constant - Photometry.estimatedConstant) < 1e-9 && abs(absolute.trueConstant - 78 / (0.65 * pow(2, -1.0 / 3))) < 1e-9)
        #expect(absolute.passed && report.passed)
        let patch = try #require(absolute.patches.first { $0.name == "grey/12" })
        #expect(abs(patch.measured / patch.truth - absolute.constant / absolute.trueConstant) < 0.002)
        // A sensor 1.5 stops off its label: the estimate's interval misses the truth.
        let off = try Self.simulate(seed: 2, in: dir) { $0.sensitivityOffset = -1.5 }
        let missed = try Pipeline.validate(dngPath: off.files["dng"]!, record: off.record)
        #expect(missed.absolute?.passed == false && !missed.passed)
        #expect(missed.text.contains("does NOT hold it"))
        // Calibrated on its own truth, it holds it to a fraction of a percent.
        let reference = try #require(off.record.patches.first { $0.name == "grey/12" })
        let calibration = try Pipeline.calibrate(
            [CalibrationReference(photo: off.files["dng"]!, region: try Self.region(reference),
                                  luminance: off.record.photometry!.patchLuminance["grey/12"]!, relativeUncertainty: 0.01, method: "truth")],
            develop: DevelopOptions(), meterRelativeUncertainty: 0)
        let calibrated = try Pipeline.validate(dngPath: off.files["dng"]!, record: off.record, calibration: calibration)
        #expect(calibrated.absolute?.passed == true && abs(calibrated.absolute!.relativeError) < 0.003 && calibrated.passed)
    }

    @Test func fitArithmetic() throws {
        let settings = Photometry.Settings(exposureTime: 0.01, fNumber: 2, iso: 100, baselineExposure: 0)
        // x chosen so that the references' own K are 100, 110 and 121.
        let ks = [100.0, 110, 121], us = [0.02, 0.04, 0.02]
        let refs = zip(ks, us).map { k, u in
            CameraCalibration.Reference(file: "a.dng", region: "r", method: "spot meter", luminance: 50, luminanceRelativeUncertainty: u,
                                        measured: 50 / (k * settings.exposureFactor), measuredRelativeUncertainty: 0, settings: settings)
        }
        for (r, k) in zip(refs, ks) { #expect(abs(r.constant - k) < 1e-9) }
        let c = try CameraCalibration.fit(refs, camera: CameraIdentity(make: "M", model: "X"), meterRelativeUncertainty: 0.03,
                                          created: "2026-11-24T00:00:00Z")
        let w = us.map { 1 / ($0 * $0) }, sw = w.reduce(0, +)
        let lnK = zip(w, ks).map { $0 * log($1) }.reduce(0, +) / sw
        #expect(abs(c.constant - exp(lnK)) < 1e-9)
        let chi2 = zip(w, ks).map { $0 * pow(log($1) - lnK, 2) }.reduce(0, +)
        let birge = (chi2 / 2).squareRoot()
        #expect(abs(c.birgeRatio! - birge) < 1e-12 && birge > 1)
        #expect(abs(c.fitRelativeUncertainty - birge / sw.squareRoot()) < 1e-12)
        #expect(abs(c.relativeUncertainty - (pow(birge / sw.squareRoot(), 2) + 0.0009).squareRoot()) < 1e-12)
        #expect(abs(c.references[2].residual - (log(121) - lnK)) < 1e-12)
        #expect(throws: PhotometryError.self) { try CameraCalibration.fit([], camera: CameraIdentity(), created: "") }
    }

    @Test func calibrationFileRoundTripAndCameraCheck() throws {
        let dir = TestData.temporaryDirectory("photometry-file")
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = try Self.simulate(seed: 1, in: dir)
        let dng = try DNGFile.open(path: output.files["dng"]!)
        let settings = try Photometry.Settings.of(dng.metadata, path: "x")
        let ref = CameraCalibration.Reference(file: "a", region: "r", method: "spot meter", luminance: 10, luminanceRelativeUncertainty: 0.01,
                                              measured: 0.1, measuredRelativeUncertainty: 0.001, settings: settings)
        let mine = try CameraCalibration.fit([ref], camera: CameraIdentity(dng.metadata), created: "now")
        let path = dir.appendingPathComponent("cam.json").path
        try mine.json().write(to: URL(fileURLWithPath: path))
        let back = try CameraCalibration.read(path)
        #expect(back.constant == mine.constant && back.references == mine.references && back.name == path)
        // Same camera and settings: no settings term; the scale is K · N²/(t·S).
        let scale = try Photometry.luminanceScale(dng.metadata, path: "x", calibration: back)
        #expect(abs(scale.factor - mine.constant * settings.exposureFactor) < 1e-9 && scale.relativeUncertainty == mine.relativeUncertainty)
        // Other settings: the settings term is added.
        var other = dng.metadata
        other.capture.exposureTime = 0.02
        let moved = try Photometry.luminanceScale(other, path: "x", calibration: back)
        #expect(abs(moved.relativeUncertainty! - (pow(mine.relativeUncertainty, 2) + pow(Photometry.defaultSettingsUncertainty, 2)).squareRoot()) < 1e-12)
        // Another body: refused, unless allowed.
        var stranger = dng.metadata
        stranger.model = "Other model"
        #expect(throws: PhotometryError.self) { try Photometry.luminanceScale(stranger, path: "x", calibration: back) }
        #expect(try Photometry.luminanceScale(stranger, path: "x", calibration: back, allowOtherCamera: true).factor == scale.factor)
        // A file without its exposure settings: absolute units are refused, naming what is missing.
        var bare = dng.metadata
        bare.capture.exposureTime = nil
        bare.capture.iso = 0
        let missing = try #require(throws: PhotometryError.self) { try Photometry.luminanceScale(bare, path: "bare.dng", calibration: nil) }
        #expect(missing.description == "bare.dng: absolute units need the exposure settings, and the file lacks ExposureTime, ISO"
                && missing.category == .unsupportedFeature)
        // A damaged file and a missing one.
        try Data("{\"schema\": \"scenelinear.calibration/1\"}".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: PhotometryError.self) { try CameraCalibration.read(path) }
        #expect(throws: PhotometryError.self) { try CameraCalibration.read(dir.appendingPathComponent("none.json").path) }
    }

    /// The spectral term (docs/lens.md): a calibration's factor for a named light multiplies
    /// the scale and adds its uncertainty as the item "spectral mismatch"; a stated uncertainty
    /// adds the item alone; without either, absolute budgets say the item is not included. The
    /// factors survive the calibration file; an unknown light, or a light without a
    /// calibration, is refused.
    @Test func spectralTerm() throws {
        let dir = TestData.temporaryDirectory("photometry-spectral")
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = try Self.simulate(seed: 3, in: dir)
        let truth = try #require(output.record.photometry)
        let grey = output.record.patches.filter { $0.name.hasPrefix("grey/") }
        let reference = try #require(grey.first { $0.name == "grey/12" })
        var calibration = try Pipeline.calibrate(
            [CalibrationReference(photo: output.files["dng"]!, region: try Self.region(reference),
                                  luminance: truth.patchLuminance[reference.name]!, relativeUncertainty: 0, method: "truth")],
            develop: DevelopOptions(), meterRelativeUncertainty: 0.02)
        calibration.lightSource = "daylight"
        calibration.spectralFactors = ["LED": .init(factor: 0.9, relativeUncertainty: 0.03, source: "test")]
        let file = dir.appendingPathComponent("cal.json").path
        try calibration.write(to: file)
        let read = try CameraCalibration.read(file)
        #expect(read.spectralFactors == calibration.spectralFactors && read.lightSource == "daylight")

        func mean(_ spectral: SpectralTerm?) throws -> UncertaintyBudget {
            var request = AnalysisRequest()
            request.regions = [try Self.region(try #require(grey.first { $0.name == "grey/13" }))]
            request.percentiles = []
            request.develop.exposure = .luminance
            request.develop.calibration = read
            request.develop.spectral = spectral
            return try #require(try Pipeline.analyze(output.files["dng"]!, request: request).regions.first?.budgets?.first)
        }
        let plain = try mean(nil)
        #expect(plain.notIncluded.contains { $0.hasPrefix("spectral mismatch") } && !plain.items.contains { $0.name == "spectral mismatch" })
        let led = try mean(.lightSource("LED"))
        #expect(abs(led.value / plain.value - 0.9) < 1e-6, "\(led.value) against \(plain.value)")
        let item = try #require(led.items.first { $0.name == "spectral mismatch" })
        #expect(item.relative == 0.03 && led.notIncluded.allSatisfy { !$0.hasPrefix("spectral") })
        #expect(abs(led.relativeStandardUncertainty - (plain.relativeStandardUncertainty * plain.relativeStandardUncertainty + 0.0009).squareRoot()) < 1e-9)
        let stated = try mean(.stated(0.05))
        #expect(stated.value == plain.value && stated.items.contains { $0.name == "spectral mismatch" && $0.relative == 0.05 })
        #expect(throws: PhotometryError.self) { try mean(.lightSource("sodium")) }
        var noCalibration = DevelopOptions()
        noCalibration.exposure = .luminance
        noCalibration.spectral = .lightSource("LED")
        #expect(throws: PhotometryError.self) { try Pipeline.develop(path: output.files["dng"]!, options: noCalibration) }
    }
}
