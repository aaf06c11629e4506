import Engine
import Foundation
import Synchronization

/// One line of a batch manifest (JSON Lines): what happened to one input.
public struct ManifestRecord: Codable, Sendable, Equatable {
    public struct Output: Codable, Sendable, Equatable {
        public var format: String
        public var path: String
        public var sha256: String
        /// A Radiance picture's lower bounds (`RadianceLowerBounds`); nil for other formats.
        public var lowerBounds: RadianceLowerBounds?
        /// For a picture's lower-bound mask: the picture it belongs to.
        public var maskOf: String?

        public init(format: String, path: String, sha256: String, lowerBounds: RadianceLowerBounds? = nil, maskOf: String? = nil) {
            self.format = format
            self.path = path
            self.sha256 = sha256
            self.lowerBounds = lowerBounds
            self.maskOf = maskOf
        }
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

    /// From a Slurm job array, or nil outside one. The array must be the whole split as
    /// submitted: indices 0, s, 2s, … (`--array=0-15`, `--array=0-14:2`), task i·s being
    /// shard i of `SLURM_ARRAY_TASK_COUNT`. Any other shape — one not starting at 0
    /// (`--array=1-8`), a list of reruns (`--array=2,3`), irregular steps, a single task —
    /// cannot tell which part of the batch a task is: refused, pointing to `--shard`.
    /// - Throws: `ShardError` (usage) for an array whose shape cannot be mapped.
    public static func fromSlurm(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Shard? {
        guard let idText = environment["SLURM_ARRAY_TASK_ID"] else { return nil }
        func number(_ key: String) -> Int? { environment[key].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } }
        guard let id = Int(idText), let count = number("SLURM_ARRAY_TASK_COUNT"), count >= 1 else {
            throw ShardError(reason: "SLURM_ARRAY_TASK_ID is \(idText) but SLURM_ARRAY_TASK_COUNT is \(environment["SLURM_ARRAY_TASK_COUNT"] ?? "unset")")
        }
        let minimum = number("SLURM_ARRAY_TASK_MIN") ?? 0
        let maximum = number("SLURM_ARRAY_TASK_MAX") ?? (minimum + count - 1)
        let step = number("SLURM_ARRAY_TASK_STEP") ?? 1
        let shape = "the job array \(minimum)-\(maximum) (\(count) task\(count == 1 ? "" : "s"), step \(step))"
        guard count >= 2 else {
            throw ShardError(reason: "\(shape) has one task: it cannot tell which part of the batch it is (a rerun of one index?)")
        }
        guard minimum == 0 else {
            throw ShardError(reason: "\(shape) does not start at 0: its tasks cannot tell which part of the batch they are (a rerun of some indices?)")
        }
        guard step >= 1, maximum == (count - 1) * step, id % step == 0, (0..<count).contains(id / step) else {
            throw ShardError(reason: "\(shape) is not evenly spaced from 0: its tasks cannot tell which part of the batch they are")
        }
        return Shard(index: id / step, count: count)
    }

    public func contains(_ position: Int) -> Bool { position % count == index }

    public var description: String { "\(index)/\(count)" }

