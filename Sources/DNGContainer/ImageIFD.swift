import ImageCore

/// What an IFD holds, from NewSubFileType (tag 254; DNG 1.7.1 p.20).
public enum ImageRole: Sendable, Equatable, Codable, CustomStringConvertible {
    case mainImage              // 0: the highest-resolution raw image
    case preview                // 1: reduced-resolution preview
    case transparencyMask       // 4
    case previewTransparencyMask // 5
    case depthMap               // 8
    case reducedDepthMap        // 9
    case enhancedImage          // 16
    case alternatePreview       // 0x10001
    case semanticMask           // 0x10004 (DNG 1.6)
    case other(Int)

    public init(newSubFileType v: Int) {
        switch v {
        case 0: self = .mainImage
        case 1: self = .preview
        case 4: self = .transparencyMask
        case 5: self = .previewTransparencyMask
        case 8: self = .depthMap
        case 9: self = .reducedDepthMap
        case 16: self = .enhancedImage
        case 0x10001: self = .alternatePreview
        case 0x10004: self = .semanticMask
        default: self = .other(v)
        }
    }

    public var description: String {
        switch self {
        case .mainImage: return "main image"
        case .preview: return "preview"
        case .transparencyMask: return "transparency mask"
        case .previewTransparencyMask: return "preview transparency mask"
        case .depthMap: return "depth map"
        case .reducedDepthMap: return "reduced-resolution depth map"
        case .enhancedImage: return "enhanced image"
        case .alternatePreview: return "alternate preview"
        case .semanticMask: return "semantic mask"
        case .other(let v): return "NewSubFileType \(v)"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }

    public init(from decoder: any Decoder) throws {
        let s = try decoder.singleValueContainer().decode(String.self)
        let all: [ImageRole] = [.mainImage, .preview, .transparencyMask, .previewTransparencyMask, .depthMap,
                                .reducedDepthMap, .enhancedImage, .alternatePreview, .semanticMask]
        self = all.first { $0.description == s } ?? .other(-1)
    }
}

/// PhotometricInterpretation values that matter here (tag 262).
public enum Photometric {
    public static let blackIsZero = 1
    public static let rgb = 2
    public static let transparencyMask = 4
    public static let yCbCr = 6
    public static let cfa = 32803
    public static let linearRaw = 34892
    public static let depth = 51177
    public static let photometricMask = 52527

    public static func name(_ v: Int) -> String {
        switch v {
        case 0: return "WhiteIsZero"
        case 1: return "BlackIsZero"
        case 2: return "RGB"
        case 4: return "TransparencyMask"
        case 6: return "YCbCr"
        case 32803: return "CFA"
        case 34892: return "LinearRaw"
        case 51177: return "Depth"
        case 52527: return "PhotometricMask"
        default: return "Photometric \(v)"
        }
    }
}

/// Compression values (tag 259) of DNG 1.7.1.
public enum Compression {
    public static let none = 1
    public static let jpeg = 7            // lossless Huffman JPEG for raw data; baseline DCT for 8-bit previews
    public static let deflate = 8
    public static let lossyJPEG = 34892
    public static let jpegXL = 52546

    /// The name of compression `v`; value 7 means lossless JPEG for raw data and baseline
    /// JPEG for 8-bit previews.
    public static func name(_ v: Int, raw: Bool = true) -> String {
        switch v {
        case 1: return "uncompressed"
        case 7: return raw ? "lossless JPEG" : "JPEG"
        case 8: return "Deflate"
        case 6: return "old-style JPEG"
        case 9: return "VC-5 (not defined by DNG)"
        case 34892: return "lossy JPEG"
        case 52546: return "JPEG XL"
        default: return "compression \(v)"
        }
    }
}

/// Where the stored data of an image IFD lives: tiles or strips, as offset/length pairs.
public struct DataLayout: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable { case tiles, strips }
    public let kind: Kind
    /// Tile width, or the image width for strips.
    public let blockWidth: Int
    /// Tile length, or RowsPerStrip (capped at the image height) for strips.
    public let blockHeight: Int
    public let offsets: [Int]
    public let byteCounts: [Int]
}

/// CFA layout of a mosaic image (tags 33421, 33422, 50710, 50711).
public struct CFADescription: Sendable, Codable, Equatable {
    public let repeatRows: Int
    public let repeatCols: Int
    /// Colour index per pattern site, row-major (0 = red, 1 = green, 2 = blue, ...).
    public let pattern: [Int]
    public let planeColors: [Int]
    public let layout: Int

    /// The pattern as letters, e.g. "RGGB".
    public var patternName: String {
        let letters = ["R", "G", "B", "C", "M", "Y", "W"]
        return pattern.map { $0 < letters.count ? letters[$0] : "?" }.joined()
    }
}

/// The header of a ProfileGainTableMap (tag 52525, DNG 1.6): a local tone-mapping hint,
/// reported but not applied to scene-linear output.
public struct GainTableMapInfo: Sendable, Codable, Equatable {
    public let pointsV: Int
    public let pointsH: Int
    public let spacingV: Double
    public let spacingH: Double
    public let originV: Double
    public let originH: Double
    public let pointsN: Int
    public let inputWeights: [Double]
    public let byteCount: Int
    /// The byte order the table was read in ("big-endian" per the specification).
    public let byteOrder: String
}

/// Everything this reader knows about one IFD that holds image data.
///
/// Values are as found in the file (with the DNG defaults filled in where a tag is
/// absent); whether they are consistent enough to decode is checked by the stage that
/// uses them, which reports the specific problem.
public struct ImageIFD: Sendable, Codable {
    public let path: String
    public let newSubFileType: Int
    public let role: ImageRole
    public let width: Int
    public let height: Int
    public let samplesPerPixel: Int
    /// One entry per sample (a single value in the file is repeated).
    public let bitsPerSample: [Int]
    /// 1 unsigned integer, 2 signed integer, 3 IEEE float (tag 339).
    public let sampleFormat: Int
    public let compression: Int
    public let photometric: Int
    public let planarConfiguration: Int
    public let predictor: Int
    public let fillOrder: Int
    public let layout: DataLayout?

    // Stage 2: raw values → linear reference values (DNG chapter 5)
    public let linearizationTable: [UInt16]?
    /// BlackLevelRepeatDim (rows, cols).
    public let blackLevelRepeatDim: [Int]
    /// BlackLevel in row-column-sample order.
    public let blackLevel: [Double]
    public let blackLevelDeltaH: [Double]?
    public let blackLevelDeltaV: [Double]?
    /// WhiteLevel per sample (default 2^bits − 1).
    public let whiteLevel: [Double]
    public let activeArea: PixelRect
    public let maskedAreas: [PixelRect]
    public let linearResponseLimit: Double?

    // geometry hints (applied by later stages)
    public let defaultCropOrigin: [Double]?
    public let defaultCropSize: [Double]?
    public let defaultScale: [Double]?
    public let defaultUserCrop: [Double]?

    public let cfa: CFADescription?
    /// NoiseProfile (tag 51041): S₁, O₁, S₂, O₂, ... (variance = S·x + O).
    public let noiseProfile: [Double]?
    /// Byte sizes of OpcodeList1/2/3 when present (applied by later stages).
    public let opcodeListSizes: [String: Int]
    public let semanticName: String?
    public let semanticInstanceID: String?
    public let maskSubArea: [Int]?
    public let profileGainTableMap: GainTableMapInfo?

    /// True for the image kinds Stage 1–2 decode: CFA or LinearRaw.
    public var isRaw: Bool { photometric == Photometric.cfa || photometric == Photometric.linearRaw }

    public var pixelCount: Int { width * height }
}
