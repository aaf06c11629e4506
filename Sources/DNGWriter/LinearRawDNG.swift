import ImageCore

/// How the raw samples are stored.
public enum DNGCompression: Sendable, Equatable {
    /// Compression 1; depths other than 8 and 16 bits are packed MSB-first.
    case uncompressed
    /// Compression 7: lossless JPEG (ITU T.81 process 14), one stream per tile or strip,
    /// encoded by the project's own encoder with the given predictor (1–7).
    case losslessJPEG(predictor: Int)
}

/// How the IFDs are arranged.
public enum DNGStructure: Sendable, Equatable {
    /// The raw image is IFD 0.
    case rawInIFD0
    /// IFD 0 holds a small 8-bit RGB preview and the raw image is SubIFD 0 — the layout of
    /// Apple ProRAW files.
    case previewWithRawSubIFD
}

/// How the lossless-JPEG frames of a CFA image are laid out.
public enum CFAJPEGLayout: Sendable, Equatable {
    /// One component, the frame as wide as the tile.
    case oneComponent
    /// Two components, the frame half as wide as the tile: each pair of neighbouring
    /// samples of a row is one two-component pixel (as many cameras' DNGs store Bayer data).
    case twoComponents
}

/// A raw DNG to write — LinearRaw (three samples per pixel, like Apple ProRAW) or CFA (one
/// sample per pixel through a 2×2 Bayer pattern) — and the tags that describe it.
///
/// Defaults describe a plain 16-bit LinearRaw file with no linearization table, black 0,
/// white 65535 and a camera whose native space is linear Rec.2020 calibrated under D65.
public struct RawDNG: Sendable {
    public var width: Int
    public var height: Int
    /// Stored values, `samplesPerPixel` per pixel, row-major, interleaved; each below
    /// 2^bitsPerSample.
    public var samples: [UInt16]
    /// The 2×2 CFAPattern (colour per site, row-major: 0 red, 1 green, 2 blue), e.g.
    /// `[0, 1, 1, 2]` for RGGB; `nil` for LinearRaw. The pattern's origin is the image's
    /// top-left pixel.
    public var cfaPattern: [UInt8]?
    /// Lossless-JPEG layout of CFA tiles.
    public var cfaJPEGLayout: CFAJPEGLayout = .oneComponent

    /// 1 for CFA, 3 for LinearRaw.
    public var samplesPerPixel: Int { cfaPattern == nil ? 3 : 1 }
    /// 8 ... 16.
    public var bitsPerSample: Int = 16
    public var compression: DNGCompression = .uncompressed
    /// Tile size; `nil` writes strips of `rowsPerStrip` rows.
    public var tileSize: (width: Int, height: Int)? = (256, 256)
    public var rowsPerStrip: Int = 64
    public var byteOrder: DNGByteOrder = .littleEndian
    public var structure: DNGStructure = .rawInIFD0

    public var dngVersion: [Int] = [1, 6, 0, 0]
    public var dngBackwardVersion: [Int] = [1, 4, 0, 0]
    public var make: String = "SceneLinear"
    public var model: String = "Synthetic LinearRaw"
    public var uniqueCameraModel: String = "SceneLinear synthetic LinearRaw"
    public var orientation: Int = 1

    /// Stage 2 tags (raw IFD); BlackLevel and WhiteLevel hold one value per sample per pixel
    /// (so one for CFA), BlackLevel in row-column-sample order of the repeat pattern.
    public var linearizationTable: [UInt16]?
    /// BlackLevelRepeatDim (rows, cols); `nil` writes none (1×1).
    public var blackLevelRepeatDim: (rows: Int, cols: Int)?
    /// BlackLevel, row-column-sample order (written as RATIONAL).
    public var blackLevel: [Double] = [0, 0, 0]
    public var blackLevelDeltaH: [Double]?
    public var blackLevelDeltaV: [Double]?
    public var whiteLevel: [Int] = [65535, 65535, 65535]
    public var activeArea: PixelRect?
    /// DefaultCropOrigin (H, V) and DefaultCropSize (H, V), relative to the ActiveArea.
    public var defaultCrop: (origin: [Double], size: [Double])?
    /// DefaultUserCrop: top, left, bottom, right as fractions of the default crop.
    public var defaultUserCrop: [Double]?
    /// DefaultScale (H, V).
    public var defaultScale: [Double]?
    /// NoiseProfile pairs (S, O), one pair or one per plane.
    public var noiseProfile: [Double]?
    /// OpcodeList1/2/3 (tags 51008, 51009, 51022): serialised lists, big-endian.
    public var opcodeLists: [Int: [UInt8]] = [:]

