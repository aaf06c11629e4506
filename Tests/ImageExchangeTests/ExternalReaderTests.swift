import Foundation
import ImageCore
import EXRExchange
import HDF5Exchange
import Testing
import TestSupport

/// Checks the files with readers this project did not write: the C++ OpenEXR tools, the
/// Python `OpenEXR` package, `h5dump` and h5py.
@Suite("Files read by other programs")
struct ExternalReaderTests {
    /// SHA-256 of the little-endian half bit patterns of one channel of `samples`.
    static func halfDigest(_ samples: [Float], channel: Int) -> String {
        let halves = stride(from: channel, to: samples.count, by: 3).map { Float16(samples[$0]) }
        var bytes = [UInt8]()
        bytes.reserveCapacity(halves.count * 2)
        for h in halves {
            bytes.append(UInt8(h.bitPattern & 0xFF))
            bytes.append(UInt8(h.bitPattern >> 8))
        }
        return bytes.withUnsafeBytes { SHA256Digest.hex(of: $0) }
    }

    @Test("Python OpenEXR reads R, G, B with the same half bits and the Rec.2020 header")
    func pythonOpenEXR() throws {
        let dir = TestData.temporaryDirectory("py-exr")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image(width: 203, height: 71)
        for compression in [EXRCompression.piz, .zip, .none] {
            let path = dir.appendingPathComponent("\(compression).exr").path
            try EXRFile.write(image, to: path, options: EXROptions(compression: compression, includeClipMask: true))
            let script = """
            import sys, hashlib, OpenEXR, numpy as np
            with OpenEXR.File(sys.argv[1], separate_channels=True) as f:
                h = f.header()
                ch = f.channels()
                for name in ("R", "G", "B"):
                    p = ch[name].pixels
                    print(name, p.dtype, p.shape, hashlib.sha256(p.astype("<f2").tobytes()).hexdigest())
                m = ch["mask_clipped"].pixels
                print("mask", int(np.count_nonzero(m)), int((m == 1).sum()))
                c = h["chromaticities"]
                print("chromaticities", " ".join("%.4f" % v for v in c))
                print("colorInteropID", h["colorInteropID"])
                print("exposureFactor", repr(float(np.asarray(h["sceneLinear:exposureFactor"]).ravel()[0])))
            """
            let result = try TestData.runPython(script, [path])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            for (c, name) in ["R", "G", "B"].enumerated() {
                let expected = "\(name) float16 (71, 203) \(Self.halfDigest(image.pixels.samples, channel: c))"
                #expect(lines.contains(expected), "\(compression): \(result.stdout) \(result.stderr)")
            }
            let clipped = image.clipMask!.filter { $0 != 0 }.count
            #expect(lines.contains("mask \(clipped) \(clipped)"), "\(result.stdout)")
            #expect(lines.contains("chromaticities 0.7080 0.2920 0.1700 0.7970 0.1310 0.0460 0.3127 0.3290"), "\(result.stdout)")
            #expect(lines.contains("colorInteropID lin_rec2020_scene"), "\(result.stdout)")
            #expect(lines.contains("exposureFactor 0.8408964152537145"), "\(result.stdout)")
        }
    }

    @Test("h5dump -H shows /image as 16-bit little-endian floating point [H, W, 3]")
    func h5dump() throws {
        let tool = try TestData.tool("h5dump")
        let dir = TestData.temporaryDirectory("h5dump")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("d.h5").path
        try HDF5File.write(Fixture.image(), to: path)
        let result = try TestData.run(tool, ["-H", "-p", "-d", "/image", path])
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout
        #expect(out.contains("16-bit little-endian floating-point"), "\(out)")
        #expect(out.contains("SIMPLE { ( 37, 61, 3 ) / ( 37, 61, 3 ) }"), "\(out)")
        #expect(out.contains("CHUNKED ( 16, 61, 3 )"), "\(out)")
        #expect(out.contains("PREPROCESSING SHUFFLE"), "\(out)")
        #expect(out.contains("COMPRESSION DEFLATE { LEVEL 1 }"), "\(out)")  // the run-length deflate
    }

    @Test("h5py reads /image as float16 with the same bits, and the attributes with Python types")
    func h5py() throws {
        let dir = TestData.temporaryDirectory("h5py")
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = Fixture.image(width: 203, height: 71)
        let path = dir.appendingPathComponent("p.h5").path
        try HDF5File.write(image, to: path)
        let script = """
        import sys, hashlib, h5py, numpy as np
        with h5py.File(sys.argv[1], "r") as f:
            d = f["image"]
            print("image", d.dtype, d.shape, d.chunks, d.compression, d.shuffle)
            a = d[...]
            for c, name in enumerate("RGB"):
                print(name, hashlib.sha256(np.ascontiguousarray(a[:, :, c]).astype("<f2").tobytes()).hexdigest())
            print("color_space", type(d.attrs["color_space"]).__name__, d.attrs["color_space"])
            print("exposure_factor", type(d.attrs["exposure_factor"]).__name__, repr(float(d.attrs["exposure_factor"])))
            print("primaries", d.attrs["primaries"].shape, d.attrs["primaries"].dtype)
            print("camera_to_output", d.attrs["camera_to_output"].shape)
            print("channel_names", list(d.attrs["channel_names"]))
            m = f["clip_mask"]
            print("clip_mask", m.dtype, m.shape, int(np.count_nonzero(m[...])), int(m[...].sum()))
            g = f["dng"]
            print("dng keys", list(g.attrs.keys()))
            print("dng make", type(g.attrs["make"]).__name__, g.attrs["make"])
            print("dng iso", g.attrs["iso"].dtype, int(g.attrs["iso"]))
            print("dng whiteLevel", g.attrs["whiteLevel"].dtype, list(g.attrs["whiteLevel"]))
            print("format_version", int(f.attrs["format_version"]), f.attrs["format"])
        """
        let result = try TestData.runPython(script, [path])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("image float16 (71, 203, 3) (16, 203, 3) gzip True"), "\(result.stdout)")
        for (c, name) in ["R", "G", "B"].enumerated() {
            #expect(lines.contains("\(name) \(Self.halfDigest(image.pixels.samples, channel: c))"), "\(result.stdout)")
        }
        #expect(lines.contains("color_space str lin_rec2020_scene"), "\(result.stdout)")
        #expect(lines.contains("exposure_factor float64 0.8408964152537145"), "\(result.stdout)")
        #expect(lines.contains("primaries (6,) float64"), "\(result.stdout)")
        #expect(lines.contains("camera_to_output (9,)"), "\(result.stdout)")
        #expect(lines.contains("channel_names ['R', 'G', 'B']"), "\(result.stdout)")
        let mask = image.clipMask!
        #expect(lines.contains("clip_mask uint8 (71, 203) \(mask.filter { $0 != 0 }.count) \(mask.reduce(0) { $0 + Int($1) })"),
                "\(result.stdout)")
        let keys = Fixture.dngItems.map { "'\($0.key)'" }.joined(separator: ", ")
        #expect(lines.contains("dng keys [\(keys)]"), "\(result.stdout)")
        #expect(lines.contains("dng make str Test Camera Co."), "\(result.stdout)")
        #expect(lines.contains("dng iso int64 400"), "\(result.stdout)")
        #expect(lines.contains("dng whiteLevel int64 [np.int64(16383), np.int64(16383), np.int64(16383)]"), "\(result.stdout)")
        #expect(lines.contains("format_version 2 SceneLinear"), "\(result.stdout)")
    }
}
