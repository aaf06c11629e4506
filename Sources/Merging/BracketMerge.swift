import Engine
import Foundation
import Photometry

/// What `Pipeline.merge` does beyond developing.
public struct MergeOptions: Sendable {
    /// The development of the merged Stage 2 (units, colour space, demosaicing, crop, ...),
    /// as for one frame.
    public var develop = DevelopOptions()
    /// The frame whose units the result is in (index into the paths); nil: the frame of
    /// middle exposure.
    public var reference: Int?
    /// A frame whose measured exposure ratio differs from its metadata's by more than this
    /// fraction (and by more than three standard uncertainties) is merged at the measured
    /// ratio, and reported.
    public var ratioTolerance = 0.03
    /// Where a sample counts as saturated, as a fraction of the white level.
    public var saturation = 0.98
    /// Frames that share too few valid pixels with their neighbour in exposure to measure
    /// their ratio (e.g. a frame short enough for the sun's disc alone) are merged at the
    /// metadata's ratio, reported as unchecked, instead of refused.
    public var allowUncheckedRatios = false
    /// Align each frame to the reference by a whole-pixel translation (hand-held brackets),
    /// searched up to `maxShift` pixels each way.
    public var align = false
    public var maxShift = 64
    /// The largest share of the smooth samples valid in a frame and its neighbour in exposure
    /// (each within 4 standard deviations of its neighbours' mean in both frames, so that an
    /// edge a fraction of a pixel apart does not count) that may differ beyond their noise
    /// (more than 5 standard deviations and 5 % from the measured ratio) before the frames are
    /// refused as not showing the same scene: another scene, or a subject that moved over
    /// much of the frame.
    /// (Frames of one simulated scene: 0 %, aligned hand-held ones under 2 %; the same moved
    /// frames unaligned 21 %; frames of two sky scenes 16–28 %, of a sky and a chart 75 %.)
    public var maxDisagreement = 0.1
    /// Frames taken through a filter (an ND filter in front of the lens), by index: their
    /// exposure is the metadata's times the filter's transmittance. A frame next in exposure
    /// to one behind another filter (or none) is merged at the measured ratio when that is
    /// better known than the filters' transmittances (reported "measured, filter"), else at
    /// the metadata's times the transmittance, whose uncertainty then joins the merged image's
    /// scale (docs/lens.md). Frames given the same filter text are behind the same filter.
    /// A filter in front of every frame is `develop.filter` instead.
    public var frameFilters: [Int: FilterFactor] = [:]

    public init() {}

    /// The relative uncertainty of the ratio between frames `a` and `b` that their filters
    /// bring (in quadrature), or nil when both are behind the same filter (by its text) or none.
    func linkFilterUncertainty(_ a: Int, _ b: Int) -> Double? {
        let fa = frameFilters[a], fb = frameFilters[b]
        guard fa?.text != fb?.text else { return nil }
        return ((fa?.relativeUncertainty ?? 0) * (fa?.relativeUncertainty ?? 0)
                + (fb?.relativeUncertainty ?? 0) * (fb?.relativeUncertainty ?? 0)).squareRoot()
    }
}

/// One frame of a merge, as reported.
public struct MergeFrameReport: Codable, Sendable, Equatable {
    public var file: String
    public var exposureTime: Double
    public var fNumber: Double
    public var iso: Double
    public var baselineExposure: Double
    /// The frame's exposure relative to the reference, from its metadata (t · S / (N² · 2^BE))
    /// and its filter's transmittance.
    public var nominalExposure: Double
    /// The transmittance of the filter the frame was taken through (`MergeOptions.frameFilters`).
    public var filterTransmittance: Double?
    /// Its relative standard uncertainty.
    public var filterRelativeUncertainty: Double?
    /// The same measured on the pixels (chained through the frames between), nil for the reference.
    public var measuredExposure: Double?
    /// Standard uncertainty of ln(measuredExposure).
    public var measuredLogUncertainty: Double?
    /// The frame the ratio was measured against (index), nil for the reference.
    public var measuredAgainst: Int?
    /// Samples that measured it.
    public var ratioSamples: Int?
    /// With alignment: the shift [dx, dy] that puts the frame's pixel (x + dx, y + dy) on the
    /// reference's (x, y).
    public var offset: [Int]?
    /// The exposure the merge used.
    public var exposure: Double
    /// "reference", "metadata", "measured" (the metadata's ratio was off by more than the
    /// tolerance), "measured, filter" (a filtered frame's ratio within the tolerance, merged
    /// at the measured one) or "metadata, unchecked" (too few pixels valid in it and its
    /// neighbour).
    public var exposureSource: String
    /// The share of the samples valid in it and its neighbour that differ beyond their noise.
    public var disagreeingShare: Double?
    /// The raw-data digest check: "verified", "absent", "mismatch, ignored", "not checked".
    public var digest: String?
}

