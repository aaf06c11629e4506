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
    /// The unit of every value (`ExposureMode.unitsText`).
    public var units: String = ""
    /// For absolute units: how the scale was obtained and its relative standard uncertainty.
    public var scaleSource: String?
    public var scaleRelativeUncertainty: Double?
    /// True when the noise is known (a NoiseProfile, or the file's standard deviation layer):
    /// standard errors and intervals.
    public var noiseModel: Bool
    /// Where the noise comes from: `profile` (the NoiseProfile) or `layer` (the file's
    /// standard deviation layer); nil when it is not known.
    public var noiseSource: UncertaintyBudget.NoiseSource? = nil
    public var regions: [RegionAnalysis]
    public var ratios: [RadianceRatio]
    /// Set instead of the results when the file could not be measured.
    public var error: String?
    public var errorCategory: String?
}

extension FileAnalysis {
    /// The unit's symbol: "cd/m²", "W·sr⁻¹·m⁻²", or "" for relative values.
    public var unitSymbol: String { ExposureMode(rawValue: exposureScaling)?.unitSymbol ?? "" }

    /// "exposure none ×1", or for absolute units the unit, the scale and its origin.
    public var scaleText: String {
        guard !unitSymbol.isEmpty else { return "exposure \(exposureScaling) ×\(String(format: "%.6g", exposureFactor))" }
        var s = "units \(unitSymbol) (\(String(format: "%.6g", exposureFactor)) per linear reference value"
        if let u = scaleRelativeUncertainty { s += String(format: " ± %.3g %%", 100 * u) }
        if let source = scaleSource { s += "; \(source)" }
        return s + ")"
    }
}

/// One region of one file.
public struct RegionAnalysis: Sendable, Codable {
    public var name: String
    public var measurement: RegionMeasurement
    public var dynamicRange: DynamicRange
    public var histogram: Histogram?
    /// In absolute units: the uncertainty budgets of Y's mean and median, then of the means
    /// of R, G and B.
    public var budgets: [UncertaintyBudget]?
    /// Pixels of the region whose values are not finite numbers (NaN or infinity, in a file
    /// another program wrote): left out of every statistic.
    public var nonFinitePixels = 0
    /// The means (and sums) were taken over the CFA image's raw sites (`SiteLayout`), so the
    /// demosaic cannot bias them; the other statistics are of the demosaiced pixels.
    public var meanFromRawSites = false
    /// With stated stray light (`AnalysisRequest.strayLight`): the region's sources, flagged
    /// pixels and the bound its budgets' lower ends were lowered by.
    public var strayLight: RegionStrayLight?

    public init(name: String, measurement: RegionMeasurement, dynamicRange: DynamicRange, histogram: Histogram?,
                budgets: [UncertaintyBudget]?, nonFinitePixels: Int = 0, meanFromRawSites: Bool = false) {
        self.name = name
        self.measurement = measurement
        self.dynamicRange = dynamicRange
        self.histogram = histogram
        self.budgets = budgets
        self.nonFinitePixels = nonFinitePixels
        self.meanFromRawSites = meanFromRawSites
    }
}

extension FileAnalysis {
    /// Each region's stray light set, and its budgets' 95 % lower ends lowered by the bound
    /// (the veiling light may have lifted the value by up to that share).
    mutating func apply(_ stray: [String: RegionStrayLight]) {
        for k in regions.indices {
            guard let s = stray[regions[k].name] else { continue }
            regions[k].strayLight = s
            guard s.bound > 0, var budgets = regions[k].budgets else { continue }
            for b in budgets.indices {
                if let low = budgets[b].low95 { budgets[b].low95 = low - abs(budgets[b].value) * s.bound }
                budgets[b].notIncluded.append(String(format: "stray light: up to %.3g %% of the value may be veiling light from bright sources within the stated angle (the 95 %% lower end is lowered by it)", 100 * s.bound))
            }
            regions[k].budgets = budgets
        }
    }
}

