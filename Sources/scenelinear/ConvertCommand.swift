import ArgumentParser
import Analysis
import Foundation
import SceneLinearKit

extension EXRCompression: ExpressibleByArgument {}
extension CropMode: ExpressibleByArgument {}
extension DemosaicMethod: ExpressibleByArgument {}
extension ImageSource: ExpressibleByArgument {}
extension EXRPixelType: ExpressibleByArgument {}
extension EXRLayout: ExpressibleByArgument {}
extension HDF5SampleType: ExpressibleByArgument {}

/// The colour output choices of `convert`.
enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
    case rec2020
    case acescg
    case aces20651 = "aces2065-1"
    case rec709
    case xyzD65 = "xyz-d65"
    case camera

    var encoding: ColorEncoding {
        switch self {
        case .rec2020: return .linearRec2020
        case .acescg: return .acesCG
        case .aces20651: return .aces2065
        case .rec709: return .linearRec709
        case .xyzD65: return .xyzD65
        case .camera: return .cameraNative
        }
    }
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
                and flagged in the clip mask (/clip_mask in HDF5; EXR channel mask_clipped, or \
                mask.clipped.Y with --exr-layout layers; --no-exr-clip-mask leaves it out). Outputs are written to a temporary file and renamed on success.

                Semantic masks (DNG 1.6, e.g. Apple ProRAW's sky matte) are resampled onto the \
                output pixels (bilinear, same crop, scale and orientation as the image) and \
                written as EXR channels mask_<name> (mask.<name>.Y with --exr-layout layers) and HDF5 datasets /masks/<name>, where \
                <name> is a short name from the mask's SemanticName (semanticskymatte → sky); \
                the full URN is recorded beside each. A mask that cannot be decoded fails the \
                conversion with its own error; --no-masks converts without them.

                -o names a file (.exr, .h5 or .hdf5, .hdr for a Radiance picture) or a directory (one file per --format, \
                named after the input). Without -o the outputs go to the current directory. A Radiance \
                picture records its clipped pixels (lower bounds) in its header and, when there are \
                any, marks them in x.clip.hdr next to x.hdr (listed, and warned of on stderr).

                Batch: several inputs or directories convert into the -o directory, files in \
                parallel; a manifest (scenelinear-manifest.jsonl, one JSON line per input: input \
                and its SHA-256, outputs and theirs, status, error) grows as files finish; a failing \
                file does not stop the others (the exit code is the first failure's). Re-running \
                resumes: inputs recorded as done, unchanged and with intact outputs are skipped. \
                --shard i/n (or a Slurm job array) splits the inputs across processes; `scenelinear \
                manifest` merges their manifests.
                """)

        @Argument(help: "The DNG file — or several files or directories for a batch (then -o must be a directory).")
        var files: [String] = []

        @Option(help: ArgumentHelp("Batch: also convert the files listed in this file, one path per line (blank lines and lines starting with # ignored): a list frozen before a job array starts, so every task sees the same inputs even while new files arrive.", valueName: "list"))
        var filesFrom: String?

        @OptionGroup var outputSafety: OutputSafety

        var file: String { files[0] }

        @Option(help: "Batch: process only part i of n (0 ≤ i < n) of the sorted inputs. Default in a Slurm job array submitted as 0, s, 2s, … (--array=0-15, --array=0-14:2): task i·s is part i of SLURM_ARRAY_TASK_COUNT; any other array shape (--array=1-8, a rerun --array=2,3) is refused (exit 64): give --shard ${SLURM_ARRAY_TASK_ID}/n.")
        var shard: String?

        @Flag(help: "Batch: convert every input again, even those the manifest records as done.")
        var noResume = false

        @Option(name: .shortAndLong, help: "Output file, directory (created when missing for a batch or a name ending in /), or - for one EXR on standard output (default: the current directory).")
        var output: String?

        @Option(help: "Comma-separated output formats: exr, hdf5, hdr (a Radiance RGBE picture in Radiance's primaries and W·sr⁻¹·m⁻²: needs --units luminance or radiance) (default: from the output name, else exr).")
        var format: String?

        @Option(help: "Exposure scaling of relative values: none (1.0 = sensor white), baseline (× 2^(BaselineExposure + BaselineExposureOffset)) or normalized (× f-number² / (exposure time · ISO/100)).")
        var exposure: ExposureMode = .none

        @OptionGroup var unitOptions: UnitOptions

        @Option(help: "Output colour (all linear, scene-referred, never clipped): rec2020 (Rec.2020, D65; lin_rec2020_scene), acescg (ACES AP1; lin_ap1_scene), aces2065-1 (ACES AP0; lin_ap0_scene), rec709 (Rec.709/sRGB primaries, D65; lin_rec709_scene), xyz-d65 (CIE XYZ, D65 white; lin_ciexyzd65_scene) or camera (white-balanced camera RGB, no matrix).")
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

        @Option(help: "EXR compression: none, rle, zips, zip, piz, pxr24 (lossless for half), b44, b44a, dwaa, dwab (lossy; DWA keeps the mask channels lossless, scanline files only).")
        var exrCompression: EXRCompression = EXROptions().compression

        @Option(help: "EXR channel type: half (default) or float (32-bit: the pipeline's Float values, about twice the memory).")
        var exrType: EXRPixelType = .half

        @Flag(help: "Write a tiled EXR (tiles of --exr-tile-size pixels) instead of scanlines.")
        var exrTiled = false

        @Option(help: "Tile size of --exr-tiled, in pixels (default 64).")
        var exrTileSize: Int = 64

        @Flag(help: "With --exr-tiled: add mip-map levels (each half the size of the one above, 2×2 averages).")
        var exrMipmaps = false

        @Option(help: "EXR mask channel names: flat (mask_<name>, the default: Blender and other single-layer readers open the file as plain RGB) or layers (mask.<name>.Y, grouped as layers in Nuke).")
        var exrLayout: EXRLayout = .flat

        @Option(help: "Deflate level of EXR zip/zips: 0–12 (libdeflate; 1, the default, is the fastest that compresses; higher levels gain under 1 % in size for 2–3× the time); for pxr24, zlib's 0–9.")
        var exrZipLevel: Int?

        @Flag(inversion: .prefixedNo, help: "Carry the clip mask in the EXR as channel mask_clipped (mask.clipped.Y with --exr-layout layers; 1 = a camera channel reached white), so that measurements of the EXR know which pixels are lower bounds (default: on). Without it, stats, ratio and report on the EXR report clipping as unknown.")
        var exrClipMask = true

        @Flag(help: "Leave out the DNG's semantic masks (by default each becomes EXR channel mask.<name>.Y and HDF5 dataset /masks/<name>).")
        var noMasks = false

        @Option(help: "HDF5 sample type of /image and /masks: float16 (default) or float32 (for netCDF-4 readers and MATLAB; the pipeline's Float values, about twice the memory).")
        var hdf5Type: HDF5SampleType = .float16

        @Option(help: "HDF5 compression of /image: 0 = uncompressed, 1–9 = zlib deflate at that level; default: shuffle + the fast run-length deflate (plain deflate every reader decodes, about 4× faster than zlib level 4 for a file a few percent larger).")
        var hdf5Level: Int?

        @Flag(help: "Also write statistics and EV histograms (whole image and --region regions) into the HDF5 output's /analysis group.")
        var analysis = false

        @Flag(help: "Also write the per-pixel standard deviation of R, G and B from the DNG NoiseProfile, in merge's layout: EXR channels std_R, std_G, std_B (std.R, ... with --exr-layout layers), HDF5 dataset /noise/std [H, W, 3]; a .hdr cannot hold it. stats, ratio, illuminance and report on the file take their intervals from it (docs/photometry.md). Needs a NoiseProfile (exit 5 without); one file at a time; the image is held whole.")
        var std = false

        @Option(name: .customLong("region"), help: ArgumentHelp("With --analysis: a region, in output coordinates: name=top,left,bottom,right (whole pixels; rows top to bottom − 1), name=top%,left%,bottom%,right% (percentages of the height and width), name=poly:x1,y1,x2,y2,... (pixels) or name=mask:<mask> (a semantic mask as weights). A region reaching outside the image is refused (exit 64), never clipped. Repeatable.", valueName: "name=spec"))
        var regions: [String] = []

        @Flag(help: "Print what was written as JSON (schema scenelinear.convert/1, the same document for one file and a batch; see docs/cli.md).")
        var json = false

        @Flag(name: .shortAndLong, help: "Print nothing but errors (and the --json document): no progress bar, no summary.")
        var quiet = false

        @OptionGroup var limits: LimitOptions

        @Flag(help: "Print timings in seconds: container, develop (Stage 1 to the output samples, region by region in one pass), hash (the input's SHA-256, on a thread of its own alongside develop) and each export. A single ZIP or ZIPS EXR, or a single compressed HDF5 file, is compressed and written during develop, as its rows are made; its export time is what is left after the pass (the EXR's chunk table and SHA-256; the HDF5 file's attributes, clip mask and masks).")
        var timings = false

        /// The paths of `--files-from`.
        func listedFiles() throws -> [String] {
            guard let filesFrom else { return [] }
            guard let text = try? String(contentsOfFile: filesFrom, encoding: .utf8) else {
                throw ValidationError("--files-from \(filesFrom): cannot read the list")
            }
            return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        }

        func validate() throws {
            if files.isEmpty && filesFrom == nil { throw ValidationError("give a DNG file, several, a directory or --files-from") }
            if let shard, Shard.parse(shard) == nil { throw ValidationError("--shard must be i/n with 0 ≤ i < n") }
            _ = try parsedFormats()
            _ = try parsedWhiteBalance()
            if let exrZipLevel, !(0...12).contains(exrZipLevel) { throw ValidationError("--exr-zip-level must be 0...12") }
            if let hdf5Level, !(0...9).contains(hdf5Level) { throw ValidationError("--hdf5-level must be 0...9") }
            if !(1...65536).contains(exrTileSize) { throw ValidationError("--exr-tile-size must be 1...65536") }
            if exrMipmaps && !exrTiled { throw ValidationError("--exr-mipmaps needs --exr-tiled") }
            if exrTiled && (exrCompression == .dwaa || exrCompression == .dwab) {
                throw ValidationError("--exr-compression \(exrCompression.rawValue) writes scanline files: it cannot be combined with --exr-tiled")
            }
            if output == "-" && json { throw ValidationError("-o - writes the image to standard output; --json cannot share it") }
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
                    throw ValidationError("unknown format '\(name)' (use exr, hdf5, hdr)")
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
            return files.count != 1 || filesFrom != nil
                || (FileManager.default.fileExists(atPath: files[0], isDirectory: &isDirectory) && isDirectory.boolValue)
        }

        func developOptions() throws -> DevelopOptions {
            var options = DevelopOptions(exposure: exposure, encoding: color.encoding, whiteBalance: try parsedWhiteBalance())
            try unitOptions.apply(to: &options, exposure: exposure)
            options.crop = crop
            options.demosaic = demosaic
            options.applyOrientation = !noOrientation
            options.source = source
            options.includeMasks = !noMasks
            try limits.apply(to: &options)
            return options
        }

        var exportOptions: ExportOptions {
            ExportOptions(exr: EXROptions(compression: exrCompression, zipLevel: exrZipLevel, includeClipMask: exrClipMask,
                                          pixelType: exrType, tiling: exrTiled ? EXRTiling(tileSize: exrTileSize, mipmaps: exrMipmaps) : nil,
                                          layout: exrLayout),
                          hdf5: HDF5Options(compression: hdf5Level.map { $0 == 0 ? .none : .deflate(level: $0) } ?? .fastDeflate,
                                            sampleType: hdf5Type))
        }

        /// Creates the output directory when `-o` names one (a batch, or a path ending in "/").
        func createOutputDirectory(_ path: String) throws {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) { return }
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                throw OutputError(path: path, reason: "cannot create the output directory: \(error.localizedDescription)")
            }
        }

        func runBatch() throws {
            var summary: BatchSummary?
            try reportingFailures(json: json) {
                guard !analysis else { throw ValidationError("--analysis converts one file at a time") }
                guard !std else { throw ValidationError("--std converts one file at a time") }
                guard output != "-" else { throw ValidationError("-o - (standard output) takes one input file") }
                let output = output ?? FileManager.default.currentDirectoryPath
                try createOutputDirectory(output)
                var batch = BatchConverter()
                batch.develop = try developOptions()
                batch.export = exportOptions
                batch.formats = try parsedFormats() ?? [.exr]
                if let explicit = shard.flatMap(Shard.parse) {
                    batch.shard = explicit
                } else if let fromArray = try Shard.fromSlurm() {
                    batch.shard = fromArray
                    batch.shardFromJobArray = true
                }
                batch.resume = !noResume
                let inputs = try AnalysisInput.expand(files + listedFiles()).filter { URL(fileURLWithPath: $0).pathExtension.lowercased() == "dng" }
                guard !inputs.isEmpty else { throw AnalysisError(reason: "no .dng files among the inputs") }
                let showProgress = !json && !quiet && isatty(STDERR_FILENO) == 1
                let result = try batch.run(inputs, into: output, progress: showProgress ? progressBar : nil)
                summary = result
                for f in result.failed {
                    FileHandle.standardError.write(Data("scenelinear: error: \(f.error ?? f.input)\n".utf8))
                }
                let records = BatchConverter.readManifest(result.manifest)
                if !quiet { Self.warnOfLowerBounds(records, inputs: inputs) }
                if json {
                    let failed = Dictionary(result.failed.map { ($0.input, $0) }, uniquingKeysWith: { a, _ in a })
                    let entries: [[String: Any]] = inputs.compactMap { input in
                        guard let r = failed[input] ?? records[input] else { return nil }
                        var e: [String: Any] = ["input": r.input, "status": r.status == "ok" ? "ok" : "failed",
                                                "outputs": r.outputs.map(Self.outputEntry)]
                        if !r.inputSHA256.isEmpty { e["sourceSHA256"] = r.inputSHA256 }
                        if let error = r.error { e["error"] = error }
                        if let c = r.errorCategory { e["errorCategory"] = c }
                        if let code = r.exitCode { e["exitCode"] = Int(code) }
                        return e
                    }
                    printConvertDocument(files: entries, converted: result.converted, skipped: result.skipped,
                                         failed: result.failed.count, manifest: result.manifest, shard: batch.shard.description)
                } else if !quiet {
                    print("batch \(batch.shard): \(result.converted) converted, \(result.skipped) already done, \(result.failed.count) failed; manifest \(result.manifest)")
                }
            }
            if let first = summary?.failed.first { throw ExitCode(first.exitCode ?? 1) }
        }

        /// A batch output as the document lists it (with a picture's lower bounds or the picture a mask is of).
        static func outputEntry(_ o: ManifestRecord.Output) -> [String: Any] {
            var entry: [String: Any] = ["format": o.format, "path": o.path, "sha256": o.sha256]
            if let bounds = o.lowerBounds { entry["lowerBounds"] = bounds.jsonObject }
            if let picture = o.maskOf { entry["maskOf"] = picture }
            return entry
        }

        /// Warns of the lower bounds of the batch's Radiance pictures (the manifest's records of `inputs`).
        static func warnOfLowerBounds(_ records: [String: ManifestRecord], inputs: [String]) {
            for input in inputs {
                for output in records[input]?.outputs ?? [] { output.lowerBounds?.warn(path: output.path) }
            }
        }

        /// Prints the `scenelinear.convert/1` document: the same shape for one file and a batch.
        func printConvertDocument(files: [[String: Any]], converted: Int, skipped: Int, failed: Int, manifest: String?,
                                  shard: String?) {
            var payload: [String: Any] = ["schema": "scenelinear.convert/1", "software": SceneLinearVersion.software,
                                          "files": files, "converted": converted, "skipped": skipped, "failed": failed]
            payload["manifest"] = manifest ?? NSNull()
            payload["shard"] = shard ?? NSNull()
            if let data = try? JSONSerialization.data(withJSONObject: payload, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) {
                print(String(decoding: data, as: UTF8.self))
            }
        }

        func run() throws {
            try limits.withParallelism { try perform() }
        }

        private func perform() throws {
            if isBatch { return try runBatch() }
            let toStdout = output == "-"
            var failure: (any SceneLinearFailure)?
            do {
                try reportingFailures(json: json) { do {
                    var formats = try parsedFormats()
                    var outputPath = output ?? FileManager.default.currentDirectoryPath
                    var stdoutTemporary: String?
                    var stdoutSlot: Int32 = -1  // the temporary behind -o -, removed on SIGPIPE/SIGTERM too
                    if toStdout {
                        // One EXR, written to a temporary file first (nothing reaches standard
                        // output unless the whole file was written), then copied.
                        guard formats == nil || formats == [.exr] else {
                            throw ValidationError("-o - writes one EXR to standard output; HDF5 needs a seekable file")
                        }
                        formats = [.exr]
                        let temporary = NSTemporaryDirectory() + "/" + AtomicFile.temporaryName(for: "scenelinear-stdout.exr")
                        stdoutTemporary = temporary
                        outputPath = temporary
                        stdoutSlot = ProcessGuard.register(temporary)
                    } else if (formats?.count ?? 1) > 1 && !FileManager.default.fileExists(atPath: outputPath) {
                        outputPath += outputPath.hasSuffix("/") ? "" : "/"   // several formats: a directory
                    }
                    defer {
                        if let stdoutTemporary { unlink(stdoutTemporary) }
                        ProcessGuard.release(stdoutSlot)
                    }
                    let targets = try Pipeline.outputPaths(input: file, output: outputPath, formats: formats)
                    if let hdr = targets.first(where: { $0.0 == .hdr }), !(try developOptions()).exposure.isAbsolute {
                        throw ValidationError("\(hdr.1): \(RadianceError.relativeUnits)")
                    }
                    // Half floats first; a value beyond their range (never written as infinity)
                    // makes the outputs 32-bit float, and the file is converted again.
                    try exportOptions.withFloatFallback(widening: { range in
                        if !quiet {
                            FileHandle.standardError.write(Data("scenelinear: \(range.count) values are beyond the half-float range (±65504): writing 32-bit float channels instead\n".utf8))
                        }
                    }) { export in
                        var developed: ConvertedImage
                        var writtenByConversion = false  // the one file, written by `convertToEXR`/`convertToHDF5`
                        var groups: [HDF5Group] = []
                        let analysisRequest = analysis ? try self.analysisRequest() : nil
                        var deviation: [Float]?
                        if std {
                            // The Float image whole, its σ layer from the NoiseProfile, and the
                            // analysis (when asked) measured with that layer.
                            let d = try Pipeline.develop(path: file, options: try developOptions())
                            let layer = try Pipeline.standardDeviationLayer(of: d.image, path: file)
                            if let request = analysisRequest {
                                let measured = AnalysisInput.inRec2020(d.image)
                                let input = AnalysisInput(path: file, image: measured, noise: nil,
                                                          deviation: DeviationLayer(deviation: layer, image: d.image, measured: measured))
                                groups.append(AnalysisOutput.hdf5Group(try Pipeline.analyze(input, request: request)))
                            }
                            deviation = layer
                            developed = ConvertedImage(d)
                        } else if let analysisRequest, !export.needsFloat(targets.map(\.0)),
                           let (image, results) = try Pipeline.developForOutput(path: file, options: try developOptions(),
                                                                                keepClipMask: export.needsClipMask(targets.map(\.0)),
                                                                                measuring: analysisRequest) {
                            // One pass converts and takes the measurements' first look; later passes
                            // develop the blocks it kept.
                            groups.append(AnalysisOutput.hdf5Group(results))
                            developed = image
                        } else if let request = analysisRequest {
                            // CFA files, semantic-mask regions and 32-bit outputs: the Float image whole.
                            let d = try Pipeline.develop(path: file, options: try developOptions())
                            let input = AnalysisInput(path: file, image: d.image, noise: AnalysisInput.noiseModel(for: d.image))
                            groups.append(AnalysisOutput.hdf5Group(try Pipeline.analyze(input, request: request)))
                            developed = ConvertedImage(d)
                        } else if targets.count == 1 && !export.needsFloat(targets.map(\.0)) {
                            // One file: written as the rows are made (the export is part of develop), so a
                            // directory named by -o is needed first (and removed again, empty, on failure).
                            let newDirectory = outputPath.hasSuffix("/") && !FileManager.default.fileExists(atPath: outputPath)
                            if newDirectory { try createOutputDirectory(outputPath) }
                            do {
                                developed = try Pipeline.convert(path: file, options: try developOptions(), format: targets[0].0,
                                                                 export: export, to: targets[0].1)
                                writtenByConversion = true
                            } catch {
                                if newDirectory { rmdir(outputPath) }
                                throw error
                            }
                        } else if export.needsFloat(targets.map(\.0)) {
                            // 32-bit outputs: the Float image, not the half-float one.
                            developed = ConvertedImage(try Pipeline.develop(path: file, options: try developOptions()))
                        } else {
                            developed = try Pipeline.developForOutput(path: file, options: try developOptions(),
                                                                      keepClipMask: export.needsClipMask(targets.map(\.0)))
                        }
                        // A directory named by -o is created now, once there is something to put in it.
                        if outputPath.hasSuffix("/") { try createOutputDirectory(outputPath) }
                        var written: [[String: Any]] = []
                        for (format, path) in targets {
                            var bounds = developed.radianceLowerBounds
                            if !writtenByConversion, let image = developed.image {
                                let start = DispatchTime.now().uptimeNanoseconds
                                if let deviation, let whole = image as? SceneLinearImage, format != .hdr {
                                    try Pipeline.export(whole, deviation: deviation, format: format, to: path, options: export, hdf5Groups: groups)
                                } else {
                                    bounds = try Pipeline.export(image, format: format, to: path, options: export, hdf5Groups: groups)
                                }
                                developed.timings.export[format.rawValue] = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                            }
                            if format == .hdr, let bounds {
                                written += bounds.outputEntries(path: path)
                                if !quiet { bounds.warn(path: path) }
                            } else {
                                written.append(["format": format.rawValue, "path": toStdout ? "-" : path])
                            }
                        }
                        if let stdoutTemporary {
                            try copyToStandardOutput(stdoutTemporary)
                            return
                        }
                        report(developed, written: written)
                    }
                } catch let f as any SceneLinearFailure {
                    failure = f
                    throw f
                } }
            } catch let error as ExitCode {
                if json && !toStdout {
                    // The same document as on success, with the failed file (the error is also on stderr).
                    var entry: [String: Any] = ["input": file, "status": "failed", "outputs": [[String: String]](),
                                                "exitCode": Int(error.rawValue)]
                    if let failure {
                        entry["error"] = failure.description
                        entry["errorCategory"] = failure.category.name
                    }
                    printConvertDocument(files: [entry], converted: 0, skipped: 0, failed: 1, manifest: nil, shard: nil)
                }
                throw error
            }
        }

        /// What `--analysis` measures: the whole image (region `image`) and the `--region`s,
        /// statistics and EV histograms.
        func analysisRequest() throws -> AnalysisRequest {
            var request = AnalysisRequest()
            request.regions = [Region.wholeImage()]
                + (try regions.map { try Region.parse($0) })
            request.histogram = HistogramOptions()
            return request
        }

        /// Copies a finished file to standard output in 1 MiB pieces.
        func copyToStandardOutput(_ path: String) throws {
            guard let input = FileHandle(forReadingAtPath: path) else {
                throw OutputError(path: "-", reason: "cannot reopen the written file \(path)")
            }
            defer { try? input.close() }
            while true {
                let chunk = input.readData(ofLength: 1 << 20)
                if chunk.isEmpty { break }
                do { try FileHandle.standardOutput.write(contentsOf: chunk) } catch {
                    throw OutputError(path: "-", reason: "standard output: \(error.localizedDescription)")
                }
            }
        }

        func report(_ d: ConvertedImage, written: [[String: Any]]) {
            let image = d.description
            if json {
                var entry: [String: Any] = [
                    "input": file, "status": "ok", "outputs": written, "sourceSHA256": image.provenance.sourceSHA256,
                    "rawIFD": d.rawIFD.path,
                    "width": image.width, "height": image.height, "colorSpace": image.encoding.rawValue,
                    "colorInteropID": image.encoding.colorInteropID,
                    "exposureScaling": image.exposure.mode.rawValue, "exposureFactor": image.exposure.factor,
                    "whiteBalance": image.provenance.whiteBalanceSource, "whiteXY": image.provenance.whiteXY,
                    "clippedPixels": d.clippedPixelCount,
                    "crop": [d.geometry.crop.top, d.geometry.crop.left, d.geometry.crop.bottom, d.geometry.crop.right],
                    "orientation": d.geometry.orientation,
                    "masks": image.masks.map { ["name": $0.name, "semanticName": $0.semanticName, "instanceID": $0.instanceID,
                                                "sourceIFD": $0.sourceIFD] },
                ]
                // The digest check: "digest" (verified, absent, not checked, mismatch, ignored) and its details.
                let digestItems = image.provenance.processing.filter { $0.key.hasPrefix("digest") || $0.key.hasPrefix("originalRawFileDigest") }
                entry["digest"] = Dictionary(digestItems.map { ($0.key, $0.value.description) }, uniquingKeysWith: { a, _ in a })
                if timings {
                    let t = d.timings
                    entry["timings"] = ["container": t.container, "hash": t.hash, "develop": t.develop, "export": t.export]
                }
                printConvertDocument(files: [entry], converted: 1, skipped: 0, failed: 0, manifest: nil, shard: nil)
                return
            }
            if quiet { return }
            let clipped = d.clippedPixelCount
            let percent = 100 * Double(clipped) / Double(max(1, image.width * image.height))
            print("\(file): \(d.rawIFD.path) \(image.width)×\(image.height) → \(image.encoding.displayName), exposure \(image.exposure.mode.rawValue) (×\(String(format: "%.6g", image.exposure.factor))), white \(image.provenance.whiteBalanceSource) xy (\(String(format: "%.4f", image.provenance.whiteXY[0])), \(String(format: "%.4f", image.provenance.whiteXY[1]))), \(clipped) clipped pixels (\(String(format: "%.3f", percent)) %)")
            if !image.masks.isEmpty {
                print("semantic masks: " + image.masks.map { "\($0.name) (\($0.semanticName.isEmpty ? $0.sourceIFD : $0.semanticName))" }.joined(separator: ", "))
            }
            for w in written { print(wroteLine(w)) }
            if timings {
                let t = d.timings
                let exports = t.export.sorted { $0.key < $1.key }.map { String(format: "%@ %.3f s", $0.key, $0.value) }.joined(separator: ", ")
                print(String(format: "timings: container %.3f s, develop %.3f s, hash %.3f s", t.container, t.develop, t.hash)
                      + (exports.isEmpty ? "" : ", " + exports))
            }
        }
    }
}
