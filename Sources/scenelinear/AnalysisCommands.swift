import Analysis
import ArgumentParser
import Foundation
import SceneLinearKit

extension RatioStatistic: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument {
        case "mean": self = .mean
        case "median": self = .median
        default: return nil
        }
    }
}

/// What the analysis commands measure: inputs, regions and exposure scaling.
struct SourceOptions: ParsableArguments {
    @Argument(help: "DNG files, EXR/HDF5 files written by `convert`, or directories of them.")
    var inputs: [String]

    @OptionGroup var outputSafety: OutputSafety

    @Option(name: .customLong("region"), help: ArgumentHelp("A region, in output coordinates: name=top,left,bottom,right (whole pixels; rows top to bottom − 1, columns left to right − 1), name=top%,left%,bottom%,right% (percentages of the height and width, e.g. sky=0%,0%,30%,100%), name=poly:x1,y1,x2,y2,... (a polygon, pixels) or name=mask:<mask> (a semantic mask by layer name, e.g. mask:sky, or SemanticName URN; its values 0…1 weight the pixels). A region reaching outside the image is refused (exit 64), never clipped. Repeatable; none = the whole image.", valueName: "name=spec"))
    var regions: [String] = []

    @Option(help: "Exposure scaling of DNG inputs in relative units: none, baseline, or normalized (÷ exposure time · ISO/100 / f-number²).")
    var exposure: ExposureMode = .none

    @OptionGroup var unitOptions: UnitOptions

    @Option(help: "CFA demosaicing of DNG inputs: rcd (default), bilinear, or superpixel (2×2 binning, half size, no interpolated values: the choice for radiometry).")
    var demosaic: DemosaicMethod = Demosaicer.defaultMethod

    @Option(help: "Image of DNG inputs to measure: raw, or enhanced (the enhanced image where present; it has no NoiseProfile, so no uncertainties).")
    var source: ImageSource = .raw

    @Flag(name: .shortAndLong, help: "No progress bar and no 'wrote ...' lines; the results and errors are still printed.")
    var quiet = false

    @Option(help: "A fisheye image: weight every pixel by its solid angle under this projection (equidistant, equisolid, orthographic, stereographic), so that statistics are per steradian (docs/fisheye.md).")
    var projection: FisheyeProjection?

    @Option(help: "With --projection: the full field of view across the image circle, degrees (default 180).")
    var fov: Double = 180

    @Option(help: ArgumentHelp("With --projection: the image circle, x,y,r in output pixels (default: inscribed, centred).", valueName: "x,y,r"))
    var circle: String?

    @OptionGroup var limits: LimitOptions

    func validate() throws {
        for r in regions { _ = try parsedRegion(r) }
        if let projection {
            guard fov > 0 && fov <= projection.maximumFieldOfView else {
                throw ValidationError("--fov must be in (0, \(projection.maximumFieldOfView)] degrees for --projection \(projection.rawValue)")
            }
            if let circle, parsedCircle(circle) == nil {
                throw ValidationError("--circle must be x,y,r (pixels, r > 0)")
            }
        } else if circle != nil {
            throw ValidationError("--circle needs --projection")
        }
    }

    func parsedRegion(_ text: String) throws -> Region {
        do { return try Region.parse(text) } catch let e as AnalysisError { throw ValidationError(e.reason) }
    }

    func request() throws -> AnalysisRequest {
        var r = AnalysisRequest()
        r.regions = try regions.map(parsedRegion)
        // DNG inputs decode their semantic masks only when a region measures one.
        r.develop.includeMasks = r.regions.contains(where: \.isMask)
        try unitOptions.apply(to: &r.develop, exposure: exposure)
        r.develop.demosaic = demosaic
        r.develop.source = source
        try limits.apply(to: &r.develop)
        r.fisheye = projection.map { FisheyeSpec(projection: $0, fieldOfView: fov, circle: circle.flatMap(parsedCircle)) }
        return r
    }

    /// The input files (directories expanded) and a progress bar when stderr is a terminal.
    func files() throws -> ([String], (@Sendable (Int, Int) -> Void)?) {
        let files = try AnalysisInput.expand(inputs)
        if files.count > 1, ProcessInfo.processInfo.environment["SLURM_ARRAY_TASK_ID"] != nil {
            // Not sharded: say so rather than let N tasks measure the same files N times.
            FileHandle.standardError.write(Data("scenelinear: note: the analysis commands are not split across a job array: every task of a job array measures every input (\(files.count) here); measure at scale with convert --analysis (docs/batch.md)\n".utf8))
        }
        let showProgress = !quiet && files.count > 1 && isatty(STDERR_FILENO) == 1
        return (files, showProgress ? progressBar : nil)
    }
}