/// The uncertainty of one statistic in absolute units, line by line (GUM: uncorrelated
/// relative terms of a product add in quadrature), with a 95 % interval: value ·
/// exp(±1.96 u) when the scale dominates and the value is positive (log-normal: the scale
/// is a factor, and an uncertainty of 25 % must not reach zero), value ± 1.96 · |value| · u
/// when the noise dominates (noise adds to the value: a region's mean is normal).
public struct UncertaintyBudget: Sendable, Codable, Equatable {
    public struct Item: Sendable, Codable, Equatable {
        public var name: String
        /// Relative standard uncertainty (k = 1).
        public var relative: Double
        public var note: String
    }
    public var quantity: String
    public var statistic: String
    public var value: Double
    public var items: [Item]
    /// What the budget leaves out, said plainly (e.g. noise, for a file without a NoiseProfile).
    public var notIncluded: [String]
    public var relativeStandardUncertainty: Double
    public var standardUncertainty: Double
    /// What `value` is (`ResultKind`): a bound has only its one 95 % end (`low95` for a lower
    /// bound: the true value is above it with 97.5 % confidence), an undetermined value none.
    public var kind: ResultKind
    public var low95: Double?
    public var high95: Double?

    /// The budget of `value` from its noise (standard error `noise`, nil without a
    /// NoiseProfile) and the scale's uncertainty: its parts when known, else the whole.
    /// `noiseSource` says where the noise came from (the NoiseProfile, or the file's
    /// standard deviation layer).
    public static func of(quantity: String, statistic: String, value: Double, noise: Double?, scale exposure: ExposureScaling,
                          demosaic: String?, kind: ResultKind = .value, noiseSource: NoiseSource = .profile) -> UncertaintyBudget {
        let scaleSource = exposure.source ?? "not recorded", scale = exposure.relativeUncertainty ?? 0
        var items: [Item] = []
        var notIncluded: [String] = []
        if let noise, value != 0 {
            var note = noiseSource == .profile
                ? "photon and read noise from the NoiseProfile, propagated through the colour matrix (quantisation included where the profile's read term holds it)"
                : "from the file's per-pixel standard deviation layer (std_R, std_G, std_B), propagated through the colour matrix"
            if let demosaic, demosaic != "superpixel" {
                note += "; counted over the raw samples of each colour in the region, which \(demosaic) interpolation spreads over several pixels"
            }
            items.append(Item(name: "noise", relative: abs(noise / value), note: note))
        } else {
            notIncluded.append("noise: the file has no NoiseProfile")
        }
        if let parts = exposure.uncertaintyParts, !parts.isEmpty {
            items += parts.map { Item(name: $0.name, relative: $0.relative, note: $0.note) }
            if exposure.mode.isAbsolute && !parts.contains(where: { $0.name == "spectral mismatch" }) {
                notIncluded.append("spectral mismatch: not stated (--spectral-uncertainty, or --light-source with a calibration's factors); the interval holds for light of the kind the scale was made under")
            }
        } else {
            items.append(Item(name: "scale", relative: scale, note: scaleSource))
        }
        let u = items.map { $0.relative * $0.relative }.reduce(0, +).squareRoot()
        let s = abs(value) * u
        let noiseDominates = (items.first { $0.name == "noise" }?.relative ?? 0) > scale
        let (low, high) = value > 0 && !noiseDominates ? (value * exp(-1.96 * u), value * exp(1.96 * u))
                                                       : (value - 1.96 * s, value + 1.96 * s)
        if !kind.isValue && kind != .clippingUnknown {
            notIncluded.append("the clipped pixels' true values: the \(statistic) is \(kind == .undetermined ? "undetermined" : "a " + kind.words)")
        }
        return UncertaintyBudget(quantity: quantity, statistic: statistic, value: value, items: items, notIncluded: notIncluded,
                                 relativeStandardUncertainty: u, standardUncertainty: s, kind: kind,
                                 low95: kind == .upperBound || kind == .undetermined ? nil : low,
                                 high95: kind == .lowerBound || kind == .undetermined ? nil : high)
    }

    /// Where a statistic's noise term comes from.
    public enum NoiseSource: String, Sendable, Codable {
        /// The DNG NoiseProfile (a DNG, or a file `convert` wrote that records it).
        case profile
        /// The file's per-pixel standard deviation layer (`merge`, `convert --std`).
        case layer
    }
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
    /// A fisheye lens: every region's pixels are then weighted by their solid angle
    /// (statistics per steradian, not per pixel; docs/fisheye.md).
    public var fisheye: FisheyeSpec?
    /// The lens's stated stray light (needs `fisheye`): each region lists its part
    /// (`RegionStrayLight`).
    public var strayLight: StrayLightRequest?

    public init() {}
}

