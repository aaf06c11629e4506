import CaptureSimulation
import Foundation
import SceneLinearKit

/// A simulated day of a study (docs/studies.md#a-simulated-day): a 180° equidistant fisheye
/// looking at the zenith photographs a CIE overcast sky and a sun that moves by
/// `SolarPosition` for the site and the sets' times, one bracket per set, with capture times
/// and their UTC offset in the DNGs. The image's top is north and east is on the left, as the
/// sky is seen from below. The sun's radiance grows with its elevation, 40 · e^(3 sin h) times
/// the exposure's white level, so that it is caught by the shortest frame when low and clipped in
/// every frame of a −8 EV bracket above about 45°; the sky's zenith radiance is
/// (0.3 + 0.7 sin h) × (0.45, 0.5, 0.6). A set listed in `clouds` has a dark cloud over the sun's
/// side of the sky in its longest frame only (frames that disagree).
public struct DayPlan: Sendable, Codable, Equatable {
    public var site: Site
    /// The local date (YYYY-MM-DD), the UTC offset of the camera's clock (±HH:MM) and the
    /// local time of the first set (HH:MM).
    public var date: String
    public var utcOffset: String
    public var firstSet: String
    /// Minutes from one set to the next, and the number of sets.
    public var interval: Double
    public var sets: Int
    public var stops: [Double] = [-8, -4, 0]
    /// Image width and height, pixels.
    public var size = 160
    /// The sun's angular radius, degrees (larger than the real 0.27° so that a small image
    /// resolves it).
    public var sunRadius = 3.0
    /// Sets (from 0) whose longest frame sees a cloud the others do not.
    public var clouds: [Int] = []
    public var seed: UInt64 = 1

    public init(site: Site, date: String, utcOffset: String, firstSet: String, interval: Double, sets: Int) {
        self.site = site
        self.date = date
        self.utcOffset = utcOffset
        self.firstSet = firstSet
        self.interval = interval
        self.sets = sets
    }

    /// What is wrong with the plan, if anything.
    public var problem: String? {
        if parsedDate == nil { return "the date '\(date)' is not YYYY-MM-DD" }
        if UTCTime.parseOffset(utcOffset) == nil { return "the UTC offset '\(utcOffset)' is not ±HH:MM" }
        if parsedFirst == nil { return "the first set's time '\(firstSet)' is not HH:MM" }
        if !(interval >= 1 && interval <= 720) { return "the interval must lie between 1 and 720 minutes" }
        if sets < 1 || sets > 2000 { return "the number of sets must lie between 1 and 2000" }
        if stops.count < 2 { return "a set needs at least two exposures" }
        if size < 32 || size > 4096 { return "the image size must lie between 32 and 4096 pixels" }
        if !(sunRadius > 0 && sunRadius <= 10) { return "the sun's radius must lie in (0, 10] degrees" }
        if let bad = clouds.first(where: { $0 < 0 || $0 >= sets }) { return "cloud set \(bad + 1) is not one of the \(sets) sets" }
        return nil
    }

    var parsedDate: (Int, Int, Int)? {
        let p = date.split(separator: "-").compactMap { Int($0) }
        guard p.count == 3, (1...12).contains(p[1]), (1...31).contains(p[2]) else { return nil }
        return (p[0], p[1], p[2])
    }

    var parsedFirst: (Int, Int)? {
        let p = firstSet.split(separator: ":").compactMap { Int($0) }
        guard p.count == 2, (0..<24).contains(p[0]), (0..<60).contains(p[1]) else { return nil }
        return (p[0], p[1])
    }

    /// The start of set k, UTC.
    func start(_ k: Int) -> UTCTime {
        let (y, m, d) = parsedDate!, (h, mi) = parsedFirst!
        let first = UTCTime(year: y, month: m, day: d, hour: h, minute: mi, offsetMinutes: UTCTime.parseOffset(utcOffset)!)
        return UTCTime(seconds: first.seconds + Double(k) * interval * 60)
    }
}