/// What a merge did.
public struct MergeReport: Codable, Sendable, Equatable {
    public var frames: [MergeFrameReport]
    /// Index of the reference frame.
    public var reference: Int
    public var ratioTolerance: Double
    public var saturation: Double
    public var width: Int
    public var height: Int
    /// Output pixels with a channel clipped in every frame (lower bounds).
    public var lowerBoundPixels: Int
    /// Output pixels by the fewest frames any of their channels used: index = frames.
    public var framesHistogram: [Int]
    /// How the standard-deviation layer relates to the interpolation: "exact" (LinearRaw,
    /// superpixel) or "upper bound" (interpolated CFA channels).
    public var standardDeviation: String
    /// Frames whose exposure was taken from the pixels instead of the metadata.
    public var misstatedFrames: [Int] { frames.indices.filter { frames[$0].exposureSource == "measured" } }
}

/// A merged bracket: the image (its clip mask marks the lower bounds), the standard deviation
/// of each channel, and per pixel the fewest frames a channel used.
public struct MergedBracket: Sendable {
    public var image: SceneLinearImage
    public var standardDeviation: ImageBuffer<Float>
    public var frames: [UInt8]
    public var report: MergeReport
    /// Seconds per step: "decode" (the frames' Stage 1), "ratios", "merge", "develop"
    /// (values and variances through the conversion), "layers" (std and frame counts).
    public var timings: [(String, Double)] = []
}

/// Why frames cannot be merged: the frame it concerns (empty for the request as a whole)
/// and the problem, with the values that show it.
public struct MergeError: SceneLinearFailure, Equatable {
    public let path: String
    public var file: String? { path }
    public let problem: Problem

    public enum Problem: Equatable, Sendable {
        /// The same bytes as frame `earlier`.
        case repeatedFrame(earlier: String)
        case tooFewFrames(count: Int)
        /// `--reference` (1-based `frame`) is not one of the `frames`.
        case referenceNotAFrame(frame: Int, frames: Int)
        /// No shift within `maxShift` pixels leaves enough pixels valid in this frame and `reference`.
        case cannotAlign(reference: String, maxShift: Int)
        /// Not a frame of `first`'s camera: `why` (the identities that differ).
        case otherCamera(first: String, why: String)
        /// A raw image of another size or active area than `first`'s.
        case otherSize(size: [Int], activeArea: String, first: String, firstSize: [Int], firstActiveArea: String)
        /// A raw image of another layout than `first`'s.
        case otherLayout(photometric: Int, samplesPerPixel: Int, cfa: String, first: String)
        /// A filter given for a frame (1-based) the merge does not have.
        case filterForMissingFrame(frame: Int, frames: Int)
        /// Fewer than `minimum` pixels valid in this frame and its neighbour in exposure.
        case framesDoNotOverlap(neighbour: String, minimum: Int)
        /// This share of the smooth pixels shared with the neighbour differ beyond their noise.
        case ratioDisagrees(neighbour: String, share: Double, limit: Double)
        /// The raw image `ifd` gives no noise model the merge can use (`why`).
        case noNoiseProfile(ifd: String, why: String)
    }

    public init(path: String, _ problem: Problem) {
        self.path = path
        self.problem = problem
    }

    public var category: FailureCategory {
        switch problem {
        case .filterForMissingFrame: return .usage
        case .noNoiseProfile: return .unsupportedFeature
        default: return .bracketMismatch
        }
    }

