@_exported import DNGColor
@_exported import DNGContainer
@_exported import Demosaic
import Foundation
@_exported import ImageCore
@_exported import EXRExchange
@_exported import ExchangeCore
@_exported import HDF5Exchange
@_exported import ImageGeometry
@_exported import Opcodes
@_exported import Photometry
@_exported import RadianceExchange
@_exported import Linearize
@_exported import RawDecode

/// Which image of a DNG to develop.
public enum ImageSource: String, Sendable, CaseIterable, Codable {
    /// The main raw image (NewSubFileType 0).
    case raw
    /// The enhanced image (NewSubFileType 16) when the file has one, else the main raw image.
    case enhanced
}

/// Options of the DNG → scene-linear conversion.
public struct DevelopOptions: Sendable {
    /// Exposure scaling: `.none` (1.0 = sensor white) or `.baseline` (× 2^(BaselineExposure + BaselineExposureOffset)).
    public var exposure: ExposureMode = .none
    /// Linear Rec.2020 (default) or white-balanced camera RGB.
    public var encoding: ColorEncoding = .linearRec2020
    public var whiteBalance: WhiteBalance = .asShot
    /// Which crop to apply (DefaultCrop and DefaultUserCrop by default).
    public var crop: CropMode = .user
    /// Rotate/mirror to the display orientation (TIFF Orientation, tag 274).
    public var applyOrientation = true
    /// Clipping after each opcode of OpcodeList2/3: `.keepRange` (default: values above 1 from
    /// gain maps are real radiance and are kept; negatives too) or `.dngClip` (clip to 0…1
    /// after every opcode, as the DNG specification's rendering model does).
    public var opcodeClipping: ClippingPolicy = .keepRange
    /// How CFA (Bayer) images become three planes: `.rcd` (default, edge-aware), `.bilinear`,
    /// or `.superpixel` (2×2 binning to half size: no interpolated values, for radiometry).
    public var demosaic: DemosaicMethod = Demosaicer.defaultMethod
    /// Largest raw image accepted, in pixels (`limits.maxPixels`, default 2³⁰).
    public var limits = DecodeLimits()
    /// The main raw image (default) or the enhanced image where present.
    public var source: ImageSource = .raw
    /// Memory one file may need at its peak, estimated from its dimensions before anything
    /// is decoded (see `Pipeline.estimatedPeakBytes`); nil = three quarters of the allocation's memory: physical memory, the cgroup's memory limit or Slurm's, whichever is least.
    public var maxMemoryBytes: Int?
    /// Decode the DNG's semantic masks (sky, skin, ...) onto the output grid as `image.masks`.
    public var includeMasks = true
    /// The raw-data digests the file records: verified while decoding (default), a
    /// mismatch ignored (recorded in the output), or not computed.
    public var digest: DigestPolicy = .verify
    /// For `.luminance` and `.radiance`: the camera's calibration (nil: the estimate from
    /// the exposure metadata), whether it may be applied to another camera body, and the
    /// uncertainty added for other settings than its references'
    /// (`Photometry.luminanceScale`).
    public var calibration: CameraCalibration?
    public var allowOtherCamera = false
    public var settingsUncertainty = Photometry.defaultSettingsUncertainty
    /// A filter the capture was taken through (an ND filter): values in scene-proportional
    /// units (`.normalized`, `.luminance`, `.radiance`) are divided by its transmittance and
    /// its uncertainty joins the scale's (item `filter`). Refused with the sensor-referred
    /// modes (`.none`, `.baseline`), whose 1.0 is the sensor's white.
    public var filter: FilterFactor?
    /// For `.luminance` and `.radiance`: the spectral-mismatch item (a stated uncertainty, or
    /// the calibration's factor for a light source); nil: not in the budget, which says so.
    public var spectral: SpectralTerm?
    /// A lens calibration whose vignetting is divided out in camera RGB (an OpcodeList3
    /// GainMap, `Pipeline.lensCorrected`); refused for another camera, lens or aperture unless
    /// `allowOtherLens`.
    public var lens: LensCalibration?
    public var allowOtherLens = false
    /// A measurement whose charts (a report, an EV map) are drawn beside its passes: its
    /// memory estimate counts them (`DevelopRoute.measurementWithCharts`).
    public var measurementDrawsCharts = false
    /// Told, from any thread, how much of the raw image has gone through Stage 2 (a fraction,
    /// rising in steps of at least 1 %): a progress bar for a long conversion.
    public var progress: DevelopProgress?

