import CaptureSimulation
import Foundation
import Plots
import SceneLinearKit
import SimulationCheck
import Testing
import TestSupport

/// A small simulated study merged and measured set by set: E_v against the simulation's truth
/// (a value inside its interval when the sun is caught, a lower bound never above the truth
/// when it is clipped in every frame), the sun per set, the time series, resuming and redoing.
struct StudyRunTests {
    /// A CIE overcast dome, 160 px across through a 180° equidistant fisheye, with a sun of
    /// `sunRadius`° and `sun` × white.
    static func sky(sunRadius: Double, sun: Double) -> SceneDescription {
        SceneDescription(name: "sky", width: 160, height: 160, background: [0, 0, 0], elements: [
            .init(type: "sky", name: "sky", rgb: [0.45, 0.5, 0.6], projection: "equidistant", fov: 180, model: "cie-overcast",
                  sun: [30, 60, sunRadius], sunRGB: [sun, 0.96 * sun, 0.87 * sun]),
        ])
    }

    /// Brackets at 10:00, 10:05 and 10:10 (UTC+2) of a sky whose sun is caught by the
    /// shortest frame, then one whose sun (2.4·10⁵ × white) is clipped in every frame.
    static func study(_ dir: URL) throws -> (frames: [String], truths: [Double], calibration: CameraCalibration) {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var frames: [String] = [], truths: [Double] = []
        var calibration: CameraCalibration?
        for (k, scene) in [sky(sunRadius: 4, sun: 60), sky(sunRadius: 4, sun: 60), sky(sunRadius: 0.5, sun: 2.4e5)].enumerated() {
            var camera = CameraModel()
            camera.seed = UInt64(11 + k)
            camera.captureTime = "2026:06:21 10:\(String(format: "%02d", 5 * k)):00"
            camera.captureOffset = "+02:00"
            let out = try Pipeline.simulateBracket(scene: try RenderedScene(scene), camera: camera, stops: [-8, -4, 0], name: "set\(k)",
                                                   directory: dir.path)
            frames += out.frames
            truths.append(try #require(out.record.photometry?.illuminance))
            if calibration == nil {
                let dng = try DNGFile.open(path: out.frames[2])
                let settings = try Photometry.Settings.of(dng.metadata, path: dng.path)
                let k = try #require(out.record.photometry?.cameraConstant)
                let reference = CameraCalibration.Reference(file: "truth", region: "-", method: "the simulation's constant",
                                                            luminance: k * settings.exposureFactor, luminanceRelativeUncertainty: 0.002,
                                                            measured: 1, measuredRelativeUncertainty: 0, settings: settings)
                calibration = try CameraCalibration.fit([reference], camera: CameraIdentity(dng.metadata), created: "now")
            }
        }
        return (frames, truths, calibration!)
    }

    @Test func setsAreMergedAndMeasured() throws {
        let dir = TestData.temporaryDirectory("study")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (paths, truths, calibration) = try Self.study(dir.appendingPathComponent("in"))
        let frames = try SequenceFrames.read([dir.appendingPathComponent("in").path], fallbackOffset: nil)
        let grouping = BracketGrouping(frames: frames)
        #expect(grouping.sets.count == 3 && grouping.unassigned.isEmpty, "\(grouping)")
        var options = StudyOptions()
        options.merge.develop.exposure = .luminance
        options.merge.develop.calibration = calibration
        options.merge.develop.includeMasks = false
        options.fisheye = FisheyeLensRequest(FisheyeLens(projection: .equidistant, fieldOfView: 180, width: 160, height: 160))
        options.site = Site(latitude: 48.1, longitude: 11.6, elevation: 520)
        options.keep = .exr
        let study = dir.appendingPathComponent("study").path
        let first = try StudyRun(options: options).run(grouping, frames: frames, into: study)
        #expect(first.measured == 3 && first.skipped == 0 && first.failed.isEmpty && first.records.count == 3, "measured \(first.measured), skipped \(first.skipped), records \(first.records.map(\.id)), failed \(first.failed)")
        let records = first.records
        for (r, truth) in zip(records.prefix(2), truths) {
            let e = try #require(r.illuminance), u = try #require(r.illuminanceUncertainty)
            #expect(r.illuminanceKind == "value" && r.flags.isEmpty, "\(r)")
            #expect(abs(e - truth) <= 1.96 * u && abs(e / truth - 1) < 0.01, "\(e) ± \(u) lx against \(truth) lx")
            #expect(r.illuminanceLow95! <= truth && truth <= r.illuminanceHigh95!)
        }
        let clipped = records[2]
        #expect(clipped.illuminanceKind == "lower-bound" && clipped.illuminanceHigh95 == nil && clipped.flags.contains("clipped-in-every-frame"))
        #expect(clipped.illuminance! < truths[2] && clipped.illuminanceLow95! < truths[2], "\(clipped)")
        // The sun at each set's middle: 08:00, 08:05, 08:10 UTC at 48.1° N 11.6° E, rising in the south-east.
        let sun = SolarPosition(at: try UTCTime.parse(iso: records[0].mid).get(), site: options.site!)
        #expect(records[0].sunElevation == sun.elevation && sun.elevation > 40 && sun.elevation < 50 && sun.azimuth > 95 && sun.azimuth < 115)
        #expect(records[1].sunElevation! > records[0].sunElevation!)
        #expect(records.allSatisfy { $0.output != nil && FileManager.default.fileExists(atPath: $0.output!) })
        // The time series: a header with units and one row per set.
        let csv = StudyTable.csv(records).split(separator: "\n")
        #expect(csv.count == 4 && csv[0].contains("E_v [lx]") && csv[3].contains("lower-bound"))
        // The chart: the values with their intervals, the bound in a series of its own, drawn as a bound.
        let chart = try #require(StudyChart.plot(records))
        #expect(chart.series.map(\.points.count) == [2, 1] && chart.intervals[0].allSatisfy { $0?.high != nil } && chart.intervals[1] == [XYPlot.Interval(low: clipped.illuminanceLow95!, high: nil)])
        var roles: [String: Int] = [:]
        for case .line(_, _, _, let role?) in chart.drawing().items { roles[role, default: 0] += 1 }
        #expect(roles["interval"] == 2 && roles["lower-bound"] == 2, "\(roles)")   // the bound: its bar and its arrowhead
        #expect(PlotRenderer.render(chart, format: .png).starts(with: [0x89, 0x50, 0x4E, 0x47]))

        // A rerun skips the three; a frame changed under the study is redone; --no-resume redoes all.
        let again = try StudyRun(options: options).run(grouping, frames: frames, into: study)
        #expect(again.measured == 0 && again.skipped == 3)
        var data = try Data(contentsOf: URL(fileURLWithPath: paths[1]))
        data.append(0)
        try data.write(to: URL(fileURLWithPath: paths[1]))
        let changed = try StudyRun(options: options).run(grouping, frames: frames, into: study)
        #expect(changed.measured == 1 && changed.skipped == 2)
        options.resume = false
        #expect(try StudyRun(options: options).run(grouping, frames: frames, into: study).measured == 3)
    }

    /// Shards split the sets between processes sharing the folder, each with its own manifest;
    /// a set whose last frame saw a dark cloud the others did not is flagged `scene-changed` (and
    /// refused by the merge, its error kept), and the others are measured.
    @Test func shardsAndAChangedScene() throws {
        let dir = TestData.temporaryDirectory("study-shards")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (paths, _, calibration) = try Self.study(dir.appendingPathComponent("in"))
        // Set 2's longest frame replaced by one of the same moment and exposure with a dark cloud in it.
        var cloudy = Self.sky(sunRadius: 4, sun: 60)
        cloudy.elements.append(.init(type: "disk", name: "cloud", center: [0.35, 0.5], radius: 0.2, rgb: [0.08, 0.08, 0.08]))
        var camera = CameraModel()
        camera.seed = 99
        camera.captureTime = "2026:06:21 10:05:00"
        camera.captureOffset = "+02:00"
        let other = dir.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let cloud = try Pipeline.simulateBracket(scene: try RenderedScene(cloudy), camera: camera, stops: [-8, -4, 0], name: "cloud", directory: other.path)
        try FileManager.default.removeItem(atPath: paths[5])
        try FileManager.default.copyItem(atPath: cloud.frames[2], toPath: paths[5])
        let frames = try SequenceFrames.read([dir.appendingPathComponent("in").path], fallbackOffset: nil)
        var options = StudyOptions()
        options.merge.develop.exposure = .luminance
        options.merge.develop.calibration = calibration
        let study = dir.appendingPathComponent("study").path
        let grouping = BracketGrouping(frames: frames)
        #expect(grouping.sets.count == 3)
        var total = 0
        for i in 0..<2 {
            options.shard = Shard(index: i, count: 2)
            let s = try StudyRun(options: options).run(grouping, frames: frames, into: study)
            total += s.measured + s.failed.count
            #expect(FileManager.default.fileExists(atPath: study + "/sets-\(i + 1)-of-2.jsonl"))
        }
        #expect(total == 3)
        let records = StudyRun.readRecords(in: study)
        #expect(records.count == 3)
        let changed = try #require(records["set-0002"])
        #expect(changed.flags.contains("scene-changed"), "\(changed)")
        #expect(records["set-0001"]?.status == "ok" && records["set-0003"]?.status == "ok")
        #expect(records["set-0001"]?.flags.contains("scene-changed") == false)
        // A file where the study's folder should be: an output error naming it, nothing measured.
        let inTheWay = dir.appendingPathComponent("in-the-way").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: inTheWay))
        #expect { try StudyRun(options: options).run(grouping, frames: frames, into: inTheWay) } throws: { error in
            (error as? OutputError)?.description.contains("in-the-way") == true
        }
    }
}