    /// What is wrong, in words.
    public var reason: String {
        switch problem {
        case .repeatedFrame(let earlier):
            return "the same bytes as \(earlier): a frame given twice would count its noise twice"
        case .tooFewFrames(let count):
            return "a merge needs at least two frames, got \(count)"
        case .referenceNotAFrame(let frame, let frames):
            return "reference frame \(frame) is not one of the \(frames) frames"
        case .cannotAlign(let reference, let maxShift):
            return "cannot be aligned with \(reference): too few pixels valid in both within \(maxShift) pixels of shift"
        case .otherCamera(let first, let why):
            return "not a frame of \(first)'s camera: \(why.replacingOccurrences(of: "it was made", with: "that one was made"))"
        case .otherSize(let size, let activeArea, let first, let firstSize, let firstActiveArea):
            return "its raw image is \(size[0])×\(size[1]) (ActiveArea \(activeArea)), \(first)'s \(firstSize[0])×\(firstSize[1]) (ActiveArea \(firstActiveArea))"
        case .otherLayout(let photometric, let samplesPerPixel, let cfa, let first):
            return "its raw image's layout (photometric \(photometric), \(samplesPerPixel) samples per pixel, CFA \(cfa)) is not \(first)'s"
        case .filterForMissingFrame(let frame, let frames):
            return "a filter is given for frame \(frame), and the merge has \(frames) frames"
        case .framesDoNotOverlap(let neighbour, let minimum):
            return "fewer than \(minimum) pixels are valid both in it and in \(neighbour) (neither clipped nor in the noise floor): "
                + "the frames do not overlap, so their exposure ratio cannot be checked (--unchecked-ratios merges them at the metadata's)"
        case .ratioDisagrees(let neighbour, let share, let limit):
            return "\(String(format: "%.1f", 100 * share)) % of the smooth pixels valid in it and in \(neighbour) differ beyond their noise "
                + "(by more than 5 standard deviations and 5 % from the measured exposure ratio): not the same scene, or a subject "
                + "that moved over much of the frame (--max-disagreement \(String(format: "%g", 100 * limit)))"
        case .noNoiseProfile(let ifd, let why):
            return "\(ifd): \(why); the merge weights each frame by its noise, which the profile gives"
        }
    }

    public var description: String { path.isEmpty ? reason : "\(path): \(reason)" }
}

extension Pipeline {
    /// Refuses a frame given twice (the same file, or another file with the same bytes): its
    /// noise would be counted twice, the merged σ understated by √2.
    /// Only frames whose size another frame shares are hashed (a copy has the same size).
    static func refuseRepeatedFrames(_ files: [DNGFile]) throws {
        let sizes = Dictionary(grouping: files.map(\.file.count), by: { $0 }).mapValues(\.count)
        var seen: [String: String] = [:]
        for file in files where sizes[file.file.count, default: 0] > 1 {
            let digest = SHA256Digest.hex(of: file.file.data)
            if let earlier = seen[digest] {
                throw MergeError(path: file.path, .repeatedFrame(earlier: earlier))
            }
            seen[digest] = file.path
        }
    }