/// Options shared by stats, histogram and ratio.
struct AnalysisOptions: ParsableArguments {
    @OptionGroup var source: SourceOptions

    @Flag(help: "Print JSON (schema scenelinear.analysis/1).")
    var json = false

    @Flag(help: "Print CSV.")
    var csv = false

    @Option(name: .customLong("ev-map"), help: ArgumentHelp("Also draw a false-colour map of luminance in stops with the regions outlined and clipped pixels in magenta (.png, .svg or .pdf); with several files the name gets -<n> suffixes in input order.", valueName: "path"))
    var evMap: String?

    func validate() throws {
        guard !(json && csv) else { throw ValidationError("--json and --csv exclude each other") }
        if let evMap {
            let ext = URL(fileURLWithPath: evMap).pathExtension.lowercased()
            guard ["png", "svg", "pdf"].contains(ext) else { throw ValidationError("--ev-map must end in .png, .svg or .pdf") }
        }
    }

    func request() throws -> AnalysisRequest { try source.request() }

    /// Runs the analysis over every input with a progress bar on a terminal.
    func run(_ request: AnalysisRequest) throws -> [FileAnalysis] {
        try source.limits.withParallelism { try analyze(request) }
    }

    private func analyze(_ request: AnalysisRequest) throws -> [FileAnalysis] {
        let (files, progress) = try source.files()
        guard let evMap else { return Pipeline.analyze(files, request: request, progress: progress) }
        let url = URL(fileURLWithPath: evMap)
        let stem = url.deletingPathExtension().path, ext = url.pathExtension
        let regions = request.regions
        let many = files.count > 1
        return Pipeline.analyze(files, request: request, progress: progress, pictureSize: 1200) { i, picture, _ in
            let target = many ? "\(stem)-\(i + 1).\(ext)" : evMap
            let map = AnalysisCharts.evMap(picture, title: URL(fileURLWithPath: picture.path).lastPathComponent, regions: regions,
                                           maxSize: 1200)
            try AnalysisCharts.write({ PlotRenderer.render(map, format: $0) }, to: target)
        }
    }
}

/// Draws "[#####.....] 3/10 files" on stderr, ending the line when done.
@Sendable func progressBar(done: Int, total: Int) {
    let width = 30
    let filled = width * done / max(total, 1)
    let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
    FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total) files".utf8))
    if done == total { FileHandle.standardError.write(Data("\n".utf8)) }
}

/// Exits with the first failed file's code after everything has been printed.
func exitForFailures(_ results: [FileAnalysis]) throws {
    guard let failed = results.first(where: { $0.error != nil }) else { return }
    let code = FailureCategory.allCases.first { $0.name == failed.errorCategory }?.exitCode ?? 1
    FileHandle.standardError.write(Data("scenelinear: \(results.filter { $0.error != nil }.count) of \(results.count) files failed; first: \(failed.error ?? "")\n".utf8))
    throw ExitCode(code)
}

