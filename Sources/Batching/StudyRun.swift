import Analysis
import Engine
import Foundation
import ImageCore
import Measuring
import Reporting
import Glare
import Merging
import Plots
import Studies

/// How a study's sets are merged and measured (docs/studies.md#measuring-the-sets).
public struct StudyOptions: Sendable {
    /// Each set's merge (its development: units, calibration, lens, filters).
    public var merge = MergeOptions()
    /// The fisheye each set's E_v is measured through; nil: no E_v.
    public var fisheye: FisheyeLensRequest?
    /// The site of the sun's position per set; nil: the first frame's GPS position, if any.
    public var site: Site?
    /// Regions whose mean luminance is measured per set (in the merged image's output coordinates).
    public var regions: [Region] = []
    /// How each set's glare is evaluated with a fisheye (DGP, DGI, UGR); nil: not evaluated.
    public var glare: GlareRequest? = GlareRequest()
    /// The camera's orientation: with it and the sun, the circumsolar zone (`circumsolarAngle`
    /// degrees about the sun) is located in each set's image.
    public var view: CameraOrientation?
    public var circumsolarAngle = 10.0
    /// Whether each set's false-colour map is drawn (`<study>/maps/<id>.png`).
    public var maps = false
    /// Where the merged sets are kept (`<study>/sets/<id>.<ext>`); nil: not kept.
    public var keep: OutputFormat?
    /// A frame whose samples disagree with its neighbour's beyond their noise in more than
    /// this share is flagged `scene-changed`.
    public var disagreementFlag = 0.01
    public var shard = Shard.whole
    public var resume = true

    public init() {}
}

/// One set's line in the study's manifest (`sets*.jsonl`): what it is, what was measured and
/// what is doubtful about it. The study's time series is these lines.
public struct StudySetRecord: Codable, Sendable, Equatable {
    public var id: String
    /// UTC, ISO 8601: the first frame's start, the last exposure's end, their middle.
    public var start: String, end: String, mid: String
    public var files: [String]
    /// SHA-256 over the frames' digests, in order: a set is redone when a frame changes.
    public var inputSHA256: String
    /// "ok" or "failed" (then `error`, `errorCategory`, `exitCode`).
    public var status: String
    public var error: String?
    public var errorCategory: String?
    public var exitCode: Int32?
    /// E_v (lux) with its standard uncertainty and 95 % interval, and what it is
    /// (`ResultKind`: a lower bound when a clipped pixel adds to it; then only `illuminanceLow95`).
    public var illuminance: Double?
    public var illuminanceUncertainty: Double?
    public var illuminanceLow95: Double?
    public var illuminanceHigh95: Double?
    public var illuminanceKind: String?
    /// The share of E_v the pixels clipped in every frame give as recorded.
    public var illuminanceClippedShare: Double?
    /// The merged image's pixels with a channel clipped in every frame, and their share.
    public var lowerBoundPixels: Int?
    public var lowerBoundShare: Double?
    /// With a fisheye: DGP, DGI and UGR with their intervals (`glare`).
    public var glare: StudyGlareRecord?
    /// With a fisheye, the camera's orientation and the sun: where the sun falls in the image
    /// and the circumsolar zone's share of E_v.
    public var circumsolar: CircumsolarResult?
    /// Per frame: the measured exposure over the metadata's, less 1 (nil for the reference
    /// and for frames whose ratio could not be measured).
    public var ratioResiduals: [Double?]?
    /// Per frame: the share of samples that disagree with its neighbour's beyond their noise.
    public var disagreeingShares: [Double?]?
    /// The sun's apparent elevation and azimuth (degrees, east of north) at `mid`, and where from.
    public var sunElevation: Double?
    public var sunAzimuth: Double?
    public var site: Site?
    /// Each region's mean luminance (cd/m², or the merge's units) with its budget's 95 % interval
    /// and kind, in the order asked.
    public var regions: [StudyRegionRecord]?
    /// QC flags (docs/studies.md#qc-flags): "clipped-in-every-frame", "scene-changed",
    /// "exposure-misstated", "ratios-unchecked", "sun-below-horizon", "sun-in-view".
    public var flags: [String]
    /// The set's false-colour map (`maps`).
    public var map: String?
    /// The merged set kept, and its SHA-256.
    public var output: String?
    public var outputSHA256: String?
    public var software: String
    public var finished: String
    public var shard: String?
}