/// The truth of one simulated set (a line of `<name>.day.jsonl`).
public struct DaySetTruth: Sendable, Codable, Equatable {
    public var set: Int
    public var files: [String]
    /// The middle of the set's exposures, UTC ISO 8601.
    public var mid: String
    /// The sun's apparent elevation and azimuth (east of north), degrees, at `mid`.
    public var sunElevation: Double, sunAzimuth: Double
    /// E_v on the plane facing the zenith (lux), DGP, DGI and UGR of the truth luminance map
    /// (`GlareEvaluation` on the noise-free rendering in cd/m², summed over its pixels as a
    /// measurement sums them).
    public var illuminance: Double
    public var dgp: Double, dgi: Double, ugr: Double?
    /// The sun's radiance over the shortest frame's white level: above 1, clipped in every frame.
    public var sunOverWhite: Double?
    public var cloud: Bool
}

extension Pipeline {
    /// Simulates the day of `plan` into `directory`: `<name>-<k>_<i>.dng` per set k (from 1)
    /// and frame i, `<name>.day.jsonl` with each set's truth, and `<name>.camera.json`: the
    /// simulation's own camera constant as a calibration (`calibrationUncertainty` stated), so
    /// that a study's intervals can be checked against the truth without a calibration's own
    /// error; returns the truths.
    public static func simulateDay(_ plan: DayPlan, camera base: CameraModel = CameraModel(), name: String, directory: String,
                                   glare: GlareRequest = GlareRequest(), calibrationUncertainty: Double = 0.002) throws -> [DaySetTruth] {
        if let problem = plan.problem { throw SceneError(reason: problem) }
        let dir = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var truths: [DaySetTruth] = []
        for k in 0..<plan.sets {
            truths.append(try simulateDaySet(plan, k, camera: base, name: name, directory: dir, glare: glare))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let lines = try truths.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        try AtomicFile.write(Data((lines.joined(separator: "\n") + "\n").utf8), to: "\(dir)/\(name).day.jsonl")
        let first = "\(dir)/\(truths[0].files[0])"
        let record = try SimulationRecord.read("\(dir)/\(name)-001.truth.json")
        _ = try simulationCalibration(frame: first, cameraConstant: record.photometry!.cameraConstant, relativeUncertainty: calibrationUncertainty)
            .write(to: "\(dir)/\(name).camera.json")
        return truths
    }

    static func simulateDaySet(_ plan: DayPlan, _ k: Int, camera base: CameraModel, name: String, directory dir: String,
                               glare: GlareRequest) throws -> DaySetTruth {
        // Every frame of the set at its start (the brackets last well under a second).
        let start = plan.start(k), offset = UTCTime.parseOffset(plan.utcOffset)!
        let sun = SolarPosition(at: start, site: plan.site)
        let h = sun.elevation * .pi / 180, up = max(0, sin(h))
        let sunOverWhite = sun.elevation > 0 ? 40 * exp(3 * up) : nil
        let scene = try RenderedScene(daySky(plan, elevation: sun.elevation, azimuth: sun.azimuth, sunRadiance: sunOverWhite))
        var camera = base
        camera.seed = plan.seed &+ UInt64(k) &* 7919
        camera.captureOffset = plan.utcOffset
        let local = UTCTime(seconds: start.seconds + Double(offset * 60)).iso8601
        camera.captureTime = String(local.prefix(19)).replacingOccurrences(of: "-", with: ":").replacingOccurrences(of: "T", with: " ")
        let setName = "\(name)-\(String(format: "%03d", k + 1))"
        let out = try simulateDayBracket(scene, plan: plan, camera: camera, name: setName, directory: dir)
        if plan.clouds.contains(k) {
            var cloudy = scene.description
            let a = (90 + sun.azimuth) * .pi / 180
            cloudy.elements.append(.init(type: "disk", name: "cloud", center: [0.5 + 0.25 * cos(a), 0.5 - 0.25 * sin(a)], radius: 0.22,
                                         rgb: [0.05, 0.05, 0.05]))
            let other = dir + "/.cloud-\(setName)"
            defer { try? FileManager.default.removeItem(atPath: other) }
            let clouded = try simulateDayBracket(try RenderedScene(cloudy), plan: plan, camera: camera, name: setName, directory: other)
            let last = out.frames.count - 1
            guard rename(clouded.frames[last], out.frames[last]) == 0 else {
                throw OutputError(path: out.frames[last], failed: "cannot replace it by the clouded frame", systemError: errno)
            }
        }
        let photometry = out.record.photometry!
        let truthGlare = try truthGlare(out.files["truth-exr"]!, luminancePerOutput: photometry.luminancePerOutput, request: glare)
        return DaySetTruth(set: k + 1, files: out.frames.map { URL(fileURLWithPath: $0).lastPathComponent }, mid: start.iso8601,
                           sunElevation: sun.elevation, sunAzimuth: sun.azimuth, illuminance: truthGlare.illuminance.value,
                           dgp: truthGlare.daylightGlareProbability.value, dgi: truthGlare.daylightGlareIndex.value,
                           ugr: truthGlare.unifiedGlareRating?.value, sunOverWhite: sunOverWhite.map { $0 * pow(2, plan.stops.min()!) }, cloud: plan.clouds.contains(k))
    }

    /// The bracket of one set (every frame with the set's capture time, as a camera's bracket
    /// within one second records it).
    static func simulateDayBracket(_ scene: RenderedScene, plan: DayPlan, camera: CameraModel, name: String,
                                   directory: String) throws -> BracketSimulationOutput {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try simulateBracket(scene: scene, camera: camera, stops: plan.stops, name: name, directory: directory)
    }

    /// The day's sky for the sun at `elevation`, `azimuth` (degrees; north up, east left): the
    /// overcast dome, then an aureole of eight rings about the sun, each the sun's radius wider
    /// than the one inside it and half its radiance (so that every pair of neighbouring frames
    /// shares pixels whose ratio can be checked), then the sun's disc.
    static func daySky(_ plan: DayPlan, elevation: Double, azimuth: Double, sunRadiance: Double?) -> SceneDescription {
        let up = max(0, sin(elevation * .pi / 180)), s = 0.3 + 0.7 * up
        var elements: [SceneDescription.Element] = [
            .init(type: "sky", name: "sky", rgb: [0.45 * s, 0.5 * s, 0.6 * s], projection: "equidistant", fov: 180, model: "cie-overcast"),
        ]
        if let m = sunRadiance {
            // Equidistant, 180° across the height: an angle of α from the zenith lies α/180 of the height from the centre.
            let r = (90 - elevation) / 180, a = (90 + azimuth) * .pi / 180
            let centre = [0.5 + r * cos(a), 0.5 - r * sin(a)]
            for k in stride(from: 8, through: 1, by: -1) {
                let v = m * pow(0.5, Double(k))
                elements.append(.init(type: "disk", name: "aureole-\(k)", center: centre, radius: plan.sunRadius * Double(1 + k) / 180,
                                      rgb: [v, 0.97 * v, 0.9 * v]))
            }
            elements.append(.init(type: "disk", name: "sun", center: centre, radius: plan.sunRadius / 180, rgb: [m, 0.96 * m, 0.87 * m]))
        }
        return SceneDescription(name: "day", width: plan.size, height: plan.size, background: [0, 0, 0], elements: elements)
    }

    /// The simulation's camera constant as a calibration of the camera of `frame`.
    public static func simulationCalibration(frame: String, cameraConstant k: Double, relativeUncertainty: Double) throws -> CameraCalibration {
        let dng = try DNGFile.open(path: frame)
        let settings = try Photometry.Settings.of(dng.metadata, path: dng.path)
        let reference = CameraCalibration.Reference(file: "simulation", region: "-", method: "the simulation's constant",
                                                    luminance: k * settings.exposureFactor, luminanceRelativeUncertainty: relativeUncertainty,
                                                    measured: 1, measuredRelativeUncertainty: 0, settings: settings)
        return try CameraCalibration.fit([reference], camera: CameraIdentity(dng.metadata), created: "simulation")
    }

    /// DGP, DGI and UGR of a truth radiance map (0 EV units) in cd/m², without noise.
    static func truthGlare(_ path: String, luminancePerOutput: Double, request: GlareRequest) throws -> GlareResult {
        var image = try EXRFile.readSceneLinear(path)
        image.pixels.samples = image.pixels.samples.map { Float(Double($0) * luminancePerOutput) }
        image.exposure = ExposureScaling(mode: .luminance, factor: 1, source: "the simulation's truth")
        image.clipMask = [UInt8](repeating: 0, count: image.width * image.height)
        let lens = FisheyeLens(projection: .equidistant, fieldOfView: 180, width: image.width, height: image.height)
        var quiet = request
        quiet.draws = 40
        let input = AnalysisInput(path: path, image: image, noise: nil)
        return try GlareEvaluation.evaluate(input, geometry: FisheyeGeometry(lens: lens, width: image.width, height: image.height),
                                            scaleRelativeUncertainty: 0, request: quiet)
    }
}
