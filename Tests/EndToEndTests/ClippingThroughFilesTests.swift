import Foundation
import Testing
import EXRExchange
import TestSupport

/// Clipping travels with the pixels: a default EXR carries the clip mask, so `stats` and
/// `ratio` on it give the DNG's and the HDF5's answer; an EXR without the channel has its
/// clipping reported as unknown (JSON `null`, ratio kind `clipping-unknown`), never as none.
@Suite struct ClippingThroughFilesTests {
    static func json(_ arguments: [String]) throws -> [String: Any] {
        let r = try CLI.run(arguments + ["--json"])
        try #require(r.status == 0, "\(arguments): \(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    static func file(_ document: [String: Any]) throws -> [String: Any] {
        try #require((document["files"] as? [[String: Any]])?.first)
    }

    /// Each region's `clippedPixels` (NSNull when unknown), in region order.
    static func clipped(_ document: [String: Any]) throws -> [Any] {
        let regions = try #require(try file(document)["regions"] as? [[String: Any]])
        return try regions.map { try #require(($0["measurement"] as? [String: Any])?["clippedPixels"]) }
    }

    static func ratioKind(_ document: [String: Any]) throws -> String {
        try #require((try file(document)["ratios"] as? [[String: Any]])?.first?["kind"] as? String)
    }

    @Test func clippingIsCarriedThroughTheDefaultEXR() throws {
        let dir = TestData.temporaryDirectory("clip-through-files")
        defer { try? FileManager.default.removeItem(at: dir) }
        // ISO 800 on the sunset: the sky and the sun reach white.
        let made = try CLI.run(["simulate", "--scene", "sunset", "--size", "256x192", "--iso", "800", "--seed", "5",
                                "-o", dir.path, "-q"])
        try #require(made.status == 0, "\(made.stderr)")
        let dng = dir.appendingPathComponent("sunset.dng").path
        let exr = dir.appendingPathComponent("default.exr").path
        let h5 = dir.appendingPathComponent("default.h5").path
        let bare = dir.appendingPathComponent("bare.exr").path
        for (output, extra) in [(exr, [String]()), (h5, []), (bare, ["--no-exr-clip-mask"])] {
            let r = try CLI.run(["convert", dng, "-o", output, "-q"] + extra)
            try #require(r.status == 0, "\(r.stderr)")
        }
        // The channel is there by default (1 where clipped), absent when left out.
        let contents = try EXRFile.read(exr)
        let channel = try #require(contents.channels[EXRFile.clipMaskChannel])
        #expect(Set(channel) == [0, 1])
        #expect(try EXRFile.read(bare).channels[EXRFile.clipMaskChannel] == nil)

        // The sky (top rows) has clipped pixels and the ground does not: a lower bound.
        let regions = ["--region", "sky=0%,0%,30%,100%", "--region", "ground=80%,0%,100%,100%"]
        let fromDNG = try Self.json(["stats", dng] + regions)
        let counts = try #require(try Self.clipped(fromDNG) as? [Int])
        #expect(counts[0] > 0 && counts[1] == 0, "\(counts)")
        #expect(channel.filter { $0 != 0 }.count >= counts[0])
        for other in [exr, h5] {
            #expect(try Self.clipped(Self.json(["stats", other] + regions)) as? [Int] == counts, "\(other)")
            #expect(try Self.ratioKind(Self.json(["ratio", other] + regions)) == "lower-bound", "\(other)")
        }
        #expect(try Self.ratioKind(Self.json(["ratio", dng] + regions)) == "lower-bound")

        // Without the channel: unknown, in JSON, text, ratio and histogram.
        let unknown = try Self.clipped(Self.json(["stats", bare] + regions))
        #expect(unknown.count == 2 && unknown.allSatisfy { $0 is NSNull }, "\(unknown)")
        #expect(try Self.ratioKind(Self.json(["ratio", bare] + regions)) == "clipping-unknown")
        let text = try CLI.run(["stats", bare] + regions)
        #expect(text.status == 0 && text.stdout.contains("clipping unknown (no clip mask)") && !text.stdout.contains("0 clipped"),
                "\(text.stdout)")
        let histogram = try Self.file(Self.json(["histogram", bare]))
        let h = try #require(((histogram["regions"] as? [[String: Any]])?.first?["histogram"]) as? [String: Any])
        #expect(h["clipped"] is NSNull, "\(h["clipped"] ?? "missing")")
        let csv = try CLI.run(["stats", bare, "--csv"] + regions)
        #expect(csv.status == 0)
        let row = try #require(csv.stdout.split(separator: "\n").dropFirst().first.map(String.init))
        #expect(row.split(separator: ",", omittingEmptySubsequences: false)[4] == "", "\(row)")
    }
}