    /// The manifest file name of this shard.
    public var manifestName: String {
        count == 1 ? "scenelinear-manifest.jsonl" : "scenelinear-manifest.shard-\(index)-of-\(count).jsonl"
    }
}

/// A job-array shape, or a batch of inputs, that cannot be split without losing or
/// repeating files.
public struct ShardError: SceneLinearFailure, Equatable {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var category: FailureCategory { .usage }
    public var description: String {
        "\(reason); give the shard explicitly, e.g. --shard ${SLURM_ARRAY_TASK_ID}/N with N the number of parts of the whole batch (docs/batch.md)"
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
    /// - Throws: `OutputError` when the directory is missing or the manifest cannot be
    ///   written; `ShardError` (usage) when two inputs would write the same output, or a
    ///   shard taken from a job array does not fit the split the directory's manifests record.
    public func run(_ inputs: [String], into directory: String,
                    progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil) throws -> BatchSummary {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw OutputError(path: directory, reason: "the output directory does not exist")
        }
        let dir = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        // Every shard sees every input: a collision is refused the same way by all of them.
        let targetsOf = try Self.outputTargets(inputs, formats: formats, directory: dir)
        if shardFromJobArray { try Self.checkSplit(shard, against: dir) }
        Self.removeAbandonedTemporaries(in: dir)
        let manifestPath = dir + "/" + shard.manifestName
        // Done is decided from every manifest in the directory: another shard's, another
        // split's, an earlier single run's.
        let previous = Self.readManifests(in: dir)
        // What a manifest records as written here may be replaced, damaged or not.
        OverwritePolicy.trustRecordedOutputs(previous.values.filter { $0.status == "ok" }.flatMap { $0.outputs.map(\.path) })
        let mine = inputs.enumerated().filter { shard.contains($0.offset) }.map(\.element)
        let writer = try ManifestWriter(path: manifestPath)
        let counter = ProgressCounter(total: mine.count, report: progress)
        let summary = SummaryBox(manifest: manifestPath)
        let job = self
        // Files in flight together stay within --max-memory together, not each on its own.
        // The process's own base is counted once, not per file.
        let budget = MemoryBudget(limit: Pipeline.memoryLimit(develop) - Pipeline.processBaseBytes)
        _ = try? Parallel.map(mine.count) { i -> Int in
            defer { counter.step() }
            let input = mine[i]
            let targets = targetsOf[input] ?? []
            let sha = (try? FileBytes(path: input)).map { SHA256Digest.hex(of: $0.data) } ?? ""
            if job.resume, let record = previous[input], record.status == "ok", record.inputSHA256 == sha, !sha.isEmpty,
               Set(record.outputs.filter { $0.maskOf == nil }.map(\.path)) == Set(targets.map(\.1)), record.outputs.allSatisfy(Self.verify) {
                summary.skip()
                return 0
            }
            var record = job.convert(input, sha: sha, targets: targets, budget: budget)
            record.finished = Self.now()
            do {
                try writer.append(record)
            } catch {
                summary.manifestFailed(error)
            }
            if record.status == "ok" { summary.convert() } else { summary.fail(record) }
            return 0
        }
        try writer.close()
        if let failure = summary.manifestFailure { throw failure }
        var result = summary.result
        result.peakReservedBytes = budget.peakReserved
        return result
    }

    /// Whether `shard` came from a Slurm job array (not `--shard`): then it is checked
    /// against the split the directory's shard manifests record.
    public var shardFromJobArray = false

    /// One input converted into its targets: the manifest record (status, outputs with
    /// their SHA-256, or the error).
    func convert(_ input: String, sha: String, targets: [(OutputFormat, String)], budget: MemoryBudget) -> ManifestRecord {
        var record = ManifestRecord(input: input, inputSHA256: sha, outputs: [], status: "ok", error: nil, errorCategory: nil,
                                    exitCode: nil, software: SceneLinearVersion.software, finished: "",
                                    shard: shard.count > 1 ? shard.description : nil)
        do {
            try budget.withReservation(Pipeline.estimatedFileBytes(path: input, options: develop, targets: targets, export: export)) {
                // Half floats unless a value is beyond their range: then 32-bit floats.
                let lowerBounds = try export.withFloatFallback { export in
                    try Pipeline.convert(path: input, options: develop, targets: targets, export: export).lowerBounds
                }
                for (format, path) in targets {
                    let bounds = lowerBounds[path]
                    record.outputs.append(.init(format: format.rawValue, path: path, sha256: try Self.digest(path), lowerBounds: bounds))
                    if let mask = bounds?.mask {
                        record.outputs.append(.init(format: format.rawValue, path: mask, sha256: try Self.digest(mask), maskOf: path))
                    }
                }
            }
        } catch {
            let failure = error as? any SceneLinearFailure
            record.status = "error"
            record.error = failure?.description ?? "\(error)"
            record.errorCategory = failure?.category.name ?? FailureCategory.internalError.name
            record.exitCode = failure?.category.exitCode ?? FailureCategory.internalError.exitCode
        }
        return record
    }

