import SceneLinearKit
import CaptureSimulation
import DNGWriter
import Foundation

/// The files of one simulated capture.
public struct SimulationOutput: Sendable {
    public var record: SimulationRecord
    public var capture: SimulatedCapture
    /// Role → path: "dng", "record", "truth-exr", "truth-hdf5", "expected-hdf5".
    public var files: [String: String]
}

extension Pipeline {
    /// A radiance map (`.exr` or `.h5` written by this tool, or a Radiance `.hdr` picture — then
    /// a scene in absolute units, cd/m²) as a scene: read under a pixel
    /// limit that keeps its simulation within `limits` (`SceneLimits.simulationBytesPerPixel`
    /// per pixel), so a map too large to simulate is refused (`.limitExceeded`, exit code 17)
    /// before its pixels are read. Values are divided by the file's exposure factor.
    /// - Throws: the readers' errors.
    public static func radianceMapScene(_ path: String, limits: SceneLimits = SceneLimits()) throws -> RenderedScene {
        let read = ReadLimits(maxPixels: max(1, limits.maxBytes / SceneLimits.simulationBytesPerPixel))
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
        if ext == "hdr" || ext == "pic" {
            // A Radiance picture: W·sr⁻¹·m⁻² → a scene in absolute units (Y in cd/m² = 179 × Radiance's Y).
            let picture = try RadianceFile.read(path, limits: read)
            let values = picture.rec2020.map { Double($0) * Photometric.radianceEfficacy }
            return RenderedScene(name: URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent,
                                 radiance: ImageBuffer(width: picture.width, height: picture.height, channels: 3, samples: values),
                                 unit: .absolute)
        }
        let image = ext == "exr" ? try EXRFile.readSceneLinear(path, limits: read) : try HDF5File.readSceneLinear(path, limits: read)
        let values = image.pixels.samples.map { Double($0) / image.exposure.factor }
        return RenderedScene(name: URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent,
                             radiance: ImageBuffer(width: image.width, height: image.height, channels: 3, samples: values))
    }

    /// The scene `simulate --scene` names: a built-in scene (`BuiltInScene`, rendered at
    /// `width` × `height`), a scene description (.json), or a radiance map (`radianceMapScene`:
    /// .exr, .h5/.hdf5, or a Radiance .hdr/.pic picture).
    /// - Throws: `SceneError` for a name that is none of these; the readers' errors.
    public static func loadScene(_ scene: String, width: Int, height: Int) throws -> RenderedScene {
        if let builtIn = BuiltInScene(rawValue: scene) {
            return try RenderedScene(builtIn.description(width: width, height: height))
        }
        switch URL(fileURLWithPath: scene).pathExtension.lowercased() {
        case "json":
            return try RenderedScene(SceneDescription.read(scene))
        case "exr", "h5", "hdf5", "hdr", "pic":
            return try radianceMapScene(scene)
        default:
            throw SceneError(reason: "\(scene) is neither a built-in scene (\(BuiltInScene.allCases.map(\.rawValue).joined(separator: ", "))) nor a .json, .exr, .h5 or Radiance .hdr file")
        }
    }

