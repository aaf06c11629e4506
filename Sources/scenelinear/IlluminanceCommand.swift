import ArgumentParser
import Foundation
import SceneLinearKit

extension FisheyeProjection: ExpressibleByArgument {}

/// `--circle x,y,r`: the image circle's centre and radius in output pixels, or nil when the
/// text is not three numbers with a positive radius.
func parsedCircle(_ text: String) -> [Double]? {
    let parts = text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    guard parts.count == 3, parts.allSatisfy(\.isFinite), parts[2] > 0 else { return nil }
    return parts
}

/// The document `illuminance --json` prints (schema scenelinear.illuminance/1).
struct IlluminanceDocument: Codable {
    var schema = "scenelinear.illuminance/1"
    var results: [IlluminanceResult]
}

extension SceneLinearCommand {
    struct Illuminance: ParsableCommand {
        static let configuration = CommandConfiguration(
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
                line, remapped to an equidistant -vta view for an equisolid lens, for evalglare) or \
                .h5 (the image with /fisheye/theta, /fisheye/azimuth, /fisheye/solid_angle). \
                See docs/fisheye.md.
                """)

        @Argument(help: "Fisheye images: DNG, or EXR/HDF5 in absolute units.")
        var files: [String]

        @OptionGroup var outputSafety: OutputSafety

        @Option(help: "The lens's projection: equidistant (r = fθ), equisolid (r = 2f sin θ/2), orthographic (r = f sin θ) or stereographic (r = 2f tan θ/2).")
        var projection: FisheyeProjection

        @Option(help: "Full field of view across the image circle, degrees (default 180).")
        var fov: Double = 180

        @Option(help: ArgumentHelp("The image circle in output pixels: centre x, centre y and radius, or auto (found from the dark surround: a first estimate from the pixels above the surround, refined by counting the pixels near the edge that are brighter than halfway between the sky just inside and the surround just outside; the centroid and √(count/π); see docs/fisheye.md) (default: the circle inscribed in the image, centred).", valueName: "x,y,r|auto"))
        var circle: String?

        @OptionGroup var unitOptions: UnitOptions

        @Option(help: "CFA demosaicing of DNG inputs: rcd (default), bilinear or superpixel.")
        var demosaic: DemosaicMethod = Demosaicer.defaultMethod

        @Option(name: .shortAndLong, help: "Also write the (first) image with its geometry: .hdr (Radiance, with VIEW=) or .h5 (with /fisheye).")
        var output: String?

        @Flag(help: "Print JSON (schema scenelinear.illuminance/1).")
        var json = false

        @Flag(name: .shortAndLong, help: "Print nothing but the results and errors.")
        var quiet = false

        @OptionGroup var limits: LimitOptions

        func validate() throws {
            guard fov > 0 && fov <= projection.maximumFieldOfView else {
                throw ValidationError("--fov must be in (0, \(projection.maximumFieldOfView)] degrees for --projection \(projection.rawValue)")
            }
            if let circle, circle != "auto", parsedCircle(circle) == nil {
                throw ValidationError("--circle must be x,y,r (pixels, r > 0) or auto")
            }
            if let output, !["hdr", "h5", "hdf5"].contains(URL(fileURLWithPath: output).pathExtension.lowercased()) {
                throw ValidationError("--output must end in .hdr or .h5")
            }
        }

        func lens(for image: SceneLinearImage, path: String) throws -> FisheyeLens {
            let width = image.width, height = image.height
            if circle == "auto" {
                let w = Rec2020.luminanceWeights
                let y = (0..<(width * height)).map { i in
                    Float(w.x) * image.pixels.samples[3 * i] + Float(w.y) * image.pixels.samples[3 * i + 1] + Float(w.z) * image.pixels.samples[3 * i + 2]
                }
                guard let found = FisheyeLens.detectCircle(luminance: y, width: width, height: height) else {
                    throw AnalysisError(reason: "\(path): no image circle found (give --circle x,y,r)")
                }
                return FisheyeLens(projection: projection, fieldOfView: fov, centerX: found.x, centerY: found.y, radius: found.r)
            }
            return FisheyeSpec(projection: projection, fieldOfView: fov, circle: circle.flatMap(parsedCircle)).lens(width: width, height: height)
        }

        func run() throws {
            try reportingFailures(json: json) {
                var options = DevelopOptions()
                try unitOptions.apply(to: &options, exposure: .none, absoluteByDefault: true)
                options.demosaic = demosaic
                options.includeMasks = false
                try limits.apply(to: &options)
                var results: [IlluminanceResult] = []
                try limits.withParallelism {
                    for (i, file) in files.enumerated() {
                        // Converted files are taken in whichever absolute unit they hold (--units is for DNGs).
                        var fileOptions = options
                        if ["exr", "h5", "hdf5"].contains(URL(fileURLWithPath: file).pathExtension.lowercased()) { fileOptions.exposure = .none }
                        let input = try AnalysisInput.load(file, options: fileOptions)
                        let lens = try lens(for: input.image, path: file)
                        results.append(try Pipeline.illuminance(input, lens: lens))
                        if i == 0, let output {
                            if URL(fileURLWithPath: output).pathExtension.lowercased() == "hdr" {
                                try Pipeline.writeFisheyeRadiance(input.image, lens: lens, to: output)
                            } else {
                                try HDF5File.write(input.image, to: output,
                                                   groups: [Pipeline.fisheyeGroup(lens, width: input.image.width, height: input.image.height)])
                            }
                        }
                    }
                }
                if json {
                    print(try ReportJSON.encode(IlluminanceDocument(results: results)))
                    return
                }
                for r in results { print(Self.text(r)) }
                if let output, !quiet { print("wrote \(output)") }
            }
        }

        static func text(_ r: IlluminanceResult) -> String {
            var s = String(format: "%@: E_v = %.6g lx, 95 %% interval [%.6g, %.6g] (%@)", r.file, r.illuminance, r.low95, r.high95, r.intervalKind)
            s += String(format: "\n  scale: ±%.3g %% (%@)", 100 * r.scaleRelativeUncertainty, r.scaleSource)
            s += r.noiseUncertainty.map { String(format: "; noise: ±%.3g lx", $0) } ?? "; noise: not known for this file"
            s += String(format: "\n  %@ %.4g°, circle (%.1f, %.1f) r %.1f px, f %.2f px: %d pixels, Σω = %.5f sr (field of view: %.5f sr)",
                        r.lens.projection.rawValue, r.lens.fieldOfView, r.lens.centerX, r.lens.centerY, r.lens.radius, r.lens.focalLength,
                        r.pixels, r.solidAngle, r.expectedSolidAngle)
            if r.nonFinitePixels > 0 {
                s += "\n  NOT COUNTED: \(r.nonFinitePixels) pixels of the circle are NaN or infinite (left out of E_v, which misses their part)"
            }
            if r.isLowerBound {
                s += String(format: "\n  LOWER BOUND: %d pixels clipped, giving %.3g %% of E_v at least", r.lowerBoundPixels, 100 * r.lowerBoundShare)
            }
            return s
        }
    }
}