extension RegionMeasurement {
    /// Replaces the means of R, G, B and Y by their means over the raw sites of a CFA image
    /// (`SiteLayout`); false (nothing changed) without the sums it needs.
    mutating func useRawSiteMeans(_ layout: SiteLayout) -> Bool {
        guard let parity = paritySums, layout.covers(parity), let weight = channels["Y"]?.weight, weight > 0 else { return false }
        let rgb = layout.outputSums(parity) / weight
        let means = ["R": rgb.x, "G": rgb.y, "B": rgb.z, "Y": (rgb * Rec2020.luminanceWeights).sum()]
        for (q, mean) in means { channels[q]?.mean = mean }
        return true
    }

    /// Replaces the standard errors of the mean and median of R, G, B and Y by those the
    /// file's standard deviation layer gives over `selection` (`DeviationLayer`).
    mutating func useStandardErrors(of layer: DeviationLayer, selection: PixelSelection) {
        let variance = layer.regionVariance(layer.weightedSquares(selection))
        for (q, name) in RegionStatistics.quantities.enumerated() {
            guard var s = channels[name], s.weight > 0 else { continue }
            s.meanStandardError = max(variance[q], 0).squareRoot() / s.weight
            s.medianStandardError = s.meanStandardError.map { $0 * (Double.pi / 2).squareRoot() }
            channels[name] = s
        }
    }
}

extension Pipeline {
    /// Measures one file.
    /// - Throws: the loading errors and `AnalysisError` for bad regions or ratios.
    public static func analyze(_ path: String, request: AnalysisRequest) throws -> FileAnalysis {
        try analyze(path, request: request, picture: nil).analysis
    }

    /// Measures one file and, when `picture` gives an EV map's size, keeps what its charts
    /// need (`AnalysisPicture`).
    /// `pictureReady` gets the picture as soon as it is complete: after the first of the
    /// measurement's passes (so that its chart can be drawn while the later passes run).
    static func analyze(_ path: String, request: AnalysisRequest, picture maxSize: Int?,
                        pictureReady: (@Sendable (AnalysisPicture) -> Void)? = nil) throws -> (analysis: FileAnalysis, picture: AnalysisPicture?) {
        if var streamed = try analyzeStreaming(path, request: request, picture: maxSize, pictureReady: pictureReady) {
            // A file with NaN or infinite pixels (another program's) is measured again whole,
            // those pixels left out and counted.
            let finite = streamed.analysis.regions.allSatisfy { $0.measurement.channels.values.allSatisfy { $0.mean.isFinite } }
            if finite || !["exr", "h5", "hdf5"].contains(URL(fileURLWithPath: path).pathExtension.lowercased()) {
                // Stated stray light: a further pass for the luminance the zone is drawn in.
                if request.strayLight != nil { streamed.analysis.apply(try regionStrayLight(path, request: request)) }
                return streamed
            }
        }
        let input = try AnalysisInput.load(path, options: request.develop)
        return (try analyze(input, request: request), maxSize.map { AnalysisPicture(input.image, path: path, maxSize: $0) })
    }

    /// Measures a file without holding its image as `Float`: the measurements' passes
    /// (`ImageMeasurement`) go over its patches. A DNG is developed again for each pass (its
    /// decoded blocks kept from the first, `measurementBlockCache`); a scanline EXR of ours
    /// is decoded again in each pass, a block of rows at a time; a tiled or DWA EXR and our
    /// HDF5 are read once with their pixels as stored (half floats), widened band by band.
    /// A DNG's region given by a semantic mask takes the mask on the output grid, decoded
    /// before the first patch. Nil when the request needs the image whole: a colour space the
    /// measurements convert back from, an EXR or HDF5 file with a standard deviation layer or
    /// measured in mask regions (their masks are read with the pixels). With `picture` (an EV map's
    /// size), the first pass also reduces the luminance for the charts.
    static func analyzeStreaming(_ path: String, request: AnalysisRequest, picture maxSize: Int? = nil,
                                 pictureReady: (@Sendable (AnalysisPicture) -> Void)? = nil) throws -> (analysis: FileAnalysis, picture: AnalysisPicture?)? {
        // The masks of our files are read with their pixels: regions given by one measure the file whole.
        guard let source = try streamedSource(path, develop: request.develop, maskRegions: request.regions.contains(where: \.isMask)) else {
            return nil
        }
        return try measureStreamed(path, source, request: request, picture: maxSize, pictureReady: pictureReady)
    }

