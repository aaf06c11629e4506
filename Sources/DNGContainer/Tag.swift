/// TIFF, TIFF-EP, EXIF and DNG tag numbers this reader interprets (DNG 1.7.1 spec,
/// chapter 4, and TIFF 6.0).
public enum Tag {
    // TIFF 6.0 baseline and extensions
    public static let newSubFileType: UInt16 = 254
    public static let imageWidth: UInt16 = 256
    public static let imageLength: UInt16 = 257
    public static let bitsPerSample: UInt16 = 258
    public static let compression: UInt16 = 259
    public static let photometricInterpretation: UInt16 = 262
    public static let fillOrder: UInt16 = 266
    public static let make: UInt16 = 271
    public static let model: UInt16 = 272
    public static let stripOffsets: UInt16 = 273
    public static let orientation: UInt16 = 274
    public static let samplesPerPixel: UInt16 = 277
    public static let rowsPerStrip: UInt16 = 278
    public static let stripByteCounts: UInt16 = 279
    public static let planarConfiguration: UInt16 = 284
    public static let software: UInt16 = 305
    public static let dateTime: UInt16 = 306
    public static let predictor: UInt16 = 317
    public static let tileWidth: UInt16 = 322
    public static let tileLength: UInt16 = 323
    public static let tileOffsets: UInt16 = 324
    public static let tileByteCounts: UInt16 = 325
    public static let subIFDs: UInt16 = 330
    public static let sampleFormat: UInt16 = 339
    public static let jpegInterchangeFormat: UInt16 = 513
    public static let jpegInterchangeFormatLength: UInt16 = 514
    public static let cfaRepeatPatternDim: UInt16 = 33421
    public static let cfaPattern: UInt16 = 33422
    // EXIF / TIFF-EP
    public static let exposureTime: UInt16 = 33434
    public static let fNumber: UInt16 = 33437
    public static let exifIFD: UInt16 = 34665
    public static let gpsIFD: UInt16 = 34853
    public static let isoSpeedRatings: UInt16 = 34855
    public static let dateTimeOriginal: UInt16 = 36867
    public static let focalLength: UInt16 = 37386
    public static let lensModel: UInt16 = 42036
    public static let imageDescription: UInt16 = 270
    public static let artist: UInt16 = 315
    public static let copyright: UInt16 = 33432
    public static let offsetTimeOriginal: UInt16 = 36881
    public static let subSecTimeOriginal: UInt16 = 37521
    public static let bodySerialNumber: UInt16 = 42033
    // DNG
    public static let dngVersion: UInt16 = 50706
    public static let dngBackwardVersion: UInt16 = 50707
    public static let uniqueCameraModel: UInt16 = 50708
    public static let localizedCameraModel: UInt16 = 50709
    public static let cfaPlaneColor: UInt16 = 50710
    public static let cfaLayout: UInt16 = 50711
    public static let linearizationTable: UInt16 = 50712
    public static let blackLevelRepeatDim: UInt16 = 50713
    public static let blackLevel: UInt16 = 50714
    public static let blackLevelDeltaH: UInt16 = 50715
    public static let blackLevelDeltaV: UInt16 = 50716
    public static let whiteLevel: UInt16 = 50717
    public static let defaultScale: UInt16 = 50718
    public static let defaultCropOrigin: UInt16 = 50719
    public static let defaultCropSize: UInt16 = 50720
    public static let colorMatrix1: UInt16 = 50721
    public static let colorMatrix2: UInt16 = 50722
    public static let cameraCalibration1: UInt16 = 50723
    public static let cameraCalibration2: UInt16 = 50724
    public static let reductionMatrix1: UInt16 = 50725
    public static let reductionMatrix2: UInt16 = 50726
    public static let analogBalance: UInt16 = 50727
    public static let asShotNeutral: UInt16 = 50728
    public static let asShotWhiteXY: UInt16 = 50729
    public static let baselineExposure: UInt16 = 50730
    public static let baselineNoise: UInt16 = 50731
    public static let baselineSharpness: UInt16 = 50732
    public static let bayerGreenSplit: UInt16 = 50733
    public static let linearResponseLimit: UInt16 = 50734
    public static let cameraSerialNumber: UInt16 = 50735
    public static let lensInfo: UInt16 = 50736
    public static let chromaBlurRadius: UInt16 = 50737
    public static let antiAliasStrength: UInt16 = 50738
    public static let dngPrivateData: UInt16 = 50740
    public static let calibrationIlluminant1: UInt16 = 50778
    public static let calibrationIlluminant2: UInt16 = 50779
    public static let bestQualityScale: UInt16 = 50780
    public static let rawDataUniqueID: UInt16 = 50781
    public static let activeArea: UInt16 = 50829
    public static let maskedAreas: UInt16 = 50830
    public static let colorimetricReference: UInt16 = 50879
    public static let cameraCalibrationSignature: UInt16 = 50931
    public static let profileCalibrationSignature: UInt16 = 50932
    public static let extraCameraProfiles: UInt16 = 50933
    public static let asShotProfileName: UInt16 = 50934
    public static let noiseReductionApplied: UInt16 = 50935
    public static let profileName: UInt16 = 50936
    public static let profileHueSatMapDims: UInt16 = 50937
    public static let profileToneCurve: UInt16 = 50940
    public static let profileEmbedPolicy: UInt16 = 50941
    public static let forwardMatrix1: UInt16 = 50964
    public static let forwardMatrix2: UInt16 = 50965
    public static let opcodeList1: UInt16 = 51008
    public static let opcodeList2: UInt16 = 51009
    public static let opcodeList3: UInt16 = 51022
    public static let noiseProfile: UInt16 = 51041
    public static let baselineExposureOffset: UInt16 = 51109
    public static let defaultBlackRender: UInt16 = 51110
    public static let newRawImageDigest: UInt16 = 51111
    public static let rawImageDigest: UInt16 = 50972
    public static let originalRawFileData: UInt16 = 50817
    public static let originalRawFileDigest: UInt16 = 50973
    public static let defaultUserCrop: UInt16 = 51125
    public static let profileGainTableMap: UInt16 = 52525
    public static let semanticName: UInt16 = 52526
    public static let semanticInstanceID: UInt16 = 52528
    public static let calibrationIlluminant3: UInt16 = 52529
    public static let cameraCalibration3: UInt16 = 52530
    public static let colorMatrix3: UInt16 = 52531
    public static let forwardMatrix3: UInt16 = 52532
    public static let illuminantData1: UInt16 = 52533
    public static let illuminantData2: UInt16 = 52534
    public static let illuminantData3: UInt16 = 52535
    public static let maskSubArea: UInt16 = 52536
    public static let profileHueSatMapData3: UInt16 = 52537
    public static let reductionMatrix3: UInt16 = 52538
    public static let rgbTables: UInt16 = 52543
    public static let profileGainTableMap2: UInt16 = 52544
    public static let columnInterleaveFactor: UInt16 = 52547
    public static let imageStats: UInt16 = 52550
    public static let profileDynamicRange: UInt16 = 52551
    public static let profileGroupName: UInt16 = 52552
    public static let jxlDistance: UInt16 = 52553
    public static let jxlEffort: UInt16 = 52554
    public static let jxlDecodeSpeed: UInt16 = 52555

