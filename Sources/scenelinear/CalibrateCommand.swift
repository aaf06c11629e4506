import Analysis
import ArgumentParser
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct Calibrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "calibrate",
            abstract: "Fit a camera's luminance calibration constant to reference luminances (spot meter, grey card, or illuminance at a fisheye).",
            discussion: """
                Each reference is a region of a photo and its known luminance: measured with a \
                spot meter (--luminance, cd/m²) or a grey card of known reflectance under a \
                measured illuminance (--reflectance and --illuminance: L = ρ·E/π). The region's \
                mean linear value of Y (NoiseProfile standard error) at the photo's exposure \
                time t, f-number N, ISO S and BaselineExposure BE gives that reference's \
                K = L / (x · 2^BE · N²/(t·S)). K is fitted on the log scale, each reference \
                weighted by 1/(its reading's and its mean's relative variances); the fit's \
                uncertainty is inflated by the Birge ratio when the references scatter more than \
                their uncertainties, and the meter's shared calibration uncertainty added after \
                (it does not average down). Clipped regions are refused. A fisheye photo with the \
                vertical illuminance measured at its lens (--illuminance-vertical, with --projection) \
                calibrates by its whole image circle: K = E_v / (Σ Y · cos θ · ω · 2^BE · N²/(t·S)).

                Pairing: with one photo, every --region is a reference in it; with several \
                photos, either one --region per photo (in order) or one --region for every photo. \
                --luminance (or --reflectance/--illuminance) is given once for all references or \
                once per reference, in order.

                Uncertainties are relative standard uncertainties (k = 1), in percent: a meter's \
                ±a % specification is a/√3, a certificate's expanded U (k = 2) is U/2.

                The JSON (schema scenelinear.calibration/1) records the camera (make, model, \
                serial number, lens), each reference's settings, value and residual, K and its \
                uncertainty; `--calibration camera.json` applies it in convert, merge, illuminance and the \
                analysis commands (--units luminance or radiance), refusing another camera body.
                """)

        @Argument(help: "The DNG photos of the references.")
        var photos: [String]

        @OptionGroup var outputSafety: OutputSafety

        @OptionGroup var regionOptions: RegionOptions

        @Option(help: ArgumentHelp("Spot-meter luminance of the region(s), cd/m²: once, or once per reference.", valueName: "cd/m²"))
        var luminance: [Double] = []

        @Option(help: ArgumentHelp("Relative standard uncertainty of each luminance reading (its repeatability), percent (default 1).", valueName: "percent"),
                transform: ArgumentValue.percentage)
        var luminanceUncertainty = 1.0 / 100

        @Option(help: ArgumentHelp("Grey card reflectance (0…1): once, or once per reference; with --illuminance.", valueName: "ρ"))
        var reflectance: [Double] = []

        @Option(help: ArgumentHelp("Illuminance on the grey card, lux: once, or once per reference; with --reflectance.", valueName: "lux"))
        var illuminance: [Double] = []

        @Option(help: ArgumentHelp("Relative standard uncertainty of the card's reflectance, percent (default 1.7: ±3 %, rectangular).", valueName: "percent"),
                transform: ArgumentValue.percentage)
        var reflectanceUncertainty = 1.7 / 100

        @Option(help: ArgumentHelp("Relative standard uncertainty of each illuminance reading, percent (default 1).", valueName: "percent"),
                transform: ArgumentValue.percentage)
        var illuminanceUncertainty = 1.0 / 100

        @Option(help: ArgumentHelp("Vertical illuminance measured at a fisheye camera's lens, lux: once, or once per photo. Each photo's whole image circle is then the reference (E_v = Σ L · cos θ · ω under --projection and --fov), instead of regions.", valueName: "lux"))
        var illuminanceVertical: [Double] = []

        @OptionGroup var fisheye: FisheyeOptions

        @Option(help: ArgumentHelp("The meter's shared calibration uncertainty, percent (default 2.9: ±5 %, DIN 5032-7 class A, rectangular); 0 for exact references.", valueName: "percent"),
                transform: ArgumentValue.percentage)
        var meterUncertainty = 2.9 / 100

        @Option(name: .shortAndLong, help: "The calibration file to write (JSON).")
        var output: String

        @Option(help: ArgumentHelp("The kind of light the references were lit by (e.g. daylight, LED), recorded in the calibration.", valueName: "name"))
        var lightSource: String?

        @Option(help: ArgumentHelp("A correction factor for another kind of light, recorded in the calibration: NAME=F[±u%] (the constant under that light is K × F, e.g. from the CIE spectral-mismatch formula with measured spectra, or from a second calibration under that light: F = K_that / K). Repeatable; measurements pick one with --light-source NAME.", valueName: "NAME=F[±u%]"),
                transform: ArgumentValue.spectralFactor)
        var spectralFactor: [NamedSpectralFactor] = []

        @OptionGroup var demosaicOption: DemosaicOption

        @OptionGroup var lensOptions: LensOptions

        @OptionGroup var style: OutputStyleOptions

        @OptionGroup var limits: LimitOptions

        var regions: [Region] { regionOptions.regions }

        /// The references from the photos, regions and values, as the pairing rules say.
        func references() throws -> [CalibrationReference] {
            guard !photos.isEmpty else { throw ValidationError("give at least one photo") }
            if !illuminanceVertical.isEmpty { return try imageCircleReferences() }
            guard !regions.isEmpty else { throw ValidationError("give at least one --region") }
            var pairs: [(String, Region)] = []
            if photos.count == 1 {
                pairs = regions.map { (photos[0], $0) }
            } else if regions.count == photos.count {
                pairs = Array(zip(photos, regions))
            } else if regions.count == 1 {
                pairs = photos.map { ($0, regions[0]) }
            } else {
                throw ValidationError("\(photos.count) photos and \(regions.count) regions: give one region per photo, or one for all")
            }
            func values(_ v: [Double], _ name: String) throws -> [Double] {
                if v.count == 1 { return Array(repeating: v[0], count: pairs.count) }
                guard v.count == pairs.count else {
                    throw ValidationError("\(name) is given \(v.count) times for \(pairs.count) references: once, or once per reference")
                }
                return v
            }
            let cardGiven = !reflectance.isEmpty || !illuminance.isEmpty
            if cardGiven == !luminance.isEmpty {
                throw ValidationError("give either --luminance (spot meter) or --reflectance with --illuminance (grey card)")
            }
            if !luminance.isEmpty {
                let l = try values(luminance, "--luminance")
                for v in l where !(v > 0 && v.isFinite) { throw ValidationError("--luminance must be positive, not \(v)") }
                return zip(pairs, l).map {
                    CalibrationReference(photo: $0.0, region: $0.1, luminance: $1, relativeUncertainty: luminanceUncertainty, method: "spot meter")
                }
            }
            guard !reflectance.isEmpty, !illuminance.isEmpty else {
                throw ValidationError("a grey card needs both --reflectance and --illuminance")
            }
            let rho = try values(reflectance, "--reflectance"), e = try values(illuminance, "--illuminance")
            for v in rho where !(v > 0 && v <= 1) { throw ValidationError("--reflectance must be in (0, 1], not \(v)") }
            for v in e where !(v > 0 && v.isFinite) { throw ValidationError("--illuminance must be positive, not \(v)") }
            let ur = reflectanceUncertainty, ue = illuminanceUncertainty
            return pairs.indices.map { i in
                CalibrationReference(photo: pairs[i].0, region: pairs[i].1, luminance: rho[i] * e[i] / Double.pi,
                                     relativeUncertainty: (ur * ur + ue * ue).squareRoot(),
                                     method: String(format: "grey card ρ = %.4g, E = %.6g lx (L = ρ·E/π)", rho[i], e[i]))
            }
        }

        /// --illuminance-vertical: each photo's whole image circle is a reference.
        private func imageCircleReferences() throws -> [CalibrationReference] {
            guard regions.isEmpty, luminance.isEmpty, reflectance.isEmpty, illuminance.isEmpty else {
                throw ValidationError("--illuminance-vertical makes each photo's image circle the reference: no --region, --luminance, --reflectance or --illuminance")
            }
            try fisheye.requireGivenCircle("calibrate")
            guard let spec = fisheye.spec else { throw ValidationError("--illuminance-vertical needs --projection (the fisheye's)") }
            let e = illuminanceVertical.count == 1 ? Array(repeating: illuminanceVertical[0], count: photos.count) : illuminanceVertical
            guard e.count == photos.count else {
                throw ValidationError("--illuminance-vertical is given \(illuminanceVertical.count) times for \(photos.count) photos: once, or once per photo")
            }
            for v in e where !(v > 0 && v.isFinite) { throw ValidationError("--illuminance-vertical must be positive, not \(v)") }
            let whole = Region.wholeImage()
            return zip(photos, e).map { photo, lux in
                CalibrationReference(photo: photo, region: whole, luminance: lux / Double.pi, relativeUncertainty: illuminanceUncertainty,
                                     method: String(format: "vertical illuminance E_v = %.6g lx at the lens (L = E_v/π against Σ L cos θ ω/π)", lux),
                                     fisheye: spec)
            }
        }

        func validate() throws {
            _ = try references()
        }

        func run() throws {
            try reportingFailures(json: style.json) {
                var develop = DevelopOptions()
                demosaicOption.apply(to: &develop)
                limits.apply(to: &develop)
                try lensOptions.apply(to: &develop)
                var calibration = try Pipeline.calibrate(try references(), develop: develop, meterRelativeUncertainty: meterUncertainty)
                calibration.lightSource = lightSource
                if !spectralFactor.isEmpty {
                    calibration.spectralFactors = Dictionary(spectralFactor.map { ($0.name, $0.factor) }, uniquingKeysWith: { $1 })
                }
                let data = try calibration.write(to: output)
                if style.json {
                    print(String(decoding: data, as: UTF8.self))
                    return
                }
                print(String(format: "%@: K = %.6g (relative standard uncertainty %.3g %%: fit %.3g %%, meter %.3g %%%@) from %d reference%@",
                             calibration.camera.text, calibration.constant, 100 * calibration.relativeUncertainty,
                             100 * calibration.fitRelativeUncertainty, 100 * calibration.meterRelativeUncertainty,
                             calibration.birgeRatio.map { String(format: ", Birge ratio %.3g", $0) } ?? "",
                             calibration.references.count, calibration.references.count == 1 ? "" : "s"))
                for r in calibration.references {
                    print(String(format: "  %@ %@: %.6g cd/m² (%@), x = %.6g, K = %.6g, residual %+.3g %%", r.file, r.region, r.luminance,
                                 r.method, r.measured, r.constant, 100 * r.residual))
                }
                if !style.quiet { print("wrote \(output)") }
            }
        }
    }
}