    // Colour tags (IFD 0)
    public var calibrationIlluminants: [Int] = [21]
    public var colorMatrices: [[Double]] = [Self.rec2020CameraMatrix]
    public var forwardMatrices: [[Double]]?
    public var analogBalance: [Double]?
    public var asShotNeutral: [Double]? = [1, 1, 1]
    public var asShotWhiteXY: [Double]?
    public var baselineExposure: Double?
    public var baselineExposureOffset: Double?

    /// DNG 1.6 semantic masks, written as SubIFDs after the raw image (at most 15).
    public var semanticMasks: [SemanticMaskDNG] = []

    // Capture settings (TIFF-EP tags in IFD 0)
    public var exposureTime: Double?
    public var fNumber: Double?
    public var iso: Int?
    public var dateTimeOriginal: String?
    /// "±HH:MM" (EXIF OffsetTimeOriginal) and a second's fraction as digits (SubSecTimeOriginal).
    public var offsetTimeOriginal: String?
    public var subSecTimeOriginal: String?

    /// XYZ (D65) → linear Rec.2020, normalised so that the D65 white maps to (1, 1, 1): the
    /// ColorMatrix of a camera whose native space is linear Rec.2020.
    public static var rec2020CameraMatrix: [Double] {
        // Rec.2020 RGB → XYZ from the primaries (0.708, 0.292), (0.170, 0.797), (0.131, 0.046) and D65.
        func xyz(_ x: Double, _ y: Double) -> SIMD3<Double> { [x / y, 1, (1 - x - y) / y] }
        let p = Matrix3(rows: xyz(0.708, 0.292), xyz(0.170, 0.797), xyz(0.131, 0.046)).transposed
        let s = p.inverse! * xyz(0.3127, 0.3290)
        return (p * Matrix3.diagonal(s)).inverse!.e
    }

    public init(width: Int, height: Int, samples: [UInt16]) {
        self.width = width
        self.height = height
        self.samples = samples
    }
}

/// A semantic mask to write (DNG 1.6): a SubIFD with NewSubFileType 65540,
/// PhotometricInterpretation 52527 (PhotometricMask), one 8-bit sample per pixel in one
/// strip, SemanticName, optional SemanticInstanceID and MaskSubArea.
public struct SemanticMaskDNG: Sendable {
    public var width: Int
    public var height: Int
    /// Row-major 8-bit values (255 = fully inside).
    public var samples: [UInt8]
    /// SemanticName (52526), e.g. `urn:com:apple:photo:2020:aux:semanticskymatte`.
    public var semanticName: String
    /// SemanticInstanceID (52528).
    public var instanceID: String?
    /// MaskSubArea (52536): top, left, full width, full height.
    public var maskSubArea: [Int]?
    /// Deflate (compression 8) instead of uncompressed.
    public var deflate: Bool

    public init(width: Int, height: Int, samples: [UInt8], semanticName: String, instanceID: String? = nil,
                maskSubArea: [Int]? = nil, deflate: Bool = false) {
        self.width = width
        self.height = height
        self.samples = samples
        self.semanticName = semanticName
        self.instanceID = instanceID
        self.maskSubArea = maskSubArea
        self.deflate = deflate
    }
}

/// The byte order of a written file.
public enum DNGByteOrder: String, Sendable { case littleEndian, bigEndian }

/// Why a DNG could not be written.
public struct DNGWriteError: SceneLinearFailure, Equatable {
    public let path: String
    public var file: String? { path }
    public let reason: String

    public var category: FailureCategory { .outputFailure }
    public var description: String { "cannot write DNG \(path): \(reason)" }
}

/// The earlier name of `RawDNG`, from when it wrote LinearRaw files only.
public typealias LinearRawDNG = RawDNG
