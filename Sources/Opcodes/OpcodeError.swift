import ImageCore

/// Why an opcode list could not be parsed or applied.
///
/// Every error names the list (OpcodeList1, 2 or 3) and, when one opcode is at fault, its
/// position in the list (counted from 0) and its ID, so a message reads like
/// "OpcodeList2 entry 3 (GainMap, ID 9): …". The `kind` tells programs what went wrong;
/// `detail` says it in words with the offending values.
public struct OpcodeError: SceneLinearFailure, Equatable {
    /// What went wrong.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The list ends inside an opcode's header or parameters (or before its count).
        case truncated
        /// Bytes remain after the last opcode the count announces.
        case trailingBytes
        /// An opcode's parameter byte count does not match the layout its fields imply.
        case parameterSize
        /// A parameter value is outside its valid range (empty rectangle, zero pitch,
        /// non-finite coefficient, Bayer phase above 3, ...).
        case invalidParameter
        /// An opcode ID that DNG 1.7.1 does not define, without the optional flag.
        case unknownOpcode
        /// An opcode whose DNG version is newer than 1.7.1.0, without the optional flag.
        case unsupportedVersion
        /// A valid opcode that cannot run on this image (a bad-pixel opcode on an image
        /// that is not a one-plane Bayer mosaic, a TrimBounds outside the image).
        case notApplicable
    }

    /// What went wrong.
    public let kind: Kind
    /// The list being parsed or applied.
    public let list: OpcodeListID
    /// The opcode's position in the list, counted from 0; `nil` for list-level problems.
    public let index: Int?
    /// The opcode's ID; `nil` for list-level problems.
    public let opcodeID: UInt32?
    /// The problem in words, with the values involved.
    public let detail: String
    /// The file the list came from, when the caller supplies it (see `inFile(_:)`).
    public private(set) var file: String?

    /// Creates an error.
    public init(_ kind: Kind, list: OpcodeListID, index: Int? = nil, opcodeID: UInt32? = nil, detail: String) {
        self.kind = kind
        self.list = list
        self.index = index
        self.opcodeID = opcodeID
        self.detail = detail
        self.file = nil
    }

    /// The same error, naming the file the list came from in its description.
    public func inFile(_ path: String) -> OpcodeError {
        var copy = self
        copy.file = path
        return copy
    }

    /// The exit-code category: truncated lists are `.truncated`, unknown required opcodes
    /// `.unsupportedFeature`, newer required opcode versions `.unsupportedVersion`,
    /// opcodes that cannot run on the image `.unsupportedFeature`, anything else
    /// `.corruptData`.
    public var category: FailureCategory {
        switch kind {
        case .truncated: return .truncated
        case .trailingBytes, .parameterSize, .invalidParameter: return .corruptData
        case .unknownOpcode, .notApplicable: return .unsupportedFeature
        case .unsupportedVersion: return .unsupportedVersion
        }
    }

    public var description: String {
        var place = list.name
        if let index {
            place += " entry \(index)"
            if let opcodeID { place += " (\(OpcodeID.name(of: opcodeID)), ID \(opcodeID))" }
        }
        let prefix = file.map { "\($0): " } ?? ""
        return "\(prefix)\(place): \(detail)"
    }
}
