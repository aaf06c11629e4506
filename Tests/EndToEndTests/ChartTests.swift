import Foundation
import Testing
import DNGWriter
@testable import Batching
@testable import Engine
@testable import Measuring
@testable import Reporting
import SceneLinearKit
@testable import SimulationCheck
import TestSupport

/// Charts and reports as a user gets them from the command line: files written, PNGs of the
/// right size whose pixels show what the data says (read back with Pillow).
@Suite struct ChartTests {
    /// A 64×48 LinearRaw image of three flat parts: the left half at 1/4 of white (−2 EV),
    /// the top-right quarter at white (clipped), the bottom-right quarter at 1/16 (−4 EV).
    /// The colour matrix is the identity, so every channel and Y equal the stored fraction.
    static func threePartImage(at path: String) throws {
        var samples = [UInt16](repeating: 0, count: 64 * 48 * 3)
        for y in 0..<48 {
            for x in 0..<64 {
                let v: UInt16 = x < 32 ? 16384 : (y < 24 ? 65535 : 4096)
                for c in 0..<3 { samples[(y * 64 + x) * 3 + c] = v }
            }
        }
        try DNGWriter.write(LinearRawDNG(width: 64, height: 48, samples: samples), to: path)
    }

    /// Pixel counts of a PNG's colours, by Pillow: "w h" then "r,g,b count" lines, most common first.
    static func colours(_ png: String) throws -> (size: (Int, Int), counts: [([Int], Int)]) {
        let script = """
            import sys
            from PIL import Image
            im = Image.open(sys.argv[1]).convert('RGB')
            print(im.width, im.height)
            for n, c in sorted(im.getcolors(1 << 24), reverse=True)[:12]:
                print('%d,%d,%d %d' % (c[0], c[1], c[2], n))
            """
        let r = try TestData.runPython(script, [png])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n")
        let first = try #require(lines.first, "no output from the PNG reader")
        let wh = first.split(separator: " ").compactMap { Int($0) }
        let counts = lines.dropFirst().map { line -> ([Int], Int) in
            let parts = line.split(separator: " ")
            return (parts[0].split(separator: ",").compactMap { Int($0) }, Int(parts[1]) ?? 0)
        }
        return ((wh[0], wh[1]), counts)
    }

    /// The EV map shows the clipped quarter in magenta and the two flat parts in the ramp's
    /// colours for −2 and −4 EV, over areas of the image's parts times the map's scale².
    @Test func evMapShowsClippingAndLevels() throws {
        let dir = TestData.temporaryDirectory("evmap")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = dir.appendingPathComponent("parts.dng").path
        try Self.threePartImage(at: dng)
        let map = dir.appendingPathComponent("map.png").path
        let r = try CLI.run(["stats", dng, "--region", "left=4,4,44,28", "--ev-map", map])
        #expect(r.status == 0, "\(r.stderr)")
        let c = try Self.colours(map)
        // The same map built in-process gives the layout: scale and EV range of the ramp.
        let image = try Pipeline.develop(path: dng).image
        let layout = AnalysisCharts.evMap(image, title: "parts.dng").layout()
        #expect(c.size == (layout.width, layout.height))
        let scale = layout.pixelScale
        #expect(scale >= 1 && scale == scale.rounded())
        let quarter = Int(scale * scale) * 32 * 24
        func rampColour(_ ev: Double) -> [Int] {
            let t = (ev - layout.evRange.lowerBound) / (layout.evRange.upperBound - layout.evRange.lowerBound)
            let k = EVColorRamp.color(at: t)
            return [Int(k.red), Int(k.green), Int(k.blue)]
        }
        func count(_ colour: [Int]) -> Int { c.counts.first { $0.0 == colour }?.1 ?? 0 }
        let magenta = count([255, 0, 255])
        // The legend's swatch adds a few magenta pixels; nothing else may.
        #expect(magenta >= quarter && magenta <= quarter + 400, "magenta \(magenta), quarter \(quarter)")
        let dark = count(rampColour(-4))
        #expect(dark >= quarter * 95 / 100 && dark <= quarter + 200, "−4 EV: \(dark) of \(quarter); \(c.counts)")
        // The left half less the region's outline and label.
        let left = count(rampColour(-2))
        #expect(left >= 2 * quarter * 85 / 100 && left <= 2 * quarter + 200, "−2 EV: \(left) of \(2 * quarter); \(c.counts)")
    }

