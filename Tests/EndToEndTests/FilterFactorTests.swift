import CaptureSimulation
import Foundation
import SceneLinearKit
import SimulationCheck
import Testing
import TestSupport

/// Filters in front of the lens (docs/lens.md): the transmittance's notation, a single frame
/// through a filter divided back to the scene with the filter in its budget, and a bracket
/// whose short frames are behind a 10-stop ND filter merged into the sun's illuminance,
/// checked against the simulation's truth; a wrong transmittance is reported by the merge.
@Suite struct FilterFactorTests {
    @Test func notation() throws {
        let plain = try FilterFactor.parse("0.001")
        #expect(plain.transmittance == 0.001 && !plain.stated && plain.relativeUncertainty == FilterFactor.nominalRelativeUncertainty)
        let relative = try FilterFactor.parse("0.001±3%")
        #expect(relative.stated && abs(relative.relativeUncertainty - 0.03) < 1e-12)
        let absolute = try FilterFactor.parse("0.002+-0.0001")
        #expect(abs(absolute.relativeUncertainty - 0.05) < 1e-12)
        let density = try FilterFactor.parse("ND3.0±0.02")
        #expect(abs(density.transmittance - 0.001) < 1e-15 && abs(density.relativeUncertainty - 0.02 * log(10)) < 1e-12)
        #expect(try FilterFactor.parse("nd 2").transmittance == 0.01)
        for bad in ["0", "-0.5", "1000", "ND-1", "abc", "0.001±x", "0.001±-1%", "0.5±0.6", ""] {
            #expect(throws: FilterFactor.ParseError.self, "\(bad)") { try FilterFactor.parse(bad) }
        }
    }

    /// One frame through a 0.01 filter: with the factor, E_v within 0.5 % of the truth, the
    /// interval holding it and the budget naming the filter; without it, 100× too low and the
    /// interval misses the truth; sensor-referred units refuse a filter.
    @Test func singleFrameThroughAFilter() throws {
        let dir = TestData.temporaryDirectory("filter-single")
        defer { try? FileManager.default.removeItem(at: dir) }
        let sim = try Pipeline.simulateBracket(scene: try RenderedScene(IlluminanceTests.dome(.equidistant)), camera: IlluminanceTests.camera,
                                               stops: [4], name: "nd", directory: dir.path, filters: [0: 0.01])
        let truth = try #require(sim.record.photometry?.illuminance)
        let lens = FisheyeLens(projection: .equidistant, fieldOfView: 180, width: 512, height: 512)
        var options = IlluminanceTests.luminanceOptions()
        options.filter = try FilterFactor.parse("0.01±4%")
        let r = try Pipeline.illuminance(sim.frames[0], lens: lens, options: options)
        #expect(abs(r.illuminance / truth - 1) < 0.005, "\(r.illuminance) lx against \(truth) lx")
        #expect(r.low95! <= truth && truth <= r.high95!)
        #expect(abs(r.scaleRelativeUncertainty - (0.25 * 0.25 + 0.04 * 0.04).squareRoot()) < 1e-9, "\(r.scaleRelativeUncertainty)")
        #expect(r.scaleSource.contains("filter's transmittance 0.01"), "\(r.scaleSource)")
        let analysis = try Pipeline.analyze(sim.frames[0], request: { var q = AnalysisRequest(); q.develop = options; return q }())
        let items = try #require(analysis.regions.first?.budgets?.first?.items)
        #expect(items.contains { $0.name == "filter" && abs($0.relative - 0.04) < 1e-12 }, "\(items.map(\.name))")
        let without = try Pipeline.illuminance(sim.frames[0], lens: lens, options: IlluminanceTests.luminanceOptions())
        #expect(abs(without.illuminance / truth - 0.01) < 0.0002 && without.high95! < truth)
        var relative = DevelopOptions()
        relative.filter = options.filter
        #expect(throws: PhotometryError.self) { try Pipeline.develop(path: sim.frames[0], options: relative) }
    }