    /// Each input's output paths (`<directory>/<stem>.<extension>` per format).
    /// - Throws: `ShardError` (usage) when two inputs share a stem (`a/photo.dng` and
    ///   `b/photo.dng`): one would overwrite the other.
    static func outputTargets(_ inputs: [String], formats: [OutputFormat], directory: String) throws -> [String: [(OutputFormat, String)]] {
        var byStem: [String: String] = [:]
        var out: [String: [(OutputFormat, String)]] = [:]
        for input in inputs {
            let stem = URL(fileURLWithPath: input).deletingPathExtension().lastPathComponent
            if let other = byStem[stem], other != input {
                throw ShardError(reason: "\(other) and \(input) would both be written as \(directory)/\(stem).*: convert inputs with the same name into separate output directories")
            }
            byStem[stem] = input
            out[input] = formats.map { ($0, directory + "/" + stem + "." + $0.fileExtension) }
        }
        return out
    }

    /// Refuses a job-array shard whose count differs from the split the directory's shard
    /// manifests were written by (a rerun of some indices submitted as a smaller array).
    static func checkSplit(_ shard: Shard, against directory: String) throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where name.hasPrefix("scenelinear-manifest.shard-") && name.hasSuffix(".jsonl") {
            let parts = name.dropFirst("scenelinear-manifest.shard-".count).dropLast(".jsonl".count).components(separatedBy: "-of-")
            if parts.count == 2, let n = Int(parts[1]), n != shard.count {
                throw ShardError(reason: "this job array maps its task \(shard.index) to part \(shard.description), but \(directory) holds \(name) of a \(n)-part split (a rerun of some indices?)")
            }
        }
    }

    /// The SHA-256 of a file just written.
    /// - Throws: the reader's errors, or `ContainerError` when it shrank while being read.
    static func digest(_ path: String) throws -> String {
        let written = try FileBytes(path: path)
        let digest = SHA256Digest.hex(of: written.data)
        try written.checkIntact()
        return digest
    }

    /// A record's output still exists and has the recorded digest.
    static func verify(_ output: ManifestRecord.Output) -> Bool {
        guard let file = try? FileBytes(path: output.path) else { return false }
        let digest = SHA256Digest.hex(of: file.data)
        return (try? file.checkIntact()) != nil && digest == output.sha256
    }

    /// Deletes the temporary files of interrupted runs: those of this host whose process is
    /// gone (`AtomicFile.isAbandonedTemporary`). Another live process's temporaries — a shard
    /// writing into the same directory — and other hosts' are left alone.
    static func removeAbandonedTemporaries(in directory: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names where AtomicFile.isAbandonedTemporary(name) {
            unlink(directory + "/" + name)
        }
    }

