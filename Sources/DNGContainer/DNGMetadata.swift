import ImageCore

/// The colour-calibration tags of the default camera profile (IFD 0; DNG 1.7.1 chapter 6).
/// Matrices are row-major, as stored.
public struct ColorCalibration: Sendable, Codable, Equatable {
    /// CalibrationIlluminant1/2/3 (EXIF LightSource codes); one per calibration set present.
    public var illuminants: [Int]
    /// ColorMatrix1/2/3: XYZ → reference camera, `3·n` values each (n camera planes).
    public var colorMatrices: [[Double]]
    /// CameraCalibration1/2/3 (n×n), `nil` entries when absent.
    public var cameraCalibrations: [[Double]?]
    /// ForwardMatrix1/2/3 (3×n), `nil` entries when absent.
    public var forwardMatrices: [[Double]?]
    /// ReductionMatrix1/2/3 (3×n, only for n > 3), `nil` entries when absent.
    public var reductionMatrices: [[Double]?]
    /// IlluminantData1/2/3 (DNG 1.6) raw bytes when the illuminant is 255 ("other").
    public var illuminantData: [[UInt8]?]
    public var analogBalance: [Double]?
    public var asShotNeutral: [Double]?
    public var asShotWhiteXY: [Double]?
    public var cameraCalibrationSignature: String?
    public var profileCalibrationSignature: String?
    public var profileName: String?

    public init(illuminants: [Int] = [], colorMatrices: [[Double]] = [], cameraCalibrations: [[Double]?] = [],
                forwardMatrices: [[Double]?] = [], reductionMatrices: [[Double]?] = [],
                illuminantData: [[UInt8]?] = [], analogBalance: [Double]? = nil, asShotNeutral: [Double]? = nil,
                asShotWhiteXY: [Double]? = nil, cameraCalibrationSignature: String? = nil,
                profileCalibrationSignature: String? = nil, profileName: String? = nil) {
        self.illuminants = illuminants
        self.colorMatrices = colorMatrices
        self.cameraCalibrations = cameraCalibrations
        self.forwardMatrices = forwardMatrices
        self.reductionMatrices = reductionMatrices
        self.illuminantData = illuminantData
        self.analogBalance = analogBalance
        self.asShotNeutral = asShotNeutral
        self.asShotWhiteXY = asShotWhiteXY
        self.cameraCalibrationSignature = cameraCalibrationSignature
        self.profileCalibrationSignature = profileCalibrationSignature
        self.profileName = profileName
    }
}

/// Capture settings from EXIF / TIFF-EP tags (IFD 0 or the EXIF IFD).
public struct CaptureSettings: Sendable, Codable, Equatable {
    public init(exposureTime: Double? = nil, fNumber: Double? = nil, iso: Double? = nil, focalLength: Double? = nil,
                dateTimeOriginal: String? = nil, lensModel: String? = nil, offsetTimeOriginal: String? = nil,
                artist: String? = nil, copyright: String? = nil, imageDescription: String? = nil,
                cameraSerialNumber: String? = nil, subSecTimeOriginal: String? = nil, gps: GPSPosition? = nil) {
        self.gps = gps
        self.subSecTimeOriginal = subSecTimeOriginal
        self.offsetTimeOriginal = offsetTimeOriginal
        self.artist = artist
        self.copyright = copyright
        self.imageDescription = imageDescription
        self.cameraSerialNumber = cameraSerialNumber
        self.exposureTime = exposureTime
        self.fNumber = fNumber
        self.iso = iso
        self.focalLength = focalLength
        self.dateTimeOriginal = dateTimeOriginal
        self.lensModel = lensModel
    }

