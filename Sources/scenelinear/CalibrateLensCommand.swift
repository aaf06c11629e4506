import ArgumentParser
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct CalibrateLens: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "calibrate-lens",
            abstract: "Fit a lens's vignetting, per camera channel, from flat-field captures.",
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

                The JSON (schema scenelinear.lens/1) records the camera, lens (LensModel), focal \
                length and f-number, the model, its covariance and residuals; `--lens lens.json` \
                applies it in convert, merge, illuminance, calibrate and the analysis commands (docs/lens.md).
                """)

        @Argument(help: "The flat-field captures (DNG).")
        var flats: [String]

        @OptionGroup var outputSafety: OutputSafety

        @Option(name: .shortAndLong, help: "The lens calibration file to write (JSON).")
        var output: String

        @Option(help: "Cells across the image's width; each cell's mean is one point of the fit.")
        var cells = 48

        @Option(help: ArgumentHelp("Largest RMS scatter of a capture's cells about the model, percent, before it is refused as not a uniform flat field (default 2).", valueName: "percent"),
                transform: ArgumentValue.percentage)
        var maxResidual = 0.02

        @Option(help: ArgumentHelp("The centre of the fall-off (principal point), relative to the image width and height (default 0.5,0.5: the middle).", valueName: "x,y"))
        var center: String?

        @OptionGroup var style: OutputStyleOptions

        @OptionGroup var limits: LimitOptions

        func validate() throws {
            guard !flats.isEmpty else { throw ValidationError("give at least one flat-field capture") }
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
                options.maxResidual = maxResidual
                if let center {
                    let parts = center.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                    (options.centerX, options.centerY) = (parts[0], parts[1])
                }
                limits.apply(to: &options.develop)
                let lens = try Pipeline.calibrateLens(flats: flats, options: options)
                let data = try lens.write(to: output)
                if style.json {
                    print(String(decoding: data, as: UTF8.self))
                    return
                }
                print(String(format: "%@, %@, f/%.3g: vignetting from %d capture%@ (%d cells)", lens.camera.text, lens.camera.lens ?? "lens not recorded",
                             lens.fNumber, flats.count, flats.count == 1 ? "" : "s", lens.cells))
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
