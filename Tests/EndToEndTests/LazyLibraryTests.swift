import Foundation
import Testing
import TestSupport

/// libjxl and the chart libraries (Cairo, Pango, GLib) are loaded on first use: a command that
/// decodes no JPEG XL never loads libjxl — `info` of a JPEG XL DNG included, which reads no
/// pixels — and one that draws nothing never loads Cairo; a conversion of a JPEG XL DNG loads
/// libjxl when its first tile is decoded, a histogram plot loads Cairo and Pango when it
/// draws (glibc's loader, LD_DEBUG=files, says which shared objects a process loads and
/// whether at start or by dlopen).
@Suite struct LazyLibraryTests {
    /// The shared objects named `prefix…` that the command loaded, each with how it was
    /// loaded ("needed by …" at start, "dynamically loaded by …" later).
    static func loads(_ arguments: [String], prefix: String) throws -> [String] {
        var environment = ProcessInfo.processInfo.environment
        environment["LD_DEBUG"] = "files"
        let r = try TestData.run(try CLI.binary, arguments, environment: environment)
        try #require(r.status == 0, "\(arguments): \(r.stderr.suffix(2000))")
        return r.stderr.split(separator: "\n").filter { $0.contains("file=\(prefix)") && !$0.contains("generating link map") }
            .map { String($0) }
    }

    @Test func jpegXLIsLoadedOnlyToDecodeIt() throws {
        let chart = TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng").path
        let dir = TestData.temporaryDirectory("lazy-libraries")
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try Self.loads(["info", chart], prefix: "libjxl").isEmpty)
        #expect(try Self.loads(["convert", chart, "-o", dir.appendingPathComponent("c.exr").path, "-q"], prefix: "libjxl").isEmpty)
        #expect(try Self.loads(["stats", chart], prefix: "libjxl").isEmpty)
        let jxl = try TestData.dngSDKSample("01_jxl_linear_raw_integer.dng").path
        #expect(try Self.loads(["info", jxl], prefix: "libjxl").isEmpty)
        let loaded = try Self.loads(["convert", jxl, "-o", dir.appendingPathComponent("j.exr").path, "-q"], prefix: "libjxl")
        #expect(loaded.count == 2 && loaded.allSatisfy { $0.contains("dynamically loaded") }, "\(loaded)")
    }

    @Test func chartLibrariesAreLoadedOnlyToDraw() throws {
        let chart = TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng").path
        let dir = TestData.temporaryDirectory("lazy-charts")
        defer { try? FileManager.default.removeItem(at: dir) }
        for prefix in ["libcairo", "libpango"] {
            #expect(try Self.loads(["info", chart], prefix: prefix).isEmpty)
            #expect(try Self.loads(["stats", chart], prefix: prefix).isEmpty)
            #expect(try Self.loads(["convert", chart, "-o", dir.appendingPathComponent("c.h5").path, "-q"], prefix: prefix).isEmpty)
        }
        let plot = dir.appendingPathComponent("h.png").path
        let cairo = try Self.loads(["histogram", chart, "--plot", plot, "-q"], prefix: "libcairo")
        #expect(!cairo.isEmpty && cairo.allSatisfy { $0.contains("dynamically loaded") }, "\(cairo)")
        #expect(FileManager.default.fileExists(atPath: plot))
    }
}
