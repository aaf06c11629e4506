import ImageCore

/// Why Stage 2 could not map stored values to linear reference values.
public struct LinearizeError: SceneLinearFailure, Equatable {
    public let path: String
    public var file: String? { path }
    public let ifd: String
    public let reason: String

    public init(path: String, ifd: String, reason: String) {
        self.path = path
        self.ifd = ifd
        self.reason = reason
    }

    public var category: FailureCategory { .corruptData }
    public var description: String { "\(path): invalid linearization tags in \(ifd): \(reason)" }
}
