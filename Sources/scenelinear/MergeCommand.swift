import ArgumentParser
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge",
            abstract: "Merge raw frames of one scene (a bracket) into one image, noise-optimally, with each pixel's standard deviation.",
            discussion: """
                The frames come from one camera (make, model, serial number), have one size and \
                layout, and any exposure times, apertures and ISOs. They are merged in Stage 2 \
                (linear sensor values, before demosaicing), each sample weighted by the inverse of its \
                variance from the frame's NoiseProfile at the value the merge predicts for it (not the \
                value observed, whose noise would bias the weights), clipped and saturated samples left \
                out. A pixel clipped in every frame is a lower bound: its value is the largest the \
                frames allow, and it is flagged (mask_clipped, /clip_mask). Exposure ratios come from \
                the metadata (t · ISO / (N² · 2^BaselineExposure)) and are measured on the pixels \
                valid in neighbouring frames: a frame whose measured ratio differs by more than \
                --ratio-tolerance (and by more than 3 standard uncertainties) is merged at the \
                measured one and reported. The result is in the reference frame's units (--units \
                relative), or in cd/m² or W·sr⁻¹·m⁻² through the reference frame's exposure and \
                --calibration. Outputs: EXR with channels R, G, B, mask_clipped (lower bounds), \
                std_R, std_G, std_B (standard deviation of each channel) and merge_frames (frames \
                used by the pixel's least-covered channel), 32-bit floats by default (--exr-layout \
                layers names them mask.clipped.Y and std.R, std.G, std.B); HDF5 with /image, \
                /clip_mask, /merge/std [H, W, 3] and /merge/frames [H, W] on the image's dimensions \
                (y, x, channel); a Radiance .hdr (absolute units only) holds the image, its header the \
                count and share of lower-bound pixels, which, when there are any, are marked in \
                x.clip.hdr (1 where a lower bound) with a warning. With --projection (a fisheye \
                bracket) the .hdr is the square around the image circle with Radiance's VIEW= line, \
                as illuminance -o writes it, for evalglare; an .h5 gets /fisheye. --json prints schema \
                scenelinear.merge/1. See docs/merge.md.
                """)

        @Argument(help: "The raw frames (DNG), at least two.")
        var frames: [String]

        @OptionGroup var outputSafety: OutputSafety

        @Option(name: .shortAndLong, help: "Output file: .exr, .h5 or .hdr.")
        var output: String

        @OptionGroup(title: "Fisheye bracket") var fisheye: FisheyeOptions

        @Option(help: "The frame whose units the result is in, numbered from 1 in the order given (default: the frame of middle exposure).")
        var reference: Int?

        @Option(help: ArgumentHelp("Largest difference, in percent, between a frame's exposure ratio from its metadata and from its pixels before the measured one is used (default 3).", valueName: "percent"))
        var ratioTolerance: Double = 3

        @Option(help: ArgumentHelp("Where a sample counts as saturated, as a fraction of the white level (default 0.98).", valueName: "fraction"))
        var saturation: Double = 0.98

        @OptionGroup var unchecked: UncheckedRatiosOption

        @Flag(help: "Align hand-held frames to the reference by a whole-pixel translation (even for Bayer mosaics), searched on exposure-normalised log images; the shifts are reported.")
        var align = false

        @Option(help: "Refuse frames (exit 19) when more than this percentage of the smooth pixels valid in a frame and its neighbour in exposure differ beyond their noise (by more than 5 standard deviations and 5 % from the measured exposure ratio): not the same scene, or a subject that moved over much of the frame, hand-held frames merged without --align (default 10).")
        var maxDisagreement: Double = 10

        @Option(help: "With --align: the largest shift searched, pixels each way (default 64).")
        var alignRange: Int = 64

        @Option(help: ArgumentHelp("A frame taken through a filter (an ND filter to catch the sun): N=T[±u], the frame's number from 1 in the order given and the filter's transmittance as for --filter-factor (0.001, 0.001±3%, ND3, ND3.0±0.02). Repeat for more frames. The frame's exposure is its metadata's times T; it is merged at its measured ratio when one can be measured (a ratio off by more than --ratio-tolerance is reported as measured: a wrong factor), else at T with T's uncertainty added to the merged scale (budget item 'filter'). A filter in front of every frame is --filter-factor.", valueName: "N=T[±u]"), transform: ArgumentValue.frameFilter)
        var frameFilter: [FrameFilter] = []

        @OptionGroup var develop: DevelopOptionGroup

        @OptionGroup var unitOptions: UnitOptions

        @Option(help: "EXR channel type: float (default: merged brackets exceed half's range) or half.")
        var exrType: EXRPixelType = .float

        @Option(help: "EXR channel names: flat (default: mask_clipped, std_R, std_G, std_B; Blender opens the file as a plain image) or layers (mask.clipped.Y, std.R, std.G, std.B: a std layer for Nuke and OIIO).")
        var exrLayout: EXRLayout = .flat

        @Option(help: "HDF5 sample type of /image: float32 (default) or float16.")
        var hdf5Type: HDF5SampleType = .float32

        @OptionGroup var timingsOption: TimingsOption

        @OptionGroup var style: OutputStyleOptions

        @OptionGroup var limits: LimitOptions

        /// The format of --output (checked by `validate`).
        var format: OutputFormat? { OutputFormat(pathExtension: URL(fileURLWithPath: output).pathExtension) }

        func validate() throws {
            if develop.exposure == .normalized {
                throw ValidationError("--exposure normalized would divide by the reference frame's exposure: use none or baseline, or --units")
            }
            guard ratioTolerance >= 0 && ratioTolerance < 100 else { throw ValidationError("--ratio-tolerance must be 0...100 percent") }
            if !(maxDisagreement >= 0 && maxDisagreement <= 100) {
                throw ValidationError("--max-disagreement must be 0...100 percent")
            }
            guard saturation > 0 && saturation <= 1 else { throw ValidationError("--saturation must be in (0, 1]") }
            guard (1...4096).contains(alignRange) else { throw ValidationError("--align-range must be 1...4096 pixels") }
            if let reference, !(1...max(frames.count, 1)).contains(reference) {
                throw ValidationError("--reference must be 1...\(frames.count) (a frame number in the order given)")
            }
            for f in frameFilter where f.frame >= frames.count {
                throw ValidationError("--frame-filter \(f.frame + 1)=…: there are \(frames.count) frames")
            }
            if Set(frameFilter.map(\.frame)).count != frameFilter.count {
                throw ValidationError("--frame-filter gives a frame twice")
            }
            guard let format else { throw ValidationError("--output must end in .exr, .h5 or .hdr") }
            try fisheye.requireProjectionForLensOptions()
            if fisheye.projection != nil && format == .exr {
                throw ValidationError("--projection describes the picture of an .hdr or .h5 output, not of an EXR")
            }
        }

        /// The merge's settings from the options.
        func mergeOptions() throws -> MergeOptions {
            var options = MergeOptions()
            try unitOptions.apply(to: &options.develop, exposure: develop.exposure)
            develop.apply(to: &options.develop)
            limits.apply(to: &options.develop)
            options.reference = reference.map { $0 - 1 }
            options.ratioTolerance = ratioTolerance / 100
            options.saturation = saturation
            options.allowUncheckedRatios = unchecked.uncheckedRatios
            options.align = align
            options.maxShift = alignRange
            options.maxDisagreement = maxDisagreement / 100
            options.frameFilters = Dictionary(uniqueKeysWithValues: frameFilter.map { ($0.frame, $0.filter) })
            return options
        }

        func run() throws {
            try reportingFailures(json: style.json) {
                let options = try mergeOptions()
                guard let format else { throw ValidationError("--output must end in .exr, .h5 or .hdr") }
                if format == .hdr && !options.develop.exposure.isAbsolute {
                    throw OutputError(path: output, reason: "a Radiance picture holds absolute values: merge with --units luminance or radiance")
                }
                var merged = try limits.withParallelism { try Pipeline.merge(paths: frames, options: options) }
                let lens = try fisheye.request?.lens(for: merged.image, path: output)
                let start = DispatchTime.now().uptimeNanoseconds
                var writer = MergedOutput()
                (writer.exrType, writer.exrLayout, writer.hdf5Type) = (exrType, exrLayout, hdf5Type)
                let bounds = try limits.withParallelism { try writer.write(&merged, format: format, to: output, lens: lens) }
                merged.timings.append(("write", Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9))
                if !style.quiet { bounds?.warn(path: output) }
                if timingsOption.timings {
                    FileHandle.standardError.write(Data(("timings: " + merged.timings.map { String(format: "%@ %.3f", $0.0, $0.1) }
                        .joined(separator: ", ") + "\n").utf8))
                }
                if style.json {
                    let document = MergeDocument(output: output, format: format.rawValue, units: merged.image.exposure.mode.rawValue,
                                                 report: merged.report, lens: lens, lowerBounds: bounds)
                    print(try document.json())
                } else if !style.quiet {
                    print(merged.report.summary(unit: merged.image.exposure.mode))
                    print("wrote \(output)")
                    if let mask = bounds?.mask { print("wrote \(mask) (lower-bound mask of \(output))") }
                }
            }
        }
    }
}

/// Frames too far apart in exposure to check their ratio (`merge`, `sequence`).
struct UncheckedRatiosOption: ParsableArguments {
    @Flag(help: "Merge frames that share too few valid pixels with their neighbour in exposure to measure their ratio (e.g. a frame short enough for the sun's disc alone) at the metadata's ratio, reported as unchecked, instead of refusing them.")
    var uncheckedRatios = false
}
