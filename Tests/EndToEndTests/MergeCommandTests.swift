import Foundation
import Testing
import ImageCore
import EXRExchange
import RadianceExchange
import TestSupport

/// `scenelinear merge` and `validate` of a bracket through the binary: the EXR's channels as
/// exrheader lists them (flat names by default, opened by Blender as a plain image; layers
/// on request), the HDF5 layers as h5py and xarray read them, a Radiance picture's lower
/// bounds, a fisheye bracket's picture read by evalglare, errors with their exit codes and
/// no output left behind.
@Suite struct MergeCommandTests {
    static func simulate(_ dir: URL, _ extra: [String] = []) throws -> [String] {
        let made = try CLI.run(["simulate", "--scene", "sky-sun", "--size", "256x192", "--bracket", "-4,0,4", "-o", dir.path, "-q"] + extra)
        try #require(made.status == 0, "\(made.stderr)")
        return (1...3).map { dir.appendingPathComponent("sky-sun_\($0).dng").path }
    }

    @Test func mergeToEXRAndHDF5() throws {
        let dir = TestData.temporaryDirectory("merge-cli")
        defer { try? FileManager.default.removeItem(at: dir) }
        let frames = try Self.simulate(dir)
        let exr = dir.appendingPathComponent("merged.exr").path
        let r = try CLI.run(["merge"] + frames + ["-o", exr, "--json"])
        try #require(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(json["schema"] as? String == "scenelinear.merge/1")
        let report = try #require(json["report"] as? [String: Any])
        #expect(report["reference"] as? Int == 1)
        #expect((report["lowerBoundPixels"] as? Int ?? 0) > 0)

        // Our reader: R, G, B as floats, the clip mask = the lower bounds.
        let image = try EXRFile.readSceneLinear(exr)
        #expect(image.width == 256 && image.height == 192)
        let lower = image.clipMask?.filter { $0 != 0 }.count ?? -1
        #expect(lower == report["lowerBoundPixels"] as? Int, "\(lower)")

        // exrheader lists the layers, 32-bit floats.
        let header = try TestData.run(try TestData.tool("exrheader"), [exr]).stdout
        for channel in ["std_R", "std_G", "std_B", "merge_frames", "mask_clipped"] {
            #expect(header.contains("\(channel), 32-bit floating-point"), "\(channel) in \(header)")
        }
        // The frames layer counts 0 (lower bounds) to 3, the standard deviations are ≥ 0 and
        // 0 only at lower bounds — read by the OpenEXR Python bindings.
        let check = try TestData.runPython("""
            import sys, OpenEXR, Imath, numpy as np
            f = OpenEXR.InputFile(sys.argv[1])
            dw = f.header()['dataWindow']; w, h = dw.max.x - dw.min.x + 1, dw.max.y - dw.min.y + 1
            get = lambda c: np.frombuffer(f.channel(c, Imath.PixelType(Imath.PixelType.FLOAT)), dtype=np.float32).reshape(h, w)
            frames, clip, sg = get('merge_frames'), get('mask_clipped'), get('std_G')
            assert set(np.unique(frames)) <= {0, 1, 2, 3}, np.unique(frames)
            assert np.all((frames == 0) == (clip == 1)), 'frames 0 exactly where lower bounds'
            assert np.all(sg >= 0) and np.all(sg[clip == 0] > 0)
            print(int((frames == 3).sum()), int((clip == 1).sum()))
            """, [exr])
        try #require(check.status == 0, "\(check.stderr)")

        let h5 = dir.appendingPathComponent("merged.h5").path
        let h = try CLI.run(["merge"] + frames + ["-o", h5, "-q"])
        try #require(h.status == 0, "\(h.stderr)")
        let read = try TestData.runPython("""
            import sys, h5py, numpy as np, OpenEXR, Imath
            f = h5py.File(sys.argv[1], 'r')
            std, frames, image = f['merge/std'][...], f['merge/frames'][...], f['image'][...]
            assert std.shape == image.shape == (192, 256, 3) and std.dtype == np.float32 and image.dtype == np.float32
            assert frames.dtype == np.uint8 and frames.max() == 3
            assert f['merge'].attrs['reference_frame'] == 2
            e = OpenEXR.InputFile(sys.argv[2])
            sr = np.frombuffer(e.channel('std_R', Imath.PixelType(Imath.PixelType.FLOAT)), dtype=np.float32).reshape(192, 256)
            assert np.array_equal(sr, std[..., 0]), 'the same standard deviations in both files'
            print('ok')
            """, [h5, exr])
        #expect(read.status == 0 && read.stdout.contains("ok"), "\(read.stderr)")

        // --exr-layout layers: std.R, std.G, std.B and mask.clipped.Y; our reader takes either naming.
        let layered = dir.appendingPathComponent("layers.exr").path
        try #require(try CLI.run(["merge"] + frames + ["-o", layered, "--exr-layout", "layers", "-q"]).status == 0)
        let layers = try TestData.run(try TestData.tool("exrheader"), [layered]).stdout
        for channel in ["std.R", "std.G", "std.B", "merge_frames", "mask.clipped.Y"] {
            #expect(layers.contains("\(channel), 32-bit floating-point"), "\(channel) in \(layers)")
        }
        let flatStd = try #require(try EXRFile.readStandardDeviation(exr))
        #expect(flatStd.count == 256 * 192 * 3 && flatStd.contains { $0 > 0 })
        #expect(try EXRFile.readStandardDeviation(layered) == flatStd)
        #expect(try EXRFile.readSceneLinear(layered).clipMask == image.clipMask)
        #expect(try EXRFile.readStandardDeviation(dir.appendingPathComponent("sky-sun.truth.exr").path) == nil)

        // validate with the frames: the merge checked against the truth.
        let v = try CLI.run(["validate"] + frames)
        #expect(v.status == 0, "\(v.stdout)\(v.stderr)")
        #expect(v.stdout.contains("per-pixel 95 % coverage") && v.stdout.contains("result: PASS"))
    }