/// One set's glare: the metrics with their 95 % intervals and kinds, the sources found.
public struct StudyGlareRecord: Codable, Sendable, Equatable {
    public var dgp: GlareMetric
    public var dgi: GlareMetric
    /// nil when the background luminance is not positive.
    public var ugr: GlareMetric?
    public var sources: Int
    /// cd/m².
    public var backgroundLuminance: Double

    public init(_ r: GlareResult) {
        dgp = r.daylightGlareProbability
        dgi = r.daylightGlareIndex
        ugr = r.unifiedGlareRating
        sources = r.sources.count
        backgroundLuminance = r.backgroundLuminance
    }
}

/// One region of one set: its mean luminance and what it is.
public struct StudyRegionRecord: Codable, Sendable, Equatable {
    public var name: String
    public var mean: Double
    public var standardUncertainty: Double?
    public var low95: Double?
    public var high95: Double?
    /// `ResultKind`: a lower bound when a pixel of the region is clipped in every frame.
    public var kind: String
    public var clippedShare: Double?
    public var units: String
    /// With the camera's orientation and the sun: the share of the region in the circumsolar zone.
    public var circumsolarShare: Double?
}

/// What a study's run did.
public struct StudySummary: Sendable {
    public var measured = 0
    public var skipped = 0
    public var failed: [StudySetRecord] = []
    public var manifest: String
    /// Every set's latest record, over every manifest of the study, by set id.
    public var records: [StudySetRecord] = []
}

/// A study: the grouping's sets merged and measured one after another (each merge uses every
/// core; one set in memory at a time), one manifest line per set appended under a lock, so
/// shards and Slurm array tasks share the folder; finished sets are skipped on a rerun (their
/// frames unchanged), a set cut off by a kill is redone.
public struct StudyRun: Sendable {
    public var options: StudyOptions

    public init(options: StudyOptions) { self.options = options }

