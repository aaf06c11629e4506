import ArgumentParser
import SceneLinearKit

/// `--max-pixels` and `--max-memory`: the limits checked before a raw image is decoded.
struct ResourceLimitOptions: ParsableArguments {
    @Option(name: .customLong("max-pixels"), help: ArgumentHelp("Refuse raw images larger than this many pixels (suffix K, M or G for 10³, 10⁶, 10⁹; default 1073741824); exit code 17. info applies it with --verify-digest.", valueName: "n"), transform: ArgumentValue.pixelCount)
    var maxPixels: Int?

    @Option(name: .customLong("max-memory"), help: ArgumentHelp("Refuse files whose decode would need more memory than this, estimated from the dimensions before decoding (suffix K, M, G for KiB, MiB, GiB; default three quarters of the allocation's memory: physical memory, the cgroup's memory limit or Slurm's, whichever is least); exit code 17. info applies it with --verify-digest, and reads at most this from standard input (1 GiB without it).", valueName: "bytes"), transform: ArgumentValue.byteCount)
    var maxMemory: Int?

    /// Applies the limits to develop options.
    func apply(to options: inout DevelopOptions) {
        if let maxPixels { options.limits.maxPixels = maxPixels }
        if let maxMemory { options.maxMemoryBytes = maxMemory }
    }
}

/// Per-file resource limits, the digest check and the thread count, shared by the commands
/// that decode DNGs.
struct LimitOptions: ParsableArguments {
    @OptionGroup var resources: ResourceLimitOptions

    @Flag(help: "Convert a file whose raw data do not match the digest it records (NewRawImageDigest, RawImageDigest, OriginalRawFileDigest) instead of failing with exit code 13; the outputs record 'digest: mismatch, ignored' and both digests.")
    var ignoreDigest = false

    @Flag(help: "Do not compute the raw-data digest at all (the outputs record 'digest: not checked').")
    var skipDigest = false

    @Option(help: ArgumentHelp("Worker threads for decoding, developing, measuring and writing, and files converted or measured at once (default: the SCENELINEAR_THREADS environment variable when set, else the CPUs allotted to the process: the least of its affinity mask, its cgroup CPU quota and SLURM_CPUS_PER_TASK).", valueName: "n"))
    var threads: Int?

    func validate() throws {
        if ignoreDigest && skipDigest { throw ValidationError("--ignore-digest and --skip-digest exclude each other") }
        if let threads, !(1...Parallel.maxThreads).contains(threads) { throw ValidationError("--threads must be 1...\(Parallel.maxThreads)") }
    }

    /// Runs a command's work with the thread count of `--threads` (the environment's or the
    /// core count without it): every parallel loop it starts, on any thread, uses that many.
    func withParallelism<T>(_ body: () throws -> T) rethrows -> T {
        guard let threads else { return try body() }
        return try Parallel.withThreadCount(threads, body)
    }

    /// Applies the limits and the digest check to develop options.
    func apply(to options: inout DevelopOptions) {
        resources.apply(to: &options)
        options.digest = skipDigest ? .skip : ignoreDigest ? .ignoreMismatch : .verify
    }
}
