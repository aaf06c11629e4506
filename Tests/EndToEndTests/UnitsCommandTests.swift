import Foundation
import Testing
import ImageCore
import EXRExchange
import TestSupport

/// `--units`, `--calibration` and `calibrate` from the command line: what the files record
/// (checked with exrheader and h5py), the errors and their exit codes.
@Suite struct UnitsCommandTests {
    @Test func unitsCalibrationAndTheirRecord() throws {
        let dir = TestData.temporaryDirectory("units-cli")
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = try CLI.run(["simulate", "--scene", "grey-ramp", "--size", "512x256", "--seed", "4", "-o", dir.path, "-q"])
        try #require(made.status == 0, "\(made.stderr)")
        let dng = dir.appendingPathComponent("grey-ramp.dng").path
        let record = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("grey-ramp.truth.json")))
            as? [String: Any])
        let photometry = try #require(record["photometry"] as? [String: Any])
        let truth = try #require(photometry["patchLuminance"] as? [String: Double])
        // grey/12 of the 512×256 ramp (pixels 16…208 × 338…364), inset.
        let patches = try #require(record["patches"] as? [[String: Any]])
        func region(_ name: String) throws -> String {
            let rect = try #require(patches.first { $0["name"] as? String == name }?["rect"] as? [String: Int])
            return "\(name.replacingOccurrences(of: "/", with: "-"))=\(rect["top"]! + 4),\(rect["left"]! + 4),\(rect["bottom"]! - 4),\(rect["right"]! - 4)"
        }

        // A grey card: ρ · E / π equal to grey/12's luminance.
        let camera = dir.appendingPathComponent("camera.json").path
        let e = truth["grey/12"]! * Double.pi / 0.18
        let cal = try CLI.run(["calibrate", dng, "--region", try region("grey/12"), "--reflectance", "0.18", "--illuminance", String(e),
                               "--reflectance-uncertainty", "0", "--illuminance-uncertainty", "0", "--meter-uncertainty", "0", "-o", camera, "--json"])
        try #require(cal.status == 0, "\(cal.stderr)")
        let calibration = try #require(try JSONSerialization.jsonObject(with: Data(cal.stdout.utf8)) as? [String: Any])
        let k = try #require(calibration["constant"] as? Double)
        #expect(abs(k / (photometry["cameraConstant"] as! Double) - 1) < 0.002, "K \(k)")
        #expect((calibration["camera"] as? [String: Any])?["model"] as? String != nil)

        // Luminance EXR: whiteLuminance 1; radiance: 179 and a factor 179 times smaller.
        let lum = dir.appendingPathComponent("lum.exr").path, rad = dir.appendingPathComponent("rad.exr").path
        for (path, units) in [(lum, "luminance"), (rad, "radiance")] {
            let r = try CLI.run(["convert", dng, "-o", path, "--units", units, "--calibration", camera, "-q"])
            try #require(r.status == 0, "\(r.stderr)")
        }
        let a = try EXRFile.readSceneLinear(lum), b = try EXRFile.readSceneLinear(rad)
        #expect(a.exposure.mode == .luminance && b.exposure.mode == .radiance)
        #expect(abs(a.exposure.factor / b.exposure.factor - 179) < 1e-9)
        #expect(a.exposure.source?.contains("calibration") == true && a.exposure.relativeUncertainty! < 0.001)
        if let exrheader = TestData.toolIfPresent("exrheader") {
            let header = try TestData.run(exrheader, [rad]).stdout
            #expect(header.contains("whiteLuminance (type float): 179"), "\(header)")
            #expect(try TestData.run(exrheader, [lum]).stdout.contains("whiteLuminance (type float): 1\n"))
        } else {
            Issue.record("exrheader is not installed: the header check was skipped")
        }
        // Stats in cd/m²: grey/14 within 0.5 % of its truth.
        let stats = try CLI.run(["stats", dng, "--units", "luminance", "--calibration", camera, "--region", try region("grey/14"), "--json"])
        try #require(stats.status == 0, "\(stats.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        let file = try #require((doc["files"] as? [[String: Any]])?.first)
        let budget = try #require(((file["regions"] as? [[String: Any]])?.first?["budgets"] as? [[String: Any]])?.first)
        let value = try #require(budget["value"] as? Double)
        #expect(abs(value / truth["grey/14"]! - 1) < 0.005, "\(value)")
        #expect((budget["items"] as? [[String: Any]])?.map { $0["name"] as? String } == ["noise", "calibration"])
        // Budgets of Y's mean and median, then of the means of R, G and B.
        let budgets = try #require((file["regions"] as? [[String: Any]])?.first?["budgets"] as? [[String: Any]])
        #expect(budgets.map { "\($0["quantity"]!) \($0["statistic"]!)" } == ["Y mean", "Y median", "R mean", "G mean", "B mean"])
        #expect((file["units"] as? String)?.hasPrefix("cd/m^2") == true)

        // An EV map in cd/m² is drawn (its legend: PlotsTests.absoluteLegendLabels).
        let png = dir.appendingPathComponent("map.png").path
        try #require(try CLI.run(["stats", dng, "--units", "luminance", "--calibration", camera, "--ev-map", png, "-q"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: png))

        // HDF5 attributes, read by h5py.
        let h5 = dir.appendingPathComponent("lum.h5").path
        try #require(try CLI.run(["convert", dng, "-o", h5, "--units", "luminance", "-q"]).status == 0)
        if let python = try? TestData.requirePython() {
            let script = "import h5py,sys; a=h5py.File(sys.argv[1])['image'].attrs; print(a['white_luminance'], a['scale_relative_uncertainty'], a['units'])"
            let r = try TestData.run(python, ["-c", script, h5])
            #expect(r.status == 0 && r.stdout.hasPrefix("1.0 0.25 cd/m^2"), "\(r.stdout)\(r.stderr)")
        }

        // Errors: absolute units with an exposure scaling, a calibration without absolute
        // units (usage, 64); another camera body (18); a damaged calibration file (13).
        #expect(try CLI.run(["convert", dng, "-o", lum, "--units", "luminance", "--exposure", "baseline"]).status == 64)
        #expect(try CLI.run(["stats", dng, "--calibration", camera]).status == 64)
        var other = calibration
        var body = other["camera"] as! [String: Any]
        body["model"] = "Another model"
        other["camera"] = body
        let otherPath = dir.appendingPathComponent("other.json").path
        try JSONSerialization.data(withJSONObject: other).write(to: URL(fileURLWithPath: otherPath))
        let refused = try CLI.run(["stats", dng, "--units", "luminance", "--calibration", otherPath])
        #expect(refused.status == 18 && refused.stderr.contains("another camera"), "\(refused.status) \(refused.stderr)")
        #expect(try CLI.run(["stats", dng, "--units", "luminance", "--calibration", otherPath, "--allow-other-camera"]).status == 0)
        try Data("not json".utf8).write(to: URL(fileURLWithPath: otherPath))
        let damaged = try CLI.run(["convert", dng, "-o", lum, "--units", "luminance", "--calibration", otherPath])
        #expect(damaged.status == 13 && damaged.stderr.contains(otherPath), "\(damaged.status) \(damaged.stderr)")
        // A converted file in relative units measured with --units: refused (14), not rescaled.
        let relative = dir.appendingPathComponent("relative.exr").path
        try #require(try CLI.run(["convert", dng, "-o", relative, "-q"]).status == 0)
        let mixed = try CLI.run(["stats", relative, "--units", "luminance"])
        #expect(mixed.status == 14 && mixed.stderr.contains("relative units"), "\(mixed.status) \(mixed.stderr)")
        #expect(try CLI.run(["stats", lum, "--units", "luminance", "-q"]).status == 0)
        // A clipped reference is refused (its mean is a lower bound).
        let clipped = try CLI.run(["calibrate", dng, "--region", try region("grey/17"), "--luminance", "100", "-o", camera])
        #expect(clipped.status != 0 && clipped.stderr.contains("clipped"), "\(clipped.stderr)")
    }
}
