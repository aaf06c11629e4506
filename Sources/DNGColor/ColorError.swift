import ImageCore

/// Why the DNG colour model could not be built.
public struct ColorError: SceneLinearFailure, Equatable {
    public let path: String
    public var file: String? { path }
    public let reason: String
    public let category: FailureCategory

    public init(path: String, reason: String, category: FailureCategory = .corruptData) {
        self.path = path
        self.reason = reason
        self.category = category
    }

    public var description: String { "\(path): colour conversion impossible: \(reason)" }
}
