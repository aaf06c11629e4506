import Foundation
import Testing
import ImageCore
import EXRExchange
import TestSupport

/// A statistic that a clipped pixel can move is reported as a bound, in every output: the
/// simulated sky dome's sun clips in one frame, so its E_v and the sun region's mean are lower
/// bounds (only `low95`), and a ratio with the sun below the line an upper bound.
@Suite struct BoundsTests {
    static func json(_ arguments: [String]) throws -> [String: Any] {
        let r = try CLI.run(arguments + ["--json"])
        try #require(r.status == 0, "\(arguments): \(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    /// The sky dome photographed once (the sun clips), and the pixel rectangle around the sun.
    static func skyDome(_ dir: URL) throws -> (dng: String, truth: String, sun: String, sky: String) {
        let made = try CLI.run(["simulate", "--scene", "sky-dome", "--size", "512x384", "--seed", "3", "-o", dir.path, "-q"])
        try #require(made.status == 0, "\(made.stderr)")
        let truth = dir.appendingPathComponent("sky-dome.truth.exr").path
        let image = try EXRFile.readSceneLinear(truth)
        let brightest = (0..<(image.width * image.height)).max { image.pixels.samples[3 * $0 + 1] < image.pixels.samples[3 * $1 + 1] }!
        let (x, y) = (brightest % image.width, brightest / image.width)
        let sun = "sun=\(y - 4),\(x - 4),\(y + 5),\(x + 5)"
        // A patch of sky well away from the sun.
        let skyY = y < image.height / 2 ? y + 60 : y - 70, skyX = x < image.width / 2 ? x + 60 : x - 70
        return (dir.appendingPathComponent("sky-dome.dng").path, truth, sun, "sky=\(skyY),\(skyX),\(skyY + 10),\(skyX + 10)")
    }

    @Test func clippedSunGivesLowerBoundsEverywhere() throws {
        let dir = TestData.temporaryDirectory("bounds")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (dng, truth, sun, sky) = try Self.skyDome(dir)

        // E_v: a lower bound with its lower end only, in JSON and text.
        let ev = try #require((try Self.json(["illuminance", dng, "--projection", "equidistant"])["results"] as? [[String: Any]])?.first)
        #expect(ev["kind"] as? String == "lower-bound" && ev["low95"] is Double && ev["high95"] == nil, "\(ev)")
        let text = try CLI.run(["illuminance", dng, "--projection", "equidistant"])
        #expect(text.stdout.contains("E_v ≥") && text.stdout.contains("LOWER BOUND") && !text.stdout.contains("interval ["), "\(text.stdout)")

        // The sun's region: every statistic a clipped pixel can move is a lower bound, below the truth.
        let stats = try Self.json(["stats", dng, "--region", sun, "--region", sky, "--units", "luminance"])
        let regions = try #require(((stats["files"] as? [[String: Any]])?.first?["regions"]) as? [[String: Any]])
        let sunY = try #require(((regions[0]["measurement"] as? [String: Any])?["channels"] as? [String: Any])?["Y"] as? [String: Any])
        #expect(sunY["kind"] as? String == "lower-bound" && sunY["maximumKind"] as? String == "lower-bound"
                && sunY["standardDeviationKind"] as? String == "undetermined", "\(sunY)")
        let budget = try #require((regions[0]["budgets"] as? [[String: Any]])?.first)
        #expect(budget["kind"] as? String == "lower-bound" && budget["low95"] is Double && budget["high95"] == nil, "\(budget)")
        let skyBudget = try #require((regions[1]["budgets"] as? [[String: Any]])?.first)
        #expect(skyBudget["kind"] as? String == "value" && skyBudget["high95"] is Double)
        // (In the decoder's own units the truth is known per pixel: the bound lies below it.)
        let measured = try Self.json(["stats", dng, "--region", sun])
        let truthStats = try Self.json(["stats", truth, "--region", sun])
        func meanY(_ d: [String: Any]) -> Double? {
            let r = ((d["files"] as? [[String: Any]])?.first?["regions"] as? [[String: Any]])?.first
            return (((r?["measurement"] as? [String: Any])?["channels"] as? [String: Any])?["Y"] as? [String: Any])?["mean"] as? Double
        }
        let bound = try #require(meanY(measured)), trueMean = try #require(meanY(truthStats))
        #expect(bound < trueMean, "lower bound \(bound) against the truth \(trueMean)")

        // Ratios: sun/sky a lower bound (its lower end only), sky/sun an upper bound.
        let ratios = try #require((try Self.json(["ratio", dng, "--region", sun, "--region", sky])["files"] as? [[String: Any]])?.first?["ratios"] as? [[String: Any]])
        #expect(ratios.first?["kind"] as? String == "lower-bound" && ratios.first?["high95"] == nil && ratios.first?["low95"] is Double)
        let inverse = try #require((try Self.json(["ratio", dng, "--region", sky, "--region", sun])["files"] as? [[String: Any]])?.first?["ratios"] as? [[String: Any]])
        #expect(inverse.first?["kind"] as? String == "upper-bound" && inverse.first?["low95"] == nil && inverse.first?["high95"] is Double)

        // CSV carries the kinds; the text table marks the bounds.
        let csv = try CLI.run(["stats", dng, "--region", sun, "--csv"])
        let lines = csv.stdout.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let column = try #require(lines.first?.firstIndex(of: "mean_kind"))
        #expect(lines.dropFirst().allSatisfy { $0[column] == "lower-bound" }, "\(csv.stdout)")
        let table = try CLI.run(["stats", dng, "--region", sun])
        #expect(table.stdout.contains("≥") && table.stdout.contains("lower bound"), "\(table.stdout)")
        // The dynamic range ends at the 99.9th percentile, a lower bound: so is the range.
        #expect(table.stdout.contains("at least this (the high percentile is a lower bound)"), "\(table.stdout)")

        // The report says so too.
        let report = dir.appendingPathComponent("report.md").path
        let made = try CLI.run(["report", dng, "--region", sun, "--region", sky, "--units", "luminance", "-o", report])
        try #require(made.status == 0, "\(made.stderr)")
        let markdown = try String(contentsOfFile: report, encoding: .utf8)
        #expect(markdown.contains("≥ ") && markdown.contains("lower bound"), "report without the bound")
    }
}