    @Test func badInputIsRefusedWithoutOutput() throws {
        let dir = TestData.temporaryDirectory("merge-cli-bad")
        defer { try? FileManager.default.removeItem(at: dir) }
        let frames = try Self.simulate(dir)
        let out = dir.appendingPathComponent("out.exr").path
        let single = try CLI.run(["merge", frames[0], "-o", out])
        #expect(single.status == 19 && single.stderr.contains("at least two frames"), "\(single.status) \(single.stderr)")
        // A truncated frame: its own error, naming it.
        let data = try Data(contentsOf: URL(fileURLWithPath: frames[2]))
        let cut = dir.appendingPathComponent("cut.dng").path
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: cut))
        let truncated = try CLI.run(["merge", frames[0], cut, "-o", out])
        #expect(truncated.status == 12 && truncated.stderr.contains("cut.dng"), "\(truncated.status) \(truncated.stderr)")
        // A Radiance picture needs absolute units.
        let hdr = try CLI.run(["merge", frames[0], frames[1], "-o", dir.appendingPathComponent("out.hdr").path])
        #expect(hdr.status == 16 && hdr.stderr.contains("--units"), "\(hdr.status) \(hdr.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("out") || $0.hasPrefix(".") }
        #expect(left.isEmpty, "\(left)")
        // In absolute units, the .hdr is written.
        let ok = try CLI.run(["merge"] + frames + ["-o", dir.appendingPathComponent("lum.hdr").path, "--units", "luminance", "-q"])
        #expect(ok.status == 0, "\(ok.stderr)")
    }

    /// A merge's .hdr: the sun, clipped in every frame, counted in the header and the JSON,
    /// marked in the mask next to the picture (listed and warned of); read by getinfo.
    @Test func radiancePictureRecordsItsLowerBounds() throws {
        let dir = TestData.temporaryDirectory("merge-hdr-bounds")
        defer { try? FileManager.default.removeItem(at: dir) }
        let frames = try Self.simulate(dir)
        let hdr = dir.appendingPathComponent("lum.hdr").path
        let r = try CLI.run(["merge"] + frames + ["-o", hdr, "--units", "luminance", "--json"])
        try #require(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let report = try #require(json["report"] as? [String: Any])
        let bounds = try #require(json["lowerBounds"] as? [String: Any])
        let pixels = try #require(report["lowerBoundPixels"] as? Int)
        #expect(pixels > 0 && bounds["pixels"] as? Int == pixels && bounds["status"] as? String == "lower bounds")
        #expect(bounds["shareOf"] as? String == "pixels" && bounds["share"] as? Double == Double(pixels) / (256 * 192))
        let mask = dir.appendingPathComponent("lum.clip.hdr").path
        #expect(bounds["mask"] as? String == mask)
        #expect(r.stderr.contains("warning: \(hdr) holds \(pixels) lower-bound pixels") && r.stderr.contains("shorter exposure"), "\(r.stderr)")
        let picture = try RadianceFile.read(hdr), marks = try RadianceFile.read(mask)
        #expect(picture.headerValue("SCENELINEAR_LOWER_BOUND_PIXELS") == String(pixels))
        #expect((0..<(256 * 192)).filter { marks.rec2020[3 * $0] > 0.5 }.count == pixels)
        let text = try CLI.run(["merge"] + frames + ["-o", hdr, "--units", "luminance"])
        #expect(text.status == 0 && text.stdout.contains("wrote \(mask) (lower-bound mask of \(hdr))"), "\(text.stdout)")
        guard let bin = try RadianceOutputTests.radianceBin() else {
            try TestRequirement.unavailable("pyradiance (Radiance's getinfo)", installedByBootstrap: true)
        }
        let info = try TestData.run(bin.appendingPathComponent("getinfo"), [hdr, mask])
        #expect(info.status == 0 && info.stdout.contains("SCENELINEAR_LOWER_BOUND_PIXELS=\(pixels)")
                && info.stdout.contains("SCENELINEAR_LOWER_BOUND_MASK=lum.clip.hdr") && info.stdout.contains("SCENELINEAR_MASK_OF=lum.hdr"),
                "\(info.stdout)")
    }

    /// xarray (h5netcdf) puts /merge/std on (y, x, channel) and /merge/frames on (y, x),
    /// the dimensions of /image, with its coordinates (a DataTree aligns them exactly).
    @Test func xarrayShowsTheLayersOnTheImageDimensions() throws {
        let dir = TestData.temporaryDirectory("merge-xarray")
        defer { try? FileManager.default.removeItem(at: dir) }
        let frames = try Self.simulate(dir)
        let h5 = dir.appendingPathComponent("merged.h5").path
        try #require(try CLI.run(["merge"] + frames + ["-o", h5, "-q"]).status == 0)
        let py = try TestData.runPython("""
            import sys, numpy as np, xarray as xr
            m = xr.open_dataset(sys.argv[1], engine='h5netcdf', group='merge')
            print('std', m['std'].dims, 'frames', m['frames'].dims)
            tree = xr.open_datatree(sys.argv[1], engine='h5netcdf')
            image, std = tree.to_dataset()['image'], tree['merge'].to_dataset()['std']
            a, b = xr.align(image, std, join='exact')
            print('aligned', a.shape == b.shape == (192, 256, 3), [str(c) for c in std['channel'].values])
            """, [h5])
        #expect(py.status == 0, "\(py.stderr)")
        #expect(py.stdout.contains("std ('y', 'x', 'channel') frames ('y', 'x')"), "\(py.stdout)")
        #expect(py.stdout.contains("aligned True ['R', 'G', 'B']"), "\(py.stdout)")
    }

    /// Blender 3.4, headless, opens merge's default EXR (flat channel names) as a plain image
    /// of the merge's size whose R, G, B are the values written (rows bottom-up); a name with
    /// a layer dot (std.R) would make it an empty 0×0 multilayer image.
    @Test func blenderOpensTheMergedEXR() throws {
        guard let blender = TestData.toolIfPresent("blender") else {
            try TestRequirement.unavailable("Blender (blender on PATH)", installedByBootstrap: true)
        }
        let dir = TestData.temporaryDirectory("merge-blender")
        defer { try? FileManager.default.removeItem(at: dir) }
        let frames = try Self.simulate(dir)
        let exr = dir.appendingPathComponent("merged.exr").path, out = dir.appendingPathComponent("pixels.f32").path
        try #require(try CLI.run(["merge"] + frames + ["-o", exr, "-q"]).status == 0)
        let script = dir.appendingPathComponent("load.py").path
        try """
            import bpy, array, sys
            img = bpy.data.images.load(sys.argv[-2])
            px = array.array('f', img.pixels[:])
            px.tofile(open(sys.argv[-1], 'wb'))
            print('RESULT', img.type, img.size[0], img.size[1], len(px))
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let b = try TestData.run(blender, ["-b", "--factory-startup", "--python", script, "--", exr, out])
        let w = 256, h = 192
        try #require(b.stdout.contains("RESULT IMAGE \(w) \(h) \(w * h * 4)"), "\(b.stdout)\(b.stderr)")
        let ours = try EXRFile.readSceneLinear(exr).pixels.samples
        let pixels = try Data(contentsOf: URL(fileURLWithPath: out)).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        try #require(pixels.count == w * h * 4)
        var worst: Float = 0
        for y in 0..<h {
            for x in 0..<w {
                for c in 0..<3 {
                    let theirs = pixels[((h - 1 - y) * w + x) * 4 + c], value = ours[(y * w + x) * 3 + c]
                    // Within half-float rounding, should a reader store halves.
                    worst = max(worst, abs(theirs - value) / max(abs(value), 1e-30))
                }
            }
        }
        #expect(worst <= 1.0 / 2048, "largest relative difference \(worst)")
    }

    /// A fisheye bracket (the built-in sky dome with its sun, 180° equidistant) merged to
    /// .hdr with --projection: the square picture with VIEW=, which evalglare reads; its
    /// vertical illuminance agrees with `illuminance` on the merged EXR within 0.1 %. With
    /// --projection equisolid the picture is byte for byte the one `illuminance -o` writes.
    @Test func fisheyeBracketForEvalglare() throws {
        guard let bin = try RadianceOutputTests.radianceBin() else {
            try TestRequirement.unavailable("pyradiance (Radiance's evalglare)", installedByBootstrap: true)
        }
        let dir = TestData.temporaryDirectory("merge-fisheye")
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = try CLI.run(["simulate", "--scene", "sky-dome", "--size", "512x512", "--bracket=-18,-12,-6,0", "-o", dir.path, "-q"])
        try #require(made.status == 0, "\(made.stderr)")
        let frames = (1...4).map { dir.appendingPathComponent("sky-dome_\($0).dng").path }
        let merge = ["merge"] + frames + ["--units", "luminance", "--unchecked-ratios", "-q"]
        let exr = dir.appendingPathComponent("merged.exr").path, hdr = dir.appendingPathComponent("merged.hdr").path
        try #require(try CLI.run(merge + ["-o", exr]).status == 0)
        let r = try CLI.run(merge + ["-o", hdr, "--projection", "equidistant"])
        try #require(r.status == 0, "\(r.stderr)")
        let e = try CLI.run(["illuminance", exr, "--projection", "equidistant", "--json"])
        try #require(e.status == 0, "\(e.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(e.stdout.utf8)) as? [String: Any])
        let ours = try #require(((doc["results"] as? [[String: Any]])?.first?["illuminance"]) as? Double)
        // evalglare -V prints E_v (and exits 1 even when it succeeds).
        let glare = try TestData.run(bin.appendingPathComponent("evalglare"), ["-V", hdr])
        let theirs = try #require(Double(glare.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(glare.stdout) \(glare.stderr)")
        #expect(abs(theirs / ours - 1) < 0.001, "evalglare \(theirs) lx, illuminance \(ours) lx")
        let picture = try RadianceFile.read(hdr)
        #expect(picture.view?.hasPrefix("-vta") == true && picture.headerValue("SCENELINEAR_LOWER_BOUND_PIXELS") == "0")

        let viaMerge = dir.appendingPathComponent("equisolid.hdr").path, viaIlluminance = dir.appendingPathComponent("e.hdr").path
        try #require(try CLI.run(merge + ["-o", viaMerge, "--projection", "equisolid"]).status == 0)
        try #require(try CLI.run(["illuminance", exr, "--projection", "equisolid", "-o", viaIlluminance, "-q"]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: viaMerge)) == (try Data(contentsOf: URL(fileURLWithPath: viaIlluminance))))
        // The fisheye options describe a picture: not for an EXR.
        #expect(try CLI.run(merge + ["-o", exr, "--projection", "equidistant"]).status == 64)
        #expect(try CLI.run(merge + ["-o", hdr, "--fov", "170"]).status == 64)
    }
}
