import Foundation
import SimulationCheck
import Testing
import TestSupport

/// The command line as scripts use it: every `--json` document validates against its JSON
/// Schema in docs/schemas (checked with the Python `jsonschema` package), one file and a
/// batch give the same document shape, `-o -` and `info -` use the standard streams, errors
/// and per-file failures go to stderr, `-q` silences every command, output directories are
/// created.
@Suite struct MachineInterfaceTests {
    static var schemas: URL { TestData.packageRoot.appendingPathComponent("docs/schemas") }

    /// Validates each (schema name, JSON text) pair; returns the validator's report.
    static func validate(_ documents: [(String, String)], in dir: URL) throws -> ProcessResult? {
        var arguments: [String] = []
        for (k, (schema, text)) in documents.enumerated() {
            let path = dir.appendingPathComponent("doc-\(k).json").path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            arguments += [Self.schemas.appendingPathComponent("\(schema).schema.json").path, path]
        }
        let script = """
            import sys, json, jsonschema
            args = sys.argv[1:]
            bad = 0
            for schema_path, doc_path in zip(args[0::2], args[1::2]):
                schema = json.load(open(schema_path))
                jsonschema.Draft202012Validator.check_schema(schema)
                errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(doc_path))))
                for e in errors[:3]:
                    print("INVALID", doc_path, list(e.absolute_path), e.message[:200])
                bad += bool(errors)
            print("checked", len(args) // 2, "invalid", bad)
            """
        return try TestData.runPython(script, arguments)
    }

