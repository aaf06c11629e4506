import Foundation
import ImageCore

/// Everything needed to know the truth of a simulated capture, written next to it as
/// `<name>.truth.json`: the scene, the camera, the factor from radiance to output and the
/// patches in output pixel coordinates.
public struct SimulationRecord: Codable, Sendable, Equatable {
    /// "scenelinear.simulation/1".
    public var schema = "scenelinear.simulation/1"
    public var software = SceneLinearVersion.software
    public var scene: SceneDescription
    public var camera: CameraModel
    /// Decoded output = radiance × this (linear Rec.2020, no exposure scaling).
    public var radianceToOutput: Double
    /// NoiseProfile written into the DNG.
    public var noiseProfile: [Double]
    /// LinearizationTable knee and length when companding was used.
    public var compandingKnee: Int?
    public var compandingCodes: Int?
    /// The patches (full-resolution pixel coordinates; halve them for superpixel output).
    public var patches: [Patch]
    /// Files written with it, by role ("dng", "truth-exr", "truth-hdf5", "expected-hdf5").
    public var files: [String: String]
    /// The scene in absolute units (nil in records written before it was kept).
    public var photometry: SimulatedPhotometry?
    /// For a bracket (`simulate --bracket`): its frames. The record's camera, radiance factor,
    /// truth files and photometry are then those of the 0 EV exposure, which need not be a frame.
    public var bracket: [BracketFrameRecord]?

    public init(capture: SimulatedCapture, files: [String: String]) {
        scene = capture.scene.description
        camera = capture.camera
        radianceToOutput = capture.radianceToOutput
        noiseProfile = capture.camera.noiseProfile
        if let bits = capture.camera.companding {
            let curve = CompandingCurve(codeBits: bits, maximum: Int(capture.camera.whiteLevel))
            compandingKnee = curve.knee
            compandingCodes = curve.codes
        }
        patches = capture.scene.patches
        self.files = files
        photometry = SimulatedPhotometry(camera: capture.camera, radianceToOutput: capture.radianceToOutput, patches: patches,
                                         absolute: scene.unit == .absolute, skyIlluminance: capture.scene.skyIlluminance)
    }

    /// Reads a record.
    /// - Throws: `SceneError` when the file is missing or not a simulation record.
    public static func read(_ path: String) throws -> SimulationRecord {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SceneError(reason: "cannot read the simulation record \(path)")
        }
        do {
            let record = try JSONDecoder().decode(SimulationRecord.self, from: data)
            guard record.schema == "scenelinear.simulation/1" else {
                throw SceneError(reason: "\(path) has schema \(record.schema), not scenelinear.simulation/1")
            }
            return record
        } catch let e as SceneError {
            throw e
        } catch {
            throw SceneError(reason: "\(path) is not a simulation record: \(error)")
        }
    }

    /// The record as pretty-printed JSON.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

extension SceneDescription {
    /// Reads a scene description from JSON.
    /// - Throws: `SceneError` naming the file and what is wrong.
    public static func read(_ path: String) throws -> SceneDescription {
        guard let data = FileManager.default.contents(atPath: path) else { throw SceneError(reason: "cannot read \(path)") }
        return try decode(data, path: path)
    }

    /// Decodes the JSON bytes of a scene description read from `path` (named in errors).
    /// The description is not checked here: `SceneLayout` does that.
    /// - Throws: `SceneError` naming `path` when the bytes are not a scene description.
    public static func decode(_ data: Data, path: String) throws -> SceneDescription {
        do {
            return try JSONDecoder().decode(SceneDescription.self, from: data)
        } catch {
            throw SceneError(reason: "\(path) is not a scene description: \(error)")
        }
    }
}

extension CameraModel {
    /// Reads a camera description from JSON (missing fields take their defaults).
    /// - Throws: `SceneError` naming the file and what is wrong.
    public static func read(_ path: String) throws -> CameraModel {
        guard let data = FileManager.default.contents(atPath: path) else { throw SceneError(reason: "cannot read \(path)") }
        do {
            return try JSONDecoder().decode(CameraModel.self, from: data)
        } catch {
            throw SceneError(reason: "\(path) is not a camera description: \(error)")
        }
    }
}

/// One frame of a simulated bracket.
public struct BracketFrameRecord: Codable, Sendable, Equatable {
    /// The DNG's name (in the record's directory).
    public var file: String
    /// Exposure relative to the record's camera, in stops.
    public var ev: Double
    public var exposureTime: Double
    public var seed: UInt64
    /// Decoded output of this frame = radiance × this.
    public var radianceToOutput: Double
    /// The transmittance of the filter in front of the lens for this frame (nil: none); the
    /// frame's `ev` and `exposureTime` are its camera's, without the filter.
    public var filterTransmittance: Double?

    public init(file: String, ev: Double, exposureTime: Double, seed: UInt64, radianceToOutput: Double,
                filterTransmittance: Double? = nil) {
        self.file = file
        self.ev = ev
        self.exposureTime = exposureTime
        self.seed = seed
        self.radianceToOutput = radianceToOutput
        self.filterTransmittance = filterTransmittance
    }
}

/// The simulated scene in absolute units. For a scene in relative units the camera is an
/// ISO 12232 camera whose sensor is `sensitivityOffset` stops off its label: the
/// focal-plane exposure H = q · L · t / N² (q = 0.65) reaches the sensor's white at
/// 78 / (S · 2^offset) lx·s, so an output value x (linear reference value of Y, no exposure
/// scaling) is the luminance L = x · 78 · N² / (q · t · S · 2^offset) cd/m². For a scene in
/// absolute units (cd/m²), the camera's `quantumScale` decides it: L = x / radianceToOutput,
/// and the offset reported is the one that K implies.
public struct SimulatedPhotometry: Codable, Sendable, Equatable {
    /// cd/m² per output value of Y (exposure none).
    public var luminancePerOutput: Double
    /// The true K of L = K · x · 2^(BE + BEO) · N² / (t · S) (BaselineExposure 0 here).
    public var cameraConstant: Double
    public var lensFactor: Double
    public var sensitivityOffset: Double
    /// Each patch's true luminance Y, cd/m² (Rec.2020 weights of its radiance).
    public var patchLuminance: [String: Double]
    /// For a sky scene: the true illuminance on the plane facing the camera, lux.
    public var illuminance: Double?

    public init(camera: CameraModel, radianceToOutput: Double, patches: [Patch], absolute: Bool = false,
                skyIlluminance: Double? = nil) {
        let q = 0.65, saturation = 78.0
        lensFactor = q
        let exposure = camera.fNumber * camera.fNumber / (camera.exposureTime * camera.iso)
        if absolute {
            luminancePerOutput = 1 / radianceToOutput
            cameraConstant = luminancePerOutput / exposure
            sensitivityOffset = log2(saturation / (q * cameraConstant))
        } else {
            sensitivityOffset = camera.sensitivityOffset
            cameraConstant = saturation / (q * pow(2, camera.sensitivityOffset))
            luminancePerOutput = cameraConstant * exposure
        }
        var luminance: [String: Double] = [:]
        for p in patches where p.rgb.count == 3 {
            let y = (SIMD3(p.rgb[0], p.rgb[1], p.rgb[2]) * Rec2020.luminanceWeights).sum()
            luminance[p.name] = y * radianceToOutput * luminancePerOutput
        }
        patchLuminance = luminance
        illuminance = skyIlluminance.map { $0 * radianceToOutput * luminancePerOutput }
    }
}
