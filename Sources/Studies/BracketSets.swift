import Foundation

/// One capture as the grouping sees it: what the file records of its time and settings.
public struct SequenceFrame: Sendable, Equatable, Codable {
    public var path: String
    /// The capture's start in UTC; nil when the file records no usable time.
    public var time: UTCTime?
    /// Seconds; nil when unknown.
    public var exposureTime: Double?
    public var fNumber: Double?
    public var iso: Double?
    /// The body (make, model and serial) and the lens, as recorded; frames of one set share them.
    public var camera: String
    public var lens: String?
    public var width: Int, height: Int
    /// Where, from the file's GPS tags; nil when it records none.
    public var site: Site?

    public init(path: String, time: UTCTime?, exposureTime: Double?, fNumber: Double?, iso: Double?,
                camera: String, lens: String?, width: Int, height: Int, site: Site? = nil) {
        self.site = site
        self.path = path
        self.time = time
        self.exposureTime = exposureTime
        self.fNumber = fNumber
        self.iso = iso
        self.camera = camera
        self.lens = lens
        self.width = width
        self.height = height
    }

    /// log₂ of the exposure's H ∝ t · S (the aperture is one per set).
    var stops: Double? {
        guard let t = exposureTime, t > 0 else { return nil }
        return log2(t * (iso ?? 100))
    }

    /// What must be equal within a set: body, lens, aperture (to ⅙ stop) and image size.
    func sameRig(_ other: SequenceFrame) -> String? {
        if camera != other.camera { return "another camera (\(other.camera))" }
        if lens != other.lens { return "another lens (\(other.lens ?? "none recorded"))" }
        if width != other.width || height != other.height { return "another size (\(other.width)×\(other.height))" }
        if let a = fNumber, let b = other.fNumber, abs(2 * log2(a / b)) > 1.0 / 6 { return String(format: "another aperture (f/%.3g)", b) }
        return nil
    }
}

/// How frames are grouped into bracket sets (docs/studies.md#bracket-sets).
public struct GroupingRule: Sendable, Equatable, Codable {
    /// The largest pause, in seconds, from the end of one exposure (its start + its exposure
    /// time) to the start of the next within a set.
    public var gap: Double = 2
    /// The frames a complete set has; nil: the most common size among the sets found.
    public var framesPerSet: Int?

    public init(gap: Double = 2, framesPerSet: Int? = nil) {
        self.gap = gap
        self.framesPerSet = framesPerSet
    }
}

/// Bracket sets found among frames, and the frames that fit none, each with its reason: what
/// a study records as its grouping.
public struct BracketGrouping: Sendable, Equatable, Codable {
    public struct Set: Sendable, Equatable, Codable {
        /// "set-0001", … in time order.
        public var id: String
        /// The first frame's start and the last frame's end (start + exposure time), UTC.
        public var start: UTCTime, end: UTCTime
        /// In capture order.
        public var files: [String]
        /// Each frame's exposure relative to the set's longest, in stops (0 for the longest).
        public var relativeStops: [Double]
    }

    public struct Left: Sendable, Equatable, Codable {
        public var file: String
        public var reason: String

        public init(file: String, reason: String) {
            self.file = file
            self.reason = reason
        }
    }

    public var rule: GroupingRule
    public var sets: [Set] = []
    /// Frames in no set: no capture time, no exposure time, or a set too small to be a bracket.
    public var unassigned: [Left] = []