    @Test(.enabled(if: (TestData.python != nil && (try? CLI.binary) != nil) || TestRequirement.toolsRequired))
    func everyJSONDocumentMatchesItsSchema() throws {
        let dir = TestData.temporaryDirectory("schemas")
        defer { try? FileManager.default.removeItem(at: dir) }
        let chart = TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng").path
        let batchIn = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: batchIn, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: chart, toPath: batchIn.appendingPathComponent("a.dng").path)
        try Data("not a DNG".utf8).write(to: batchIn.appendingPathComponent("b.dng"))
        let exr = dir.appendingPathComponent("one.exr").path
        var documents: [(String, String)] = []
        func run(_ schema: String, _ arguments: [String], status: Int32 = 0, stdin: Data? = nil) throws -> ProcessResult {
            let r = try TestData.run(try CLI.binary, arguments, stdin: stdin)
            #expect(r.status == status, "\(arguments): \(r.stderr)")
            documents.append((schema, r.stdout))
            return r
        }
        let one = try run("convert", ["convert", chart, "-o", exr, "--json", "--timings"])
        let failed = try run("convert", ["convert", batchIn.appendingPathComponent("b.dng").path, "-o", exr, "--json"], status: 11)
        let batch = try run("convert", ["convert", batchIn.path, "-o", dir.appendingPathComponent("out/new/").path, "--json"], status: 11)
        _ = try run("info", ["info", chart, "--json"])
        _ = try run("info", ["info", chart, "--json", "--tags"])
        let stdinInfo = try run("info", ["info", "-", "--json"], stdin: try Data(contentsOf: URL(fileURLWithPath: chart)))
        _ = try run("analysis", ["stats", chart, exr, "--json", "--region", "a=0%,0%,50%,50%"])
        _ = try run("analysis", ["histogram", exr, "--json"])
        _ = try run("analysis", ["ratio", exr, "--region", "a=0%,0%,50%,50%", "--region", "b=50%,50%,100%,100%", "--json"])
        _ = try run("analysis", ["stats", exr, batchIn.appendingPathComponent("b.dng").path, "--json"], status: 11)
        let sim = dir.appendingPathComponent("sim")
        let simulated = try TestData.run(try CLI.binary, ["simulate", "--size", "96x64", "-o", sim.path, "-q"])
        #expect(simulated.status == 0 && simulated.stdout.isEmpty, "\(simulated.stderr)")
        _ = try run("validation", ["validate", sim.appendingPathComponent("grey-ramp.dng").path, "--json"])
        // Absolute units: budgets and the scale's record; a calibration; a refused one.
        let simulatedDNG = sim.appendingPathComponent("grey-ramp.dng").path
        _ = try run("analysis", ["stats", simulatedDNG, "--units", "luminance", "--region", "a=10,10,30,30", "--json"])
        _ = try run("convert", ["convert", simulatedDNG, "-o", dir.appendingPathComponent("lum.exr").path, "--units", "radiance", "--json"])
        let camera = dir.appendingPathComponent("camera.json").path
        let calibrated = try run("calibration", ["calibrate", simulatedDNG, "--region", "r=10,10,30,30", "--luminance", "20", "-o", camera, "--json"])
        #expect(try String(contentsOfFile: camera, encoding: .utf8) + "\n" == calibrated.stdout)
        var stranger = try #require(try JSONSerialization.jsonObject(with: Data(calibrated.stdout.utf8)) as? [String: Any])
        stranger["camera"] = ["make": "Other"]
        let strangerPath = dir.appendingPathComponent("stranger.json").path
        try JSONSerialization.data(withJSONObject: stranger).write(to: URL(fileURLWithPath: strangerPath))
        _ = try run("analysis", ["stats", simulatedDNG, "--units", "luminance", "--calibration", strangerPath, "--json"], status: 18)
        // A bracket: merge, validate it, the illuminance of a fisheye.
        let bracket = dir.appendingPathComponent("bracket")
        let made = try TestData.run(try CLI.binary, ["simulate", "--scene", "sky-sun", "--size", "96x64", "--bracket=-4,0,4", "-o", bracket.path, "-q"])
        #expect(made.status == 0, "\(made.stderr)")
        let frames = (1...3).map { bracket.appendingPathComponent("sky-sun_\($0).dng").path }
        _ = try run("merge", ["merge"] + frames + ["-o", dir.appendingPathComponent("merged.exr").path, "--json"])
        _ = try run("validation-bracket", ["validate"] + frames + ["--json"])
        _ = try run("illuminance", ["illuminance", frames[1], "--projection", "equisolid", "--fov", "160", "--json"])
        // Radiance pictures with their lower bounds and masks.
        let pictures = dir.appendingPathComponent("pictures")
        try FileManager.default.createDirectory(at: pictures, withIntermediateDirectories: true)
        let clipped = try run("convert", ["convert", frames[2], "-o", pictures.appendingPathComponent("c.hdr").path, "--units", "luminance", "--json"])
        #expect(clipped.stdout.contains("\"maskOf\""), "\(clipped.stdout)")
        _ = try run("merge", ["merge"] + frames + ["-o", pictures.appendingPathComponent("m.hdr").path, "--units", "luminance", "--json"])
        _ = try run("merge", ["merge"] + frames + ["-o", pictures.appendingPathComponent("f.hdr").path, "--units", "luminance",
                              "--projection", "equidistant", "--json"])
        _ = try run("illuminance", ["illuminance", frames[2], "--projection", "equisolid", "-o", pictures.appendingPathComponent("i.hdr").path, "--json"])
        _ = try run("glare", ["glare", frames[2], "--projection", "equisolid", "--glare-draws", "40", "--json"])
        // The sun at given times and at a capture time with its offset.
        let timed = dir.appendingPathComponent("timed")
        let made2 = try TestData.run(try CLI.binary, ["simulate", "--size", "96x64", "--capture-time", "2003:10:17 12:30:30", "--capture-offset", "-07:00", "-o", timed.path, "-q"])
        #expect(made2.status == 0, "\(made2.stderr)")
        let sun = try run("sun", ["sun", "--site", "-33.9,18.4,20", "--time", "2026-12-21T10:00:00Z", "--time", "2026-12-21T14:00:00+02:00",
                                  timed.appendingPathComponent("grey-ramp.dng").path, "--json"])
        #expect(sun.stdout.contains("2003-10-17T19:30:30Z"), "\(sun.stdout)")
        // A study's frames grouped: two sets of three, a set missing a frame, a frame without its zone.
        let study = dir.appendingPathComponent("study")
        for (k, (time, exposure)) in [("12:00:00", "0.01"), ("12:00:01", "0.001"), ("12:00:02", "0.0001"), ("12:05:00", "0.01"), ("12:05:01", "0.001"),
                                      ("12:05:02", "0.0001"), ("12:10:00", "0.01"), ("12:10:01", "0.001")].enumerated() {
            let r = try TestData.run(try CLI.binary, ["simulate", "--size", "48x32", "--name", "f\(k)", "--exposure-time", exposure,
                                                      "--capture-time", "2026:06:21 \(time)", "--capture-offset", "+02:00", "-o", study.path, "-q"])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let zoneless = try TestData.run(try CLI.binary, ["simulate", "--size", "48x32", "--name", "g", "--capture-time", "2026:06:21 12:20:00", "-o", study.path, "-q"])
        #expect(zoneless.status == 0, "\(zoneless.stderr)")
        let studyDir = dir.appendingPathComponent("study-out").path, grouping = studyDir + "/grouping.json"
        let grouped = try run("sequence", ["sequence", study.path, "-o", studyDir, "--group-only", "--json"])
        let groupingDocument = try #require(try JSONSerialization.jsonObject(with: Data(grouped.stdout.utf8)) as? [String: Any])
        let sets = try #require(groupingDocument["sets"] as? [[String: Any]]), unassigned = try #require(groupingDocument["unassigned"] as? [[String: Any]])
        #expect(sets.count == 2 && unassigned.count == 3, "\(grouped.stdout)")
        #expect(sets.first?["start"] as? String == "2026-06-21T10:00:00Z" && (sets.first?["files"] as? [String])?.count == 3)
        #expect(unassigned.contains { ($0["file"] as? String)?.hasSuffix("g.dng") == true && ($0["reason"] as? String)?.contains("no capture time") == true })
        #expect(try String(contentsOfFile: grouping, encoding: .utf8) == grouped.stdout)
        // The sets merged and measured: the study's document, its manifest and time series.
        let measured = try run("study", ["sequence", study.path, "-o", studyDir, "--projection", "equidistant", "--glare-draws", "40", "--json"], status: 0)
        #expect(measured.stdout.contains("\"dgp\""), "\(measured.stdout)")
        #expect(measured.stdout.contains("\"measured\" : 2"), "\(measured.stdout)")
        let table = try String(contentsOfFile: studyDir + "/timeseries.csv", encoding: .utf8)
        #expect(table.hasPrefix("set,start_utc,end_utc,mid_utc,frames,status,E_v [lx]") && table.split(separator: "\n").count == 3, "\(table)")
        // A simulated day of two sets, measured and checked against its truth.
        let day = dir.appendingPathComponent("day").path, dayStudy = dir.appendingPathComponent("day-study").path
        let daySimulation = try TestData.run(try CLI.binary, ["simulate", "--day", "2026-12-21", "--site", "48.1,11.6", "--capture-offset", "+01:00",
                                                          "--first-set", "11:00", "--interval", "30", "--sets", "2", "--size", "64x64", "-o", day, "-q"])
        #expect(daySimulation.status == 0, "\(daySimulation.stderr)")
        _ = try run("study", ["sequence", day, "-o", dayStudy, "--calibration", day + "/day.camera.json", "--settings-uncertainty", "0",
                              "--projection", "equidistant", "--glare-draws", "40", "--json"])
        _ = try run("validation-day", ["validate", day + "/day.day.jsonl", "--study", dayStudy, "--json"])
        let refused = try TestData.run(try CLI.binary, ["merge", frames[0], "-o", dir.appendingPathComponent("one.exr").path, "--json"])
        #expect(refused.status == 19 && refused.stdout.isEmpty && refused.stderr.contains("\"bracket-mismatch\""), "\(refused.stderr)")

        let report = try #require(try Self.validate(documents, in: dir))
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.contains("checked \(documents.count) invalid 0"), "\(report.stdout)")

