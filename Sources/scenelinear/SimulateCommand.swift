import ArgumentParser
import CaptureSimulation
import ExchangeCore
import Foundation
import SceneLinearKit
import SimulationCheck

extension SceneLinearCommand {
    struct Simulate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "simulate",
            abstract: "Photograph a scene of known radiance with a simulated camera: a DNG plus its ground truth.",
            discussion: """
                The scene is a built-in one (grey-ramp, colour-chart, sunset, sky-sun, sky-dome), a scene \
                description (.json, see docs/simulation.md), or a radiance map (.exr or .h5 written by \
                this tool: linear Rec.2020; or a Radiance .hdr picture, e.g. rendered by rpict: a scene in \
                absolute units, cd/m², whose camera needs a quantumScale to match). The camera (exposure, full well, shot/read/dark noise, \
                PRNU/DSNU, ADC bits, black level, companding, colour sensitivities, LinearRaw or CFA) \
                comes from --camera (.json; missing fields keep their defaults) and the options below. \
                Writes <name>.dng, <name>.truth.exr and <name>.truth.h5 (the radiance in the decoder's \
                output units and geometry), <name>.expected.h5 (the exact decode of the stored codes) and \
                <name>.truth.json (everything needed to rebuild the truth; used by `validate`). With \
                --bracket, one DNG per exposure offset (<name>_1.dng, … in the order given) of the same \
                scene, and one truth (<name>.truth.exr, .truth.h5, .truth.json) in the units of the 0 EV \
                exposure; `merge` merges the frames and `validate <name>_1.dng <name>_2.dng …` checks \
                the merge against the truth.

                --day YYYY-MM-DD simulates a study's day (docs/studies.md#a-simulated-day): --sets \
                brackets (--bracket, default -8,-4,0) --interval minutes apart from --first-set (local \
                time, --capture-offset its UTC offset), of a 180° equidistant fisheye looking at the \
                zenith (--size, default 160x160) under a CIE overcast sky whose sun moves as `sun` \
                computes it for --site and brightens with its elevation (caught by the shortest frame \
                when low, clipped in every frame when high); --clouds lists sets whose longest frame \
                sees a cloud the others do not. Writes <name>-<k>_<i>.dng with each set's truth \
                (<name>-<k>.truth.*), <name>.day.jsonl (per set: time, sun, E_v and DGP, DGI, UGR of \
                the truth luminance map) and <name>.camera.json (the simulation's own camera constant \
                as a calibration, ±0.2 %). `validate <name>.day.jsonl --study STUDY` checks a study \
                of the day against it.
                """)

        @Option(help: "Scene: a built-in name, a .json description, or a .exr/.h5 radiance map or a Radiance .hdr picture.")
        var scene: String = BuiltInScene.greyRamp.rawValue

        @OptionGroup var outputSafety: OutputSafety

        @Option(help: "Camera description (.json).")
        var camera: String?

        @Option(name: .shortAndLong, help: "Output directory (created when missing).")
        var output: String = "."

        @OptionGroup var quietOption: QuietOption

        @Option(help: "Base name of the files (default: the scene's name).")
        var name: String?

        @Option(help: ArgumentHelp("Image width and height for built-in scenes (default 1024x768; with --day 160x160, square).", valueName: "size"), transform: ArgumentValue.imageSize)
        var size: ImageSize?

        @Option(help: ArgumentHelp("Simulate a study's day on this local date: one bracket per set (see above).", valueName: "YYYY-MM-DD"))
        var day: String?

        @Option(parsing: .unconditional, help: ArgumentHelp("With --day: the site, latitude,longitude[,elevation] (degrees north and east, metres).", valueName: "lat,lon[,m]"))
        var site: String?

        @Option(help: ArgumentHelp("With --day: the local time of the first set.", valueName: "HH:MM"))
        var firstSet = "06:00"

        @Option(help: ArgumentHelp("With --day: minutes from one set to the next.", valueName: "minutes"))
        var interval: Double = 10

        @Option(help: ArgumentHelp("With --day: the number of sets.", valueName: "n"))
        var sets = 60

        @Option(help: ArgumentHelp("With --day: sets (from 1, comma-separated) whose longest frame sees a cloud the others do not.", valueName: "k,k,..."))
        var clouds: String?

        @Option(help: "Layout: linear-raw (3 samples per pixel, like ProRAW) or cfa.")
        var layout: String?

        @Option(help: "Bayer phase for cfa: RGGB, BGGR, GRBG or GBRG.")
        var cfaPattern: String?

        @Option(help: "Storage: lossless-jpeg or uncompressed.")
        var storage: String?

        @Option(help: "Random seed.")
        var seed: UInt64?

        @Flag(inversion: .prefixedNo, help: "Simulate noise (shot, read, dark, PRNU, DSNU); --no-noise gives the noise-free expected capture.")
        var noise = true

        @Option(help: "Exposure time in seconds (overrides the camera file).")
        var exposureTime: Double?

        @Option(help: "ISO (overrides the camera file).")
        var iso: Double?

        @Option(help: ArgumentHelp("Capture time the DNG records (EXIF DateTimeOriginal, the camera's local time), \"YYYY:MM:DD HH:MM:SS\" (overrides the camera file).", valueName: "time"))
        var captureTime: String?

        @Option(parsing: .unconditional, help: ArgumentHelp("The capture time's UTC offset the DNG records (EXIF OffsetTimeOriginal), ±HH:MM (overrides the camera file).", valueName: "±HH:MM"))
        var captureOffset: String?

        @Option(parsing: .unconditional, help: ArgumentHelp("A bracket: exposure offsets in stops, comma-separated (e.g. -4,0,4): one DNG per offset, exposure time × 2^offset.", valueName: "ev,ev,..."),
                transform: ArgumentValue.bracketStops)
        var bracket: BracketStops?

        @Option(help: ArgumentHelp("With --bracket: frame N (from 1, in the order of --bracket) is photographed through a filter of transmittance T (0.001, or an optical density ND3): the light on the sensor × T, the DNG's metadata unchanged; the record keeps T. Repeat for more frames.", valueName: "N=T"),
                transform: ArgumentValue.frameFilter)
        var frameFilter: [FrameFilter] = []

        func validate() throws {
            if day == nil, site != nil || clouds != nil { throw ValidationError("--site and --clouds need --day") }
            if day != nil {
                _ = try dayPlan()
                if !frameFilter.isEmpty { throw ValidationError("--frame-filter does not apply to --day") }
                if let size, size.width != size.height { throw ValidationError("--day needs a square --size") }
                return
            }
            guard let stops = bracket?.stops else {
                if !frameFilter.isEmpty { throw ValidationError("--frame-filter needs --bracket") }
                return
            }
            for f in frameFilter where f.frame >= stops.count {
                throw ValidationError("--frame-filter \(f.frame + 1)=…: the bracket has \(stops.count) frames")
            }
        }

        /// The day of --day.
        func dayPlan() throws -> DayPlan {
            guard let day else { throw ValidationError("no --day") }
            guard let site else { throw ValidationError("--day needs --site") }
            guard let offset = captureOffset else { throw ValidationError("--day needs --capture-offset (the camera clock's UTC offset)") }
            if captureTime != nil { throw ValidationError("--day sets each set's capture time: leave out --capture-time") }
            var plan = DayPlan(site: try Site.parse(site).mapError { ValidationError($0.description) }.get(), date: day, utcOffset: offset,
                               firstSet: firstSet, interval: interval, sets: sets)
            if let stops = bracket?.stops { plan.stops = stops }
            if let size { plan.size = size.width }
            if let seed { plan.seed = seed }
            if let clouds {
                let list = clouds.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
                guard list.allSatisfy({ $0 != nil }) else { throw ValidationError("--clouds: give set numbers from 1, comma-separated") }
                plan.clouds = list.map { $0! - 1 }
            }
            if let problem = plan.problem { throw ValidationError(problem) }
            return plan
        }

        /// The camera file with the options' overrides.
        func cameraModel() throws -> CameraModel {
            var model = try camera.map(CameraModel.read) ?? CameraModel()
            if let layout { model.layout = layout }
            if let cfaPattern { model.cfaPattern = cfaPattern }
            if let storage { model.storage = storage }
            if let seed { model.seed = seed }
            if let exposureTime { model.exposureTime = exposureTime }
            if let iso { model.iso = iso }
            if let captureTime {
                guard CaptureDate.isExifDateTime(captureTime) else {
                    throw ValidationError("--capture-time: give \"YYYY:MM:DD HH:MM:SS\", not '\(captureTime)'")
                }
                model.captureTime = captureTime
            }
            if let captureOffset {
                guard UTCTime.parseOffset(captureOffset) != nil, captureOffset.count == 6 else {
                    throw ValidationError("--capture-offset: give ±HH:MM, not '\(captureOffset)'")
                }
                model.captureOffset = captureOffset
            }
            model.noise = noise
            return model
        }

        func run() throws {
            try reportingFailures {
                if day != nil { return try runDay() }
                let model = try cameraModel()
                let size = self.size ?? ImageSize(width: 1024, height: 768)
                let rendered = try Pipeline.loadScene(scene, width: size.width, height: size.height)
                try Pipeline.prepareSimulationDirectory(output)
                let quiet = quietOption.quiet
                if let stops = bracket?.stops {
                    let result = try Pipeline.simulateBracket(scene: rendered, camera: model, stops: stops,
                                                              name: name ?? rendered.description.name, directory: output,
                                                              filters: Dictionary(frameFilter.map { ($0.frame, $0.filter.transmittance) },
                                                                                  uniquingKeysWith: { $1 }))
                    if quiet { return }
                    print("simulated a bracket of \(stops.count) frames of \(rendered.description.name) \(rendered.radiance.width)×\(rendered.radiance.height), \(model.layout), \(model.noise ? "noise" : "no noise"); truth in 0 EV units (radiance × \(String(format: "%.6g", result.record.radianceToOutput)))")
                    for (frame, stop) in zip(result.frames, stops) { print("wrote \(frame) (\(String(format: "%+g", stop)) EV)") }
                    for role in ["truth-exr", "truth-hdf5", "record"] {
                        if let path = result.files[role] { print("wrote \(path) (\(role))") }
                    }
                    return
                }
                let result = try Pipeline.simulate(scene: rendered, camera: model, name: name ?? rendered.description.name,
                                                   directory: output)
                let c = result.record.camera
                if quiet { return }
                print("simulated \(rendered.description.name) \(rendered.radiance.width)×\(rendered.radiance.height), \(c.layout), \(c.noise ? "noise seed \(c.seed)" : "no noise"), radiance × \(String(format: "%.6g", result.record.radianceToOutput)) = output")
                for role in ["dng", "truth-exr", "truth-hdf5", "expected-hdf5", "record"] {
                    if let path = result.files[role] { print("wrote \(path) (\(role))") }
                }
            }
        }

        /// --day: the day's sets, their truths, the simulation's calibration.
        func runDay() throws {
            let plan = try dayPlan()
            var model = try cameraModel()
            model.captureOffset = plan.utcOffset
            try Pipeline.prepareSimulationDirectory(output)
            let name = self.name ?? "day"
            let truths = try Pipeline.simulateDay(plan, camera: model, name: name, directory: output)
            if quietOption.quiet { return }
            let measured = truths.filter { ($0.sunOverWhite ?? 0) <= 1 }.count
            print("simulated \(truths.count) sets of \(plan.stops.count) frames (\(plan.size)×\(plan.size)) from \(truths.first!.mid) to \(truths.last!.mid): the sun caught by the shortest frame in \(measured), clipped in every frame in \(truths.count - measured), \(plan.clouds.count) with a cloud")
            print("wrote \(output)/\(name).day.jsonl (truth per set), \(output)/\(name).camera.json (the simulation's camera constant)")
        }
    }

    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "validate",
            abstract: "Compare the decode of a simulated capture with its ground truth.",
            discussion: """
                Decodes the DNG (no crop, sensor orientation; superpixel for CFA) and reports: the \
                decode against the exact decode of the stored codes (must agree to half-float \
                rounding); per patch and channel the bias against the true radiance and the \
                measured noise variance against the NoiseProfile prediction; radiance ratios (sky/sun \
                by default when the scene has them) with 95 % intervals against the true ratio. \
                Exits 0 when every check passes, 20 otherwise (thresholds in docs/validation.md).
                """)

        @Argument(help: "The simulated DNG, or the frames of a simulated bracket (merged, then checked: bias, noise against the merge's standard deviations and the best single frame, per-pixel 95 % coverage, lower bounds).")
        var files: [String]

        var file: String { files[0] }

        @OptionGroup var outputSafety: OutputSafety

        @Option(help: "The simulation record (default: <file without .dng>.truth.json).")
        var truth: String?

        @Option(help: ArgumentHelp("A ratio to check, numerator/denominator patch names (repeatable).", valueName: "numerator/denominator"),
                transform: ArgumentValue.ratio)
        var ratio: [RatioPair] = []

        @OptionGroup var style: OutputStyleOptions

        @Option(help: ArgumentHelp("A camera calibration (`calibrate`) to check against the simulation's true constant instead of the estimate from the exposure metadata.", valueName: "file.json"))
        var calibration: String?

        @Option(name: .customLong("lens"), help: ArgumentHelp("A lens calibration (`calibrate-lens`; repeat for other apertures): the capture is checked with its vignetting divided out, against the scene (the noise variance is reported, not judged: the correction's per-channel gains are not in the noise model).", valueName: "lens.json"))
        var lensFiles: [String] = []

        @Option(help: ArgumentHelp("A study (`sequence -o`) of a simulated day: FILE is the day's <name>.day.jsonl; each set's E_v and DGP are checked against its truth.", valueName: "study/"))
        var study: String?

        @Option(help: ArgumentHelp("Also draw the bias per patch with 95 % intervals (.png, .svg or .pdf); for a noisy capture, the measured/predicted noise variance goes to <name>-noise.<ext>.", valueName: "path"))
        var plot: String?

        func validate() throws {
            if let plot {
                let ext = URL(fileURLWithPath: plot).pathExtension.lowercased()
                guard ["png", "svg", "pdf"].contains(ext) else { throw ValidationError("--plot must end in .png, .svg or .pdf") }
            }
            if study != nil && (files.count > 1 || plot != nil || !ratio.isEmpty || calibration != nil || !lensFiles.isEmpty || truth != nil) {
                throw ValidationError("--study takes one file, the day's .day.jsonl, and none of --plot, --ratio, --calibration, --lens, --truth")
            }
            if files.count > 1 && (plot != nil || !ratio.isEmpty || calibration != nil || !lensFiles.isEmpty) {
                throw ValidationError("--plot, --ratio, --calibration and --lens apply to one capture, not to a bracket")
            }
        }

        /// A bracket's record: `<name>.truth.json` for frames `<name>_<k>.dng`.
        static func bracketRecordPath(_ frame: String) -> String {
            let base = URL(fileURLWithPath: frame).deletingPathExtension().path
            guard let underscore = base.lastIndex(of: "_"), Int(base[base.index(after: underscore)...]) != nil else { return base + ".truth.json" }
            return String(base[..<underscore]) + ".truth.json"
        }

        func run() throws {
            var passed = true
            try reportingFailures(json: style.json) {
                if let study {
                    guard FileManager.default.fileExists(atPath: study) else { throw ContainerError.fileNotFound(path: study) }
                    let report = Pipeline.validateDay(truths: try Pipeline.readDay(file), records: Array(StudyRun.readRecords(in: study).values))
                    print(style.json ? try report.json() : report.text)
                    passed = report.passed
                    return
                }
                passed = files.count > 1 ? try validateBracket() : try validateCapture()
            }
            if !passed { throw ExitCode(20) }
        }

        /// The frames of a simulated bracket, merged and checked.
        private func validateBracket() throws -> Bool {
            let record = try SimulationRecord.read(truth ?? Self.bracketRecordPath(file))
            let report = try Pipeline.validateBracket(frames: files, record: record)
            print(style.json ? try report.json() : report.text)
            return report.passed
        }

        /// One simulated capture, checked (and charted with --plot).
        private func validateCapture() throws -> Bool {
            let recordPath = truth ?? (URL(fileURLWithPath: file).deletingPathExtension().path + ".truth.json")
            let record = try SimulationRecord.read(recordPath)
            let report = try Pipeline.validate(dngPath: file, record: record, ratios: ratio.isEmpty ? nil : ratio.map(\.pair),
                                               calibration: try calibration.map(CameraCalibration.read),
                                               lens: try LensCalibration.read(lensFiles))
            print(style.json ? try report.json() : report.text)
            if let plot { try ValidationCharts.write(report, to: plot) }
            return report.passed
        }
    }
}
