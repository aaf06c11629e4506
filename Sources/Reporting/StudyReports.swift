import Measuring
import Analysis
import DNGContainer
import Engine
import ImageCore
import Photometry
import Foundation
import Studies

/// The sun's position at moments given as times or as the capture times of DNG files: what
/// `scenelinear sun` prints (schema "scenelinear.sun/1").
public struct SunReport: Encodable, Sendable {
    public struct Entry: Encodable, Sendable {
        /// The file whose capture time this is, or nil for a time given directly.
        public var file: String?
        public var time: String
        /// Where: `--site`, or the file's GPS position.
        public var site: Site
        /// "site" (given) or "gps" (the file's).
        public var siteSource: String
        public var zenith: Double, azimuth: Double, elevation: Double
        public var refraction: Double, declination: Double, equationOfTime: Double, distance: Double
    }

    public var schema = "scenelinear.sun/1"
    /// The site given (`--site`); nil when every position comes from its file's GPS tags.
    public var site: Site?
    public var pressure: Double?
    public var temperature: Double
    public var algorithm = "NOAA solar calculator (Meeus), topocentric parallax, NREL SPA refraction; within 0.02° of NREL SPA over 1900-2100"
    public var positions: [Entry] = []

    public init(site: Site?, pressure: Double?, temperature: Double) {
        self.site = site
        self.pressure = pressure
        self.temperature = temperature
    }

    /// The sun at `time`, from `at` (a file's GPS position) or else the site given.
    public mutating func add(_ time: UTCTime, file: String? = nil, at position: Site? = nil) {
        guard let place = position ?? site else { return }
        let p = SolarPosition(at: time, site: place, pressure: pressure, temperature: temperature)
        positions.append(Entry(file: file, time: time.iso8601, site: place, siteSource: position == nil ? "site" : "gps",
                               zenith: p.zenith, azimuth: p.azimuth, elevation: p.elevation,
                               refraction: p.refraction, declination: p.declination, equationOfTime: p.equationOfTime, distance: p.distance))
    }

    public var text: String {
        positions.map { e in
            String(format: "%@  elevation %8.4f°  azimuth %8.4f° (east of north)  zenith %8.4f°", e.time, e.elevation, e.azimuth, e.zenith)
                + (e.file.map { "  \($0)" } ?? "")
                + (e.siteSource == "gps" ? String(format: " (GPS %.5f, %.5f)", e.site.latitude, e.site.longitude) : "")
        }.joined(separator: "\n")
    }

    public func json() throws -> String { try ReportJSON.encode(self) }
}

/// The capture moment of a DNG: DateTimeOriginal with SubSecTimeOriginal, at
/// OffsetTimeOriginal (or `fallbackOffset`, minutes east of UTC, when the file has none); and
/// where, from its GPS tags.
public enum CaptureMoment {
    public static func of(path: String, fallbackOffset: Int?) throws -> UTCTime {
        try of(DNGFile.open(path: path).metadata.capture, path: path, fallbackOffset: fallbackOffset)
    }

    /// The moment and the GPS position (nil when the file records none).
    public static func withPosition(path: String, fallbackOffset: Int?) throws -> (time: UTCTime, site: Site?) {
        let capture = try DNGFile.open(path: path).metadata.capture
        return (try of(capture, path: path, fallbackOffset: fallbackOffset), capture.gps.map(Site.init))
    }

    static func of(_ capture: CaptureSettings, path: String, fallbackOffset: Int?) throws -> UTCTime {
        guard let date = capture.dateTimeOriginal else {
            throw PhotometryError(path: path, reason: "the file records no capture time (DateTimeOriginal)", category: .unsupportedFeature)
        }
        switch UTCTime.parse(exif: date, subSeconds: capture.subSecTimeOriginal, offset: capture.offsetTimeOriginal, fallbackOffset: fallbackOffset) {
        case .success(let t): return t
        case .failure(let e): throw PhotometryError(path: path, reason: e.description, category: .unsupportedFeature)
        }
    }
}

extension Site {
    /// A GPS position as a site (no altitude recorded: sea level).
    public init(_ gps: GPSPosition) {
        self.init(latitude: gps.latitude, longitude: gps.longitude, elevation: gps.altitude ?? 0)
    }
}

/// The frames of a study read for grouping (`BracketGrouping`): each DNG's capture time,
/// exposure, body, lens and size; a file that cannot be read fails the whole listing, naming it.
public enum SequenceFrames {
    public static func read(_ paths: [String], fallbackOffset: Int?) throws -> [SequenceFrame] {
        let files = try AnalysisInput.expand(paths).filter { URL(fileURLWithPath: $0).pathExtension.lowercased() == "dng" }
        guard !files.isEmpty else { throw AnalysisError(reason: "\(paths.joined(separator: ", ")): no .dng files") }
        return try files.map { path in
            let dng = try DNGFile.open(path: path)
            let m = dng.metadata, c = m.capture
            let time = try? CaptureMoment.of(c, path: path, fallbackOffset: fallbackOffset)
            let main = (try? dng.mainRawImage()) ?? dng.images.first
            let camera = [m.make, m.uniqueCameraModel ?? m.model, c.cameraSerialNumber].compactMap { $0 }.joined(separator: " ")
            return SequenceFrame(path: path, time: time, exposureTime: c.exposureTime, fNumber: c.fNumber, iso: c.iso,
                                 camera: camera, lens: c.lensModel, width: main?.width ?? 0, height: main?.height ?? 0,
                                 site: c.gps.map(Site.init))
        }
    }
}

/// A study's grouping as `scenelinear sequence` prints and writes it (schema "scenelinear.sequence/1").
public struct SequenceReport: Encodable, Sendable {
    public var schema = "scenelinear.sequence/1"
    public var software = SceneLinearVersion.software
    public var grouping: BracketGrouping

    public init(_ grouping: BracketGrouping) { self.grouping = grouping }

    enum CodingKeys: String, CodingKey { case schema, software, rule, sets, unassigned }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(software, forKey: .software)
        try c.encode(grouping.rule, forKey: .rule)
        try c.encode(grouping.sets.map(SetEntry.init), forKey: .sets)
        try c.encode(grouping.unassigned, forKey: .unassigned)
    }

    /// A set with its times as ISO 8601 text.
    struct SetEntry: Encodable {
        var id: String, start: String, end: String, files: [String], relativeStops: [Double]
        init(_ s: BracketGrouping.Set) {
            (id, start, end, files, relativeStops) = (s.id, s.start.iso8601, s.end.iso8601, s.files, s.relativeStops.map { ($0 * 1000).rounded() / 1000 })
        }
    }

    public var text: String {
        var lines = grouping.sets.map { s in
            "\(s.id)  \(s.start.iso8601) … \(s.end.iso8601)  \(s.files.count) frames: "
                + zip(s.files, s.relativeStops).map { "\(URL(fileURLWithPath: $0).lastPathComponent) (\(String(format: "%+.2f", $1)) EV)" }.joined(separator: ", ")
        }
        lines.append("\(grouping.sets.count) sets, \(grouping.unassigned.count) frames in none")
        lines += grouping.unassigned.map { "  unassigned: \($0.file): \($0.reason)" }
        return lines.joined(separator: "\n")
    }

    public func json() throws -> String { try ReportJSON.encode(self) }

    /// The document written atomically to `path` (the study's record of its grouping).
    public func write(to path: String) throws {
        try AtomicFile.write(Data((try json() + "\n").utf8), to: path)
    }
}
