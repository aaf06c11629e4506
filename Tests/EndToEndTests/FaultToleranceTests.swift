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

/// Batches at scale and faults: concurrent shards in one folder, job-array shapes, the
/// allocation's CPUs and memory, colliding names, full disks, files cut while read, extreme
/// arguments, unbounded input, repeated or foreign frames, NaN pixels, outputs over inputs,
/// signals (docs/robustness.md, docs/batch.md).
@Suite(.serialized) struct FaultToleranceTests {
    static func chart(_ path: String, width: Int = 320, height: Int = 240, shift: Int = 0) throws {
        var chart = try TestChart.make(width: width, height: height, tileSize: (128, 128))
        if shift != 0 { chart.dng.samples = chart.dng.samples.map { UInt16(min(4095, Int($0) + shift)) } }
        try DNGWriter.write(chart.dng, to: path)
    }

    /// This process's environment with `extra` set.
    static func environment(_ extra: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
    }

    static func partials(_ dir: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.contains(".partial-") }
    }

    // MARK: 1. concurrent shards, shared manifests, temporaries of live processes

    /// Four shards started at once into one folder, and two more batches sharing one
    /// manifest: every input converted, every record kept, no temporary left. (Each batch
    /// used to delete the others' temporaries when it started, and writers sharing a
    /// manifest overwrote each other's lines.)
    @Test func concurrentShardsLoseNothing() throws {
        let root = TestData.temporaryDirectory("shards")
        defer { try? FileManager.default.removeItem(at: root) }
        let input = root.appendingPathComponent("in"), out = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        for i in 0..<12 { try Self.chart(input.appendingPathComponent(String(format: "c%02d.dng", i)).path, width: 640, height: 480, shift: i) }
        let binary = try CLI.binary
        func start(_ arguments: [String]) throws -> Process {
            let p = Process()
            p.executableURL = binary
            p.arguments = arguments
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            p.environment = Self.environment(["SCENELINEAR_THREADS": "1"])
            try p.run()
            return p
        }
        let shards = try (0..<4).map { try start(["convert", input.path, "-o", out.path, "--shard", "\($0)/4", "-q"]) }
        for p in shards { p.waitUntilExit() }
        #expect(shards.allSatisfy { $0.terminationStatus == 0 }, "\(shards.map(\.terminationStatus))")
        let records = BatchConverter.readManifests(in: out.path)
        #expect(records.count == 12 && records.values.allSatisfy { $0.status == "ok" })
        #expect(Self.partials(out).isEmpty)
        // A whole batch afterwards resumes from the shards' manifests: nothing converted again.
        let whole = try CLI.run(["convert", input.path, "-o", out.path, "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(whole.stdout.utf8)) as? [String: Any])
        #expect(document["converted"] as? Int == 0 && document["skipped"] as? Int == 12, "\(whole.stdout)")

        // Two whole batches at once into a second folder: one manifest, every line kept.
        let shared = root.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        let both = try (0..<2).map { _ in try start(["convert", input.path, "-o", shared.path, "--no-resume", "-q"]) }
        for p in both { p.waitUntilExit() }
        let lines = try String(contentsOf: shared.appendingPathComponent("scenelinear-manifest.jsonl"), encoding: .utf8)
            .split(separator: "\n")
        #expect(lines.count == 24, "two batches of 12 share one manifest: \(lines.count) lines")
        #expect(lines.allSatisfy { (try? JSONDecoder().decode(ManifestRecord.self, from: Data($0.utf8))) != nil })
    }

    /// A batch removes only temporaries nobody will finish: those of this host whose process
    /// is gone. A live process's (another shard's) and another host's stay.
    @Test func onlyAbandonedTemporariesAreRemoved() throws {
        let dir = TestData.temporaryDirectory("partials")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let host = AtomicFile.hostName
        let names = [".a.exr.partial-\(host)-\(gone.processIdentifier)-12345",      // dead: removed
                     ".b.exr.partial-\(host)-\(getpid())-12345",                    // alive (this process): kept
                     ".c.exr.partial-other-host-\(gone.processIdentifier)-12345",  // another host: kept
                     "d.exr"]
        for n in names { FileManager.default.createFile(atPath: dir.appendingPathComponent(n).path, contents: Data()) }
        BatchConverter.removeAbandonedTemporaries(in: dir.path)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
        #expect(left == Set(names.dropFirst()), "\(left)")
        #expect(AtomicFile.temporaryName(for: "x.exr").hasPrefix(".x.exr.partial-\(host)-\(getpid())-"))
    }

    /// A temporary that vanished before its rename (another process removed it) is a
    /// retryable failure, exit 75, distinct from an output that cannot be written (16).
    @Test func vanishedTemporaryIsRetryable() throws {
        let dir = TestData.temporaryDirectory("vanished")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let target = dir.appendingPathComponent("x.exr").path
        #expect {
            try AtomicFile.write(to: target) { temporary in
                FileManager.default.createFile(atPath: temporary, contents: Data("x".utf8))
                unlink(temporary)  // what a batch removing others' temporaries used to do
            }
        } throws: { error in
            guard let e = error as? OutputError else { return false }
            return e.category == .temporaryFailure && e.category.exitCode == 75 && e.description.contains("vanished")
        }
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    /// The analysis commands are not sharded: in a job array each task would measure every
    /// file, and they say so.
    @Test func analysisInAJobArrayWarns() throws {
        let dir = TestData.temporaryDirectory("array-stats")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for i in 0..<2 { try Self.chart(dir.appendingPathComponent("c\(i).dng").path, shift: i) }
        let environment = Self.environment(["SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0",
                                            "SLURM_ARRAY_TASK_MAX": "3"])
        let r = try TestData.run(try CLI.binary, ["stats", dir.path, "--csv"], environment: environment)
        #expect(r.status == 0 && r.stderr.contains("every task of a job array measures every input"), "\(r.stderr)")
    }

    // MARK: 2. job-array shapes

    @Test func jobArrayShapes() throws {
        func shard(_ id: Int, count: Int, min: Int = 0, max: Int? = nil, step: Int? = nil) throws -> Shard? {
            var env = ["SLURM_ARRAY_TASK_ID": "\(id)", "SLURM_ARRAY_TASK_COUNT": "\(count)", "SLURM_ARRAY_TASK_MIN": "\(min)",
                       "SLURM_ARRAY_TASK_MAX": "\(max ?? (min + (count - 1) * (step ?? 1)))"]
            if let step { env["SLURM_ARRAY_TASK_STEP"] = "\(step)" }
            return try Shard.fromSlurm(env)
        }
        #expect(try Shard.fromSlurm([:]) == nil, "outside a job array")
        #expect(try shard(3, count: 8) == Shard(index: 3, count: 8), "--array=0-7")
        // --array=0-7:2: tasks 0, 2, 4, 6 are parts 0…3 of 4 (task 4 used to fall back to the whole batch).
        #expect(try (0..<4).map { try shard(2 * $0, count: 4, step: 2) } == (0..<4).map { Shard(index: $0, count: 4) })
        // Reruns and shapes that cannot say which part a task is: usage errors.
        for (id, count, min, max) in [(2, 2, 2, 3), (3, 2, 2, 3), (0, 1, 0, 0), (5, 8, 1, 8), (4, 3, 0, 5)] {
            #expect(throws: ShardError.self, "--array \(min)-\(max) of \(count)") { try shard(id, count: count, min: min, max: max) }
        }
        #expect(ShardError(reason: "x").category.exitCode == 64)
        // A job array of 2 into a folder written by a 4-part split: refused.
        let dir = TestData.temporaryDirectory("split")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: dir.appendingPathComponent("scenelinear-manifest.shard-1-of-4.jsonl").path, contents: Data())
        #expect(throws: ShardError.self) { try BatchConverter.checkSplit(Shard(index: 1, count: 2), against: dir.path) }
        try BatchConverter.checkSplit(Shard(index: 3, count: 4), against: dir.path)

        // Through the binary: --array=2,3 without --shard exits 64 and converts nothing.
        let input = dir.appendingPathComponent("a.dng").path
        try Self.chart(input)
        let environment = Self.environment(["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_ARRAY_TASK_MIN": "2",
                                            "SLURM_ARRAY_TASK_MAX": "3"])
        let r = try TestData.run(try CLI.binary, ["convert", input, dir.path + "/a.dng", "-o", dir.path + "/out/"], environment: environment)
        #expect(r.status == 64 && r.stderr.contains("--shard"), "\(r.status) \(r.stderr)")
    }

    // MARK: 3. the allocation

    @Test func allocationFromCgroupsAffinityAndSlurm() throws {
        let root = TestData.temporaryDirectory("cgroup")
        defer { try? FileManager.default.removeItem(at: root) }
        func write(_ path: String, _ text: String) throws {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        // cgroup v2: a 0.5-CPU quota and 512 MiB, set on the parent of the process's group.
        try write("proc/self/cgroup", "0::/job/step\n")
        try write("sys/fs/cgroup/job/cpu.max", "50000 100000\n")
        try write("sys/fs/cgroup/job/memory.max", "536870912\n")
        try write("sys/fs/cgroup/job/step/cpu.max", "max 100000\n")
        try write("sys/fs/cgroup/job/step/memory.max", "max\n")
        let v2 = Allocation.read(root: root.path, environment: [:], affinity: 2, physicalMemory: 24 << 30, processors: 2)
        #expect(v2.cpus == 1 && v2.memoryBytes == 512 << 20, "\(v2)")
        // Slurm's figures when they are the least.
        let slurm = Allocation.read(root: root.path, environment: ["SLURM_CPUS_PER_TASK": "1", "SLURM_MEM_PER_CPU": "300"],
                                    affinity: 2, physicalMemory: 24 << 30, processors: 2)
        #expect(slurm.memoryBytes == 300 << 20 && slurm.memorySource == "SLURM_MEM_PER_CPU")
        // cgroup v1 and an affinity mask of 3 CPUs on an 8-CPU machine.
        try write("proc/self/cgroup", "4:memory:/a\n2:cpu,cpuacct:/a\n")
        try write("sys/fs/cgroup/memory/a/memory.limit_in_bytes", "1073741824\n")
        try write("sys/fs/cgroup/cpu,cpuacct/a/cpu.cfs_quota_us", "250000\n")
        try write("sys/fs/cgroup/cpu,cpuacct/a/cpu.cfs_period_us", "100000\n")
        let v1 = Allocation.read(root: root.path, environment: [:], affinity: 3, physicalMemory: 24 << 30, processors: 8)
        #expect(v1.cpus == 3 && v1.cpuSource == "affinity mask" && v1.memoryBytes == 1 << 30, "\(v1)")
        let quota = Allocation.read(root: root.path, environment: [:], affinity: 8, physicalMemory: 24 << 30, processors: 8)
        #expect(quota.cpus == 3, "2.5 CPUs of quota round up to 3: \(quota)")
        // No limits anywhere: the machine.
        let none = Allocation.read(root: root.path + "/nothing", environment: [:], affinity: 0, physicalMemory: 8 << 30, processors: 4)
        #expect(none.cpus == 4 && none.memoryBytes == 8 << 30)
    }

    // MARK: 4. one name, two folders

    @Test func sameStemFromTwoFoldersIsRefused() throws {
        let root = TestData.temporaryDirectory("stems")
        defer { try? FileManager.default.removeItem(at: root) }
        for sub in ["a", "b"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(sub), withIntermediateDirectories: true)
            try Self.chart(root.appendingPathComponent("\(sub)/photo.dng").path, shift: sub == "a" ? 0 : 5)
        }
        let out = root.appendingPathComponent("out").path
        let r = try CLI.run(["convert", root.path + "/a/photo.dng", root.path + "/b/photo.dng", "-o", out + "/"])
        #expect(r.status == 64 && r.stderr.contains("a/photo.dng") && r.stderr.contains("b/photo.dng"), "\(r.status) \(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/photo.exr"))
    }

    // MARK: 6. a full disk under the manifest

    @Test func fullDiskUnderTheManifestIsAnError() throws {
        let root = TestData.temporaryDirectory("full")
        defer { try? FileManager.default.removeItem(at: root) }
        let out = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let inputs = [root.appendingPathComponent("x.dng").path, root.appendingPathComponent("y.dng").path]
        for (i, p) in inputs.enumerated() { try Self.chart(p, shift: i) }
        // Every write to /dev/full fails with ENOSPC, as on a full file system.
        try FileManager.default.createSymbolicLink(atPath: out.appendingPathComponent("scenelinear-manifest.jsonl").path,
                                                   withDestinationPath: "/dev/full")
        let r = try CLI.run(["convert"] + inputs + ["-o", out.path])
        #expect(r.status == 16, "exit \(r.status): \(r.stderr)")
        #expect(r.stderr.contains("manifest") && r.stderr.contains("No space left"), "\(r.stderr)")
        #expect(Self.partials(out).isEmpty)
        // With --json the error names the manifest and carries ENOSPC as a number.
        let json = try CLI.run(["convert"] + inputs + ["-o", out.path, "--json"])
        #expect(json.status == 16, "exit \(json.status): \(json.stderr)")
        let line = try #require(json.stderr.split(separator: "\n").last.map(String.init))
        let error = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(json.stderr)")
        #expect(error["systemError"] as? Int == Int(ENOSPC) && (error["file"] as? String)?.hasSuffix("scenelinear-manifest.jsonl") == true,
                "\(json.stderr)")
    }

    // MARK: 7. a file cut while it is read

    /// The file is truncated after it was opened and mapped: decoding reads zeros where its
    /// pages were (not SIGBUS) and the conversion reports it truncated, writing nothing.
    @Test func fileCutWhileReadIsTruncatedNotACrash() throws {
        ProcessGuard.install()
        let dir = TestData.temporaryDirectory("cut")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("cut.dng").path
        try Self.chart(path, width: 1024, height: 768)
        let dng = try DNGFile.open(path: path)
        #expect(truncate(path, off_t(dng.file.count / 3)) == 0)
        #expect {
            _ = try Pipeline.develop(dng)
        } throws: { error in
            guard let e = error as? ContainerError, case .shrankWhileReading = e else { return false }
            return e.category.exitCode == 12 && e.description.contains("cut.dng")
        }
        let output = dir.appendingPathComponent("cut.exr").path
        #expect(throws: (any Error).self) { _ = try Pipeline.convert(path: path, format: .exr, export: ExportOptions(), to: output) }
        #expect(!FileManager.default.fileExists(atPath: output) && Self.partials(dir).isEmpty)
    }

    // MARK: 8. extreme arguments

    @Test func extremeArgumentsAreUsageErrors() throws {
        let dir = TestData.temporaryDirectory("extreme")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let input = dir.appendingPathComponent("a.dng").path
        try Self.chart(input)
        let cases: [[String]] = [
            ["stats", input, "--region", "a=0,0,1e19,5"],
            ["ratio", input, "--region", "a=0,0,1e30,5", "--region", "b=0,0,5,5"],
            ["histogram", input, "--region", "a=-1e19,0,5,5"],
            ["report", input, "--region", "a=0,0,99999999999999999999,5", "-o", dir.path + "/r.html"],
            ["convert", input, "-o", dir.path + "/x.h5", "--analysis", "--region", "a=0,0,1e19,5"],
            ["calibrate", input, "--region", "a=0,0,1e19,5", "--luminance", "100", "-o", dir.path + "/c.json"],
            ["histogram", input, "--range=-1e30,1e30"],
            ["histogram", input, "--range=-1e9,1e9"],
            ["histogram", input, "--range=-1e7,1e7"],
            ["histogram", input, "--range=nan,1"],
            ["stats", input, "--region", "a=0,0,0.5,1.5"],
            ["stats", input, "--region", "a=5000,5000,6000,6000"],
            ["stats", input, "--threads", "9223372036854775807"],
            ["stats", input, "--threads", "0"],
        ]
        for arguments in cases {
            let r = try CLI.run(arguments)
            #expect(r.status == 64, "\(arguments): exit \(r.status) \(r.stderr)")
        }
        // A thread count from the environment beyond any machine is taken as the most used.
        let many = try TestData.run(try CLI.binary, ["stats", input, "-q"],
                                    environment: Self.environment(["SCENELINEAR_THREADS": "9223372036854775807"]))
        #expect(many.status == 0, "\(many.stderr)")
        // A seed beyond Int64 is recorded, not a crash.
        let seeded = try CLI.run(["simulate", "--seed", "18446744073709551615", "--size", "64x48", "-o", dir.path + "/sim", "-q"])
        #expect(seeded.status == 0, "\(seeded.stderr)")
        // Standard output on a full disk: exit 16, not a lost table with exit 0.
        let full = try TestData.run(URL(fileURLWithPath: "/bin/bash"), ["-c", "'\(try CLI.binary.path)' stats '\(input)' > /dev/full"])
        #expect(full.status == 16 && full.stderr.contains("standard output"), "\(full.status) \(full.stderr)")
    }

    // MARK: 9. unbounded work

    @Test func unboundedInputsAreRefused() throws {
        let dir = TestData.temporaryDirectory("unbounded")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        // A FIFO is refused before it is opened (opening would wait for a writer for ever).
        let fifo = dir.appendingPathComponent("pipe.dng").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let fifoEXR = dir.appendingPathComponent("pipe.exr").path, fifoH5 = dir.appendingPathComponent("pipe.h5").path
        #expect(mkfifo(fifoEXR, 0o644) == 0 && mkfifo(fifoH5, 0o644) == 0)
        for command in [["info", fifo], ["convert", fifo, "-o", dir.path + "/f.exr"], ["stats", fifo], ["stats", fifoEXR],
                        ["stats", fifoH5]] {
            let r = try CLI.run(command)
            #expect(r.status == 10 && r.stderr.contains("FIFO"), "\(command): \(r.status) \(r.stderr)")
        }
        // Standard input is read up to a limit (an endless one here: /dev/zero).
        let r = try TestData.run(URL(fileURLWithPath: "/bin/bash"), ["-c", "'\(try CLI.binary.path)' info - --max-memory 1M < /dev/zero"])
        #expect(r.status == 17 && r.stderr.contains("standard input"), "\(r.status) \(r.stderr)")
        // --verify-digest decodes under the same limits as convert.
        let input = dir.appendingPathComponent("a.dng").path
        try Self.chart(input)
        let limited = try CLI.run(["info", input, "--verify-digest", "--max-pixels", "1000"])
        #expect(limited.status == 17 && limited.stderr.contains("--max-pixels"), "\(limited.status) \(limited.stderr)")
    }

    // MARK: 10. merge: digests, repeated frames, another scene

    @Test func mergeRefusesDamagedRepeatedAndForeignFrames() throws {
        let dir = TestData.temporaryDirectory("merge-faults")
        defer { try? FileManager.default.removeItem(at: dir) }
        let frames = try MergeCommandTests.simulate(dir)
        // A frame given twice, or a copy of it: refused (its noise would count twice).
        let copy = dir.appendingPathComponent("copy.dng").path
        try FileManager.default.copyItem(atPath: frames[1], toPath: copy)
        for list in [[frames[0], frames[1], frames[1]], [frames[0], frames[1], copy]] {
            let r = try CLI.run(["merge"] + list + ["-o", dir.path + "/m.exr"])
            #expect(r.status == 19 && r.stderr.contains("same bytes"), "\(r.status) \(r.stderr)")
        }
        // A frame of another scene (same camera and size): refused as disagreeing beyond noise.
        let other = dir.appendingPathComponent("other")
        let made = try CLI.run(["simulate", "--scene", "sunset", "--size", "256x192", "--bracket", "0", "-o", other.path, "-q"])
        try #require(made.status == 0, "\(made.stderr)")
        let foreign = try #require(try FileManager.default.contentsOfDirectory(atPath: other.path).first { $0.hasSuffix(".dng") })
        let chimera = try CLI.run(["merge", frames[0], frames[1], other.path + "/" + foreign, "-o", dir.path + "/m.exr"])
        #expect(chimera.status == 19 && chimera.stderr.contains("differ beyond their noise"), "\(chimera.status) \(chimera.stderr)")
        // A frame whose raw data do not match its digest: refused as convert refuses it.
        let damaged = dir.appendingPathComponent("damaged.dng").path
        try FileManager.default.copyItem(atPath: frames[2], toPath: damaged)
        let convert = try CLI.run(["convert", damaged, "-o", dir.path + "/d.exr"])
        // The recorded NewRawImageDigest changed: the data decode as before, the digest does not match.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: damaged))
        let entry = try #require(try DNGFile.open(path: damaged).structure.ifds[0].entry(51111))
        for i in entry.valueOffset..<(entry.valueOffset + 16) { bytes[i] ^= 0xFF }
        try bytes.write(to: URL(fileURLWithPath: damaged))
        let refusedByConvert = try CLI.run(["convert", damaged, "-o", dir.path + "/d2.exr"])
        #expect(convert.status == 0 && refusedByConvert.status == 13, "\(refusedByConvert.stderr)")
        let merged = try CLI.run(["merge", frames[0], frames[1], damaged, "-o", dir.path + "/m.exr"])
        #expect(merged.status == 13 && merged.stderr.contains("damaged.dng"), "\(merged.status) \(merged.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/m.exr"))
        // The frames' digests are reported.
        let ok = try CLI.run(["merge"] + frames + ["-o", dir.path + "/m.exr", "--json"])
        #expect(ok.status == 0 && ok.stdout.contains("\"digest\" : \"verified\""), "\(ok.stderr)")
    }

    // MARK: 11. NaN and infinity in another program's file

    @Test func nonFinitePixelsAreCountedAndLeftOut() throws {
        let dir = TestData.temporaryDirectory("nan")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let input = dir.appendingPathComponent("a.dng").path
        try Self.chart(input)
        let clean = dir.appendingPathComponent("clean.exr").path, dirty = dir.appendingPathComponent("dirty.exr").path
        try #require(try CLI.run(["convert", input, "-o", clean, "--exr-type", "float", "-q"]).status == 0)
        // Another program puts NaN in rows 0–39 and +inf in rows 40–49 of columns 0–99.
        let edit = try TestData.runPython("""
            import sys, OpenEXR, numpy as np
            f = OpenEXR.File(sys.argv[1]); ch = f.channels(); rgb = ch['RGB'].pixels.copy()
            rgb[0:40, 0:100, :] = np.nan; rgb[40:50, 0:100, :] = np.inf
            ch['RGB'].pixels = rgb
            OpenEXR.File(f.header(), ch).write(sys.argv[2])
            """, [clean, dirty])
        try #require(edit.status == 0, "\(edit.stderr)")
        let region = ["--region", "a=0,0,100,200"]
        let expected = try CLI.run(["stats", clean, "--region", "a=50,0,100,100", "--region", "b=0,100,100,200", "--json"])
        let r = try CLI.run(["stats", dirty] + region + ["--json"])
        try #require(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains("\"nan\"") && !r.stdout.contains("\"inf\""))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let regions = try #require(((json["files"] as? [[String: Any]])?.first?["regions"]) as? [[String: Any]])
        #expect(regions.first?["nonFinitePixels"] as? Int == 5000)
        let m = try #require(regions.first?["measurement"] as? [String: Any])
        #expect(m["pixels"] as? Int == 15000, "the finite pixels alone")
        // Its mean is the pixel-weighted mean of the two finite parts measured on the clean file.
        let parts = try #require(try JSONSerialization.jsonObject(with: Data(expected.stdout.utf8)) as? [String: Any])
        let partRegions = try #require(((parts["files"] as? [[String: Any]])?.first?["regions"]) as? [[String: Any]])
        func meanY(_ r: [String: Any]) -> Double? {
            (((r["measurement"] as? [String: Any])?["channels"] as? [String: Any])?["Y"] as? [String: Any])?["mean"] as? Double
        }
        let a = try #require(meanY(partRegions[0])), b = try #require(meanY(partRegions[1])), y = try #require(meanY(regions[0]))
        #expect(abs(y - (5000 * a + 10000 * b) / 15000) < 1e-6 * abs(y), "\(y) vs \(a), \(b)")
        let text = try CLI.run(["stats", dirty] + region)
        #expect(text.stdout.contains("5000 NaN or infinite pixels left out"), "\(text.stdout)")
        let all = try CLI.run(["stats", dirty, "--region", "z=0,0,40,100"])
        #expect(all.status == 13 && all.stderr.contains("NaN or infinite"), "\(all.status) \(all.stderr)")
    }

    @Test func circleOutsideTheImageIsAUsageError() throws {
        let dir = TestData.temporaryDirectory("circle")
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = try CLI.run(["simulate", "--scene", "sky-dome", "--size", "128x128", "-o", dir.path, "-q"])
        try #require(made.status == 0, "\(made.stderr)")
        let r = try CLI.run(["illuminance", dir.path + "/sky-dome.dng", "--projection", "equisolid", "--circle", "5000,5000,10"])
        #expect(r.status == 64 && r.stderr.contains("no pixel inside"), "\(r.status) \(r.stderr)")
        for circle in ["64,64,1e19", "64,64,1e6"] {
            let huge = try CLI.run(["illuminance", dir.path + "/sky-dome.dng", "--projection", "equidistant", "--circle", circle,
                                    "-o", dir.path + "/sky.hdr"])
            #expect(huge.status == 64, "\(circle): \(huge.status) \(huge.stderr)")
        }
    }

    // MARK: 12. outputs over inputs and other programs' files

    @Test func outputsNeverReplaceInputsOrForeignFiles() throws {
        let dir = TestData.temporaryDirectory("overwrite")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let input = dir.appendingPathComponent("photo.dng").path
        try Self.chart(input)
        let before = try Data(contentsOf: URL(fileURLWithPath: input))
        let calibrate = try CLI.run(["calibrate", input, "--region", "a=10%,10%,20%,20%", "--luminance", "100", "-o", input])
        #expect(calibrate.status == 64 && calibrate.stderr.contains("input"), "\(calibrate.status) \(calibrate.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == before, "the input is untouched")
        // Another program's file: refused without --overwrite, replaced with it.
        let foreign = dir.appendingPathComponent("photo.exr").path
        try Data("another program's picture".utf8).write(to: URL(fileURLWithPath: foreign))
        let refused = try CLI.run(["convert", input, "-o", foreign])
        #expect(refused.status == 64 && refused.stderr.contains("--overwrite"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: foreign, encoding: .utf8) == "another program's picture")
        #expect(try CLI.run(["convert", input, "-o", foreign, "--overwrite", "-q"]).status == 0)
        // Our own file is replaced without asking (a re-run); a read-only one is not.
        #expect(try CLI.run(["convert", input, "-o", foreign, "-q"]).status == 0)
        chmod(foreign, 0o444)
        let readOnly = try CLI.run(["convert", input, "-o", foreign, "-q"])
        #expect(readOnly.status == 64 && readOnly.stderr.contains("read-only"), "\(readOnly.stderr)")
        // A symbolic link: refused; with --overwrite the link is replaced and its target kept.
        let target = dir.appendingPathComponent("target.txt").path, link = dir.appendingPathComponent("link.exr").path
        try Data("kept".utf8).write(to: URL(fileURLWithPath: target))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(try CLI.run(["convert", input, "-o", link, "-q"]).status == 64)
        #expect(try CLI.run(["convert", input, "-o", link, "-q", "--overwrite"]).status == 0)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "kept")
    }

    // MARK: 13. signals

    /// SIGTERM while the EXR is being written: exit 143, no temporary left.
    @Test func sigtermRemovesTheTemporary() throws {
        let dir = TestData.temporaryDirectory("sigterm")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let input = dir.appendingPathComponent("big.dng").path
        try Self.chart(input, width: 4032, height: 3024)
        let p = Process()
        p.executableURL = try CLI.binary
        p.arguments = ["convert", input, "-o", dir.appendingPathComponent("big.exr").path, "-q"]
        p.environment = Self.environment(["SCENELINEAR_THREADS": "1"])
        try p.run()
        let deadline = Date().addingTimeInterval(60)
        while Self.partials(dir).isEmpty && p.isRunning && Date() < deadline { usleep(2_000) }
        let sawTemporary = !Self.partials(dir).isEmpty
        p.terminate()
        p.waitUntilExit()
        #expect(sawTemporary, "the conversion wrote its temporary before it was stopped")
        #expect(p.terminationReason == .exit && p.terminationStatus == 143, "\(p.terminationReason) \(p.terminationStatus)")
        #expect(Self.partials(dir).isEmpty && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("big.exr").path))
    }

    /// `convert -o - | head -c 100`: SIGPIPE ends it with 141 and its temporary in $TMPDIR goes too.
    @Test func brokenPipeRemovesTheTemporary() throws {
        let dir = TestData.temporaryDirectory("sigpipe")
        defer { try? FileManager.default.removeItem(at: dir) }
        let tmp = dir.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        let input = dir.appendingPathComponent("a.dng").path
        try Self.chart(input, width: 1024, height: 768)
        let script = "TMPDIR='\(tmp.path)' '\(try CLI.binary.path)' convert '\(input)' -o - | head -c 100 > /dev/null; echo ${PIPESTATUS[0]}"
        let r = try TestData.run(URL(fileURLWithPath: "/bin/bash"), ["-c", script])
        #expect(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "141", "\(r.stdout) \(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path).isEmpty)
    }
}