    public init(exposure: ExposureMode = .none, encoding: ColorEncoding = .linearRec2020, whiteBalance: WhiteBalance = .asShot) {
        self.exposure = exposure
        self.encoding = encoding
        self.whiteBalance = whiteBalance
    }
}

/// A file that would need more pixels or memory than the configured limits.
public struct LimitError: SceneLinearFailure, Equatable {
    /// Which limit, with the values that exceed it.
    public enum Kind: Equatable, Sendable {
        /// The raw image `ifd` has `width` × `height` pixels, more than `limit` (`--max-pixels`).
        case pixels(ifd: String, width: Int, height: Int, limit: Int)
        /// Developing a `width` × `height` raw image needs about `needed` bytes, more than
        /// `limit` (`--max-memory`).
        case memory(width: Int, height: Int, needed: Int, limit: Int)
        /// Standard input is longer than `limit` bytes (`--max-memory`).
        case standardInput(limit: Int)
    }
    public var path: String
    public var file: String? { path }
    public var kind: Kind
    public init(path: String, _ kind: Kind) {
        self.path = path
        self.kind = kind
    }
    public var category: FailureCategory { .limitExceeded }
    public var description: String { "\(path): too large: \(reason)" }

    /// What is too large, in words.
    public var reason: String {
        switch kind {
        case .pixels(let ifd, let width, let height, let limit):
            return "the raw image (\(ifd)) is \(width)×\(height) pixels, more than the limit of \(limit) (--max-pixels)"
        case .memory(let width, let height, let needed, let limit):
            return "developing the \(width)×\(height) raw image needs about \(Self.gibibytes(needed)) of memory, more than the limit of \(Self.gibibytes(limit)) (--max-memory)"
        case .standardInput(let limit):
            return "standard input is longer than the limit of \(limit) bytes (--max-memory)"
        }
    }

    static func gibibytes(_ bytes: Int) -> String {
        bytes >= 1 << 30 ? String(format: "%.2f GiB", Double(bytes) / 1_073_741_824) : String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }
}

/// Wall-clock time spent in each part of a conversion, in seconds.
public struct StageTimings: Sendable, Codable {
    /// Opening and parsing the DNG container.
    public var container = 0.0
    /// The input's SHA-256 (on a thread of its own, alongside `develop`).
    public var hash = 0.0
    /// Stage 1 to the output samples: decoding, Stage 2, the opcode lists, demosaicing,
    /// colour, crop, scale and orientation, region by region in one pass.
    public var develop = 0.0
    public var export: [String: Double] = [:]

    public init() {}
}

/// The result of developing a DNG: the scene-linear image and how it was made.
public struct DevelopedImage: Sendable {
    public let image: SceneLinearImage
    public let dng: DNGFile
    public let rawIFD: ImageIFD
    public let mapping: LinearizationMapping
    public let color: ColorTransform
    /// The crop, scale and orientation applied.
    public let geometry: GeometryPlan
    public var timings: StageTimings
}