    /// Seconds (tag 33434).
    public var exposureTime: Double?
    /// f-number (tag 33437).
    public var fNumber: Double?
    /// ISO speed / photographic sensitivity (tag 34855).
    public var iso: Double?
    /// Millimetres (tag 37386).
    public var focalLength: Double?
    /// "YYYY:MM:DD HH:MM:SS" (tag 36867).
    public var dateTimeOriginal: String?
    public var lensModel: String?
    /// The time zone of DateTimeOriginal, "±HH:MM" (EXIF tag 36881).
    public var offsetTimeOriginal: String?
    /// The fraction of DateTimeOriginal's second, as digits (EXIF tag 37521).
    public var subSecTimeOriginal: String?
    /// Where the capture was made, from the GPS IFD; nil when the file records no usable position.
    public var gps: GPSPosition?
    /// Artist (315), Copyright (33432), ImageDescription (270): descriptive text; a damaged
    /// value is left out rather than failing the file.
    public var artist: String?
    public var copyright: String?
    public var imageDescription: String?
    /// CameraSerialNumber (50735), else EXIF BodySerialNumber (42033).
    public var cameraSerialNumber: String?
}

/// A position from the GPS IFD: degrees north and east (the references applied), metres
/// above sea level (negative below; nil when not recorded).
public struct GPSPosition: Sendable, Codable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var altitude: Double?

    public init(latitude: Double, longitude: Double, altitude: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }
}

/// The camera-level metadata of a DNG (IFD 0).
public struct DNGMetadata: Sendable, Codable, Equatable {
    /// DNGVersion as "1.4.0.0".
    public var dngVersion: String
    public var dngBackwardVersion: String
    public var make: String?
    public var model: String?
    public var uniqueCameraModel: String?
    public var software: String?
    /// Orientation (tag 274), 1...8; 1 when absent.
    public var orientation: Int
    /// BaselineExposure (tag 50730), EV; 0 when absent.
    public var baselineExposure: Double
    /// BaselineExposureOffset (tag 51109), EV; 0 when absent.
    public var baselineExposureOffset: Double
    public var baselineNoise: Double?
    public var baselineSharpness: Double?
    public var noiseReductionApplied: Double?
    /// ColorimetricReference (tag 50879): 0 scene-referred (default), 1 output-referred, 2 output-referred HDR.
    public var colorimetricReference: Int
    public var defaultBlackRender: Int?
    /// Number of points (x, y pairs) in ProfileToneCurve, a rendering hint not applied here.
    public var profileToneCurvePoints: Int?
    public var calibration: ColorCalibration
    public var capture: CaptureSettings

    public init(dngVersion: String, dngBackwardVersion: String, make: String? = nil, model: String? = nil,
                uniqueCameraModel: String? = nil, software: String? = nil, orientation: Int = 1,
                baselineExposure: Double = 0, baselineExposureOffset: Double = 0, baselineNoise: Double? = nil,
                baselineSharpness: Double? = nil, noiseReductionApplied: Double? = nil, colorimetricReference: Int = 0,
                defaultBlackRender: Int? = nil, profileToneCurvePoints: Int? = nil,
                calibration: ColorCalibration, capture: CaptureSettings = CaptureSettings()) {
        self.dngVersion = dngVersion
        self.dngBackwardVersion = dngBackwardVersion
        self.make = make
        self.model = model
        self.uniqueCameraModel = uniqueCameraModel
        self.software = software
        self.orientation = orientation
        self.baselineExposure = baselineExposure
        self.baselineExposureOffset = baselineExposureOffset
        self.baselineNoise = baselineNoise
        self.baselineSharpness = baselineSharpness
        self.noiseReductionApplied = noiseReductionApplied
        self.colorimetricReference = colorimetricReference
        self.defaultBlackRender = defaultBlackRender
        self.profileToneCurvePoints = profileToneCurvePoints
        self.calibration = calibration
        self.capture = capture
    }
}

/// A DNG file: its TIFF structure, camera metadata and every IFD that holds image data.
public struct DNGFile: Sendable {
    /// The newest DNGBackwardVersion this reader accepts.
    public static let supportedBackwardVersion = [1, 7, 1, 0]

    public let file: FileBytes
    public let structure: TIFFStructure
    public let metadata: DNGMetadata
    /// Every IFD with image data, depth first ("IFD0", "IFD0/SubIFD0", ...).
    public let images: [ImageIFD]

