internal import CTIFF
import Foundation
import ImageCore
import LosslessJPEG

/// Writes DNG files through libtiff.
///
/// The samples are packed (or lossless-JPEG encoded) here and handed to libtiff as raw
/// tiles or strips, so the stored bytes are exactly what this writer decided. Tags libtiff
/// 4.5 does not know (ForwardMatrix, NoiseProfile, BaselineExposureOffset, ...) are
/// registered before use. The file is written to a temporary name and renamed on success.
public enum DNGWriter {
    /// Writes `dng` to `path`.
    /// - Throws: `DNGWriteError` or `OutputError`.
    public static func write(_ dng: LinearRawDNG, to path: String) throws {
        try validate(dng, path: path)
        let blocks = try encodeBlocks(dng, path: path)
        try AtomicFile.write(to: path) { temporary in
            try writeFile(dng, blocks: blocks, to: temporary, reportedPath: path)
        }
    }

    static func validate(_ d: LinearRawDNG, path: String) throws {
        func fail(_ reason: String) -> DNGWriteError { DNGWriteError(path: path, reason: reason) }
        let spp = d.samplesPerPixel
        guard d.width > 0, d.height > 0, d.samples.count == d.width * d.height * spp else {
            throw fail("\(d.samples.count) samples do not fill a \(d.width)×\(d.height)×\(spp) image")
        }
        if let pattern = d.cfaPattern {
            guard pattern.count == 4, pattern.allSatisfy({ $0 <= 2 }), Set(pattern).count == 3 else {
                throw fail("CFAPattern \(pattern) is not a 2×2 pattern of red, green and blue")
            }
            if d.cfaJPEGLayout == .twoComponents, let t = d.tileSize, t.width % 2 != 0 {
                throw fail("two-component lossless JPEG needs an even tile width")
            }
            if d.cfaJPEGLayout == .twoComponents, d.tileSize == nil, d.width % 2 != 0 {
                throw fail("two-component lossless JPEG needs an even image width")
            }
        }
        guard (8...16).contains(d.bitsPerSample) else { throw fail("\(d.bitsPerSample)-bit samples (8–16 supported)") }
        let limit = UInt16(truncatingIfNeeded: (1 << d.bitsPerSample) - 1)
        if d.bitsPerSample < 16, let bad = d.samples.first(where: { $0 > limit }) {
            throw fail("sample \(bad) does not fit \(d.bitsPerSample) bits")
        }
        if case .losslessJPEG(let p) = d.compression, !(1...7).contains(p) { throw fail("predictor \(p)") }
        if let t = d.tileSize, t.width <= 0 || t.height <= 0 || t.width % 16 != 0 || t.height % 16 != 0 {
            throw fail("tile size \(t.width)×\(t.height) must be positive multiples of 16 (TIFF 6.0)")
        }
        if let t = d.linearizationTable, t.isEmpty || t.count > 65536 { throw fail("LinearizationTable of \(t.count) entries") }
        guard d.whiteLevel.count == spp else { throw fail("WhiteLevel needs \(spp) value(s)") }
        let blackCount = (d.blackLevelRepeatDim.map { $0.rows * $0.cols } ?? 1) * spp
        guard d.blackLevel.count == blackCount else {
            throw fail("BlackLevel has \(d.blackLevel.count) values; the repeat pattern needs \(blackCount)")
        }
        guard d.semanticMasks.count <= 15 else { throw fail("\(d.semanticMasks.count) semantic masks (at most 15)") }
        for (i, m) in d.semanticMasks.enumerated() {
            guard m.width > 0, m.height > 0, m.samples.count == m.width * m.height else {
                throw fail("semantic mask \(i): \(m.samples.count) samples do not fill \(m.width)×\(m.height)")
            }
            if let a = m.maskSubArea, a.count != 4 || a.contains(where: { $0 < 0 }) {
                throw fail("semantic mask \(i): MaskSubArea needs 4 non-negative values")
            }
        }
        guard d.colorMatrices.count == d.calibrationIlluminants.count, (1...3).contains(d.colorMatrices.count),
              d.colorMatrices.allSatisfy({ $0.count == 9 }) else {
            throw fail("need 1–3 ColorMatrices of 9 values, one per calibration illuminant")
        }
    }