    /// The passes over a file that do not hold its image as `Float`: a DNG developed again for
    /// each (`developedSource`), our EXR or HDF5 file read once with its pixels as stored.
    /// Nil when the file must be measured whole: a colour space the measurements convert back
    /// from, an EXR or HDF5 file with a standard deviation layer, or (`maskRegions`) one
    /// measured in regions given by its semantic masks.
    /// - Throws: the readers' errors; `PhotometryError` for an EXR or HDF5 file in other
    ///   absolute units than `develop` asks for.
    /// `keepBlocks`: a DNG's first pass keeps its decoded blocks for the later ones.
    static func streamedSource(_ path: String, develop: DevelopOptions, maskRegions: Bool = false,
                               keepBlocks: Bool = true) throws -> StreamedSource? {
        let watch = FileWatch(path: path)
        return try openedSource(path, develop: develop, maskRegions: maskRegions, keepBlocks: keepBlocks)?.watched(by: watch)
    }

    /// `streamedSource` without its watch.
    private static func openedSource(_ path: String, develop: DevelopOptions, maskRegions: Bool, keepBlocks: Bool) throws -> StreamedSource? {
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
        switch ext {
        case "exr", "h5", "hdf5":
            try AnalysisInput.refuseDevelopOnly(develop, path: path)
            let limits = AnalysisInput.readLimits(develop)
            let stored = ext == "exr" ? try EXRFile.readStored(path, limits: limits) : try HDF5File.readStored(path, limits: limits)
            try AnalysisInput.checkUnits(of: stored.image.exposure, path: path, asked: develop.exposure)
            // Another colour space is measured after conversion to Rec.2020, of the image in
            // memory; a file with a standard deviation layer is measured whole, with the layer.
            guard AnalysisInput.measuredAsIs(stored.image.encoding), !AnalysisInput.hasDeviationLayer(stored.image), !maskRegions else {
                return nil
            }
            return StreamedSource(passes: stored.scan, known: KnownImage(stored.image))
        default:
            guard AnalysisInput.measuredAsIs(develop.encoding) else { return nil }
            return try developedSource(path, develop: develop, masks: maskRegions, keepBlocks: keepBlocks)
        }
    }

    /// `convert --analysis` in one pass: the half-float image `convert` writes and the
    /// measurements of `request`, the conversion's pass also being the measurements' first
    /// (its output seen as patches before the half conversion); the later passes develop the
    /// blocks that pass kept. Nil when the request needs the image whole (a region given by
    /// a semantic mask, or an output colour space the measurements convert back from), and
    /// for a CFA image, whose later passes would demosaic again: holding the `Float` image
    /// costs less time there (12 MP: 0.97 s against 1.30 s, for 286 MB against 188 MB).
    /// - Throws: what the conversion and `analyze` throw.
    public static func developForOutput(path: String, options: DevelopOptions, keepClipMask: Bool,
                                        measuring request: AnalysisRequest) throws -> (image: ConvertedImage, analysis: FileAnalysis)? {
        guard !request.regions.contains(where: \.isMask), AnalysisInput.measuredAsIs(options.encoding) else { return nil }
        let watch = FileWatch(path: path)
        let dng = try DNGFile.open(path: path)
        guard try dng.mainRawImage().photometric != Photometric.cfa else { return nil }
        let cache = try measurementBlockCache(dng, options: options)
        // Safe because set once by the pass on the calling thread, read after it returns.
        final class Output: @unchecked Sendable { var made: HalfDevelopedImage? }
        let output = Output(), known = KnownImage()
        let passes = ImageScan { prepare, visit in
            guard output.made == nil else {
                // (A later pass skips the digest and the masks on its own.)
                _ = try Pipeline.scan(dng, options: options, record: false, cache: cache, prepare: prepare, visit: visit)
                return
            }
            let made = try Pipeline.developHalf(dng, options: options, keepClipMask: keepClipMask, observer: (prepare, visit),
                                                     cache: cache)
            output.made = made
            let h = made.image
            let image = SceneLinearImage(pixels: ImageBuffer(width: 0, height: 0, channels: 3, samples: []), clipMask: nil,
                                         encoding: h.encoding, exposure: h.exposure, provenance: h.provenance, masks: [])
            known.image = image
            known.noise = AnalysisInput.noiseModel(for: image)
        }
        let analysis = try measureStreamed(path, StreamedSource(passes: passes, known: known).watched(by: watch), request: request,
                                           picture: nil).analysis
        return (ConvertedImage(output.made!), analysis)
    }

    /// A file's passes and what is known of its image.
    struct StreamedSource {
        let passes: ImageScan
        let known: KnownImage