    public func run(_ grouping: BracketGrouping, frames: [SequenceFrame], into directory: String,
                    progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil) throws -> StudySummary {
        let dir = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        try Self.makeFolder(dir)
        if options.keep != nil { try Self.makeFolder(dir + "/sets") }
        if options.maps { try Self.makeFolder(dir + "/maps") }
        BatchConverter.removeAbandonedTemporaries(in: dir)
        if options.keep != nil { BatchConverter.removeAbandonedTemporaries(in: dir + "/sets") }
        let manifest = dir + "/" + (options.shard.count > 1 ? "sets-\(options.shard.index + 1)-of-\(options.shard.count).jsonl" : "sets.jsonl")
        let previous = Self.readRecords(in: dir)
        let writer = try ManifestWriter(path: manifest)
        defer { try? writer.close() }
        let byPath = Dictionary(frames.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        var summary = StudySummary(manifest: manifest)
        let mine = grouping.sets.enumerated().filter { options.shard.contains($0.offset) }.map(\.element)
        for (k, set) in mine.enumerated() {
            defer { progress?(k + 1, mine.count) }
            let sha = Self.digest(set.files)
            let target = options.keep.map { dir + "/sets/\(set.id).\($0.fileExtension)" }
            if options.resume, let old = previous[set.id], old.status == "ok", old.inputSHA256 == sha, !sha.isEmpty,
               old.output == target, target.map({ BatchConverter.verify(ManifestRecord.Output(format: "", path: $0, sha256: old.outputSHA256 ?? "")) }) ?? true {
                summary.skipped += 1
                continue
            }
            var record = measure(set, sha: sha, frames: set.files.compactMap { byPath[$0] }, target: target,
                                 map: options.maps ? dir + "/maps/\(set.id).png" : nil)
            record.finished = ISO8601DateFormatter().string(from: Date())
            try writer.append(record)
            if record.status == "ok" { summary.measured += 1 } else { summary.failed.append(record) }
        }
        summary.records = Self.readRecords(in: dir).values.sorted { $0.id < $1.id }
        return summary
    }

    /// The regions' mean luminance (Y) with their budgets.
    func regions(_ input: AnalysisInput, lens: FisheyeLens?, sun: SIMD3<Double>?) throws -> [StudyRegionRecord] {
        var request = AnalysisRequest()
        request.regions = options.regions
        request.percentiles = []
        request.develop = options.merge.develop
        let analysis = try Pipeline.analyze(input, request: request)
        return analysis.regions.map { r in
            let budget = r.budgets?.first { $0.quantity == "Y" && $0.statistic == "mean" }
            return StudyRegionRecord(name: r.name, mean: budget?.value ?? r.measurement.channels["Y"]?.mean ?? .nan,
                                     standardUncertainty: budget?.standardUncertainty, low95: budget?.low95, high95: budget?.high95,
                                     kind: (budget?.kind ?? r.measurement.channels["Y"]?.kind ?? .value).rawValue,
                                     clippedShare: r.measurement.clippedFraction, units: analysis.unitSymbol,
                                     circumsolarShare: zoneShare(r.name, lens: lens, sun: sun, input: input))
        }
    }

    /// The set's false-colour map: luminance in stops, clipped pixels in magenta, the regions
    /// and, with the sun in view, the circumsolar zone outlined.
    func drawMap(_ input: AnalysisInput, title: String, lens: FisheyeLens?, sun: SIMD3<Double>?, to path: String) throws {
        var regions = options.regions.filter { !$0.isMask }
        if let lens, let sun, let rim = Pipeline.circumsolarOutline(sun: sun, angle: options.circumsolarAngle, lens: lens) {
            regions.append(Region(name: "circumsolar \(String(format: "%g", options.circumsolarAngle))°", shape: .polygon(rim)))
        }
        let map = AnalysisCharts.evMap(input.image, title: title, regions: regions, maxSize: 800)
        try AnalysisCharts.write({ PlotRenderer.render(map, format: $0) }, to: path)
    }

    /// The share of region `name` in the circumsolar zone, with a lens and the sun.
    func zoneShare(_ name: String, lens: FisheyeLens?, sun: SIMD3<Double>?, input: AnalysisInput) -> Double? {
        guard let lens, let sun, let region = options.regions.first(where: { $0.name == name }),
              let selection = try? region.selection(width: input.image.width, height: input.image.height) else { return nil }
        return Pipeline.circumsolarShare(of: selection, lens: lens, sun: sun, angle: options.circumsolarAngle)
    }

    /// Creates the study's folder (and its parents), or says why it cannot: a file in the way,
    /// no permission.
    public static func makeFolder(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw OutputError(path: path, reason: "a file is in the way of the study's folder") }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw OutputError(path: path, reason: "cannot create the study's folder: \((error as NSError).localizedDescription)")
        }
    }

    /// One set merged and measured; a failure is the record's, not the run's.
    func measure(_ set: BracketGrouping.Set, sha: String, frames: [SequenceFrame], target: String?, map: String? = nil) -> StudySetRecord {
        let mid = UTCTime(seconds: (set.start.seconds + set.end.seconds) / 2)
        var record = StudySetRecord(id: set.id, start: set.start.iso8601, end: set.end.iso8601, mid: mid.iso8601, files: set.files,
                                    inputSHA256: sha, status: "ok", flags: [], software: SceneLinearVersion.software, finished: "",
                                    shard: options.shard.count > 1 ? options.shard.description : nil)
        var sunInCamera: SIMD3<Double>?
        if let site = options.site ?? frames.first?.site {
            let sun = SolarPosition(at: mid, site: site)
            sunInCamera = options.view?.cameraDirection(azimuth: sun.azimuth, elevation: sun.elevation)
            (record.sunElevation, record.sunAzimuth, record.site) = (sun.elevation, sun.azimuth, site)
            if sun.elevation < -0.833 { record.flags.append("sun-below-horizon") }
        }
        do {
            var merged = try Pipeline.merge(paths: set.files, options: options.merge)
            let report = merged.report, pixels = max(1, report.width * report.height)
            record.lowerBoundPixels = report.lowerBoundPixels
            record.lowerBoundShare = Double(report.lowerBoundPixels) / Double(pixels)
            record.ratioResiduals = report.frames.map { f in f.measuredExposure.map { $0 / f.nominalExposure - 1 } }
            record.disagreeingShares = report.frames.map(\.disagreeingShare)
            if report.lowerBoundPixels > 0 { record.flags.append("clipped-in-every-frame") }
            if report.frames.contains(where: { ($0.disagreeingShare ?? 0) > options.disagreementFlag }) { record.flags.append("scene-changed") }
            if !report.misstatedFrames.isEmpty { record.flags.append("exposure-misstated") }
            if report.frames.contains(where: { $0.exposureSource == "metadata, unchecked" }) { record.flags.append("ratios-unchecked") }
            let input = (options.fisheye != nil || !options.regions.isEmpty)
                ? AnalysisInput.prepared(path: set.id, image: merged.image, deviation: merged.standardDeviation.samples) : nil
            let lens = try options.fisheye?.lens(for: merged.image, path: set.id)
            if !options.regions.isEmpty, let input { record.regions = try regions(input, lens: lens, sun: sunInCamera) }
            if let lens, let input {
                // With glare, θ and ω computed once for both (12 bytes a pixel).
                let plain = FisheyeGeometry(lens: lens, width: merged.image.width, height: merged.image.height)
                let geometry = options.glare == nil ? plain : plain.whole()
                let e = try Pipeline.illuminance(input, geometry: geometry)
                record.illuminance = e.illuminance
                record.illuminanceUncertainty = e.standardUncertainty
                record.illuminanceLow95 = e.low95
                record.illuminanceHigh95 = e.kind == .value ? e.high95 : nil
                record.illuminanceKind = e.kind.rawValue
                record.illuminanceClippedShare = e.lowerBoundShare
                if let sun = sunInCamera {
                    record.circumsolar = Pipeline.circumsolar(input, geometry: geometry, sun: sun, angle: options.circumsolarAngle)
                    if record.circumsolar?.inView == true { record.flags.append("sun-in-view") }
                }
                // A circle that gives no light (a black frame at night) has E_v but no glare.
                if let glare = options.glare, e.illuminance > 0 {
                    record.glare = StudyGlareRecord(try GlareEvaluation.evaluate(input, geometry: geometry, scaleRelativeUncertainty: e.scaleRelativeUncertainty,
                                                                                 request: glare))
                }
            }
            if let map, let input {
                try drawMap(input, title: "\(set.id) — \(mid.iso8601)", lens: lens, sun: sunInCamera, to: map)
                record.map = map
            }
            if let target, let format = options.keep {
                _ = try MergedOutput().write(&merged, format: format, to: target, lens: lens)
                record.output = target
                record.outputSHA256 = try BatchConverter.digest(target)
            }
        } catch {
            let failure = (error as? any SceneLinearFailure)
            record.status = "failed"
            record.error = failure?.description ?? "\(error)"
            record.errorCategory = failure?.category.name
            record.exitCode = failure.map { Int32($0.category.exitCode) }
            if failure?.category == .bracketMismatch, record.error?.contains("disagree") == true { record.flags.append("scene-changed") }
        }
        return record
    }

    /// The SHA-256 of the frames' own SHA-256s in order ("" when one cannot be read).
    static func digest(_ files: [String]) -> String {
        var text = ""
        for f in files {
            guard let d = try? BatchConverter.digest(f) else { return "" }
            text += d
        }
        return SHA256Digest.hex(of: Data(text.utf8))
    }

    /// The latest record per set over the study's manifests (`sets*.jsonl`); lines cut by a
    /// kill are ignored (that set is redone).
    public static func readRecords(in directory: String) -> [String: StudySetRecord] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("sets") && $0.hasSuffix(".jsonl") }.sorted()
        var out: [String: StudySetRecord] = [:]
        for name in names {
            for r in BatchConverter.readLines(StudySetRecord.self, directory + "/" + name) {
                if let old = out[r.id], old.finished > r.finished { continue }
                out[r.id] = r
            }
        }
        return out
    }
}