    /// Merges raw frames of one scene from one camera (any exposure times, apertures, ISOs)
    /// into one image in the reference frame's units, noise-optimally in Stage 2 (before
    /// demosaicing), with each pixel's standard deviation, frame count and lower-bound flag
    /// (docs/merge.md). The merged Stage 2 is developed by the one conversion as the
    /// reference frame's own (`Stage2Replacement`).
    /// - Throws: `MergeError` (`.bracketMismatch`) for fewer than two frames, another camera,
    ///   size or layout, frames without a NoiseProfile or exposure settings, frames that share
    ///   no valid pixels; the decoders' errors.
    public static func merge(paths: [String], options: MergeOptions = MergeOptions()) throws -> MergedBracket {
        guard paths.count >= 2 else {
            throw MergeError(path: paths.first ?? "", .tooFewFrames(count: paths.count))
        }
        let files = try paths.map { try DNGFile.open(path: $0) }
        try refuseRepeatedFrames(files)
        let raws = try files.map { try $0.mainRawImage() }
        try refuseMismatchedFrames(files, raws: raws)
        let settings = try files.map { try Photometry.Settings.of($0.metadata, path: $0.path) }
        let noise = try zip(files, raws).map { file, raw in try planeNoise(raw, path: file.path) }
        try checkFrameFilters(options.frameFilters, paths: paths)
        // Exposure ∝ T · t · S / (N² · 2^BE): the inverse of the photometric exposure factor,
        // times the transmittance of the frame's filter.
        let exposures = settings.indices.map { i in (options.frameFilters[i]?.transmittance ?? 1) / settings[i].exposureFactor }
        let byExposure = paths.indices.sorted { exposures[$0] < exposures[$1] }
        let reference = try referenceFrame(byExposure: byExposure, options: options)
        let raw = raws[reference]
        let area = raw.activeArea
        let planes = raw.samplesPerPixel
        let cfa = raw.photometric == Photometric.cfa ? raw.cfa : nil
        // Which noise pair a sample takes: its plane (LinearRaw) or its CFA colour.
        let colours = cfa.map { NoiseColours(pattern: $0.pattern.map { Int($0) }, repeatRows: $0.repeatRows, repeatColumns: $0.repeatCols,
                                             top: area.top, left: area.left) } ?? .planes
        let width = area.width, height = area.height

        var timings: [(String, Double)] = []
        var clock = DispatchTime.now().uptimeNanoseconds
        func lap(_ name: String) {
            let now = DispatchTime.now().uptimeNanoseconds
            timings.append((name, Double(now - clock) / 1e9))
            clock = now
        }
        // Each frame's Stage 2, in its stored form (rows linearized when read).
        var stage2Frames = try files.map { try frameStage2($0, options: options.develop) }
        var samples = files.indices.map { i in
            BracketSamples(frame: stage2Frames[i], exposure: exposures[i] / exposures[reference], noise: noise[i])
        }
        let digests = stage2Frames.map(\.digest)
        let mapping = stage2Frames[reference].mapping
        lap("decode")
        var offsets: [[Int]?] = Array(repeating: nil, count: paths.count)
        if options.align {
            offsets = try alignFrames(&samples, reference: reference, paths: paths, grid: (width, height, planes), mosaic: cfa != nil,
                                      maxShift: options.maxShift)
            lap("align")
        }

        // Exposure ratios, measured between neighbours in exposure and chained to the reference.
        var reports = paths.indices.map { i in
            MergeFrameReport(file: paths[i], exposureTime: settings[i].exposureTime, fNumber: settings[i].fNumber, iso: settings[i].iso,
                             baselineExposure: settings[i].baselineExposure, nominalExposure: samples[i].exposure,
                             filterTransmittance: options.frameFilters[i]?.transmittance,
                             filterRelativeUncertainty: options.frameFilters[i]?.relativeUncertainty, offset: offsets[i], exposure: samples[i].exposure,
                             exposureSource: i == reference ? "reference" : "metadata", digest: digests[i])
        }
        try chainExposureRatios(&samples, reports: &reports, byExposure: byExposure, reference: reference, nominal: exposures,
                                paths: paths, grid: (width, height, planes), mosaic: cfa != nil, colours: colours, options: options)

        lap("ratios")
        let estimator = BracketEstimator(saturation: options.saturation)
        // The standard deviations in half floats while the frames are held (2 bytes a sample
        // fewer at the peak), as variances once they are gone; in Float when half cannot hold one.
        var merged = estimator.merge(samples, width: width, height: height, planes: planes, colours: colours, compact: true)
        if merged.deviationOverflows {
            merged = estimator.merge(samples, width: width, height: height, planes: planes, colours: colours, compact: false)
        }
        samples = []
        // An opcode list that failed on a row after running on the first and last (never seen): refused, not merged around.
        for frame in stage2Frames { if let error = frame.rowError { throw error } }
        stage2Frames = []
        lap("merge")
        let superpixel = cfa != nil && options.develop.demosaic == .superpixel
        func stage2(_ values: [Float], clip: [UInt8]) -> LinearImage {
            LinearImage(ifd: raw, values: ImageBuffer(width: width, height: height, channels: planes, samples: values), clipMask: clip,
                        mapping: mapping)
        }
        let noClip = LargeBuffer.zeroed(UInt8.self, count: width * height)
        var develop = options.develop
        develop.includeMasks = false
        // The reference frame's filter and the uncertainty of the others' (scene-proportional units only).
        var developValues = options.develop
        let sceneUnits = developValues.exposure == .normalized || developValues.exposure.isAbsolute
        developValues.filter = sceneUnits ? mergedFilter(reports, reference: reference, options: options) : nil
        develop.filter = developValues.filter
        let developed = try Pipeline.develop(files[reference],
                                             replacing: Stage2Replacement(image: stage2(merged.values, clip: merged.lowerBound), matrix: .color),
                                             options: developValues, hash: true)
        var image = developed.image
        merged.values = []
        // The variances from the half-float standard deviations only now, once the values are
        // developed (2 bytes a sample fewer while they were).
        merged.expandVariance()
        if superpixel { merged.halveGreenVariances(colours: colours, width: width, height: height) }
        let variance = try Pipeline.develop(files[reference], replacing: Stage2Replacement(image: stage2(merged.variance, clip: noClip), matrix: .squared),
                                            options: develop, hash: false).image.pixels
        merged.variance = []
        lap("develop")
        let clip = image.clipMask ?? []
        let std = standardDeviations(consume variance, lowerBounds: clip)
        // Frame counts on the Stage 3 grid (the fewest of a pixel's samples: its planes, its
        // 2×2 cell, or the 3×3 neighbourhood an interpolation reads), then the image's geometry.
        var frameCount = try frameCounts(merged.frames, width: width, height: height, planes: planes, cfa: cfa != nil,
                                         superpixel: superpixel, geometry: developed.geometry)
        if frameCount.count != image.width * image.height {
            // A stage that changes the grid (TrimBounds in OpcodeList3): the counts developed alike.
            let counts = try Pipeline.develop(files[reference],
                                              replacing: Stage2Replacement(image: stage2(merged.frames.map(Float.init), clip: noClip),
                                                                           matrix: .identity),
                                              options: develop, hash: false).image.pixels
            frameCount = Self.fewestFrames(counts)
        }
        merged.frames = []
        let report = Self.record(into: &image, frames: reports, reference: reference, paths: paths, frameCount: frameCount,
                                 exact: cfa == nil || superpixel, offsets: options.align ? offsets : nil, options: options)
        lap("layers")
        return MergedBracket(image: image, standardDeviation: std, frames: frameCount, report: report, timings: timings)
    }

