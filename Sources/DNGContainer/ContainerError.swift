import Foundation
import ImageCore

/// Why a file could not be read as a DNG.
public enum ContainerError: SceneLinearFailure, Equatable {
    /// No file at that path.
    case fileNotFound(path: String)
    /// The file exists but cannot be read.
    case unreadable(path: String, problem: ReadProblem)
    /// Not a TIFF file (bad byte-order mark or magic number, too short).
    case notTIFF(path: String, header: HeaderProblem)
    /// A TIFF file without DNGVersion (tag 50706) in IFD0.
    case notDNG(path: String)
    /// The file ends before a structure it points to.
    case truncated(path: String, what: String, offset: Int, length: Int, fileSize: Int)
    /// The file became shorter while it was being read (`size` bytes now, `mapped` when opened).
    case shrankWhileReading(path: String, size: Int, mapped: Int)
    /// An inconsistent structure or tag value.
    case corrupt(path: String, ifd: String, reason: String)
    /// A valid structure this reader does not support.
    case unsupported(path: String, ifd: String, reason: String)
    /// DNGBackwardVersion (tag 50707) newer than this reader.
    case unsupportedVersion(path: String, backwardVersion: String, supported: String)

    public var file: String? {
        switch self {
        case .fileNotFound(let path), .unreadable(let path, _), .notTIFF(let path, _), .notDNG(let path),
             .truncated(let path, _, _, _, _), .shrankWhileReading(let path, _, _), .corrupt(let path, _, _),
             .unsupported(let path, _, _), .unsupportedVersion(let path, _, _):
            return path
        }
    }

    public var systemError: Int32? {
        switch self {
        case .fileNotFound: return ENOENT
        case .unreadable(_, .system(let code)), .unreadable(_, .mapping(let code)): return code
        default: return nil
        }
    }

    public var category: FailureCategory {
        switch self {
        case .fileNotFound, .unreadable: return .inputUnreadable
        case .notTIFF, .notDNG: return .notDNG
        case .truncated, .shrankWhileReading: return .truncated
        case .corrupt: return .corruptData
        case .unsupported: return .unsupportedFeature
        case .unsupportedVersion: return .unsupportedVersion
        }
    }

    public var description: String {
        switch self {
        case .fileNotFound(let path):
            return "\(path): file not found"
        case .unreadable(let path, let problem):
            return "\(path): cannot read the file: \(problem)"
        case .notTIFF(let path, let header):
            return "\(path): not a TIFF/DNG file: \(header)"
        case .notDNG(let path):
            return "\(path): a TIFF file but not a DNG (IFD0 has no DNGVersion tag 50706)"
        case .truncated(let path, let what, let offset, let length, let fileSize):
            return "\(path): truncated file: \(what) at offset \(offset) (\(length) bytes) extends past end of file (\(fileSize) bytes)"
        case .shrankWhileReading(let path, let size, let mapped):
            return "\(path): truncated while being read: the file was \(mapped) bytes when opened and is \(size) bytes now (another process is writing or cutting it); nothing was written"
        case .corrupt(let path, let ifd, let reason):
            return "\(path): corrupt DNG structure in \(ifd): \(reason)"
        case .unsupported(let path, let ifd, let reason):
            return "\(path): unsupported in \(ifd): \(reason)"
        case .unsupportedVersion(let path, let version, let supported):
            return "\(path): unsupported DNG version: DNGBackwardVersion \(version) needs a newer reader (this one reads up to \(supported))"
        }
    }
}

/// Why a file that exists cannot be read.
public enum ReadProblem: Sendable, Equatable, CustomStringConvertible {
    /// Finding or opening the file failed with this error number (`errno`).
    case system(Int32)
    /// Mapping the file into memory failed with this error number.
    case mapping(Int32)
    /// Not a regular file: `RegularFile.problem`'s sentence ("it is a FIFO (named pipe), not
    /// a regular file").
    case notRegularFile(String)

    public var description: String {
        switch self {
        case .system(let code): return String(cString: strerror(code))
        case .mapping(let code): return "cannot map the file: \(String(cString: strerror(code)))"
        case .notRegularFile(let sentence): return sentence
        }
    }
}

/// Why the first bytes of a file are not a TIFF header.
public enum HeaderProblem: Sendable, Equatable, CustomStringConvertible {
    /// The file has only this many bytes (a header takes 8).
    case tooShort(bytes: Int)
    /// The first two bytes, which should be "II" or "MM".
    case byteOrder(UInt8, UInt8)
    /// A BigTIFF header whose offset size or reserved field is wrong.
    case malformedBigTIFF
    /// The magic number, which should be 42 (TIFF) or 43 (BigTIFF).
    case magic(Int)

    public var description: String {
        switch self {
        case .tooShort(let bytes): return "only \(bytes) bytes, too short for a TIFF header"
        case .byteOrder(let a, let b): return String(format: "byte-order mark is 0x%02X%02X, not II or MM", a, b)
        case .malformedBigTIFF: return "BigTIFF header is malformed"
        case .magic(let magic): return "magic number is \(magic), not 42 (TIFF) or 43 (BigTIFF)"
        }
    }
}
