import SceneLinearKit
import CaptureSimulation
import DNGWriter
import Foundation

/// A synthetic ProRAW-style capture whose decoded result is known exactly: a LinearRaw DNG
/// (3 × 12-bit codes through the companding LinearizationTable of `CompandingCurve`, black
/// 800, white 64800, lossless-JPEG
/// tiles of 256×256 by default: libtiff writes only tile sizes that are multiples of 16, so
/// not ProRAW's 504×378) of a chart with a 16-stop grey ramp, colour patches and a
/// smooth gradient. `expected(cameraToOutput:)` gives the exact decode of the stored codes,
/// computed in `Double`.
public struct TestChart: Sendable {
    /// The DNG to write.
    public var dng: LinearRawDNG
    /// The scene the chart was made from, linear Rec.2020 (before quantisation to codes).
    public var scene: [Double]

    /// Builds the chart.
    /// - Parameters:
    ///   - width, height: image size in pixels (at least 64×48).
    ///   - bits: code depth (8–16), 12 like ProRAW.
    ///   - black, white: BlackLevel and WhiteLevel in the linearized domain.
    ///   - compression: lossless JPEG (default) or uncompressed.
    public static func make(width: Int = 1008, height: Int = 756, bits: Int = 12, black: Double = 800, white: Int = 64800,
                            compression: DNGCompression = .losslessJPEG(predictor: 1),
                            tileSize: (width: Int, height: Int)? = (256, 256)) throws -> TestChart {
        precondition(width >= 64 && height >= 48 && (8...16).contains(bits))
        let table = CompandingCurve(codeBits: bits, maximum: white).table
        var dng = LinearRawDNG(width: width, height: height, samples: [])
        dng.bitsPerSample = bits
        dng.compression = compression
        dng.tileSize = tileSize
        dng.structure = .previewWithRawSubIFD
        dng.byteOrder = .bigEndian
        dng.linearizationTable = table
        dng.blackLevel = [black, black, black]
        dng.whiteLevel = [white, white, white]
        dng.make = "SceneLinear"
        dng.model = "Test chart"
        dng.uniqueCameraModel = "SceneLinear test chart camera"
        // A wide-gamut camera: native primaries between Rec.709 and Rec.2020, calibrated under
        // standard light A and D65; the as-shot white is the camera neutral of D55 daylight.
        dng.calibrationIlluminants = [17, 21]
        dng.colorMatrices = [cameraMatrix(tilt: [1.04, 1.0, 0.94]), cameraMatrix(tilt: [1, 1, 1])]
        var calibration = ColorCalibration(illuminants: dng.calibrationIlluminants, colorMatrices: dng.colorMatrices,
                                           cameraCalibrations: [nil, nil], forwardMatrices: [nil, nil],
                                           reductionMatrices: [nil, nil], illuminantData: [nil, nil])
        let daylight = try CameraColorModel(calibration: calibration, path: "test chart").cameraNeutral(ofWhite: Chromaticity.d55)
        dng.asShotNeutral = [daylight.x, daylight.y, daylight.z].map { ($0 * 1e6).rounded() / 1e6 }
        dng.baselineExposure = -0.5
        dng.noiseProfile = [2.0e-5, 4.5e-7]
        dng.exposureTime = 1.0 / 250
        dng.fNumber = 1.8
        dng.iso = 50
        dng.dateTimeOriginal = "2026:11:21 12:00:00"

        calibration.asShotNeutral = dng.asShotNeutral
        let metadata = DNGMetadata(dngVersion: "1.6.0.0", dngBackwardVersion: "1.4.0.0", calibration: calibration)
        let toOutput = try ColorTransform.make(metadata: metadata, encoding: .linearRec2020, path: "test chart").matrix
        guard let toCamera = toOutput.inverse else { preconditionFailure("test chart matrix is singular") }

        let scene = chartScene(width: width, height: height)
        let range = Double(white) - black
        var codes = [UInt16](repeating: 0, count: width * height * 3)
        for i in 0..<(width * height) {
            let camera = toCamera * SIMD3(scene[3 * i], scene[3 * i + 1], scene[3 * i + 2])
            for p in 0..<3 { codes[3 * i + p] = UInt16(CompandingCurve.nearestCode(table, black + camera[p] * range)) }
        }
        dng.samples = codes
        return TestChart(dng: dng, scene: scene)
    }

