import DNGContainer
import Foundation
import ImageCore

/// The camera a calibration belongs to.
public struct CameraIdentity: Codable, Sendable, Equatable {
    public var make: String?
    public var model: String?
    public var uniqueCameraModel: String?
    public var serialNumber: String?
    public var lens: String?

    public init(make: String? = nil, model: String? = nil, uniqueCameraModel: String? = nil, serialNumber: String? = nil,
                lens: String? = nil) {
        self.make = make
        self.model = model
        self.uniqueCameraModel = uniqueCameraModel
        self.serialNumber = serialNumber
        self.lens = lens
    }

    public init(_ metadata: DNGMetadata) {
        self.init(make: metadata.make, model: metadata.model, uniqueCameraModel: metadata.uniqueCameraModel,
                  serialNumber: metadata.capture.cameraSerialNumber, lens: metadata.capture.lensModel)
    }

    public var text: String {
        var parts = [make, model].compactMap { $0 }.joined(separator: " ")
        if parts.isEmpty { parts = uniqueCameraModel ?? "unknown camera" }
        if let serialNumber { parts += " #\(serialNumber)" }
        return parts
    }

    /// Why `other` is not this camera body, or nil when it is: make, model (or
    /// UniqueCameraModel) and, when both record one, the serial number must agree.
    public func mismatch(_ other: CameraIdentity) -> String? {
        func norm(_ s: String?) -> String? { s.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } }
        if norm(make) != norm(other.make) || norm(model) != norm(other.model) || norm(uniqueCameraModel) != norm(other.uniqueCameraModel) {
            return "it was made with \(text), not \(other.text)"
        }
        if let a = norm(serialNumber), let b = norm(other.serialNumber), a != b {
            return "it was made with serial number \(serialNumber!), not \(other.serialNumber!)"
        }
        return nil
    }

    /// Why `other` is not this camera body with this lens (LensModel, as recorded), or nil.
    public func bodyOrLensMismatch(_ other: CameraIdentity) -> String? {
        mismatch(other) ?? (lens != other.lens ? "another lens (\(other.lens ?? "none"))" : nil)
    }
}

/// A camera's luminance calibration (`scenelinear calibrate`, schema
/// `scenelinear.calibration/1`): the constant K of `Photometry` fitted to reference
/// luminances, with its standard uncertainty and each reference's residual.
public struct CameraCalibration: Codable, Sendable, Equatable {
    public var schema = "scenelinear.calibration/1"
    public var software = SceneLinearVersion.software
    /// When it was made (ISO 8601).
    public var created: String
    /// The file's name when read (for the record of where a scale came from); not stored.
    public var name: String = ""
    public var camera: CameraIdentity
    /// K, cd·s/m² per unit: L = K · x · 2^(BE + BEO) · N² / (t · S).
    public var constant: Double
    /// Relative standard uncertainty of K (k = 1): the fit's (inflated by the Birge ratio
    /// when above 1) and the meter's shared calibration, in quadrature.
    public var relativeUncertainty: Double
    /// The fit's part alone.
    public var fitRelativeUncertainty: Double
    /// The reference meter's shared calibration uncertainty (does not average down).
    public var meterRelativeUncertainty: Double
    /// √(χ² / (n − 1)) of the references about the fit (nil for one reference).
    public var birgeRatio: Double?
    public var references: [Reference]
    /// The kind of light the references were lit by ("daylight", "LED", ...), when stated.
    public var lightSource: String?
    /// Correction factors for other kinds of light, by name: the constant under that light is
    /// `constant × factor` (the camera's departure from V(λ) differs between spectra), each
    /// with its relative standard uncertainty (`--light-source` picks one; docs/lens.md).
    public var spectralFactors: [String: SpectralFactor]?

    /// A factor of `spectralFactors`.
    public struct SpectralFactor: Codable, Sendable, Equatable {
        public var factor: Double
        public var relativeUncertainty: Double
        /// Where it came from (a measured spectrum and the CIE formula, a second calibration, ...).
        public var source: String?

        public init(factor: Double, relativeUncertainty: Double, source: String? = nil) {
            self.factor = factor
            self.relativeUncertainty = relativeUncertainty
            self.source = source
        }

        /// Reads `NAME=F` or `NAME=F±u%` (u in percent, 0 when not given): the light's name
        /// and its factor; nil when the text is not of that form.
        public static func parse(named text: String) -> (name: String, factor: SpectralFactor)? {
            let parts = text.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty else { return nil }
            var value = parts[1], u = 0.0
            if let range = value.range(of: "±") ?? value.range(of: "+-") {
                let spread = value[range.upperBound...].trimmingCharacters(in: .whitespaces)
                guard spread.hasSuffix("%"), let p = Double(spread.dropLast()), p >= 0, p < 100 else { return nil }
                u = p / 100
                value = String(value[..<range.lowerBound]).trimmingCharacters(in: .whitespaces)
            }
            guard let f = Double(value), f > 0, f.isFinite else { return nil }
            return (parts[0], SpectralFactor(factor: f, relativeUncertainty: u))
        }
    }

