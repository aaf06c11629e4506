import Foundation
import Testing
@testable import Studies

/// Bracket sets found among frames by time, rig and exposure pattern; what fits no set is
/// reported with its reason, never merged into a wrong set.
struct BracketSetsTests {
    static let start = UTCTime(year: 2026, month: 6, day: 21, hour: 4)

    /// `sets` brackets of the exposure times `pattern`, one every `every` seconds, each frame
    /// starting 0.3 s after the previous one ended.
    static func day(sets: Int, pattern: [Double] = [1 / 15.0, 1 / 250.0, 1 / 4000.0, 1 / 64000.0, 1 / 512000.0], every: Double = 300) -> [SequenceFrame] {
        var frames: [SequenceFrame] = []
        for s in 0..<sets {
            var t = start.seconds + Double(s) * every
            for (k, exposure) in pattern.enumerated() {
                frames.append(SequenceFrame(path: String(format: "IMG_%04d.dng", s * pattern.count + k), time: UTCTime(seconds: t),
                                            exposureTime: exposure, fNumber: 8, iso: 100, camera: "Cam A 1234", lens: "Fisheye", width: 4000, height: 3000))
                t += exposure + 0.3
            }
        }
        return frames
    }

    @Test func aDayOfBracketsGroups() {
        let frames = Self.day(sets: 60)
        let grouping = BracketGrouping(frames: frames.shuffled())
        #expect(grouping.sets.count == 60 && grouping.unassigned.isEmpty)
        #expect(grouping.sets[0].files == Array(frames.prefix(5)).map(\.path))
        #expect(grouping.sets[0].id == "set-0001" && grouping.sets[59].id == "set-0060")
        #expect(abs(grouping.sets[0].relativeStops[4] - log2(1 / 15.0 / (1 / 512000.0)) * -1) < 1e-9)
        #expect(grouping.sets[1].start.seconds - grouping.sets[0].start.seconds == 300)
    }

    /// Back-to-back sets with no pause longer than the gap split where the pattern repeats.
    @Test func thePatternStartingAgainSplits() {
        let frames = Self.day(sets: 4, every: 2.5)   // a set lasts 1.6 s: the next starts 0.9 s after it ends, within the gap
        let grouping = BracketGrouping(frames: frames)
        #expect(grouping.sets.count == 4 && grouping.sets.allSatisfy { $0.files.count == 5 }, "\(grouping)")
    }

    /// A missing frame, a frame of another camera in a set, a frame without a time, another
    /// aperture: each reported with its reason; the complete sets are kept.
    @Test func misfitsAreReported() {
        var frames = Self.day(sets: 6)
        frames.remove(at: 7)                         // set 2 loses its third frame
        frames[12].camera = "Cam B 999"              // set 3's third frame (after the removal) from another body
        frames[20].time = nil                        // set 5's frame without a time
        frames[26].fNumber = 11                      // set 6's second frame at another aperture
        let grouping = BracketGrouping(frames: frames)
        #expect(grouping.sets.map(\.id).count == 2, "\(grouping.sets.map(\.files))")
        #expect(grouping.sets.map { $0.files[0] } == ["IMG_0000.dng", "IMG_0015.dng"])
        let reasons = Dictionary(grouping.unassigned.map { ($0.file, $0.reason) }, uniquingKeysWith: { a, _ in a })
        #expect(reasons["IMG_0005.dng"]?.contains("incomplete set of 4 frames (5 expected)") == true)
        #expect(reasons["IMG_0013.dng"]?.contains("another camera (Cam B 999)") == true, "\(reasons)")
        #expect(reasons["IMG_0021.dng"]?.contains("no capture time") == true)
        #expect(reasons["IMG_0027.dng"]?.contains("another aperture (f/11)") == true, "\(reasons)")
        #expect(grouping.unassigned.count == 4 + 5 + 5 + 5, "\(grouping.unassigned)")
    }

