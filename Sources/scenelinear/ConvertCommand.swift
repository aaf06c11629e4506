import ArgumentParser
import Analysis
import Foundation
import SceneLinearKit

extension ExposureMode: ExpressibleByArgument {}
extension EXRCompression: ExpressibleByArgument {}
extension CropMode: ExpressibleByArgument {}
extension DemosaicMethod: ExpressibleByArgument {}
extension ImageSource: ExpressibleByArgument {}

/// The colour output choices of `convert`.
enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
    case rec2020
    case camera
}

extension SceneLinearCommand {
    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Convert a DNG to scene-linear half-float OpenEXR and/or HDF5.",
            discussion: """
                The main raw image is decoded (lossless JPEG or uncompressed), mapped to linear \
                reference values (LinearizationTable, BlackLevel, WhiteLevel, ActiveArea), \
                converted by the DNG colour model to extended linear Rec.2020 (D65), cropped \
                (DefaultCrop, DefaultUserCrop), scaled to square pixels (DefaultScale) and turned \
                to the display orientation (Orientation). Nothing is \
                clipped except Stage 2 values at or above the white level, which are set to 1.0 \
                and flagged in the clip mask (/clip_mask in HDF5; EXR channel mask.clipped.Y with \
                --exr-clip-mask). Outputs are written to a temporary file and renamed on success.

                Semantic masks (DNG 1.6, e.g. Apple ProRAW's sky matte) are resampled onto the \
                output pixels (bilinear, same crop, scale and orientation as the image) and \
                written as EXR channels mask.<name>.Y and HDF5 datasets /masks/<name>, where \
                <name> is a short name from the mask's SemanticName (semanticskymatte → sky); \
                the full URN is recorded beside each. A mask that cannot be decoded fails the \
                conversion with its own error; --no-masks converts without them.

                -o names a file (.exr, .h5 or .hdf5) or a directory (one file per --format, \
                named after the input). Without -o the outputs go to the current directory.

                Batch: several inputs or directories convert into the -o directory, files in \
                parallel; a manifest (scenelinear-manifest.jsonl, one JSON line per input: input \
                and its SHA-256, outputs and theirs, status, error) grows as files finish; a failing \
                file does not stop the others (the exit code is the first failure's). Re-running \
                resumes: inputs recorded as done, unchanged and with intact outputs are skipped. \
                --shard i/n (or a Slurm job array) splits the inputs across processes; `scenelinear \
                manifest` merges their manifests.
                """)

        @Argument(help: "The DNG file — or several files or directories for a batch (then -o must be a directory).")
        var files: [String]

        var file: String { files[0] }

        @Option(help: "Batch: process only part i of n (0 ≤ i < n) of the sorted inputs; default from SLURM_ARRAY_TASK_ID/COUNT when set.")
        var shard: String?

        @Flag(help: "Batch: convert every input again, even those the manifest records as done.")
        var noResume = false

        @Option(name: .shortAndLong, help: "Output file or directory (default: the current directory).")
        var output: String?

        @Option(help: "Comma-separated output formats: exr, hdf5 (default: from the output name, else exr).")
        var format: String?

        @Option(help: "Exposure scaling: none (1.0 = sensor white) or baseline (× 2^(BaselineExposure + BaselineExposureOffset)).")
        var exposure: ExposureMode = .none

        @Option(help: "Output colour: rec2020 (extended linear Rec.2020, D65) or camera (white-balanced camera RGB, no matrix).")
        var color: ColorChoice = .rec2020

        @Option(help: "White balance: as-shot (AsShotNeutral/AsShotWhiteXY), d50, d55, d65, or a chromaticity x,y.")
        var whiteBalance: String = "as-shot"

        @Option(help: "CFA demosaicing: rcd (edge-aware, default), bilinear, or superpixel (2×2 binning to half size, no interpolation: for radiometry).")
        var demosaic: DemosaicMethod = Demosaicer.defaultMethod

        @Option(help: "Image to develop: raw (the main raw image) or enhanced (the DNG 1.6 enhanced image, NewSubFileType 16, where the file has one; otherwise the raw image, noted in the output).")
        var source: ImageSource = .raw

        @Option(help: "Crop: user (DefaultCrop then DefaultUserCrop), default (DefaultCrop only) or none (the whole ActiveArea).")
        var crop: CropMode = .user

        @Flag(help: "Keep the sensor orientation instead of rotating/mirroring by the Orientation tag.")
        var noOrientation = false

        @Option(help: "EXR compression: \(EXRCompression.allCases.map(\.rawValue).joined(separator: ", ")) (all lossless).")
        var exrCompression: EXRCompression = EXROptions().compression

        @Option(help: "Deflate level of EXR zip/zips: 0–12 (libdeflate; 1, the default, is the fastest that compresses; higher levels gain under 1 % in size for 2–3× the time); for pxr24, zlib's 0–9.")
        var exrZipLevel: Int?

        @Flag(help: "Add the clip mask to the EXR as channel mask.clipped.Y (1 = a camera channel reached white).")
        var exrClipMask = false

        @Flag(help: "Leave out the DNG's semantic masks (by default each becomes EXR channel mask.<name>.Y and HDF5 dataset /masks/<name>).")
        var noMasks = false

        @Option(help: "HDF5 compression of /image: 0 = uncompressed, 1–9 = zlib deflate at that level; default: shuffle + the fast run-length deflate (plain deflate every reader decodes, about 4× faster than zlib level 4 for a file a few percent larger).")
        var hdf5Level: Int?

        @Flag(help: "Also write statistics and EV histograms (whole image and --region regions) into the HDF5 output's /analysis group.")
        var analysis = false

        @Option(name: .customLong("region"), help: ArgumentHelp("With --analysis: a region name=top,left,bottom,right or name=poly:x,y,... (output pixels), or name=mask:<mask> (a semantic mask as weights). Repeatable.", valueName: "name=spec"))
        var regions: [String] = []

        @Flag(help: "Print what was written as JSON.")
        var json = false

        @OptionGroup var limits: LimitOptions

        @Flag(help: "Print timings in seconds: container, develop (Stage 1 to the output samples, region by region in one pass), hash (the input's SHA-256, on a thread of its own alongside develop) and each export.")
        var timings = false

        func validate() throws {
            if let shard, Shard.parse(shard) == nil { throw ValidationError("--shard must be i/n with 0 ≤ i < n") }
            _ = try parsedFormats()
            _ = try parsedWhiteBalance()
            if let exrZipLevel, !(0...12).contains(exrZipLevel) { throw ValidationError("--exr-zip-level must be 0...12") }
            if let hdf5Level, !(0...9).contains(hdf5Level) { throw ValidationError("--hdf5-level must be 0...9") }
            guard regions.isEmpty || analysis else { throw ValidationError("--region needs --analysis") }
            for r in regions {
                do { _ = try Region.parse(r) } catch let e as AnalysisError { throw ValidationError(e.reason) }
            }
        }

        func parsedFormats() throws -> [OutputFormat]? {
            guard let format else { return nil }
            var out: [OutputFormat] = []
            for name in format.split(separator: ",") {
                let key = name.trimmingCharacters(in: .whitespaces).lowercased()
                guard let f = OutputFormat(rawValue: key == "h5" ? "hdf5" : key) else {
                    throw ValidationError("unknown format '\(name)' (use exr, hdf5)")
                }
                if !out.contains(f) { out.append(f) }
            }
            guard !out.isEmpty else { throw ValidationError("--format names no format") }
            return out
        }

        func parsedWhiteBalance() throws -> WhiteBalance {
            switch whiteBalance.lowercased() {
            case "as-shot", "asshot": return .asShot
            case "d50": return .chromaticity(Chromaticity.d50)
            case "d55": return .chromaticity(Chromaticity.d55)
            case "d65": return .chromaticity(Chromaticity.d65)
            default:
                let parts = whiteBalance.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                guard parts.count == 2, parts[0] > 0, parts[1] > 0, parts[0] + parts[1] < 1 else {
                    throw ValidationError("--white-balance must be as-shot, d50, d55, d65 or x,y (e.g. 0.3127,0.3290)")
                }
                return .chromaticity(SIMD2(parts[0], parts[1]))
            }
        }

        /// Several inputs, or a directory: a batch into an output directory.
        var isBatch: Bool {
            var isDirectory: ObjCBool = false
            return files.count > 1 || (FileManager.default.fileExists(atPath: files[0], isDirectory: &isDirectory) && isDirectory.boolValue)
        }

        func developOptions() throws -> DevelopOptions {
            var options = DevelopOptions(exposure: exposure, encoding: color == .rec2020 ? .linearRec2020 : .cameraNative,
                                         whiteBalance: try parsedWhiteBalance())
            options.crop = crop
            options.demosaic = demosaic
            options.applyOrientation = !noOrientation
            options.source = source
            options.includeMasks = !noMasks
            try limits.apply(to: &options)
            return options
        }

        var exportOptions: ExportOptions {
            ExportOptions(exr: EXROptions(compression: exrCompression, zipLevel: exrZipLevel, includeClipMask: exrClipMask),
                          hdf5: HDF5Options(compression: hdf5Level.map { $0 == 0 ? .none : .deflate(level: $0) } ?? .fastDeflate))
        }

        func runBatch() throws {
            var summary: BatchSummary?
            try reportingFailures(json: json) {
                guard !analysis else { throw ValidationError("--analysis converts one file at a time") }
                let output = output ?? FileManager.default.currentDirectoryPath
                var batch = BatchConverter()
                batch.develop = try developOptions()
                batch.export = exportOptions
                batch.formats = try parsedFormats() ?? [.exr]
                batch.shard = shard.flatMap(Shard.parse) ?? Shard.fromSlurm() ?? .whole
                batch.resume = !noResume
                let inputs = try AnalysisInput.expand(files).filter { URL(fileURLWithPath: $0).pathExtension.lowercased() == "dng" }
                guard !inputs.isEmpty else { throw AnalysisError(reason: "no .dng files among the inputs") }
                let showProgress = !json && isatty(STDERR_FILENO) == 1
                let result = try batch.run(inputs, into: output, progress: showProgress ? progressBar : nil)
                summary = result
                if json {
                    let payload: [String: Any] = ["converted": result.converted, "skipped": result.skipped,
                                                  "failed": result.failed.map { ["input": $0.input, "error": $0.error ?? "", "exitCode": $0.exitCode ?? 1] },
                                                  "manifest": result.manifest, "shard": batch.shard.description]
                    if let data = try? JSONSerialization.data(withJSONObject: payload, options: [.prettyPrinted, .sortedKeys]) {
                        print(String(decoding: data, as: UTF8.self))
                    }
                } else {
                    print("batch \(batch.shard): \(result.converted) converted, \(result.skipped) already done, \(result.failed.count) failed; manifest \(result.manifest)")
                    for f in result.failed { print("failed: \(f.error ?? f.input)") }
                }
            }
            if let first = summary?.failed.first { throw ExitCode(first.exitCode ?? 1) }
        }

        func run() throws {
            if isBatch { return try runBatch() }
            try reportingFailures(json: json) {
                let targets = try Pipeline.outputPaths(input: file, output: output ?? FileManager.default.currentDirectoryPath,
                                                       formats: try parsedFormats())
                let export = exportOptions
                var developed: ConvertedImage
                var groups: [HDF5Group] = []
                if analysis {
                    // The analysis needs the Float image, which only `develop` keeps.
                    let d = try Pipeline.develop(path: file, options: try developOptions())
                    var request = AnalysisRequest()
                    request.regions = [Region(name: "image", shape: .rectangle(PixelRect(width: d.image.width, height: d.image.height)))]
                        + (try regions.map { try Region.parse($0) })
                    request.histogram = HistogramOptions()
                    let input = AnalysisInput(path: file, image: d.image, noise: AnalysisInput.noiseModel(for: d.image))
                    groups.append(AnalysisOutput.hdf5Group(try Pipeline.analyze(input, request: request)))
                    developed = ConvertedImage(d)
                } else {
                    developed = try Pipeline.developForOutput(path: file, options: try developOptions(),
                                                              keepClipMask: export.needsClipMask(targets.map(\.0)))
                }
                var written: [[String: String]] = []
                for (format, path) in targets {
                    let start = DispatchTime.now().uptimeNanoseconds
                    try Pipeline.export(developed.image, format: format, to: path, options: export, hdf5Groups: groups)
                    developed.timings.export[format.rawValue] = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                    written.append(["format": format.rawValue, "path": path])
                }
                report(developed, written: written)
            }
        }

        func report(_ d: ConvertedImage, written: [[String: String]]) {
            let image = d.image
            if json {
                var payload: [String: Any] = [
                    "source": file, "sourceSHA256": image.provenance.sourceSHA256, "rawIFD": d.rawIFD.path,
                    "width": image.width, "height": image.height, "colorSpace": image.encoding.rawValue,
                    "exposureScaling": image.exposure.mode.rawValue, "exposureFactor": image.exposure.factor,
                    "whiteBalance": image.provenance.whiteBalanceSource, "whiteXY": image.provenance.whiteXY,
                    "clippedPixels": d.clippedPixelCount, "outputs": written,
                    "crop": [d.geometry.crop.top, d.geometry.crop.left, d.geometry.crop.bottom, d.geometry.crop.right],
                    "orientation": d.geometry.orientation,
                    "masks": image.masks.map { ["name": $0.name, "semanticName": $0.semanticName, "instanceID": $0.instanceID,
                                                "sourceIFD": $0.sourceIFD] },
                ]
                // The digest check: "digest" (verified, absent, not checked, mismatch, ignored) and its details.
                let digestItems = image.provenance.processing.filter { $0.key.hasPrefix("digest") || $0.key.hasPrefix("originalRawFileDigest") }
                payload["digest"] = Dictionary(digestItems.map { ($0.key, $0.value.description) }, uniquingKeysWith: { a, _ in a })
                if timings {
                    let t = d.timings
                    payload["timings"] = ["container": t.container, "hash": t.hash, "develop": t.develop, "export": t.export]
                }
                if let data = try? JSONSerialization.data(withJSONObject: payload, options: [.prettyPrinted, .sortedKeys]) {
                    print(String(decoding: data, as: UTF8.self))
                }
                return
            }
            let clipped = d.clippedPixelCount
            let percent = 100 * Double(clipped) / Double(max(1, image.width * image.height))
            print("\(file): \(d.rawIFD.path) \(image.width)×\(image.height) → \(image.encoding.displayName), exposure \(image.exposure.mode.rawValue) (×\(String(format: "%.6g", image.exposure.factor))), white \(image.provenance.whiteBalanceSource) xy (\(String(format: "%.4f", image.provenance.whiteXY[0])), \(String(format: "%.4f", image.provenance.whiteXY[1]))), \(clipped) clipped pixels (\(String(format: "%.3f", percent)) %)")
            if !image.masks.isEmpty {
                print("semantic masks: " + image.masks.map { "\($0.name) (\($0.semanticName.isEmpty ? $0.sourceIFD : $0.semanticName))" }.joined(separator: ", "))
            }
            for w in written { print("wrote \(w["path"]!) (\(w["format"]!))") }
            if timings {
                let t = d.timings
                let exports = t.export.sorted { $0.key < $1.key }.map { String(format: "%@ %.3f s", $0.key, $0.value) }.joined(separator: ", ")
                print(String(format: "timings: container %.3f s, develop %.3f s, hash %.3f s", t.container, t.develop, t.hash)
                      + (exports.isEmpty ? "" : ", " + exports))
            }
        }
    }
}