    /// The frame whose units the merge takes: `options.reference`, else the frame of middle
    /// exposure, among the frames without a filter when there are any (the result's scale then
    /// does not rest on a filter's transmittance).
    static func referenceFrame(byExposure: [Int], options: MergeOptions) throws -> Int {
        let unfiltered = byExposure.filter { options.frameFilters[$0] == nil }
        let candidates = unfiltered.isEmpty ? byExposure : unfiltered
        let reference = options.reference ?? candidates[(candidates.count - 1) / 2]
        guard byExposure.contains(reference) else {
            throw MergeError(path: "", .referenceNotAFrame(frame: reference + 1, frames: byExposure.count))
        }
        return reference
    }

    /// The merge's report, and its record in the image's provenance.
    static func record(into image: inout SceneLinearImage, frames reports: [MergeFrameReport], reference: Int, paths: [String],
                       frameCount: [UInt8], exact: Bool, offsets: [[Int]?]?, options: MergeOptions) -> MergeReport {
        let clip = image.clipMask ?? []
        let frameNames = paths.map { URL(fileURLWithPath: $0).lastPathComponent }
        var histogram = [Int](repeating: 0, count: paths.count + 1)
        for n in frameCount { histogram[min(Int(n), paths.count)] += 1 }
        let lowerBoundPixels = clip.reduce(0) { $0 + ($1 != 0 ? 1 : 0) }
        let report = MergeReport(frames: reports, reference: reference, ratioTolerance: options.ratioTolerance,
                                 saturation: options.saturation, width: image.width, height: image.height,
                                 lowerBoundPixels: lowerBoundPixels, framesHistogram: histogram,
                                 standardDeviation: exact ? "exact" : "upper bound")
        image.provenance.processing += [
            MetadataItem("merge", .text("\(paths.count) frames, noise-optimal in Stage 2; reference \(frameNames[reference])")),
            MetadataItem("mergeFrames", .text(frameNames.joined(separator: ", "))),
            MetadataItem("mergeExposures", .numbers(reports.map(\.exposure))),
            MetadataItem("mergeExposureSources", .text(reports.map(\.exposureSource).joined(separator: ", "))),
            MetadataItem("mergeLowerBoundPixels", .integer(lowerBoundPixels)),
        ] + (offsets.map { [MetadataItem("mergeOffsets", .integers($0.flatMap { $0 ?? [0, 0] }))] } ?? [])
        return report
    }

