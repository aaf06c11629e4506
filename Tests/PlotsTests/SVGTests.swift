import Foundation
import Plots
import Testing
import TestSupport
#if canImport(FoundationXML)
import FoundationXML
#endif

/// SVG output parsed back with an XML parser.
@Suite struct SVGTests {
    /// Elements with their attributes, and the text inside `<text>` and `<title>`.
    final class Collector: NSObject, XMLParserDelegate {
        var elements: [(name: String, attributes: [String: String])] = []
        var texts: [String] = []
        private var inText = false
        private var current = ""

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
                    attributes attributeDict: [String: String] = [:]) {
            elements.append((elementName, attributeDict))
            if elementName == "text" || elementName == "title" {
                inText = true
                current = ""
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if inText { current += string }
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            if elementName == "text" || elementName == "title" {
                texts.append(current)
                inText = false
            }
        }

        func count(_ name: String, class role: String? = nil) -> Int {
            elements.filter { $0.name == name && (role == nil || $0.attributes["class"] == role) }.count
        }
    }

    static func parse(_ bytes: [UInt8]) throws -> Collector {
        let parser = XMLParser(data: Data(bytes))
        let collector = Collector()
        parser.delegate = collector
        let ok = parser.parse()
        #expect(ok, "well-formed XML: \(parser.parserError.map { "\($0)" } ?? "")")
        return collector
    }

    @Test func histogramSVG() throws {
        let plot = Samples.histogram()
        let svg = try Self.parse(try PlotRenderer.render(plot, format: .svg))
        let root = try #require(svg.elements.first)
        #expect(root.name == "svg")
        #expect(root.attributes["width"] == "960" && root.attributes["height"] == "540")
        #expect(root.attributes["viewBox"] == "0 0 960 540")
        #expect(svg.count("path", class: "series") == 4, "one outline per series")
        #expect(svg.count("path", class: "series-fill") == 1, "only luminance is filled")
        #expect(svg.count("path", class: "clip-level") == 1)
        #expect(svg.texts.filter { $0 == plot.title }.count == 2, "<title> and the drawn title")
        #expect(svg.texts.contains("white (clipped above)"))
        #expect(svg.texts.contains("21 388 px (0.18 %)"))
        #expect(svg.texts.contains("\u{2212}8"), "tick labels with a true minus sign")
        // Text is fitted to the width the bitmap font gives it in the PNG.
        let title = try #require(svg.elements.first { $0.name == "text" && $0.attributes["font-weight"] == "bold" })
        #expect(title.attributes["textLength"] == String(BitmapFont.width(of: plot.title, scale: 2, bold: true)))
        // The dashed clip line sits where the raster has it.
        let clip = try #require(svg.elements.first { $0.attributes["class"] == "clip-level" })
        let column = plot.layout().x.pixel(coordinate: 0).rounded(.down) + 0.5
        #expect(clip.attributes["d"]?.hasPrefix("M\(Self.number(column)) ") == true)
        #expect(clip.attributes["stroke-dasharray"] == "6 4")
    }

    @Test func evMapSVGEmbedsTheMapAsPNG() throws {
        let map = Samples.evMap(width: 600, height: 400)
        let svg = try Self.parse(try PlotRenderer.render(map, format: .svg))
        let images = svg.elements.filter { $0.name == "image" }
        #expect(images.count == 2, "the map and the legend bar")
        let href = try #require(images[0].attributes["xlink:href"])
        #expect(href.hasPrefix("data:image/png;base64,"))
        let png = try #require(Data(base64Encoded: String(href.dropFirst("data:image/png;base64,".count))))
        #expect(Array(png.prefix(8)) == PNGEncoder.signature)
        // IHDR width and height: the map image at its own resolution (600 × 400 is enlarged, not resampled).
        let bytes = [UInt8](png)
        #expect(PNGEncoderTests.bigEndian(bytes[16..<20]) == 600 && PNGEncoderTests.bigEndian(bytes[20..<24]) == 400)
        #expect(images[0].attributes["width"] == "600" && images[0].attributes["height"] == "400")
        #expect(svg.texts.contains("grey card") && svg.texts.contains("sky"))
        #expect(svg.texts.contains("0 EV = white"))
        #expect(svg.count("path", class: "region") == 2)
    }

    @Test func xyPlotSVG() throws {
        let plot = Samples.xyPlot()
        let svg = try Self.parse(try PlotRenderer.render(plot, format: .svg))
        #expect(svg.count("path", class: "series") == plot.series.count)
        let bars = plot.series.flatMap(\.points).filter { $0.error != nil }.count
        #expect(svg.count("path", class: "error-bar") == bars)
        #expect(svg.count("path", class: "reference") == 3)
        #expect(svg.texts.contains(plot.title) && svg.texts.contains(plot.yLabel) && svg.texts.contains("no bias"))
        // The y title is turned to read upwards.
        let yTitle = svg.elements.filter { $0.name == "text" }.first { $0.attributes["transform"]?.contains("rotate(-90)") == true }
        #expect(yTitle != nil)
    }

    @Test func specialCharactersAreEscaped() throws {
        let plot = XYPlot(title: "a < b & \"c\" > 'd'", xLabel: "x", yLabel: "y", series: [("s<1>", [(0, 0, nil), (1, 1, nil)])])
        let svg = try Self.parse(try PlotRenderer.render(plot, format: .svg))
        #expect(svg.texts.contains("a < b & \"c\" > 'd'"))
        #expect(svg.texts.contains("s<1>"))
    }

    /// A coordinate as the SVG writer prints it (at most two decimals, no trailing zeros).
    static func number(_ v: Double) -> String {
        let r = (v * 100).rounded() / 100
        return r == r.rounded() ? String(Int(r)) : String(r)
    }
}
