import ArgumentParser
import Analysis
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "convert",
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
                manifest` merges their manifests. --json prints schema scenelinear.convert/1, the same \
                document for one input and a batch.
                """)

        @Argument(help: "The DNG file — or several files or directories for a batch (then -o must be a directory).")
        var files: [String] = []

        @Option(help: ArgumentHelp("Batch: also convert the files listed in this file, one path per line (blank lines and lines starting with # ignored): a list frozen before a job array starts, so every task sees the same inputs even while new files arrive.", valueName: "list"))
        var filesFrom: String?

        @OptionGroup var outputSafety: OutputSafety

        var file: String { files[0] }

        @Option(help: ArgumentHelp("Batch: process only part i of n (0 ≤ i < n) of the sorted inputs. Default in a Slurm job array submitted as 0, s, 2s, … (--array=0-15, --array=0-14:2): task i·s is part i of SLURM_ARRAY_TASK_COUNT; any other array shape (--array=1-8, a rerun --array=2,3) is refused (exit 64): give --shard ${SLURM_ARRAY_TASK_ID}/n.", valueName: "i/n"), transform: ArgumentValue.shard)
        var shard: Shard?

        @Flag(help: "Batch: convert every input again, even those the manifest records as done.")
        var noResume = false

        @Option(name: .shortAndLong, help: "Output file, directory (created when missing for a batch or a name ending in /), or - for one EXR on standard output (default: the current directory).")
        var output: String?

        @Option(help: ArgumentHelp("Comma-separated output formats: exr, hdf5, hdr (a Radiance RGBE picture in Radiance's primaries and W·sr⁻¹·m⁻²: needs --units luminance or radiance) (default: from the output name, else exr).", valueName: "format"), transform: ArgumentValue.outputFormats)
        var format: OutputFormats?

        @OptionGroup var develop: DevelopOptionGroup

        @OptionGroup var unitOptions: UnitOptions

        @Option(help: ArgumentHelp("White balance: as-shot (AsShotNeutral/AsShotWhiteXY; the default), d50, d55, d65, or a chromaticity x,y.", valueName: "white-balance"), transform: ArgumentValue.whiteBalance)
        var whiteBalance: WhiteBalance = .asShot

        @OptionGroup var sourceImage: SourceImageOption

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

        @Option(help: "EXR mask and --std channel names: flat (mask_<name>, std_R, std_G, std_B, the default: Blender and other single-layer readers open the file as plain RGB) or layers (mask.<name>.Y, std.R, std.G, std.B, grouped as layers in Nuke).")
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

        @OptionGroup var regionOptions: RegionOptions

        @OptionGroup var style: OutputStyleOptions

        @OptionGroup var limits: LimitOptions

        @OptionGroup var timingsOption: TimingsOption

        var quiet: Bool { style.quiet }

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
            if let exrZipLevel, !(0...12).contains(exrZipLevel) { throw ValidationError("--exr-zip-level must be 0...12") }
            if let hdf5Level, !(0...9).contains(hdf5Level) { throw ValidationError("--hdf5-level must be 0...9") }
            if !(1...65536).contains(exrTileSize) { throw ValidationError("--exr-tile-size must be 1...65536") }
            if exrMipmaps && !exrTiled { throw ValidationError("--exr-mipmaps needs --exr-tiled") }
            if exrTiled && (exrCompression == .dwaa || exrCompression == .dwab) {
                throw ValidationError("--exr-compression \(exrCompression.rawValue) writes scanline files: it cannot be combined with --exr-tiled")
            }
            if output == "-" && style.json { throw ValidationError("-o - writes the image to standard output; --json cannot share it") }
            guard regionOptions.regions.isEmpty || analysis else { throw ValidationError("--region needs --analysis") }
        }

        /// Several inputs, or a directory: a batch into an output directory.
        var isBatch: Bool {
            var isDirectory: ObjCBool = false
            return files.count != 1 || filesFrom != nil
                || (FileManager.default.fileExists(atPath: files[0], isDirectory: &isDirectory) && isDirectory.boolValue)
        }

        func developOptions() throws -> DevelopOptions {
            var options = DevelopOptions(exposure: develop.exposure, encoding: develop.color.encoding, whiteBalance: whiteBalance)
            try unitOptions.apply(to: &options, exposure: develop.exposure)
            develop.apply(to: &options)
            options.source = sourceImage.source
            options.includeMasks = !noMasks
            limits.apply(to: &options)
            return options
        }

        var exportOptions: ExportOptions {
            ExportOptions(exr: EXROptions(compression: exrCompression, zipLevel: exrZipLevel, includeClipMask: exrClipMask,
                                          pixelType: exrType, tiling: exrTiled ? EXRTiling(tileSize: exrTileSize, mipmaps: exrMipmaps) : nil,
                                          layout: exrLayout),
                          hdf5: HDF5Options(compression: hdf5Level.map { $0 == 0 ? .none : .deflate(level: $0) } ?? .fastDeflate,
                                            sampleType: hdf5Type))
        }

        /// What `--analysis` measures: the whole image (region `image`) and the `--region`s,
        /// statistics and EV histograms.
        var analysisRequest: AnalysisRequest {
            var request = AnalysisRequest()
            request.regions = [Region.wholeImage()] + regionOptions.regions
            request.histogram = HistogramOptions()
            return request
        }

        func run() throws {
            try limits.withParallelism {
                if isBatch { try runBatch() } else { try convertOne() }
            }
        }

        func runBatch() throws {
            var summary: BatchSummary?
            try reportingFailures(json: style.json) {
                guard !analysis else { throw ValidationError("--analysis converts one file at a time") }
                guard !std else { throw ValidationError("--std converts one file at a time") }
                guard output != "-" else { throw ValidationError("-o - (standard output) takes one input file") }
                let output = output ?? FileManager.default.currentDirectoryPath
                try FileConversion.createDirectory(output)
                var batch = BatchConverter()
                batch.develop = try developOptions()
                batch.export = exportOptions
                batch.formats = format?.formats ?? [.exr]
                if let shard {
                    batch.shard = shard
                } else if let fromArray = try Shard.fromSlurm() {
                    batch.shard = fromArray
                    batch.shardFromJobArray = true
                }
                batch.resume = !noResume
                let inputs = try AnalysisInput.expand(files + listedFiles()).filter { URL(fileURLWithPath: $0).pathExtension.lowercased() == "dng" }
                guard !inputs.isEmpty else { throw AnalysisError(reason: "no .dng files among the inputs") }
                let showProgress = !style.json && !quiet && isatty(STDERR_FILENO) == 1
                let result = try batch.run(inputs, into: output, progress: showProgress ? progressBar : nil)
                summary = result
                for f in result.failed {
                    FileHandle.standardError.write(Data("scenelinear: error: \(f.error ?? f.input)\n".utf8))
                }
                let records = BatchConverter.readManifest(result.manifest)
                if !quiet { Self.warnOfLowerBounds(records, inputs: inputs) }
                if style.json {
                    let failed = Dictionary(result.failed.map { ($0.input, $0) }, uniquingKeysWith: { a, _ in a })
                    let entries = inputs.compactMap { input in (failed[input] ?? records[input]).map(ConvertedFile.init(batchRecord:)) }
                    ConvertDocument(files: entries, converted: result.converted, skipped: result.skipped, failed: result.failed.count,
                                    manifest: result.manifest, shard: batch.shard.description).print()
                } else if !quiet {
                    print("batch \(batch.shard): \(result.converted) converted, \(result.skipped) already done, \(result.failed.count) failed; manifest \(result.manifest)")
                }
            }
            if let first = summary?.failed.first { throw ExitCode(first.exitCode ?? 1) }
        }

        /// Warns of the lower bounds of the batch's Radiance pictures (the manifest's records of `inputs`).
        static func warnOfLowerBounds(_ records: [String: ManifestRecord], inputs: [String]) {
            for input in inputs {
                for output in records[input]?.outputs ?? [] { output.lowerBounds?.warn(path: output.path) }
            }
        }

        /// One input: converted, reported; with --json a failure is also a document, the same
        /// as on success with the failed file (the error is on stderr too).
        private func convertOne() throws {
            let toStdout = output == "-"
            var failure: (any SceneLinearFailure)?
            do {
                try reportingFailures(json: style.json) {
                    do { try convertFile(toStdout: toStdout) } catch let f as any SceneLinearFailure {
                        failure = f
                        throw f
                    }
                }
            } catch let error as ExitCode {
                if style.json && !toStdout {
                    ConvertDocument(files: [ConvertedFile(input: file, failure: failure, exitCode: error.rawValue)],
                                    converted: 0, skipped: 0, failed: 1).print()
                }
                throw error
            }
        }

        private func convertFile(toStdout: Bool) throws {
            var formats = format?.formats
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
            var options = try developOptions()
            // A bar on a terminal for a conversion that takes more than two seconds.
            let bar = FileProgressBar.make(for: file, quiet: quiet || style.json)
            defer { bar?.finish() }
            options.progress = bar?.progress
            if let hdr = targets.first(where: { $0.0 == .hdr }), !options.exposure.isAbsolute {
                throw ValidationError("\(hdr.1): \(RadianceError.relativeUnits)")
            }
            let conversion = FileConversion(input: file, targets: targets.map { (format: $0.0, path: $0.1) }, develop: options,
                                            export: exportOptions, analysis: analysis ? analysisRequest : nil, standardDeviation: std,
                                            directory: outputPath.hasSuffix("/") ? outputPath : nil)
            let (developed, written) = try conversion.run(widening: { range in
                if !quiet {
                    FileHandle.standardError.write(Data("scenelinear: \(range.count) values are beyond the half-float range (±65504): writing 32-bit float channels instead\n".utf8))
                }
            })
            bar?.finish()
            if let stdoutTemporary { return try copyToStandardOutput(stdoutTemporary) }
            if !quiet {
                for w in written { w.lowerBounds?.warn(path: w.path) }
            }
            report(developed, outputs: written.flatMap { ConvertOutput.entries($0) })
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

        /// Prints what one input made: the document with --json, else the summary lines.
        func report(_ d: ConvertedImage, outputs: [ConvertOutput]) {
            if style.json {
                ConvertDocument(files: [ConvertedFile(input: file, converted: d, outputs: outputs, timings: timingsOption.timings)],
                                converted: 1, skipped: 0, failed: 0).print()
                return
            }
            if quiet { return }
            let image = d.description
            let clipped = d.clippedPixelCount
            let percent = 100 * Double(clipped) / Double(max(1, image.width * image.height))
            print("\(file): \(d.rawIFD.path) \(image.width)×\(image.height) → \(image.encoding.displayName), exposure \(image.exposure.mode.rawValue) (×\(String(format: "%.6g", image.exposure.factor))), white \(image.provenance.whiteBalanceSource) xy (\(String(format: "%.4f", image.provenance.whiteXY[0])), \(String(format: "%.4f", image.provenance.whiteXY[1]))), \(clipped) clipped pixels (\(String(format: "%.3f", percent)) %)")
            if !image.masks.isEmpty {
                print("semantic masks: " + image.masks.map { "\($0.name) (\($0.semanticName.isEmpty ? $0.sourceIFD : $0.semanticName))" }.joined(separator: ", "))
            }
            for o in outputs { print(o.wroteLine) }
            if timingsOption.timings {
                let t = d.timings
                let exports = t.export.sorted { $0.key < $1.key }.map { String(format: "%@ %.3f s", $0.key, $0.value) }.joined(separator: ", ")
                print(String(format: "timings: container %.3f s, develop %.3f s, hash %.3f s", t.container, t.develop, t.hash)
                      + (exports.isEmpty ? "" : ", " + exports))
            }
        }
    }
}