    /// Aligns each frame to the reference by a whole-pixel translation (`FrameAlignment`);
    /// the shifts [dx, dy] per frame ([0, 0] for the reference).
    static func alignFrames(_ samples: inout [BracketSamples], reference: Int, paths: [String],
                            grid: (width: Int, height: Int, planes: Int), mosaic: Bool, maxShift: Int) throws -> [[Int]?] {
        let (width, height, planes) = grid
        var offsets: [[Int]?] = Array(repeating: nil, count: paths.count)
        for i in paths.indices where i != reference {
            guard let o = FrameAlignment.offset(of: samples[i], against: samples[reference], width: width, height: height,
                                                planes: planes, mosaic: mosaic, maxShift: maxShift) else {
                throw MergeError(path: paths[i], .cannotAlign(reference: paths[reference], maxShift: maxShift))
            }
            offsets[i] = [o.dx, o.dy]
            samples[i] = samples[i].shifted(dx: o.dx, dy: o.dy, width: width, height: height, planes: planes)
        }
        offsets[reference] = [0, 0]
        return offsets
    }

    /// The standard deviations of developed variances (negative rounding taken as 0), in place
    /// of the variances; 0 where the value is a lower bound.
    static func standardDeviations(_ variance: consuming ImageBuffer<Float>, lowerBounds clip: [UInt8]) -> ImageBuffer<Float> {
        LargeBuffer.update(&variance.samples, reading: clip) { range, clip, p in
            for k in range { p[k] = !clip.isEmpty && clip[k / 3] != 0 ? 0 : max(p[k], 0).squareRoot() }
        }
        return variance
    }

    /// Per pixel of developed frame counts (one per channel), the fewest, as a count.
    static func fewestFrames(_ counts: ImageBuffer<Float>) -> [UInt8] {
        (0..<(counts.width * counts.height)).map { i in
            let m: Float = min(counts.samples[3 * i], min(counts.samples[3 * i + 1], counts.samples[3 * i + 2]))
            return UInt8(min(max(Int((m + 1e-3).rounded(.down)), 0), 255))
        }
    }

    /// Refuses frames of another camera, raw size, ActiveArea, layout or CFA pattern than the first's.
    static func refuseMismatchedFrames(_ files: [DNGFile], raws: [ImageIFD]) throws {
        let first = files[0], firstRaw = raws[0]
        let identity = CameraIdentity(first.metadata)
        for (i, file) in files.enumerated().dropFirst() {
            if let why = identity.mismatch(CameraIdentity(file.metadata)) {
                throw MergeError(path: file.path, .otherCamera(first: first.path, why: why))
            }
            let r = raws[i]
            guard r.width == firstRaw.width, r.height == firstRaw.height, r.activeArea == firstRaw.activeArea else {
                throw MergeError(path: file.path, .otherSize(size: [r.width, r.height], activeArea: "\(r.activeArea)", first: first.path,
                                                  firstSize: [firstRaw.width, firstRaw.height], firstActiveArea: "\(firstRaw.activeArea)"))
            }
            guard r.photometric == firstRaw.photometric, r.samplesPerPixel == firstRaw.samplesPerPixel,
                  r.cfa?.pattern == firstRaw.cfa?.pattern else {
                throw MergeError(path: file.path, .otherLayout(photometric: Int(r.photometric), samplesPerPixel: Int(r.samplesPerPixel),
                                                    cfa: r.cfa?.pattern.map(String.init).joined() ?? "none", first: first.path))
            }
    }
    }

    /// Refuses a filter given for a frame the merge does not have.
    static func checkFrameFilters(_ filters: [Int: FilterFactor], paths: [String]) throws {
        if let bad = filters.keys.sorted().first(where: { !paths.indices.contains($0) }) {
            throw MergeError(path: "", .filterForMissingFrame(frame: bad + 1, frames: paths.count))
        }
    }

