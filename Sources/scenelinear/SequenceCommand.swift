import ArgumentParser
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct Sequence: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sequence",
            abstract: "Group a study's DNG frames into bracket sets; with -o, merge and measure each set into a time series.",
            discussion: """
                Reads each DNG's capture time (DateTimeOriginal with SubSecTimeOriginal, in UTC by \
                OffsetTimeOriginal or --utc-offset), exposure, aperture, body, lens and size, sorts \
                the frames by time and starts a new set when the pause from the end of one exposure \
                (its start + exposure time) to the next start exceeds --gap, when the body, lens, \
                size or aperture changes, or when an exposure repeats one already in the set (the \
                pattern starting again). A set of another size than --frames-per-set (default: the \
                most common size found) is not a set: its frames are listed as unassigned with the \
                reason, as are frames without a capture time or exposure time. Nothing is dropped \
                silently and no frame is merged into a wrong set.

                Prints the sets (id, start and end in UTC, files, each frame's exposure in stops \
                below the longest) and the unassigned frames; --json prints schema \
                "scenelinear.sequence/1". Exit code 0 also when frames are unassigned: read the report.

                With -o STUDY (a folder, created), the grouping is written to STUDY/grouping.json \
                and, unless --group-only, each set is merged (as `merge` does, in --units luminance \
                by default) and measured, one after another: E_v with its 95 % interval or as a \
                lower bound (with --projection), DGP, DGI and UGR with their intervals (with \
                --projection, as `glare` evaluates them; --no-glare skips them), each --region's mean luminance with its interval, \
                the share of pixels clipped in every frame, each \
                frame's measured exposure ratio against its metadata's, the sun's elevation and \
                azimuth at the set's middle (from --site or the first frame's GPS tags), with --view \
                the sun's image position and the circumsolar zone's share of E_v and of each region, \
                and QC flags (clipped-in-every-frame, scene-changed, exposure-misstated, \
                ratios-unchecked, sun-below-horizon, sun-in-view). With --watch the folders are \
                watched for a live rig and each set measured once complete, until SIGTERM/SIGINT. Each set's record is appended to STUDY/sets.jsonl (one line, \
                under a lock: shards of a Slurm job array, or --shard i/n, share the folder, each in \
                its own sets-<i>-of-<n>.jsonl); a rerun skips the sets already measured whose frames \
                are unchanged (--no-resume redoes them) and redoes a set cut off by a kill. At the end \
                STUDY/timeseries.csv holds every set measured so far, units in its header, STUDY/timeseries.h5 the same with a CF time coordinate (xarray.open_dataset opens it), STUDY/illuminance.png E_v and STUDY/glare.png DGP against time with 95 % intervals and lower bounds drawn as bounds. --keep \
                exr|h5|hdr also writes each merged set to STUDY/sets/<id>.<ext>. A set that cannot \
                be merged (frames of different scenes, another camera) is recorded as failed with \
                its error and the run goes on; the exit code is then that error's. \
                docs/studies.md#measuring-the-sets.
                """)

        @Argument(help: "DNG files or folders of them.")
        var inputs: [String]

        @Option(help: ArgumentHelp("The longest pause within a set, seconds, from the end of one exposure to the start of the next.", valueName: "s"))
        var gap: Double = 2

        @Option(help: ArgumentHelp("The frames of a complete set (default: the most common set size).", valueName: "N"))
        var framesPerSet: Int?

        @Option(help: ArgumentHelp("The sets given instead of found: a CSV with the columns set and file (one row per frame) or JSON (set id → files, or a list of {\"id\", \"files\"}); relative paths from its folder. Each set is checked as a found one (--gap applies, --frames-per-set does not); frames in none are listed as unassigned.", valueName: "sets.csv|sets.json"))
        var sets: String?

        @Option(parsing: .unconditional, help: ArgumentHelp("The camera clock's zone for files without OffsetTimeOriginal: ±HH:MM east of UTC.", valueName: "±HH:MM"))
        var utcOffset: String?

        @Option(name: .shortAndLong, help: ArgumentHelp("The study's folder (created): grouping.json, sets.jsonl, timeseries.csv, timeseries.h5, illuminance.png, glare.png.", valueName: "study/"))
        var output: String?

        @Flag(help: "With -o: write the grouping only, measure nothing.")
        var groupOnly = false

        @Option(parsing: .unconditional, help: ArgumentHelp("The site of the sun's position per set: latitude,longitude[,elevation] (default: the first frame's GPS tags).", valueName: "lat,lon[,m]"))
        var site: String?

        @Option(help: ArgumentHelp("Also keep each merged set as STUDY/sets/<id>.exr, .h5 or .hdr.", valueName: "exr|h5|hdr"))
        var keep: String?

        @Option(help: ArgumentHelp("Measure only part i of n (0 ≤ i < n) of the sets. Default in a Slurm job array submitted as 0, s, 2s, …: task i·s is part i of SLURM_ARRAY_TASK_COUNT.", valueName: "i/n"), transform: ArgumentValue.shard)
        var shard: Shard?

        @Flag(help: "Measure every set again, even those a manifest in the folder records as done.")
        var noResume = false

        @Option(help: ArgumentHelp("With -o: watch the folders for a live rig, every this many seconds measuring the sets that are complete, until SIGTERM or SIGINT (exit 143 or 130, the manifest and time series as of the last set).", valueName: "seconds"))
        var watch: Double?

        @Option(help: ArgumentHelp("With --watch: seconds a frame's file must stay unchanged before it is read; a set is complete when the next one has started or no frame is still settling.", valueName: "seconds"))
        var settle: Double = 30

        @OptionGroup var fisheye: FisheyeOptions

        @OptionGroup var regionOptions: RegionOptions

        @OptionGroup var glare: GlareOptions

        @Option(parsing: .unconditional, help: ArgumentHelp("The camera's orientation: its axis's azimuth (east of north) and elevation, and its roll (clockwise seen from behind; degrees); with the sun, each set records where the sun falls in the image and the circumsolar zone's share of E_v and of each region. 180,90: at the zenith, north up.", valueName: "az,el[,roll]"))
        var view: String?

        @Option(help: ArgumentHelp("With --view: the circumsolar zone's radius about the sun.", valueName: "degrees"))
        var circumsolar: Double = 10

        @Flag(help: "With -o: draw each set's false-colour map of luminance (STUDY/maps/<id>.png: stops, clipped pixels in magenta, the regions and the circumsolar zone outlined).")
        var maps = false

        @OptionGroup var unchecked: UncheckedRatiosOption

        @Flag(help: "With a fisheye: do not evaluate glare (DGP, DGI, UGR) per set.")
        var noGlare = false

        @OptionGroup var unitOptions: UnitOptions

        @OptionGroup var demosaicOption: DemosaicOption

        @OptionGroup var limits: LimitOptions

        @OptionGroup var style: OutputStyleOptions
        @OptionGroup var outputSafety: OutputSafety

        func validate() throws {
            if !(gap >= 0 && gap <= 86400) { throw ValidationError("--gap must lie between 0 and 86400 seconds") }
            if let framesPerSet, framesPerSet < 2 || framesPerSet > 1000 { throw ValidationError("--frames-per-set must lie between 2 and 1000") }
            if let utcOffset, UTCTime.parseOffset(utcOffset) == nil { throw ValidationError("--utc-offset '\(utcOffset)' is not ±HH:MM") }
            if let site, case .failure(let e) = Site.parse(site) { throw ValidationError(e.description) }
            if let keep, !["exr", "h5", "hdr"].contains(keep) { throw ValidationError("--keep must be exr, h5 or hdr") }
            if output == nil && (groupOnly || keep != nil || shard != nil || watch != nil || maps) { throw ValidationError("--group-only, --keep, --shard, --watch and --maps need -o STUDY") }
            if let watch {
                if !(watch >= 0.1 && watch <= 86400) { throw ValidationError("--watch must lie between 0.1 and 86400 seconds") }
                if groupOnly || sets != nil || shard != nil || style.json { throw ValidationError("--watch takes none of --group-only, --sets, --shard, --json") }
            }
            if let view, case .failure(let e) = CameraOrientation.parse(view) { throw ValidationError(e.description) }
            if view != nil && fisheye.projection == nil { throw ValidationError("--view needs --projection (the fisheye the sun is found through)") }
            if !(circumsolar > 0 && circumsolar <= 90) { throw ValidationError("--circumsolar must lie in (0, 90] degrees") }
            if !(settle >= 0 && settle <= 86400) { throw ValidationError("--settle must lie between 0 and 86400 seconds") }
            try fisheye.requireProjectionForLensOptions()
        }

        /// The sets of `--sets`, or those found by the rule.
        func grouping(_ frames: [SequenceFrame]) throws -> BracketGrouping {
            guard let sets else { return BracketGrouping(frames: frames, rule: GroupingRule(gap: gap, framesPerSet: framesPerSet)) }
            guard FileManager.default.fileExists(atPath: sets) else { throw ContainerError.fileNotFound(path: sets) }
            guard let text = try? String(contentsOfFile: sets, encoding: .utf8) else { throw ValidationError("--sets \(sets): cannot read it as UTF-8 text") }
            switch SetManifest.parse(text, path: sets) {
            case .success(let manifest): return BracketGrouping(manifest: manifest, frames: frames, gap: gap)
            case .failure(let e): throw ValidationError(e.description)
            }
        }

        func studyOptions() throws -> StudyOptions {
            var options = StudyOptions()
            try unitOptions.apply(to: &options.merge.develop, exposure: .none, absoluteByDefault: true)
            demosaicOption.apply(to: &options.merge.develop)
            limits.apply(to: &options.merge.develop)
            options.fisheye = fisheye.request
            options.regions = regionOptions.regions
            options.glare = noGlare ? nil : glare.request
            options.merge.allowUncheckedRatios = unchecked.uncheckedRatios
            options.view = try view.map { try CameraOrientation.parse($0).get() }
            options.circumsolarAngle = circumsolar
            options.maps = maps
            options.site = try site.map { try Site.parse($0).get() }
            options.keep = keep.flatMap { OutputFormat(pathExtension: $0) }
            if let shard { options.shard = shard } else if let fromArray = try Shard.fromSlurm() { options.shard = fromArray }
            options.resume = !noResume
            return options
        }

        func run() throws {
            if let watch, let output { return try reportingFailures { try watchFolders(every: watch, into: output) } }
            try reportingFailures(json: style.json) {
                let frames = try SequenceFrames.read(inputs, fallbackOffset: utcOffset.flatMap(UTCTime.parseOffset))
                let report = SequenceReport(try grouping(frames))
                guard let output else {
                    print(style.json ? try report.json() : report.text)
                    return
                }
                try StudyRun.makeFolder(output)
                try report.write(to: output + "/grouping.json")
                if groupOnly {
                    print(style.json ? try report.json() : report.text)
                    return
                }
                let summary = try limits.withParallelism { try StudyRun(options: try studyOptions()).run(report.grouping, frames: frames, into: output) }
                try Self.writeSeries(summary.records, into: output)
                if style.json {
                    print(try ReportJSON.encode(StudyDocument(grouping: report, summary: summary)))
                } else if !style.quiet {
                    print(report.text)
                    print("measured \(summary.measured) sets, skipped \(summary.skipped) already measured, \(summary.failed.count) failed; \(summary.records.count) in \(output)/timeseries.csv")
                    for f in summary.failed { print("  failed: \(f.id): \(f.error ?? "")") }
                }
                if let first = summary.failed.first, let code = first.exitCode { throw ExitCode(code) }
            }
        }

        /// The time series, its HDF5 twin and the charts, each written whole.
        static func writeSeries(_ records: [StudySetRecord], into output: String) throws {
            try StudyTable.write(records, to: output + "/timeseries.csv")
            if !records.isEmpty { try StudySeries.series(records).write(to: output + "/timeseries.h5") }
            try StudyChart.write(records, to: output + "/illuminance.png")
            try StudyChart.write(records, .glareProbability, to: output + "/glare.png")
        }

        /// --watch: cycles until a signal ends the process (`StudyWatch`).
        func watchFolders(every interval: Double, into output: String) throws {
            try StudyRun.makeFolder(output)
            var watcher = StudyWatch(inputs: inputs, output: output, rule: GroupingRule(gap: gap, framesPerSet: framesPerSet),
                                     fallbackOffset: utcOffset.flatMap(UTCTime.parseOffset), settle: settle, options: try studyOptions())
            var reported = Set<String>()
            while true {
                let cycle = try limits.withParallelism { try watcher.cycle() }
                try SequenceReport(cycle.grouping).write(to: output + "/grouping.json")
                for bad in cycle.unreadable where reported.insert(bad.file).inserted {
                    FileHandle.standardError.write(Data("scenelinear: warning: \(bad.file): not read (\(bad.reason))\n".utf8))
                }
                if let summary = cycle.summary {
                    try Self.writeSeries(summary.records, into: output)
                    if !style.quiet {
                        // Written at once, not buffered: a watcher is ended by a signal.
                        var text = "\(ISO8601DateFormatter().string(from: Date())): measured \(summary.measured) sets, \(summary.failed.count) failed; "
                            + "\(summary.records.count) in \(output)/timeseries.csv; \(cycle.waiting) set(s) not complete, \(cycle.settling.count) frame(s) settling\n"
                        for f in summary.failed { text += "  failed: \(f.id): \(f.error ?? "")\n" }
                        FileHandle.standardOutput.write(Data(text.utf8))
                    }
                }
                Thread.sleep(forTimeInterval: interval)
            }
        }
    }
}
