import ArgumentParser
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct Illuminance: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "illuminance",
            abstract: "Illuminance at a fisheye camera (E_v = Σ L · cos θ · ω, lux) with its 95 % interval.",
            discussion: """
                For a circular fisheye image — a DNG (developed in cd/m²: --units luminance is the \
                default here, the scale from --calibration or the exposure metadata), or an EXR/HDF5 \
                file converted or merged in luminance or radiance units — sums each pixel's luminance \
                Y times the cosine of its angle from the optical axis times its solid angle, over the \
                image circle: the illuminance on the plane facing the camera (vertical illuminance \
                for a horizontal camera). The solid angle of a pixel is the spherical quadrilateral of \
                its corners' view directions under --projection. The 95 % interval combines the pixels' \
                noise (NoiseProfile) and the absolute scale's uncertainty; pixels clipped in the image \
                make the value a lower bound, and their share of it is reported. -o writes the image \
                with its geometry: .hdr (the square around the image circle with Radiance's VIEW= \
                line, remapped to an equidistant -vta view for an equisolid lens, for evalglare; its \
                header records the lower-bound pixels and their share of the solid angle, and when \
                there are any they are marked in x.clip.hdr, remapped alike, with a warning) or \
                .h5 (the image with /fisheye/theta, /fisheye/azimuth, /fisheye/solid_angle). \
                --json prints schema scenelinear.illuminance/1. See docs/fisheye.md.

                --stray-light F states the lens's stray light: a share F (percent) of every \
                direction's light spread over the directions within --stray-light-angle of it. \
                Pixels at least --bright-source times the circle's median luminance are very bright \
                sources; the pixels within the angle of one are flagged, and the result lists the \
                parts of E_v that the sources and the flagged pixels give. The 95 % interval is \
                widened on both sides by the most the spread can move E_v, F · α · Σ L ω \
                (docs/lens.md#stray-light).
                """)

        @Argument(help: "Fisheye images: DNG, or EXR/HDF5 in absolute units.")
        var files: [String]

        @OptionGroup var outputSafety: OutputSafety

        @OptionGroup var fisheye: FisheyeOptions

        @OptionGroup var unitOptions: UnitOptions

        @OptionGroup var demosaicOption: DemosaicOption

        @OptionGroup var strayLight: StrayLightOptions

        @Option(name: .shortAndLong, help: "Also write the (first) image with its geometry: .hdr (Radiance, with VIEW=) or .h5 (with /fisheye).")
        var output: String?

        @OptionGroup var style: OutputStyleOptions

        @OptionGroup var limits: LimitOptions

        func validate() throws {
            try fisheye.requireProjectionForLensOptions()
            guard fisheye.projection != nil else { throw ValidationError("Missing expected argument '--projection <projection>'") }
            if let output, !["hdr", "h5", "hdf5"].contains(URL(fileURLWithPath: output).pathExtension.lowercased()) {
                throw ValidationError("--output must end in .hdr or .h5")
            }
        }

        func run() throws {
            try reportingFailures(json: style.json) {
                guard var lens = fisheye.request else { throw ValidationError("Missing expected argument '--projection <projection>'") }
                lens.strayLight = strayLight.request
                var options = DevelopOptions()
                try unitOptions.apply(to: &options, exposure: .none, absoluteByDefault: true)
                demosaicOption.apply(to: &options)
                options.includeMasks = false
                limits.apply(to: &options)
                let measured = try limits.withParallelism {
                    try Pipeline.illuminance(files, lens: lens, options: options, output: output) { bounds in
                        if let output, !style.quiet { bounds.warn(path: output) }
                    }
                }
                if style.json {
                    print(try ReportJSON.encode(IlluminanceDocument(results: measured.results, output: output, lowerBounds: measured.picture)))
                    return
                }
                for r in measured.results { print(Self.text(r)) }
                if let output, !style.quiet {
                    print("wrote \(output)")
                    if let mask = measured.picture?.mask { print("wrote \(mask) (lower-bound mask of \(output))") }
                }
            }
        }

        static func text(_ r: IlluminanceResult) -> String {
            var s = "\(r.file): " + headline(r)
            s += String(format: "\n  scale: ±%.3g %% (%@)", 100 * r.scaleRelativeUncertainty, r.scaleSource)
            s += r.noiseUncertainty.map { String(format: "; noise: ±%.3g lx", $0) } ?? "; noise: not known for this file"
            if let u = r.samplingUncertainty, u > 0 { s += String(format: "; CFA sampling of sources smaller than the pattern: ±%.3g lx", u) }
            s += String(format: "\n  %@ %.4g°, circle (%.1f, %.1f) r %.1f px, f %.2f px: %d pixels, Σω = %.5f sr (field of view: %.5f sr)",
                        r.lens.projection.rawValue, r.lens.fieldOfView, r.lens.centerX, r.lens.centerY, r.lens.radius, r.lens.focalLength,
                        r.pixels, r.solidAngle, r.expectedSolidAngle)
            if r.nonFinitePixels > 0 {
                s += "\n  NOT COUNTED: \(r.nonFinitePixels) pixels of the circle are NaN or infinite (left out of E_v, which misses their part)"
            }
            if r.isLowerBound {
                s += String(format: "\n  clipped: %d pixels, giving %.3g %% of E_v as recorded; their true part is unknown and may be most of it",
                            r.lowerBoundPixels, 100 * r.lowerBoundShare)
            }
            if r.kind == .clippingUnknown {
                s += "\n  CLIPPING UNKNOWN: the file has no clip mask, so E_v may be a lower bound"
            }
            if let stray = r.strayLight {
                s += String(format: "\n  stray light (%.3g %% within %.3g°): %d source%@ of ≥ %.4g cd/m² (%d pixels, %.3g %% of E_v); %d pixels flagged about them (%.3g %% of E_v); interval widened by ±%.3g lx",
                            100 * stray.fraction, stray.angle, stray.sources, stray.sources == 1 ? "" : "s", stray.sourceLuminance, stray.sourcePixels,
                            100 * stray.sourceShare, stray.flaggedPixels, 100 * stray.flaggedShare, stray.bound)
                if stray.zonedSources < stray.sources { s += " (zones about the \(stray.zonedSources) brightest sources only)" }
            }
            return s
        }

        /// "E_v = x lx, 95 % interval [a, b] (kind)" for a value; for a bound, its one end and why.
        static func headline(_ r: IlluminanceResult) -> String {
            switch r.kind {
            case .lowerBound:
                return String(format: "E_v ≥ %.6g lx (LOWER BOUND: %d pixels are clipped in every frame; merge a bracket with a shorter exposure); 95 %% lower end %.6g lx",
                              r.illuminance, r.lowerBoundPixels, r.low95 ?? .nan)
            case .upperBound:
                return String(format: "E_v ≤ %.6g lx (UPPER BOUND: clipped pixels); 95 %% upper end %.6g lx", r.illuminance, r.high95 ?? .nan)
            case .undetermined:
                return String(format: "E_v ~ %.6g lx (UNDETERMINED: clipped pixels move it either way)", r.illuminance)
            case .value, .clippingUnknown:
                return String(format: "E_v = %.6g lx, 95 %% interval [%.6g, %.6g] (%@)", r.illuminance, r.low95 ?? .nan, r.high95 ?? .nan,
                              r.intervalKind)
            }
        }
    }
}
