import Foundation
import Testing
import DNGWriter
import EXRExchange
import HDF5Exchange
@testable import Batching
@testable import Engine
@testable import Measuring
@testable import Reporting
import SceneLinearKit
@testable import SimulationCheck
import TestSupport

/// The built `scenelinear` executable, as a user runs it.
enum CLI {
    /// The running test is skipped (or, in CI, fails) when it has not been built.
    static var binary: URL {
        get throws { try TestData.commandLine() }
    }

    static func run(_ arguments: [String]) throws -> ProcessResult {
        try TestData.run(try binary, arguments)
    }
}

@Suite struct CommandLineTests {
    /// `info --json` on the real iPhone 12 Pro ProRAW header finds every tag the issue lists.
    @Test func infoJSONOfTheIPhoneHeader() throws {
        let url = try TestData.shared("real/iphone12pro_proraw_header_only.dng")
        let result = try CLI.run(["info", url.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(json["schema"] as? String == "scenelinear.info/1")
        #expect(json["mainRawImage"] as? String == "IFD0/SubIFD0")
        let metadata = try #require(json["metadata"] as? [String: Any])
        #expect(abs((metadata["baselineExposure"] as? Double ?? 0) - (-0.3022167683)) < 1e-6)
        let calibration = try #require(metadata["calibration"] as? [String: Any])
        let neutral = try #require(calibration["asShotNeutral"] as? [Double])
        #expect(abs(neutral[0] - 0.44898) < 1e-5 && neutral[1] == 1 && abs(neutral[2] - 0.54087) < 1e-5)
        #expect((calibration["colorMatrices"] as? [[Double]])?.count == 2)
        #expect(calibration["illuminants"] as? [Int] == [17, 21])
        let images = try #require(json["images"] as? [[String: Any]])
        let raw = try #require(images.first { $0["path"] as? String == "IFD0/SubIFD0" })
        #expect(raw["photometric"] as? Int == 34892)
        #expect(raw["bitsPerSample"] as? [Int] == [12, 12, 12])
        #expect(raw["role"] as? String == "main image")
        let layout = try #require(raw["layout"] as? [String: Any])
        #expect(layout["blockWidth"] as? Int == 504 && layout["blockHeight"] as? Int == 378)
        #expect(raw["noiseProfile"] as? [Double] == [3e-05, 3e-08])
        let table = try #require(raw["linearizationTable"] as? [Int])
        let csv = try String(contentsOf: url.deletingLastPathComponent().appendingPathComponent("iphone12pro_LinearizationTable.csv"), encoding: .utf8)
        #expect(table == csv.split(whereSeparator: \.isNewline).compactMap { Int($0.trimmingCharacters(in: .whitespaces)) })
        let pgtm = try #require(raw["profileGainTableMap"] as? [String: Any])
        #expect(pgtm["pointsV"] as? Int == 6 && pgtm["pointsH"] as? Int == 8 && pgtm["pointsN"] as? Int == 257)
        let mask = try #require(images.first { $0["role"] as? String == "semantic mask" })
        #expect(mask["semanticName"] as? String == "urn:com:apple:photo:2020:aux:semanticskymatte")
        #expect(mask["path"] as? String == "IFD0/SubIFD1")

        let text = try CLI.run(["info", url.path])
        #expect(text.status == 0)
        #expect(text.stdout.contains("semantic mask: 2016×1512"))
        #expect(text.stdout.contains("LinearizationTable 4096 entries (reaches 65535 at index 1454)"))
    }

    struct Failure: CustomTestStringConvertible, Sendable {
        let file: String
        let exitCode: Int32
        let message: String
        var testDescription: String { file }
    }

    /// Real broken or unsupported files: a specific message, a distinct exit code, no output.
    @Test(arguments: [
        Failure(file: "real/iphone12pro_proraw_header_only.dng", exitCode: 12,
                message: "truncated file: tile 0 of IFD0/SubIFD0 at offset 5575128 (334859 bytes) extends past end of file (64104 bytes)"),
        Failure(file: "real/canon350d_image_data_stripped.dng", exitCode: 13, message: "corrupt image layout in IFD0/SubIFD0"),
        Failure(file: "real/gopro_hero6_vc5_compression9.dng", exitCode: 14, message: "unsupported compression 9"),
    ])
    func realFilesFailClearly(_ f: Failure) throws {
        let url = try TestData.shared(f.file)
        let out = TestData.temporaryDirectory("fail")
        defer { try? FileManager.default.removeItem(at: out) }
        let result = try CLI.run(["convert", url.path, "-o", out.path + "/", "--format", "exr,hdf5"])
        #expect(result.status == f.exitCode, "\(result.stderr)")
        #expect(result.stderr.contains(f.message), "\(result.stderr)")
        #expect(result.stderr.contains(url.lastPathComponent))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
    }

    /// The real Canon CFA DNG converts with every demosaicing method; superpixel output is
    /// half size and equals 2×2 cell means of the Stage 2 samples through the colour matrix.
    @Test func canonCFAConverts() throws {
        let url = try TestData.shared("real/canon_kissx4_cfa14_uncompressed.dng")
        for method in DemosaicMethod.allCases {
            var options = DevelopOptions()
            options.demosaic = method
            let d = try Pipeline.develop(path: url.path, options: options)
            let (w, h) = method == .superpixel ? (867, 578) : (1734, 1156)
            #expect(d.image.width == w && d.image.height == h, "\(method)")
            let finite = d.image.pixels.samples.allSatisfy { $0.isFinite }
            #expect(finite)
            let note = d.image.provenance.processingValue("demosaic")
            #expect(note == .text(method.rawValue))
        }
        let r = try CLI.run(["convert", url.path, "-o", TestData.temporaryDirectory("canon").path + "/", "--demosaic", "superpixel"])
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// Generated bad inputs and bad outputs, each with its own exit code.
    @Test func generatedFailures() throws {
        let dir = TestData.temporaryDirectory("cli-fail")
        defer { try? FileManager.default.removeItem(at: dir) }
        let chart = dir.appendingPathComponent("chart.dng").path
        let made = try CLI.run(["testchart", "-o", chart, "--width", "128", "--height", "96"])
        #expect(made.status == 0, "\(made.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: chart))
        let notTIFF = dir.appendingPathComponent("text.dng").path
        try Data("this is not a raw file at all".utf8).write(to: URL(fileURLWithPath: notTIFF))
        let truncated = dir.appendingPathComponent("cut.dng").path
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: truncated))
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        var future = LinearRawDNG(width: 16, height: 16, samples: Array(repeating: 100, count: 16 * 16 * 3))
        future.dngVersion = [1, 9, 0, 0]
        future.dngBackwardVersion = [1, 8, 0, 0]
        let newer = dir.appendingPathComponent("future.dng").path
        try DNGWriter.write(future, to: newer)

        let cases: [([String], Int32, String)] = [
            (["convert", dir.appendingPathComponent("missing.dng").path, "-o", out.path], 10, "file not found"),
            (["convert", notTIFF, "-o", out.path], 11, "not a TIFF/DNG file"),
            (["convert", truncated, "-o", out.path], 12, "truncated file"),
            (["convert", newer, "-o", out.path], 15, "DNGBackwardVersion 1.8.0.0 needs a newer reader"),
            (["convert", chart, "-o", dir.appendingPathComponent("no/such/dir/x.exr").path], 16, "does not exist"),
            (["convert", chart, "-o", out.path + "/x.tif"], 16, "cannot tell the format"),
            (["convert", chart, "--exposure", "loud"], 64, "loud"),
        ]
        for (arguments, code, message) in cases {
            let r = try CLI.run(arguments)
            #expect(r.status == code, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(message), "\(arguments): \(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)

        let json = try CLI.run(["convert", notTIFF, "-o", out.path, "--json"])
        let error = try #require(try JSONSerialization.jsonObject(with: Data(json.stderr.utf8)) as? [String: Any])
        #expect(error["error"] as? String == "not-dng" && error["exitCode"] as? Int == 11, "exitCode is a number")
        #expect(error["file"] as? String == notTIFF && error["systemError"] == nil, "\(json.stderr)")
        // A missing input: its file and the system's error number (ENOENT).
        let missing = out.path + "/missing.dng"
        let gone = try CLI.run(["info", missing, "--json"])
        let goneError = try #require(try JSONSerialization.jsonObject(with: Data(gone.stderr.utf8)) as? [String: Any])
        #expect(goneError["error"] as? String == "input-unreadable" && goneError["file"] as? String == missing
                && goneError["systemError"] as? Int == Int(ENOENT), "\(gone.stderr)")
    }

    /// A write that fails part way (the file-size limit reached, as on a full disk) while the
    /// EXR or HDF5 file is written chunk by chunk during the conversion: exit code 16, the
    /// message names the destination and the failing call, and nothing is left behind.
    @Test func writeFailingPartWay() throws {
        let prlimit = try TestData.tool("prlimit")
        let dir = TestData.temporaryDirectory("cli-fsize")
        defer { try? FileManager.default.removeItem(at: dir) }
        let chart = dir.appendingPathComponent("chart.dng").path
        let made = try CLI.run(["testchart", "-o", chart, "--width", "960", "--height", "640"])
        #expect(made.status == 0, "\(made.stderr)")
        let outputs = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: true)
        for (name, call) in [("a.exr", "exr_write_scanline_chunk"), ("a.h5", "H5Dwrite_chunk")] {
            let destination = outputs.appendingPathComponent(name).path
            // SIGXFSZ ignored (inherited through exec), so the write fails with EFBIG instead.
            let r = try TestData.run(URL(fileURLWithPath: "/bin/sh"),
                                     ["-c", "trap '' XFSZ; exec \"$0\" --fsize=100000 \"$1\" convert \"$2\" -o \"$3\"",
                                      prlimit.path, try CLI.binary.path, chart, destination])
            #expect(r.status == 16, "\(name): \(r.stderr)")
            #expect(r.stderr.hasPrefix("scenelinear: error: cannot write \(destination): \(call)"), "\(name): \(r.stderr)")
            #expect(r.stderr.contains("File too large"), "\(name): \(r.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: outputs.path).isEmpty, "\(name)")
        }
    }

