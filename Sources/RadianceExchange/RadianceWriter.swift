import ExchangeCore
import Foundation
import ImageCore

/// Radiance pictures (`.hdr`, RGBE): the hand-off to Radiance's own tools (pvalue,
/// falsecolor, evalglare).
///
/// The pixels are radiance in Radiance's convention — W·sr⁻¹·m⁻², luminance =
/// 179 × (0.265 R + 0.670 G + 0.065 B) cd/m² — in Radiance's standard primaries (R 0.640,
/// 0.330; G 0.290, 0.600; B 0.150, 0.060; equal-energy white), so no PRIMARIES line is
/// written: evalglare and pcomb ignore one. The image's colours go through CIE XYZ
/// unchanged (no white adaptation), so Y, and with it every luminance Radiance computes, is
/// exactly the image's. Layout (Radiance's file format):
///
///     #?RADIANCE
///     FORMAT=32-bit_rle_rgbe
///     EXPOSURE=1.000000e+00        (the pixels are the true values: nothing to undo)
///     CAPDATE=YYYY:MM:DD HH:MM:SS  (when the DNG records it)
///     SOFTWARE=scenelinear …
///     SCENELINEAR_SCALE=…          (cd/m² per linear reference value, its uncertainty)
///     SCENELINEAR_SCALE_SOURCE=…   (calibration or exposure metadata)
///     SCENELINEAR_SOURCE=…         (the DNG's name)
///     SCENELINEAR_LOWER_BOUND_…=…  (the lower bounds: `RadianceLowerBounds.headerLines`)
///                                  (blank line)
///     -Y height +X width           (top row first)
///
/// then each scanline in the new run-length encoding (widths 8–32767: the bytes 2, 2,
/// width >> 8, width & 255, then the R, G, B and E planes each as runs of one byte, 128 + n,
/// n ≤ 127, or literal stretches n ≤ 128), or flat RGBE for other widths. Each pixel is
/// coded as Radiance's `setcolr` does: m = max(R, G, B) = f · 2^e (0.5 ≤ f < 1), each
/// channel byte ⌊c · f · 256 / m⌋ (negative values as 0: RGBE has no sign), E = e + 128, and
/// four zero bytes when m < 1e-32. Decoding gives (byte + ½) · 2^(E − 136): 0.4 % steps.
public enum RadianceFile {
    /// XYZ → Radiance RGB (standard primaries, equal-energy white).
    static let fromXYZ: Matrix3 = {
        func xyz(_ x: Double, _ y: Double) -> SIMD3<Double> { [x / y, 1, (1 - x - y) / y] }
        let p = Matrix3(rows: xyz(0.640, 0.330), xyz(0.290, 0.600), xyz(0.150, 0.060)).transposed
        let white = SIMD3<Double>(1, 1, 1)
        return (p * Matrix3.diagonal(p.inverse! * white)).inverse!
    }()

    /// Writes `image` (in `luminance` or `radiance` units) to `path` atomically, with the
    /// header lines of its lower bounds (`RadianceLowerBounds`) and, when it has any, their
    /// mask next to it (`maskPath(for:)`: 1 where the value is a lower bound, 0 elsewhere,
    /// same size and view), renamed into place just before the picture. A mask an earlier
    /// run left there is removed when this picture has none (`OverwritePolicy.removeStaleOutput`).
    /// - Throws: `RadianceError` for relative units or a colour encoding without primaries
    ///   (camera RGB); `ExchangeError` for a failed write (naming the file); `OutputError`
    ///   when the overwrite rule refuses the picture's or the mask's path (checked before
    ///   anything is written).
    /// - Parameters:
    ///   - view: Radiance's view options for a `VIEW=` line (e.g. a fisheye's
    ///     `FisheyeLens.radianceView`), so that evalglare and rtrace know each pixel's direction.
    ///   - solidAngles: each pixel's solid angle (sr; a fisheye's `FisheyeGeometry`): the
    ///     lower bounds' share is then of the picture's solid angle, else of its pixels.
    /// - Returns: what the header says of the lower bounds, and the mask written.
    @discardableResult
    public static func write(_ image: some SceneLinearRaster, to path: String, view: String? = nil,
                             solidAngles: [Double]? = nil) throws -> RadianceLowerBounds {
        var bounds = RadianceLowerBounds(clipMask: image.clipMask, solidAngles: solidAngles)
        let mask = maskPath(for: path)
        if bounds.status == .present {
            try OverwritePolicy.current.check(mask)
            bounds.mask = mask
        }
        let m = try conversion(for: image, path: path)
        try AtomicFile.write(to: path) { temporary in
            try save(encode(image, matrix: m, view: view, lowerBounds: bounds), to: temporary, reportedAs: path)
            if let clip = image.clipMask, bounds.mask != nil {
                try AtomicFile.write(to: mask) { maskTemporary in
                    try save(encodeMask(clip, width: image.width, height: image.height, of: path, view: view, lowerBounds: bounds),
                             to: maskTemporary, reportedAs: mask)
                }
            }
        }
        if bounds.mask == nil { OverwritePolicy.current.removeStaleOutput(mask) }
        return bounds
    }

