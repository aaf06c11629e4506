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

    /// Writes `image` (in `luminance` or `radiance` units) to `path` atomically.
    /// - Throws: `ExchangeError` for relative units, a colour encoding without primaries
    ///   (camera RGB), or a failed write (naming `path`).
    /// - Parameter view: Radiance's view options for a `VIEW=` line (e.g. a fisheye's
    ///   `FisheyeLens.radianceView`), so that evalglare and rtrace know each pixel's direction.
    public static func write(_ image: some SceneLinearRaster, to path: String, view: String? = nil) throws {
        try AtomicFile.write(to: path) { temporary in
            try write(image, temporary: temporary, reportedAs: path, view: view)
        }
    }

    /// `write` into `temporary`, which the caller renames into place; errors name `path`.
    public static func write(_ image: some SceneLinearRaster, temporary: String, reportedAs path: String, view: String? = nil) throws {
        let data = try encode(image, path: path, view: view)
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

    /// The whole file's bytes.
    static func encode(_ image: some SceneLinearRaster, path: String, view: String? = nil) throws -> Data {
        let m = try conversion(for: image, path: path)
        var header = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\nEXPOSURE=1.000000e+00\n"
        if let view { header += "VIEW= \(view)\n" }
        // CAPDATE has EXIF's form, as EXR's capDate does.
        if case .text(let date)? = image.provenance.dngValue("dateTimeOriginal"), EXRMetadata.isExifDateTime(date) {
            header += "CAPDATE=\(date)\n"
        }
        header += "SOFTWARE=\(image.provenance.software.isEmpty ? SceneLinearVersion.software : image.provenance.software)\n"
        // Where the absolute scale came from (variables other tools ignore; no tabs).
        let luminancePerValue = image.exposure.factor * (image.exposure.mode == .radiance ? Photometric.radianceEfficacy : 1)
        var scale = String(format: "SCENELINEAR_SCALE=%.9g cd/m^2 per linear reference value", luminancePerValue)
        if let u = image.exposure.relativeUncertainty { scale += String(format: ", relative standard uncertainty %.4g", u) }
        header += scale + "\n"
        if let source = image.exposure.source {
            header += "SCENELINEAR_SCALE_SOURCE=\(source.replacingOccurrences(of: "\t", with: " ").replacingOccurrences(of: "\n", with: " "))\n"
        }
        if !image.provenance.sourceFile.isEmpty { header += "SCENELINEAR_SOURCE=\(image.provenance.sourceFile)\n" }
        header += "\n-Y \(image.height) +X \(image.width)\n"
        var out = Data(header.utf8)
        let pixels = image.floatPixels()
        let width = image.width
        let e = m.e
        out.reserveCapacity(out.count + image.height * (width * 4 + 4))
        var row = [UInt8](repeating: 0, count: 4 * width)
        var planes = [UInt8](repeating: 0, count: 4 * width)
        for y in 0..<image.height {
            for x in 0..<width {
                let i = 3 * (y * width + x)
                let r = Double(pixels[i]), g = Double(pixels[i + 1]), b = Double(pixels[i + 2])
                let c = (e[0] * r + e[1] * g + e[2] * b, e[3] * r + e[4] * g + e[5] * b, e[6] * r + e[7] * g + e[8] * b)
                let rgbe = Self.rgbe(c.0, c.1, c.2)
                row[4 * x] = rgbe.0
                row[4 * x + 1] = rgbe.1
                row[4 * x + 2] = rgbe.2
                row[4 * x + 3] = rgbe.3
            }
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
        return out
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
