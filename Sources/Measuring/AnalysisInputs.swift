import Engine
import Analysis
import Foundation

/// An image to measure, with what is known about its noise.
public struct AnalysisInput: Sendable {
    public var path: String
    public var image: SceneLinearImage
    /// From the DNG NoiseProfile, the colour matrix and the exposure factor (nil when the
    /// source has no NoiseProfile).
    public var noise: NoiseModel?
    /// The file's per-pixel standard deviation layer (`merge`, `convert --std`): when
    /// present, the measurements' noise comes from it rather than from `noise`.
    public var deviation: DeviationLayer?

    public init(path: String, image: SceneLinearImage, noise: NoiseModel?, deviation: DeviationLayer? = nil) {
        self.path = path
        self.image = image
        self.noise = noise
        self.deviation = deviation
    }

    /// Loads a DNG (decoded by the pipeline with `options`) or an EXR/HDF5 file written by
    /// `convert` (its recorded NoiseProfile, matrix and exposure factor give the noise model).
    /// - Throws: the pipeline's or readers' errors.
    public static func load(_ path: String, options: DevelopOptions = DevelopOptions()) throws -> AnalysisInput {
        let (image, deviation) = try read(path, options: options)
        try checkUnits(of: image.exposure, path: path, asked: options.exposure)
        return prepared(path: path, image: image, deviation: deviation)
    }

    /// An image in memory (as `read` gives it, or made elsewhere) ready to be measured: in
    /// linear Rec.2020, with its standard deviation layer or else its NoiseProfile's model.
    public static func prepared(path: String, image: SceneLinearImage, deviation: [Float]?) -> AnalysisInput {
        let measured = inRec2020(image)
        let layer = deviation.map { DeviationLayer(deviation: $0, image: image, measured: measured) }
        return AnalysisInput(path: path, image: measured, noise: layer == nil ? noiseModel(for: measured) : nil, deviation: layer)
    }