    public struct Reference: Codable, Sendable, Equatable {
        /// The photo and the region measured in it.
        public var file: String
        public var region: String
        /// How the reference luminance was obtained: "spot meter", or "grey card ρ = …,
        /// E = … lx" (L = ρ · E / π).
        public var method: String
        /// The reference luminance, cd/m², and its relative standard uncertainty.
        public var luminance: Double
        public var luminanceRelativeUncertainty: Double
        /// The region's mean linear reference value of Y and its relative standard error
        /// (NoiseProfile).
        public var measured: Double
        public var measuredRelativeUncertainty: Double
        public var settings: Photometry.Settings
        /// This reference's own K.
        public var constant: Double
        /// ln(K_reference / K): its residual about the fit.
        public var residual: Double

        public init(file: String, region: String, method: String, luminance: Double, luminanceRelativeUncertainty: Double,
                    measured: Double, measuredRelativeUncertainty: Double, settings: Photometry.Settings) {
            self.file = file
            self.region = region
            self.method = method
            self.luminance = luminance
            self.luminanceRelativeUncertainty = luminanceRelativeUncertainty
            self.measured = measured
            self.measuredRelativeUncertainty = measuredRelativeUncertainty
            self.settings = settings
            constant = luminance / (measured * settings.exposureFactor)
            residual = 0
        }
    }

    enum CodingKeys: String, CodingKey {
        case schema, software, created, camera, constant, relativeUncertainty, fitRelativeUncertainty, meterRelativeUncertainty
        case birgeRatio, references, lightSource, spectralFactors
    }

    /// Fits K to `references` on the log scale, each weighted by 1 / (u_rel(L)² +
    /// u_rel(x)²); the fit's uncertainty (Σw)^−½ is inflated by the Birge ratio when the
    /// references scatter more than their uncertainties say, and the meter's shared
    /// uncertainty added after (it does not average down).
    /// - Throws: `PhotometryError` for no references, or one that is not positive.
    public static func fit(_ references: [Reference], camera: CameraIdentity, meterRelativeUncertainty: Double = 0,
                           created: String) throws -> CameraCalibration {
        guard !references.isEmpty else { throw PhotometryError(path: "", reason: "a calibration needs at least one reference") }
        for r in references where !(r.luminance > 0 && r.measured > 0 && r.constant.isFinite) {
            throw PhotometryError(path: r.file, reason: "reference \(r.region): luminance \(r.luminance) cd/m² and measured value \(r.measured) must both be positive")
        }
        // A reference without any stated uncertainty weighs as one of 0.01 %.
        let weights = references.map { 1 / max(1e-8, $0.luminanceRelativeUncertainty * $0.luminanceRelativeUncertainty
                                                   + $0.measuredRelativeUncertainty * $0.measuredRelativeUncertainty) }
        let total = weights.reduce(0, +)
        let lnK = zip(weights, references).map { $0 * log($1.constant) }.reduce(0, +) / total
        var fitted = references
        var chi2 = 0.0
        for i in fitted.indices {
            fitted[i].residual = log(fitted[i].constant) - lnK
            chi2 += weights[i] * fitted[i].residual * fitted[i].residual
        }
        var u = (1 / total).squareRoot()
        var birge: Double?
        if references.count > 1 {
            let b = (chi2 / Double(references.count - 1)).squareRoot()
            birge = b
            if b > 1 { u *= b }
        }
        return CameraCalibration(created: created, camera: camera, constant: exp(lnK),
                                 relativeUncertainty: (u * u + meterRelativeUncertainty * meterRelativeUncertainty).squareRoot(),
                                 fitRelativeUncertainty: u, meterRelativeUncertainty: meterRelativeUncertainty, birgeRatio: birge,
                                 references: fitted)
    }

    /// Refuses a calibration made with another camera body, unless allowed.
    public func check(camera other: CameraIdentity, path: String, allowOtherCamera: Bool) throws {
        if !allowOtherCamera, let why = camera.mismatch(other) {
            throw PhotometryError(path: path, reason: "the calibration \(name) belongs to another camera: \(why) (--allow-other-camera applies it anyway)",
                                  category: .calibrationMismatch)
        }
    }

    /// Reads a calibration file.
    /// - Throws: `PhotometryError` naming the file and what is wrong.
    public static func read(_ path: String) throws -> CameraCalibration {
        var c = try decode(path)
        guard c.constant > 0, c.constant.isFinite, c.relativeUncertainty >= 0, c.relativeUncertainty.isFinite else {
            throw PhotometryError(path: path, reason: "constant \(c.constant) and relative uncertainty \(c.relativeUncertainty) must be positive and finite", category: .corruptData)
        }
        for (name, f) in c.spectralFactors ?? [:] where !(f.factor > 0 && f.factor.isFinite && f.relativeUncertainty >= 0 && f.relativeUncertainty < 1) {
            throw PhotometryError(path: path, reason: "spectral factor '\(name)': factor \(f.factor) must be positive and its relative uncertainty \(f.relativeUncertainty) in [0, 1)", category: .corruptData)
        }
        c.name = path
        return c
    }
}

extension CameraCalibration: CalibrationFile {
    static var schemaName: String { "scenelinear.calibration/1" }
    static var kind: String { "calibration" }

    /// The calibration as pretty-printed JSON.
    public func json() throws -> Data { try encodedJSON() }

    /// Writes the file (its `json()`) to `path`, atomically; returns what was written.
    /// - Throws: `PhotometryError` (output failure) when it cannot be written; `AtomicFile`'s errors.
    @discardableResult
    public func write(to path: String) throws -> Data { try writeJSON(to: path) }
}
