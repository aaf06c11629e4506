internal import CLazyLibraries

/// The C libraries that are loaded on first use (`CLazyLibraries`, docs/architecture.md) and
/// that their users load explicitly before the first call, so that a library missing from the
/// system is an error of the file that needed it rather than the end of the process.
public enum LazyLibrary: Sendable {
    case jpegXL, hdf5, tiff, openEXRCxx

    /// Loads the library if it is not loaded yet (safe from any thread): nil, or why it
    /// cannot be loaded — the shared object and the loader's reason.
    public func load() -> String? {
        let id: Int32 = switch self {
        case .jpegXL: SL_LAZY_JXL
        case .hdf5: SL_LAZY_HDF5
        case .tiff: SL_LAZY_TIFF
        case .openEXRCxx: SL_LAZY_OPENEXR
        }
        var message = [CChar](repeating: 0, count: 600)
        guard sl_lazy_load(id, &message, message.count) != 0 else { return nil }
        return String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
