import Measuring
import Analysis
import Engine
import Foundation

/// A file `FileConversion` wrote.
public struct WrittenOutput: Sendable, Equatable {
    public var format: OutputFormat
    public var path: String
    /// A Radiance picture's lower bounds (and the mask written next to it); nil for the other formats.
    public var lowerBounds: RadianceLowerBounds?

    public init(format: OutputFormat, path: String, lowerBounds: RadianceLowerBounds? = nil) {
        self.format = format
        self.path = path
        self.lowerBounds = lowerBounds
    }
}

/// One DNG converted into its output files (`convert` of one input): converted by the engine
/// (`Pipeline.convert(path:options:targets:export:)`, which chooses the route), or, with
/// measurements into an `/analysis` group or a standard deviation layer, developed here and
/// written to each target.
public struct FileConversion: Sendable {
    public var input: String
    /// The formats and paths to write (`Pipeline.outputPaths`).
    public var targets: [(format: OutputFormat, path: String)]
    public var develop: DevelopOptions
    public var export: ExportOptions
    /// The measurements written into HDF5 outputs' `/analysis` group.
    public var analysis: AnalysisRequest?
    /// Whether to write the per-pixel standard deviation layer from the DNG NoiseProfile
    /// (`Pipeline.standardDeviationLayer`; not into a Radiance picture, which cannot hold it).
    public var standardDeviation: Bool
    /// A directory the targets go into, created once there is something to put in it (a
    /// conversion that writes its one file as the rows are made needs it first, and removes
    /// it again, still empty, when it fails).
    public var directory: String?

    public init(input: String, targets: [(format: OutputFormat, path: String)], develop: DevelopOptions, export: ExportOptions,
                analysis: AnalysisRequest? = nil, standardDeviation: Bool = false, directory: String? = nil) {
        self.input = input
        self.targets = targets
        self.develop = develop
        self.export = export
        self.analysis = analysis
        self.standardDeviation = standardDeviation
        self.directory = directory
    }

    /// Develops and writes the image. Half floats first: a value beyond their range (never
    /// written as infinity) makes the outputs 32-bit float, after `widening` is told, and the
    /// file is converted again.
    /// - Returns: the image (its pixels, unless they went into the file as they were made)
    ///   with its timings, and what was written, in the order of `targets`.
    /// - Throws: what developing, measuring and writing throw; `StandardDeviationError` for
    ///   a standard deviation layer of a DNG without a NoiseProfile.
    public func run(widening: (HalfRangeError) -> Void = { _ in }) throws -> (image: ConvertedImage, outputs: [WrittenOutput]) {
        try export.withFloatFallback(widening: widening) { export in
            guard analysis != nil || standardDeviation else { return try converted(export: export) }
            let (image, groups, deviation) = try measured(export: export)
            var developed = image
            // A directory is created now, once there is something to put in it.
            if let directory { try Self.createDirectory(directory) }
            var outputs: [WrittenOutput] = []
            for (format, path) in targets {
                var bounds = developed.radianceLowerBounds
                if let image = developed.image {
                    let start = DispatchTime.now().uptimeNanoseconds
                    if let deviation, let whole = image as? SceneLinearImage, format != .hdr {
                        try Pipeline.export(whole, deviation: deviation, format: format, to: path, options: export, hdf5Groups: groups)
                    } else {
                        bounds = try Pipeline.export(image, format: format, to: path, options: export, hdf5Groups: groups)
                    }
                    developed.timings.export[format.rawValue] = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                }
                outputs.append(WrittenOutput(format: format, path: path, lowerBounds: format == .hdr ? bounds : nil))
            }
            return (developed, outputs)
        }
    }

    /// The conversion without measurements: the engine's (one file written as its rows are
    /// made, or several from one image developed whole). The directory is needed first, and
    /// removed again, still empty, when the conversion fails.
    private func converted(export: ExportOptions) throws -> (image: ConvertedImage, outputs: [WrittenOutput]) {
        let newDirectory = directory.map { !FileManager.default.fileExists(atPath: $0) } ?? false
        if let directory, newDirectory { try Self.createDirectory(directory) }
        let conversion: Conversion
        do {
            conversion = try Pipeline.convert(path: input, options: develop, targets: targets.map { ($0.format, $0.path) }, export: export)
        } catch {
            if let directory, newDirectory { rmdir(directory) }
            throw error
        }
        let outputs = targets.map { target in
            WrittenOutput(format: target.format, path: target.path,
                          lowerBounds: target.format == .hdr ? conversion.lowerBounds[target.path] : nil)
        }
        return (conversion.converted, outputs)
    }

    /// The image to write, the HDF5 groups of its measurements, and its standard deviation
    /// layer (with `standardDeviation`).
    private func measured(export: ExportOptions) throws -> (ConvertedImage, [HDF5Group], [Float]?) {
        let formats = targets.map(\.format)
        if standardDeviation {
            // The Float image whole, its σ layer from the NoiseProfile, and the analysis (when
            // asked) measured with that layer.
            let d = try Pipeline.develop(path: input, options: develop)
            let layer = try Pipeline.standardDeviationLayer(of: d.image, path: input)
            var groups: [HDF5Group] = []
            if let analysis {
                let measured = AnalysisInput.inRec2020(d.image)
                let input = AnalysisInput(path: input, image: measured, noise: nil,
                                          deviation: DeviationLayer(deviation: layer, image: d.image, measured: measured))
                groups.append(AnalysisOutput.hdf5Group(try Pipeline.analyze(input, request: analysis)))
            }
            return (ConvertedImage(d), groups, layer)
        }
        guard let analysis else { preconditionFailure("measured(export:) without measurements") }
        if !export.needsFloat(formats),
           let (image, results) = try Pipeline.developForOutput(path: input, options: develop,
                                                                keepClipMask: export.needsClipMask(formats), measuring: analysis) {
            // One pass converts and takes the measurements' first look; later passes
            // develop the blocks it kept.
            return (image, [AnalysisOutput.hdf5Group(results)], nil)
        }
        // CFA files, semantic-mask regions and 32-bit outputs: the Float image whole.
        let d = try Pipeline.develop(path: input, options: develop)
        let measured = AnalysisInput(path: input, image: d.image, noise: AnalysisInput.noiseModel(for: d.image))
        return (ConvertedImage(d), [AnalysisOutput.hdf5Group(try Pipeline.analyze(measured, request: analysis))], nil)
    }

    /// Creates `path` (with its parents) unless it exists.
    /// - Throws: `OutputError` when it cannot be created.
    public static func createDirectory(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) { return }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw OutputError(path: path, reason: "cannot create the output directory: \(error.localizedDescription)")
        }
    }
}