    /// `histogram --plot` writes one chart per region (-1, -2 suffixes) at 960×540 with the
    /// R, G, B curves, the dashed magenta clip line, and `.svg` gives an SVG.
    @Test func histogramPlots() throws {
        let dir = TestData.temporaryDirectory("histplot")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = dir.appendingPathComponent("parts.dng").path
        try Self.threePartImage(at: dng)
        let base = dir.appendingPathComponent("h.png").path
        let r = try CLI.run(["histogram", dng, "--region", "a=0,0,48,32", "--region", "b=0,32,48,64", "--plot", base])
        #expect(r.status == 0, "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(files == ["h-1.png", "h-2.png", "parts.dng"])
        let c = try Self.colours(dir.appendingPathComponent("h-2.png").path)
        #expect(c.size == (960, 540))
        #expect(c.counts.contains { $0.0 == [255, 255, 255] })
        let svg = dir.appendingPathComponent("h.svg").path
        let s = try #require(try CLI.run(["histogram", dng, "--plot", svg]))
        #expect(s.status == 0, "\(s.stderr)")
        let text = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(text.hasPrefix("<?xml") && text.contains("<svg") && text.contains("viewBox=\"0 0 960 540\""))
        // The same chart as PDF: a PDF file whose title is the chart's.
        let pdf = dir.appendingPathComponent("h.pdf").path
        let p = try #require(try CLI.run(["histogram", dng, "--plot", pdf]))
        #expect(p.status == 0, "\(p.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: pdf)).prefix(5) == Data("%PDF-".utf8))
        let bad = try #require(try CLI.run(["histogram", dng, "--plot", dir.appendingPathComponent("h.jpg").path]))
        #expect(bad.status == 16, "\(bad.stderr)")
        #expect(bad.stderr.contains("a plot must end in .png, .svg or .pdf"))
    }