    /// With the set size given, a longer run is refused too; with it inferred, the most common size.
    @Test func setSize() {
        let frames = Self.day(sets: 3, pattern: [1 / 15.0, 1 / 250.0, 1 / 4000.0])
        #expect(BracketGrouping(frames: frames, rule: GroupingRule(framesPerSet: 5)).sets.isEmpty)
        let seven = Self.day(sets: 2, pattern: [1, 1 / 4.0, 1 / 16.0, 1 / 64.0, 1 / 256.0, 1 / 1024.0, 1 / 4096.0], every: 30)
        let grouping = BracketGrouping(frames: seven, rule: GroupingRule(gap: 2, framesPerSet: 7))
        #expect(grouping.sets.count == 2 && grouping.sets[0].end.seconds > grouping.sets[0].start.seconds + 1.3)
        // The pause counts from the end of the exposure: a 1 s frame followed 1.5 s later is in the set.
        let narrow = BracketGrouping(frames: seven, rule: GroupingRule(gap: 0.2, framesPerSet: 7))
        #expect(narrow.sets.isEmpty && narrow.unassigned.count == 14)
    }
}

/// Sets given by a manifest: CSV and JSON read, each set checked as a found one, misfits and
/// frames in no set reported.
struct SetManifestTests {
    @Test func manifestsAreReadAndChecked() throws {
        let frames = BracketSetsTests.day(sets: 3)
        let dir = "/data/day1"
        let located = frames.map { f -> SequenceFrame in var g = f; g.path = dir + "/" + f.path; return g }
        let csv = "set,file\nmorning,IMG_0000.dng\nmorning,IMG_0001.dng\nmorning,IMG_0002.dng\nmorning,IMG_0003.dng\nmorning,IMG_0004.dng\n"
            + "mixed,IMG_0005.dng\nmixed,IMG_0006.dng\nmixed,IMG_0010.dng\n"
        let manifest = try SetManifest.parse(csv, path: dir + "/sets.csv").get()
        #expect(manifest.sets.map(\.id) == ["morning", "mixed"] && manifest.sets[0].files[0] == "/data/day1/IMG_0000.dng")
        let grouping = BracketGrouping(manifest: manifest, frames: located)
        #expect(grouping.sets.map(\.id) == ["morning"] && grouping.sets[0].files.count == 5)
        let reasons = Dictionary(grouping.unassigned.map { ($0.file, $0.reason) }, uniquingKeysWith: { a, _ in a })
        // IMG_0010 (the third set's longest frame) repeats IMG_0005's exposure.
        #expect(reasons["/data/day1/IMG_0006.dng"]?.contains("repeats an exposure of the manifest's set mixed") == true, "\(reasons)")
        #expect(reasons["/data/day1/IMG_0007.dng"] == "in no set of the manifest")
        #expect(grouping.unassigned.count == 3 + 7)
        // A set whose frames lie minutes apart: the gap applies.
        let apart = try SetManifest.parse(#"{"x": ["IMG_0000.dng", "IMG_0006.dng"]}"#, path: dir + "/sets.json").get()
        let refused = BracketGrouping(manifest: apart, frames: located)
        #expect(refused.sets.isEmpty && refused.unassigned.first { $0.file.hasSuffix("IMG_0000.dng") }?.reason.contains("more than the gap") == true)
        // JSON as a list; a file not among the frames read refuses its set.
        let listed = try SetManifest.parse(#"[{"id": "a", "files": ["IMG_0000.dng", "IMG_0001.dng", "missing.dng"]}]"#, path: dir + "/s.json").get()
        let missing = BracketGrouping(manifest: listed, frames: located)
        #expect(missing.sets.isEmpty && missing.unassigned.contains { $0.reason.contains("missing.dng, which is not among the frames read") })
        for bad in ["x,y\n1,2", "set,file\n", "{\"a\": 3}", "[{\"id\": 1}]", "set,file\na,x.dng\nb,x.dng", "{nope"] {
            guard case .failure = SetManifest.parse(bad, path: "m") else { Issue.record("\(bad) was accepted"); continue }
        }
    }
}