extension SceneLinearCommand {
    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Statistics of R, G, B and luminance Y per region: mean (± standard error), median, percentiles, spread, clipping, dynamic range.",
            discussion: """
                Values are in the image's units (linear reference values × the exposure factor). \
                Standard errors of the mean and median come from the DNG NoiseProfile (variance \
                S·x + O per camera channel) propagated through the colour matrix; they are absent \
                when the file has no NoiseProfile. Dynamic range: log2 of the 99.9th over the 0.1th \
                percentile of Y, and log2 of the 99.9th percentile over the noise floor (the Y at \
                which the signal equals its noise). Clipped pixels (a camera channel at white) are \
                counted and included in the statistics as lower bounds; see `ratio` for how they \
                turn ratios into bounds. Many files are measured in parallel into one table.
                """)

        @OptionGroup var options: AnalysisOptions

        @Option(help: "Percentiles to report, comma-separated; exact: the smallest value whose cumulative weight reaches p % (numpy's inverted_cdf for unweighted regions).")
        var percentiles: String = "1,5,25,75,95,99"

        func parsedPercentiles() throws -> [Double] {
            let values = percentiles.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard values.allSatisfy({ $0 != nil && (0...100).contains($0!) }) else {
                throw ValidationError("--percentiles must be numbers between 0 and 100")
            }
            return values.map { $0! }
        }

        func validate() throws { _ = try parsedPercentiles() }

        func run() throws {
            var results: [FileAnalysis] = []
            try reportingFailures(json: options.json) {
                var request = try options.request()
                request.percentiles = try parsedPercentiles()
                results = try options.run(request)
                let p = request.percentiles
                print(options.json ? try AnalysisOutput.json(results)
                      : options.csv ? AnalysisOutput.statisticsCSV(results, percentiles: p)
                      : AnalysisOutput.statisticsText(results, percentiles: p))
            }
            try exitForFailures(results)
        }
    }

    struct HistogramCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "histogram",
            abstract: "Histograms of R, G, B and Y per region, in EV (log2) or linear bins.",
            discussion: """
                Clipped pixels (a camera channel at white), zeros, negatives, and values below or \
                above the range are counted separately, never folded into the end bins: the counts \
                of every category add up to the region's pixels. In EV bins, 0 EV is 1.0 (sensor \
                white after black subtraction, times the exposure factor).
                """)

        @OptionGroup var options: AnalysisOptions

        @Option(help: "Bins per stop (EV scale).")
        var binsPerStop = 4

        @Option(help: "Use N linear bins instead of EV bins.")
        var linear: Int?

        @Option(help: "Binned range: low,high (EV, or values with --linear); default automatic.")
        var range: String?

        @Option(help: "Also draw the histogram (.png, .svg or .pdf); with several files or regions the name gets -<n> suffixes.")
        var plot: String?

        func parsedRange() throws -> ClosedRange<Double>? {
            guard let range else { return nil }
            let v = range.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard v.count == 2, v.allSatisfy(\.isFinite), v[0] < v[1] else {
                throw ValidationError("--range must be low,high (finite numbers) with low < high, not \(range)")
            }
            if linear == nil {
                // EV bins: every finite positive Float lies within ±160 EV of 1.0 (2⁻¹⁴⁹ … 2¹²⁸).
                guard v.allSatisfy({ abs($0) <= 160 }) else {
                    throw ValidationError("--range \(range): EV bounds must lie within -160...160 (every positive 32-bit float is inside)")
                }
            } else if !(v[1] - v[0]).isFinite || (v[1] - v[0]) / Double(linear!) == 0 {
                throw ValidationError("--range \(range): the bins of a range this wide or narrow cannot be told apart")
            }
            return v[0]...v[1]
        }

        func validate() throws {
            _ = try parsedRange()
            guard (1...64).contains(binsPerStop) else { throw ValidationError("--bins-per-stop must be 1...64") }
            if let linear, !(1...100_000).contains(linear) { throw ValidationError("--linear must be 1...100000 bins") }
        }

        func run() throws {
            var results: [FileAnalysis] = []
            try reportingFailures(json: options.json) {
                var request = try options.request()
                request.histogram = HistogramOptions(scale: linear == nil ? .log2 : .linear, binsPerStop: binsPerStop,
                                                     linearBins: linear ?? 256, range: try parsedRange())
                request.percentiles = []
                results = try options.run(request)
                print(options.json ? try AnalysisOutput.json(results)
                      : options.csv ? AnalysisOutput.histogramCSV(results) : AnalysisOutput.histogramText(results))
                if let plot { try PlotOutput.writeHistograms(results, to: plot) }
            }
            try exitForFailures(results)
        }
    }

    struct Ratio: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Radiance ratios between regions, with 95 % intervals from the NoiseProfile.",
            discussion: """
                By default the first region over the second; --ratio names pairs. The interval \
                propagates each region's noise (DNG NoiseProfile, through the colour matrix) to its \
                mean or median and combines the two on a log scale. When a region contains clipped \
                pixels its radiance is underestimated, so the ratio is reported as a bound: at least \
                (numerator clipped) or at most (denominator clipped) the value, and undetermined \
                when both are.
                """)

        @OptionGroup var options: AnalysisOptions

        @Option(help: "A ratio numerator/denominator of region names (repeatable; default: the first two regions).")
        var ratio: [String] = []

        @Option(help: "Quantity: Y (luminance), R, G or B.")
        var quantity = "Y"

        @Option(help: "Statistic: mean or median.")
        var statistic: RatioStatistic = .mean

        func validate() throws {
            guard ["Y", "R", "G", "B"].contains(quantity) else { throw ValidationError("--quantity must be Y, R, G or B") }
            guard !ratio.isEmpty || options.source.regions.count >= 2 else {
                throw ValidationError("give two --region options (or --ratio with named regions)")
            }
            for r in ratio where r.split(separator: "/").count != 2 { throw ValidationError("--ratio must be numerator/denominator") }
        }

        func run() throws {
            var results: [FileAnalysis] = []
            try reportingFailures(json: options.json) {
                var request = try options.request()
                request.percentiles = []
                request.ratioQuantity = quantity
                request.ratioStatistic = statistic
                request.ratios = ratio.isEmpty ? [(request.regions[0].name, request.regions[1].name)]
                    : ratio.map { let p = $0.split(separator: "/").map(String.init); return (p[0], p[1]) }
                results = try options.run(request)
                if options.json {
                    print(try AnalysisOutput.json(results))
                } else if options.csv {
                    print(AnalysisOutput.ratiosCSV(results))
                } else {
                    for f in results {
                        if let e = f.error { print("\(f.file): error: \(e)"); continue }
                        print("\(f.file)\(f.noiseModel ? "" : " (no NoiseProfile: no interval)")")
                        for r in f.ratios { print("  " + AnalysisOutput.ratioText(r)) }
                    }
                }
            }
            try exitForFailures(results)
        }
    }
}

