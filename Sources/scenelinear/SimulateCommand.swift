import ArgumentParser
import CaptureSimulation
import Foundation
import SceneLinearKit
import SimulationCheck

extension SceneLinearCommand {
    struct Simulate: ParsableCommand {
        static let configuration = CommandConfiguration(
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
                """)

        @Option(help: "Scene: a built-in name, a .json description, or a .exr/.h5 radiance map or a Radiance .hdr picture.")
        var scene: String = BuiltInScene.greyRamp.rawValue

        @OptionGroup var outputSafety: OutputSafety

        @Option(help: "Camera description (.json).")
        var camera: String?

        @Option(name: .shortAndLong, help: "Output directory (created when missing).")
        var output: String = "."

        @Flag(name: .shortAndLong, help: "Print nothing but errors: no list of the files written.")
        var quiet = false

        @Option(help: "Base name of the files (default: the scene's name).")
        var name: String?

        @Option(help: "Image width and height for built-in scenes.")
        var size: String = "1024x768"

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

        @Option(parsing: .unconditional, help: ArgumentHelp("A bracket: exposure offsets in stops, comma-separated (e.g. -4,0,4): one DNG per offset, exposure time × 2^offset.", valueName: "ev,ev,..."))
        var bracket: String?

        func bracketStops() throws -> [Double]? {
            guard let bracket else { return nil }
            let stops = bracket.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard !stops.isEmpty, stops.allSatisfy({ $0 != nil && $0!.isFinite && abs($0!) <= 30 }) else {
                throw ValidationError("--bracket must be comma-separated exposure offsets in stops, each within ±30 (e.g. -4,0,4)")
            }
            return stops.map { $0! }
        }

        func validate() throws {
            let parts = size.lowercased().split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts.allSatisfy({ (16...20000).contains($0) }) else {
                throw ValidationError("--size must be WIDTHxHEIGHT, 16...20000 each")
            }
            _ = try bracketStops()
        }

        func run() throws {
            try reportingFailures {
                var model = try camera.map(CameraModel.read) ?? CameraModel()
                if let layout { model.layout = layout }
                if let cfaPattern { model.cfaPattern = cfaPattern }
                if let storage { model.storage = storage }
                if let seed { model.seed = seed }
                if let exposureTime { model.exposureTime = exposureTime }
                if let iso { model.iso = iso }
                model.noise = noise
                let parts = size.lowercased().split(separator: "x").compactMap { Int($0) }
                let rendered = try loadScene(width: parts[0], height: parts[1])
                var isDirectory: ObjCBool = false
                if !FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory) {
                    do {
                        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
                        isDirectory = true
                    } catch {
                        throw OutputError(path: output, reason: "cannot create the directory: \(error.localizedDescription)")
                    }
                }
                guard isDirectory.boolValue else { throw OutputError(path: output, reason: "not a directory") }
                if let stops = try bracketStops() {
                    let result = try Pipeline.simulateBracket(scene: rendered, camera: model, stops: stops,
                                                              name: name ?? rendered.description.name, directory: output)
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

        func loadScene(width: Int, height: Int) throws -> RenderedScene {
            if let builtIn = BuiltInScene(rawValue: scene) {
                return try RenderedScene(builtIn.description(width: width, height: height))
            }
            let ext = URL(fileURLWithPath: scene).pathExtension.lowercased()
            switch ext {
            case "json":
                return try RenderedScene(SceneDescription.read(scene))
            case "exr", "h5", "hdf5", "hdr", "pic":
                return try Pipeline.radianceMapScene(scene)
            default:
                throw SceneError(reason: "\(scene) is neither a built-in scene (\(BuiltInScene.allCases.map(\.rawValue).joined(separator: ", "))) nor a .json, .exr, .h5 or Radiance .hdr file")
            }
        }
    }

    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
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

        @Option(help: "A ratio to check, numerator/denominator patch names (repeatable).")
        var ratio: [String] = []

        @Flag(help: "Print JSON (schema scenelinear.validation/1; scenelinear.validation-bracket/1 for a bracket).")
        var json = false

        @Option(help: ArgumentHelp("A camera calibration (`calibrate`) to check against the simulation's true constant instead of the estimate from the exposure metadata.", valueName: "file.json"))
        var calibration: String?

        @Flag(name: .shortAndLong, help: "Accepted by every command; validate prints its report (the result) and nothing else.")
        var quiet = false

        @Option(help: ArgumentHelp("Also draw the bias per patch with 95 % intervals (.png, .svg or .pdf); for a noisy capture, the measured/predicted noise variance goes to <name>-noise.<ext>.", valueName: "path"))
        var plot: String?

        func validate() throws {
            if let plot {
                let ext = URL(fileURLWithPath: plot).pathExtension.lowercased()
                guard ["png", "svg", "pdf"].contains(ext) else { throw ValidationError("--plot must end in .png, .svg or .pdf") }
            }
            if files.count > 1 && (plot != nil || !ratio.isEmpty || calibration != nil) {
                throw ValidationError("--plot, --ratio and --calibration apply to one capture, not to a bracket")
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
            if files.count > 1 {
                try reportingFailures(json: json) {
                    let record = try SimulationRecord.read(truth ?? Self.bracketRecordPath(file))
                    let report = try Pipeline.validateBracket(frames: files, record: record)
                    print(json ? try report.json() : report.text)
                    passed = report.passed
                }
                if !passed { throw ExitCode(20) }
                return
            }
            try reportingFailures(json: json) {
                let recordPath = truth ?? (URL(fileURLWithPath: file).deletingPathExtension().path + ".truth.json")
                let record = try SimulationRecord.read(recordPath)
                let pairs = try ratio.map { text -> (String, String) in
                    let parts = text.split(separator: "/").map(String.init)
                    guard parts.count == 2 else { throw ValidationError("--ratio must be numerator/denominator") }
                    return (parts[0], parts[1])
                }
                let report = try Pipeline.validate(dngPath: file, record: record, ratios: pairs.isEmpty ? nil : pairs,
                                                   calibration: try calibration.map(CameraCalibration.read))
                print(json ? try report.json() : report.text)
                passed = report.passed
                if let plot {
                    let bias = ValidationCharts.bias(report)
                    try AnalysisCharts.write({ PlotRenderer.render(bias, format: $0) }, to: plot)
                    if let noise = ValidationCharts.noise(report) {
                        let url = URL(fileURLWithPath: plot)
                        let target = url.deletingPathExtension().path + "-noise." + url.pathExtension
                        try AnalysisCharts.write({ PlotRenderer.render(noise, format: $0) }, to: target)
                    }
                }
            }
            if !passed { throw ExitCode(20) }
        }
    }
}
