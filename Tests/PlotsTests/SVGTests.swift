import Foundation
import Plots
import Testing
import TestSupport
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The vector outputs: SVG parsed back with an XML parser, PDF rendered by poppler's
/// `pdftoppm` and compared with the PNG of the same drawing.
@Suite struct VectorOutputTests {
    final class Collector: NSObject, XMLParserDelegate {
        var elements: [(name: String, attributes: [String: String])] = []
        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
                    attributes attributeDict: [String: String] = [:]) {
            elements.append((elementName, attributeDict))
        }
        func count(_ name: String) -> Int { elements.filter { $0.name == name }.count }
    }

    static func parse(_ bytes: [UInt8]) throws -> Collector {
        let parser = XMLParser(data: Data(bytes))
        let collector = Collector()
        parser.delegate = collector
        let ok = parser.parse()
        #expect(ok, "well-formed XML: \(parser.parserError.map { "\($0)" } ?? "")")
        return collector
    }

    @Test func svgIsAVectorDrawingOfTheChart() throws {
        let svg = try Self.parse(PlotRenderer.render(Samples.histogram(), format: .svg))
        let root = try #require(svg.elements.first)
        #expect(root.name == "svg")
        #expect(root.attributes["viewBox"] == "0 0 960 540")
        #expect(svg.count("path") > 20, "lines, steps and glyph outlines are paths")
        #expect(svg.count("symbol") > 10, "the text's glyphs")
        // The EV map embeds its pixels as an image at their own resolution.
        let map = try Self.parse(PlotRenderer.render(Samples.evMap(width: 600, height: 400), format: .svg))
        #expect(map.count("image") >= 2, "the map and the legend bar")
        #expect(PlotRenderer.render(Samples.histogram(), format: .svg) == PlotRenderer.render(Samples.histogram(), format: .svg))
    }

    /// `pdftoppm` renders the PDF at 72 dpi (one pixel per drawing unit) to the drawing's
    /// size, and its pixels agree with the PNG's: mean absolute difference under 6 of 255,
    /// under 3 % of the pixels off by more than 64 (poppler and Cairo anti-alias edges and
    /// glyphs differently).
    @Test(.enabled(if: TestData.toolIfPresent("pdftoppm") != nil || TestRequirement.toolsRequired))
    func pdfRendersLikeThePNG() throws {
        let dir = TestData.temporaryDirectory("pdf")
        defer { try? FileManager.default.removeItem(at: dir) }
        for (name, drawing) in [("histogram", Samples.histogram().drawing()),
                                ("map", Samples.evMap(width: 600, height: 400).drawing())] {
            let pdf = drawing.pdfData()
            #expect(Array(pdf.prefix(5)) == Array("%PDF-".utf8))
            let path = dir.appendingPathComponent("\(name).pdf").path
            try Data(pdf).write(to: URL(fileURLWithPath: path))
            let stem = dir.appendingPathComponent(name).path
            let r = try TestData.run(try TestData.tool("pdftoppm"), ["-r", "72", "-singlefile", path, stem])
            #expect(r.status == 0, "\(r.stderr)")
            let ppm = try [UInt8](Data(contentsOf: URL(fileURLWithPath: stem + ".ppm")))
            // Binary PPM: "P6\n<w> <h>\n255\n" then RGB bytes.
            var fields: [String] = [], i = 0, current = ""
            while fields.count < 4 && i < ppm.count {
                let c = ppm[i]
                if c == 0x20 || c == 0x0A { if !current.isEmpty { fields.append(current); current = "" } } else { current.append(Character(UnicodeScalar(c))) }
                i += 1
            }
            #expect(fields == ["P6", "\(drawing.width)", "\(drawing.height)", "255"], "\(fields)")
            let raster = drawing.rasterize()
            let pixels = Array(ppm[i...])
            try #require(pixels.count == raster.rgb.count)
            let differences = zip(pixels, raster.rgb).map { abs(Int($0) - Int($1)) }
            let mean = Double(differences.reduce(0, +)) / Double(pixels.count)
            let far = Double(differences.filter { $0 > 64 }.count) / Double(pixels.count)
            #expect(mean < 6 && far < 0.03, "\(name): mean difference \(mean), share off by > 64: \(far)")
        }
        let twoPages = Drawing.pdf(pages: [Samples.histogram().drawing(), Samples.xyPlot().drawing()])
        let path = dir.appendingPathComponent("two.pdf").path
        try Data(twoPages).write(to: URL(fileURLWithPath: path))
        do { let pdfinfo = try TestData.tool("pdfinfo")
            let info = try TestData.run(pdfinfo, [path]).stdout
            #expect(info.split(separator: "\n").contains { $0.hasPrefix("Pages:") && $0.hasSuffix(" 2") }, "\(info)")
        }
    }
}
