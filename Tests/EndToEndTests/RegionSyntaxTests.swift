import Foundation
import Testing
import TestSupport

/// `--region`: whole pixels or percentages, one meaning each; every mistake is a usage error
/// (exit 64) naming the region, how it was read and, once the image is known, its size.
@Suite struct RegionSyntaxTests {
    /// A 320 × 240 chart in a temporary directory, removed by the caller.
    static func chart() throws -> (dir: URL, path: String) {
        let dir = TestData.temporaryDirectory("regions")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("chart.dng").path
        try FaultToleranceTests.chart(path)
        return (dir, path)
    }

    /// Percentages and the pixels they round to measure the same pixels.
    @Test func percentagesMatchTheirPixels() throws {
        let (dir, input) = try Self.chart()
        defer { try? FileManager.default.removeItem(at: dir) }
        // 25 % … 75 % of 240 rows and 320 columns: rows 60..<180, columns 80..<240.
        let r = try CLI.run(["stats", input, "--json", "-q", "--region", "p=25%,25%,75%,75%", "--region", "q=60,80,180,240"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let regions = try #require(((json["files"] as? [[String: Any]])?.first?["regions"]) as? [[String: Any]])
        let measured = regions.map { ($0["measurement"] as? [String: Any])?["pixels"] as? Int }
        #expect(measured == [120 * 160, 120 * 160])
        let means = regions.map { (($0["measurement"] as? [String: Any])?["channels"] as? [String: Any])?["Y"] as? [String: Any] }
        #expect(means[0]?["mean"] as? Double == means[1]?["mean"] as? Double)
    }

    /// Each mistake exits 64 with a message naming the region and what was wrong.
    @Test(arguments: [
        // Syntax, refused before the image is read.
        (["a=0,0,0.3,1"], ["region a", "old fraction form", "0%,0%,30%,100%"]),
        (["a=0,0,1,1"], ["region a", "top-left pixel", "0%,0%,100%,100%", "poly:0,0,1,0,1,1,0,1"]),
        (["a=0,0,0.5,1.5"], ["region a", "whole numbers", "percentages"]),
        (["a=10%,0,20,30"], ["region a", "mixes percentages and pixels"]),
        (["a=0%,0%,150%,100%"], ["region a", "percentages 0%,0%,150%,100%", "outside the image"]),
        (["a=50%,0%,10%,100%"], ["region a", "inverted"]),
        (["a=20,0,10,30"], ["region a", "read as pixels", "inverted"]),
        (["a=poly:0%,0%,1,1,2,2"], ["region a", "polygon"]),
        // Against the 320 × 240 image: never clipped.
        (["a=5000,5000,6000,6000"], ["region a", "read as pixels: top 5000, left 5000, bottom 6000, right 6000", "is outside the 320×240 image"]),
        (["a=0,0,5000,5000"], ["region a", "bottom 5000, right 5000", "partly outside the 320×240 image", "never clipped"]),
        (["a=-1,0,10,10"], ["region a", "top -1", "partly outside the 320×240 image"]),
        (["a=40%,40%,40.1%,60%"], ["region a", "percentages 40%,40%,40.1%,60%", "pixels top 96, left 128, bottom 96, right 192", "holds no pixels", "320×240"]),
        (["a=poly:10,10,400,10,10,100"], ["region a", "polygon", "1 of its 3 vertices outside the 320×240 image", "(400, 10)"]),
        (["a=poly:-0.5,10,40,10,10,100"], ["region a", "polygon", "outside the 320×240 image"]),
    ] as [([String], [String])])
    func mistakesAreUsageErrors(regions: [String], words: [String]) throws {
        let (dir, input) = try Self.chart()
        defer { try? FileManager.default.removeItem(at: dir) }
        for command in [["stats"], ["histogram"], ["report", "-o", dir.path + "/r.html"]] {
            let arguments = [command[0], input] + regions.flatMap { ["--region", $0] } + command.dropFirst()
            let r = try CLI.run(arguments)
            #expect(r.status == 64, "\(arguments): exit \(r.status) \(r.stderr)")
            for w in words { #expect(r.stderr.contains(w), "\(arguments): no “\(w)” in \(r.stderr)") }
        }
    }

    /// `convert --analysis` and `calibrate` refuse a region outside the image too, and the
    /// JSON error document carries the usage category and exit code 64 as a number.
    @Test func otherCommandsAndJSON() throws {
        let (dir, input) = try Self.chart()
        defer { try? FileManager.default.removeItem(at: dir) }
        let convert = try CLI.run(["convert", input, "-o", dir.path + "/x.h5", "--analysis", "--region", "a=0,0,241,10", "-q"])
        #expect(convert.status == 64 && convert.stderr.contains("region a") && convert.stderr.contains("320×240"), "\(convert.status) \(convert.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/x.h5"))
        let calibrate = try CLI.run(["calibrate", input, "--region", "a=0,0,10,321", "--luminance", "100", "-o", dir.path + "/c.json", "--json"])
        #expect(calibrate.status == 64 && calibrate.stderr.contains("region a"), "\(calibrate.status) \(calibrate.stderr)")
        let document = try #require(calibrate.stderr.split(separator: "\n").last.map { Data($0.utf8) })
        let error = try #require(try JSONSerialization.jsonObject(with: document) as? [String: Any], "\(calibrate.stderr)")
        #expect(error["error"] as? String == "usage")
        #expect(error["exitCode"] as? Int == 64)
        #expect(calibrate.stderr.range(of: #""exitCode" ?: ?64[,}]"#, options: .regularExpression) != nil, "exitCode is a number: \(calibrate.stderr)")
        let stats = try CLI.run(["stats", input, "--json", "-q", "--region", "a=0,0,10,321"])
        #expect(stats.status == 64, "\(stats.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any], "\(stats.stdout)")
        let file = try #require((doc["files"] as? [[String: Any]])?.first)
        #expect(file["errorCategory"] as? String == "usage" && (file["error"] as? String)?.contains("region a") == true)
    }
}
