import DNGContainer
import Foundation
import ImageCore
import Testing
@testable import RawDecode
import TestSupport

/// The JPEG XL sample files of the Adobe DNG SDK 1.7.1 (fetched by
/// `scripts/fetch-dng-sdk-samples.sh`, kept outside the repository) through Stage 1, against
/// a decode in Python that shares none of its code but the JPEG XL decoder: tifffile finds
/// the main raw image and its tiles, each codestream is decoded by the libjxl that Stage 1
/// links (called through ctypes), and numpy assembles the tiles and puts the interleaved
/// fields back in image order. The two must agree bit for bit (SHA-256 of the
/// little-endian samples). The tiles are also decoded by imagecodecs (its own libjxl 0.11):
/// these streams are lossy, and libjxl 0.11 rounds some samples differently, so that
/// comparison allows one code (integers) or a relative 10⁻⁵ (floats).
///
/// `03_jxl_bayer_raw_integer.dng` is a 73 MP Bayer image with RowInterleaveFactor and
/// ColumnInterleaveFactor 2, in 1280×1440 tiles whose rows do not line up with the fields
/// (the row fields meet at row 3584). Skipped when the samples or Python are absent.
@Suite struct DNGSDKSampleTests {
    static let files = ["03_jxl_bayer_raw_integer.dng", "01_jxl_linear_raw_integer.dng", "02_jxl_linear_raw_float.dng"]

    static var available: Bool {
        files.allSatisfy { TestData.dngSDKSampleIfPresent($0) != nil } && (TestData.python != nil || TestRequirement.toolsRequired)
    }

    /// Prints a JSON object: the main raw image's size and factors, the SHA-256 of its
    /// samples (integers as little-endian uint16, floats as little-endian float32) decoded
    /// as described above, and the largest difference (in codes, or relative to the largest
    /// magnitude for floats) and number of differing samples between the two decoders.
    static let script = """
        import sys, json, ctypes, ctypes.util, hashlib, numpy as np, tifffile, imagecodecs

        jxl = ctypes.CDLL(ctypes.util.find_library('jxl'))
        jxl.JxlDecoderCreate.restype = ctypes.c_void_p
        jxl.JxlDecoderCreate.argtypes = [ctypes.c_void_p]
        jxl.JxlDecoderDestroy.argtypes = [ctypes.c_void_p]
        jxl.JxlDecoderCloseInput.argtypes = [ctypes.c_void_p]
        jxl.JxlDecoderSubscribeEvents.argtypes = [ctypes.c_void_p, ctypes.c_int]
        jxl.JxlDecoderSetKeepOrientation.argtypes = [ctypes.c_void_p, ctypes.c_int]
        jxl.JxlDecoderSetInput.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        jxl.JxlDecoderProcessInput.argtypes = [ctypes.c_void_p]
        jxl.JxlDecoderVersion.restype = ctypes.c_uint32

        class PixelFormat(ctypes.Structure):
            _fields_ = [('channels', ctypes.c_uint32), ('type', ctypes.c_int), ('endianness', ctypes.c_int),
                        ('align', ctypes.c_size_t)]
        jxl.JxlDecoderSetImageOutBuffer.argtypes = [ctypes.c_void_p, ctypes.POINTER(PixelFormat), ctypes.c_void_p,
                                                    ctypes.c_size_t]
        FULL_IMAGE, NEED_IMAGE_OUT_BUFFER, TYPE_FLOAT, TYPE_UINT16 = 0x1000, 5, 0, 3

        def decode(data, shape, dtype):
            out = np.zeros(shape, dtype)
            fmt = PixelFormat(shape[2], TYPE_FLOAT if dtype == np.float32 else TYPE_UINT16, 0, 0)
            dec = jxl.JxlDecoderCreate(None)
            try:
                assert jxl.JxlDecoderSubscribeEvents(dec, FULL_IMAGE) == 0
                assert jxl.JxlDecoderSetKeepOrientation(dec, 1) == 0
                assert jxl.JxlDecoderSetInput(dec, data, len(data)) == 0
                jxl.JxlDecoderCloseInput(dec)
                while True:
                    status = jxl.JxlDecoderProcessInput(dec)
                    if status == 0:
                        return out
                    if status == NEED_IMAGE_OUT_BUFFER:
                        assert jxl.JxlDecoderSetImageOutBuffer(dec, ctypes.byref(fmt), out.ctypes.data, out.nbytes) == 0
                    elif status != FULL_IMAGE:
                        raise RuntimeError('libjxl status %d' % status)
            finally:
                jxl.JxlDecoderDestroy(dec)

        with tifffile.TiffFile(sys.argv[1]) as tif:
            pages = [p for top in tif.pages for p in [top, *(top.pages or [])]]
            page = max((p for p in pages if p.photometric in (32803, 34892) and p.subfiletype == 0),
                       key=lambda p: p.imagelength * p.imagewidth)
            assert page.compression == 52546 and page.planarconfig == 1 and page.is_tiled
            h, w, spp = page.imagelength, page.imagewidth, page.samplesperpixel
            th, tw = page.tilelength, page.tilewidth
            rows, columns = page.tags.valueof(50975, 1), page.tags.valueof(52547, 1)
            dtype = np.float32 if page.sampleformat == 3 else np.uint16
            stored = np.zeros((h, w, spp), dtype)
            across = (w + tw - 1) // tw
            largest, differing, magnitude = 0.0, 0, 0.0
            for i, (offset, count) in enumerate(zip(page.dataoffsets, page.databytecounts)):
                tif.filehandle.seek(offset)
                data = tif.filehandle.read(count)
                y, x = (i // across) * th, (i % across) * tw
                tile = decode(data, (th, tw, spp), dtype)[:h - y, :w - x]
                other = imagecodecs.jpegxl_decode(data).reshape(th, tw, spp)[:h - y, :w - x].astype(dtype)
                difference = np.abs(tile.astype(np.float64) - other.astype(np.float64))
                largest, differing = max(largest, difference.max()), differing + np.count_nonzero(difference)
                magnitude = max(magnitude, np.abs(other.astype(np.float64)).max())
                stored[y:y + th, x:x + tw] = tile

        def stored_order(n, factor):
            return np.concatenate([np.arange(k, n, factor) for k in range(factor)])
        image = np.empty_like(stored)
        image[np.ix_(stored_order(h, rows), stored_order(w, columns))] = stored
        version = jxl.JxlDecoderVersion()
        print(json.dumps({
            'height': int(h), 'width': int(w), 'samples': int(spp), 'rows': int(rows), 'columns': int(columns),
            'sha256': hashlib.sha256(image.astype(image.dtype.newbyteorder('<')).tobytes()).hexdigest(),
            'largest': float(largest / (magnitude if dtype == np.float32 and magnitude > 0 else 1)),
            'differing': int(differing),
            'libjxl': '%d.%d.%d' % (version // 1000000, version // 1000 % 1000, version % 1000),
            'imagecodecs': imagecodecs.jpegxl_version()}))
        """

