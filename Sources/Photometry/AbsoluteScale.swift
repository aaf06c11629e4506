import DNGContainer
import Foundation
import ImageCore

/// The photometric chain from a DNG's linear reference values to luminance
/// (docs/photometry.md):
///
///     L = K · x · 2^(BE + BEO) · N² / (t · S)      (cd/m²)
///
/// x the linear reference value of luminance Y (1.0 = sensor white), BE + BEO the DNG's
/// BaselineExposure and BaselineExposureOffset, N the f-number, t the exposure time in
/// seconds, S the ISO speed, and K the camera constant: from a calibration
/// (`CameraCalibration`), or else the ISO 12232 estimate K = 78 / q ≈ 120 — saturation-based
/// speed puts the sensor's white at the focal-plane exposure H = 78 / S lx·s, and
/// H = q · L · t / N² with q = (π/4) · T · v · cos⁴θ ≈ 0.65 (lens transmittance T = 0.9,
/// vignetting factor v = 0.98, θ = 10° off axis).
public enum Photometry {
    /// ISO 12232 saturation-based speed: S_sat = 78 / H_sat (H in lx·s).
    public static let saturationConstant = 78.0
    /// q of H = q · L · t / N² (ISO 12232, with T = 0.9, v = 0.98, θ = 10°).
    public static let lensFactor = 0.65
    /// K of the estimate from the exposure metadata: 78 / 0.65 = 120.
    public static var estimatedConstant: Double { saturationConstant / lensFactor }
    /// Relative standard uncertainty (k = 1, on the log scale) stated for the estimate:
    /// ISO speed tolerance and the difference between the labelled and the sensor's
    /// saturation speed (±½ stop, rectangular: 0.20), q (±10 %, rectangular: 0.058),
    /// aperture (±5 % in diameter, ±10 % in area, rectangular: 0.058) and exposure time
    /// (±6 %, rectangular: 0.035), in quadrature: 0.22, rounded up to 0.25. Indicative only.
    public static let estimateRelativeUncertainty = 0.25
    /// Relative standard uncertainty (k = 1) added when a calibration is applied at other
    /// settings than its references': nominal against actual aperture (±5 % in diameter:
    /// 0.058) and exposure time (±6 %: 0.035), in quadrature. Overridable.
    public static let defaultSettingsUncertainty = 0.067

    /// The exposure settings of a capture that the scale depends on.
    public struct Settings: Codable, Sendable, Equatable {
        public var exposureTime: Double
        public var fNumber: Double
        public var iso: Double
        /// BaselineExposure + BaselineExposureOffset, EV.
        public var baselineExposure: Double

        public init(exposureTime: Double, fNumber: Double, iso: Double, baselineExposure: Double) {
            self.exposureTime = exposureTime
            self.fNumber = fNumber
            self.iso = iso
            self.baselineExposure = baselineExposure
        }

        /// 2^(BE + BEO) · N² / (t · S): luminance per linear reference value per unit of K.
        public var exposureFactor: Double { pow(2, baselineExposure) * fNumber * fNumber / (exposureTime * iso) }

        /// The settings of a DNG, or an error naming what it lacks.
        public static func of(_ metadata: DNGMetadata, path: String) throws -> Settings {
            let c = metadata.capture
            var missing: [String] = []
            if !((c.exposureTime ?? 0) > 0) { missing.append("ExposureTime") }
            if !((c.fNumber ?? 0) > 0) { missing.append("FNumber") }
            if !((c.iso ?? 0) > 0) { missing.append("ISO") }
            guard missing.isEmpty, let t = c.exposureTime, let n = c.fNumber, let s = c.iso else {
                throw PhotometryError(path: path, reason: "absolute units need the exposure settings, and the file lacks \(missing.joined(separator: ", "))")
            }
            return Settings(exposureTime: t, fNumber: n, iso: s, baselineExposure: metadata.baselineExposure + metadata.baselineExposureOffset)
        }