    // MARK: stored bytes

    /// The stored bytes of every tile or strip, in file order.
    static func encodeBlocks(_ d: LinearRawDNG, path: String) throws -> [[UInt8]] {
        let (bw, bh, across, down) = blockGrid(d)
        let spp = d.samplesPerPixel
        return try Parallel.map(across * down) { index -> [UInt8] in
            let x0 = (index % across) * bw, y0 = (index / across) * bh
            // Tiles are stored full size (edge pixels replicated, keeping the CFA phase);
            // strips only hold their rows.
            let rows = d.tileSize == nil ? min(bh, d.height - y0) : bh
            var block = [UInt16](repeating: 0, count: bw * rows * spp)
            for r in 0..<rows {
                var sy = y0 + r
                while sy >= d.height { sy -= spp == 1 ? 2 : 1 }
                for c in 0..<bw {
                    var sx = x0 + c
                    while sx >= d.width { sx -= spp == 1 ? 2 : 1 }
                    for p in 0..<spp { block[(r * bw + c) * spp + p] = d.samples[(sy * d.width + sx) * spp + p] }
                }
            }
            switch d.compression {
            case .uncompressed:
                return pack(block, width: bw * spp, rows: rows, bits: d.bitsPerSample, byteOrder: d.byteOrder)
            case .losslessJPEG(let predictor):
                // CFA data may be coded as a half-width frame of two-component pixels.
                let components = spp == 1 && d.cfaJPEGLayout == .twoComponents ? 2 : spp
                let frameWidth = bw * spp / components
                do {
                    return try LJ92Encoder.encode(block, width: frameWidth, height: rows, components: components,
                                                  precision: d.bitsPerSample, predictor: predictor)
                } catch {
                    throw DNGWriteError(path: path, reason: "lossless-JPEG encoding of block \(index) failed: \(error)")
                }
            }
        }
    }

    static func blockGrid(_ d: LinearRawDNG) -> (width: Int, height: Int, across: Int, down: Int) {
        if let t = d.tileSize {
            return (t.width, t.height, (d.width + t.width - 1) / t.width, (d.height + t.height - 1) / t.height)
        }
        let rows = max(1, min(d.rowsPerStrip, d.height))
        return (d.width, rows, 1, (d.height + rows - 1) / rows)
    }

    /// Packs rows of `samplesPerRow` samples: 8-bit as bytes, 16-bit in the file's byte
    /// order, other depths MSB-first with each row starting on a byte boundary.
    static func pack(_ samples: [UInt16], width samplesPerRow: Int, rows: Int, bits: Int, byteOrder: DNGByteOrder) -> [UInt8] {
        let perRow = samplesPerRow
        let rowBytes = (perRow * bits + 7) / 8
        var out = [UInt8](repeating: 0, count: rowBytes * rows)
        for r in 0..<rows {
            let base = r * rowBytes
            switch bits {
            case 8:
                for i in 0..<perRow { out[base + i] = UInt8(truncatingIfNeeded: samples[r * perRow + i]) }
            case 16:
                for i in 0..<perRow {
                    let v = samples[r * perRow + i]
                    let (first, second) = byteOrder == .littleEndian ? (UInt8(v & 0xFF), UInt8(v >> 8)) : (UInt8(v >> 8), UInt8(v & 0xFF))
                    out[base + 2 * i] = first
                    out[base + 2 * i + 1] = second
                }
            default:
                var acc: UInt64 = 0
                var filled = 0
                var at = base
                for i in 0..<perRow {
                    acc = acc << UInt64(bits) | UInt64(samples[r * perRow + i])
                    filled += bits
                    while filled >= 8 {
                        filled -= 8
                        out[at] = UInt8(truncatingIfNeeded: acc >> UInt64(filled))
                        at += 1
                    }
                }
                if filled > 0 { out[at] = UInt8(truncatingIfNeeded: acc << UInt64(8 - filled)) }
            }
        }
        return out
    }

    // MARK: libtiff

