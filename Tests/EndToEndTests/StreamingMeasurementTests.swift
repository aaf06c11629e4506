import Foundation
import Testing
import DNGWriter
@testable import Engine
@testable import Measuring
@testable import Reporting
import SceneLinearKit
@testable import SimulationCheck
import TestSupport
@testable import Plots

/// The measurements of a DNG made without holding its image (each pass develops it again
/// and hands the output over patch by patch, `Pipeline.analyzeStreaming`) equal those of the
/// image developed whole and measured in memory: counts, extremes, percentiles, histograms
/// bit for bit, means and spreads to 1e-12 (their sums are added patch by patch, in another
/// grouping), for rectangles, fractions and polygons, in every orientation, with crops, tiles
/// that do not divide the image, and CFA demosaicing.
@Suite struct StreamingMeasurementTests {
    static func request() throws -> AnalysisRequest {
        var r = AnalysisRequest()
        r.regions = [try Region.parse("top=5%,10%,45%,90%"), try Region.parse("box=10,7,60,51"),
                     try Region.parse("tri=poly:3,4,90,20,30,70")]
        r.histogram = HistogramOptions()
        r.ratios = [("top", "box")]
        return r
    }

    static func close(_ a: Double, _ b: Double) -> Bool { Tolerance.close(a, b, relative: Tolerance.regroupedSum) }

