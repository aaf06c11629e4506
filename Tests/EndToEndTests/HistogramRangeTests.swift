import CaptureSimulation
import Foundation
import Testing
@testable import Measuring
@testable import Reporting
import SceneLinearKit
import SimulationCheck
import TestSupport

/// The automatic histogram range holds every plotted channel, and the chart says per channel
/// what a given range leaves out.
@Suite struct HistogramRangeTests {
    /// The demo's sunset sky: its B values lie about a stop below its Y values.
    static func sunsetSky(range: ClosedRange<Double>? = nil) throws -> (file: FileAnalysis, region: RegionAnalysis) {
        let dir = TestData.temporaryDirectory("histogram-range")
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = try Pipeline.simulate(scene: RenderedScene(BuiltInScene.sunset.description(width: 320, height: 240)),
                                        camera: CameraModel(), name: "sunset", directory: dir.path)
        var request = AnalysisRequest()
        request.regions = [try Region.parse("sky=10%,10%,28%,38%")]
        request.histogram = HistogramOptions(range: range)
        let file = try Pipeline.analyze(out.files["dng"]!, request: request)
        return (file, try #require(file.regions.first))
    }

    @Test func automaticRangeHoldsEveryChannel() throws {
        let (_, sky) = try Self.sunsetSky()
        let h = try #require(sky.histogram)
        for q in ["R", "G", "B", "Y"] {
            let positive = h.pixels - (h.clipped ?? 0) - h.zero[q]! - h.negative[q]!
            // At most the values under each channel's 0.1th percentile fall below; none above.
            #expect(h.below[q]! <= Int(Double(positive - 1) * 0.001), "\(q): \(h.below[q]!) of \(positive) below \(h.edges.first!) EV")
            #expect(h.above[q] == 0, "\(q)")
        }
        // Y alone would start a stop higher and leave half of B below.
        let b = h.counts["B"]!, y = h.counts["Y"]!
        #expect(b.firstIndex { $0 > 0 }! < y.firstIndex { $0 > 0 }!, "B starts below Y: \(h.edges.first!) EV")
    }

    @Test func chartNotesNameEveryChannelOutsideAGivenRange() throws {
        let (file, sky) = try Self.sunsetSky(range: -4 ... -3.5)
        let h = try #require(sky.histogram)
        let plot = try #require(AnalysisCharts.histogram(file, region: sky))
        let notes = Dictionary(uniqueKeysWithValues: plot.notes)
        for (label, counts) in [("below range", h.below), ("above range", h.above)] {
            for q in ["R", "G", "B", "Y"] where counts[q]! > 0 {
                #expect(notes[label]?.contains("\(q)") == true && notes[label]?.contains(AnalysisCharts.grouped(counts[q]!)) == true,
                        "\(label) \(q) \(counts[q]!): \(notes[label] ?? "missing")")
            }
        }
        #expect(h.below["B"]! > 0 && notes["below range"] != nil)
    }
}

/// Report tables and summaries print zero as 0, never as 0.000 or −0.
@Suite struct ReportNumberTests {
    @Test func zeroIsPrintedAsZero() {
        #expect(AnalysisReport.g(0) == "0" && AnalysisReport.g(-0.0) == "0")
        #expect(AnalysisReport.g(1.5e-7) == "1.5e-07" && AnalysisReport.g(.nan) == "—")
        func summary(_ clipped: Int, of pixels: Int) -> String {
            RegionMeasurement(region: "r", channels: [:], clippedPixels: clipped, negativePixels: 0, pixels: pixels).clippingSummary
        }
        #expect(summary(0, of: 100) == "0 clipped (0 %)")
        #expect(summary(1, of: 10_000_000) == "1 clipped (< 0.001 %)")
        #expect(summary(768, of: 768) == "768 clipped (100.000 %)")
    }
}