    /// The latest record per input over every manifest of the directory
    /// (`scenelinear-manifest*.jsonl`).
    public static func readManifests(in directory: String) -> [String: ManifestRecord] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let paths = names.filter { $0.hasPrefix("scenelinear-manifest") && $0.hasSuffix(".jsonl") }.sorted().map { directory + "/" + $0 }
        return Dictionary(mergeManifests(paths).map { ($0.input, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The latest record per input of a manifest (unreadable lines are ignored: a line cut
    /// by a kill is simply redone).
    public static func readManifest(_ path: String) -> [String: ManifestRecord] {
        Dictionary(readLines(ManifestRecord.self, path).map { ($0.input, $0) }, uniquingKeysWith: { _, later in later })
    }

    /// The records of a JSON Lines manifest in file order; a line that does not decode (cut
    /// by a kill) is skipped, and a path that is not a regular file reads as empty.
    static func readLines<Record: Decodable>(_ type: Record.Type, _ path: String) -> [Record] {
        guard RegularFile.problem(path) == nil, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        let decoder = JSONDecoder()
        return text.split(separator: "\n").compactMap { try? decoder.decode(Record.self, from: Data($0.utf8)) }
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

    /// The manifests among `paths`: a file as given, a directory's
    /// `scenelinear-manifest*.jsonl` files in name order.
    /// - Throws: `ContainerError` for a path that does not exist or a file that is not a regular one.
    public static func manifestFiles(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw ContainerError.fileNotFound(path: path)
            }
            if isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                files += names.filter { $0.hasPrefix("scenelinear-manifest") && $0.hasSuffix(".jsonl") }.sorted()
                    .map { (path.hasSuffix("/") ? path : path + "/") + $0 }
            } else {
                if let problem = RegularFile.problem(path) { throw ContainerError.unreadable(path: path, problem: .notRegularFile(problem)) }
                files.append(path)
            }
        }
        return files
    }

    /// Writes `records` as a manifest (JSON Lines, keys sorted) to `path`, atomically.
    /// - Throws: `OutputError` when the file cannot be created; `AtomicFile`'s errors.
    public static func writeManifest(_ records: [ManifestRecord], to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Data()
        for r in records {
            data.append(try encoder.encode(r))
            data.append(0x0A)
        }
        try AtomicFile.write(data, to: path)
    }

    static func now() -> String {
        let f = ISO8601DateFormatter()
        f.timeZone = TimeZone(identifier: "UTC")
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: Date())
    }
}

/// Appends JSON lines to the manifest from any thread and any process, flushing each to
/// disk: the file is opened with O_APPEND and each line goes in one `write` under an
/// exclusive `flock`, so concurrent batches sharing a manifest never overwrite each other's
/// lines; a line that could not be written whole (a full disk) is cut off again.
final class ManifestWriter: Sendable {
    let path: String
    /// The open manifest's descriptor (-1 once closed).
    private let descriptor: Mutex<Int32>

    init(path: String) throws {
        self.path = path
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw OutputError(path: path, failed: "cannot open the manifest", systemError: errno) }
        descriptor = Mutex(fd)
    }

    /// - Throws: `OutputError` when the line cannot be written whole and flushed.
    func append<Record: Encodable>(_ record: Record) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(record)
        data.append(0x0A)
        try descriptor.withLock { fd in
            guard fd >= 0 else { throw OutputError(path: path, reason: "the manifest is closed") }
            flock(fd, LOCK_EX)
            defer { flock(fd, LOCK_UN) }
            let end = lseek(fd, 0, SEEK_END)
            var written = 0
            let failure: Int32? = data.withUnsafeBytes { bytes -> Int32? in
                while written < bytes.count {
                    let n = Foundation.write(fd, bytes.baseAddress! + written, bytes.count - written)
                    if n < 0 { if errno == EINTR { continue }; return errno }
                    written += n
                }
                return fsync(fd) == 0 ? nil : errno
            }
            if let failure {
                if written > 0 && end >= 0 { _ = ftruncate(fd, end) }  // no half line for the next writer to follow
                throw OutputError(path: path, failed: "cannot append to the manifest", systemError: failure)
            }
        }
    }

    func close() throws {
        try descriptor.withLock { fd in
            guard fd >= 0 else { return }
            let status = Foundation.close(fd)
            fd = -1
            if status != 0 { throw OutputError(path: path, failed: "cannot close the manifest", systemError: errno) }
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
    /// The first manifest write that failed (the batch goes on; the run fails at the end).
    private let manifestError = Mutex<(any SceneLinearFailure)?>(nil)
    func manifestFailed(_ error: any Error) {
        manifestError.withLock { if $0 == nil { $0 = (error as? any SceneLinearFailure) ?? OutputError(path: "manifest", reason: "\(error)") } }
    }
    var manifestFailure: (any SceneLinearFailure)? { manifestError.withLock { $0 } }

    var result: BatchSummary { summary.withLock { $0 } }
}