    @Test(.enabled(if: available, "needs scripts/fetch-dng-sdk-samples.sh and the Python test environment"),
          arguments: files)
    func stage1EqualsAnIndependentDecode(_ name: String) throws {
        let url = try TestData.dngSDKSample(name)
        let py = try TestData.runPython(Self.script, [url.path])
        try #require(py.status == 0, "\(py.stderr)")
        let reference = try #require(try JSONSerialization.jsonObject(with: Data(py.stdout.utf8)) as? [String: Any])
        let factors = (reference["rows"] as? Int ?? 0, reference["columns"] as? Int ?? 0)

        let dng = try DNGFile.open(path: url.path)
        let raw = try dng.mainRawImage()
        var stored: StoredImage?
        let seconds = try bestTime(1) { stored = try RawDecoder.decode(dng, ifd: raw) }
        let image = try #require(stored)
        print("\(name): \(image.width)×\(image.height)×\(image.channels), fields \(factors.0)×\(factors.1), decoded in \(String(format: "%.2f", seconds)) s; libjxl \(reference["libjxl"] ?? "?") vs \(reference["imagecodecs"] ?? "?"): \(reference["differing"] ?? "?") samples differ, by at most \(reference["largest"] ?? "?")")
        #expect(image.height == reference["height"] as? Int && image.width == reference["width"] as? Int
                && image.channels == reference["samples"] as? Int)
        let digest: String
        switch image.samples {
        case .uint16(let b): digest = b.samples.withUnsafeBytes { SHA256Digest.hex(of: $0) }
        case .float32(let b): digest = b.samples.withUnsafeBytes { SHA256Digest.hex(of: $0) }
        case .uint32: Issue.record("unexpected 32-bit integer samples"); return
        }
        #expect(digest == reference["sha256"] as? String, "\(name)")
        let largest = try #require(reference["largest"] as? Double)
        #expect(largest <= (image.sampleType == .float32 ? 1e-5 : 1), "imagecodecs' libjxl differs by \(largest)")

        if name == Self.files[0] {
            #expect(factors.0 == 2 && factors.1 == 2)
            #expect(image.width == 10240 && image.height == 7168)
            // The fields span the whole image: the block-by-block path leaves it to `decode`.
            #expect(try RawDecoder.forEachBlock(dng, ifd: raw) { _, _, _, _ in } == false)
        }
    }
}
