import Engine
import Foundation
import Synchronization

/// One line of a batch manifest (JSON Lines): what happened to one input.
public struct ManifestRecord: Codable, Sendable, Equatable {
    public struct Output: Codable, Sendable, Equatable {
        public var format: String
        public var path: String
        public var sha256: String
    }

    public var input: String
    public var inputSHA256: String
    public var outputs: [Output]
    /// "ok" or "error".
    public var status: String
    public var error: String?
    public var errorCategory: String?
    public var exitCode: Int32?
    public var software: String
    /// ISO 8601 UTC.
    public var finished: String
    public var shard: String?
}

/// Which part of a batch this process handles: inputs whose index (in sorted order) modulo
/// `count` equals `index`.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    public static let whole = Shard(index: 0, count: 1)

    /// Parses "i/n" (0 ≤ i < n).
    public static func parse(_ text: String) -> Shard? {
        let parts = text.split(separator: "/").compactMap { Int($0) }
        guard parts.count == 2, parts[1] >= 1, (0..<parts[1]).contains(parts[0]) else { return nil }
        return Shard(index: parts[0], count: parts[1])
    }

    /// From a Slurm job array: `SLURM_ARRAY_TASK_ID` (minus `SLURM_ARRAY_TASK_MIN`, default 0)
    /// of `SLURM_ARRAY_TASK_COUNT`; nil outside a job array.
    public static func fromSlurm(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Shard? {
        guard let id = environment["SLURM_ARRAY_TASK_ID"].flatMap(Int.init),
              let count = environment["SLURM_ARRAY_TASK_COUNT"].flatMap(Int.init), count >= 1 else { return nil }
        let minimum = environment["SLURM_ARRAY_TASK_MIN"].flatMap(Int.init) ?? 0
        let index = id - minimum
        return (0..<count).contains(index) ? Shard(index: index, count: count) : nil
    }

    public func contains(_ position: Int) -> Bool { position % count == index }

    public var description: String { "\(index)/\(count)" }

    /// The manifest file name of this shard.
    public var manifestName: String {
        count == 1 ? "scenelinear-manifest.jsonl" : "scenelinear-manifest.shard-\(index)-of-\(count).jsonl"
    }
}

/// What a batch conversion did.
public struct BatchSummary: Sendable {
    public var converted = 0
    public var skipped = 0
    public var failed: [ManifestRecord] = []
    public var manifest: String
    /// The most memory the files in flight together had reserved (their estimated peaks),
    /// never above `--max-memory` unless one file alone was allowed to run.
    public var peakReservedBytes = 0
}

/// Converts many DNGs into one output directory: outputs written atomically, a manifest
/// line appended (and flushed) after each file, resumable (inputs already converted, with
/// the same SHA-256 and outputs still matching theirs, are skipped), shardable across
/// processes or machines, and a failing file never stops the rest.
public struct BatchConverter: Sendable {
    public var develop = DevelopOptions()
    public var export = ExportOptions()
    public var formats: [OutputFormat] = [.exr]
    public var shard = Shard.whole
    /// Skip inputs whose manifest record says they were converted and still verify.
    public var resume = true

    public init() {}

