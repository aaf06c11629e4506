import Foundation

/// What `Pipeline.convert(path:options:targets:export:)` made: the conversion and, per
/// Radiance picture written, what it records of its lower bounds.
public struct Conversion: Sendable {
    public var converted: ConvertedImage
    public var lowerBounds: [String: RadianceLowerBounds]
}

extension Pipeline {
    /// Converts the DNG at `path` into every target (format, destination): one file written as
    /// its rows are made when the plan allows (`convert(path:options:format:export:to:)`);
    /// several files, or 32-bit ones, from one image developed whole (`Float` for 32-bit
    /// outputs, half floats otherwise) and written in turn. The one conversion verb of `convert`
    /// and batches: they name targets, the engine chooses the route.
    /// - Throws: what developing and writing throw; `HalfRangeError` for a value beyond half
    ///   floats' range (`ExportOptions.withFloatFallback` converts again in floats).
    public static func convert(path: String, options: DevelopOptions, targets: [(OutputFormat, String)],
                               export: ExportOptions) throws -> Conversion {
        let formats = targets.map(\.0)
        if targets.count == 1 && !export.needsFloat(formats) {
            let converted = try convert(path: path, options: options, format: targets[0].0, export: export, to: targets[0].1)
            return Conversion(converted: converted, lowerBounds: converted.radianceLowerBounds.map { [targets[0].1: $0] } ?? [:])
        }
        var converted = export.needsFloat(formats) ? ConvertedImage(try develop(path: path, options: options))
            : ConvertedImage(try developHalf(path: path, options: options, keepClipMask: export.needsClipMask(formats)))
        guard let image = converted.image else { preconditionFailure("an image developed whole has its pixels") }
        var lowerBounds: [String: RadianceLowerBounds] = [:]
        for (format, destination) in targets {
            var seconds = 0.0
            lowerBounds[destination] = try measure(&seconds) { try Pipeline.export(image, format: format, to: destination, options: export) }
            converted.timings.export[format.rawValue] = seconds
        }
        return Conversion(converted: converted, lowerBounds: lowerBounds)
    }

    /// What converting into `targets` asks of the development (`DevelopRequest`).
    public static func request(targets: [(OutputFormat, String)], export: ExportOptions) -> DevelopRequest {
        let formats = targets.map(\.0)
        if export.needsFloat(formats) { return DevelopRequest(output: .image(halfFloats: false)) }
        guard targets.count == 1 else { return DevelopRequest(output: .image(halfFloats: true)) }
        switch formats[0] {
        case .exr: return DevelopRequest(output: .exr(streamable: export.exr.isStreamable))
        case .hdf5: return DevelopRequest(output: .hdf5(streamable: export.hdf5.isStreamable))
        case .hdr: return DevelopRequest(output: .image(halfFloats: false))
        }
    }

    /// What converting the DNG at `path` into `targets` reserves in a batch: the estimate of
    /// its plan's route (with a Stage 1 it collects) and of its masks (0 when the header cannot be read: the conversion
    /// then fails at once).
    public static func estimatedFileBytes(path: String, options: DevelopOptions, targets: [(OutputFormat, String)],
                                          export: ExportOptions) -> Int {
        guard let dng = try? DNGFile.open(path: path), let (raw, _, _) = try? selectImage(dng, options: options),
              let plan = try? plan(dng, options: options, request: request(targets: targets, export: export)) else { return 0 }
        return adding(adding(estimatedFileBytes(raw, plannedRoute: plan.memoryRoute), collectedStage1Bytes(raw, plan: plan)),
                      maskBytes(dng, raw: raw, options: options))
    }
}
