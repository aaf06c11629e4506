import Foundation
import Synchronization

/// Why an output file could not be written.
public struct OutputError: SceneLinearFailure, Equatable {
    public var path: String
    public var reason: String
    public var category: FailureCategory
    /// The operating system's error number when a system call failed (its text ends `reason`).
    public var systemError: Int32?

    public init(path: String, reason: String, category: FailureCategory = .outputFailure) {
        self.path = path
        self.reason = reason
        self.category = category
    }

    /// A system call that failed with `code`: "`doing`: its text" ("rename failed: No space left on device").
    public init(path: String, failed doing: String, systemError code: Int32) {
        self.init(path: path, reason: "\(doing): \(String(cString: strerror(code)))")
        systemError = code
    }

    public var file: String? { path }
    public var description: String { "cannot write \(path): \(reason)" }
}

/// What may be replaced at an output path (`docs/robustness.md#overwrite`).
///
/// - An output that is one of the command's own inputs (the same file, by device and inode,
///   however it is spelt) is never written: usage error.
/// - An existing regular, writable file that this tool wrote (its signature, the word
///   `scenelinear`, in its first or last 64 KiB: every format written here carries it) is
///   replaced, as a re-run expects.
/// - Anything else that exists — a file another program wrote, a read-only file, a symbolic
///   link, a device — is replaced only with `--overwrite` (a symbolic link is then replaced
///   by the file; its target is left alone). A directory is never replaced.
public struct OverwritePolicy: Sendable {
    /// `--overwrite`: replace what exists at an output path.
    public var overwrite = false
    /// The inputs of the command (device and inode).
    public var inputs: [FileIdentity] = []

    public init(overwrite: Bool = false, inputs: [String] = []) {
        self.overwrite = overwrite
        self.inputs = inputs.compactMap(FileIdentity.init(path:))
    }

    /// The policy of this process (set once by the command-line tool before any output).
    // Safe because it is set once at start-up, before any thread.
    nonisolated(unsafe) public static var current = OverwritePolicy()

    /// Paths a batch manifest records as this tool's outputs: replaced even when damaged
    /// (a resumed batch converts an input again when its output no longer verifies).
    private static let recorded = Mutex<Set<String>>([])

    /// Marks `paths` as outputs a manifest records (see `recorded`).
    public static func trustRecordedOutputs(_ paths: some Sequence<String>) {
        let standardized = paths.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        recorded.withLock { $0.formUnion(standardized) }
    }

    /// Refuses `destination` when the rule above says so.
    /// - Throws: `OutputError` (category `.usage`) naming the path and the reason.
    public func check(_ destination: String) throws {
        var info = stat()
        guard lstat(destination, &info) == 0 else { return }  // nothing there
        let kind = info.st_mode & S_IFMT
        if kind == S_IFDIR { throw OutputError(path: destination, reason: "a directory exists at that path") }
        if let target = FileIdentity(path: destination), inputs.contains(target) {
            throw OutputError(path: destination, reason: "it is an input of this command: give another output path", category: .usage)
        }
        if overwrite { return }
        if kind == S_IFREG, Self.recorded.withLock({ $0.contains(URL(fileURLWithPath: destination).standardizedFileURL.path) }) { return }
        if kind == S_IFLNK {
            throw OutputError(path: destination, reason: "it is a symbolic link: pass --overwrite to replace the link by the output (its target is left alone)", category: .usage)
        }
        if kind != S_IFREG {
            throw OutputError(path: destination, reason: "it exists and is not a regular file: pass --overwrite to replace it", category: .usage)
        }
        if info.st_mode & 0o222 == 0 {  // no write bit (root may write anyway: the bits decide)
            throw OutputError(path: destination, reason: "it exists and is read-only: pass --overwrite to replace it", category: .usage)
        }
        if !Self.carriesSignature(destination) {
            throw OutputError(path: destination, reason: "it exists and was not written by scenelinear: pass --overwrite to replace it", category: .usage)
        }
    }

    /// Removes what is left at `path` from an earlier run — a regular file this tool wrote
    /// (its signature), not an input of the command — when this run writes nothing there
    /// (e.g. a lower-bound mask the new picture does not need). Anything else is left alone.
    /// Returns whether a file was removed.
    @discardableResult
    public func removeStaleOutput(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        if let identity = FileIdentity(path: path), inputs.contains(identity) { return false }
        guard Self.carriesSignature(path) else { return false }
        return unlink(path) == 0
    }

    /// Whether the file has `scenelinear` (any case) in its first or last 64 KiB.
    static func carriesSignature(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        let size = Int(info.st_size), window = 1 << 16
        let offsets = size > window ? [0, size - window] : [0]
        var buffer = [UInt8](repeating: 0, count: window)
        let needle = Array("scenelinear".utf8)
        for offset in offsets {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, window, off_t(offset)) }
            guard n > 0 else { continue }
            let lowered = buffer[0..<n].map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
            if n >= needle.count {
                for i in 0...(n - needle.count) where lowered[i] == needle[0] && Array(lowered[i..<(i + needle.count)]) == needle {
                    return true
                }
            }
        }
        return false
    }
}