    static func writeFile(_ d: LinearRawDNG, blocks: [[UInt8]], to temporary: String, reportedPath: String) throws {
        let file = try TIFFFile(path: temporary, mode: d.byteOrder == .littleEndian ? "wl" : "wb", reportedPath: reportedPath)
        let tif = file.handle
        let t = TagSetter(tif: tif, path: reportedPath)
        guard ctiff_register_dng_fields(tif) == 0 else {
            throw DNGWriteError(path: reportedPath, reason: "cannot register DNG tags: \(file.message)")
        }
        if d.structure == .previewWithRawSubIFD {
            try t.u32(UInt32(TIFFTAG_SUBFILETYPE), 1)
            try writeCameraTags(d, t)
            try writePreview(d, tif: tif, t: t)
            try t.check(ctiff_set_subifd_count(tif, UInt16(1 + d.semanticMasks.count)), "SubIFDs")
            try t.check(TIFFWriteDirectory(tif), "TIFFWriteDirectory (preview IFD 0): \(file.message)")
            try writeRawIFD(d, blocks: blocks, tif: tif, t: t, includeCameraTags: false)
        } else {
            try writeRawIFD(d, blocks: blocks, tif: tif, t: t, includeCameraTags: true)
            if !d.semanticMasks.isEmpty {
                try t.check(ctiff_set_subifd_count(tif, UInt16(d.semanticMasks.count)), "SubIFDs")
            }
        }
        try t.check(TIFFWriteDirectory(tif), "TIFFWriteDirectory (raw IFD): \(file.message)")
        for (i, mask) in d.semanticMasks.enumerated() {
            try writeMaskIFD(mask, tif: tif, t: t)
            try t.check(TIFFWriteDirectory(tif), "TIFFWriteDirectory (semantic mask \(i)): \(file.message)")
        }
        if let error = file.close() {
            throw DNGWriteError(path: reportedPath, reason: "libtiff: \(error)")
        }
    }

    static func writeCameraTags(_ d: LinearRawDNG, _ t: TagSetter) throws {
        try t.numbers(UInt32(TIFFTAG_DNGVERSION), d.dngVersion.map(Double.init))
        try t.numbers(UInt32(TIFFTAG_DNGBACKWARDVERSION), d.dngBackwardVersion.map(Double.init))
        try t.string(UInt32(TIFFTAG_MAKE), d.make)
        try t.string(UInt32(TIFFTAG_MODEL), d.model)
        try t.string(UInt32(TIFFTAG_UNIQUECAMERAMODEL), d.uniqueCameraModel)
        try t.string(UInt32(TIFFTAG_SOFTWARE), SceneLinearVersion.software)
        try t.u16(UInt32(TIFFTAG_ORIENTATION), UInt16(d.orientation))
        let illuminantTags: [UInt32] = [50778, 50779, 52529]
        let matrixTags: [UInt32] = [50721, 50722, 52531]
        let forwardTags: [UInt32] = [50964, 50965, 52532]
        for i in d.colorMatrices.indices {
            try t.numbers(illuminantTags[i], [Double(d.calibrationIlluminants[i])])
            try t.numbers(matrixTags[i], d.colorMatrices[i])
            if let fm = d.forwardMatrices, i < fm.count { try t.numbers(forwardTags[i], fm[i]) }
        }
        if let v = d.analogBalance { try t.numbers(50727, v) }
        if let v = d.asShotNeutral { try t.numbers(50728, v) }
        if let v = d.asShotWhiteXY { try t.numbers(50729, v) }
        if let v = d.baselineExposure { try t.numbers(50730, [v]) }
        if let v = d.baselineExposureOffset { try t.numbers(51109, [v]) }
        if let v = d.exposureTime { try t.numbers(33434, [v]) }
        if let v = d.fNumber { try t.numbers(33437, [v]) }
        if let v = d.iso { try t.numbers(34855, [Double(v)]) }
        if let v = d.dateTimeOriginal { try t.string(36867, v) }
        if let v = d.offsetTimeOriginal { try t.string(36881, v) }
        if let v = d.subSecTimeOriginal { try t.string(37521, v) }
        // IFD 0 holds the digest of the main raw image, wherever that is.
        let digest = newRawImageDigest(d)
        try t.check(digest.withUnsafeBufferPointer { ctiff_set_bytes(t.tif, 51111, 16, $0.baseAddress) }, "setting NewRawImageDigest")
    }