        /// The same passes, each ending with a look at `watch`'s file (watched from before it
        /// was opened): a pass that finds it changed throws `ExchangeError`
        /// (`.temporaryFailure`), since the passes may have read two versions of it.
        func watched(by watch: FileWatch?) -> StreamedSource {
            guard let watch else { return self }
            let passes = self.passes
            return StreamedSource(passes: ImageScan { prepare, visit in
                try passes.pass(prepare, visit)
                guard !watch.changed else {
                    throw ExchangeError(path: watch.path, operation: "read",
                                        message: "the file changed while it was measured (its size or modification time is not what it was when it was opened); measure it again once it is complete",
                                        category: .temporaryFailure)
                }
            }, known: known)
        }
    }

    /// The image without its pixels, and its noise model (nil without a NoiseProfile): known
    /// from the start for an EXR, after the first pass for a DNG.
    // Safe because written by the first pass's prepare (one call, before any patch), read afterwards.
    final class KnownImage: @unchecked Sendable {
        var image: SceneLinearImage?
        var noise: NoiseModel?
        /// The semantic masks on the output grid: an EXR's or HDF5 file's from the start, a
        /// DNG's decoded before its first patch.
        var masks: [SemanticMaskLayer] = []
        init(_ image: SceneLinearImage? = nil) {
            self.image = image
            noise = image.flatMap { AnalysisInput.noiseModel(for: $0) }
            masks = image?.masks ?? []
        }
    }

    /// A DNG's passes: each develops it again (the first records its hash, digests and
    /// provenance; the later ones take its decoded blocks from the first, unless `keepBlocks`
    /// is false: for a single pass, which needs none kept).
    /// `masks`: decode the semantic masks (for regions given by one), before the first patch.
    static func developedSource(_ path: String, develop: DevelopOptions, masks: Bool, keepBlocks: Bool = true) throws -> StreamedSource {
        let dng = try DNGFile.open(path: path)
        var develop = develop
        develop.includeMasks = masks
        let options = develop
        let cache = keepBlocks ? try Pipeline.measurementBlockCache(dng, options: options) : nil
        let known = KnownImage()
        return StreamedSource(passes: ImageScan { prepare, visit in
            let record = known.image == nil
            let made = try Pipeline.scan(dng, options: options, record: record, cache: cache, masksReady: { known.masks = $0 },
                                         prepare: prepare, visit: visit)
            if record {
                known.image = made.image
                known.noise = AnalysisInput.noiseModel(for: made.image)
            }
        }, known: known)
    }

    /// The measurements of `request` over `source`'s passes, and the picture reduced in the first.
    static func measureStreamed(_ path: String, _ source: StreamedSource, request: AnalysisRequest, picture maxSize: Int?,
                                pictureReady: (@Sendable (AnalysisPicture) -> Void)? = nil) throws -> (analysis: FileAnalysis, picture: AnalysisPicture?) {
        // Safe because filled by the first pass's prepare before any patch, then only read.
        final class FirstPass: @unchecked Sendable {
            var done = false
            var size = (width: 0, height: 0)
            var reduction: LuminanceReduction?
            var picture: AnalysisPicture?
        }
        let first = FirstPass()
        // The reduced luminance as a picture, once the first pass is done (made once).
        @Sendable func picture() -> AnalysisPicture? {
            if let made = first.picture { return made }
            guard let reduction = first.reduction, let image = source.known.image else { return nil }
            let (width, height) = first.size
            let made = AnalysisPicture(path: path, width: width, height: height, exposureFactor: image.exposure.factor,
                                       unitSymbol: image.exposure.mode.unitSymbol, luminance: reduction.result(),
                                       weights: { try? $0.resolved(masks: source.known.masks).weights(width: width, height: height) })
            first.picture = made
            pictureReady?(made)
            return made
        }
        let scan = ImageScan { prepare, visit in
            let isFirst = !first.done
            first.done = true
            // A later pass: the first one's picture is complete.
            if !isFirst { _ = picture() }
            try source.passes.pass({ width, height in
                if isFirst {
                    first.size = (width, height)
                    first.reduction = maxSize.map { LuminanceReduction(sourceWidth: width, sourceHeight: height, maxSize: $0) }
                }
                try prepare(width, height)
            }, { patch in
                try visit(patch)
                if isFirst { first.reduction?.add(patch) }
            })
        }
        let regions = request.regions
        let percentiles = analysisPercentiles(request)
        let histogram = request.histogram
        let fisheye = request.fisheye
        let results = try ImageMeasurement.measure({ width, height in
            let omega = fisheye.map { solidAngleWeights($0, width: width, height: height) }
            return try (regions.isEmpty ? [wholeImage(width: width, height: height)] : regions).map { region in
                let selection = try region.resolved(masks: source.known.masks).selection(width: width, height: height)
                return RegionRequest(name: region.name, selection: weighted(selection, by: omega), percentiles: percentiles,
                                     histogram: histogram)
            }
        }, noise: { source.known.noise }, scan: scan)
        let image = source.known.image!, noise = source.known.noise
        let (width, height) = first.size
        let analysis = try fileAnalysis(path: path, image: image, width: width, height: height, noise: noise,
                                        measured: results.map { ($0.measurement!.region, $0.measurement!, $0.histogram) }, request: request)
        return (analysis, picture())
    }

