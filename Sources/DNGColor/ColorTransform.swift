import DNGContainer
import ImageCore
import Linearize

/// Which white point the conversion treats as neutral.
public enum WhiteBalance: Sendable, Equatable {
    /// The file's AsShotNeutral (tag 50728), else AsShotWhiteXY (50729), else D55.
    case asShot
    /// A CIE 1931 xy chromaticity given by the user.
    case chromaticity(SIMD2<Double>)
    /// A camera neutral given by the user (camera-native RGB of a neutral surface).
    case cameraNeutral(SIMD3<Double>)

    /// `as-shot` (or `asshot`), `d50`, `d55`, `d65` (any case), or a chromaticity `x,y`
    /// (x, y > 0, x + y < 1), as `--white-balance` gives it; nil for anything else.
    public init?(parsing text: String) {
        switch text.lowercased() {
        case "as-shot", "asshot": self = .asShot
        case "d50": self = .chromaticity(Chromaticity.d50)
        case "d55": self = .chromaticity(Chromaticity.d55)
        case "d65": self = .chromaticity(Chromaticity.d65)
        default:
            let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let x = parts[0], let y = parts[1], x > 0, y > 0, x + y < 1 else { return nil }
            self = .chromaticity(SIMD2(x, y))
        }
    }
}

/// The colour conversion of one image: a 3×3 matrix from camera linear reference values to
/// the output encoding, and how it was chosen.
public struct ColorTransform: Sendable, Equatable {
    public let encoding: ColorEncoding
    /// Camera linear reference values → output, before exposure scaling.
    public let matrix: Matrix3
    public let whiteXY: SIMD2<Double>
    /// The camera neutral of the white (max entry 1).
    public let cameraNeutral: SIMD3<Double>
    /// "AsShotNeutral", "AsShotWhiteXY", "D55 (no as-shot white balance in the file)", "user xy", "user neutral".
    public let whiteBalanceSource: String

    /// Builds the conversion for a three-plane (LinearRaw or demosaiced) image.
    ///
    /// A colorimetric encoding: `space.fromXYZ · Bradford(D50 → space white) · CameraToPCS(white)`
    /// (for `.linearRec2020`, `Rec2020.fromXYZ · Bradford(D50 → D65) · CameraToPCS(white)`).
    /// `.cameraNative`: `diag(1 / cameraNeutral)`, white-balanced camera RGB with no matrix.
    /// Either way a neutral surface whose brightest camera channel reads 1.0 comes out as
    /// (1, 1, 1).
    /// - Throws: `ColorError` when the colour tags are missing or unusable.
    public static func make(metadata: DNGMetadata, encoding: ColorEncoding, whiteBalance: WhiteBalance = .asShot,
                            path: String) throws(ColorError) -> ColorTransform {
        let calibration = metadata.calibration
        // Camera-native output needs only a neutral; avoid requiring colour matrices for it.
        if encoding == .cameraNative {
            var neutral: SIMD3<Double>?
            var source = ""
            switch whiteBalance {
            case .cameraNeutral(let n): neutral = n; source = "user neutral"
            case .asShot:
                if let n = calibration.asShotNeutral, n.count == 3 { neutral = SIMD3(n[0], n[1], n[2]); source = "AsShotNeutral" }
            case .chromaticity: break
            }
            if let n = neutral {
                guard n.min() > 0 else { throw ColorError(path: path, reason: "camera neutral \(n) must be positive") }
                let unit = n / n.max()
                let xy = (try? CameraColorModel(calibration: calibration, path: path).whitePoint(ofNeutral: unit)) ?? Chromaticity.d50
                return ColorTransform(encoding: .cameraNative, matrix: Matrix3.diagonal(1 / unit), whiteXY: xy,
                                      cameraNeutral: unit, whiteBalanceSource: source)
            }
        }
        let model = try CameraColorModel(calibration: calibration, path: path)
        let (xy, source) = try whitePoint(model: model, calibration: calibration, whiteBalance: whiteBalance, path: path)
        let neutral = model.cameraNeutral(ofWhite: xy)
        switch encoding {
        case .cameraNative:
            return ColorTransform(encoding: .cameraNative, matrix: Matrix3.diagonal(1 / neutral), whiteXY: xy,
                                  cameraNeutral: neutral, whiteBalanceSource: source)
        default:
            // One matrix from camera values to the output: camera → XYZ (D50) by the DNG
            // model, Bradford D50 → the space's white, XYZ → the space's RGB.
            guard let space = encoding.colorSpace else { preconditionFailure("\(encoding) has a colour space") }
            let toPCS = try model.cameraToPCS(white: xy)
            let matrix = space.fromXYZ * Bradford.adaptation(from: Chromaticity.d50, to: space.adoptedWhite) * toPCS
            return ColorTransform(encoding: encoding, matrix: matrix, whiteXY: xy, cameraNeutral: neutral,
                                  whiteBalanceSource: source)
        }
    }