/// The whole data flow: DNG container → Stage 1 → Stage 2 → colour → scene-linear image,
/// and the hand-off to EXR and HDF5.
public enum Pipeline {
    /// Decodes the main raw image of the DNG at `path` into scene-linear light, in `Float`
    /// (what the measurements use), by the one conversion `convert` runs.
    ///
    /// - Throws: a `SceneLinearFailure` naming the file and the problem: `ContainerError`,
    ///   `RawDecodeError`, `LinearizeError`, `OpcodeError`, `ColorError`, `GeometryError`.
    public static func develop(path: String, options: DevelopOptions = DevelopOptions()) throws -> DevelopedImage {
        var timings = StageTimings()
        let dng = try measure(&timings.container) { try DNGFile.open(path: path) }
        return try develop(dng, options: options, timings: timings)
    }

    /// `develop` of a DNG already parsed (e.g. from bytes in memory).
    public static func develop(_ dng: DNGFile, options: DevelopOptions = DevelopOptions(),
                               timings: StageTimings = StageTimings()) throws -> DevelopedImage {
        let s = try stream(dng, options: options, keepClipMask: true, timings: timings, as: Float.self,
                           convert: { source, target in _ = target.initialize(from: source) })
        let image = SceneLinearImage(pixels: ImageBuffer(width: s.width, height: s.height, channels: 3, samples: s.pixels),
                                     clipMask: s.clipMask, encoding: s.color.encoding, exposure: s.exposure, provenance: s.provenance,
                                     masks: s.masks)
        return DevelopedImage(image: image, dng: dng, rawIFD: s.raw, mapping: s.mapping, color: s.color, geometry: s.geometry,
                              timings: s.timings)
    }

    /// The IFD to develop (the main raw image, or the enhanced image when asked for and
    /// present), the main raw image, and a processing note when the source was chosen.
    static func selectImage(_ dng: DNGFile, options: DevelopOptions) throws -> (raw: ImageIFD, main: ImageIFD, notes: [MetadataItem]) {
        let main = try dng.mainRawImage()
        guard options.source == .enhanced else { return (main, main, []) }
        if let enhanced = dng.enhancedImage() {
            return (enhanced, main, [MetadataItem("source", .text("enhanced image \(enhanced.path) (NewSubFileType 16)"))])
        }
        return (main, main, [MetadataItem("source", .text("main raw image \(main.path): the file has no enhanced image"))])
    }

    /// Where the crop and scale tags come from: the developed IFD itself, except for an
    /// enhanced image without its own DefaultCrop, which takes the main raw image's when its
    /// size is the main image's ActiveArea or a whole fraction of it.
    static func geometrySource(raw: ImageIFD, main: ImageIFD, binning: Int) -> (ImageIFD, Int) {
        guard raw.role == .enhancedImage, raw.defaultCropSize == nil, raw.path != main.path else { return (raw, binning) }
        for k in 1...4 where main.activeArea.width == raw.activeArea.width * k && main.activeArea.height == raw.activeArea.height * k {
            return (main, binning * k)
        }
        return (raw, binning)
    }

    /// An upper estimate of the memory developing `raw` whole, stage after stage, needs at its
    /// peak, in bytes (what `estimatedPeakBytes` gives for an image not developed block by
    /// block): the stored samples (2 bytes each up to 16 bits, 4 for wider integers and floats), the Float linear image, for CFA images the demosaiced
    /// planes, the colour-converted and geometry-transformed Float images, the half-float
    /// output and the clip masks. Overflow-safe: saturates at `Int.max`.
    public static func wholeImagePeakBytes(_ raw: ImageIFD) -> Int {
        let pixels = raw.width.multipliedReportingOverflow(by: raw.height)
        guard !pixels.overflow else { return .max }
        let spp = max(1, raw.samplesPerPixel)
        // Stage 1 holds up to 16-bit integers as UInt16, wider integers and floats as 4 bytes.
        let stored = raw.sampleFormat == 3 || (raw.bitsPerSample.first ?? 16) > 16 ? 4 : 2
        // Per pixel: stored 2·spp or 4·spp, linear 4·spp, demosaiced 12 (CFA), colour 12, geometry 12,
        // half output 6, masks 2.
        let perPixel = stored * spp + 4 * spp + (raw.photometric == Photometric.cfa ? 12 : 0) + 12 + 12 + 6 + 2
        let total = pixels.partialValue.multipliedReportingOverflow(by: perPixel)
        return total.overflow ? .max : total.partialValue
    }