/// `sequence -o STUDY --json`: the grouping and what the run did (schema "scenelinear.study/1").
public struct StudyDocument: Encodable {
    public var schema = "scenelinear.study/1"
    public var software = SceneLinearVersion.software
    public var measured: Int, skipped: Int, failed: Int
    public var manifest: String
    public var unassigned: [BracketGrouping.Left]
    public var sets: [StudySetRecord]

    public init(grouping: SequenceReport, summary: StudySummary) {
        (measured, skipped, failed, manifest) = (summary.measured, summary.skipped, summary.failed.count, summary.manifest)
        unassigned = grouping.grouping.unassigned
        sets = summary.records
    }
}

/// The study's time series as CSV: one row per set, in time order, the units in the header
/// (lx, degrees; shares as fractions; times UTC ISO 8601); empty cells where nothing was
/// measured; E_v's kind says whether it is a value or a lower bound (then no upper end).
public enum StudyTable {
    public static let header = ["set", "start_utc", "end_utc", "mid_utc", "frames", "status", "E_v [lx]", "E_v_u [lx]", "E_v_low95 [lx]",
                                "E_v_high95 [lx]", "E_v_kind", "E_v_clipped_share [1]", "lower_bound_pixel_share [1]",
                                "sun_elevation [deg]", "sun_azimuth_from_north [deg]", "sun_x [px]", "sun_y [px]", "circumsolar_share [1]", "DGP [1]", "DGP_low95 [1]", "DGP_high95 [1]", "DGP_kind",
                                "DGI [1]", "DGI_low95 [1]", "DGI_high95 [1]", "UGR [1]", "UGR_low95 [1]", "UGR_high95 [1]", "glare_sources",
                                "flags", "error", "software"]

