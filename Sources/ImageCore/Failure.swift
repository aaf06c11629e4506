/// The kind of a failure, which decides the command-line exit code.
///
/// Every error the library throws conforms to `SceneLinearFailure` and names one of these,
/// so scripts can tell "this file is broken" from "this tool cannot do that yet".
public enum FailureCategory: Int32, Sendable, CaseIterable, Codable {
    /// The input file does not exist or cannot be read.
    case inputUnreadable = 10
    /// The input is not a TIFF/DNG file at all.
    case notDNG = 11
    /// The file ends before data it points to (e.g. a tile past the end of the file).
    case truncated = 12
    /// The file is damaged: inconsistent structure, bad tag values, corrupt compressed data.
    case corruptData = 13
    /// A valid file using something this tool does not support (compression, layout, ...).
    case unsupportedFeature = 14
    /// A DNGBackwardVersion newer than this reader understands.
    case unsupportedVersion = 15
    /// The output cannot be written (directory missing, not writable, disk full, ...).
    case outputFailure = 16
    /// The file would need more pixels or memory than the configured limits allow.
    case limitExceeded = 17
    /// A calibration applied to another camera body than the one it was made with.
    case calibrationMismatch = 18
    /// Frames that cannot be merged into one image: other cameras or sizes, one frame only,
    /// no pixels valid in two frames to check their exposure ratio by.
    case bracketMismatch = 19
    /// A temporary condition: another process removed this one's temporary file, or a
    /// resource was briefly unavailable. Running the same command again may succeed
    /// (EX_TEMPFAIL).
    case temporaryFailure = 75
    /// A usage mistake: an argument that cannot be right (a region outside the image, an
    /// output path that is an input, an existing file not to be replaced without
    /// --overwrite, a job-array shape that cannot be mapped to shards) (EX_USAGE).
    case usage = 64
    /// A bug: an internal invariant failed.
    case internalError = 1

    /// The process exit code for this category.
    public var exitCode: Int32 { rawValue }

    /// Short machine-readable name, used in JSON error reports.
    public var name: String {
        switch self {
        case .inputUnreadable: return "input-unreadable"
        case .notDNG: return "not-dng"
        case .truncated: return "truncated"
        case .corruptData: return "corrupt-data"
        case .unsupportedFeature: return "unsupported-feature"
        case .unsupportedVersion: return "unsupported-version"
        case .outputFailure: return "output-failure"
        case .limitExceeded: return "limit-exceeded"
        case .calibrationMismatch: return "calibration-mismatch"
        case .bracketMismatch: return "bracket-mismatch"
        case .temporaryFailure: return "temporary-failure"
        case .usage: return "usage"
        case .internalError: return "internal-error"
        }
    }
}

/// An error from SceneLinear: a user-facing description naming the file and the place,
/// and a category that decides the exit code.
public protocol SceneLinearFailure: Error, CustomStringConvertible {
    var category: FailureCategory { get }
    /// The file the failure is about, when it is about one (as the caller named it).
    var file: String? { get }
    /// The operating system's error number (`errno`) behind the failure, when there is one.
    var systemError: Int32? { get }
}

extension SceneLinearFailure {
    public var file: String? { nil }
    public var systemError: Int32? { nil }
}

/// A failure from a stage that does not know the file name, with the file added.
public struct FileFailure: SceneLinearFailure {
    public let path: String
    public let underlying: any SceneLinearFailure

    public init(path: String, _ underlying: any SceneLinearFailure) {
        self.path = path
        self.underlying = underlying
    }

    public var category: FailureCategory { underlying.category }
    public var description: String { "\(path): \(underlying.description)" }
    public var file: String? { underlying.file ?? path }
    public var systemError: Int32? { underlying.systemError }
}
