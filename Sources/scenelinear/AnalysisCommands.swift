import Analysis
import ArgumentParser
import Foundation
import SceneLinearKit

/// What the analysis commands measure: inputs, regions, how DNG inputs are developed, the
/// fisheye lens and the limits.
struct SourceOptions: ParsableArguments {
    @Argument(help: "DNG files, EXR/HDF5 files written by `convert`, or directories of them.")
    var inputs: [String]

    @OptionGroup var outputSafety: OutputSafety

    @OptionGroup var regionOptions: RegionOptions

    @OptionGroup var exposureOption: ExposureOption

    @OptionGroup var unitOptions: UnitOptions

    @OptionGroup var demosaicOption: DemosaicOption

    @OptionGroup var sourceImage: SourceImageOption

    @OptionGroup var fisheye: FisheyeOptions

    @OptionGroup var strayLight: StrayLightOptions

    @OptionGroup var limits: LimitOptions

    var regions: [Region] { regionOptions.regions }

    func validate() throws {
        try fisheye.requireGivenCircle("stats, histogram, ratio and report")
        if strayLight.strayLight != nil && fisheye.projection == nil {
            throw ValidationError("--stray-light needs the fisheye's --projection (its angles)")
        }
    }

    func request() throws -> AnalysisRequest {
        var r = AnalysisRequest()
        r.regions = regions
        // DNG inputs decode their semantic masks only when a region measures one.
        r.develop.includeMasks = r.regions.contains(where: \.isMask)
        try unitOptions.apply(to: &r.develop, exposure: exposureOption.exposure)
        demosaicOption.apply(to: &r.develop)
        r.develop.source = sourceImage.source
        limits.apply(to: &r.develop)
        r.fisheye = fisheye.spec
        r.strayLight = strayLight.request
        return r
    }

    /// The input files (directories expanded) and a progress bar when stderr is a terminal
    /// and not `quiet`.
    func files(quiet: Bool) throws -> ([String], (@Sendable (Int, Int) -> Void)?) {
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

    @OptionGroup var style: OutputStyleOptions

    @Flag(help: "Print CSV.")
    var csv = false

    @Option(name: .customLong("ev-map"), help: ArgumentHelp("Also draw a false-colour map of luminance in stops with the regions outlined and clipped pixels in magenta (.png, .svg or .pdf); with several files the name gets -<n> suffixes in input order.", valueName: "path"))
    var evMap: String?

    var json: Bool { style.json }

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
        let (files, progress) = try source.files(quiet: style.quiet)
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
            commandName: "stats",
            abstract: "Statistics of R, G, B and luminance Y per region: mean (± standard error), median, percentiles, spread, clipping, dynamic range.",
            discussion: """
                Values are in the image's units (linear reference values × the exposure factor). \
                Standard errors of the mean and median come from the DNG NoiseProfile (variance \
                S·x + O per camera channel) propagated through the colour matrix; they are absent \
                when the file has no NoiseProfile. Dynamic range: log2 of the 99.9th over the 0.1th \
                percentile of Y, and log2 of the 99.9th percentile over the noise floor (the Y at \
                which the signal equals its noise). Clipped pixels (a camera channel at white) are \
                counted and included in the statistics as lower bounds; see `ratio` for how they \
                turn ratios into bounds. Many files are measured in parallel into one table. \
                --json prints schema scenelinear.analysis/1.
                """)

        @OptionGroup var options: AnalysisOptions

        @Option(help: ArgumentHelp("Percentiles to report, comma-separated (default 1,5,25,75,95,99); exact: the smallest value whose cumulative weight reaches p % (numpy's inverted_cdf for unweighted regions).", valueName: "percentiles"), transform: ArgumentValue.percentiles)
        var percentiles = Percentiles(values: [1, 5, 25, 75, 95, 99])