        // One file and a batch: the same top-level keys; failures are entries with their error.
        func object(_ text: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        }
        let (a, b, c) = (try object(one.stdout), try object(failed.stdout), try object(batch.stdout))
        #expect(Set(a.keys) == Set(c.keys) && Set(a.keys) == Set(b.keys))
        let entries = try #require(c["files"] as? [[String: Any]])
        #expect(entries.map { $0["status"] as? String } == ["ok", "failed"])
        #expect(entries[1]["errorCategory"] as? String == "not-dng")
        #expect((try object(stdinInfo.stdout))["file"] as? String == "<stdin>")
        // The batch's failure is reported on stderr, not mixed into the document.
        #expect(batch.stderr.contains("b.dng") && !batch.stdout.contains("scenelinear: error"))
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/new/a.exr").path))
    }

    /// `-o -` writes the EXR to stdout, byte for byte the file `-o y.exr` writes; HDF5 to
    /// stdout and `-o -` with `--json` are usage errors; `-q` leaves stdout empty.
    @Test(.enabled(if: (try? CLI.binary) != nil || TestRequirement.toolsRequired))
    func standardStreamsAndQuiet() throws {
        let dir = TestData.temporaryDirectory("streams")
        defer { try? FileManager.default.removeItem(at: dir) }
        let chart = TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng").path
        let binary = try CLI.binary
        let piped = try TestData.run(binary, ["convert", chart, "-o", "-", "--exr-clip-mask"])
        #expect(piped.status == 0, "\(piped.stderr)")
        let file = dir.appendingPathComponent("y.exr").path
        let written = try TestData.run(binary, ["convert", chart, "-o", file, "--exr-clip-mask", "-q"])
        #expect(written.status == 0 && written.stdout.isEmpty, "\(written.stderr)")
        // ProcessResult decodes stdout as UTF-8; compare through a file written by a shell redirect instead.
        let redirected = dir.appendingPathComponent("z.exr").path
        let shell = try TestData.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "\"$0\" convert \"$1\" -o - --exr-clip-mask > \"$2\"", binary.path, chart, redirected])
        #expect(shell.status == 0, "\(shell.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: redirected)) == (try Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(try TestData.run(binary, ["convert", chart, "-o", "-", "--format", "hdf5"]).status == 64)
        #expect(try TestData.run(binary, ["convert", chart, "-o", "-", "--json"]).status == 64)
        let help = try TestData.run(binary, ["--help"]).stdout
        for code in ["10 input missing", "16 output cannot", "17 over a resource limit", "20 validate", "64 usage error"] {
            #expect(help.replacingOccurrences(of: "\n", with: " ").contains(code), "\(code)")
        }
        for code in ["19 frames that cannot be merged"] {
            #expect(help.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "  ", with: " ").contains(code), "\(code)")
        }
        for command in ["info", "convert", "merge", "illuminance", "stats", "histogram", "ratio", "report", "simulate", "validate",
                        "manifest", "testchart"] {
            #expect(try TestData.run(binary, [command, "--help"]).stdout.contains("-q, --quiet"), "\(command)")
        }
    }
}