    /// Merges `frames`, the first two behind a filter of transmittance `t` (±3 %), in luminance.
    static func mergeFiltered(_ frames: [String], _ t: Double) throws -> MergedBracket {
        var options = MergeOptions()
        options.develop = IlluminanceTests.luminanceOptions()
        options.allowUncheckedRatios = true
        let filter = FilterFactor(transmittance: t, relativeUncertainty: 0.03, stated: true, text: "\(t)±3%")
        options.frameFilters = [0: filter, 1: filter]
        return try Pipeline.merge(paths: frames, options: options)
    }

    /// The sun's dome in a bracket whose two shortest frames are behind a 10-stop ND filter
    /// (exposures −18, −12, −6 and 0 EV on the sensor): merged with the filter's
    /// transmittance, nothing is clipped and E_v is within 0.5 % of the truth, inside its
    /// interval, whose scale uncertainty holds the filter's (the filtered frames share no
    /// valid pixels with the others: merged at the transmittance); the reference is an
    /// unfiltered frame.
    @Test func sunBehindAnNDFilter() throws {
        let dir = TestData.temporaryDirectory("filter-sun")
        defer { try? FileManager.default.removeItem(at: dir) }
        var camera = IlluminanceTests.camera
        camera.noise = false
        let nd10 = pow(2, -10.0)
        let sim = try Pipeline.simulateBracket(scene: try RenderedScene(IlluminanceTests.dome(.equidistant, sun: true, size: 768)),
                                               camera: camera, stops: [-8, -2, -6, 0], name: "sun", directory: dir.path,
                                               filters: [0: nd10, 1: nd10])
        let truth = try #require(sim.record.photometry?.illuminance)
        let lens = FisheyeLens(projection: .equidistant, fieldOfView: 180, width: 768, height: 768)
        let merged = try Self.mergeFiltered(sim.frames, nd10)
        let e = try Pipeline.illuminance(AnalysisInput(path: "merged", image: merged.image, noise: nil), lens: lens)
        #expect(merged.report.lowerBoundPixels == 0)
        #expect(merged.report.reference == 2 && merged.report.frames[0].filterTransmittance == nd10)
        #expect(merged.report.frames[1].exposureSource == "metadata, unchecked")
        #expect(abs(e.illuminance / truth - 1) < 0.005, "\(e.illuminance) lx against \(truth) lx")
        #expect(e.low95! <= truth && truth <= e.high95!)
        #expect(abs(e.scaleRelativeUncertainty - (0.25 * 0.25 + 0.03 * 0.03).squareRoot()) < 1e-9, "\(e.scaleRelativeUncertainty)")
    }

    /// The built-in sky with the sun and a grey ramp, the same bracket: the frame at −12 EV
    /// shares the ramp's patches with the one at −6, so its ratio is measured (and used:
    /// better known than ±3 %). Told a transmittance twice the true one, the merge reports
    /// that frame as misstated and merges it and the filtered frame before it at the measured
    /// ratio: the same exposures as with the true transmittance, within 0.5 %.
    @Test func wrongTransmittanceReported() throws {
        let dir = TestData.temporaryDirectory("filter-wrong")
        defer { try? FileManager.default.removeItem(at: dir) }
        let nd10 = pow(2, -10.0)
        let sim = try Pipeline.simulateBracket(scene: try Pipeline.loadScene("sky-sun", width: 512, height: 512), camera: IlluminanceTests.camera,
                                               stops: [-8, -2, -6, 0], name: "sky", directory: dir.path, filters: [0: nd10, 1: nd10])
        let right = try Self.mergeFiltered(sim.frames, nd10)
        #expect(right.report.misstatedFrames.isEmpty && right.report.frames[1].exposureSource == "measured, filter",
                "\(right.report.frames.map(\.exposureSource))")
        let wrong = try Self.mergeFiltered(sim.frames, 2 * nd10)
        #expect(wrong.report.misstatedFrames == [1], "\(wrong.report.frames.map(\.exposureSource))")
        for i in 0..<2 {
            #expect(abs(wrong.report.frames[i].exposure / right.report.frames[i].exposure - 1) < 0.005,
                    "frame \(i + 1): \(wrong.report.frames[i].exposure) against \(right.report.frames[i].exposure)")
        }
    }
}