    /// The memory limit in effect: the option, or three quarters of the allocation's memory: physical memory, the cgroup's memory limit or Slurm's, whichever is least.
    public static func memoryLimit(_ options: DevelopOptions) -> Int {
        options.maxMemoryBytes ?? Allocation.current.memoryBytes / 4 * 3
    }

    /// Refuses, before any allocation, an image over the pixel limit.
    static func checkPixelLimit(_ raw: ImageIFD, path: String, options: DevelopOptions) throws {
        let pixels = raw.width.multipliedReportingOverflow(by: raw.height)
        if pixels.overflow || pixels.partialValue > options.limits.maxPixels {
            throw LimitError(path: path, .pixels(ifd: raw.path, width: raw.width, height: raw.height, limit: options.limits.maxPixels))
        }
    }

    /// Refuses, before any allocation, an image over the pixel or memory limit (the memory
    /// developing it by `route` needs: `estimatedPeakBytes`; by a plan's memory route when
    /// `planned`; with `extra` bytes besides, e.g. the masks').
    static func checkLimits(_ raw: ImageIFD, path: String, options: DevelopOptions, route: DevelopRoute? = nil,
                            planned: Bool = false, extra: Int = 0) throws {
        try checkPixelLimit(raw, path: path, options: options)
        let need = adding(planned ? estimatedPeakBytes(raw, plannedRoute: route) : estimatedPeakBytes(raw, route: route), extra)
        let limit = memoryLimit(options)
        if need > limit {
            throw LimitError(path: path, .memory(width: raw.width, height: raw.height, needed: need, limit: limit))
        }
    }

    /// The exposure factor of a mode for this file.
    /// - Throws: `RawDecodeError.unsupported` when `normalized` lacks the exposure time,
    ///   f-number or ISO; `PhotometryError` when absolute units cannot be worked out.
    public static func exposureScaling(_ mode: ExposureMode, metadata: DNGMetadata, path: String = "",
                                       options: DevelopOptions = DevelopOptions()) throws -> ExposureScaling {
        let scale = try unfilteredScaling(mode, metadata: metadata, path: path, options: options)
        guard let filter = options.filter else { return scale }
        guard mode == .normalized || mode.isAbsolute else {
            throw PhotometryError(path: path, reason: "a filter factor (\(filter.text)) scales the values to the scene's: use absolute units (luminance, radiance) or exposure-normalised values, not \(mode.rawValue) (1.0 = the sensor's white)",
                                  category: .usage)
        }
        return scale.through(filter)
    }

    static func unfilteredScaling(_ mode: ExposureMode, metadata: DNGMetadata, path: String,
                                  options: DevelopOptions) throws -> ExposureScaling {
        switch mode {
        case .luminance, .radiance:
            var scale = try Photometry.luminanceScale(metadata, path: path, calibration: options.calibration,
                                                      allowOtherCamera: options.allowOtherCamera,
                                                      settingsUncertainty: options.settingsUncertainty)
            if let term = options.spectral { scale = try scale.with(term, calibration: options.calibration, path: path) }
            if mode == .radiance {
                scale.mode = .radiance
                scale.factor /= Photometric.radianceEfficacy
            }
            return scale
        case .none: return .none
        case .baseline:
            return ExposureScaling(mode: .baseline, factor: pow(2, metadata.baselineExposure + metadata.baselineExposureOffset))
        case .normalized:
            let c = metadata.capture
            guard let t = c.exposureTime, let n = c.fNumber, let iso = c.iso, t > 0, n > 0, iso > 0 else {
                throw RawDecodeError.unsupported(path: path, ifd: "IFD0",
                                                 reason: "exposure-normalised values need ExposureTime, FNumber and ISO, which the file lacks")
            }
            return ExposureScaling(mode: .normalized, factor: n * n / (t * iso / 100))
        }
    }

