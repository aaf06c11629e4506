/// A metadata value carried into output files (EXR attributes, HDF5 attributes, JSON).
public enum MetadataValue: Sendable, Equatable, Codable, CustomStringConvertible {
    case text(String)
    case number(Double)
    case numbers([Double])
    case integer(Int)
    case integers([Int])

    public var description: String {
        switch self {
        case .text(let s): return s
        case .number(let d): return String(format6: d)
        case .numbers(let a): return a.map { String(format6: $0) }.joined(separator: " ")
        case .integer(let i): return String(i)
        case .integers(let a): return a.map(String.init).joined(separator: " ")
        }
    }
}

/// A named metadata value. Keys are lowerCamelCase ASCII.
public struct MetadataItem: Sendable, Equatable, Codable {
    public var key: String
    public var value: MetadataValue

    public init(_ key: String, _ value: MetadataValue) {
        self.key = key
        self.value = value
    }
}

/// Where an image came from and how it was made: written into every output file so a
/// reader can trace it back to the source and undo the exposure scaling.
public struct ImageProvenance: Sendable, Equatable, Codable {
    /// The source file name (no directory).
    public var sourceFile: String
    /// SHA-256 of the source file's bytes, lowercase hex.
    public var sourceSHA256: String
    /// "scenelinear <version>".
    public var software: String
    /// The IFD the image came from, e.g. "IFD0/SubIFD0".
    public var sourceIFD: String
    /// How white balance was chosen, e.g. "AsShotNeutral", "AsShotWhiteXY", "user xy".
    public var whiteBalanceSource: String
    /// The white point used, CIE 1931 xy.
    public var whiteXY: [Double]
    /// The camera neutral of that white point (camera-native, max entry 1).
    public var cameraNeutral: [Double]
    /// The 3×3 matrix (row-major) applied to camera linear reference values to get the
    /// output, before exposure scaling.
    public var cameraToOutput: [Double]
    /// DNG metadata that matters to a reader: camera, exposure, levels, noise profile, ...
    public var dng: [MetadataItem]
    /// What the pipeline did beyond the colour conversion: crop, orientation, demosaicing,
    /// opcodes, ... (keys documented in docs/file-formats.md).
    public var processing: [MetadataItem]

    public init(sourceFile: String, sourceSHA256: String, software: String, sourceIFD: String,
                whiteBalanceSource: String, whiteXY: [Double], cameraNeutral: [Double],
                cameraToOutput: [Double], dng: [MetadataItem], processing: [MetadataItem] = []) {
        self.sourceFile = sourceFile
        self.sourceSHA256 = sourceSHA256
        self.software = software
        self.sourceIFD = sourceIFD
        self.whiteBalanceSource = whiteBalanceSource
        self.whiteXY = whiteXY
        self.cameraNeutral = cameraNeutral
        self.cameraToOutput = cameraToOutput
        self.dng = dng
        self.processing = processing
    }

    /// An empty provenance for images that did not come from a DNG (tests, synthetic data).
    public static func synthetic(_ name: String) -> ImageProvenance {
        ImageProvenance(sourceFile: name, sourceSHA256: "", software: SceneLinearVersion.software,
                        sourceIFD: "", whiteBalanceSource: "none", whiteXY: [], cameraNeutral: [],
                        cameraToOutput: Matrix3.identity.e, dng: [])
    }

    /// Looks up a DNG metadata item.
    public func dngValue(_ key: String) -> MetadataValue? { dng.first { $0.key == key }?.value }

    /// Looks up a processing item.
    public func processingValue(_ key: String) -> MetadataValue? { processing.first { $0.key == key }?.value }
}

/// The project version, written into every output.
public enum SceneLinearVersion {
    public static let version = "0.1.0"
    public static let software = "scenelinear \(version)"
}
