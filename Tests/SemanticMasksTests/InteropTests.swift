import DNGWriter
import Foundation
import EXRExchange
import Testing
import TestSupport

/// What the interoperability tests need from the machine.
enum Interop {
    /// The test Python has `module` installed.
    static func pythonHas(_ module: String) -> Bool {
        guard let r = try? TestData.runPython("import \(module)") else { return false }
        return r.status == 0
    }

    static var blender: URL? { TestData.toolIfPresent("blender") }
    static var sample: String { TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng").path }
}

/// Files in every colour space and layout, opened by the readers users hand them to:
/// OpenColorIO, Blender, xarray (h5netcdf and netCDF4). Each test is reported as skipped
/// when its reader is not installed.
@Suite struct InteropTests {
    /// For each colour space, OCIO's built-in studio config converts the Rec.2020 file to
    /// that space and the result equals ours to half-float rounding (per channel
    /// |OCIO − ours| ≤ (Σ|M_ij||x_j| + |ours|)·2⁻¹¹ + 2⁻²⁴, with M OCIO's matrix); the
    /// chromaticities agree with the interop ID (and, for D65 spaces, with OCIO's XYZ of the
    /// primaries); OCIO knows every interop ID (scripts/check_color_spaces.py).
    @Test(.enabled(if: Interop.pythonHas("PyOpenColorIO")))
    func colourSpacesMatchOCIO() throws {
        let dir = TestData.temporaryDirectory("ocio")
        defer { try? FileManager.default.removeItem(at: dir) }
        var files: [String] = []
        for color in ["rec2020", "acescg", "aces2065-1", "rec709", "xyz-d65"] {
            let path = dir.appendingPathComponent("\(color).exr").path
            let r = try #require(try MaskCLI.run(["convert", Interop.sample, "-o", path, "--color", color]))
            #expect(r.status == 0, "\(r.stderr)")
            files.append(path)
        }
        let script = TestData.packageRoot.appendingPathComponent("scripts/check_color_spaces.py").path
        let py = try TestData.run(try TestData.requirePython(), [script] + files)
        #expect(py.status == 0, "\(py.stdout)\(py.stderr)")
        for id in ["lin_rec2020_scene", "lin_ap1_scene", "lin_ap0_scene", "lin_rec709_scene", "lin_ciexyzd65_scene"] {
            #expect(py.stdout.contains("\(id) ") && py.stdout.split(separator: "\n").contains { $0.hasPrefix(id) && $0.hasSuffix("ok=True") },
                    "\(py.stdout)")
        }
        do { let exrheader = try TestData.tool("exrheader")
            let aces = dir.appendingPathComponent("aces-container.exr").path
            // ST 2065-4 allows R, G, B (and A) only: the clip-mask channel is left out.
            let r = try #require(try MaskCLI.run(["convert", Interop.sample, "-o", aces, "--color", "aces2065-1", "--exr-compression", "none",
                                                  "--no-exr-clip-mask"]))
            #expect(r.status == 0, "\(r.stderr)")
            let header = try TestData.run(exrheader, [aces]).stdout
            #expect(header.contains("acesImageContainerFlag (type int): 1"), "\(header)")
            #expect(header.contains("adoptedNeutral (type v2f): (0.32168 0.33767)"), "\(header)")
            #expect(header.contains("colorInteropID (type string): \"lin_ap0_scene\""), "\(header)")
            // Compressed, it is no ACES container: no flag.
            let zipped = try TestData.run(exrheader, [files[2]]).stdout
            #expect(!zipped.contains("acesImageContainerFlag"))
        }
    }

    /// Blender 3.4, headless: `bpy.data.images.load` of a file with semantic masks and the
    /// clip layer gives a plain image whose pixels are our R, G, B (bit for bit, rows
    /// bottom-up) and alpha 1.
    @Test(.enabled(if: Interop.blender != nil || TestRequirement.toolsRequired))
    func blenderLoadsThePixels() throws {
        let dir = TestData.temporaryDirectory("blender")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = try CommandLineMaskTests.write(MaskFixtures.linearRaw(), dir, "masks.dng")
        let exr = dir.appendingPathComponent("masks.exr").path
        let r = try #require(try MaskCLI.run(["convert", dng, "-o", exr, "--exr-clip-mask"]))
        #expect(r.status == 0, "\(r.stderr)")
        let contents = try EXRFile.read(exr)
        #expect(contents.channels.keys.contains("mask_sky") && contents.channels.keys.contains("mask_clipped"))
        let out = dir.appendingPathComponent("pixels.f32").path
        let script = """
            import bpy, array, sys
            img = bpy.data.images.load(sys.argv[-2])
            px = array.array('f', img.pixels[:])
            px.tofile(open(sys.argv[-1], 'wb'))
            print('RESULT', img.type, img.size[0], img.size[1], len(px))
            """
        let scriptPath = dir.appendingPathComponent("load.py").path
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let b = try TestData.run(try #require(Interop.blender),
                                 ["-b", "--factory-startup", "--python", scriptPath, "--", exr, out])
        let w = contents.width, h = contents.height
        #expect(b.stdout.contains("RESULT IMAGE \(w) \(h) \(w * h * 4)"), "\(b.stdout)\(b.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        let pixels = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        try #require(pixels.count == w * h * 4)
        var mismatches = 0
        for y in 0..<h {
            for x in 0..<w {
                let blender = ((h - 1 - y) * w + x) * 4   // Blender stores rows bottom-up
                for (c, name) in ["R", "G", "B"].enumerated() where pixels[blender + c] != contents.channels[name]![y * w + x] {
                    mismatches += 1
                }
                if pixels[blender + 3] != 1 { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
    }

    /// xarray: `engine="h5netcdf"` shows /image on dims (y, x, channel) with the channel
    /// names as coordinates, /clip_mask and the masks on (y, x); `engine="netcdf4"` opens the
    /// float32 variant with the same values h5py reads.
    @Test(.enabled(if: Interop.pythonHas("xarray") && Interop.pythonHas("h5netcdf") && Interop.pythonHas("netCDF4")))
    func xarrayOpensHDF5() throws {
        let dir = TestData.temporaryDirectory("xarray")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dng = try CommandLineMaskTests.write(MaskFixtures.linearRaw(), dir, "masks.dng")
        let h16 = dir.appendingPathComponent("half.h5").path, h32 = dir.appendingPathComponent("single.h5").path
        for (path, type) in [(h16, "float16"), (h32, "float32")] {
            let r = try #require(try MaskCLI.run(["convert", dng, "-o", path, "--hdf5-type", type]))
            #expect(r.status == 0, "\(r.stderr)")
        }
        let script = """
            import sys, numpy as np, xarray as xr, h5py
            half, single = sys.argv[1:3]
            ds = xr.open_dataset(half, engine='h5netcdf')
            print('image', ds['image'].dims, ds['image'].dtype, [str(c) for c in ds['channel'].values])
            print('clip', ds['clip_mask'].dims)
            m = xr.open_dataset(half, engine='h5netcdf', group='masks')
            print('masks', sorted(m.data_vars), sorted({v.dims for v in m.data_vars.values()}))
            for engine in ('h5netcdf', 'netcdf4'):
                d = xr.open_dataset(single, engine=engine)
                with h5py.File(single) as f:
                    same = np.array_equal(d['image'].values, f['image'][...])
                print(engine, d['image'].dims, d['image'].dtype, same, list(d['image'].attrs['primaries']) == [0.708, 0.292, 0.17, 0.797, 0.131, 0.046])
            """
        let py = try #require(try TestData.runPython(script, [h16, h32]))
        #expect(py.status == 0, "\(py.stderr)")
        #expect(py.stdout.contains("image ('y', 'x', 'channel') float16 ['R', 'G', 'B']"), "\(py.stdout)")
        #expect(py.stdout.contains("clip ('y', 'x')"), "\(py.stdout)")
        #expect(py.stdout.contains("masks ['glasses', 'skin_1', 'skin_2', 'sky'] [('y', 'x')]"), "\(py.stdout)")
        #expect(py.stdout.contains("h5netcdf ('y', 'x', 'channel') float32 True True"), "\(py.stdout)")
        #expect(py.stdout.contains("netcdf4 ('y', 'x', 'channel') float32 True True"), "\(py.stdout)")
    }
}