    /// Each pixel's solid angle under `fisheye`, divided by the largest (weights in 0…1; 0
    /// outside the image circle).
    static func solidAngleWeights(_ fisheye: FisheyeSpec, width: Int, height: Int) -> [Float] {
        let omega = FisheyeGeometry(lens: fisheye.lens(width: width, height: height), width: width, height: height).arrays.solidAngle
        let largest = omega.max() ?? 0
        return omega.map { largest > 0 ? Float($0 / largest) : 0 }
    }

    /// `selection` with each pixel's weight multiplied by `omega` (unchanged without it).
    static func weighted(_ selection: PixelSelection, by omega: [Float]?) -> PixelSelection {
        guard let omega else { return selection }
        let w = selection.width, b = selection.bounds
        var weights = [Float](repeating: 0, count: w * selection.height)
        for y in b.top..<b.bottom {
            for x in b.left..<b.right {
                let i = y * w + x
                weights[i] = (selection.weights?[i] ?? 1) * omega[i]
            }
        }
        return PixelSelection(width: w, height: selection.height, bounds: b, weights: weights)
    }

    /// 1 for each pixel whose three values are finite, 0 for the others; nil when every
    /// pixel is finite.
    static func finiteWeights(_ image: SceneLinearImage) -> [Float]? {
        let px = image.pixels.samples
        var out: [Float]?
        for i in 0..<(image.width * image.height) where !(px[3 * i].isFinite && px[3 * i + 1].isFinite && px[3 * i + 2].isFinite) {
            if out == nil { out = [Float](repeating: 1, count: image.width * image.height) }
            out![i] = 0
        }
        return out
    }

    /// `selection` without the pixels `finite` marks 0, and how many of its pixels those were.
    static func excluding(_ selection: PixelSelection, _ finite: [Float]) -> (PixelSelection, Int) {
        let w = selection.width, b = selection.bounds
        var weights = selection.weights ?? [Float](repeating: 0, count: w * selection.height)
        var excluded = 0
        for y in b.top..<b.bottom {
            for x in b.left..<b.right {
                let i = y * w + x
                let weight = selection.weights?[i] ?? 1
                if weight > 0 && finite[i] == 0 { excluded += 1 }
                weights[i] = weight * finite[i]
            }
        }
        return (PixelSelection(width: w, height: selection.height, bounds: b, weights: weights), excluded)
    }

    /// The lens calibration a DNG at `path` was corrected with, for its aperture, when its
    /// scale carries the item `vignetting`; nil otherwise.
    static func regionLens(path: String, exposure: ExposureScaling, options: DevelopOptions) throws -> LensCalibration? {
        guard exposure.uncertaintyParts?.contains(where: { $0.name == "vignetting" }) == true else { return nil }
        return try lensForCapture(path, options: options)
    }

    /// The lens calibration of `options` for the DNG at `path`: itself, or of several
    /// apertures the one for the file's (`LensCalibration.forCapture`); nil without one.
    static func lensForCapture(_ path: String, options: DevelopOptions) throws -> LensCalibration? {
        guard let lens = options.lens else { return nil }
        guard !lens.otherApertures.isEmpty else { return lens }
        return try lens.forCapture(try DNGFile.open(path: path).metadata, path: path, allowOther: options.allowOtherLens)
    }

    /// The region measured when none is given.
    static func wholeImage(width: Int, height: Int) -> Region {
        Region(name: "image", shape: .rectangle(PixelRect(width: width, height: height)))
    }

    /// The percentiles every analysis reports: those asked for, and 0.1 and 99.9.
    static func analysisPercentiles(_ request: AnalysisRequest) -> [Double] {
        Array(Set(request.percentiles + [0.1, 99.9])).sorted()
    }