        /// Whether `other` was taken at the same nominal settings (to 0.1 %).
        public func sameNominal(as other: Settings) -> Bool {
            func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) <= 1e-3 * max(abs(a), abs(b)) }
            return close(exposureTime, other.exposureTime) && close(fNumber, other.fNumber) && close(iso, other.iso)
                && abs(baselineExposure - other.baselineExposure) < 1e-6
        }

        public var text: String {
            String(format: "t = %.6g s, N = %.4g, ISO %.6g, BE %+.3g EV", exposureTime, fNumber, iso, baselineExposure)
        }
    }

    /// The luminance scale of a capture: cd/m² per linear reference value of Y, its
    /// relative standard uncertainty, and how it was obtained.
    /// - Parameters:
    ///   - calibration: the camera's calibration, or nil for the estimate from the metadata.
    ///   - allowOtherCamera: apply a calibration made with another camera body.
    ///   - settingsUncertainty: added (in quadrature) when the capture's nominal settings
    ///     differ from every reference of the calibration.
    /// - Throws: `PhotometryError` when settings are missing or the calibration belongs to
    ///   another camera.
    public static func luminanceScale(_ metadata: DNGMetadata, path: String, calibration: CameraCalibration?,
                                      allowOtherCamera: Bool = false,
                                      settingsUncertainty: Double = defaultSettingsUncertainty) throws -> ExposureScaling {
        let settings = try Settings.of(metadata, path: path)
        guard let calibration else {
            let k = estimatedConstant
            return ExposureScaling(mode: .luminance, factor: k * settings.exposureFactor,
                                   source: String(format: "exposure metadata (ISO 12232 saturation speed: K = 78/q = %.4g, q = %.2f; %@); indicative", k, lensFactor, settings.text),
                                   relativeUncertainty: estimateRelativeUncertainty,
                                   uncertaintyParts: [.init(name: "exposure metadata", relative: estimateRelativeUncertainty,
                                                            note: "the estimate K = 78/q: ISO speed against the sensor (±½ stop), q (±10 %), aperture (±10 % in area), shutter (±6 %), rectangular, in quadrature, rounded up")])
        }
        try calibration.check(camera: CameraIdentity(metadata), path: path, allowOtherCamera: allowOtherCamera)
        var u = calibration.relativeUncertainty
        var source = String(format: "calibration %@ (K = %.6g ± %.2g %%; %@)", calibration.name, calibration.constant, 100 * u, settings.text)
        var parts: [ExposureScaling.UncertaintyPart] = [
            .init(name: "calibration", relative: u,
                  note: String(format: "the constant K of %@: its fit (%.3g %%) and the meter's calibration (%.3g %%)", calibration.name,
                               100 * calibration.fitRelativeUncertainty, 100 * calibration.meterRelativeUncertainty))]
        if !calibration.references.contains(where: { $0.settings.sameNominal(as: settings) }) {
            u = (u * u + settingsUncertainty * settingsUncertainty).squareRoot()
            source += String(format: "; other settings than the calibration's: + %.2g %% for nominal against actual aperture and time", 100 * settingsUncertainty)
            parts.append(.init(name: "exposure settings", relative: settingsUncertainty,
                               note: "nominal against actual aperture and shutter, at other settings than the calibration's (--settings-uncertainty)"))
        }
        return ExposureScaling(mode: .luminance, factor: calibration.constant * settings.exposureFactor, source: source,
                               relativeUncertainty: u, uncertaintyParts: parts)
    }
}

/// The camera's departure from V(λ) under the scene's light (docs/lens.md): a stated
/// relative uncertainty, or a factor of the calibration for a named kind of light.
public enum SpectralTerm: Sendable, Equatable {
    /// A relative standard uncertainty (k = 1) for the spectral mismatch.
    case stated(Double)
    /// The calibration's factor for this light source (`CameraCalibration.spectralFactors`).
    case lightSource(String)
}

extension ExposureScaling {
    /// The scale with the spectral-mismatch item (`spectral mismatch`): `.stated(u)` adds u;
    /// `.lightSource(name)` multiplies by the calibration's factor for that light and adds its
    /// uncertainty.
    /// - Throws: `PhotometryError` (usage) for a light source without a calibration, or one
    ///   the calibration has no factor for.
    public func with(_ term: SpectralTerm, calibration: CameraCalibration?, path: String) throws -> ExposureScaling {
        var s = self, part: UncertaintyPart
        switch term {
        case .stated(let u):
            part = .init(name: "spectral mismatch", relative: u,
                         note: "the camera's departure from V(λ) under the scene's light, as stated (--spectral-uncertainty)")
        case .lightSource(let name):
            guard let calibration else {
                throw PhotometryError(path: path, reason: "--light-source \(name) picks a factor of a calibration file: give --calibration", category: .usage)
            }
            let known = (calibration.spectralFactors ?? [:]).keys.sorted()
            guard let f = calibration.spectralFactors?[name] else {
                throw PhotometryError(path: path, reason: "the calibration \(calibration.name) has no spectral factor for '\(name)'"
                                      + (known.isEmpty ? " (it has none)" : " (it has: \(known.joined(separator: ", ")))"), category: .usage)
            }
            s.factor *= f.factor
            part = .init(name: "spectral mismatch",
                         relative: f.relativeUncertainty,
                         note: String(format: "the calibration's factor %.6g for %@ (made under %@)%@", f.factor, name,
                                      calibration.lightSource ?? "an unstated light", f.source.map { "; " + $0 } ?? ""))
            s.source = (source.map { $0 + "; " } ?? "") + String(format: "× %.6g for %@ light", f.factor, name)
        }
        return s.appending(part)
    }
}

/// Absolute units that cannot be worked out for a file.
public struct PhotometryError: SceneLinearFailure, Equatable {
    public let path: String
    public var file: String? { path }
    public let reason: String
    public let category: FailureCategory

    public init(path: String, reason: String, category: FailureCategory = .unsupportedFeature) {
        self.path = path
        self.reason = reason
        self.category = category
    }

    public var description: String { path.isEmpty ? reason : "\(path): \(reason)" }
}
