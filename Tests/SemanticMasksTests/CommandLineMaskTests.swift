import DNGWriter
import Foundation
import Testing
@testable import Batching
@testable import Engine
@testable import Measuring
@testable import Reporting
import SceneLinearKit
@testable import SimulationCheck
import TestSupport

/// The built `scenelinear` executable, as a user runs it.
enum MaskCLI {
    /// The running test is skipped (or, in CI, fails) when the binary has not been built.
    static func run(_ arguments: [String]) throws -> ProcessResult {
        try TestData.run(try TestData.commandLine(), arguments)
    }
}

/// Semantic masks through the command line: `convert` writes them, other tools (exrheader,
/// h5dump, the Python OpenEXR package, h5py) read them, `stats` measures mask regions,
/// `info` lists them, and damaged masks fail clearly.
@Suite struct CommandLineMaskTests {
    static func write(_ dng: RawDNG, _ dir: URL, _ name: String) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try DNGWriter.write(dng, to: path)
        return path
    }

    /// The layers of a converted LinearRaw DNG, as the tools independent of this project see
    /// them: channels and attributes (exrheader), datasets and attributes (h5dump), and the
    /// values (Python OpenEXR, h5py): equal to the expected values to half rounding
    /// (relative 2^-10 above 2^-12, absolute 2^-22 below), the EXR and HDF5 bit-identical.
    @Test func convertWritesLayersOtherToolsRead() throws {
        let dir = TestData.temporaryDirectory("masks-cli")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = try Self.write(MaskFixtures.linearRaw(), dir, "masks.dng")
        let r = try MaskCLI.run(["convert", dng, "-o", dir.path + "/", "--format", "exr,hdf5", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let report = try #require((document["files"] as? [[String: Any]])?.first)
        let masks = try #require(report["masks"] as? [[String: String]])
        #expect(masks.map { $0["name"] } == ["sky", "glasses", "skin_1", "skin_2"])
        #expect(masks[2]["instanceID"] == "1" && masks[0]["semanticName"] == MaskFixtures.skyURN)
        let exr = dir.appendingPathComponent("masks.exr").path, h5 = dir.appendingPathComponent("masks.h5").path

        do { let exrheader = try TestData.tool("exrheader")
            let header = try TestData.run(exrheader, [exr]).stdout
            for name in ["sky", "glasses", "skin_1", "skin_2"] {
                #expect(header.contains("mask_\(name), 16-bit floating-point, sampling 1 1"), "\(name)")
            }
            #expect(header.contains("sceneLinear:mask.sky (type string): \"\(MaskFixtures.skyURN)\""))
            #expect(header.contains("sceneLinear:mask.skin_2.instanceID (type string): \"2\""))
            #expect(header.contains("sceneLinear:mask.glasses.sourceIFD (type string): \"IFD0/SubIFD2\""))
            #expect(header.contains("sceneLinear:masks (type string): \"sky,glasses,skin_1,skin_2\""))
        }
        do { let h5dump = try TestData.tool("h5dump")
            let dump = try TestData.run(h5dump, ["-H", h5]).stdout
            #expect(dump.contains("GROUP \"masks\""))
            for name in ["sky", "glasses", "skin_1", "skin_2"] { #expect(dump.contains("DATASET \"\(name)\""), "\(name)") }
            #expect(dump.contains("DATASPACE  SIMPLE { ( 64, 40 ) / ( 64, 40 ) }"))
            let sky = try TestData.run(h5dump, ["-A", "-d", "/masks/sky", h5]).stdout
            #expect(sky.contains("16-bit little-endian floating-point"))
            #expect(sky.contains("\"\(MaskFixtures.skyURN)\""))
            #expect(sky.contains("\"IFD0/SubIFD1\""))
        }

        let expected = MaskFixtures.linearRawExpected()
        let names = ["sky", "glasses", "skin_1", "skin_2"]
        let flat = names.flatMap { expected[$0]! }
        let expectedPath = dir.appendingPathComponent("expected.f64").path
        try flat.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: expectedPath))
        let script = """
            import sys, numpy as np, h5py, OpenEXR
            exr_path, h5_path, exp_path = sys.argv[1:4]
            names = ['sky', 'glasses', 'skin_1', 'skin_2']
            expected = np.fromfile(exp_path, dtype='<f8').reshape(len(names), 64, 40)
            def ok(a, e):
                a = a.astype(np.float64)
                big = np.abs(e) > 2**-12
                rel = np.abs(a[big] - e[big]) / np.abs(e[big])
                return bool(rel.max(initial=0) <= 2**-10 and np.abs(a[~big] - e[~big]).max(initial=0) <= 2**-22)
            with OpenEXR.File(exr_path, separate_channels=True) as f:
                ch = f.channels()
                exr = {n: ch['mask_%s' % n].pixels for n in names}
                header = f.header()
                urn = header['sceneLinear:mask.sky']
                iid = header['sceneLinear:mask.skin_1.instanceID']
            with h5py.File(h5_path, 'r') as h:
                g = h['masks']
                layers = list(g.attrs['layers'])
                h5 = {n: g[n][...] for n in names}
                dtype = g['sky'].dtype
                chunks = g['sky'].chunks
                compression = g['sky'].compression
                attrs = dict(g['skin_2'].attrs)
            for i, n in enumerate(names):
                print(n, 'exr-dtype', exr[n].dtype, 'exr-equal', ok(exr[n], expected[i]), 'h5-equal', ok(h5[n], expected[i]),
                      'identical', bool(np.array_equal(exr[n].view(np.uint16), h5[n].view(np.uint16))))
            print('layers', ','.join(layers), 'dtype', dtype, 'chunks', chunks, 'compression', compression)
            print('attrs', attrs['semantic_name'], attrs['instance_id'], attrs['source_ifd'])
            print('exr-attrs', urn, iid)
            """
        let py = try TestData.runPython(script, [exr, h5, expectedPath])
        #expect(py.status == 0, "\(py.stderr)")
        for n in names {
            #expect(py.stdout.contains("\(n) exr-dtype float16 exr-equal True h5-equal True identical True"), "\(py.stdout)")
        }
        #expect(py.stdout.contains("layers sky,glasses,skin_1,skin_2 dtype float16 chunks (16, 40) compression gzip"), "\(py.stdout)")
        #expect(py.stdout.contains("attrs \(MaskFixtures.skinURN) 2 IFD0/SubIFD4"), "\(py.stdout)")
        #expect(py.stdout.contains("exr-attrs \(MaskFixtures.skyURN) 1"), "\(py.stdout)")
    }

    /// `stats` with mask regions on the DNG, its EXR and its HDF5 gives the weighted
    /// statistics numpy computes from the HDF5 file (weights = the mask values): from the EXR
    /// and HDF5 within 1e-9 relative (the same half-float inputs), from the DNG within 2^-9
    /// relative (pixels and weights there are not yet rounded to half: 2^-11 each).
    @Test func statsOfMaskRegionsMatchNumpy() throws {
        let dir = TestData.temporaryDirectory("masks-stats")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = try Self.write(MaskFixtures.linearRaw(), dir, "masks.dng")
        let c = try MaskCLI.run(["convert", dng, "-o", dir.path + "/", "--format", "exr,hdf5"])
        #expect(c.status == 0, "\(c.stderr)")
        let h5 = dir.appendingPathComponent("masks.h5").path
        let layers = ["sky", "glasses", "skin_2"]
        let script = """
            import sys, json, numpy as np, h5py
            with h5py.File(sys.argv[1], 'r') as h:
                rgb = h['image'][...].astype(np.float64)
                masks = {n: h['masks'][n][...].astype(np.float64) for n in sys.argv[2:]}
            y = rgb @ np.array([0.2627, 0.6780, 0.0593])
            out = {}
            for n, w in masks.items():
                w = np.clip(w, 0, 1)
                sel = w > 0
                r = {'count': int(sel.sum()), 'weight': float(w[sel].sum())}
                for q, v in (('R', rgb[..., 0]), ('G', rgb[..., 1]), ('B', rgb[..., 2]), ('Y', y)):
                    mean = float((w[sel] * v[sel]).sum() / w[sel].sum())
                    sd = float(np.sqrt((w[sel] * (v[sel] - mean) ** 2).sum() / w[sel].sum()))
                    r[q] = {'mean': mean, 'sd': sd, 'min': float(v[sel].min()), 'max': float(v[sel].max())}
                out[n] = r
            print(json.dumps(out))
            """
        let py = try TestData.runPython(script, [h5] + layers)
        #expect(py.status == 0, "\(py.stderr)")
        let numpy = try #require(try JSONSerialization.jsonObject(with: Data(py.stdout.utf8)) as? [String: [String: Any]])
        // The glasses mask covers part of the image, with partial weights on its edge.
        #expect((numpy["glasses"]?["count"] as? Int ?? 0) > 100 && (numpy["glasses"]?["count"] as? Int ?? 0) < 64 * 40 / 2)

        for (input, tolerance) in [(dng, 1.0 / 512), (dir.appendingPathComponent("masks.exr").path, 1e-9), (h5, 1e-9)] {
            let s = try MaskCLI.run(["stats", input, "--region", "sky=mask:sky", "--region", "g=mask:\(MaskFixtures.glassesURN)",
                                           "--region", "s=mask:skin_2", "--json", "-q"])
            #expect(s.status == 0, "\(input): \(s.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(s.stdout.utf8)) as? [String: Any])
            let file = try #require((json["files"] as? [[String: Any]])?.first)
            let regions = try #require(file["regions"] as? [[String: Any]])
            #expect(regions.map { $0["name"] as? String } == ["sky", "g", "s"])
            for (region, mask) in zip(regions, layers) {
                let m = try #require(region["measurement"] as? [String: Any])
                let channels = try #require(m["channels"] as? [String: [String: Any]])
                try compare(channels, numpy[mask]!, tolerance: tolerance, label: "\(input) \(mask)")
            }
        }
    }

    func compare(_ channels: [String: [String: Any]], _ numpy: [String: Any], tolerance: Double, label: String) throws {
        func close(_ a: Double?, _ b: Double?) -> Bool {
            guard let a, let b else { return false }
            return abs(a - b) <= tolerance * max(abs(b), 1e-12)
        }
        for q in ["R", "G", "B", "Y"] {
            let ours = try #require(channels[q]), theirs = try #require(numpy[q] as? [String: Double])
            #expect(ours["count"] as? Int == numpy["count"] as? Int, "\(label) \(q) count")
            #expect(close(ours["weight"] as? Double, numpy["weight"] as? Double), "\(label) \(q) weight \(ours["weight"] ?? "") \(numpy["weight"] ?? "")")
            #expect(close(ours["mean"] as? Double, theirs["mean"]), "\(label) \(q) mean \(ours["mean"] ?? "") vs \(theirs["mean"]!)")
            #expect(close(ours["standardDeviation"] as? Double, theirs["sd"]), "\(label) \(q) sd")
            #expect(close(ours["minimum"] as? Double, theirs["min"]), "\(label) \(q) min")
            #expect(close(ours["maximum"] as? Double, theirs["max"]), "\(label) \(q) max")
        }
    }

    /// A mask name the image does not have: the error lists the masks there are; it and a
    /// malformed mask region are usage errors (exit 64: the file is not damaged).
    @Test func unknownMaskNamesTheMasksThereAre() throws {
        let dir = TestData.temporaryDirectory("masks-unknown")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = try Self.write(MaskFixtures.cfa(), dir, "cfa.dng")
        let r = try MaskCLI.run(["stats", dng, "--region", "x=mask:water"])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stdout.contains("the image has no semantic mask \"water\"; its masks: sky (\(MaskFixtures.skyURN)), disc (\(MaskFixtures.discURN))"),
                "\(r.stdout)")
        let bad = try MaskCLI.run(["stats", dng, "--region", "x=mask:"])
        #expect(bad.status == 64, "\(bad.stderr)")
        let none = try MaskCLI.run(["convert", dng, "-o", dir.path + "/plain.exr", "--no-masks"])
        #expect(none.status == 0, "\(none.stderr)")
        let plain = try MaskCLI.run(["stats", dir.path + "/plain.exr", "--region", "s=mask:sky"])
        #expect(plain.status == 64 && plain.stdout.contains("it has no semantic masks at all"), "\(plain.stdout)")
    }

    /// A damaged mask does not vanish: the conversion fails with the mask's own error (corrupt
    /// Deflate data: exit 13), names the mask and suggests --no-masks, and writes nothing;
    /// with --no-masks the image converts without mask layers. `stats` decodes the masks
    /// only when a region uses one.
    @Test func damagedMaskFailsUnlessLeftOut() throws {
        let dir = TestData.temporaryDirectory("masks-damaged")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Self.write(MaskFixtures.linearRaw(), dir, "damaged.dng")
        let glasses = try #require(try DNGFile.open(path: path).semanticMasks.first { $0.maskSubArea != nil })
        let offset = try #require(glasses.layout?.offsets.first)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[offset] = 0xFF   // the zlib header of the Deflate strip
        bytes[offset + 1] = 0xFF
        try bytes.write(to: URL(fileURLWithPath: path))
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let r = try MaskCLI.run(["convert", path, "-o", out.path + "/", "--format", "exr,hdf5"])
        #expect(r.status == 13, "\(r.stderr)")
        #expect(r.stderr.contains("\(path): corrupt Deflate strip 0 in IFD0/SubIFD2"), "\(r.stderr)")
        #expect(r.stderr.contains("mask \(MaskFixtures.glassesURN) in IFD0/SubIFD2; convert with --no-masks to leave the masks out"),
                "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)

        let skipped = try MaskCLI.run(["convert", path, "-o", out.path + "/", "--no-masks"])
        #expect(skipped.status == 0, "\(skipped.stderr)")
        let image = try EXRFile.readSceneLinear(out.appendingPathComponent("damaged.exr").path)
        #expect(image.masks.isEmpty && image.width == 40 && image.height == 64)

        // The analysis commands decode masks only for mask regions.
        let box = try MaskCLI.run(["stats", path, "--region", "box=0,0,10,10"])
        #expect(box.status == 0, "\(box.stdout)")
        let sky = try MaskCLI.run(["stats", path, "--region", "sky=mask:sky"])
        #expect(sky.status == 13 && sky.stdout.contains("IFD0/SubIFD2"), "\(sky.stdout)")
    }

    /// exiftool (independent of this project) reads the writer's mask SubIFDs as DNG 1.6
    /// semantic masks with their names, instance IDs, MaskSubArea and compression.
    @Test func exiftoolReadsTheWrittenMaskIFDs() throws {
        let dir = TestData.temporaryDirectory("masks-exiftool")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Self.write(MaskFixtures.linearRaw(), dir, "masks.dng")
        let exiftool = try TestData.tool("exiftool")
        let out = try TestData.run(exiftool, ["-a", "-G1", "-s", "-SubfileType", "-PhotometricInterpretation", "-SemanticName",
                                              "-SemanticInstanceID", "-MaskSubArea", "-Compression", "-ImageWidth", path]).stdout
        let lines = out.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        for expected in ["[SubIFD1] SubfileType : Semantic Mask", "[SubIFD1] PhotometricInterpretation : Semantic Mask",
                         "[SubIFD1] SemanticName : \(MaskFixtures.skyURN)", "[SubIFD1] ImageWidth : 44",
                         "[SubIFD2] Compression : Adobe Deflate", "[SubIFD2] MaskSubArea : 5 9 44 30",
                         "[SubIFD3] SemanticInstanceID : 1", "[SubIFD4] SemanticInstanceID : 2",
                         "[SubIFD4] SemanticName : \(MaskFixtures.skinURN)"] {
            #expect(lines.contains(expected), "\(expected) not in:\n\(out)")
        }
    }

    /// The real iPhone 12 Pro ProRAW header: `info` lists the sky matte with its mapped
    /// geometry (text and JSON); `convert` fails with exit 12 naming the file.
    @Test func iPhoneHeaderListsItsSkyMatte() throws {
        let url = try TestData.shared("real/iphone12pro_proraw_header_only.dng")
        let text = try MaskCLI.run(["info", url.path])
        #expect(text.status == 0)
        #expect(text.stdout.contains("layer mask.sky: 2016×1512 → ActiveArea 4032×3024 (scale 2 × 2) → output 3024×4032 (orientation 6)"),
                "\(text.stdout)")
        let json = try MaskCLI.run(["info", url.path, "--json"])
        let info = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let mask = try #require((info["semanticMasks"] as? [[String: Any]])?.first)
        #expect(mask["layer"] as? String == "sky" && mask["ifd"] as? String == "IFD0/SubIFD1")
        #expect(mask["semanticName"] as? String == "urn:com:apple:photo:2020:aux:semanticskymatte")
        #expect(mask["maskWidth"] as? Int == 2016 && mask["maskHeight"] as? Int == 1512)
        #expect(mask["coversWidth"] as? Int == 4032 && mask["coversHeight"] as? Int == 3024)
        #expect(mask["outputWidth"] as? Int == 3024 && mask["outputHeight"] as? Int == 4032 && mask["outputOrientation"] as? Int == 6)
        #expect(mask["maskSubAreaUse"] as? String == "absent")

        let out = TestData.temporaryDirectory("masks-iphone")
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try MaskCLI.run(["convert", url.path, "-o", out.path + "/"])
        #expect(r.status == 12, "\(r.stderr)")
        #expect(r.stderr.contains(url.path) && r.stderr.contains("truncated file"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).isEmpty)
    }
}