    /// The directory a simulation writes into, created (with its parents) when missing.
    /// - Throws: `OutputError` when it cannot be created or is not a directory.
    public static func prepareSimulationDirectory(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                isDirectory = true
            } catch {
                throw OutputError(path: path, reason: "cannot create the directory: \(error.localizedDescription)")
            }
        }
        guard isDirectory.boolValue else { throw OutputError(path: path, reason: "not a directory") }
    }

    /// Simulates `camera` photographing `scene` and writes, into `directory`:
    /// `<name>.dng`; `<name>.truth.exr` / `.truth.h5` — the scene radiance in the decoder's
    /// output units and geometry (linear Rec.2020, 1.0 = sensor white; half the size for
    /// CFA, matching superpixel output); `<name>.expected.h5` — the exact decode of the stored
    /// codes (the noise-free expected values when noise is off); `<name>.truth.json` — the
    /// scene, camera and patches (`SimulationRecord`).
    public static func simulate(scene: RenderedScene, camera: CameraModel, name: String, directory: String) throws -> SimulationOutput {
        let capture = try Simulator.capture(scene, camera: camera)
        let base = (directory.hasSuffix("/") ? String(directory.dropLast()) : directory) + "/" + name
        var files = ["dng": base + ".dng", "record": base + ".truth.json", "truth-exr": base + ".truth.exr",
                     "truth-hdf5": base + ".truth.h5", "expected-hdf5": base + ".expected.h5"]
        try DNGWriter.write(capture.dng, to: files["dng"]!)
        // Everything derived from the file uses the colour matrix as stored (rationals).
        let dng = try DNGFile.open(path: files["dng"]!)
        let color = try ColorTransform.make(metadata: dng.metadata, encoding: .linearRec2020, path: files["dng"]!)
        let sha = SHA256Digest.hex(of: dng.file.data)
        let raw = try dng.mainRawImage()
        func provenance(_ role: String) -> ImageProvenance {
            simulationProvenance(dngPath: files["dng"]!, sha256: sha, ifd: raw.path, color: color, processing: [
                MetadataItem("simulation", .text(role)), MetadataItem("scene", .text(scene.description.name)),
                MetadataItem("radianceToOutput", .number(capture.radianceToOutput)),
                MetadataItem("seed", Int(exactly: camera.seed).map { .integer($0) } ?? .text(String(camera.seed))), MetadataItem("noise", .integer(camera.noise ? 1 : 0)),
            ])
        }
        let truth = capture.groundTruthAtDecodeSize
        // Half floats, unless the scene holds values beyond their range (a sun in view).
        try writeTruth(truth, provenance: provenance("ground truth radiance"), files: files,
                       wide: truth.samples.contains { abs($0) > Double(Float16.greatestFiniteMagnitude) })
        let (expected, mask) = capture.decode(cameraToOutput: color.matrix)
        let expectedImage = SceneLinearImage(pixels: ImageBuffer(width: expected.width, height: expected.height, channels: 3,
                                                                 samples: expected.samples.map { Float($0) }),
                                             clipMask: mask, encoding: .linearRec2020, exposure: .none,
                                             provenance: provenance(camera.noise ? "exact decode of the stored codes" : "noise-free expected decode"))
        try HDF5File.write(expectedImage, to: files["expected-hdf5"]!)
        var relative = files
        for (role, path) in files { relative[role] = URL(fileURLWithPath: path).lastPathComponent }
        let record = SimulationRecord(capture: capture, files: relative)
        try writeRecord(record, to: files["record"]!)
        files["record"] = base + ".truth.json"
        return SimulationOutput(record: record, capture: capture, files: files)
    }
}

/// The files of a simulated bracket.
public struct BracketSimulationOutput: Sendable {
    public var record: SimulationRecord
    /// The frames' DNGs, in the order of the exposures asked for.
    public var frames: [String]
    /// Role → path: "record", "truth-exr", "truth-hdf5".
    public var files: [String: String]
}