    public var path: String { file.path }
    public var byteOrder: ByteOrder { structure.byteOrder }

    /// Opens and parses the file at `path`.
    /// - Throws: `ContainerError` naming the file and what is wrong.
    public static func open(path: String, limits: ParseLimits = ParseLimits()) throws(ContainerError) -> DNGFile {
        try DNGFile(file: FileBytes(path: path), limits: limits)
    }

    /// Parses bytes already mapped or in memory.
    public init(file: FileBytes, limits: ParseLimits = ParseLimits()) throws(ContainerError) {
        var parser = TIFFParser(file: file, limits: limits)
        let structure = try parser.parse()
        let builder = MetadataBuilder(values: EntryValues(file: file, order: structure.byteOrder), file: file)
        self.file = file
        self.structure = structure
        self.metadata = try builder.camera(structure.ifds[0])
        var images: [ImageIFD] = []
        for ifd in structure.allIFDs where ifd.has(Tag.imageWidth) && !ifd.path.hasSuffix("/Exif") {
            images.append(try builder.image(ifd))
        }
        self.images = images
    }

    /// The enhanced image (NewSubFileType 16, DNG 1.6): a LinearRaw version of the main image
    /// already processed by its writer (typically demosaiced and denoised), in the main
    /// image's Stage 3 geometry; nil when the file has none.
    public func enhancedImage() -> ImageIFD? {
        images.first { $0.role == .enhancedImage && $0.photometric == Photometric.linearRaw }
    }

    /// The main raw image: NewSubFileType 0 with CFA or LinearRaw data, the largest if several.
    /// - Throws: `ContainerError.unsupported` when the main image is neither CFA nor
    ///   LinearRaw, `.corrupt` when the file has no image IFD of either kind.
    public func mainRawImage() throws(ContainerError) -> ImageIFD {
        let raw = images.filter { $0.isRaw && $0.role == .mainImage }
        if let best = raw.max(by: { $0.pixelCount < $1.pixelCount }) { return best }
        if let any = images.filter({ $0.isRaw && $0.role != .enhancedImage }).max(by: { $0.pixelCount < $1.pixelCount }) { return any }
        if let main = images.filter({ $0.role == .mainImage }).max(by: { $0.pixelCount < $1.pixelCount }) {
            if main.photometric == -1 {
                throw .corrupt(path: path, ifd: main.path, reason: "the main image has no PhotometricInterpretation (required)")
            }
            throw .unsupported(path: path, ifd: main.path,
                               reason: "the main image has PhotometricInterpretation \(main.photometric) (\(Photometric.name(main.photometric))), not CFA (32803) or LinearRaw (34892)")
        }
        throw .corrupt(path: path, ifd: "all IFDs", reason: "no raw image IFD (PhotometricInterpretation CFA or LinearRaw)")
    }

    /// The bytes of OpcodeList1, 2 or 3 (tags 51008, 51009, 51022) of an image IFD, or nil.
    /// - Throws: `ContainerError.truncated` when the list lies past the end of the file.
    public func opcodeListBytes(_ number: Int, of image: ImageIFD) throws(ContainerError) -> [UInt8]? {
        let tag: UInt16
        switch number {
        case 1: tag = Tag.opcodeList1
        case 2: tag = Tag.opcodeList2
        case 3: tag = Tag.opcodeList3
        default: return nil
        }
        guard let ifd = structure.allIFDs.first(where: { $0.path == image.path }), let entry = ifd.entry(tag) else { return nil }
        return try EntryValues(file: file, order: byteOrder).bytes(entry, in: ifd.path)
    }

    /// The semantic-mask IFDs (NewSubFileType 65540).
    public var semanticMasks: [ImageIFD] { images.filter { $0.role == .semanticMask } }

    /// The mask images that are mapped onto the output as layers: the semantic masks
    /// (NewSubFileType 65540) and the transparency mask (NewSubFileType 4), in file order.
    public var maskIFDs: [ImageIFD] { images.filter { $0.role == .semanticMask || $0.role == .transparencyMask } }
}