    /// Measures an image already loaded.
    public static func analyze(_ input: AnalysisInput, request: AnalysisRequest) throws -> FileAnalysis {
        let image = input.image
        let regions = request.regions.isEmpty ? [wholeImage(width: image.width, height: image.height)] : request.regions
        let percentiles = analysisPercentiles(request)
        let omega = request.fisheye.map { solidAngleWeights($0, width: image.width, height: image.height) }
        // Pixels that are not finite numbers (NaN, infinity: another program's file) are left
        // out of every region and counted.
        let finite = finiteWeights(image)
        var nonFinite: [Int] = []
        let requests = try regions.map { region in
            var selection = weighted(try region.selection(in: image), by: omega)
            if let finite {
                let (kept, excluded) = excluding(selection, finite)
                guard kept.weights?.contains(where: { $0 > 0 }) == true else {
                    throw AnalysisError(reason: "region \(region.name): every one of its pixels is NaN or infinite (\(excluded))")
                }
                selection = kept
                nonFinite.append(excluded)
            }
            return RegionRequest(name: region.name, selection: selection, percentiles: percentiles, histogram: request.histogram,
                                 pixelGains: input.noise?.pixelGains)
        }
        var results = try ImageMeasurement.measure(requests, noise: { input.noise }, scan: image.scan)
        if let layer = input.deviation {
            for k in results.indices { results[k].measurement?.useStandardErrors(of: layer, selection: requests[k].selection) }
        }
        var analysis = try fileAnalysis(path: input.path, image: image, width: image.width, height: image.height, noise: input.noise,
                                        measured: results.map { ($0.measurement!.region, $0.measurement!, $0.histogram) },
                                        request: request, noiseSource: input.deviation == nil ? .profile : .layer)
        for (i, n) in nonFinite.enumerated() where i < analysis.regions.count { analysis.regions[i].nonFinitePixels = n }
        if request.strayLight != nil { analysis.apply(try regionStrayLight(image, request: request)) }
        return analysis
    }

    /// The analysis of a file from its regions' measurements: dynamic ranges and ratios.
    /// Every statistic gets its kind (`ResultKind`) from the image's matrix (`ClipDirection`).
    static func fileAnalysis(path: String, image: SceneLinearImage, width: Int, height: Int, noise: NoiseModel?,
                             measured: [(String, RegionMeasurement, Histogram?)], request: AnalysisRequest,
                             noiseSource: UncertaintyBudget.NoiseSource = .profile) throws -> FileAnalysis {
        var results: [RegionAnalysis] = []
        var byName: [String: RegionMeasurement] = [:]
        let exposure = image.exposure
        let demosaic: String? = {
            if case .text(let d)? = image.provenance.processingValue("demosaic") { return d }
            return nil
        }()
        let directions = ClipDirection.kinds(cameraToOutput: image.provenance.cameraToOutput)
        let sites = SiteLayout.of(image)
        let lens = try regionLens(path: path, exposure: exposure, options: request.develop)
        let regions = request.regions.isEmpty ? [wholeImage(width: width, height: height)] : request.regions
        for (name, measuredRegion, histogram) in measured {
            var m = measuredRegion
            m.assignKinds(directions)
            let fromSites = sites.map { m.useRawSiteMeans($0) } ?? false
            var budgets: [UncertaintyBudget]?
            if exposure.mode.isAbsolute, let y = m.channels["Y"] {
                // Each quantity's scale with the region's own vignetting term, where it can be made.
                let own = lens.flatMap { lens in
                    regions.first { $0.name == name }.flatMap { try? $0.selection(width: width, height: height) }.map { selection in
                        (lens, RegionVignetting(selection: selection, rgb: SIMD3(m.channels["R"]?.mean ?? 0, m.channels["G"]?.mean ?? 0,
                                                                                m.channels["B"]?.mean ?? 0), lens: lens))
                    }
                }
                func scale(_ q: String) -> ExposureScaling {
                    guard let (lens, region) = own, let w = RegionVignetting.weights(q),
                          let u = region.relativeUncertainty(weights: w, cameraToOutput: image.provenance.cameraToOutput, lens: lens) else { return exposure }
                    return exposure.replacing("vignetting", relative: u, note: "the fit of \(lens.name)'s fall-off (\(lens.method)) at this region's pixels, its values taken as uniform over it")
                }
                // Y's mean and median, then the means of R, G and B.
                let yScale = scale("Y")
                budgets = [UncertaintyBudget.of(quantity: "Y", statistic: "mean", value: y.mean, noise: y.meanStandardError,
                                                scale: yScale, demosaic: demosaic, kind: y.kind, noiseSource: noiseSource),
                           UncertaintyBudget.of(quantity: "Y", statistic: "median", value: y.median, noise: y.medianStandardError,
                                                scale: yScale, demosaic: demosaic, kind: y.medianKind, noiseSource: noiseSource)]
                for q in ["R", "G", "B"] {
                    guard let s = m.channels[q] else { continue }
                    budgets?.append(UncertaintyBudget.of(quantity: q, statistic: "mean", value: s.mean, noise: s.meanStandardError,
                                                         scale: scale(q), demosaic: demosaic, kind: s.kind, noiseSource: noiseSource))
                }
            }
            results.append(RegionAnalysis(name: name, measurement: m, dynamicRange: DynamicRange.of(m.channels["Y"]!, noise: noise),
                                          histogram: histogram, budgets: budgets, meanFromRawSites: fromSites))
            byName[name] = m
        }
        var ratios: [RadianceRatio] = []
        for (n, d) in request.ratios {
            guard let a = byName[n], let b = byName[d] else {
                throw AnalysisError(reason: "ratio \(n)/\(d): no region named \(byName[n] == nil ? n : d)")
            }
            ratios.append(try RadianceRatio.between(a, b, quantity: request.ratioQuantity, statistic: request.ratioStatistic))
        }
        return FileAnalysis(file: path, sourceSHA256: image.provenance.sourceSHA256, width: width, height: height,
                            colorSpace: image.encoding.rawValue, exposureScaling: image.exposure.mode.rawValue,
                            exposureFactor: image.exposure.factor, units: image.exposure.mode.unitsText,
                            scaleSource: image.exposure.source, scaleRelativeUncertainty: image.exposure.relativeUncertainty,
                            noiseModel: noise != nil || noiseSource == .layer,
                            noiseSource: noise != nil || noiseSource == .layer ? noiseSource : nil,
                            regions: results, ratios: ratios, error: nil, errorCategory: nil)
    }

