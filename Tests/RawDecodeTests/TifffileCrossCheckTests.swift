import DNGContainer
import Foundation
import Testing
@testable import RawDecode
import TestSupport

/// Stage 1 against tifffile + imagecodecs in both directions: files tifffile writes
/// (Deflate with predictors, floats, 32-bit integers, planar, big-endian, JPEG XL, JPEG)
/// decode to the arrays tifffile wrote, and DNGs built here decode in tifffile to the
/// samples Stage 1 returns.
@Suite struct TifffileCrossCheckTests {
    /// The samples of `stored` as little-endian bytes of numpy dtype `dtype`.
    static func bytes(_ stored: StoredImage, dtype: String) -> [UInt8] {
        var out: [UInt8] = []
        func le<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        switch (stored.samples, dtype) {
        case (.uint16(let b), "u1"): out = b.samples.map { UInt8(truncatingIfNeeded: $0) }
        case (.uint16(let b), _): b.samples.forEach(le)
        case (.uint32(let b), _): b.samples.forEach(le)
        case (.float32(let b), "f2"): b.samples.forEach { le(Float16($0).bitPattern) }
        case (.float32(let b), _): b.samples.forEach { le($0.bitPattern) }
        }
        return out
    }

    @Test func filesWrittenByTifffileDecodeToTheirArrays() throws {
        let dir = TestData.temporaryDirectory("tifffile-write")
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = """
            import sys, os, json, numpy as np, tifffile
            out = sys.argv[1]; rng = np.random.default_rng(7); manifest = []
            dng = [(50706, 'B', 4, (1, 7, 1, 0), True)]
            def add(name, a, **kw):
                path = os.path.join(out, name + '.dng')
                tifffile.imwrite(path, a, extratags=dng, **kw)
                with tifffile.TiffFile(path) as t:
                    back = t.pages[0].asarray()
                if kw.get('planarconfig') == 'separate':
                    back = np.moveaxis(back, 0, -1)
                back = np.ascontiguousarray(back)
                back.astype(back.dtype.newbyteorder('<')).tofile(path + '.raw')
                manifest.append({'file': path, 'dtype': back.dtype.str[1:], 'shape': list(back.shape)})
            u16 = rng.integers(0, 65536, (45, 61, 3), dtype='u2')
            u8 = rng.integers(0, 256, (45, 61, 3), dtype='u1')
            u32 = rng.integers(0, 2**32, (45, 61, 3), dtype='u4')
            f16 = (rng.standard_normal((45, 61, 3)) * 100).astype('f2')
            f32 = (rng.standard_normal((45, 61, 3)) * 1e3).astype('f4')
            gray = rng.integers(0, 65536, (45, 61), dtype='u2')
            raw = dict(photometric=34892, tile=(32, 16))
            add('u16_deflate_pred2', u16, compression='adobe_deflate', predictor=2, **raw)
            add('u16_deflate_pred2_be', u16, compression='adobe_deflate', predictor=2, byteorder='>', **raw)
            add('u8_deflate_pred2', u8, compression='adobe_deflate', predictor=2, **raw)
            add('u32_deflate_pred2', u32, compression='adobe_deflate', predictor=2, **raw)
            add('u32_uncompressed_be', u32, byteorder='>', **raw)
            add('f16_deflate_pred3', f16, compression='adobe_deflate', predictor=3, **raw)
            add('f16_deflate_pred34894', f16, compression='adobe_deflate', predictor=34894, **raw)
            add('f32_deflate_pred3_be', f32, compression='adobe_deflate', predictor=3, byteorder='>', **raw)
            add('f32_deflate_pred34895', f32, compression='adobe_deflate', predictor=34895, **raw)
            add('f16_uncompressed', f16, photometric=34892, rowsperstrip=7)
            add('u16_deflate_strips', u16, compression='adobe_deflate', photometric=34892, rowsperstrip=7)
            add('u16_planar_deflate', np.moveaxis(u16, -1, 0), compression='adobe_deflate', predictor=2,
                photometric=34892, planarconfig='separate', tile=(32, 16))
            add('gray_deflate_pred2', gray, compression='adobe_deflate', predictor=2, photometric='minisblack', rowsperstrip=5)
            add('u16_jpegxl', u16, compression=52546, compressionargs={'lossless': True}, **raw)
            add('u8_jpeg', u8, compression='jpeg', photometric='rgb', tile=(32, 16))
            json.dump(manifest, open(os.path.join(out, 'manifest.json'), 'w'))
            print(tifffile.__version__)
            """
        let py = try TestData.runPython(script, [dir.path])
        #expect(py.status == 0, "\(py.stderr)")
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("manifest.json"))) as! [[String: Any]]
        #expect(manifest.count == 15)
        for entry in manifest {
            let path = entry["file"] as! String, dtype = entry["dtype"] as! String
            let dng = try DNGFile.open(path: path)
            let stored = try RawDecoder.decodeAnyImage(dng, ifd: dng.images[0])
            let theirs = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + ".raw")))
            #expect(Self.bytes(stored, dtype: dtype) == theirs, "\(URL(fileURLWithPath: path).lastPathComponent) (\(dtype))")
        }
    }

    struct Written {
        var name: String
        var spec: IFDSpec
        var bigEndian = false
    }

    @Test func dngsBuiltHereDecodeTheSameInTifffile() throws {
        let dir = TestData.temporaryDirectory("tifffile-read")
        defer { try? FileManager.default.removeItem(at: dir) }
        func spec(_ bits: Int, float: Bool = false, spp: Int = 3, compression: Int = 8, predictor: TestPredictor = .none,
                  tile: (Int, Int)? = (16, 16), planar: Int = 1, seed: UInt64) -> IFDSpec {
            var s = IFDSpec(image: TestImage.random(width: 37, height: 23, spp: spp, bits: bits, isFloat: float, seed: seed))
            s.compression = compression
            s.predictor = predictor
            s.tile = tile
            s.planar = planar
            return s
        }
        let files: [Written] = [
            Written(name: "u16_pred2", spec: spec(16, predictor: .horizontal(factor: 1), seed: 1)),
            Written(name: "u8_pred2_be", spec: spec(8, predictor: .horizontal(factor: 1), seed: 2), bigEndian: true),
            Written(name: "u32_pred2", spec: spec(32, predictor: .horizontal(factor: 1), seed: 3)),
            Written(name: "f16_pred3", spec: spec(16, float: true, predictor: .floatingPoint(factor: 1), seed: 4)),
            Written(name: "f16_pred34894", spec: spec(16, float: true, predictor: .floatingPoint(factor: 2), seed: 5)),
            Written(name: "f32_pred34895_be", spec: spec(32, float: true, predictor: .floatingPoint(factor: 4), seed: 6), bigEndian: true),
            Written(name: "f32_pred3_strips", spec: spec(32, float: true, spp: 1, predictor: .floatingPoint(factor: 1), tile: nil, seed: 7)),
            Written(name: "f24_deflate", spec: spec(24, float: true, seed: 8)),
            Written(name: "f24_uncompressed_be", spec: spec(24, float: true, compression: 1, seed: 9), bigEndian: true),
            Written(name: "u16_planar_pred2", spec: spec(16, predictor: .horizontal(factor: 1), planar: 2, seed: 10)),
            Written(name: "u12_uncompressed", spec: spec(12, compression: 1, seed: 11)),
        ]
        var jobs: [[String: Any]] = []
        for f in files {
            let path = dir.appendingPathComponent(f.name + ".dng").path
            try TestDNG.build([f.spec], bigEndian: f.bigEndian).write(to: URL(fileURLWithPath: path))
            jobs.append(["file": path])
        }
        let script = """
            import sys, json, numpy as np, tifffile
            for j in json.loads(sys.argv[1]):
                with tifffile.TiffFile(j['file']) as t:
                    page = t.pages[0]; a = page.asarray()
                    if page.planarconfig == 2 and page.samplesperpixel > 1:
                        a = np.moveaxis(a, 0, -1)
                a = np.ascontiguousarray(a)
                a.astype(a.dtype.newbyteorder('<')).tofile(j['file'] + '.raw')
                print(j['file'], a.dtype, a.shape)
            """
        let py = try TestData.runPython(script, [try PythonCodecs.json(jobs)])
        #expect(py.status == 0, "\(py.stderr)")
        #expect(py.stdout.split(separator: "\n").count == files.count, "\(py.stdout)")
        for f in files {
            let path = dir.appendingPathComponent(f.name + ".dng").path
            let dng = try DNGFile.open(path: path)
            let stored = try RawDecoder.decode(dng, ifd: dng.mainRawImage())
            #expect(f.spec.image.matches(stored), "\(f.name): Stage 1 equals what was written")
            // tifffile returns float24 as float32 and 12-bit integers as uint16.
            let dtype = f.spec.image.isFloat ? (f.spec.image.bits == 16 ? "f2" : "f4") : f.spec.image.bits <= 8 ? "u1" : f.spec.image.bits <= 16 ? "u2" : "u4"
            let theirs = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + ".raw")))
            #expect(Self.bytes(stored, dtype: dtype) == theirs, "\(f.name): equal to tifffile")
        }
    }
}
