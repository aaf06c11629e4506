import Analysis
import ArgumentParser
import SceneLinearKit

/// `--region`, of the analysis commands, convert --analysis and calibrate.
struct RegionOptions: ParsableArguments {
    @Option(name: .customLong("region"), help: ArgumentHelp("A region, in output coordinates: name=top,left,bottom,right (whole pixels; rows top to bottom − 1, columns left to right − 1), name=top%,left%,bottom%,right% (percentages of the height and width, e.g. sky=0%,0%,30%,100%), name=poly:x1,y1,x2,y2,... (a polygon, pixels) or name=mask:<mask> (a semantic mask by layer name, e.g. mask:sky, or SemanticName URN; its values 0…1 weight the pixels). A region reaching outside the image is refused (exit 64), never clipped. Repeatable. stats, histogram, ratio and report measure each (none: the whole image), convert --analysis measures them besides the whole image, calibrate takes each as a reference, sequence measures each set's mean luminance in each.", valueName: "name=spec"), transform: ArgumentValue.region)
    var regions: [Region] = []
}

/// The ratios of ratio and report: which regions, of what, by which statistic.
struct RatioOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A ratio numerator/denominator of region names (repeatable; default: the first two regions, when there are two or more).", valueName: "numerator/denominator"), transform: ArgumentValue.ratio)
    var ratio: [RatioPair] = []

    @Option(help: "Quantity of the ratios: Y (luminance), R, G or B.")
    var quantity: RatioQuantity = .y

    @Option(help: "Statistic of the ratios: mean or median.")
    var statistic: RatioStatistic = .mean

    /// Sets the ratios of `request`: those given, else the first two regions when there are two.
    func apply(to request: inout AnalysisRequest) {
        request.ratioQuantity = quantity.rawValue
        request.ratioStatistic = statistic
        if !ratio.isEmpty {
            request.ratios = ratio.map(\.pair)
        } else if request.regions.count >= 2 {
            request.ratios = [(request.regions[0].name, request.regions[1].name)]
        }
    }
}

/// `--bins-per-stop` of EV histograms (histogram, report).
struct BinsPerStopOption: ParsableArguments {
    @Option(help: "Histogram bins per stop (EV bins), 1…64.")
    var binsPerStop = 4

    func validate() throws {
        guard (1...64).contains(binsPerStop) else { throw ValidationError("--bins-per-stop must be 1...64") }
    }
}