/// A file's device and inode.
public struct FileIdentity: Sendable, Equatable, Hashable {
    public let device: UInt64
    public let inode: UInt64

    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// Writes a file through a temporary name in the same directory and renames it into place
/// only when the writer succeeded, so a failure never leaves a partial file behind.
///
/// The temporary is `.<name>.partial-<host>-<pid>-<random>`: it is registered with
/// `ProcessGuard` while it exists (removed on SIGTERM, SIGINT, SIGPIPE), and a later batch
/// removes it only when it belongs to a process of this host that is no longer alive
/// (`isAbandonedTemporary`).
public enum AtomicFile {
    /// Calls `write` with a temporary path next to `destination`, then renames it over
    /// `destination`. On any error the temporary file is removed and the error rethrown.
    ///
    /// - Throws: `OutputError` when the directory is missing or not writable, when
    ///   `OverwritePolicy.current` refuses the destination, or when the rename fails (category
    ///   `.temporaryFailure` when the temporary vanished: another process removed it; try
    ///   again); otherwise whatever `write` throws.
    public static func write<T>(to destination: String, _ write: (_ temporaryPath: String) throws -> T) throws -> T {
        let url = URL(fileURLWithPath: destination)
        let directory = url.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw OutputError(path: destination, reason: "directory \(directory) does not exist")
        }
        guard access(directory, W_OK) == 0 else {
            throw OutputError(path: destination, reason: "directory \(directory) is not writable")
        }
        try OverwritePolicy.current.check(destination)
        let temporary = directory + "/" + temporaryName(for: url.lastPathComponent)
        return try ProcessGuard.withTemporary(temporary) {
            do {
                let result = try write(temporary)
                guard rename(temporary, destination) == 0 else {
                    let code = errno
                    if code == ENOENT {
                        throw OutputError(path: destination, reason: "its temporary file \(temporary) vanished before it could be renamed into place (another process removed it); run again",
                                          category: .temporaryFailure)
                    }
                    throw OutputError(path: destination, failed: "rename failed", systemError: code)
                }
                return result
            } catch {
                unlink(temporary)
                throw error
            }
        }
    }

    /// `.<name>.partial-<host>-<pid>-<random>`.
    public static func temporaryName(for name: String) -> String {
        ".\(name).partial-\(hostName)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// This host's name, with any character that could not stand in a file name replaced.
    public static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(cString: buffer).map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" ? $0 : "_" }
        return name.isEmpty ? "localhost" : String(name)
    }()

    /// Writes `contents` to `destination` through `write(to:_:)`.
    /// - Throws: as `write(to:_:)`; `OutputError` when the temporary cannot be created.
    public static func write(_ contents: Data, to destination: String) throws {
        try write(to: destination) { temporary in
            guard FileManager.default.createFile(atPath: temporary, contents: contents) else {
                throw OutputError(path: destination, reason: "cannot create the file")
            }
        }
    }

    /// Whether a file name is a temporary of `write` that nobody will finish: one of this
    /// host whose process is no longer alive. A temporary of another host, or of a live
    /// process (another shard writing into the same directory), is never abandoned.
    public static func isAbandonedTemporary(_ fileName: String) -> Bool {
        guard fileName.hasPrefix("."), let marker = fileName.range(of: ".partial-", options: .backwards) else { return false }
        let fields = fileName[marker.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
        // host-pid-random; the host may itself hold "-".
        guard fields.count >= 3, let pid = Int32(fields[fields.count - 2]), UInt32(fields[fields.count - 1]) != nil, pid > 0 else {
            return false
        }
        let host = fields[0..<(fields.count - 2)].joined(separator: "-")
        guard host == hostName else { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}

/// Inputs must be regular files: a FIFO would block the reader until a writer comes (for
/// ever), a device may never end.
public enum RegularFile {
    /// Why `path` cannot be read as an input ("it is a FIFO (named pipe), not a regular
    /// file"), or nil for a regular file (or one that does not exist: the reader says so).
    public static func problem(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return problem(mode: info.st_mode)
    }

    /// The same for a file's `st_mode` (from a `stat` or `fstat` already made).
    public static func problem(mode: mode_t) -> String? {
        let kind: String
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: kind = "a directory"
        case S_IFIFO: kind = "a FIFO (named pipe)"
        case S_IFCHR: kind = "a character device"
        case S_IFBLK: kind = "a block device"
        case S_IFSOCK: kind = "a socket"
        default: kind = "not a regular file"
        }
        return "it is \(kind), not a regular file"
    }
}
