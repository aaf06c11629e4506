import CProcessGuard
import Foundation

/// What the process does on SIGTERM, SIGINT, SIGHUP and SIGPIPE, and when an input file
/// shrinks under its memory mapping (`docs/robustness.md#signals`).
///
/// - The temporaries a process writes (`AtomicFile`, the copy behind `-o -`) are registered
///   while they exist; on one of those signals every registered temporary is removed and the
///   process exits with 128 + the signal's number (SIGTERM 143, SIGINT 130, SIGHUP 129,
///   SIGPIPE 141). A batch manifest is appended one whole line per write, so it stays intact.
/// - An input mapped into memory (`MappedRange`) that is truncated while it is read gives
///   zeros instead of SIGBUS; the reader asks `MappedRange.shrank` and reports the file as
///   truncated.
public enum ProcessGuard {
    /// Installs the handlers (once; later calls do nothing). The command-line tool calls it
    /// first thing; a library user who wants the same behaviour calls it too.
    public static func install() {
        _ = cpg_install()
    }

    /// Runs `body` with `path` registered as a temporary to remove on a termination signal.
    public static func withTemporary<T>(_ path: String, _ body: () throws -> T) rethrows -> T {
        let slot = cpg_temp_register(path)
        defer { cpg_temp_release(slot) }
        return try body()
    }

    /// Registers a temporary for removal on a termination signal until `release`; returns
    /// its slot (-1 when the table is full).
    public static func register(_ path: String) -> Int32 { cpg_temp_register(path) }
    public static func release(_ slot: Int32) { cpg_temp_release(slot) }

    /// Flushes standard output: nil, or why what was printed could not be written.
    public static func flushStandardOutput() -> String? {
        let code = cpg_flush_stdout()
        return code == 0 ? nil : String(cString: strerror(code))
    }

    /// The termination cleanup without exiting (tests).
    static func removeRegisteredTemporaries() { cpg_cleanup_for_test() }
}

/// A read-only file mapping guarded against the file shrinking while it is read: pages past
/// the new end read as zeros and are counted.
public final class MappedRange: Sendable {
    private let slot: Int32

    public init(base: UnsafeRawPointer, length: Int) {
        ProcessGuard.install()
        slot = cpg_map_register(base, length)
    }

    /// Whether a page of the range was found missing (the file was truncated under it).
    public var shrank: Bool { cpg_map_faults(slot) > 0 }

    /// Lets the kernel drop the pages of the file mapping at `base` (`size` bytes) that lie
    /// wholly inside bytes `offset ..< offset + length` from this process's resident memory:
    /// they stay in the page cache and are read again when next touched. Pages shared with
    /// neighbouring bytes stay; a range outside the mapping does nothing.
    public static func releaseResidentPages(of base: UnsafeMutableRawPointer, size: Int, offset: Int, length: Int) {
        guard offset >= 0, length > 0, offset <= size - length else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let first = (offset + page - 1) / page * page, end = (offset + length) / page * page
        guard end > first else { return }
        _ = madvise(base + first, end - first, MADV_DONTNEED)
    }

    deinit { cpg_map_release(slot) }
}