    private static func whitePoint(model: CameraColorModel, calibration: ColorCalibration, whiteBalance: WhiteBalance,
                                   path: String) throws(ColorError) -> (SIMD2<Double>, String) {
        switch whiteBalance {
        case .chromaticity(let xy):
            return (xy, "user xy")
        case .cameraNeutral(let n):
            guard n.min() > 0 else { throw ColorError(path: path, reason: "camera neutral \(n) must be positive") }
            return (try model.whitePoint(ofNeutral: n), "user neutral")
        case .asShot:
            if let n = calibration.asShotNeutral {
                guard n.count == 3, n.allSatisfy({ $0 > 0 }) else {
                    throw ColorError(path: path, reason: "AsShotNeutral \(n) must hold 3 positive values")
                }
                return (try model.whitePoint(ofNeutral: SIMD3(n[0], n[1], n[2])), "AsShotNeutral")
            }
            if let xy = calibration.asShotWhiteXY {
                guard xy.count == 2, xy[0] > 0, xy[1] > 0, xy[0] + xy[1] < 1 else {
                    throw ColorError(path: path, reason: "AsShotWhiteXY \(xy) is not a chromaticity")
                }
                return (SIMD2(xy[0], xy[1]), "AsShotWhiteXY")
            }
            return (Chromaticity.d55, "D55 (no as-shot white balance in the file)")
        }
    }
}

/// Applies a colour transform and an exposure factor to Stage 2 values.
public enum ColorConversion {
    /// The row-major 3 × 3 matrix of `output = matrix · camera`, exposure factor included,
    /// in the Float precision `apply` computes with.
    public static func floatMatrix(_ transform: ColorTransform, exposure: ExposureScaling) -> [Float] {
        (exposure.factor * transform.matrix).floatEntries
    }

    /// `dst = m · src` for `pixels` interleaved RGB pixels (`src` and `dst` may be the same).
    @inline(__always)
    public static func convert(_ m: [Float], _ src: UnsafePointer<Float>, to dst: UnsafeMutablePointer<Float>, pixels: Int) {
        let (m0, m1, m2, m3, m4, m5, m6, m7, m8) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
        for i in 0..<pixels {
            let r = src[3 * i], g = src[3 * i + 1], b = src[3 * i + 2]
            dst[3 * i] = m0 * r + m1 * g + m2 * b
            dst[3 * i + 1] = m3 * r + m4 * g + m5 * b
            dst[3 * i + 2] = m6 * r + m7 * g + m8 * b
        }
    }

    /// `output = factor · matrix · camera` for every pixel; nothing is clipped.
    public static func apply(_ transform: ColorTransform, exposure: ExposureScaling, to image: Stage3Image,
                             provenance: ImageProvenance) -> SceneLinearImage {
        let m = floatMatrix(transform, exposure: exposure)
        let count = image.width * image.height
        var out = [Float](repeating: 0, count: count * 3)
        image.values.samples.withUnsafeBufferPointer { srcAll in
            out.withUnsafeMutableBufferPointer { dstAll in
                // Safe because each chunk writes its own pixels; the source is only read.
                nonisolated(unsafe) let src = srcAll, dst = dstAll
                Parallel.forEachChunk(count: count, minimumChunk: 1 << 16) { range in
                    convert(m, src.baseAddress! + 3 * range.lowerBound, to: dst.baseAddress! + 3 * range.lowerBound, pixels: range.count)
                }
            }
        }
        return SceneLinearImage(pixels: ImageBuffer(width: image.width, height: image.height, channels: 3, samples: out),
                                clipMask: image.clipMask, encoding: transform.encoding, exposure: exposure,
                                provenance: provenance)
    }
}