    /// `report` as HTML is one self-contained file with the map, a histogram per region, the
    /// statistics and the ratio (left/bottom-right = 4, its clipped partner a bound); as
    /// Markdown its charts sit in <name>_files/. A file that cannot be read appears with
    /// its error and sets the exit code, and the report is still written.
    @Test func reports() throws {
        let dir = TestData.temporaryDirectory("report")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = dir.appendingPathComponent("parts.dng").path
        try Self.threePartImage(at: dng)
        let html = dir.appendingPathComponent("r.html").path
        let regions = ["--region", "left=0,0,48,32", "--region", "dark=24,32,48,64", "--region", "clip=0,32,24,64"]
        let r = try CLI.run(["report", dng, "-o", html] + regions + ["--ratio", "left/dark", "--ratio", "clip/left"])
        #expect(r.status == 0, "\(r.stderr)")
        let text = try String(contentsOfFile: html, encoding: .utf8)
        #expect(text.components(separatedBy: "src=\"data:image/png;base64,").count - 1 == 4)
        #expect(!text.contains("src=\"http") && !text.contains("<script"))
        #expect(text.contains("<td>left / dark</td><td>Y mean</td><td>4</td>"), "\(text)")
        #expect(text.contains("lower bound"))
        #expect(text.contains("Region <strong>clip</strong>: 768 pixels, 768 clipped (100.000 %)"))

        let garbage = dir.appendingPathComponent("garbage.dng").path
        try Data("not a raw file".utf8).write(to: URL(fileURLWithPath: garbage))
        let md = dir.appendingPathComponent("r.md").path
        let m = try #require(try CLI.run(["report", dng, garbage, "-o", md, "--region", "left=0,0,48,32"]))
        #expect(m.status == 11, "\(m.stderr)")
        let markdown = try String(contentsOfFile: md, encoding: .utf8)
        #expect(markdown.contains("![EV map of parts.dng](r_files/1-parts-ev-map.png)"))
        #expect(markdown.contains("**Not measured** (not-dng)"))
        let assets = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("r_files").path).sorted()
        #expect(assets == ["1-parts-ev-map.png", "1-parts-histogram-1.png"])
        // The EV map's PNG, made while the later passes ran, is the one drawn from the picture
        // the measurement hands over at its end.
        var request = AnalysisRequest()
        request.regions = [Region(name: "left", shape: .rectangle(PixelRect(top: 0, left: 0, bottom: 48, right: 32)))]
        request.histogram = HistogramOptions()
        let early = SharedStore<Int, [UInt8]>(), late = SharedStore<Int, [UInt8]>(), mapRegions = request.regions
        _ = Pipeline.analyze([dng], request: request, pictureSize: 1000, visit: { i, picture, _ in
            late[i] = AnalysisReport.evMap(picture, regions: mapRegions).png()
        }, pictureReady: { i, picture in early[i] = AnalysisReport.evMap(picture, regions: mapRegions).png() })
        let written = [UInt8](try Data(contentsOf: dir.appendingPathComponent("r_files/1-parts-ev-map.png")))
        #expect(early[0] != nil && early[0] == late[0] && late[0] == written)
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: dir.path)).contains { $0.contains("partial") })
    }

    /// `report` as PDF: A4 pages (pdfinfo) whose text (pdftotext) holds the same statistics
    /// and ratio as the HTML report, with the map and histograms as drawings; an unknown
    /// report extension is a usage error.
    @Test(.enabled(if: (TestData.toolIfPresent("pdftotext") != nil && TestData.toolIfPresent("pdfinfo") != nil) || TestRequirement.toolsRequired))
    func pdfReport() throws {
        let dir = TestData.temporaryDirectory("report-pdf")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = dir.appendingPathComponent("parts.dng").path
        try Self.threePartImage(at: dng)
        let pdf = dir.appendingPathComponent("r.pdf").path
        let regions = ["--region", "left=0,0,48,32", "--region", "dark=24,32,48,64", "--region", "clip=0,32,24,64"]
        let r = try #require(try CLI.run(["report", dng, "-o", pdf, "-q"] + regions + ["--ratio", "left/dark", "--ratio", "clip/left"]))
        #expect(r.status == 0, "\(r.stderr)")
        let info = try TestData.run(try TestData.tool("pdfinfo"), [pdf]).stdout
        let pages = info.split(separator: "\n").first { $0.hasPrefix("Pages:") }.flatMap { Int($0.split(separator: " ").last ?? "") }
        #expect((pages ?? 0) >= 2, "\(info)")
        #expect(info.contains("595 x 842 pts"), "A4 pages: \(info)")
        #expect(info.contains("Title:") && info.contains("SceneLinear measurement report"))
        let text = try TestData.run(try TestData.tool("pdftotext"), ["-layout", pdf, "-"]).stdout
        #expect(text.contains("left / dark"), "\(text)")
        #expect(text.range(of: #"left / dark\s+Y mean\s+4\s"#, options: .regularExpression) != nil, "\(text)")
        #expect(text.contains("lower bound"))
        #expect(text.contains("Region clip: 768 pixels, 768 clipped (100.000 %)"), "\(text)")
        #expect(text.contains("region left") && text.contains("region dark"), "the histogram charts' titles")

        let bad = try #require(try CLI.run(["report", dng, "-o", dir.appendingPathComponent("r.docx").path] + regions))
        #expect(bad.status == 64 && bad.stderr.contains(".pdf"), "\(bad.stderr)")
    }

    /// `validate --plot` on the bundled sunset draws the bias and the noise charts.
    @Test func validationPlots() throws {
        let dir = TestData.temporaryDirectory("valplot")
        defer { try? FileManager.default.removeItem(at: dir) }
        let sunset = TestData.packageRoot.appendingPathComponent("datasets/sim/sunset.dng").path
        let plot = dir.appendingPathComponent("v.png").path
        let r = try CLI.run(["validate", sunset, "--plot", plot])
        #expect(r.status == 0, "\(r.stderr)")
        for name in ["v.png", "v-noise.png"] {
            let c = try Self.colours(dir.appendingPathComponent(name).path)
            #expect(c.size == (960, 540), "\(name)")
        }
    }
}