    /// Where the lower-bound mask of the picture at `path` goes: `x.hdr` → `x.clip.hdr`.
    public static func maskPath(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let ext = url.pathExtension.isEmpty ? "hdr" : url.pathExtension
        let stem = path.hasSuffix("." + url.pathExtension) ? String(path.dropLast(url.pathExtension.count + 1)) : path
        return stem + ".clip." + ext
    }

    static func save(_ data: Data, to temporary: String, reportedAs path: String) throws {
        do { try data.write(to: URL(fileURLWithPath: temporary)) } catch {
            throw ExchangeError(path: path, operation: "write", message: error.localizedDescription, category: .outputFailure)
        }
    }

    /// The matrix from the image's output colours, in its units, to Radiance RGB radiance.
    static func conversion(for image: some SceneLinearDescription, path: String) throws -> Matrix3 {
        let mode = image.exposure.mode
        guard mode.isAbsolute else { throw RadianceError(path: path, reason: RadianceError.relativeUnits) }
        guard let space = image.encoding.colorSpace else {
            throw RadianceError(path: path, reason: "camera RGB has no primaries to convert to Radiance's: choose an output colour (--color)")
        }
        // Luminance units: cd/m² → W·sr⁻¹·m⁻² (÷ 179); radiance units already are.
        let unit = mode == .luminance ? 1 / Photometric.radianceEfficacy : 1
        return Matrix3.diagonal(SIMD3(repeating: unit)) * fromXYZ * space.toXYZ
    }

    /// The whole file's bytes (`m`: `conversion(for:path:)`).
    static func encode(_ image: some SceneLinearRaster, matrix m: Matrix3, view: String?,
                       lowerBounds: RadianceLowerBounds) -> Data {
        var header = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\nEXPOSURE=1.000000e+00\n"
        if let view { header += "VIEW= \(view)\n" }
        // CAPDATE has EXIF's form, as EXR's capDate does.
        if case .text(let date)? = image.provenance.dngValue("dateTimeOriginal"), CaptureDate.isExifDateTime(date) {
            header += "CAPDATE=\(date)\n"
        }
        header += "SOFTWARE=\(software(of: image))\n"
        // Where the absolute scale came from (variables other tools ignore; no tabs).
        let luminancePerValue = image.exposure.factor * (image.exposure.mode == .radiance ? Photometric.radianceEfficacy : 1)
        var scale = String(format: "SCENELINEAR_SCALE=%.9g cd/m^2 per linear reference value", luminancePerValue)
        if let u = image.exposure.relativeUncertainty { scale += String(format: ", relative standard uncertainty %.4g", u) }
        header += scale + "\n"
        if let source = image.exposure.source { header += "SCENELINEAR_SCALE_SOURCE=\(oneLine(source))\n" }
        if !image.provenance.sourceFile.isEmpty { header += "SCENELINEAR_SOURCE=\(oneLine(image.provenance.sourceFile))\n" }
        header += lowerBounds.headerLines()
        var out = Data((header + "\n-Y \(image.height) +X \(image.width)\n").utf8)
        let pixels = image.floatPixels()
        let width = image.width, e = m.e
        appendScanlines(width: width, height: image.height, to: &out) { y, row in
            for x in 0..<width {
                let i = 3 * (y * width + x)
                let r = Double(pixels[i]), g = Double(pixels[i + 1]), b = Double(pixels[i + 2])
                let rgbe = Self.rgbe(e[0] * r + e[1] * g + e[2] * b, e[3] * r + e[4] * g + e[5] * b, e[6] * r + e[7] * g + e[8] * b)
                row[4 * x] = rgbe.0
                row[4 * x + 1] = rgbe.1
                row[4 * x + 2] = rgbe.2
                row[4 * x + 3] = rgbe.3
            }
        }
        return out
    }

