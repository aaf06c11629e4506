import Engine
import Analysis
import Foundation

/// What the analysis commands measure in one file.
public struct FileAnalysis: Sendable, Codable {
    public var file: String
    public var sourceSHA256: String
    public var width: Int
    public var height: Int
    public var colorSpace: String
    public var exposureScaling: String
    public var exposureFactor: Double
    /// True when a NoiseProfile gives standard errors and intervals.
    public var noiseModel: Bool
    public var regions: [RegionAnalysis]
    public var ratios: [RadianceRatio]
    /// Set instead of the results when the file could not be measured.
    public var error: String?
    public var errorCategory: String?
}

/// One region of one file.
public struct RegionAnalysis: Sendable, Codable {
    public var name: String
    public var measurement: RegionMeasurement
    public var dynamicRange: DynamicRange
    public var histogram: Histogram?
}

/// The request of an analysis command.
public struct AnalysisRequest: Sendable {
    /// Regions to measure; empty = the whole image (named "image").
    public var regions: [Region] = []
    public var percentiles: [Double] = [1, 5, 25, 75, 95, 99]
    public var histogram: HistogramOptions?
    /// Ratios as (numerator, denominator) region names.
    public var ratios: [(String, String)] = []
    public var ratioQuantity = "Y"
    public var ratioStatistic = RatioStatistic.mean
    public var develop = DevelopOptions()

    public init() {}
}

extension Pipeline {
    /// Measures one file.
    /// - Throws: the loading errors and `AnalysisError` for bad regions or ratios.
    public static func analyze(_ path: String, request: AnalysisRequest) throws -> FileAnalysis {
        let input = try AnalysisInput.load(path, options: request.develop)
        return try analyze(input, request: request)
    }

    /// Measures an image already loaded.
    public static func analyze(_ input: AnalysisInput, request: AnalysisRequest) throws -> FileAnalysis {
        let image = input.image
        let regions = request.regions.isEmpty
            ? [Region(name: "image", shape: .rectangle(PixelRect(width: image.width, height: image.height)))]
            : request.regions
        let percentiles = Array(Set(request.percentiles + [0.1, 99.9])).sorted()
        var results: [RegionAnalysis] = []
        var byName: [String: RegionMeasurement] = [:]
        for region in regions {
            let m = try RegionStatistics.measure(image, region: region, noise: input.noise, percentiles: percentiles)
            var histogram: Histogram?
            if let options = request.histogram {
                histogram = Histogram.compute(image, weights: try region.weights(in: image), options: options)
            }
            results.append(RegionAnalysis(name: region.name, measurement: m,
                                          dynamicRange: DynamicRange.of(m.channels["Y"]!, noise: input.noise), histogram: histogram))
            byName[region.name] = m
        }
        var ratios: [RadianceRatio] = []
        for (n, d) in request.ratios {
            guard let a = byName[n], let b = byName[d] else {
                throw AnalysisError(reason: "ratio \(n)/\(d): no region named \(byName[n] == nil ? n : d)")
            }
            ratios.append(try RadianceRatio.between(a, b, quantity: request.ratioQuantity, statistic: request.ratioStatistic))
        }
        return FileAnalysis(file: input.path, sourceSHA256: image.provenance.sourceSHA256, width: image.width, height: image.height,
                            colorSpace: image.encoding.rawValue, exposureScaling: image.exposure.mode.rawValue,
                            exposureFactor: image.exposure.factor, noiseModel: input.noise != nil, regions: results,
                            ratios: ratios, error: nil, errorCategory: nil)
    }

    /// Measures many files in parallel (as many at a time as there are cores), calling `progress` after each; a file that fails
    /// gives an entry with `error` set instead of stopping the batch. `visit`, when given, sees
    /// each loaded image with its results (file index, image, results) while the image is in
    /// memory, e.g. to draw it; an error it throws marks that file as failed.
    public static func analyze(_ paths: [String], request: AnalysisRequest,
                               progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil,
                               visit: (@Sendable (Int, AnalysisInput, FileAnalysis) throws -> Void)? = nil) -> [FileAnalysis] {
        let counter = ProgressCounter(total: paths.count, report: progress)
        let results = (try? Parallel.map(paths.count) { i -> FileAnalysis in
            defer { counter.step() }
            do {
                let input = try AnalysisInput.load(paths[i], options: request.develop)
                let result = try analyze(input, request: request)
                try visit?(i, input, result)
                return result
            } catch {
                let failure = error as? any SceneLinearFailure
                return FileAnalysis(file: paths[i], sourceSHA256: "", width: 0, height: 0, colorSpace: "", exposureScaling: "",
                                    exposureFactor: 0, noiseModel: false, regions: [], ratios: [],
                                    error: failure?.description ?? "\(error)", errorCategory: failure?.category.name ?? "internal-error")
            }
        }) ?? []
        return results
    }
}