extension Pipeline {
    /// Simulates a bracket: `camera` photographs `scene` once for each exposure offset in
    /// `stops` (exposure time × 2^stop; the quantum efficiency of the 0 EV camera kept), each
    /// frame with its own temporal noise (seed + 1000003 · frame; the fixed patterns, PRNU
    /// and DSNU, are drawn from that seed too). Writes `<name>_1.dng` … in the order given,
    /// and one ground truth in the units of the 0 EV exposure: `<name>.truth.exr`,
    /// `<name>.truth.h5` and `<name>.truth.json` (its `bracket` lists the frames).
    /// - Parameter filters: frames (by index) photographed through a filter of this
    ///   transmittance (0 < T ≤ 1): the light reaching the sensor × T, the DNG's metadata
    ///   unchanged (a camera does not know its filter).
    public static func simulateBracket(scene: RenderedScene, camera: CameraModel, stops: [Double], name: String,
                                       directory: String, filters: [Int: Double] = [:]) throws -> BracketSimulationOutput {
        guard !stops.isEmpty, stops.allSatisfy({ $0.isFinite && abs($0) <= 30 }) else {
            throw SceneError(reason: "a bracket needs exposure offsets of at most ±30 stops, got \(stops)")
        }
        for (i, t) in filters where !stops.indices.contains(i) || !(t > 0 && t <= 1) {
            throw SceneError(reason: "a filter of transmittance \(t) for frame \(i + 1): give a frame of the \(stops.count) and a transmittance in (0, 1]")
        }
        var base = camera
        try base.validate()
        base.quantumScale = base.effectiveQuantumScale
        let dir = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        var frames: [String] = [], records: [BracketFrameRecord] = []
        for (i, stop) in stops.enumerated() {
            var c = base
            c.exposureTime = base.exposureTime * pow(2, stop)
            c.seed = base.seed &+ UInt64(i) &* 1_000_003
            if let t = filters[i] { c.quantumScale = base.effectiveQuantumScale * t }
            let capture = try Simulator.capture(scene, camera: c)
            let file = "\(name)_\(i + 1).dng"
            try DNGWriter.write(capture.dng, to: dir + "/" + file)
            frames.append(dir + "/" + file)
            records.append(BracketFrameRecord(file: file, ev: stop, exposureTime: c.exposureTime, seed: c.seed,
                                              radianceToOutput: capture.radianceToOutput, filterTransmittance: filters[i]))
        }
        // The truth in the units of the 0 EV exposure (without noise: only its factor and
        // geometry are used).
        var zero = base
        zero.noise = false
        let capture = try Simulator.capture(scene, camera: zero)
        var files = ["record": dir + "/" + name + ".truth.json", "truth-exr": dir + "/" + name + ".truth.exr",
                     "truth-hdf5": dir + "/" + name + ".truth.h5"]
        let dng = try DNGFile.open(path: frames[0])
        let color = try ColorTransform.make(metadata: dng.metadata, encoding: .linearRec2020, path: frames[0])
        let truth = capture.groundTruthAtDecodeSize
        let provenance = simulationProvenance(dngPath: frames[0], sha256: "", ifd: try dng.mainRawImage().path, color: color, processing: [
            MetadataItem("simulation", .text("ground truth radiance of a bracket, 0 EV units")),
            MetadataItem("scene", .text(scene.description.name)),
            MetadataItem("radianceToOutput", .number(capture.radianceToOutput)),
            MetadataItem("frames", .text(records.map(\.file).joined(separator: ", "))),
        ])
        // 32-bit floats: a bracket's scene is meant to exceed half floats' range.
        try writeTruth(truth, provenance: provenance, files: files, wide: true)
        var relative = files
        for (role, path) in files { relative[role] = URL(fileURLWithPath: path).lastPathComponent }
        relative["record"] = nil
        var record = SimulationRecord(capture: capture, files: relative)
        record.camera = base
        record.bracket = records
        try writeRecord(record, to: files["record"]!)
        files["record"] = dir + "/" + name + ".truth.json"
        return BracketSimulationOutput(record: record, frames: frames, files: files)
    }
}

extension Pipeline {
    /// The provenance of a simulation's truth files: the DNG they belong to (`dngPath`, its
    /// raw IFD and colour transform as stored) and what they hold (`processing`).
    static func simulationProvenance(dngPath: String, sha256: String, ifd: String, color: ColorTransform,
                                     processing: [MetadataItem]) -> ImageProvenance {
        ImageProvenance(sourceFile: URL(fileURLWithPath: dngPath).lastPathComponent, sourceSHA256: sha256,
                        software: SceneLinearVersion.software, sourceIFD: ifd, whiteBalanceSource: color.whiteBalanceSource,
                        whiteXY: [color.whiteXY.x, color.whiteXY.y],
                        cameraNeutral: [color.cameraNeutral.x, color.cameraNeutral.y, color.cameraNeutral.z],
                        cameraToOutput: color.matrix.e, dng: [], processing: processing)
    }

    /// The truth radiance written to `files["truth-exr"]` and `files["truth-hdf5"]`: half
    /// floats, or 32-bit floats when `wide`.
    static func writeTruth(_ truth: ImageBuffer<Double>, provenance: ImageProvenance, files: [String: String], wide: Bool) throws {
        let image = SceneLinearImage(pixels: ImageBuffer(width: truth.width, height: truth.height, channels: 3,
                                                         samples: truth.samples.map { Float($0) }),
                                     clipMask: nil, encoding: .linearRec2020, exposure: .none, provenance: provenance)
        try EXRFile.write(image, to: files["truth-exr"]!, options: EXROptions(pixelType: wide ? .float : .half))
        try HDF5File.write(image, to: files["truth-hdf5"]!, options: HDF5Options(sampleType: wide ? .float32 : .float16))
    }

    /// A simulation record as JSON at `path`, atomically.
    static func writeRecord(_ record: SimulationRecord, to path: String) throws {
        let data = try record.json()
        try AtomicFile.write(data, to: path)
    }
}
