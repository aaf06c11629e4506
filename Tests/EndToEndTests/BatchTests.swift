import Foundation
import Testing
import DNGWriter
@testable import Batching
@testable import Engine
@testable import Measuring
@testable import Reporting
import SceneLinearKit
@testable import SimulationCheck
import TestSupport

/// Batch conversion: manifests, resuming, sharding, and surviving a kill.
@Suite(.serialized) struct BatchTests {
    static func makeInputs(_ dir: URL, count: Int, size: (Int, Int) = (320, 240)) throws -> [String] {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var paths: [String] = []
        for i in 0..<count {
            var chart = try TestChart.make(width: size.0, height: size.1, tileSize: (128, 128))
            // Different files: shift the codes a little per file.
            chart.dng.samples = chart.dng.samples.map { UInt16(min(4095, Int($0) + i)) }
            let path = dir.appendingPathComponent(String(format: "f%02d.dng", i)).path
            try DNGWriter.write(chart.dng, to: path)
            paths.append(path)
        }
        return paths
    }

    /// Files in flight together stay within --max-memory together: with a budget that one
    /// file's estimated peak fits and two do not, the batch converts every file, one at a
    /// time; with a budget for two, never more than two.
    @Test func batchMemoryBudgetBoundsTheFilesInFlight() throws {
        let root = TestData.temporaryDirectory("batch-budget")
        defer { try? FileManager.default.removeItem(at: root) }
        let inputs = try Self.makeInputs(root.appendingPathComponent("in"), count: 6, size: (640, 480))
        let estimate = Pipeline.estimatedFileBytes(path: inputs[0], options: DevelopOptions(), route: .streamedEXR)
        #expect(estimate == Int(Double(640 * 480) * 1.6 + Double(20 << 20)), "LinearRaw, 12-bit, one EXR written as its rows are made")
        #expect(Pipeline.estimatedPeakBytes(path: inputs[0], options: DevelopOptions(), route: .streamedEXR)
                == estimate + Pipeline.processBaseBytes)
        for (files, name) in [(1, "one"), (2, "two")] {
            let out = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            var batch = BatchConverter()
            // The process's base counts once; the files in flight share the rest.
            batch.develop.maxMemoryBytes = Pipeline.processBaseBytes + files * estimate + estimate / 2
            let summary = try Parallel.withThreadCount(4) { try batch.run(inputs, into: out.path) }
            #expect(summary.converted == 6 && summary.failed.isEmpty)
            #expect(summary.peakReservedBytes <= files * estimate && summary.peakReservedBytes >= estimate,
                    "\(name): \(summary.peakReservedBytes) bytes reserved at once, \(estimate) per file")
        }
    }

    /// The analysis commands' batches share the budget the same way: never more files
    /// measured at once than fit together, and every file measured.
    @Test func analysisBatchMemoryBudget() throws {
        let root = TestData.temporaryDirectory("analysis-budget")
        defer { try? FileManager.default.removeItem(at: root) }
        let inputs = try Self.makeInputs(root.appendingPathComponent("in"), count: 6, size: (640, 480))
        let estimate = Pipeline.estimatedFileBytes(path: inputs[0], options: DevelopOptions(), route: .measurement)
        for files in [1, 2] {
            let budget = MemoryBudget(limit: files * estimate + estimate / 2)
            let results = Parallel.withThreadCount(4) { Pipeline.analyze(inputs, request: AnalysisRequest(), budget: budget) }
            #expect(results.count == 6 && results.allSatisfy { $0.error == nil && $0.regions.first?.measurement.pixels == 640 * 480 })
            #expect(budget.peakReserved <= files * estimate && budget.peakReserved >= estimate,
                    "\(files): \(budget.peakReserved) bytes reserved at once, \(estimate) per file")
        }
    }

    @Test func resumeSkipsVerifiedWorkAndRedoesDamagedOutputs() throws {
        let root = TestData.temporaryDirectory("batch")
        defer { try? FileManager.default.removeItem(at: root) }
        let inputs = try Self.makeInputs(root.appendingPathComponent("in"), count: 4)
        let out = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        var batch = BatchConverter()
        batch.formats = [.exr, .hdf5]
        let first = try batch.run(inputs, into: out.path)
        #expect(first.converted == 4 && first.skipped == 0 && first.failed.isEmpty)
        let second = try batch.run(inputs, into: out.path)
        #expect(second.converted == 0 && second.skipped == 4)
        // Damage one output: it is redone, the rest skipped.
        let damaged = out.appendingPathComponent("f02.exr").path
        try Data("not an exr".utf8).write(to: URL(fileURLWithPath: damaged))
        let third = try batch.run(inputs, into: out.path)
        #expect(third.converted == 1 && third.skipped == 3)
        #expect(try EXRFile.readSceneLinear(damaged).width == 320)
        let records = BatchConverter.readManifest(first.manifest)
        #expect(records.count == 4 && records.values.allSatisfy { $0.status == "ok" && $0.outputs.count == 2 })
    }

    /// A batch's Radiance picture with lower bounds: its mask is recorded in the manifest
    /// (with its SHA-256 and the picture it belongs to) and listed in the JSON; a rerun skips
    /// the file while both verify, and converts it again when the mask is gone.
    @Test func radianceMasksAreRecordedOutputs() throws {
        let root = TestData.temporaryDirectory("batch-hdr")
        defer { try? FileManager.default.removeItem(at: root) }
        let input = root.appendingPathComponent("in"), out = root.appendingPathComponent("out")
        try #require(try CLI.run(["simulate", "--scene", "sky-dome", "--size", "256x256", "-o", input.path, "-q"]).status == 0)
        let convert = ["convert", input.path, "-o", out.path + "/", "--format", "hdr", "--units", "luminance", "--json"]
        let first = try CLI.run(convert)
        try #require(first.status == 0, "\(first.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any])
        let outputs = try #require((doc["files"] as? [[String: Any]])?.first?["outputs"] as? [[String: Any]])
        let picture = out.appendingPathComponent("sky-dome.hdr").path, mask = out.appendingPathComponent("sky-dome.clip.hdr").path
        #expect(outputs.map { $0["path"] as? String } == [picture, mask])
        #expect((outputs[0]["lowerBounds"] as? [String: Any])?["mask"] as? String == mask && outputs[1]["maskOf"] as? String == picture)
        #expect(outputs.allSatisfy { ($0["sha256"] as? String)?.count == 64 })
        #expect(first.stderr.contains("warning: \(picture) holds"), "\(first.stderr)")
        func count(_ key: String) throws -> Int? {
            let r = try CLI.run(convert)
            try #require(r.status == 0, "\(r.stderr)")
            return (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])?[key] as? Int
        }
        #expect(try count("skipped") == 1)
        try FileManager.default.removeItem(atPath: mask)
        #expect(try count("converted") == 1)
        #expect(FileManager.default.fileExists(atPath: mask))
    }

    @Test func shardsCoverEveryInputOnceAndMerge() throws {
        let root = TestData.temporaryDirectory("shards")
        defer { try? FileManager.default.removeItem(at: root) }
        let inputs = try Self.makeInputs(root.appendingPathComponent("in"), count: 5)
        let out = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        var manifests: [String] = []
        var total = 0
        for i in 0..<3 {
            var batch = BatchConverter()
            batch.shard = Shard(index: i, count: 3)
            let summary = try batch.run(inputs, into: out.path)
            total += summary.converted
            manifests.append(summary.manifest)
        }
        #expect(total == 5)
        let merged = BatchConverter.mergeManifests(manifests)
        #expect(merged.map(\.input) == inputs.sorted())
        #expect(try Shard.fromSlurm(["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0"]) == Shard(index: 2, count: 4))
        #expect(try Shard.fromSlurm([:]) == nil)
        #expect(Shard.parse("2/2") == nil && Shard.parse("1/2") == Shard(index: 1, count: 2))
    }

    /// Kill a batch mid-run (SIGKILL), run it again: every output is complete and correct,
    /// none is duplicated, no temporary file is left.
    @Test func killedBatchResumesToACorrectResult() throws {
        let binary = try CLI.binary
        let root = TestData.temporaryDirectory("kill")
        defer { try? FileManager.default.removeItem(at: root) }
        let inputs = try Self.makeInputs(root.appendingPathComponent("in"), count: 8, size: (1024, 768))
        let out = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let manifest = out.appendingPathComponent("scenelinear-manifest.jsonl").path
        let process = Process()
        process.executableURL = binary
        process.arguments = ["convert", root.appendingPathComponent("in").path, "-o", out.path, "--format", "exr,hdf5"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait for the first finished file, then kill without warning.
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: manifest, encoding: .utf8), text.contains("\n") { break }
            usleep(20_000)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let doneBefore = BatchConverter.readManifest(manifest).count
        #expect(doneBefore >= 1 && doneBefore < inputs.count, "killed after \(doneBefore) of \(inputs.count)")

        let again = try CLI.run(["convert", root.appendingPathComponent("in").path, "-o", out.path, "--format", "exr,hdf5"])
        #expect(again.status == 0, "\(again.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(!names.contains { $0.contains(".partial-") }, "\(names)")
        #expect(names.filter { $0.hasSuffix(".exr") }.count == inputs.count)
        #expect(names.filter { $0.hasSuffix(".h5") }.count == inputs.count)
        let records = BatchConverter.readManifest(manifest)
        #expect(records.count == inputs.count && records.values.allSatisfy { $0.status == "ok" })
        // Every output equals a fresh conversion of its input.
        for input in inputs {
            let stem = URL(fileURLWithPath: input).deletingPathExtension().lastPathComponent
            let fresh = try Pipeline.develop(path: input).image
            let exr = try EXRFile.readSceneLinear(out.appendingPathComponent(stem + ".exr").path)
            let h5 = try HDF5File.readSceneLinear(out.appendingPathComponent(stem + ".h5").path)
            let expected = fresh.pixels.samples.map(Float16.init)
            #expect(exr.pixels.samples.map(Float16.init) == expected, "\(stem).exr")
            #expect(h5.pixels.samples.map(Float16.init) == expected, "\(stem).h5")
        }
    }
}
