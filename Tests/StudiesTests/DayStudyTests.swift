import CaptureSimulation
import Foundation
import SceneLinearKit
import SimulationCheck
import Testing
import TestSupport

/// A simulated summer day in Munich (docs/studies.md#a-simulated-day), 16 sets an hour apart,
/// measured as a study and checked against its truth: the low sun's sets give E_v and DGP
/// whose intervals hold the truth, the midday sun's (clipped in every frame) lower bounds
/// never above it, the set with a cloud in its longest frame is flagged; the sun per set is
/// the one the day was rendered with. The full closed loop over many days is
/// `benchmarks/study_day.py` (docs/study-day.md).
@Suite struct DayStudyTests {
    @Test func aSimulatedDayAgainstItsTruth() throws {
        let dir = TestData.temporaryDirectory("study-day")
        defer { try? FileManager.default.removeItem(at: dir) }
        var plan = DayPlan(site: Site(latitude: 48.1, longitude: 11.6, elevation: 520), date: "2026-06-21", utcOffset: "+02:00",
                           firstSet: "05:30", interval: 60, sets: 16)
        plan.stops = [-8, -6, -4, -2, 0]
        plan.size = 128
        plan.clouds = [3]
        let days = dir.appendingPathComponent("day").path
        let truths = try Pipeline.simulateDay(plan, name: "day", directory: days)
        #expect(truths.count == 16 && truths.filter(\.cloud).map(\.set) == [4])
        #expect(try Pipeline.readDay(days + "/day.day.jsonl") == truths)
        // The sun rises in the north-east and culminates at about 65° a little after 13:00 local time.
        #expect(truths[0].sunAzimuth > 45 && truths[0].sunAzimuth < 65 && truths.map(\.sunElevation).max()! > 64)

        let frames = try SequenceFrames.read([days], fallbackOffset: nil)
        let grouping = BracketGrouping(frames: frames)
        #expect(grouping.sets.count == 16 && grouping.unassigned.isEmpty)
        var options = StudyOptions()
        options.merge.develop.exposure = .luminance
        options.merge.develop.calibration = try CameraCalibration.read(days + "/day.camera.json")
        options.merge.develop.settingsUncertainty = 0
        options.fisheye = FisheyeLensRequest(projection: .equidistant, fieldOfView: 180)
        options.site = plan.site
        options.view = CameraOrientation(azimuth: 180, elevation: 90)   // at the zenith, north up, as the day is rendered
        options.maps = true
        let study = dir.appendingPathComponent("study").path
        let summary = try StudyRun(options: options).run(grouping, frames: frames, into: study)
        let report = Pipeline.validateDay(truths: truths, records: summary.records)
        #expect(report.passed, "\(report.text)")
        #expect(report.valueSets >= 5 && report.lowerBounds >= 5 && report.boundsAboveTruth == 0, "\(report.text)")
        #expect(report.illuminanceCovered >= report.valueSets - 1 && report.dgpCovered >= report.valueSets - 1, "\(report.text)")
        #expect(report.cloudSets == 1 && report.cloudsFlagged == 1)
        for r in summary.records {
            let t = try #require(truths.first { r.files.first?.hasSuffix($0.files[0]) == true })
            #expect(abs(r.sunElevation! - t.sunElevation) < 0.01, "\(r.id): \(r.sunElevation!) against \(t.sunElevation)")
            // The sun where the day drew its disc: (90 − h)/180 of the height from the centre, at 90° + azimuth.
            guard r.status == "ok", let c = r.circumsolar else { continue }
            let radius = (90 - t.sunElevation) / 180 * 128, a = (90 + t.sunAzimuth) * .pi / 180
            #expect(abs(c.sunX! - (64 + radius * cos(a))) < 0.05 && abs(c.sunY! - (64 - radius * sin(a))) < 0.05, "\(r.id): \(c)")
            #expect(c.inView && c.illuminanceShare > 0.05 && r.flags.contains("sun-in-view"), "\(r.id): \(c)")
            // Its false-colour map, a PNG in the study's maps folder.
            let png = try Data(contentsOf: URL(fileURLWithPath: try #require(r.map)))
            #expect(r.map == study + "/maps/\(r.id).png" && png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 2000)
        }
        // A bound is reported as one wherever the sun was clipped in every frame.
        for check in report.sets where (truths[check.set - 1].sunOverWhite ?? 0) > 1.6 && check.status == "ok" {
            #expect(check.illuminanceKind == "lower-bound" && check.dgpKind == "lower-bound", "\(check)")
        }
    }
}