    static func writeRawIFD(_ d: LinearRawDNG, blocks: [[UInt8]], tif: OpaquePointer, t: TagSetter, includeCameraTags: Bool) throws {
        try t.check(ctiff_register_dng_fields(tif) == 0 ? 1 : 0, "cannot register DNG tags for the raw IFD")
        try t.u32(UInt32(TIFFTAG_SUBFILETYPE), 0)
        if includeCameraTags { try writeCameraTags(d, t) }
        try t.u32(UInt32(TIFFTAG_IMAGEWIDTH), UInt32(d.width))
        try t.u32(UInt32(TIFFTAG_IMAGELENGTH), UInt32(d.height))
        try t.u16(UInt32(TIFFTAG_BITSPERSAMPLE), UInt16(d.bitsPerSample))
        try t.u16(UInt32(TIFFTAG_SAMPLESPERPIXEL), UInt16(d.samplesPerPixel))
        if let pattern = d.cfaPattern {
            try t.u16(UInt32(TIFFTAG_PHOTOMETRIC), 32803)
            try t.numbers(33421, [2, 2])                   // CFARepeatPatternDim
            try t.numbers(33422, pattern.map(Double.init)) // CFAPattern
            try t.numbers(50710, [0, 1, 2])                // CFAPlaneColor
            try t.numbers(50711, [1])                      // CFALayout: rectangular
        } else {
            try t.u16(UInt32(TIFFTAG_PHOTOMETRIC), 34892)
        }
        try t.u16(UInt32(TIFFTAG_PLANARCONFIG), UInt16(PLANARCONFIG_CONTIG))
        try t.u16(UInt32(TIFFTAG_SAMPLEFORMAT), UInt16(SAMPLEFORMAT_UINT))
        switch d.compression {
        case .uncompressed: try t.u16(UInt32(TIFFTAG_COMPRESSION), UInt16(COMPRESSION_NONE))
        case .losslessJPEG:
            try t.u16(UInt32(TIFFTAG_COMPRESSION), UInt16(COMPRESSION_JPEG))
            // The stream is written raw; keep libtiff's lossy JPEG codec from adding JPEGTables.
            _ = ctiff_set_u32(tif, UInt32(TIFFTAG_JPEGTABLESMODE), 0)
        }
        if let tile = d.tileSize {
            try t.u32(UInt32(TIFFTAG_TILEWIDTH), UInt32(tile.width))
            try t.u32(UInt32(TIFFTAG_TILELENGTH), UInt32(tile.height))
        } else {
            try t.u32(UInt32(TIFFTAG_ROWSPERSTRIP), UInt32(blockGrid(d).height))
        }
        if let table = d.linearizationTable { try t.numbers(50712, table.map(Double.init)) }
        if let dim = d.blackLevelRepeatDim { try t.numbers(50713, [Double(dim.rows), Double(dim.cols)]) }
        try t.numbers(50714, d.blackLevel)
        if let v = d.blackLevelDeltaH { try t.numbers(50715, v) }
        if let v = d.blackLevelDeltaV { try t.numbers(50716, v) }
        try t.numbers(50717, d.whiteLevel.map(Double.init))
        if let a = d.activeArea { try t.numbers(50829, [a.top, a.left, a.bottom, a.right].map(Double.init)) }
        if let crop = d.defaultCrop {
            try t.numbers(50719, crop.origin)
            try t.numbers(50720, crop.size)
        }
        if let v = d.defaultUserCrop { try t.numbers(51125, v) }
        if let v = d.defaultScale { try t.numbers(50718, v) }
        if let n = d.noiseProfile { try t.numbers(51041, n) }
        for (number, bytes) in d.opcodeLists.sorted(by: { $0.key < $1.key }) {
            let tag: UInt32 = number == 1 ? 51008 : number == 2 ? 51009 : 51022
            try t.check(bytes.withUnsafeBufferPointer { ctiff_set_bytes(tif, tag, UInt32($0.count), $0.baseAddress) },
                        "setting OpcodeList\(number)")
        }
        for (i, block) in blocks.enumerated() {
            let written = block.withUnsafeBytes { raw -> Int in
                let p = UnsafeMutableRawPointer(mutating: raw.baseAddress!)
                return d.tileSize != nil
                    ? Int(TIFFWriteRawTile(tif, UInt32(i), p, tmsize_t(raw.count)))
                    : Int(TIFFWriteRawStrip(tif, UInt32(i), p, tmsize_t(raw.count)))
            }
            guard written == block.count else {
                throw DNGWriteError(path: t.path, reason: "writing block \(i) of \(blocks.count) failed")
            }
        }
    }