extension SceneLinearCommand {
    struct Report: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write an HTML, Markdown or PDF report: EV map with regions, statistics, dynamic range, ratios with intervals, histograms.",
            discussion: """
                One section per input file: its provenance (path, SHA-256, size, colour encoding, \
                exposure scaling, whether a NoiseProfile gives uncertainties), a false-colour map of \
                luminance in stops with the regions outlined and clipped pixels in magenta, a table \
                of R, G, B and Y statistics per region, the dynamic range of Y, the radiance ratios \
                (with 95 % intervals, or marked as a bound when a region holds clipped pixels) and \
                a histogram chart per region in EV bins. An HTML report is one self-contained file \
                (charts embedded); a Markdown report puts its charts in <name>_files/ beside it; a \
                PDF report is A4 pages with the charts as vector drawings and the text in embedded \
                fonts (wide tables are split across several). The format follows the extension \
                (.html, .md, .pdf) unless --format says otherwise. A \
                file that cannot be measured appears in the report with its error, and the exit \
                code is that of the first failure once the report is written.
                """)

        @OptionGroup var source: SourceOptions

        @Option(name: .shortAndLong, help: "The report file (.html, .md or .pdf).")
        var output: String

        @Option(help: "html, markdown or pdf (default: from the extension of --output).")
        var format: String?

        @Option(help: "A ratio numerator/denominator of region names (repeatable; default: the first two regions, when there are two or more).")
        var ratio: [String] = []

        @Option(help: "Quantity of the ratios: Y (luminance), R, G or B.")
        var quantity = "Y"

        @Option(help: "Statistic of the ratios: mean or median.")
        var statistic: RatioStatistic = .mean

        @Option(help: "Percentiles in the statistics tables, comma-separated.")
        var percentiles: String = "1,50,99"

        @Option(help: "Histogram bins per stop.")
        var binsPerStop = 4

        func reportFormat() throws -> AnalysisReport.Format {
            if let format {
                switch format.lowercased() {
                case "html": return .html
                case "markdown", "md": return .markdown
                case "pdf": return .pdf
                default: throw ValidationError("--format must be html, markdown or pdf")
                }
            }
            guard let f = AnalysisReport.Format(path: output) else {
                throw ValidationError("cannot tell the report format from \(output): use .html, .md or .pdf, or --format")
            }
            return f
        }

        func validate() throws {
            _ = try reportFormat()
            guard ["Y", "R", "G", "B"].contains(quantity) else { throw ValidationError("--quantity must be Y, R, G or B") }
            for r in ratio where r.split(separator: "/").count != 2 { throw ValidationError("--ratio must be numerator/denominator") }
            guard (1...64).contains(binsPerStop) else { throw ValidationError("--bins-per-stop must be 1...64") }
            let values = percentiles.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard values.allSatisfy({ $0 != nil && (0...100).contains($0!) }) else {
                throw ValidationError("--percentiles must be numbers between 0 and 100")
            }
        }

        func run() throws {
            var results: [FileAnalysis] = []
            try reportingFailures {
                var request = try source.request()
                request.percentiles = percentiles.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                request.histogram = HistogramOptions(scale: .log2, binsPerStop: binsPerStop)
                request.ratioQuantity = quantity
                request.ratioStatistic = statistic
                if !ratio.isEmpty {
                    request.ratios = ratio.map { let p = $0.split(separator: "/").map(String.init); return (p[0], p[1]) }
                } else if request.regions.count >= 2 {
                    request.ratios = [(request.regions[0].name, request.regions[1].name)]
                }
                let (files, progress) = try source.files()
                results = try source.limits.withParallelism {
                    try AnalysisReport.write(files, request: request, format: try reportFormat(), to: output, progress: progress)
                }
                if !source.quiet { FileHandle.standardError.write(Data("wrote \(output)\n".utf8)) }
            }
            try exitForFailures(results)
        }
    }
}