    /// The lower-bound mask's bytes: 1 (R = G = B) where `clip` is non-zero, 0 elsewhere,
    /// with the picture's view; the header says whose mask it is.
    static func encodeMask(_ clip: [UInt8], width: Int, height: Int, of picture: String, view: String?,
                           lowerBounds: RadianceLowerBounds) -> Data {
        var header = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n"
        if let view { header += "VIEW= \(view)\n" }
        header += "SOFTWARE=\(SceneLinearVersion.software)\n"
        header += "SCENELINEAR_MASK_OF=\(oneLine(URL(fileURLWithPath: picture).lastPathComponent)): 1 where its value is a lower bound (clipped), 0 elsewhere\n"
        header += lowerBounds.headerLines(namingMask: false)
        var out = Data((header + "\n-Y \(height) +X \(width)\n").utf8)
        let one = rgbe(1, 1, 1)
        appendScanlines(width: width, height: height, to: &out) { y, row in
            for x in 0..<width {
                let on = clip[y * width + x] != 0
                row[4 * x] = on ? one.0 : 0
                row[4 * x + 1] = on ? one.1 : 0
                row[4 * x + 2] = on ? one.2 : 0
                row[4 * x + 3] = on ? one.3 : 0
            }
        }
        return out
    }

    static func software(of image: some SceneLinearDescription) -> String {
        image.provenance.software.isEmpty ? SceneLinearVersion.software : image.provenance.software
    }

    /// `text` on one header line: tabs and line breaks as spaces.
    static func oneLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\t", with: " ").replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\r", with: " ")
    }

    /// Appends `height` scanlines, each made by `fill` (row `y`'s RGBE bytes, 4 × `width`):
    /// run-length coded for widths 8–32767, flat otherwise.
    static func appendScanlines(width: Int, height: Int, to out: inout Data, fill: (_ y: Int, _ row: inout [UInt8]) -> Void) {
        out.reserveCapacity(out.count + height * (width * 4 + 4))
        var row = [UInt8](repeating: 0, count: 4 * width)
        var planes = [UInt8](repeating: 0, count: 4 * width)
        for y in 0..<height {
            fill(y, &row)
            if width < 8 || width > 0x7FFF {
                out.append(contentsOf: row)
                continue
            }
            out.append(contentsOf: [2, 2, UInt8(width >> 8), UInt8(width & 0xFF)])
            for p in 0..<4 {
                for x in 0..<width { planes[p * width + x] = row[4 * x + p] }
                Self.appendRuns(planes[(p * width)..<((p + 1) * width)], to: &out)
            }
        }
    }

    /// One pixel as Radiance's `setcolr` codes it.
    static func rgbe(_ r: Double, _ g: Double, _ b: Double) -> (UInt8, UInt8, UInt8, UInt8) {
        let m = max(r, g, b)
        guard m >= 1e-32, m.isFinite else { return (0, 0, 0, 0) }
        let (f, e) = frexpParts(m)
        let scale = f * 256 / m
        func byte(_ c: Double) -> UInt8 { c <= 0 ? 0 : UInt8(min(255, Int(c * scale))) }
        return (byte(r), byte(g), byte(b), UInt8(clamping: e + 128))
    }

    /// m = f · 2^e with 0.5 ≤ f < 1.
    static func frexpParts(_ m: Double) -> (Double, Int) {
        let e = Int(m.exponent) + 1
        return (m / Double(sign: .plus, exponent: e, significand: 1), e)
    }

    /// Appends one plane of a scanline in the new run-length encoding: runs of 4 or more
    /// equal bytes (up to 127) as 128 + n and the byte, the bytes between them as literal
    /// stretches of up to 128.
    static func appendRuns(_ bytes: ArraySlice<UInt8>, to out: inout Data) {
        let b = Array(bytes)
        var i = 0
        var literalStart = 0
        func flushLiterals(upTo end: Int) {
            var s = literalStart
            while s < end {
                let n = min(128, end - s)
                out.append(UInt8(n))
                out.append(contentsOf: b[s..<(s + n)])
                s += n
            }
        }
        while i < b.count {
            var run = 1
            while i + run < b.count && b[i + run] == b[i] && run < 127 { run += 1 }
            if run >= 4 {
                flushLiterals(upTo: i)
                out.append(UInt8(128 + run))
                out.append(b[i])
                i += run
                literalStart = i
            } else {
                i += 1
            }
        }
        flushLiterals(upTo: b.count)
    }
}

/// A Radiance picture that cannot be written from this image.
public struct RadianceError: SceneLinearFailure, Equatable {
    public let path: String
    public var file: String? { path }
    public let reason: String
    public var category: FailureCategory { .unsupportedFeature }
    public var description: String { "cannot write \(path) as a Radiance picture: \(reason)" }

    /// Why relative values are refused.
    public static let relativeUnits = "it holds radiance in W·sr⁻¹·m⁻², so it needs --units luminance or --units radiance (with --calibration for measured values)"

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}
