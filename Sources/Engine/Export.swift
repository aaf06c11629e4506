import Foundation

/// The file formats `convert` writes.
public enum OutputFormat: String, CaseIterable, Sendable, Codable {
    case exr
    case hdf5
    /// A Radiance RGBE picture (`RadianceFile`): absolute units only.
    case hdr

    public var fileExtension: String {
        switch self {
        case .exr: return "exr"
        case .hdf5: return "h5"
        case .hdr: return "hdr"
        }
    }

    /// The format a file name's extension implies, or `nil`.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "exr": self = .exr
        case "h5", "hdf5", "he5", "hdf": self = .hdf5
        case "hdr", "pic", "rgbe": self = .hdr
        default: return nil
        }
    }
}

/// Why output paths could not be worked out from the arguments.
public struct OutputPathError: SceneLinearFailure, Equatable {
    public let reason: String
    public var category: FailureCategory { .outputFailure }
    public var description: String { reason }
}

/// Format-specific writer settings.
public struct ExportOptions: Sendable {
    public var exr = EXROptions()
    public var hdf5 = HDF5Options()

    /// Whether writing `formats` needs the clip mask (HDF5 always stores it; EXR only with
    /// the clip-mask channel).
    public func needsClipMask(_ formats: [OutputFormat]) -> Bool {
        formats.contains(.hdf5) || (formats.contains(.exr) && exr.includeClipMask)
    }

    /// Whether writing `formats` needs the Float image (32-bit EXR channels or HDF5 samples,
    /// or a Radiance picture), rather than the half-float one the output conversion makes.
    public func needsFloat(_ formats: [OutputFormat]) -> Bool {
        (formats.contains(.exr) && exr.pixelType == .float) || (formats.contains(.hdf5) && hdf5.sampleType == .float32)
            || formats.contains(.hdr)
    }

    /// Whether both formats already store 32-bit floats.
    public var isFloat: Bool { exr.pixelType == .float && hdf5.sampleType == .float32 }

    /// The same options with 32-bit float samples in both formats: what a conversion falls
    /// back to when a value is beyond half precision's range (`HalfRangeError`).
    public var widenedToFloat: ExportOptions {
        var o = self
        o.exr.pixelType = .float
        o.hdf5.sampleType = .float32
        return o
    }

    public init(exr: EXROptions = EXROptions(), hdf5: HDF5Options = HDF5Options()) {
        self.exr = exr
        self.hdf5 = hdf5
    }

    /// Runs `body` with these options and, when it finds a value half precision cannot hold
    /// (`HalfRangeError`), once more with 32-bit floats (`widenedToFloat`), after calling
    /// `widening`: no output is ever written with infinity.
    public func withFloatFallback<T>(widening: (HalfRangeError) -> Void = { _ in }, _ body: (ExportOptions) throws -> T) throws -> T {
        do {
            return try body(self)
        } catch let range as HalfRangeError where !isFloat {
            widening(range)
            return try body(widenedToFloat)
        }
    }
}

extension Pipeline {
    /// Writes `image` in `format` to `path` (atomically: a temporary file renamed on success).
    /// `hdf5Groups` are extra groups (e.g. `/analysis`) for HDF5 outputs.
    /// - Returns: for a Radiance picture, what it records of its lower bounds (and the mask
    ///   written next to it); nil for the other formats.
    @discardableResult
    public static func export(_ image: some SceneLinearRaster, format: OutputFormat, to path: String,
                              options: ExportOptions = ExportOptions(), hdf5Groups: [HDF5Group] = []) throws -> RadianceLowerBounds? {
        switch format {
        case .exr: try EXRFile.write(image, to: path, options: options.exr)
        case .hdf5: try HDF5File.write(image, to: path, options: options.hdf5, groups: hdf5Groups)
        case .hdr: return try RadianceFile.write(image, to: path)
        }
        return nil
    }

    /// Decides where each output goes.
    ///
    /// - `output` is a directory (exists as one, or ends in "/"): one file per format named
    ///   after the input (`photo.dng` → `photo.exr`, `photo.h5`); formats default to EXR.
    /// - `output` is a file: its extension decides the format (`.exr`, `.h5`/`.hdf5`); a
    ///   single `--format` may name it instead; several formats need a directory.
    /// - Throws: `OutputPathError` when the combination makes no sense.
    public static func outputPaths(input: String, output: String, formats: [OutputFormat]?) throws -> [(OutputFormat, String)] {
        let stem = URL(fileURLWithPath: input).deletingPathExtension().lastPathComponent
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory)
        if output.hasSuffix("/") || (exists && isDirectory.boolValue) {
            let dir = output.hasSuffix("/") ? String(output.dropLast()) : output
            return (formats ?? [.exr]).map { ($0, (dir.isEmpty ? "/" : dir + "/") + stem + "." + $0.fileExtension) }
        }
        let implied = OutputFormat(pathExtension: URL(fileURLWithPath: output).pathExtension)
        if let formats {
            guard formats.count == 1 else {
                throw OutputPathError(reason: "\(formats.count) formats need an output directory, not the file \(output)")
            }
            if let implied, implied != formats[0] {
                throw OutputPathError(reason: "output \(output) has the extension of \(implied.rawValue), but --format says \(formats[0].rawValue)")
            }
            return [(formats[0], output)]
        }
        guard let implied else {
            throw OutputPathError(reason: "cannot tell the format of \(output): use a .exr or .h5 name, --format, or a directory")
        }
        return [(implied, output)]
    }
}
