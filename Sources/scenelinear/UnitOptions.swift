import ArgumentParser
import Foundation
import SceneLinearKit

/// Units and calibration, shared by convert, merge, illuminance and the analysis commands.
struct UnitOptions: ParsableArguments {
    @Option(help: "Units of the values: relative (the default: 1.0 = sensor white, times --exposure's factor; illuminance takes it, and its own default, as luminance), luminance (cd/m²: Y in cd/m², R, G, B scaled alike) or radiance (W·sr⁻¹·m⁻², Radiance's convention: luminance = 179 × Y). The absolute scale is K · 2^(BaselineExposure + BaselineExposureOffset) · N²/(t · ISO), K from --calibration or else the ISO 12232 estimate 78/0.65 = 120 (±25 %, indicative); the outputs record the scale, how it was obtained and its uncertainty.")
    var units: ValueUnits?

    @Option(help: ArgumentHelp("A camera calibration written by `scenelinear calibrate` (JSON): its constant K and uncertainty give the absolute scale of --units luminance or radiance. Refused for another camera body unless --allow-other-camera.", valueName: "file.json"))
    var calibration: String?

    @Flag(help: "Apply --calibration to a camera other than the one it was made with (make, model or serial number differ).")
    var allowOtherCamera = false

    @Option(help: ArgumentHelp("Relative standard uncertainty (percent) added to a calibration applied at other settings (exposure time, f-number, ISO) than its references', for nominal against actual aperture and shutter (default 6.7).", valueName: "percent"))
    var settingsUncertainty: Double?

    @Option(help: ArgumentHelp("The capture was taken through a filter (an ND filter) of this transmittance T, the share of the light it passes: 0.001, 0.001±3% or 0.001±0.00003, or an optical density ND3, ND3.0±0.02 (T = 10^-D). The values are divided by T and its uncertainty joins the scale's (budget item 'filter'; without ±, a nominal ±20 %). With --units luminance or radiance, or --exposure normalized; recorded in every output.", valueName: "T[±u]"), transform: ArgumentValue.filterFactor)
    var filterFactor: FilterFactor?

    @Option(help: ArgumentHelp("Relative standard uncertainty (percent) for the camera's departure from V(λ) under the scene's light (budget item 'spectral mismatch'): published calibration factors of one camera differ by up to 3.2× between LED, fluorescent, halogen and daylight. Without it (or --light-source) the budget lists the item as not included. Absolute units only.", valueName: "percent"))
    var spectralUncertainty: Double?

    @Option(help: ArgumentHelp("The kind of light of the scene (e.g. LED, daylight): the scale is multiplied by --calibration's spectral factor for it, whose uncertainty is the budget item 'spectral mismatch' (calibrate --spectral-factor records them). Absolute units only.", valueName: "name"))
    var lightSource: String?

    @OptionGroup var lensOptions: LensOptions

    var lens: [String] { lensOptions.lens }

    func validate() throws {
        if let u = spectralUncertainty, !(u >= 0 && u < 100) {
            throw ValidationError("--spectral-uncertainty must be a percentage from 0 to 100")
        }
        if spectralUncertainty != nil && lightSource != nil {
            throw ValidationError("--spectral-uncertainty and --light-source both give the spectral term: give one")
        }
        if let u = settingsUncertainty, !(u >= 0 && u < 1000) {
            throw ValidationError("--settings-uncertainty must be a percentage from 0 to 1000")
        }
    }

    /// Sets `options`' exposure mode and calibration from `--units` (with `exposure`, the
    /// relative scaling asked for).
    /// - Throws: `ValidationError` for absolute units with an exposure scaling; the
    ///   calibration file's `PhotometryError`.
    /// - Parameter absoluteByDefault: a command whose values must be absolute (`illuminance`):
    ///   relative units, given or by default, are luminance.
    func apply(to options: inout DevelopOptions, exposure: ExposureMode, absoluteByDefault: Bool = false) throws {
        let absolute = (units ?? .relative) != .relative || absoluteByDefault
        if !absolute, calibration != nil {
            throw ValidationError("--calibration gives an absolute scale: use it with --units luminance or --units radiance")
        }
        do {
            try lensOptions.apply(to: &options)
            try options.setUnits(units ?? .relative, exposure: exposure, calibration: try calibration.map(CameraCalibration.read),
                                 allowOtherCamera: allowOtherCamera, settingsUncertainty: settingsUncertainty.map { $0 / 100 },
                                 filter: filterFactor,
                                 spectral: spectralUncertainty.map { .stated($0 / 100) } ?? lightSource.map { .lightSource($0) },
                                 absoluteByDefault: absoluteByDefault)
        } catch let e as RequestError {
            throw ValidationError(e.reason)
        }
    }
}

/// `--lens` and `--allow-other-lens`: a lens calibration's vignetting divided out (the unit
/// commands, and `calibrate`, whose references it corrects).
struct LensOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A lens calibration written by `scenelinear calibrate-lens` (JSON): its vignetting is divided out in camera RGB before the colour matrix, and, in absolute units, the budgets gain the item 'vignetting'. Repeat for calibrations of the lens at other apertures: a capture takes the one at its f-number, or the interpolation between the two about it, with the interpolation's uncertainty. Refused for another camera or lens, or an aperture outside the calibrated ones, unless --allow-other-lens.", valueName: "lens.json"))
    var lens: [String] = []

    @Flag(help: "Apply --lens to another camera, lens or aperture than it was made with, or to a file whose own lens-shading opcodes differ from its captures'.")
    var allowOtherLens = false

    /// Sets `options`' lens calibration.
    /// - Throws: the calibration file's `PhotometryError`.
    func apply(to options: inout DevelopOptions) throws {
        options.lens = try LensCalibration.read(lens)
        options.allowOtherLens = allowOtherLens
    }
}