    /// A semantic mask SubIFD: 8-bit PhotometricMask in one strip, raw or Deflate (libtiff's
    /// own encoder), with SemanticName, SemanticInstanceID and MaskSubArea.
    static func writeMaskIFD(_ m: SemanticMaskDNG, tif: OpaquePointer, t: TagSetter) throws {
        try t.check(ctiff_register_dng_fields(tif) == 0 ? 1 : 0, "cannot register DNG tags for a semantic mask IFD")
        try t.u32(UInt32(TIFFTAG_SUBFILETYPE), 0x10004)
        try t.u32(UInt32(TIFFTAG_IMAGEWIDTH), UInt32(m.width))
        try t.u32(UInt32(TIFFTAG_IMAGELENGTH), UInt32(m.height))
        try t.u16(UInt32(TIFFTAG_BITSPERSAMPLE), 8)
        try t.u16(UInt32(TIFFTAG_SAMPLESPERPIXEL), 1)
        try t.u16(UInt32(TIFFTAG_PHOTOMETRIC), 52527)
        try t.u16(UInt32(TIFFTAG_PLANARCONFIG), UInt16(PLANARCONFIG_CONTIG))
        try t.u16(UInt32(TIFFTAG_SAMPLEFORMAT), UInt16(SAMPLEFORMAT_UINT))
        try t.u16(UInt32(TIFFTAG_COMPRESSION), UInt16(m.deflate ? COMPRESSION_ADOBE_DEFLATE : COMPRESSION_NONE))
        try t.u32(UInt32(TIFFTAG_ROWSPERSTRIP), UInt32(m.height))
        try t.string(52526, m.semanticName)
        if let id = m.instanceID { try t.string(52528, id) }
        if let a = m.maskSubArea { try t.numbers(52536, a.map(Double.init)) }
        var bytes = m.samples
        let written = bytes.withUnsafeMutableBytes { raw in
            m.deflate ? TIFFWriteEncodedStrip(tif, 0, raw.baseAddress, tmsize_t(raw.count))
                : TIFFWriteRawStrip(tif, 0, raw.baseAddress, tmsize_t(raw.count))
        }
        guard written >= 0 else { throw DNGWriteError(path: t.path, reason: "writing a semantic mask failed") }
    }

    /// A small 8-bit RGB preview (every 8th pixel, top byte of each sample) in IFD 0.
    static func writePreview(_ d: LinearRawDNG, tif: OpaquePointer, t: TagSetter) throws {
        let step = 8
        let w = max(1, d.width / step), h = max(1, d.height / step)
        var pixels = [UInt8](repeating: 0, count: w * h * 3)
        let shift = UInt16(max(0, d.bitsPerSample - 8))
        let spp = d.samplesPerPixel
        for y in 0..<h {
            for x in 0..<w {
                for p in 0..<3 {
                    let sample = d.samples[((y * step) * d.width + x * step) * spp + min(p, spp - 1)]
                    pixels[(y * w + x) * 3 + p] = UInt8(truncatingIfNeeded: sample >> shift)
                }
            }
        }
        try t.u32(UInt32(TIFFTAG_IMAGEWIDTH), UInt32(w))
        try t.u32(UInt32(TIFFTAG_IMAGELENGTH), UInt32(h))
        try t.u16(UInt32(TIFFTAG_BITSPERSAMPLE), 8)
        try t.u16(UInt32(TIFFTAG_SAMPLESPERPIXEL), 3)
        try t.u16(UInt32(TIFFTAG_PHOTOMETRIC), UInt16(PHOTOMETRIC_RGB))
        try t.u16(UInt32(TIFFTAG_PLANARCONFIG), UInt16(PLANARCONFIG_CONTIG))
        try t.u16(UInt32(TIFFTAG_COMPRESSION), UInt16(COMPRESSION_NONE))
        try t.u32(UInt32(TIFFTAG_ROWSPERSTRIP), UInt32(h))
        let written = pixels.withUnsafeMutableBytes { raw in
            TIFFWriteRawStrip(tif, 0, raw.baseAddress, tmsize_t(raw.count))
        }
        guard written == pixels.count else { throw DNGWriteError(path: t.path, reason: "writing the preview failed") }
    }
}

