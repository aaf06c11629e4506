import ArgumentParser
import SceneLinearKit

/// Per-file resource limits and the digest check, shared by the commands that decode DNGs.
struct LimitOptions: ParsableArguments {
    @Option(name: .customLong("max-pixels"), help: ArgumentHelp("Refuse raw images larger than this many pixels (suffix K, M or G for 10³, 10⁶, 10⁹; default 1073741824).", valueName: "n"))
    var maxPixels: String?

    @Option(name: .customLong("max-memory"), help: ArgumentHelp("Refuse files whose decode would need more memory than this, estimated from the dimensions before decoding (suffix K, M, G for KiB, MiB, GiB; default three quarters of the allocation's memory: physical memory, the cgroup's memory limit or Slurm's, whichever is least). Exit code 17.", valueName: "bytes"))
    var maxMemory: String?

    @Flag(help: "Convert a file whose raw data do not match the digest it records (NewRawImageDigest, RawImageDigest, OriginalRawFileDigest) instead of failing with exit code 13; the outputs record 'digest: mismatch, ignored' and both digests.")
    var ignoreDigest = false

    @Flag(help: "Do not compute the raw-data digest at all (the outputs record 'digest: not checked').")
    var skipDigest = false

    @Option(help: ArgumentHelp("Worker threads for decoding, developing, measuring and writing, and files converted or measured at once (default: the SCENELINEAR_THREADS environment variable when set, else the CPUs allotted to the process: the least of its affinity mask, its cgroup CPU quota and SLURM_CPUS_PER_TASK).", valueName: "n"))
    var threads: Int?

    func validate() throws {
        if ignoreDigest && skipDigest { throw ValidationError("--ignore-digest and --skip-digest exclude each other") }
        if let maxPixels { _ = try Self.parse(maxPixels, base: 1000, what: "--max-pixels") }
        if let maxMemory { _ = try Self.parse(maxMemory, base: 1024, what: "--max-memory") }
        if let threads, !(1...Parallel.maxThreads).contains(threads) { throw ValidationError("--threads must be 1...\(Parallel.maxThreads)") }
    }

    /// Runs a command's work with the thread count of `--threads` (the environment's or the
    /// core count without it): every parallel loop it starts, on any thread, uses that many.
    func withParallelism<T>(_ body: () throws -> T) rethrows -> T {
        guard let threads else { return try body() }
        return try Parallel.withThreadCount(threads, body)
    }

    /// Applies the limits to develop options.
    func apply(to options: inout DevelopOptions) throws {
        if let maxPixels { options.limits.maxPixels = try Self.parse(maxPixels, base: 1000, what: "--max-pixels") }
        if let maxMemory { options.maxMemoryBytes = try Self.parse(maxMemory, base: 1024, what: "--max-memory") }
        options.digest = skipDigest ? .skip : ignoreDigest ? .ignoreMismatch : .verify
    }

    /// "12M" → 12 × base²; a positive whole number with an optional K/M/G suffix.
    static func parse(_ text: String, base: Int, what: String) throws -> Int {
        var digits = text.trimmingCharacters(in: .whitespaces)
        var factor = 1
        if let last = digits.last?.uppercased(), let power = ["K": 1, "M": 2, "G": 3][last] {
            digits.removeLast()
            factor = (0..<power).reduce(1) { r, _ in r * base }
        }
        guard let n = Int(digits), n > 0, n <= Int.max / factor else {
            throw ValidationError("\(what) must be a positive whole number with an optional K, M or G suffix, not \(text)")
        }
        return n * factor
    }
}
