import Foundation

/// Why an output file could not be written.
public struct OutputError: SceneLinearFailure, Equatable {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var category: FailureCategory { .outputFailure }
    public var description: String { "cannot write \(path): \(reason)" }
}

/// Writes a file through a temporary name in the same directory and renames it into place
/// only when the writer succeeded, so a failure never leaves a partial file behind.
public enum AtomicFile {
    /// Calls `write` with a temporary path next to `destination`, then renames it over
    /// `destination`. On any error the temporary file is removed and the error rethrown.
    ///
    /// - Throws: `OutputError` when the directory is missing or not writable, or when the
    ///   rename fails; otherwise whatever `write` throws.
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
        if FileManager.default.fileExists(atPath: destination, isDirectory: &isDirectory), isDirectory.boolValue {
            throw OutputError(path: destination, reason: "a directory exists at that path")
        }
        let temporary = directory + "/." + url.lastPathComponent + ".partial-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        do {
            let result = try write(temporary)
            guard rename(temporary, destination) == 0 else {
                let reason = String(cString: strerror(errno))
                throw OutputError(path: destination, reason: "rename failed: \(reason)")
            }
            return result
        } catch {
            unlink(temporary)
            throw error
        }
    }
}
