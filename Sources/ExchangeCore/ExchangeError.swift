import Foundation
import ImageCore

/// A failure while writing or reading an EXR or HDF5 file.
///
/// Names the file, the C library function that failed and the message the library gave
/// (OpenEXRCore's error handler text, or the HDF5 error stack), so a user can tell a
/// full disk from a damaged file without a debugger. Writes fail with category
/// `.outputFailure`; reads with `.inputUnreadable` (missing or unreadable file),
/// `.truncated`, `.corruptData` (not an EXR/HDF5 file, or damaged) or
/// `.unsupportedFeature` (a valid file this reader cannot represent, e.g. deep data).
public struct ExchangeError: SceneLinearFailure, Equatable {
    /// The file being written or read.
    public var path: String
    /// The C function (or the check) that failed, e.g. `exr_start_read` or `H5Dwrite`.
    public var operation: String
    /// The library's own message, or a description of the check that failed.
    public var message: String
    /// Decides the command-line exit code.
    public var category: FailureCategory
    /// The operating system's error number when a system call failed (`message` is its text).
    public var systemError: Int32?

    /// Creates an error; `category` decides the exit code.
    public init(path: String, operation: String, message: String, category: FailureCategory) {
        self.path = path
        self.operation = operation
        self.message = message
        self.category = category
    }

    /// The system call `operation` failed with `code`; the message is its text.
    public init(path: String, operation: String, systemError code: Int32, category: FailureCategory) {
        self.init(path: path, operation: operation, message: String(cString: strerror(code)), category: category)
        systemError = code
    }

    public var file: String? { path }

    public var description: String {
        let verb = category == .outputFailure ? "cannot write" : "cannot read"
        return "\(verb) \(path): \(operation): \(message)"
    }
}

/// Runs a writer that works on a temporary file and reports its `ExchangeError`s under
/// the destination path the caller asked for.
package func reportingDestination<T>(_ destination: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch var error as ExchangeError {
        error.path = destination
        throw error
    }
}