    /// Human-readable names for listing tags.
    public static let names: [UInt16: String] = [
        254: "NewSubFileType", 256: "ImageWidth", 257: "ImageLength", 258: "BitsPerSample", 259: "Compression",
        262: "PhotometricInterpretation", 266: "FillOrder", 270: "ImageDescription", 271: "Make", 272: "Model",
        273: "StripOffsets", 274: "Orientation", 277: "SamplesPerPixel", 278: "RowsPerStrip",
        279: "StripByteCounts", 282: "XResolution", 283: "YResolution", 284: "PlanarConfiguration",
        296: "ResolutionUnit", 305: "Software", 306: "DateTime", 315: "Artist", 317: "Predictor",
        322: "TileWidth", 323: "TileLength", 324: "TileOffsets", 325: "TileByteCounts", 330: "SubIFDs",
        338: "ExtraSamples", 339: "SampleFormat", 347: "JPEGTables", 513: "JPEGInterchangeFormat",
        514: "JPEGInterchangeFormatLength", 529: "YCbCrCoefficients", 530: "YCbCrSubSampling",
        531: "YCbCrPositioning", 532: "ReferenceBlackWhite", 700: "XMP", 33421: "CFARepeatPatternDim",
        33422: "CFAPattern", 33432: "Copyright", 33434: "ExposureTime", 33437: "FNumber", 34665: "ExifIFD",
        34853: "GPSIFD", 34855: "ISOSpeedRatings", 36864: "ExifVersion", 36867: "DateTimeOriginal",
        36868: "DateTimeDigitized", 37386: "FocalLength", 37500: "MakerNote", 42036: "LensModel",
        50706: "DNGVersion", 50707: "DNGBackwardVersion", 50708: "UniqueCameraModel",
        50709: "LocalizedCameraModel", 50710: "CFAPlaneColor", 50711: "CFALayout", 50712: "LinearizationTable",
        50713: "BlackLevelRepeatDim", 50714: "BlackLevel", 50715: "BlackLevelDeltaH", 50716: "BlackLevelDeltaV",
        50717: "WhiteLevel", 50718: "DefaultScale", 50719: "DefaultCropOrigin", 50720: "DefaultCropSize",
        50721: "ColorMatrix1", 50722: "ColorMatrix2", 50723: "CameraCalibration1", 50724: "CameraCalibration2",
        50725: "ReductionMatrix1", 50726: "ReductionMatrix2", 50727: "AnalogBalance", 50728: "AsShotNeutral",
        50729: "AsShotWhiteXY", 50730: "BaselineExposure", 50731: "BaselineNoise", 50732: "BaselineSharpness",
        50733: "BayerGreenSplit", 50734: "LinearResponseLimit", 50735: "CameraSerialNumber", 50736: "LensInfo",
        50737: "ChromaBlurRadius", 50738: "AntiAliasStrength", 50739: "ShadowScale", 50740: "DNGPrivateData",
        50741: "MakerNoteSafety", 50778: "CalibrationIlluminant1", 50779: "CalibrationIlluminant2",
        50780: "BestQualityScale", 50781: "RawDataUniqueID", 50827: "OriginalRawFileName",
        50828: "OriginalRawFileData", 50829: "ActiveArea", 50830: "MaskedAreas", 50831: "AsShotICCProfile",
        50832: "AsShotPreProfileMatrix", 50833: "CurrentICCProfile", 50834: "CurrentPreProfileMatrix",
        50879: "ColorimetricReference", 50931: "CameraCalibrationSignature", 50932: "ProfileCalibrationSignature",
        50933: "ExtraCameraProfiles", 50934: "AsShotProfileName", 50935: "NoiseReductionApplied",
        50936: "ProfileName", 50937: "ProfileHueSatMapDims", 50938: "ProfileHueSatMapData1",
        50939: "ProfileHueSatMapData2", 50940: "ProfileToneCurve", 50941: "ProfileEmbedPolicy",
        50942: "ProfileCopyright", 50964: "ForwardMatrix1", 50965: "ForwardMatrix2",
        50966: "PreviewApplicationName", 50967: "PreviewApplicationVersion", 50968: "PreviewSettingsName",
        50969: "PreviewSettingsDigest", 50970: "PreviewColorSpace", 50971: "PreviewDateTime",
        50972: "RawImageDigest", 50973: "OriginalRawFileDigest", 50974: "SubTileBlockSize",
        50975: "RowInterleaveFactor", 50981: "ProfileLookTableDims", 50982: "ProfileLookTableData",
        51008: "OpcodeList1", 51009: "OpcodeList2", 51022: "OpcodeList3", 51041: "NoiseProfile",
        51089: "OriginalDefaultFinalSize", 51090: "OriginalBestQualityFinalSize", 51091: "OriginalDefaultCropSize",
        51107: "ProfileHueSatMapEncoding", 51108: "ProfileLookTableEncoding", 51109: "BaselineExposureOffset",
        51110: "DefaultBlackRender", 51111: "NewRawImageDigest", 51112: "RawToPreviewGain",
        51125: "DefaultUserCrop", 51177: "DepthFormat", 51178: "DepthNear", 51179: "DepthFar",
        51180: "DepthUnits", 51181: "DepthMeasureType", 51182: "EnhanceParams", 52525: "ProfileGainTableMap",
        52526: "SemanticName", 52528: "SemanticInstanceID", 52529: "CalibrationIlluminant3",
        52530: "CameraCalibration3", 52531: "ColorMatrix3", 52532: "ForwardMatrix3", 52533: "IlluminantData1",
        52534: "IlluminantData2", 52535: "IlluminantData3", 52536: "MaskSubArea", 52537: "ProfileHueSatMapData3",
        52538: "ReductionMatrix3", 52543: "RGBTables", 52544: "ProfileGainTableMap2", 52547: "ColumnInterleaveFactor",
        52548: "ImageSequenceInfo", 52550: "ImageStats", 52551: "ProfileDynamicRange", 52552: "ProfileGroupName",
        52553: "JXLDistance", 52554: "JXLEffort", 52555: "JXLDecodeSpeed",
    ]

    /// The tag's name, or "Tag<n>" for tags this reader does not name.
    public static func name(_ tag: UInt16) -> String { names[tag] ?? "Tag\(tag)" }
}