    /// The exact scene-linear result of decoding the stored codes with `cameraToOutput`
    /// (the colour matrix read back from the written file), in `Double`: Stage 2 by the DNG
    /// rules (table, black, white, clip at 1), then the matrix. Also the expected clip mask.
    public func expected(cameraToOutput: Matrix3) -> (values: [Double], clipMask: [UInt8]) {
        let table = dng.linearizationTable.map { $0.map(Double.init) }
        let n = dng.width * dng.height
        var values = [Double](repeating: 0, count: n * 3)
        var mask = [UInt8](repeating: 0, count: n)
        for i in 0..<n {
            var decoded = SIMD3<Double>()
            for p in 0..<3 {
                let code = Int(dng.samples[3 * i + p])
                let lin = table.map { code < $0.count ? $0[code] : $0[$0.count - 1] } ?? Double(code)
                let white = Double(dng.whiteLevel[p]), black = dng.blackLevel[p]
                decoded[p] = min((lin - black) / (white - black), 1)
                if lin >= white { mask[i] |= 1 << UInt8(p) }
            }
            let out = cameraToOutput * decoded
            values[3 * i] = out.x
            values[3 * i + 1] = out.y
            values[3 * i + 2] = out.z
        }
        return (values, mask)
    }

    /// XYZ → camera for a camera whose native primaries are (0.68, 0.31), (0.21, 0.74),
    /// (0.14, 0.05), with channel sensitivities (0.5, 1, 0.7) for D65 white and a per-channel
    /// `tilt` between calibrations — a plausible, invertible colour matrix.
    static func cameraMatrix(tilt: SIMD3<Double>) -> [Double] {
        func xyz(_ x: Double, _ y: Double) -> SIMD3<Double> { [x / y, 1, (1 - x - y) / y] }
        let p = Matrix3(rows: xyz(0.68, 0.31), xyz(0.21, 0.74), xyz(0.14, 0.05)).transposed
        let s = p.inverse! * Chromaticity.xyz(Chromaticity.d65)
        let xyzToNative = (p * Matrix3.diagonal(s)).inverse!
        let gains = Matrix3.diagonal(SIMD3(0.5, 1.0, 0.7) * tilt)
        return (gains * xyzToNative).e
    }

    /// The chart in linear Rec.2020 (1.0 = a neutral that just saturates the camera).
    static func chartScene(width: Int, height: Int) -> [Double] {
        var out = [Double](repeating: 0, count: width * height * 3)
        let rampRows = height * 3 / 8
        let patchRows = height * 4 / 8
        // 6 × 3 colour patches, linear Rec.2020 (the last row: neutrals and a beyond-white patch).
        let patches: [SIMD3<Double>] = [
            [0.18, 0.09, 0.06], [0.55, 0.40, 0.33], [0.10, 0.14, 0.24], [0.09, 0.12, 0.05], [0.22, 0.20, 0.40], [0.20, 0.45, 0.40],
            [0.60, 0.25, 0.04], [0.06, 0.08, 0.30], [0.50, 0.10, 0.12], [0.08, 0.04, 0.12], [0.40, 0.55, 0.07], [0.70, 0.45, 0.03],
            [0.02, 0.02, 0.02], [0.045, 0.045, 0.045], [0.09, 0.09, 0.09], [0.18, 0.18, 0.18], [0.45, 0.45, 0.45], [1.60, 1.60, 1.60],
        ]
        for y in 0..<height {
            for x in 0..<width {
                var v: SIMD3<Double>
                if y < rampRows {
                    // 16 grey steps, one stop apart, from 2^-15 to 2^0 of white; the brightest step clips.
                    let step = min(15, x * 16 / width)
                    let g = pow(2, Double(step - 15)) * (step == 15 ? 1.2 : 0.95)
                    v = [g, g, g]
                } else if y < rampRows + patchRows {
                    let row = min(2, (y - rampRows) * 3 / patchRows), col = min(5, x * 6 / width)
                    v = patches[row * 6 + col]
                } else {
                    // A smooth, slightly coloured horizontal gradient over 10 stops.
                    let t = Double(x) / Double(width - 1)
                    let g = pow(2, -10 + 10 * t) * 0.9
                    v = [g * 1.05, g, g * 0.9]
                }
                out[3 * (y * width + x)] = v.x
                out[3 * (y * width + x) + 1] = v.y
                out[3 * (y * width + x) + 2] = v.z
            }
        }
        return out
    }
}

extension TestChart {
    /// Writes the exact expected scene-linear image of the chart's DNG, written at `dngPath`,
    /// to `path` as HDF5 (half floats, in the layout `convert` writes), with the colour
    /// matrix as the file stores it.
    /// - Throws: the decoder's and the writer's errors.
    public func writeExpected(of dngPath: String, to path: String) throws {
        let developed = try Pipeline.develop(path: dngPath)
        let (values, mask) = expected(cameraToOutput: developed.color.matrix)
        let image = SceneLinearImage(
            pixels: ImageBuffer(width: dng.width, height: dng.height, channels: 3, samples: values.map { Float($0) }),
            clipMask: mask, encoding: .linearRec2020, exposure: .none, provenance: developed.image.provenance)
        try HDF5File.write(image, to: path, options: HDF5Options())
    }
}
