import Foundation
import Testing
import DNGWriter
@testable import Engine
import EXRExchange
@testable import HDF5Exchange
import ImageCore
import SceneLinearKit
@testable import SimulationCheck
import TestSupport

/// `Pipeline.convert` writes an HDF5 file's `/image` chunk by chunk as the rows are made
/// (`HDF5StreamWriter`): the file holds what `HDF5File.write` writes of `developHalf`'s
/// image — the same pixels bit for bit, clip mask, semantic masks, provenance and every
/// attribute but the time of writing — in several orientations, with masks, CFA, chunk
/// sizes and zlib levels; h5py reads the streamed file to the same values; the cases left to
/// the whole-image writer (DefaultScale, uncompressed) give the same contents too.
@Suite struct HDF5StreamTests {
    /// Converts `path` both ways and compares the files' contents; returns whether the
    /// streaming writer wrote it.
    @discardableResult
    static func compare(_ path: String, options: DevelopOptions = DevelopOptions(), hdf5: HDF5Options = HDF5Options(),
                        in dir: URL, _ label: String) throws -> Bool {
        let whole = dir.appendingPathComponent("whole.h5").path, streamed = dir.appendingPathComponent("streamed.h5").path
        let image = try Pipeline.developHalf(path: path, options: options, keepClipMask: true).image
        try HDF5File.write(image, to: whole, options: hdf5)
        let converted = try Pipeline.convert(path: path, options: options, format: .hdf5, export: ExportOptions(hdf5: hdf5), to: streamed)
        let a = try HDF5File.readSceneLinear(whole), b = try HDF5File.readSceneLinear(streamed)
        #expect(a.width == b.width && a.height == b.height, "\(label)")
        #expect(a.pixels.samples.map(\.bitPattern) == b.pixels.samples.map(\.bitPattern), "\(label): pixels differ")
        #expect(a.clipMask == b.clipMask && a.masks == b.masks, "\(label): masks differ")
        #expect(a.provenance == b.provenance && a.encoding == b.encoding && a.exposure == b.exposure, "\(label): metadata differs")
        for object in ["/", "/image", "/clip_mask"] {
            var x = try HDF5File.readAttributes(whole, object: object), y = try HDF5File.readAttributes(streamed, object: object)
            x["created"] = nil
            y["created"] = nil
            #expect(x == y, "\(label): attributes of \(object) differ")
        }
        #expect(converted.description.provenance == image.provenance && converted.clippedPixelCount == image.clippedPixelCount,
                "\(label)")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".h5") || $0.contains(".tmp") }
        #expect(Set(left) == ["whole.h5", "streamed.h5"], "\(label): \(left)")
        return converted.image == nil
    }

    @Test func sameContentsAsTheWholeImageWriter() throws {
        let dir = TestData.temporaryDirectory("hdf5-stream")
        defer { try? FileManager.default.removeItem(at: dir) }
        var chart = try EXRStreamTests.chart()
        let path = dir.appendingPathComponent("chart.dng").path
        for orientation in [1, 6] {
            chart.orientation = orientation
            try DNGWriter.write(chart, to: path)
            #expect(try Self.compare(path, in: dir, "orientation \(orientation)"))
        }
        #expect(try Self.compare(path, hdf5: HDF5Options(compression: .deflate(level: 4), chunkRows: 7), in: dir,
                                 "zlib 4, 7-row chunks"))
        var ignore = DevelopOptions()
        ignore.digest = .ignoreMismatch
        #expect(try Self.compare(path, options: ignore, in: dir, "--ignore-digest (attributes at the end)"))
        let cfa = try StreamingDevelopTests.sunsetCapture(width: 160, height: 120, seed: 7)
        let cfaPath = dir.appendingPathComponent("cfa.dng").path
        try DNGWriter.write(cfa, to: cfaPath)
        #expect(try Self.compare(cfaPath, in: dir, "CFA"))
        // A GainMap in OpcodeList2 (its note counts after the pass: the attributes come last).
        let shaded = try StreamingDevelopTests.sunsetCapture(width: 160, height: 120, seed: 8, cfa: false, lensShading: 0.3)
        try DNGWriter.write(shaded, to: cfaPath)
        #expect(try Self.compare(cfaPath, in: dir, "GainMap"))
        // Written whole: uncompressed, DefaultScale.
        #expect(try !Self.compare(path, hdf5: HDF5Options(compression: .none), in: dir, "uncompressed"))
        chart.defaultScale = [2, 1]
        try DNGWriter.write(chart, to: path)
        #expect(try !Self.compare(path, in: dir, "DefaultScale"))

        // h5py reads the streamed file to the values our reader gives.
        chart.defaultScale = nil
        try DNGWriter.write(chart, to: path)
        let streamed = dir.appendingPathComponent("streamed.h5").path
        try Self.compare(path, in: dir, "for h5py")
        let ours = try HDF5File.readSceneLinear(streamed)
        let script = """
        import sys, h5py, numpy as np
        with h5py.File(sys.argv[1], 'r') as f:
            image = f['image'][...]
            mask = f['clip_mask'][...]
            print(image.dtype, image.shape, int(image.view(np.uint16).astype(np.uint64).sum()), int(mask.astype(np.uint64).sum()),
                  f.attrs['source_sha256'])
        """
        let result = try TestData.runPython(script, [streamed])
        #expect(result.status == 0, "\(result.stderr)")
        let bits = ours.pixels.samples.reduce(UInt64(0)) { $0 + UInt64(Float16($1).bitPattern) }
        let maskSum = (ours.clipMask ?? []).reduce(UInt64(0)) { $0 + UInt64($1) }
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                == "float16 (\(ours.height), \(ours.width), 3) \(bits) \(maskSum) \(ours.provenance.sourceSHA256)")
    }
}