        func run() throws {
            var results: [FileAnalysis] = []
            try reportingFailures(json: options.json) {
                var request = try options.request()
                request.percentiles = percentiles.values
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
                white after black subtraction, times the exposure factor). --json prints schema \
                scenelinear.analysis/1.
                """)

        @OptionGroup var options: AnalysisOptions

        @OptionGroup var bins: BinsPerStopOption

        @Option(help: "Use N linear bins instead of EV bins.")
        var linear: Int?

        @Option(help: ArgumentHelp("Binned range: low,high (EV, or values with --linear); default automatic.", valueName: "range"), transform: ArgumentValue.range)
        var range: ClosedRange<Double>?

        @Option(help: "Also draw the histogram (.png, .svg or .pdf); with several files or regions the name gets -<n> suffixes.")
        var plot: String?

        func validate() throws {
            if let linear, !(1...100_000).contains(linear) { throw ValidationError("--linear must be 1...100000 bins") }
            guard let range else { return }
            let text = "\(range.lowerBound),\(range.upperBound)"
            if let linear {
                let width = range.upperBound - range.lowerBound
                if !width.isFinite || width / Double(linear) == 0 {
                    throw ValidationError("--range \(text): the bins of a range this wide or narrow cannot be told apart")
                }
            } else if abs(range.lowerBound) > 160 || abs(range.upperBound) > 160 {
                // EV bins: every finite positive Float lies within ±160 EV of 1.0 (2⁻¹⁴⁹ … 2¹²⁸).
                throw ValidationError("--range \(text): EV bounds must lie within -160...160 (every positive 32-bit float is inside)")
            }
        }

        func run() throws {
            var results: [FileAnalysis] = []
            try reportingFailures(json: options.json) {
                var request = try options.request()
                request.histogram = HistogramOptions(scale: linear == nil ? .log2 : .linear, binsPerStop: bins.binsPerStop,
                                                     linearBins: linear ?? 256, range: range)
                request.percentiles = []
                results = try options.run(request)
                print(options.json ? try AnalysisOutput.json(results)
                      : options.csv ? AnalysisOutput.histogramCSV(results) : AnalysisOutput.histogramText(results))
                if let plot { try PlotOutput.writeHistograms(results, to: plot, quiet: options.style.quiet) }
            }
            try exitForFailures(results)
        }
    }

    struct Ratio: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ratio",
            abstract: "Radiance ratios between regions, with 95 % intervals from the NoiseProfile.",
            discussion: """
                By default the first region over the second; --ratio names pairs. The interval \
                propagates each region's noise (DNG NoiseProfile, through the colour matrix) to its \
                mean or median and combines the two on a log scale. When a region contains clipped \
                pixels its radiance is underestimated, so the ratio is reported as a bound: at least \
                (numerator clipped) or at most (denominator clipped) the value, and undetermined \
                when both are. --json prints schema scenelinear.analysis/1.
                """)

        @OptionGroup var options: AnalysisOptions

        @OptionGroup var ratios: RatioOptions

        func validate() throws {
            guard !ratios.ratio.isEmpty || options.source.regions.count >= 2 else {
                throw ValidationError("give two --region options (or --ratio with named regions)")
            }
        }

        func run() throws {
            var results: [FileAnalysis] = []
            try reportingFailures(json: options.json) {
                var request = try options.request()
                request.percentiles = []
                ratios.apply(to: &request)
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
            commandName: "report",
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

        @OptionGroup var quietOption: QuietOption

        @Option(name: .shortAndLong, help: "The report file (.html, .md or .pdf).")
        var output: String

        @Option(help: "html, markdown or pdf (default: from the extension of --output).")
        var format: ReportFormatChoice?

        @OptionGroup var ratios: RatioOptions

        @Option(help: ArgumentHelp("Percentiles in the statistics tables, comma-separated (default 1,50,99).", valueName: "percentiles"),
                transform: ArgumentValue.percentiles)
        var percentiles = Percentiles(values: [1, 50, 99])

        @OptionGroup var bins: BinsPerStopOption

        /// --format, else the format of --output's extension.
        func reportFormat() throws -> AnalysisReport.Format {
            if let format { return format.format }
            guard let f = AnalysisReport.Format(path: output) else {
                throw ValidationError("cannot tell the report format from \(output): use .html, .md or .pdf, or --format")
            }
            return f
        }

        func validate() throws {
            _ = try reportFormat()
        }

        func run() throws {
            var results: [FileAnalysis] = []
            try reportingFailures {
                var request = try source.request()
                request.percentiles = percentiles.values
                request.histogram = HistogramOptions(scale: .log2, binsPerStop: bins.binsPerStop)
                ratios.apply(to: &request)
                let (files, progress) = try source.files(quiet: quietOption.quiet)
                results = try source.limits.withParallelism {
                    try AnalysisReport.write(files, request: request, format: try reportFormat(), to: output, progress: progress)
                }
                if !quietOption.quiet { FileHandle.standardError.write(Data("wrote \(output)\n".utf8)) }
            }
            try exitForFailures(results)
        }
    }
}