    /// Groups `frames`: sorted by capture time (then name), a frame starts a new set when the
    /// pause since the previous frame's end exceeds `rule.gap`, when its camera, lens, size or
    /// aperture differs, or when its exposure repeats one already in the set (the pattern
    /// starts again). A set of another size than `rule.framesPerSet` (or the most common set
    /// size) is reported, its frames unassigned: a missing or stray frame is never merged into
    /// a wrong set.
    public init(frames: [SequenceFrame], rule: GroupingRule = GroupingRule()) {
        self.rule = rule
        var timed: [SequenceFrame] = []
        for f in frames {
            if f.time == nil {
                unassigned.append(Left(file: f.path, reason: "no capture time (DateTimeOriginal with its UTC offset)"))
            } else if f.stops == nil {
                unassigned.append(Left(file: f.path, reason: "no exposure time"))
            } else {
                timed.append(f)
            }
        }
        timed.sort { ($0.time!, $0.path) < ($1.time!, $1.path) }
        var groups: [[SequenceFrame]] = []
        var reasons: [String] = []
        for f in timed {
            let previous = groups.last?.last
            if let last = previous, Self.continues(groups[groups.count - 1], last: last, with: f, gap: rule.gap) {
                groups[groups.count - 1].append(f)
            } else {
                groups.append([f])
                reasons.append(previous.flatMap { $0.sameRig(f) }.map { "; \($0) than the frame before" } ?? "")
            }
        }
        let sizes = groups.map(\.count)
        let expected = rule.framesPerSet ?? Self.mode(sizes.filter { $0 > 1 }) ?? 2
        var number = 0
        for (k, g) in groups.enumerated() {
            guard g.count == max(expected, 2) else {
                let why = (g.count == 1 ? "a single frame, no bracket (\(expected) frames expected)"
                    : g.count < expected ? "an incomplete set of \(g.count) frames (\(expected) expected) from \(g[0].time!.iso8601): a frame missing or from elsewhere"
                    : "a set of \(g.count) frames from \(g[0].time!.iso8601), more than the \(expected) expected: sets without a pause between them, or frames from elsewhere") + reasons[k]
                unassigned += g.map { Left(file: $0.path, reason: why) }
                continue
            }
            number += 1
            let stops = g.map { $0.stops! }, longest = stops.max()!
            let end = g.map { UTCTime(seconds: $0.time!.seconds + ($0.exposureTime ?? 0)) }.max()!
            sets.append(Set(id: String(format: "set-%04d", number), start: g[0].time!, end: end,
                            files: g.map(\.path), relativeStops: stops.map { $0 - longest }))
        }
        unassigned.sort { $0.file < $1.file }
    }

    /// Whether `f` belongs to the set `group` whose last frame is `last`.
    static func continues(_ group: [SequenceFrame], last: SequenceFrame, with f: SequenceFrame, gap: Double) -> Bool {
        pause(from: last, to: f) <= gap && last.sameRig(f) == nil && !repeatsExposure(of: group, f)
    }

    /// Seconds from the end of `a`'s exposure (its start + exposure time) to `b`'s start.
    static func pause(from a: SequenceFrame, to b: SequenceFrame) -> Double {
        b.time!.seconds - (a.time!.seconds + (a.exposureTime ?? 0))
    }

    /// The exposure pattern starting again: `f`'s exposure already in `group` (within ⅙ stop).
    static func repeatsExposure(of group: some Sequence<SequenceFrame>, _ f: SequenceFrame) -> Bool {
        group.contains { abs($0.stops! - f.stops!) < 1.0 / 6 }
    }

    static func mode(_ values: [Int]) -> Int? {
        var counts: [Int: Int] = [:]
        for v in values { counts[v, default: 0] += 1 }
        return counts.max { ($0.value, $0.key) < ($1.value, $1.key) }?.key
    }
}

extension BracketGrouping {
    /// Sets as a manifest gives them (`SetManifest`), each checked as the automatic grouping
    /// checks its own: every frame read, with a capture time and an exposure time, one body,
    /// lens, size and aperture, no exposure twice, no pause longer than `gap` from the end of one
    /// exposure to the next start. A set that fails is not kept — all its frames are unassigned
    /// with the reason — and frames read but in no set of the manifest are unassigned as such.
    public init(manifest: SetManifest, frames: [SequenceFrame], gap: Double = 2) {
        self.rule = GroupingRule(gap: gap, framesPerSet: nil)
        let byPath = Dictionary(frames.map { (Self.key($0.path), $0) }, uniquingKeysWith: { a, _ in a })
        var listed = Swift.Set<String>()
        for (id, files) in manifest.sets {
            listed.formUnion(files.map(Self.key))
            let found = files.map { byPath[Self.key($0)] }
            var why: String?
            if let k = found.firstIndex(where: { $0 == nil }) {
                why = "the manifest's set \(id) lists \(files[k]), which is not among the frames read"
            } else if files.count < 2 {
                why = "the manifest's set \(id) has one frame: no bracket"
            }
            let set = found.compactMap { $0 }.sorted { ($0.time ?? UTCTime(seconds: 0), $0.path) < ($1.time ?? UTCTime(seconds: 0), $1.path) }
            if why == nil {
                if let f = set.first(where: { $0.time == nil }) { why = "\(f.path) has no capture time (DateTimeOriginal with its UTC offset)" }
                else if let f = set.first(where: { $0.stops == nil }) { why = "\(f.path) records no exposure time" }
                else if let reason = set.dropFirst().lazy.compactMap({ set[0].sameRig($0).map { r in "\(r) in the manifest's set \(id)" } }).first { why = reason }
                else if let repeated = set.indices.first(where: { Self.repeatsExposure(of: set[..<$0], set[$0]) }) {
                    why = "\(set[repeated].path) repeats an exposure of the manifest's set \(id)"
                } else if let k = set.indices.dropFirst().first(where: { Self.pause(from: set[$0 - 1], to: set[$0]) > gap }) {
                    why = String(format: "%@ starts %.4g s after %@ ended, more than the gap of %.4g s, in the manifest's set %@",
                                 set[k].path, Self.pause(from: set[k - 1], to: set[k]), set[k - 1].path, gap, id)
                }
            }
            if let why {
                unassigned += files.map { Left(file: $0, reason: why) }
                continue
            }
            let stops = set.map { $0.stops! }, longest = stops.max()!
            let end = set.map { UTCTime(seconds: $0.time!.seconds + ($0.exposureTime ?? 0)) }.max()!
            sets.append(Set(id: id, start: set[0].time!, end: end, files: set.map(\.path), relativeStops: stops.map { $0 - longest }))
        }
        for f in frames where !listed.contains(Self.key(f.path)) {
            unassigned.append(Left(file: f.path, reason: "in no set of the manifest"))
        }
        sets.sort { ($0.start, $0.id) < ($1.start, $1.id) }
        unassigned.sort { $0.file < $1.file }
    }