    /// The filter the merged image's scale goes through: the reference frame's own (its
    /// transmittance divides the values, as for one frame) and any filter in front of every
    /// frame (`develop.filter`), with the uncertainty of every filter whose transmittance set
    /// a ratio the merge used: a link between frames behind different filters merged at the
    /// metadata's ratio (counted for the whole image, an upper bound for the pixels those
    /// frames did not give). Frames given the same filter text are taken to be behind the
    /// same filter. Nil when no filter is involved.
    static func mergedFilter(_ reports: [MergeFrameReport], reference: Int, options: MergeOptions) -> FilterFactor? {
        var t = options.develop.filter?.transmittance ?? 1
        var used: [FilterFactor] = options.develop.filter.map { [$0] } ?? []
        if let own = options.frameFilters[reference] {
            t *= own.transmittance
            used.append(own)
        }
        for (i, report) in reports.enumerated() where i != reference && report.exposureSource.hasPrefix("metadata") {
            guard let previous = report.measuredAgainst, options.linkFilterUncertainty(i, previous) != nil else { continue }
            used += [options.frameFilters[i], options.frameFilters[previous]].compactMap { $0 }
        }
        var seen = Set<String>(), variance = 0.0, texts: [String] = []
        for filter in used where seen.insert(filter.text).inserted {
            variance += filter.relativeUncertainty * filter.relativeUncertainty
            texts.append(filter.text)
        }
        guard !texts.isEmpty else { return nil }
        return FilterFactor(transmittance: t, relativeUncertainty: variance.squareRoot(), stated: used.allSatisfy(\.stated),
                            text: texts.joined(separator: ", "))
    }

    /// Measures each frame's exposure against its neighbour towards the reference and chains
    /// the ratios (docs/merge.md): a frame whose metadata is off by more than the tolerance
    /// (and three standard uncertainties) is merged at the measured exposure; `samples` get
    /// the exposures used, `reports` what was measured.
    /// - Parameter nominal: each frame's exposure from its metadata (any common scale).
    static func chainExposureRatios(_ samples: inout [BracketSamples], reports: inout [MergeFrameReport], byExposure: [Int],
                                    reference: Int, nominal exposures: [Double], paths: [String],
                                    grid: (width: Int, height: Int, planes: Int), mosaic: Bool, colours: NoiseColours,
                                    options: MergeOptions) throws {
        let (width, height, planes) = grid
        let position = byExposure.firstIndex(of: reference)!
        for order in [Array(byExposure[..<position].reversed()), Array(byExposure[(position + 1)...])] {
            var previous = reference
            // usedChain: the exposure the merge uses for `previous`; measuredChain: as measured.
            var measuredChain = 1.0, usedChain = 1.0, logVariance = 0.0
            for i in order {
                // The frame's own metadata, relative to the reference: a misstated frame before it
                // in the chain does not make this one look misstated. Behind the same filter as
                // the frame before it, the metadata's ratio to that frame as the merge uses it: a
                // correction the pixels made to the filter's transmittance holds for both.
                let sameFilter = options.frameFilters[i] != nil && options.frameFilters[i]?.text == options.frameFilters[previous]?.text
                let nominal = sameFilter ? usedChain * exposures[i] / exposures[previous] : exposures[i] / exposures[reference]
                guard let fit = ExposureRatioFit.fit(samples[i], samples[previous], width: width, height: height, planes: planes,
                                                     step: mosaic ? 2 : 1, saturation: options.saturation,
                                                     colours: colours) else {
                    if options.allowUncheckedRatios {
                        measuredChain *= nominal / usedChain  // the frames beyond are measured through this link's metadata
                        usedChain = nominal
                        reports[i].measuredAgainst = previous
                        reports[i].exposure = usedChain
                        reports[i].exposureSource = "metadata, unchecked"
                        samples[i].exposure = usedChain
                        previous = i
                        continue
                    }
                    throw MergeError(path: paths[i], .framesDoNotOverlap(neighbour: paths[previous], minimum: ExposureRatioFit.minimumSamples))
                }
                guard fit.disagreeingShare <= options.maxDisagreement else {
                    throw MergeError(path: paths[i], .ratioDisagrees(neighbour: paths[previous], share: fit.disagreeingShare,
                                                                     limit: options.maxDisagreement))
                }
                reports[i].disagreeingShare = fit.disagreeingShare
                // This frame's exposure from its neighbour's (as used) and the measured ratio.
                let measuredHere = usedChain * fit.ratio
                let off = abs(log(measuredHere / nominal))
                let misstated = off > log(1 + options.ratioTolerance) && off > 3 * fit.logUncertainty
                // A link between frames behind different filters (or one behind none): the
                // measured ratio when it is better known than the filters' transmittances.
                let filterU = options.linkFilterUncertainty(i, previous)
                let filtered = filterU.map { fit.logUncertainty < $0 } ?? false
                measuredChain *= fit.ratio
                logVariance += fit.logUncertainty * fit.logUncertainty
                usedChain = misstated || filtered ? measuredHere : nominal
                reports[i].measuredExposure = measuredChain
                reports[i].measuredLogUncertainty = logVariance.squareRoot()
                reports[i].measuredAgainst = previous
                reports[i].ratioSamples = fit.samples
                reports[i].exposure = usedChain
                if misstated { reports[i].exposureSource = "measured" } else if filtered { reports[i].exposureSource = "measured, filter" }
                samples[i].exposure = usedChain
                previous = i
            }
    }
    }

