import DNGContainer
import ImageCore
import LosslessJPEG

/// Why the stored samples of an image IFD could not be decoded (Stage 1).
public enum RawDecodeError: SceneLinearFailure, Equatable {
    /// A tile or strip extends past the end of the file.
    case truncated(path: String, ifd: String, block: String, offset: Int, length: Int, fileSize: Int)
    /// A lossless-JPEG tile or strip is corrupt.
    case corruptBlock(path: String, ifd: String, block: String, error: LJ92Error)
    /// A Deflate, JPEG XL or lossy-JPEG tile or strip is corrupt: `codec` names the
    /// compression, `reason` what its decoder found.
    case corruptStream(path: String, ifd: String, block: String, codec: String, reason: String)
    /// A tile or strip holds fewer bytes or samples than its place in the image needs.
    case shortBlock(path: String, ifd: String, block: String, reason: String)
    /// The tags describing the data layout contradict each other.
    case inconsistentLayout(path: String, ifd: String, reason: String)
    /// A compression this reader does not decode.
    case unsupportedCompression(path: String, ifd: String, compression: Int)
    /// Another valid feature this reader does not support, found from the tags.
    case unsupported(path: String, ifd: String, reason: String)
    /// A valid feature this reader does not support, found inside one tile or strip
    /// (e.g. a JPEG XL stream with extra channels, a 12-bit DCT JPEG).
    case unsupportedBlock(path: String, ifd: String, block: String, reason: String)
    /// The image is larger than the configured limit.
    case tooLarge(path: String, ifd: String, pixels: Int, limit: Int)

    public var file: String? {
        switch self {
        case .truncated(let path, _, _, _, _, _), .corruptBlock(let path, _, _, _), .corruptStream(let path, _, _, _, _),
             .shortBlock(let path, _, _, _), .inconsistentLayout(let path, _, _), .unsupportedCompression(let path, _, _),
             .unsupported(let path, _, _), .unsupportedBlock(let path, _, _, _), .tooLarge(let path, _, _, _):
            return path
        }
    }

    public var category: FailureCategory {
        switch self {
        case .truncated: return .truncated
        case .corruptBlock(_, _, _, let error):
            // A lossy (DCT) stream where lossless JPEG belongs is a feature, not damage.
            return error.category == .unsupported ? .unsupportedFeature : .corruptData
        case .corruptStream, .shortBlock, .inconsistentLayout: return .corruptData
        case .unsupportedCompression, .unsupported, .unsupportedBlock: return .unsupportedFeature
        case .tooLarge: return .limitExceeded
        }
    }

    public var description: String {
        switch self {
        case .truncated(let path, let ifd, let block, let offset, let length, let size):
            return "\(path): truncated file: \(block) of \(ifd) at offset \(offset) (\(length) bytes) extends past end of file (\(size) bytes)"
        case .corruptBlock(let path, let ifd, let block, let error):
            return "\(path): corrupt lossless-JPEG \(block) in \(ifd): \(error)"
        case .corruptStream(let path, let ifd, let block, let codec, let reason):
            return "\(path): corrupt \(codec) \(block) in \(ifd): \(reason)"
        case .shortBlock(let path, let ifd, let block, let reason):
            return "\(path): corrupt \(block) in \(ifd): \(reason)"
        case .inconsistentLayout(let path, let ifd, let reason):
            return "\(path): corrupt image layout in \(ifd): \(reason)"
        case .unsupportedCompression(let path, let ifd, let compression):
            return "\(path): unsupported compression \(compression) (\(Compression.name(compression))) in \(ifd)"
        case .unsupported(let path, let ifd, let reason):
            return "\(path): unsupported in \(ifd): \(reason)"
        case .unsupportedBlock(let path, let ifd, let block, let reason):
            return "\(path): unsupported \(block) in \(ifd): \(reason)"
        case .tooLarge(let path, let ifd, let pixels, let limit):
            return "\(path): image in \(ifd) has \(pixels) pixels, more than the limit of \(limit)"
        }
    }
}