    /// Measures many files in parallel (as many at a time as there are cores), calling `progress` after each; a file that fails
    /// gives an entry with `error` set instead of stopping the batch. `visit`, when given, sees
    /// each file's picture (`AnalysisPicture`, its luminance reduced for an EV map whose
    /// longest side is `pictureSize`) with its results (file index, picture, results), e.g.
    /// to draw it; an error it throws marks that file as failed. `budget`: the memory the
    /// files in flight share (default: `--max-memory`'s). `pictureReady` gets a file's
    /// picture (file index, picture) as soon as it is complete, before `visit`: a chart of it
    /// can be drawn while the measurement's later passes run.
    public static func analyze(_ paths: [String], request: AnalysisRequest,
                               progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil, pictureSize: Int = 1200,
                               budget given: MemoryBudget? = nil,
                               visit: (@Sendable (Int, AnalysisPicture, FileAnalysis) throws -> Void)? = nil,
                               pictureReady: (@Sendable (Int, AnalysisPicture) -> Void)? = nil) -> [FileAnalysis] {
        let counter = ProgressCounter(total: paths.count, report: progress)
        // Files measured together stay within --max-memory together (a DNG reserves the
        // conversion's estimate, which covers the measurement and its kept blocks; EXR and
        // HDF5 inputs reserve nothing: their readers check each file against the limit).
        let budget = given ?? MemoryBudget(limit: memoryLimit(request.develop) - processBaseBytes)
        // With pictures (report, --ev-map) the charts are drawn beside the measurement's passes.
        var drawing = request
        drawing.develop.measurementDrawsCharts = visit != nil
        let request = drawing
        let route = measurementRoute(request.develop)
        let results = (try? Parallel.map(paths.count) { i -> FileAnalysis in
            defer { counter.step() }
            do {
                let (result, picture) = try budget.withReservation(estimatedFileBytes(path: paths[i], options: request.develop, route: route)) {
                    let ready: (@Sendable (AnalysisPicture) -> Void)? = pictureReady.map { f in { @Sendable picture in f(i, picture) } }
                    return try analyze(paths[i], request: request, picture: visit == nil ? nil : pictureSize, pictureReady: ready)
                }
                if let visit, let picture { try visit(i, picture, result) }
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