    /// The regions any record measured, in the order first met, with their units.
    static func regionNames(_ records: [StudySetRecord]) -> [(name: String, units: String)] {
        var out: [(String, String)] = []
        for r in records { for g in r.regions ?? [] where !out.contains(where: { $0.0 == g.name }) { out.append((g.name, g.units)) } }
        return out
    }

    public static func csv(_ records: [StudySetRecord]) -> String {
        func n(_ v: Double?) -> String { v.map { String(format: "%.8g", $0) } ?? "" }
        let quoted = AnalysisOutput.csvField
        let regions = regionNames(records)
        let regionHeader = regions.flatMap { g in ["L_\(g.name) [\(g.units)]", "L_\(g.name)_u [\(g.units)]", "L_\(g.name)_low95 [\(g.units)]",
                                                   "L_\(g.name)_high95 [\(g.units)]", "L_\(g.name)_kind", "L_\(g.name)_circumsolar_share [1]"] }
        var lines = [(header.dropLast(3) + regionHeader + header.suffix(3)).map(quoted).joined(separator: ",")]
        for r in records.sorted(by: { $0.start < $1.start }) {
            let cells = regions.flatMap { g -> [String] in
                guard let m = r.regions?.first(where: { $0.name == g.name }) else { return ["", "", "", "", "", ""] }
                return [n(m.mean), n(m.standardUncertainty), n(m.low95), n(m.high95), m.kind, n(m.circumsolarShare)]
            }
            lines.append(([r.id, r.start, r.end, r.mid, String(r.files.count), r.status, n(r.illuminance), n(r.illuminanceUncertainty),
                           n(r.illuminanceLow95), n(r.illuminanceHigh95), r.illuminanceKind ?? "", n(r.illuminanceClippedShare),
                           n(r.lowerBoundShare), n(r.sunElevation), n(r.sunAzimuth), n(r.circumsolar?.sunX), n(r.circumsolar?.sunY),
                           n(r.circumsolar?.illuminanceShare)] + glareCells(r.glare) + cells + [r.flags.joined(separator: " "), r.error ?? "", r.software])
                .map(quoted).joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func glareCells(_ g: StudyGlareRecord?) -> [String] {
        func n(_ v: Double?) -> String { v.map { String(format: "%.6g", $0) } ?? "" }
        guard let g else { return Array(repeating: "", count: 11) }
        return [n(g.dgp.value), n(g.dgp.low95), n(g.dgp.high95), g.dgp.kind.rawValue, n(g.dgi.value), n(g.dgi.low95), n(g.dgi.high95),
                n(g.ugr?.value), n(g.ugr?.low95), n(g.ugr?.high95), String(g.sources)]
    }

    /// Written whole through a temporary file: a reader never sees half a table. Nothing is
    /// written without records (its rows carry the software's name, which marks the file as
    /// this tool's for the next run to replace).
    public static func write(_ records: [StudySetRecord], to path: String) throws {
        guard !records.isEmpty else { return }
        try AtomicFile.write(Data(csv(records).utf8), to: path)
    }
}

/// The study's time series as HDF5 that `xarray.open_dataset` opens directly: a CF `time`
/// coordinate (the sets' middles, int64 milliseconds since 1970-01-01 00:00:00Z, calendar
/// standard) and one variable per quantity with its `units` and `long_name`; NaN where nothing
/// was measured; E_v's kind and the status as CF flag values, the QC flags as CF flag masks.
public enum StudySeries {
    public static let flagNames = ["clipped-in-every-frame", "scene-changed", "exposure-misstated", "ratios-unchecked", "sun-below-horizon", "sun-in-view"]
    public static let kinds: [ResultKind] = [.value, .lowerBound, .upperBound, .undetermined, .clippingUnknown]

    public static func series(_ records: [StudySetRecord]) -> HDF5Series {
        let rows = records.sorted { $0.start < $1.start }, n = rows.count
        func ms(_ iso: String) -> Int {
            guard case .success(let t) = UTCTime.parse(iso: iso) else { return 0 }
            return Int((t.seconds * 1000).rounded())
        }
        let timeUnits = "milliseconds since 1970-01-01 00:00:00Z"
        func time(_ name: String, _ values: [Int], _ long: String, standard: Bool = false) -> HDF5Dataset {
            var a = [MetadataItem("units", .text(timeUnits)), MetadataItem("calendar", .text("standard")), MetadataItem("long_name", .text(long))]
            if standard { a.insert(MetadataItem("standard_name", .text("time")), at: 0) }
            return HDF5Dataset(name: name, shape: [n], values: .integers(values), attributes: a)
        }
        func number(_ name: String, _ values: [Double?], units: String, _ long: String) -> HDF5Dataset {
            HDF5Dataset(name: name, shape: [n], values: .doubles(values.map { $0 ?? .nan }),
                        attributes: [MetadataItem("units", .text(units)), MetadataItem("long_name", .text(long))])
        }
        func kind(_ name: String, _ values: [String?], _ long: String) -> HDF5Dataset {
            HDF5Dataset(name: name, shape: [n], values: .integers(values.map { v in v.flatMap { k in kinds.firstIndex { $0.rawValue == k } } ?? -1 }),
                        attributes: [MetadataItem("long_name", .text(long)), MetadataItem("flag_values", .integers(Array(0..<kinds.count))),
                                     MetadataItem("flag_meanings", .text(kinds.map { $0.rawValue.replacingOccurrences(of: "-", with: "_") }.joined(separator: " "))),
                                     MetadataItem("missing_value", .integer(-1))])
        }
        let flagBits = rows.map { r in flagNames.enumerated().reduce(0) { r.flags.contains($1.element) ? $0 | (1 << $1.offset) : $0 } }
        let variables = [
            time("time_start", rows.map { ms($0.start) }, "start of the set's first exposure"),
            time("time_end", rows.map { ms($0.end) }, "end of the set's last exposure"),
            HDF5Dataset(name: "frames", shape: [n], values: .integers(rows.map(\.files.count)),
                        attributes: [MetadataItem("units", .text("1")), MetadataItem("long_name", .text("frames merged"))]),
            HDF5Dataset(name: "status", shape: [n], values: .integers(rows.map { $0.status == "ok" ? 0 : 1 }),
                        attributes: [MetadataItem("long_name", .text("whether the set was merged and measured")),
                                     MetadataItem("flag_values", .integers([0, 1])), MetadataItem("flag_meanings", .text("ok failed"))]),
            number("E_v", rows.map(\.illuminance), units: "lx", "vertical illuminance at the lens (a lower bound where E_v_kind says so)"),
            number("E_v_u", rows.map(\.illuminanceUncertainty), units: "lx", "standard uncertainty of E_v"),
            number("E_v_low95", rows.map(\.illuminanceLow95), units: "lx", "lower end of E_v's 95 % interval"),
            number("E_v_high95", rows.map(\.illuminanceHigh95), units: "lx", "upper end of E_v's 95 % interval (NaN for a lower bound)"),
            kind("E_v_kind", rows.map(\.illuminanceKind), "what E_v is"),
            number("E_v_clipped_share", rows.map(\.illuminanceClippedShare), units: "1", "share of E_v the pixels clipped in every frame give as recorded"),
            number("lower_bound_pixel_share", rows.map(\.lowerBoundShare), units: "1", "share of the pixels clipped in every frame"),
            number("sun_elevation", rows.map(\.sunElevation), units: "degree", "apparent elevation of the sun at the set's middle"),
            number("sun_azimuth", rows.map(\.sunAzimuth), units: "degree", "azimuth of the sun, east of north"),
            number("sun_x", rows.map { $0.circumsolar?.sunX }, units: "1", "column of the sun's position in the image (pixels; NaN outside the field)"),
            number("sun_y", rows.map { $0.circumsolar?.sunY }, units: "1", "row of the sun's position in the image (pixels)"),
            number("circumsolar_share", rows.map { $0.circumsolar?.illuminanceShare }, units: "1", "share of E_v from the circumsolar zone"),
            number("DGP", rows.map { $0.glare?.dgp.value }, units: "1", "daylight glare probability (a lower bound where glare_kind says so)"),
            number("DGP_low95", rows.map { $0.glare?.dgp.low95 }, units: "1", "lower end of DGP's 95 % interval"),
            number("DGP_high95", rows.map { $0.glare?.dgp.high95 }, units: "1", "upper end of DGP's 95 % interval (NaN for a bound)"),
            number("DGI", rows.map { $0.glare?.dgi.value }, units: "1", "daylight glare index"),
            number("DGI_low95", rows.map { $0.glare?.dgi.low95 }, units: "1", "lower end of DGI's 95 % interval"),
            number("DGI_high95", rows.map { $0.glare?.dgi.high95 }, units: "1", "upper end of DGI's 95 % interval (NaN for a bound)"),
            number("UGR", rows.map { $0.glare?.ugr?.value }, units: "1", "unified glare rating"),
            number("UGR_low95", rows.map { $0.glare?.ugr?.low95 }, units: "1", "lower end of UGR's 95 % interval"),
            number("UGR_high95", rows.map { $0.glare?.ugr?.high95 }, units: "1", "upper end of UGR's 95 % interval (NaN for a bound)"),
            kind("glare_kind", rows.map { $0.glare?.dgp.kind.rawValue }, "what DGP, DGI and UGR are"),
            HDF5Dataset(name: "qc_flags", shape: [n], values: .integers(flagBits),
                        attributes: [MetadataItem("long_name", .text("quality flags")),
                                     MetadataItem("flag_masks", .integers(flagNames.indices.map { 1 << $0 })),
                                     MetadataItem("flag_meanings", .text(flagNames.map { $0.replacingOccurrences(of: "-", with: "_") }.joined(separator: " ")))]),
        ]
        var regionVariables: [HDF5Dataset] = []
        for g in StudyTable.regionNames(rows) {
            let units = g.units == "cd/m²" ? "cd m-2" : g.units.hasPrefix("W") ? "W m-2 sr-1" : "1"
            let m = rows.map { r in r.regions?.first { $0.name == g.name } }
            regionVariables += [
                number("L_\(g.name)", m.map { $0?.mean }, units: units, "mean luminance of the region \(g.name)"),
                number("L_\(g.name)_u", m.map { $0?.standardUncertainty }, units: units, "its standard uncertainty"),
                number("L_\(g.name)_low95", m.map { $0?.low95 }, units: units, "lower end of its 95 % interval"),
                number("L_\(g.name)_high95", m.map { $0?.high95 }, units: units, "upper end of its 95 % interval (NaN for a lower bound)"),
                kind("L_\(g.name)_kind", m.map { $0?.kind }, "what L_\(g.name) is"),
                number("L_\(g.name)_circumsolar_share", m.map { $0?.circumsolarShare }, units: "1", "share of the region in the circumsolar zone"),
            ]
        }
        return HDF5Series(dimension: time("time", rows.map { ms($0.mid) }, "middle of the set's exposures", standard: true), variables: variables + regionVariables,
                          attributes: [MetadataItem("Conventions", .text("CF-1.8")), MetadataItem("title", .text("SceneLinear study: bracket sets merged and measured")),
                                       MetadataItem("source", .text(SceneLinearVersion.software)),
                                       MetadataItem("comment", .text("one row per set; see docs/studies.md"))])
    }
}
