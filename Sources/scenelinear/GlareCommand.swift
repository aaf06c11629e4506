import ArgumentParser
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct Glare: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "glare",
            abstract: "Glare at a fisheye camera: DGP, DGI and UGR with 95 % intervals, and the glare sources.",
            discussion: """
                For a circular fisheye image in absolute units (a DNG developed in cd/m², or an \
                EXR/HDF5 file converted or merged in luminance or radiance units; a merge's standard \
                deviation layer gives each pixel's noise), looking along the view direction with \
                the image's up as up. Detects glare sources as evalglare does by default: pixels \
                above --glare-threshold cd/m² (2000; a value of 100 or less multiplies the circle's mean \
                luminance), joined when closer than --merge-angle, pixels at or above --peak-limit \
                split off as sources of their own. Then, with E_v over the pixels in front of the \
                lens and Guth's position index (Iwata and Osterhaus's below the line of sight): \
                DGP = 5.87e-5 E_v + 0.092 log10(1 + Σ L²ω / (E_v^1.87 P²)) + 0.159 (at most 1), \
                DGI, and UGR with the background luminance (E_v − E_dir)/π.

                The 95 % intervals come from --glare-draws Monte Carlo draws (seeded by --glare-seed): each \
                scales the image by one factor from the scale's uncertainty, adds each pixel's \
                noise, detects the sources again and recomputes every metric. A glare source with \
                a pixel clipped in every frame makes the metrics lower bounds (only the lower end \
                is given); clipped pixels outside every source make them undetermined. \
                --json prints schema scenelinear.glare/1. See docs/glare.md.
                """)

        @Argument(help: "Fisheye images: DNG, or EXR/HDF5 in absolute units.")
        var files: [String]

        @OptionGroup var fisheye: FisheyeOptions

        @OptionGroup var glare: GlareOptions

        @OptionGroup var unitOptions: UnitOptions

        @OptionGroup var demosaicOption: DemosaicOption

        @OptionGroup var style: OutputStyleOptions

        @OptionGroup var limits: LimitOptions

        func validate() throws {
            try fisheye.requireProjectionForLensOptions()
            guard fisheye.projection != nil else { throw ValidationError("Missing expected argument '--projection <projection>'") }
            try glare.validate()
        }

        func run() throws {
            try reportingFailures(json: style.json) {
                guard let lensRequest = fisheye.request else { throw ValidationError("Missing expected argument '--projection <projection>'") }
                var options = DevelopOptions()
                try unitOptions.apply(to: &options, exposure: .none, absoluteByDefault: true)
                demosaicOption.apply(to: &options)
                options.includeMasks = false
                limits.apply(to: &options)
                let results = try limits.withParallelism {
                    try files.map { file in try Pipeline.glare(file, lens: lensRequest, options: options, request: glare.request) }
                }
                if style.json {
                    print(try ReportJSON.encode(GlareDocument(results: results)))
                    return
                }
                for r in results { print(Self.text(r)) }
            }
        }

        static func text(_ r: GlareResult) -> String {
            var s = "\(r.file): " + line("DGP", r.daylightGlareProbability, "%.3f")
            s += "\n  " + line("DGI", r.daylightGlareIndex, "%.2f")
            s += "\n  " + (r.unifiedGlareRating.map { line("UGR", $0, "%.2f") } ?? "UGR: not defined (background luminance ≤ 0)")
            s += "\n  " + line("E_v", r.illuminance, "%.6g") + " lx"
            s += String(format: "\n  background luminance %.5g cd/m²; threshold %.5g cd/m²; %d glare source%@", r.backgroundLuminance, r.threshold,
                        r.sources.count, r.sources.count == 1 ? "" : "s")
            for (k, g) in r.sources.enumerated() {
                s += String(format: "\n    %d: L %.5g cd/m², ω %.4g sr, E %.5g lx, σ %.1f°, τ %.1f°, P %.3g, %d px", k + 1, g.luminance, g.solidAngle,
                            g.illuminance, g.sigma, g.tau, g.positionIndex, g.pixels)
                if g.clippedPixels > 0 { s += " (\(g.clippedPixels) clipped: its luminance is a lower bound)" }
            }
            s += String(format: "\n  intervals: %d draws, scale ±%.3g %%, pixel noise from %@", r.request.draws, 100 * r.scaleRelativeUncertainty, r.noiseSource)
            for note in r.notes { s += "\n  note: \(note)" }
            return s
        }

        /// "DGP = x, 95 % interval [a, b]" for a value; for a bound its kind and one end.
        static func line(_ name: String, _ m: GlareMetric, _ format: String) -> String {
            let v = String(format: format, m.value)
            func f(_ x: Double?) -> String { x.map { String(format: format, $0) } ?? "?" }
            switch m.kind {
            case .lowerBound: return "\(name) ≥ \(v) (LOWER BOUND: a glare source is clipped in every frame); 95 % lower end \(f(m.low95))"
            case .undetermined: return "\(name) ~ \(v) (UNDETERMINED: clipped pixels outside the glare sources)"
            case .upperBound: return "\(name) ≤ \(v) (UPPER BOUND)"
            case .value, .clippingUnknown:
                return "\(name) = \(v), 95 % interval [\(f(m.low95)), \(f(m.high95))]" + (m.kind == .clippingUnknown ? " (clipping unknown)" : "")
            }
        }
    }
}

/// How glare sources are detected and the intervals drawn (`glare`, `sequence`).
struct GlareOptions: ParsableArguments {
    @Option(name: .customLong("glare-threshold"), help: ArgumentHelp("Glare-source threshold: above 100, a luminance in cd/m²; 100 or less, a factor on the circle's mean luminance.", valueName: "cd/m²|factor"))
    var threshold: Double = 2000

    @Option(help: ArgumentHelp("Pixels at or above this luminance (cd/m²) form glare sources of their own; 0: no split.", valueName: "cd/m²"))
    var peakLimit: Double = 50_000

    @Option(help: ArgumentHelp("Candidate pixels closer than this angle belong to one glare source (evalglare's -r 0.2 rad is 5.73°).", valueName: "degrees"))
    var mergeAngle: Double = 0.1 * 180 / .pi

    @Option(name: .customLong("glare-draws"), help: ArgumentHelp("Monte Carlo draws for the 95 % intervals (40 to 100000).", valueName: "n"))
    var draws = 200

    @Option(name: .customLong("glare-seed"), help: ArgumentHelp("The glare draws' seed.", valueName: "n"))
    var seed: UInt64 = 1

    var request: GlareRequest {
        var r = GlareRequest()
        r.threshold = threshold
        r.peakLimit = peakLimit > 0 ? peakLimit : nil
        r.mergeAngle = mergeAngle * .pi / 180
        r.draws = draws
        r.seed = seed
        return r
    }

    func validate() throws {
        if peakLimit < 0 || !peakLimit.isFinite { throw ValidationError("--peak-limit must be 0 (no split) or a positive luminance") }
        if let problem = request.problem { throw ValidationError(problem) }
    }
}