    /// Converts `inputs` (already expanded and sorted) into `directory`.
    /// - Throws: `OutputError` when the directory is missing or the manifest cannot be written.
    public func run(_ inputs: [String], into directory: String,
                    progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil) throws -> BatchSummary {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw OutputError(path: directory, reason: "the output directory does not exist")
        }
        let dir = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        removeStalePartials(in: dir)
        let manifestPath = dir + "/" + shard.manifestName
        let previous = resume ? Self.readManifest(manifestPath) : [:]
        let mine = inputs.enumerated().filter { shard.contains($0.offset) }.map(\.element)
        let writer = try ManifestWriter(path: manifestPath)
        let counter = ProgressCounter(total: mine.count, report: progress)
        let summary = SummaryBox(manifest: manifestPath)
        let job = self
        // Files in flight together stay within --max-memory together, not each on its own.
        let budget = MemoryBudget(limit: Pipeline.memoryLimit(develop))
        _ = try? Parallel.map(mine.count) { i -> Int in
            defer { counter.step() }
            let input = mine[i]
            let stem = URL(fileURLWithPath: input).deletingPathExtension().lastPathComponent
            let targets = job.formats.map { ($0, dir + "/" + stem + "." + $0.fileExtension) }
            let sha = (try? FileBytes(path: input)).map { SHA256Digest.hex(of: $0.data) } ?? ""
            if let record = previous[input], record.status == "ok", record.inputSHA256 == sha, !sha.isEmpty,
               Set(record.outputs.map(\.path)) == Set(targets.map(\.1)), record.outputs.allSatisfy(Self.verify) {
                summary.skip()
                return 0
            }
            var record = ManifestRecord(input: input, inputSHA256: sha, outputs: [], status: "ok", error: nil, errorCategory: nil,
                                        exitCode: nil, software: SceneLinearVersion.software, finished: "",
                                        shard: job.shard.count > 1 ? job.shard.description : nil)
            do {
                try budget.withReservation(Pipeline.estimatedPeakBytes(path: input, options: job.develop)) {
                    // Half floats unless a value is beyond their range: then 32-bit floats.
                    try job.export.withFloatFallback { export in
                        if targets.count == 1 && !export.needsFloat(targets.map(\.0)) {
                            // One file: written as the rows are made.
                            _ = try Pipeline.convert(path: input, options: job.develop, format: targets[0].0, export: export,
                                                     to: targets[0].1)
                        } else {
                            // 32-bit outputs are written from the Float image, the others from the half one.
                            let image: any SceneLinearRaster = export.needsFloat(targets.map(\.0))
                                ? try Pipeline.develop(path: input, options: job.develop).image
                                : try Pipeline.developForExport(path: input, options: job.develop,
                                                                keepClipMask: export.needsClipMask(targets.map(\.0))).image
                            for (format, path) in targets {
                                try Pipeline.export(image, format: format, to: path, options: export)
                            }
                        }
                    }
                    for (format, path) in targets {
                        let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
                        record.outputs.append(.init(format: format.rawValue, path: path, sha256: SHA256Digest.hex(of: data)))
                    }
                }
            } catch {
                let failure = error as? any SceneLinearFailure
                record.status = "error"
                record.error = failure?.description ?? "\(error)"
                record.errorCategory = failure?.category.name ?? FailureCategory.internalError.name
                record.exitCode = failure?.category.exitCode ?? FailureCategory.internalError.exitCode
            }
            record.finished = Self.now()
            writer.append(record)
            if record.status == "ok" { summary.convert() } else { summary.fail(record) }
            return 0
        }
        try writer.close()
        var result = summary.result
        result.peakReservedBytes = budget.peakReserved
        return result
    }

    /// A record's output still exists and has the recorded digest.
    static func verify(_ output: ManifestRecord.Output) -> Bool {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: output.path), options: .alwaysMapped) else { return false }
        return SHA256Digest.hex(of: data) == output.sha256
    }

    /// Deletes temporary files left by an interrupted run (`.<name>.partial-…`).
    func removeStalePartials(in directory: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasPrefix(".") && name.contains(".partial-") {
            try? FileManager.default.removeItem(atPath: directory + "/" + name)
        }
    }

    /// The latest record per input of a manifest (unreadable lines are ignored: a line cut
    /// by a kill is simply redone).
    public static func readManifest(_ path: String) -> [String: ManifestRecord] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
        var out: [String: ManifestRecord] = [:]
        let decoder = JSONDecoder()
        for line in text.split(separator: "\n") {
            if let r = try? decoder.decode(ManifestRecord.self, from: Data(line.utf8)) { out[r.input] = r }
        }
        return out
    }

    /// Merges shard manifests (and any others) into one list, the latest record per input,
    /// sorted by input.
    public static func mergeManifests(_ paths: [String]) -> [ManifestRecord] {
        var all: [String: ManifestRecord] = [:]
        for p in paths {
            for (input, record) in readManifest(p) {
                if let existing = all[input], existing.finished > record.finished { continue }
                all[input] = record
            }
        }
        return all.values.sorted { $0.input < $1.input }
    }

    static func now() -> String {
        let f = ISO8601DateFormatter()
        f.timeZone = TimeZone(identifier: "UTC")
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: Date())
    }
}

/// Appends JSON lines to the manifest from any thread, flushing each to disk.
final class ManifestWriter: Sendable {
    /// The open manifest (nil once closed); a line is written under the lock, whole.
    private let handle: Mutex<FileHandle?>

    init(path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw OutputError(path: path, reason: "cannot create the manifest")
            }
        }
        guard let h = FileHandle(forWritingAtPath: path) else { throw OutputError(path: path, reason: "cannot open the manifest") }
        h.seekToEndOfFile()
        handle = Mutex(h)
    }

    func append(_ record: ManifestRecord) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var data = try? encoder.encode(record) else { return }
        data.append(0x0A)
        handle.withLock { h in
            h?.write(data)
            try? h?.synchronize()
        }
    }

    func close() throws {
        try handle.withLock { h in
            try h?.close()
            h = nil
        }
    }
}

/// Counters of a batch, from any thread.
final class SummaryBox: Sendable {
    private let summary: Mutex<BatchSummary>

    init(manifest: String) { summary = Mutex(BatchSummary(manifest: manifest)) }

    func convert() { summary.withLock { $0.converted += 1 } }
    func skip() { summary.withLock { $0.skipped += 1 } }
    func fail(_ r: ManifestRecord) { summary.withLock { $0.failed.append(r) } }

    var result: BatchSummary { summary.withLock { $0 } }
}