extension DNGWriter {
    /// The NewRawImageDigest (DNG 1.4+, tag 51111) of the samples written: MD5s of
    /// 256 × 256 tiles, samples plane by plane as one byte (up to 8 bits, or a
    /// LinearizationTable of at most 256 entries) or two little-endian bytes.
    static func newRawImageDigest(_ d: LinearRawDNG) -> MD5Digest.Value {
        let smallTable = d.linearizationTable.map { $0.count <= 256 } ?? false
        let digester = ImageDigester(width: d.width, height: d.height, samplesPerPixel: d.samplesPerPixel,
                                     sampleBytes: d.bitsPerSample <= 8 || smallTable ? 1 : 2, sequential: false)
        digester.add(ImageBuffer(width: d.width, height: d.height, channels: d.samplesPerPixel, samples: d.samples))
        return digester.finish()
    }
}

/// An open libtiff file: the owner of the TIFF handle and of the error buffer libtiff's
/// error handler writes to, which lives on the heap for as long as the handle (libtiff
/// keeps its address from the open to the close).
final class TIFFFile {
    let handle: OpaquePointer
    private let errors: UnsafeMutablePointer<ctiff_error_buffer>
    private var isOpen = true

    /// libtiff is loaded on first use (`CLazyLibraries`): only a program that writes a DNG
    /// loads it and the libraries it brings.
    /// - Throws: `DNGWriteError` naming `reportedPath` and libtiff's message, or why libtiff
    ///   cannot be loaded.
    init(path: String, mode: String, reportedPath: String) throws {
        if let reason = LazyLibrary.tiff.load() { throw DNGWriteError(path: reportedPath, reason: reason) }
        errors = .allocate(capacity: 1)
        errors.initialize(to: ctiff_error_buffer())
        guard let tif = ctiff_open(path, mode, errors) else {
            let text = Self.text(errors)
            errors.deallocate()
            throw DNGWriteError(path: reportedPath, reason: "TIFFOpen failed: \(text)")
        }
        handle = tif
    }

    /// The last error libtiff reported for this file ("" if none).
    var message: String { Self.text(errors) }

    private static func text(_ errors: UnsafeMutablePointer<ctiff_error_buffer>) -> String {
        String(cString: UnsafeRawPointer(errors).assumingMemoryBound(to: CChar.self))
    }

    /// Closes the file (writing what libtiff still holds); returns the error libtiff
    /// reported on this file, if any.
    func close() -> String? {
        if isOpen {
            isOpen = false
            TIFFClose(handle)
        }
        let text = message
        return text.isEmpty ? nil : text
    }

    deinit {
        if isOpen { TIFFClose(handle) }
        errors.deallocate()
    }
}

/// Sets tags on an open file, turning libtiff's failures into `DNGWriteError`.
struct TagSetter {
    let tif: OpaquePointer
    let path: String

    func check(_ ok: Int32, _ what: @autoclosure () -> String) throws {
        guard ok != 0 else { throw DNGWriteError(path: path, reason: what()) }
    }

    func u16(_ tag: UInt32, _ v: UInt16) throws { try check(ctiff_set_u16(tif, tag, v), "setting \(tagName(tag))") }
    func u32(_ tag: UInt32, _ v: UInt32) throws { try check(ctiff_set_u32(tif, tag, v), "setting \(tagName(tag))") }
    func string(_ tag: UInt32, _ s: String) throws { try check(ctiff_set_string(tif, tag, s), "setting \(tagName(tag))") }
    func numbers(_ tag: UInt32, _ v: [Double]) throws {
        try check(v.withUnsafeBufferPointer { ctiff_set_numbers(tif, tag, UInt32(v.count), $0.baseAddress) },
                  "setting \(tagName(tag)) to \(v.count) values")
    }

    func tagName(_ tag: UInt32) -> String {
        if let f = TIFFFieldWithTag(tif, tag), let name = TIFFFieldName(f) { return String(cString: name) }
        return "tag \(tag)"
    }
}