    static func measure<T>(_ slot: inout Double, _ body: () throws -> T) rethrows -> T {
        let start = DispatchTime.now().uptimeNanoseconds
        defer { slot += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
        return try body()
    }

    /// What goes into every output file about the source.
    static func provenance(dng: DNGFile, raw: ImageIFD, mapping: LinearizationMapping, color: ColorTransform,
                           sha256: String) -> ImageProvenance {
        let m = dng.metadata
        var items: [MetadataItem] = []
        func text(_ key: String, _ v: String?) { if let v, !v.isEmpty { items.append(MetadataItem(key, .text(v))) } }
        func number(_ key: String, _ v: Double?) { if let v { items.append(MetadataItem(key, .number(v))) } }
        func numbers(_ key: String, _ v: [Double]?) { if let v, !v.isEmpty { items.append(MetadataItem(key, .numbers(v))) } }
        text("make", m.make)
        text("model", m.model)
        text("uniqueCameraModel", m.uniqueCameraModel)
        text("dngVersion", m.dngVersion)
        number("exposureTime", m.capture.exposureTime)
        number("fNumber", m.capture.fNumber)
        number("iso", m.capture.iso)
        number("focalLength", m.capture.focalLength)
        text("dateTimeOriginal", m.capture.dateTimeOriginal)
        text("lensModel", m.capture.lensModel)
        text("offsetTimeOriginal", m.capture.offsetTimeOriginal)
        text("cameraSerialNumber", m.capture.cameraSerialNumber)
        text("artist", m.capture.artist)
        text("copyright", m.capture.copyright)
        text("imageDescription", m.capture.imageDescription)
        number("baselineExposure", m.baselineExposure)
        number("baselineExposureOffset", m.baselineExposureOffset)
        items.append(MetadataItem("orientation", .integer(m.orientation)))
        numbers("blackLevel", raw.blackLevel)
        items.append(MetadataItem("blackLevelRepeatDim", .integers(raw.blackLevelRepeatDim)))
        numbers("whiteLevel", raw.whiteLevel)
        numbers("maxBlackLevel", mapping.maxBlack)
        items.append(MetadataItem("linearizationTableEntries", .integer(mapping.tableEntries)))
        let a = mapping.activeArea
        items.append(MetadataItem("activeArea", .integers([a.top, a.left, a.bottom, a.right])))
        numbers("noiseProfile", raw.noiseProfile)
        numbers("asShotNeutral", m.calibration.asShotNeutral)
        numbers("asShotWhiteXY", m.calibration.asShotWhiteXY)
        items.append(MetadataItem("calibrationIlluminants", .integers(m.calibration.illuminants)))
        for (i, cm) in m.calibration.colorMatrices.enumerated() { numbers("colorMatrix\(i + 1)", cm) }
        for (i, fm) in m.calibration.forwardMatrices.enumerated() { numbers("forwardMatrix\(i + 1)", fm) }
        if raw.profileGainTableMap != nil {
            text("profileGainTableMap", "present; a local tone-mapping rendering hint, not applied to scene-linear output")
        }
        return ImageProvenance(
            sourceFile: URL(fileURLWithPath: dng.path).lastPathComponent, sourceSHA256: sha256,
            software: SceneLinearVersion.software, sourceIFD: raw.path, whiteBalanceSource: color.whiteBalanceSource,
            whiteXY: [color.whiteXY.x, color.whiteXY.y],
            cameraNeutral: [color.cameraNeutral.x, color.cameraNeutral.y, color.cameraNeutral.z],
            cameraToOutput: color.matrix.e, dng: items)
    }
}