    /// A path compared by its standardized form ("./a/b.dng" and "a/b.dng" alike).
    static func key(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }
}

/// Sets given explicitly: a CSV with a header naming the columns `set` and `file` (one row per
/// frame), or JSON — an object of set id → files, or a list of {"id", "files"}. Relative file
/// paths are taken from the manifest's folder.
public struct SetManifest: Sendable, Equatable {
    /// In the manifest's order.
    public var sets: [(id: String, files: [String])]

    public static func == (a: SetManifest, b: SetManifest) -> Bool {
        a.sets.map(\.id) == b.sets.map(\.id) && a.sets.map(\.files) == b.sets.map(\.files)
    }

    public init(sets: [(id: String, files: [String])]) { self.sets = sets }

    public static func parse(_ text: String, path: String) -> Result<SetManifest, StudyInputError> {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        func resolve(_ f: String) -> String { f.hasPrefix("/") ? f : folder + "/" + f }
        var sets: [(id: String, files: [String])] = []
        func add(_ id: String, _ file: String) {
            if let k = sets.firstIndex(where: { $0.id == id }) { sets[k].files.append(resolve(file)) } else { sets.append((id, [resolve(file)])) }
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("{") || trimmed.hasPrefix("[") {
            guard let json = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)) else {
                return .failure(StudyInputError("\(path): not valid JSON"))
            }
            if let object = json as? [String: Any] {
                for id in object.keys.sorted() {
                    guard let files = object[id] as? [String] else { return .failure(StudyInputError("\(path): set \(id) is not a list of file names")) }
                    files.forEach { add(id, $0) }
                }
            } else if let list = json as? [[String: Any]] {
                for (k, entry) in list.enumerated() {
                    guard let id = entry["id"] as? String, let files = entry["files"] as? [String] else {
                        return .failure(StudyInputError("\(path): entry \(k + 1) needs \"id\" (text) and \"files\" (a list of file names)"))
                    }
                    files.forEach { add(id, $0) }
                }
            } else {
                return .failure(StudyInputError("\(path): give an object of set id → files, or a list of {\"id\", \"files\"}"))
            }
        } else {
            let lines = trimmed.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) } }
            guard let header = lines.first, let s = header.firstIndex(of: "set"), let f = header.firstIndex(of: "file") else {
                return .failure(StudyInputError("\(path): a CSV manifest needs a header with the columns set and file"))
            }
            for (k, row) in lines.dropFirst().enumerated() where !(row.count == 1 && row[0].isEmpty) {
                guard row.count > max(s, f), !row[s].isEmpty, !row[f].isEmpty else {
                    return .failure(StudyInputError("\(path): row \(k + 2) has no set or no file"))
                }
                add(row[s], row[f])
            }
        }
        guard !sets.isEmpty else { return .failure(StudyInputError("\(path): the manifest lists no sets")) }
        for (id, files) in sets where Swift.Set(files).count != files.count {
            return .failure(StudyInputError("\(path): set \(id) lists a file twice"))
        }
        let all = sets.flatMap(\.files)
        if Swift.Set(all).count != all.count { return .failure(StudyInputError("\(path): a file is listed in two sets")) }
        return .success(SetManifest(sets: sets))
    }
}
