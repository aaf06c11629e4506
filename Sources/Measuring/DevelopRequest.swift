import Engine
import Foundation

/// The unit of the values a request asks for: relative (1.0 = sensor white, times the
/// exposure scaling), luminance (cd/m²) or radiance (W·sr⁻¹·m⁻²).
public enum ValueUnits: String, Sendable, CaseIterable {
    case relative, luminance, radiance
}

/// The output colour spaces by the names the command line and the C interface use.
public enum ColorChoice: String, Sendable, CaseIterable {
    case rec2020
    case acescg
    case aces20651 = "aces2065-1"
    case rec709
    case xyzD65 = "xyz-d65"
    case camera

    public var encoding: ColorEncoding {
        switch self {
        case .rec2020: return .linearRec2020
        case .acescg: return .acesCG
        case .aces20651: return .aces2065
        case .rec709: return .linearRec709
        case .xyzD65: return .xyzD65
        case .camera: return .cameraNative
        }
    }
}

/// A request that cannot be right (absolute units with an exposure scaling, a calibration
/// without absolute units, an unknown option name or value).
public struct RequestError: SceneLinearFailure, Equatable {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var category: FailureCategory { .usage }
    public var description: String { reason }
}

extension DevelopOptions {
    /// Sets the exposure mode and calibration from the units asked for and the relative
    /// scaling `exposure` (`--units`, `--exposure`, `--calibration`, `--filter-factor` and what
    /// goes with them).
    /// - Parameter absoluteByDefault: a measurement whose values must be absolute
    ///   (`illuminance`): relative units are luminance.
    /// - Throws: `RequestError` for absolute units with an exposure scaling; a calibration,
    ///   spectral term or (unless normalised) filter with relative units; a light source
    ///   without a calibration.
    public mutating func setUnits(_ asked: ValueUnits, exposure: ExposureMode, calibration: CameraCalibration?,
                                  allowOtherCamera: Bool = false, settingsUncertainty: Double? = nil,
                                  filter: FilterFactor? = nil, spectral: SpectralTerm? = nil,
                                  absoluteByDefault: Bool = false) throws {
        let units = asked == .relative && absoluteByDefault ? .luminance : asked
        self.filter = filter
        guard units != .relative else {
            if calibration != nil {
                throw RequestError("--calibration gives an absolute scale: use it with --units luminance or --units radiance")
            }
            if spectral != nil {
                throw RequestError("--spectral-uncertainty and --light-source belong to absolute units: use them with --units luminance or --units radiance")
            }
            if let filter, exposure != .normalized {
                throw RequestError("--filter-factor \(filter.text) scales the values to the scene's: use it with --units luminance or radiance, or --exposure normalized (relative values are 1.0 at the sensor's white)")
            }
            self.exposure = exposure
            return
        }
        if exposure != .none {
            throw RequestError("--exposure \(exposure.rawValue) and --units \(units.rawValue) both scale the values: absolute units replace the exposure scaling")
        }
        self.exposure = units == .luminance ? .luminance : .radiance
        self.calibration = calibration
        self.spectral = spectral
        if case .lightSource = spectral, calibration == nil {
            throw RequestError("--light-source picks a spectral factor of a calibration file: give --calibration")
        }
        self.allowOtherCamera = allowOtherCamera
        if let u = settingsUncertainty { self.settingsUncertainty = u }
    }
}