    /// An .h5 whose global heap object (the root attribute `format`) claims a size far past
    /// its collection — the damage with which libhdf5 1.10.8's own read crashed `stats` — is
    /// refused with exit code 13 and a message naming the file, the attribute and the damage.
    @Test func damagedHDF5GlobalHeap() throws {
        let dir = TestData.temporaryDirectory("cli-heap")
        defer { try? FileManager.default.removeItem(at: dir) }
        let chart = dir.appendingPathComponent("chart.dng").path, good = dir.appendingPathComponent("chart.h5").path
        let made = try CLI.run(["testchart", "-o", chart, "--width", "64", "--height", "48"])
        #expect(made.status == 0, "\(made.stderr)")
        let converted = try CLI.run(["convert", chart, "-o", good])
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(try CLI.run(["stats", good]).status == 0)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        // The collection holding "SceneLinear" as object 1; its size field at +24.
        let signature: [UInt8] = Array("GCOL".utf8), first: [UInt8] = Array("SceneLinear".utf8)
        let found = (0..<(bytes.count - 48)).first { (at: Int) -> Bool in
            guard Array(bytes[at..<(at + 4)]) == signature, bytes[at + 16] == 1 else { return false }
            return Array(bytes[(at + 32)..<(at + 43)]) == first
        }
        let at = try #require(found)
        for i in 0..<8 { bytes[at + 24 + i] = i < 6 ? 0xFF : 0 }
        let damaged = dir.appendingPathComponent("damaged.h5").path
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let r = try CLI.run(["stats", damaged])
        #expect(r.status == 13, "\(r.stderr)")
        #expect(r.stderr.contains("cannot read \(damaged): global heap: attribute format of /: the collection at address \(at): "
                                  + "object 1 of 281474976710655 bytes at collection offset 16 runs past the end of the collection (4096 bytes)"),
                "\(r.stderr)")
    }

    /// Chunk index entries libhdf5 1.10.8 would trust — a /clip_mask chunk whose filter mask
    /// says deflate was skipped (what the fuzzer found: libhdf5 copies the 31 stored bytes as a
    /// 1024-byte chunk), an /image chunk of an uncompressed file stored short — are exit code
    /// 13, naming the file, the dataset, the chunk and the damage.
    @Test func damagedHDF5Chunks() throws {
        let dir = TestData.temporaryDirectory("cli-chunks")
        defer { try? FileManager.default.removeItem(at: dir) }
        let chart = dir.appendingPathComponent("chart.dng").path
        let made = try CLI.run(["testchart", "-o", chart, "--width", "64", "--height", "48"])
        #expect(made.status == 0, "\(made.stderr)")
        for level in ["4", "0"] {
            let good = dir.appendingPathComponent("chart-\(level).h5").path
            let converted = try CLI.run(["convert", chart, "-o", good, "--hdf5-level", level])
            #expect(converted.status == 0, "\(converted.stderr)")
            #expect(try CLI.run(["stats", good]).status == 0)
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
            let expected: String
            if level == "4" {
                let clip = try #require(HDF5Bytes.chunkLeaves(bytes, rank: 2).first)
                #expect(clip.map(\.offsets) == [[0, 0], [16, 0], [32, 0]] && clip[0].size < 1024)
                HDF5Bytes.put(1, &bytes, clip[0].filterMaskField, 4)
                expected = "chunk index: /clip_mask: the chunk at [0, 0] is stored in \(clip[0].size) bytes without deflate (filter mask 0x1 skips every filter); a chunk is 1024 bytes"
            } else {
                let image = try #require(HDF5Bytes.chunkLeaves(bytes, rank: 3).first)
                #expect(image.map(\.offsets) == [[0, 0, 0], [16, 0, 0], [32, 0, 0]] && image[2].size == 6144)
                HDF5Bytes.put(6000, &bytes, image[2].sizeField, 4)
                expected = "chunk index: /image: the chunk at [32, 0, 0] is stored in 6000 bytes without deflate (the dataset has no filters); a chunk is 6144 bytes"
            }
            let damaged = dir.appendingPathComponent("damaged-\(level).h5").path
            try Data(bytes).write(to: URL(fileURLWithPath: damaged))
            let r = try CLI.run(["stats", damaged])
            #expect(r.status == 13, "\(r.stderr)")
            #expect(r.stderr.contains("cannot read \(damaged): \(expected)"), "\(r.stderr)")
        }
    }

    /// A filter the HDF5 reader does not undo (h5py's lzf) is exit code 14, naming the filter.
    @Test func unsupportedHDF5Filter() throws {
        let dir = TestData.temporaryDirectory("cli-filter")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("lzf.h5").path
        let script = """
        import sys, numpy as np, h5py
        with h5py.File(sys.argv[1], "w") as f:
            f.attrs["format"] = "SceneLinear"
            d = f.create_dataset("image", data=np.zeros((8, 6, 3), np.float16), chunks=(4, 6, 3), compression="lzf")
            d.attrs["color_space"] = "lin_rec2020_scene"
        """
        let written = try TestData.runPython(script, [path])
        try #require(written.status == 0, "\(written.stderr)")
        let r = try CLI.run(["stats", path])
        #expect(r.status == 14, "\(r.stderr)")
        #expect(r.stderr.contains("cannot read \(path): filter pipeline: /image: filter 32000 (lzf) is not read; only shuffle (2) and deflate (1) are"),
                "\(r.stderr)")
    }

    /// `convert` to a directory writes both formats; the EXR header carries the colour
    /// metadata (checked with exrheader) and the HDF5 image is a 16-bit float (h5dump).
    @Test func convertWritesTaggedFiles() throws {
        let dir = TestData.temporaryDirectory("cli-convert")
        defer { try? FileManager.default.removeItem(at: dir) }
        let chart = dir.appendingPathComponent("chart.dng").path
        let made = try CLI.run(["testchart", "-o", chart, "--width", "200", "--height", "120"])
        #expect(made.status == 0)
        let r = try CLI.run(["convert", chart, "-o", dir.path, "--format", "exr,hdf5", "--exposure", "baseline", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let report = try #require((document["files"] as? [[String: Any]])?.first)
        #expect(abs((report["exposureFactor"] as? Double ?? 0) - pow(2, -0.5)) < 1e-9)
        #expect((report["outputs"] as? [[String: String]])?.count == 2)

        do { let exrheader = try TestData.tool("exrheader")
            let header = try TestData.run(exrheader, [dir.appendingPathComponent("chart.exr").path]).stdout
            #expect(header.contains("red   (0.708 0.292)"))
            #expect(header.contains("green (0.17 0.797)"))
            #expect(header.contains("blue  (0.131 0.046)"))
            #expect(header.contains("white (0.3127 0.329)"))
            #expect(header.contains("colorInteropID (type string): \"lin_rec2020_scene\""))
            #expect(header.contains("sceneLinear:exposureScaling (type string): \"baseline\""))
        }
        do { let h5dump = try TestData.tool("h5dump")
            let dump = try TestData.run(h5dump, ["-H", "-d", "/image", dir.appendingPathComponent("chart.h5").path]).stdout
            #expect(dump.contains("16-bit little-endian floating-point"))
            #expect(dump.contains("( 120, 200, 3 )"))
        }
    }

    /// `--timings --json` reports the container, develop, hash and export times;
    /// `--exr-zip-level` changes only the deflate level (the pixels read back equal), and a
    /// level outside 0–12 is a usage error; `--threads` changes no byte.
    @Test func timingsAndZipLevel() throws {
        let dir = TestData.temporaryDirectory("cli-streaming")
        defer { try? FileManager.default.removeItem(at: dir) }
        let chart = dir.appendingPathComponent("chart.dng").path
        let made = try CLI.run(["testchart", "-o", chart, "--width", "320", "--height", "200"])
        #expect(made.status == 0)
        func convert(_ name: String, _ extra: [String]) throws -> [String: Any] {
            let r = try CLI.run(["convert", chart, "-o", dir.appendingPathComponent(name).path, "--json", "--timings"] + extra)
            #expect(r.status == 0, "\(r.stderr)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            return try #require((document["files"] as? [[String: Any]])?.first)
        }
        let first = try convert("a.exr", [])
        let t = try #require(first["timings"] as? [String: Any])
        #expect(Set(t.keys) == ["container", "develop", "hash", "export"])
        #expect((t["develop"] as? Double ?? 0) > 0 && (t["container"] as? Double ?? 0) > 0)
        #expect(((t["export"] as? [String: Double])?["exr"] ?? 0) > 0)
        let a = try Data(contentsOf: dir.appendingPathComponent("a.exr"))
        _ = try convert("b.exr", [])
        #expect(a == (try Data(contentsOf: dir.appendingPathComponent("b.exr"))), "the same input gives the same bytes")

        _ = try convert("c.exr", ["--exr-zip-level", "0"])
        let stored = try Data(contentsOf: dir.appendingPathComponent("c.exr"))
        #expect(stored.count > a.count)
        let pa = try EXRFile.readSceneLinear(dir.appendingPathComponent("a.exr").path)
        let pc = try EXRFile.readSceneLinear(dir.appendingPathComponent("c.exr").path)
        #expect(pa.pixels.samples.count == 320 * 200 * 3)
        #expect(pa.pixels.samples.map(\.bitPattern) == pc.pixels.samples.map(\.bitPattern))

        let bad = try CLI.run(["convert", chart, "-o", dir.appendingPathComponent("d.exr").path, "--exr-zip-level", "13"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--exr-zip-level"))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("d.exr").path))

        // --threads: the same bytes on one thread and on three; 0 is a usage error.
        for threads in ["1", "3"] {
            _ = try convert("t\(threads).exr", ["--threads", threads])
            #expect(a == (try Data(contentsOf: dir.appendingPathComponent("t\(threads).exr"))), "--threads \(threads)")
        }
        let stats = try ["1", "3"].map { n in try CLI.run(["stats", chart, "--json", "-q", "--threads", n]).stdout }
        #expect(stats[0] == stats[1] && stats[0].contains("\"median\""))
        let none = try CLI.run(["convert", chart, "-o", dir.appendingPathComponent("e.exr").path, "--threads", "0"])
        #expect(none.status == 64 && none.stderr.contains("--threads must be 1...1024"), "\(none.stderr)")
    }

    /// Python readers (OpenEXR and h5py, independent of this project) read the converted
    /// chart equal to the exact expectation.
    @Test func pythonReadersSeeTheExpectedValues() throws {
        let dir = TestData.temporaryDirectory("cli-python")
        defer { try? FileManager.default.removeItem(at: dir) }
        let chartPath = dir.appendingPathComponent("chart.dng").path
        let chart = try TestChart.make(width: 160, height: 120, tileSize: (64, 64))
        try DNGWriter.write(chart.dng, to: chartPath)
        let r = try CLI.run(["convert", chartPath, "-o", dir.path, "--format", "exr,hdf5"])
        try #require(r.status == 0, "convert failed: \(r.stderr)")
        let developed = try Pipeline.develop(path: chartPath)
        let (expected, _) = chart.expected(cameraToOutput: developed.color.matrix)
        let expectedPath = dir.appendingPathComponent("expected.f64").path
        try expected.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: expectedPath))
        let script = """
            import sys, numpy as np, h5py, OpenEXR
            exr_path, h5_path, exp_path = sys.argv[1:4]
            expected = np.fromfile(exp_path, dtype='<f8').reshape(120, 160, 3)
            with OpenEXR.File(exr_path, separate_channels=True) as f:
                ch = f.channels()
                exr = np.stack([ch[c].pixels for c in 'RGB'], axis=-1)
                interop = f.header().get('colorInteropID')  # the header is only valid while the file is open
            with h5py.File(h5_path, 'r') as h:
                img = h['image']
                assert img.dtype == np.float16, img.dtype
                h5 = img[...]
                cs = img.attrs['color_space']
                factor = float(img.attrs['exposure_factor'])
                make = h['dng'].attrs['make']
            def ok(a):
                a = a.astype(np.float64)
                big = np.abs(expected) > 2**-12
                rel = np.abs(a[big] - expected[big]) / np.abs(expected[big])
                return rel.max() <= 2**-10 and np.abs(a[~big] - expected[~big]).max(initial=0) <= 2**-22
            print('exr-dtype', exr.dtype)
            print('exr-equal', ok(exr))
            print('h5-equal', ok(h5))
            print('exr-h5-identical', bool(np.array_equal(exr.view(np.uint16), h5.view(np.uint16))))
            print('color-space', cs, 'factor', factor, 'make', make)
            print('interop', interop)
            """
        let py = try TestData.runPython(script, [dir.appendingPathComponent("chart.exr").path,
                                                       dir.appendingPathComponent("chart.h5").path, expectedPath])
        #expect(py.status == 0, "\(py.stderr)")
        #expect(py.stdout.contains("exr-dtype float16"), "\(py.stdout)")
        #expect(py.stdout.contains("exr-equal True"), "\(py.stdout)")
        #expect(py.stdout.contains("h5-equal True"), "\(py.stdout)")
        #expect(py.stdout.contains("exr-h5-identical True"), "\(py.stdout)")
        #expect(py.stdout.contains("color-space lin_rec2020_scene factor 1.0 make SceneLinear"), "\(py.stdout)")
        #expect(py.stdout.contains("interop lin_rec2020_scene"), "\(py.stdout)")
    }
}