    /// Per output pixel, the fewest frames any sample it is made from used: on the Stage 3
    /// grid the minimum over a pixel's planes (LinearRaw), its 2×2 cell (superpixel) or the
    /// 3×3 neighbourhood of same-site samples an interpolation reads (CFA), then cropped,
    /// scaled and oriented as the image.
    static func frameCounts(_ counts: [UInt8], width: Int, height: Int, planes: Int, cfa: Bool, superpixel: Bool,
                            geometry: GeometryPlan) throws -> [UInt8] {
        var grid: ImageBuffer<UInt8>
        if !cfa {
            grid = ImageBuffer(width: width, height: height, channels: 1,
                               samples: (0..<(width * height)).map { i in counts[(i * planes)..<(i * planes + planes)].min()! })
        } else if superpixel {
            let w = width / 2, h = height / 2
            var g = [UInt8](repeating: 0, count: w * h)
            for y in 0..<h {
                for x in 0..<w {
                    g[y * w + x] = min(min(counts[2 * y * width + 2 * x], counts[2 * y * width + 2 * x + 1]),
                                       min(counts[(2 * y + 1) * width + 2 * x], counts[(2 * y + 1) * width + 2 * x + 1]))
                }
            }
            grid = ImageBuffer(width: w, height: h, channels: 1, samples: g)
        } else {
            var g = [UInt8](repeating: 0, count: width * height)
            for y in 0..<height {
                for x in 0..<width {
                    var m = UInt8.max
                    for yy in max(0, y - 1)...min(height - 1, y + 1) {
                        for xx in max(0, x - 1)...min(width - 1, x + 1) { m = min(m, counts[yy * width + xx]) }
                    }
                    g[y * width + x] = m
                }
            }
            grid = ImageBuffer(width: width, height: height, channels: 1, samples: g)
        }
        guard geometry.crop.right <= grid.width, geometry.crop.bottom <= grid.height else { return [] }
        return ImageGeometry.apply(geometry, toMask: grid).samples
    }

    /// The NoiseProfile pairs of `raw` by plane (LinearRaw) or CFA colour (three pairs), as
    /// every measurement reads them (`NoiseProfile`).
    static func planeNoise(_ raw: ImageIFD, path: String) throws -> [PlaneNoise] {
        let why: String
        if let values = raw.noiseProfile {
            do throws(NoiseProfile.Problem) {
                let profile = try NoiseProfile(values)
                return (0..<3).map { PlaneNoise(scale: profile.scale[$0], offset: profile.offset[$0]) }
            } catch {
                why = "its NoiseProfile (tag 51041) cannot be used: \(error)"
            }
        } else {
            why = "it has no NoiseProfile (tag 51041)"
        }
        throw MergeError(path: path, .noNoiseProfile(ifd: raw.path, why: why))
    }
}