    /// The image of a DNG (developed with `options`) or of an EXR/HDF5 file this tool wrote
    /// (read under the same limits), as it is stored, and the file's standard deviation
    /// layer when it has one (`merge`, `convert --std`).
    public static func read(_ path: String, options: DevelopOptions = DevelopOptions()) throws -> (image: SceneLinearImage, deviation: [Float]?) {
        let limits = readLimits(options)
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "exr":
            try refuseDevelopOnly(options, path: path)
            return try EXRFile.readSceneLinearWithDeviation(path, limits: limits)
        case "h5", "hdf5":
            try refuseDevelopOnly(options, path: path)
            return try HDF5File.readSceneLinearWithDeviation(path, limits: limits)
        default: return (try Pipeline.develop(path: path, options: options).image, nil)
        }
    }

    /// Whether a file's provenance says it carries a standard deviation layer (`merge`'s,
    /// `convert --std`'s): its measurements read the image whole, with the layer.
    static func hasDeviationLayer(_ image: SceneLinearImage) -> Bool {
        image.provenance.processingValue("merge") != nil || image.provenance.processingValue("standardDeviationLayer") != nil
    }

    /// Refuses a converted file whose units differ from the absolute units asked for: its
    /// values were scaled when it was written (`--units` applies to DNG inputs).
    static func checkUnits(of exposure: ExposureScaling, path: String, asked: ExposureMode) throws {
        guard asked.isAbsolute, exposure.mode != asked else { return }
        throw PhotometryError(path: path, reason: "the file holds values in \(exposure.mode.isAbsolute ? exposure.mode.rawValue : "relative") units (exposure \(exposure.mode.rawValue)), not \(asked.rawValue): --units applies to DNG inputs; convert the DNG with --units \(asked.rawValue), or measure this file without --units")
    }

    /// Refuses, for a file this tool wrote, what applies only when a DNG is developed (a lens
    /// calibration, a filter, the spectral term): the file was developed already, and would be
    /// measured without them, silently.
    static func refuseDevelopOnly(_ options: DevelopOptions, path: String) throws {
        var given: [String] = []
        if options.lens != nil { given.append("--lens") }
        if options.filter != nil { given.append("--filter-factor") }
        if options.spectral != nil { given.append("--spectral-uncertainty or --light-source") }
        guard !given.isEmpty else { return }
        throw PhotometryError(path: path, reason: "\(given.joined(separator: ", ")) \(given.count == 1 ? "applies" : "apply") when a DNG is developed, and this file was written already (its processing notes say what it was developed with): develop the DNG with \(given.count == 1 ? "it" : "them") instead",
                              category: .usage)
    }

    /// The limits an EXR or HDF5 input is read under: the same as for a DNG (--max-pixels,
    /// --max-memory), checked from the header.
    static func readLimits(_ options: DevelopOptions) -> ReadLimits {
        ReadLimits(maxPixels: options.limits.maxPixels, maxBytes: Pipeline.memoryLimit(options))
    }

    /// Whether values in `encoding` are measured as they are: linear Rec.2020, and camera
    /// RGB (no conversion exists); the other colour spaces are converted by `inRec2020`.
    static func measuredAsIs(_ encoding: ColorEncoding) -> Bool {
        encoding == .linearRec2020 || encoding.conversion(to: .linearRec2020) == nil
    }

    /// The image in linear Rec.2020, the encoding the measurements (luminance weights, noise
    /// model) are defined in: files written in another colour space (ACEScg, ACES2065-1,
    /// Rec.709, XYZ) are converted by one exact 3×3 matrix, and `cameraToOutput` with them.
    /// Camera RGB is measured as it is.
    public static func inRec2020(_ image: SceneLinearImage) -> SceneLinearImage {
        guard !measuredAsIs(image.encoding), let m = image.encoding.conversion(to: .linearRec2020) else { return image }
        var out = image
        let f = m.floatEntries
        out.pixels.samples.withUnsafeMutableBufferPointer { p in
            let base = p.baseAddress!
            ColorConversion.convert(f, base, to: base, pixels: image.width * image.height)
        }
        if image.provenance.cameraToOutput.count == 9 {
            out.provenance.cameraToOutput = (m * Matrix3(image.provenance.cameraToOutput)).e
        }
        out.encoding = .linearRec2020
        return out
    }

    /// The noise model of an image from its provenance.
    public static func noiseModel(for image: SceneLinearImage) -> NoiseModel? {
        // A merge of several frames has less noise than its reference frame's profile says
        // (its per-pixel standard deviations are layers of the file).
        if image.provenance.processingValue("merge") != nil { return nil }
        var profile: [Double]?
        switch image.provenance.dngValue("noiseProfile") {
        case .numbers(let n)?: profile = n
        case .number(let n)?: profile = [n]
        default: profile = nil
        }
        let demosaic = image.provenance.processingValue("demosaic")
        let superpixel = demosaic == .text("superpixel")
        var model = NoiseModel(noiseProfile: profile, cameraToOutput: image.provenance.cameraToOutput,
                               exposureFactor: image.exposure.factor, planeVarianceScale: superpixel ? [1, 0.5, 1] : [1, 1, 1])
        // Interpolated Bayer data: a region's mean has the noise of its raw samples only.
        if image.provenance.hasInterpolatedBayer { model?.samplingVarianceScale = [4, 2, 4] }
        return model
    }

    /// Expands directories (their .dng, .exr, .h5 and .hdf5 files, sorted; not recursive) and
    /// keeps files as given.
    /// - Throws: `AnalysisError` for a path that does not exist or a directory with no inputs.
    public static func expand(_ paths: [String]) throws -> [String] {
        var out: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw ContainerError.fileNotFound(path: path)
            }
            guard isDirectory.boolValue else {
                out.append(path)
                continue
            }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            let inputs = names.filter { ["dng", "exr", "h5", "hdf5"].contains(URL(fileURLWithPath: $0).pathExtension.lowercased()) }
                .sorted().map { (path.hasSuffix("/") ? path : path + "/") + $0 }
            guard !inputs.isEmpty else { throw AnalysisError(reason: "\(path) contains no .dng, .exr or .h5 files") }
            out += inputs
        }
        return out
    }
}