    static func compare(_ path: String, _ label: String, request: AnalysisRequest? = nil) throws {
        let request = try request ?? Self.request()
        let (streamed, picture) = try #require(try Pipeline.analyzeStreaming(path, request: request, picture: 50), "\(label): not streamed")
        let input = try AnalysisInput.load(path, options: request.develop)
        let whole = try Pipeline.analyze(input, request: request)
        try comparePictures(try #require(picture), input.image, maxSize: 50, label)
        let (_, full) = try #require(try Pipeline.analyzeStreaming(path, request: request, picture: 1000))
        try comparePictures(try #require(full), input.image, maxSize: 1000, label + ", unreduced")
        try compareAnalyses(streamed, whole, label)
    }

    /// Two measurements of the same image: order statistics, counts and histograms equal,
    /// means, spreads and ratios to `Tolerance.regroupedSum`.
    static func compareAnalyses(_ streamed: FileAnalysis, _ whole: FileAnalysis, _ label: String) throws {
        #expect(streamed.width == whole.width && streamed.height == whole.height && streamed.sourceSHA256 == whole.sourceSHA256, "\(label)")
        #expect(streamed.noiseModel == whole.noiseModel && streamed.exposureFactor == whole.exposureFactor, "\(label)")
        try #require(streamed.regions.count == whole.regions.count)
        for (a, b) in zip(streamed.regions, whole.regions) {
            let m = a.measurement, n = b.measurement
            #expect(a.name == b.name && m.pixels == n.pixels && m.clippedPixels == n.clippedPixels && m.negativePixels == n.negativePixels,
                    "\(label) \(a.name)")
            #expect(a.histogram == b.histogram, "\(label) \(a.name): histograms differ")
            for q in RegionStatistics.quantities {
                let x = try #require(m.channels[q]), y = try #require(n.channels[q])
                #expect(x.minimum == y.minimum && x.maximum == y.maximum && x.median == y.median && x.percentiles == y.percentiles,
                        "\(label) \(a.name) \(q): order statistics differ")
                #expect(x.count == y.count && x.weight == y.weight, "\(label) \(a.name) \(q)")
                #expect(close(x.mean, y.mean) && close(x.standardDeviation, y.standardDeviation), "\(label) \(a.name) \(q): \(x.mean) \(y.mean)")
                #expect(close(x.meanStandardError ?? .nan, y.meanStandardError ?? .nan), "\(label) \(a.name) \(q)")
            }
        }
        #expect(streamed.ratios.count == whole.ratios.count && zip(streamed.ratios, whole.ratios).allSatisfy { close($0.ratio, $1.ratio) },
                "\(label): ratios differ")
    }

    /// The EV map's luminance reduced while the image streamed by equals the whole image's
    /// reduction (`AreaResample`, sums in `Float`) to `Float` precision; clip flags and counts
    /// exactly (an image no larger than the map is copied exactly).
    static func comparePictures(_ picture: AnalysisPicture, _ image: SceneLinearImage, maxSize: Int, _ label: String) throws {
        let w = image.width, h = image.height
        let r = picture.luminance
        #expect(picture.width == w && picture.height == h && r.sourceWidth == w && r.sourceHeight == h, "\(label)")
        let size = EVMap.mapSize(width: w, height: h, maxSize: maxSize)
        try #require(r.width == size.width && r.height == size.height && r.values.count == size.width * size.height, "\(label)")
        let weights = Rec2020.luminanceWeights
        let luminance = (0..<(w * h)).map { i in
            image.pixels.samples[3 * i] * Float(weights.x) + image.pixels.samples[3 * i + 1] * Float(weights.y)
                + image.pixels.samples[3 * i + 2] * Float(weights.z)
        }
        let flags = try #require(image.clipMask).map { $0 != 0 }
        let reduced = r.isReduced
        let expected = reduced ? AreaResample.average(luminance, width: w, height: h, targetWidth: r.width, targetHeight: r.height) : luminance
        let expectedFlags = reduced ? AreaResample.any(flags, width: w, height: h, targetWidth: r.width, targetHeight: r.height) : flags
        let worst = zip(r.values, expected).map { abs($0 - $1) / max(abs($1), 1e-30) }.max() ?? 0
        #expect(Double(worst) <= (reduced ? Tolerance.floatSum : 0), "\(label): EV map luminance off by \(worst) (relative)")
        let flagged = try #require(r.clipped, "\(label): no clip flags")
        #expect(flagged.count == expectedFlags.count && zip(flagged, expectedFlags).filter { $0 != $1 }.isEmpty,
                "\(label): clip flags differ")
        #expect(r.clippedCount == flags.filter { $0 }.count && r.noValueCount == luminance.filter { !($0 > 0) }.count, "\(label)")
        #expect(flags.contains(true) || label.contains("CFA"), "\(label): the chart should have clipped pixels")
    }

    @Test func streamedEqualsWholeImage() throws {
        let dir = TestData.temporaryDirectory("streaming-measurement")
        defer { try? FileManager.default.removeItem(at: dir) }
        var chart = try TestChart.make(width: 200, height: 136, tileSize: (64, 48)).dng
        chart.defaultCrop = (origin: [6, 4], size: [180, 120])
        chart.defaultUserCrop = [0.1, 0.05, 0.9, 0.95]
        for orientation in [1, 3, 6, 8] {
            chart.orientation = orientation
            let path = dir.appendingPathComponent("chart\(orientation).dng").path
            try DNGWriter.write(chart, to: path)
            try Self.compare(path, "chart orientation \(orientation)")
        }
        var capture = try StreamingDevelopTests.sunsetCapture(width: 210, height: 150, seed: 8, lensShading: 0.4)
        capture.tileSize = (64, 48)
        let cfa = dir.appendingPathComponent("cfa.dng").path
        try DNGWriter.write(capture, to: cfa)
        try Self.compare(cfa, "CFA, rcd")
        var superpixel = try Self.request()
        superpixel.develop.demosaic = .superpixel
        superpixel.regions = []
        superpixel.ratios = []
        try Self.compare(cfa, "CFA, superpixel, whole image", request: superpixel)
    }

    /// `convert --analysis` in one pass (`developForOutput(measuring:)`): the image is the
    /// same bits as a plain conversion's and the measurements those of the image developed
    /// whole, in the usual orientation and rotated.
    @Test func convertAndMeasureInOnePass() throws {
        let dir = TestData.temporaryDirectory("streaming-measurement-convert")
        defer { try? FileManager.default.removeItem(at: dir) }
        var chart = try TestChart.make(width: 200, height: 136, tileSize: (64, 48)).dng
        chart.defaultCrop = (origin: [6, 4], size: [180, 120])
        var paths: [String] = []
        for orientation in [1, 6] {
            chart.orientation = orientation
            let path = dir.appendingPathComponent("chart\(orientation).dng").path
            try DNGWriter.write(chart, to: path)
            paths.append(path)
        }
        var capture = try StreamingDevelopTests.sunsetCapture(width: 210, height: 150, seed: 9, lensShading: 0.4)
        capture.tileSize = (64, 48)
        paths.append(dir.appendingPathComponent("cfa.dng").path)
        try DNGWriter.write(capture, to: paths[2])
        let request = try Self.request()
        // A CFA image is developed whole instead (a second pass would demosaic again).
        #expect(try Pipeline.developForOutput(path: paths[2], options: request.develop, keepClipMask: false, measuring: request) == nil)
        for path in paths.prefix(2) {
            let label = URL(fileURLWithPath: path).lastPathComponent
            let (converted, measured) = try #require(try Pipeline.developForOutput(path: path, options: request.develop, keepClipMask: true,
                                                                                    measuring: request), "\(label)")
            let plain = try ConvertedImage(try Pipeline.developHalf(path: path, options: request.develop, keepClipMask: true))
            let (convertedImage, plainImage) = (try #require(converted.image), try #require(plain.image))
            #expect((try convertedImage.halfPixels(for: label)).map(\.bitPattern) == (try plainImage.halfPixels(for: label)).map(\.bitPattern), "\(label): pixels")
            #expect(convertedImage.clipMask == plainImage.clipMask && converted.clippedPixelCount == plain.clippedPixelCount, "\(label)")
            #expect(convertedImage.provenance == plainImage.provenance, "\(label): provenance")
            let whole = try Pipeline.analyze(AnalysisInput.load(path, options: request.develop), request: request)
            try Self.compareAnalyses(measured, whole, label)
        }
        var masked = request
        masked.regions.append(try Region.parse("sky=mask:sky"))
        #expect(try Pipeline.developForOutput(path: paths[0], options: masked.develop, keepClipMask: false, measuring: masked) == nil)
    }

    /// Our own EXR and HDF5 are measured from their pixels as stored (`EXRFile.readStored`,
    /// `HDF5File.readStored`), widened band by band in each pass: the same results as the
    /// image read whole. A file in another colour space is measured whole (after conversion
    /// to Rec.2020).
    @Test func storedFilesMeasuredAsStored() throws {
        let dir = TestData.temporaryDirectory("streaming-measurement-exr")
        defer { try? FileManager.default.removeItem(at: dir) }
        var chart = try TestChart.make(width: 200, height: 136, tileSize: (64, 48)).dng
        chart.orientation = 6
        let dng = dir.appendingPathComponent("chart.dng").path
        try DNGWriter.write(chart, to: dng)
        // A scanline EXR is decoded again in each pass, a block of chunks at a time (blocks of
        // 1, 16 and 32 rows; 200 rows leave a short last chunk); a tiled or DWA file whole.
        let encodings: [(String, [String])] = ["zips", "piz", "pxr24", "b44", "rle", "none", "dwaa"].map { c in
            ("half-\(c).exr", ["--exr-compression", c])
        } + [("tiled.exr", ["--exr-tiled", "--exr-tile-size", "48"]), ("layers.exr", ["--exr-layout", "layers"])]
        for (name, options) in [("half.exr", ["--exr-clip-mask"]), ("float.exr", ["--exr-clip-mask", "--exr-type", "float"]),
                                ("half.h5", []), ("float.h5", ["--hdf5-type", "float32"])] + encodings {
            let output = dir.appendingPathComponent(name).path
            let converted = try CLI.run(["convert", dng, "-o", output] + options)
            try #require(converted.status == 0, "\(converted.stderr)")
            try Self.compare(output, name)
        }
        // Without a clip mask channel (no clip flags to compare pictures by).
        let plain = dir.appendingPathComponent("no-clip-mask.exr").path
        try #require(try CLI.run(["convert", dng, "-o", plain, "--no-exr-clip-mask"]).status == 0)
        let request = try Self.request()
        let streamed = try #require(try Pipeline.analyzeStreaming(plain, request: request)).analysis
        try Self.compareAnalyses(streamed, try Pipeline.analyze(AnalysisInput.load(plain, options: request.develop), request: request),
                                 "no-clip-mask.exr")
        let aces = dir.appendingPathComponent("aces.exr").path
        try #require(try CLI.run(["convert", dng, "-o", aces, "--color", "acescg"]).status == 0)
        #expect(try Pipeline.analyzeStreaming(aces, request: Self.request()) == nil)
    }

    /// A scanline EXR or an HDF5 file, decoded again in each pass, that is damaged in its
    /// pixel data or cut fails cleanly: the file named, the category's exit code, no result
    /// printed.
    @Test(arguments: ["exr", "h5"]) func damagedStoredFileIsAnError(_ format: String) throws {
        let dir = TestData.temporaryDirectory("streaming-measurement-damaged")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = dir.appendingPathComponent("chart.dng").path
        try DNGWriter.write(try TestChart.make(width: 320, height: 240, tileSize: (64, 48)).dng, to: dng)
        let stored = dir.appendingPathComponent("chart." + format).path
        try #require(try CLI.run(["convert", dng, "-o", stored]).status == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: stored))
        var damaged = bytes
        // Inside the pixel data: past the EXR's header and offsets, before the HDF5 file's
        // metadata at its end.
        let start = bytes.count * (format == "exr" ? 7 : 5) / 10
        damaged.replaceSubrange(start..<(start + 200), with: Data(repeating: 0x55, count: 200))
        let bad = dir.appendingPathComponent("damaged." + format).path, cut = dir.appendingPathComponent("cut." + format).path
        try damaged.write(to: URL(fileURLWithPath: bad))
        try bytes.prefix(bytes.count * 8 / 10).write(to: URL(fileURLWithPath: cut))
        for (path, categories) in [(bad, ["corrupt-data"]), (cut, ["truncated", "corrupt-data"])] {
            for command in ["stats", "histogram"] {
                let r = try CLI.run([command, path, "--json"])
                let document = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
                let file = try #require((document["files"] as? [[String: Any]])?.first)
                let category = try #require(file["errorCategory"] as? String)
                #expect(categories.contains(category) && r.status == (category == "truncated" ? 12 : 13), "\(command) \(path): \(r.status)")
                #expect((file["error"] as? String)?.contains(path) == true && r.stderr.contains(path), "\(r.stderr)")
                #expect((file["regions"] as? [Any])?.isEmpty == true, "\(command) \(path): no result for a damaged file")
            }
        }
    }

    /// A file rewritten in place while it is measured (another process still writing it) is
    /// refused after the pass that saw it change, not measured from two versions; a file
    /// renamed over it is not a change (the passes read the one opened).
    @Test func fileChangedWhileMeasuredIsRefused() throws {
        let dir = TestData.temporaryDirectory("streaming-measurement-changed")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = dir.appendingPathComponent("chart.dng").path
        try DNGWriter.write(try TestChart.make(width: 200, height: 136, tileSize: (64, 48)).dng, to: dng)
        let exr = dir.appendingPathComponent("chart.exr").path, h5 = dir.appendingPathComponent("chart.h5").path
        try #require(try CLI.run(["convert", dng, "-o", exr]).status == 0)
        try #require(try CLI.run(["convert", dng, "-o", h5]).status == 0)
        let request = try Self.request()
        for path in [dng, exr, h5] {
            let opened = try #require(try Pipeline.streamedSource(path, develop: request.develop), "\(path)")
            // After the first pass, the file's modification time moves on (its bytes rewritten in place).
            let rewritten = Pipeline.StreamedSource(passes: ImageScan { prepare, visit in
                try opened.passes.pass(prepare, visit)
                let later = timespec(tv_sec: time(nil) + 100, tv_nsec: 0)
                var times = [later, later]
                #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            }, known: opened.known)
            #expect {
                _ = try Pipeline.measureStreamed(path, rewritten, request: request, picture: nil)
            } throws: { error in
                guard let e = error as? ExchangeError else { return false }
                return e.category == .temporaryFailure && e.path == path && e.category.exitCode == 75
            }
        }
        // Renamed over while open: the watched file is the one opened, unchanged.
        let watch = try #require(FileWatch(path: exr))
        try FileManager.default.removeItem(atPath: exr)
        try #require(try CLI.run(["convert", dng, "-o", exr, "--exr-compression", "piz"]).status == 0)
        #expect(!watch.changed)
    }

    /// A DNG's regions given by semantic masks are streamed (`StreamedMaskRegionTests`); an
    /// input that does not exist is an error either way.
    @Test func missingInputsAreErrors() throws {
        var request = AnalysisRequest()
        request.regions = [try Region.parse("sky=mask:sky")]
        #expect(throws: (any Error).self) { try Pipeline.analyzeStreaming("/nonexistent/file.dng", request: request) }
        request.regions = [try Region.parse("sky=0%,0%,100%,100%")]
        #expect(throws: (any Error).self) { try Pipeline.analyzeStreaming("/nonexistent/file.dng", request: request) }
    }
}
