import ArgumentParser
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct CalibrateLens: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "calibrate-lens",
            abstract: "Fit a lens's vignetting, per camera channel, from flat-field captures or a sweep of one target across the field.",
            discussion: """
                Each capture is of a uniform source filling the frame below white (an \
                integrating sphere's port, a light box, an overcast sky through a diffuser), \
                taken with the camera, lens and aperture the calibration is for. Each is \
                developed in camera RGB (no crop, the sensor's orientation, 2×2 superpixels for \
                CFA), cut into square cells, and each channel's cell means fitted by least \
                squares as A · V(r), V(r) = 1 + a1·r² + a2·r⁴ + a3·r⁶ with r the distance from the \
                centre over the image's half-diagonal (V = 1 on the axis). The coefficients' \
                covariance comes from the residuals' scatter, and where the rings' mean residuals \
                exceed their noise (the model does not follow the lens) their size widens V's \
                uncertainty; several captures are combined with inverse-covariance weights. A capture whose cells scatter more than \
                --max-residual about the model is refused as not a uniform flat field (exit 18).

                With --sweep, each capture is of one small bright target (a lamp, a lit patch) on a \
                dark ground, moved across the field between captures from the axis to the rim (the \
                rotation method, for fields wider than any flat source): the target's signal, summed \
                over its image above the ground, is one point of the fit per capture. At least 7 \
                positions, one of them near the axis (r ≤ 0.25). With the captures' NoiseProfile the \
                sums are weighted by their noise, the covariance widened when they scatter beyond it, \
                and each position's leave-one-out residual beyond its noise is the model's departure; \
                without one, their scatter gives the covariance, widened to Student's t. A capture \
                without one clear target, a target at the image's edge or clipped, or a sweep \
                scattering more than --max-residual is refused (exit 18).

                The JSON (schema scenelinear.lens/1) records the camera, lens (LensModel), focal \
                length and f-number, the model, its covariance and residuals; `--lens lens.json` \
                applies it in convert, merge, illuminance, calibrate and the analysis commands (docs/lens.md).
                """)

        @Argument(help: "The captures (DNG): flat fields, or with --sweep one per position of the target.")
        var flats: [String]

        @Flag(help: "The captures are a sweep of one small target across the field, not flat fields.")
        var sweep = false

        @OptionGroup var outputSafety: OutputSafety

        @Option(name: .shortAndLong, help: "The lens calibration file to write (JSON).")
        var output: String

        @Option(help: "Cells across the image's width; each cell's mean is one point of the fit (flat fields).")
        var cells = 48

        @Option(help: ArgumentHelp("Largest RMS scatter about the model, percent, of a capture's cells before it is refused as not a uniform flat field, or of a sweep's targets before the sweep is refused (default 2).", valueName: "percent"),
                transform: ArgumentValue.percentage)
        var maxResidual = 0.02

        @Option(help: ArgumentHelp("The centre of the fall-off (principal point), relative to the image width and height (default 0.5,0.5: the middle).", valueName: "x,y"))
        var center: String?

        @OptionGroup var style: OutputStyleOptions

        @OptionGroup var limits: LimitOptions

        func validate() throws {
            guard !flats.isEmpty else { throw ValidationError(sweep ? "give the sweep's captures (at least 7)" : "give at least one flat-field capture") }
            guard (4...1024).contains(cells) else { throw ValidationError("--cells must be 4...1024") }
            if let center {
                let parts = center.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                guard parts.count == 2, parts.allSatisfy({ (0...1).contains($0) }) else {
                    throw ValidationError("--center: give x,y, each from 0 to 1 (relative to the image)")
                }
            }
        }

        func run() throws {
            try reportingFailures(json: style.json) {
                var options = LensFitOptions()
                options.cellsAcross = cells
                options.method = sweep ? .sweep : .flatField
                options.maxResidual = maxResidual
                if let center {
                    let parts = center.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                    (options.centerX, options.centerY) = (parts[0], parts[1])
                }
                limits.apply(to: &options.develop)
                let lens = try Pipeline.calibrateLens(captures: flats, options: options)
                let data = try lens.write(to: output)
                if style.json {
                    print(String(decoding: data, as: UTF8.self))
                    return
                }
                print(String(format: "%@, %@, f/%.3g: vignetting from %d capture%@ (%@)", lens.camera.text, lens.camera.lens ?? "lens not recorded",
                             lens.fNumber, flats.count, flats.count == 1 ? "" : "s", sweep ? "a sweep" : "\(lens.cells) cells"))
                for (c, name) in ["R", "G", "B"].enumerated() {
                    let k = lens.falloff.coefficients[c]
                    let rim = lens.transmission(channel: c, r: 1)
                    print(String(format: "  %@: V(r) = 1 %+.5f r² %+.5f r⁴ %+.5f r⁶; V(1) = %.4f ± %.2g %%; residuals RMS %.3g %%, largest %.3g %%",
                                 name, k[0], k[1], k[2], rim.value, 100 * rim.relativeUncertainty, 100 * lens.residualRMS[c], 100 * lens.residualMax[c]))
                }
                if !style.quiet { print("wrote \(output)") }
            }
        }
    }
}
