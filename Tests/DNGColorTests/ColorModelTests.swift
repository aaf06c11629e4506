import Foundation
import Testing
import ImageCore
import DNGContainer
@testable import DNGColor
import TestSupport

/// The matrix from linear RGB with the given primaries and white to XYZ, computed here
/// independently of the library (columns scaled so that RGB (1,1,1) gives the white, Y = 1).
func rgbToXYZ(_ r: (Double, Double), _ g: (Double, Double), _ b: (Double, Double), white w: (Double, Double)) -> [[Double]] {
    func xyz(_ p: (Double, Double)) -> [Double] { [p.0 / p.1, 1, (1 - p.0 - p.1) / p.1] }
    let cols = [xyz(r), xyz(g), xyz(b)]
    let p = (0..<3).map { i in (0..<3).map { j in cols[j][i] } }
    let W = xyz(w)
    // Solve p · s = W by Cramer's rule.
    func det(_ m: [[Double]]) -> Double {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    }
    let d = det(p)
    let s = (0..<3).map { k -> Double in
        var m = p
        for i in 0..<3 { m[i][k] = W[i] }
        return det(m) / d
    }
    return (0..<3).map { i in (0..<3).map { j in p[i][j] * s[j] } }
}

func flatInverse(_ m: [[Double]]) -> [Double] { Matrix3(m.flatMap { $0 }).inverse!.e }

@Suite struct ColorModelTests {
    @Test func rec2020LuminanceRowMatchesTheStandard() {
        let m = Rec2020.toXYZ
        #expect(abs(m[1, 0] - 0.2627) < 1e-4 && abs(m[1, 1] - 0.6780) < 1e-4 && abs(m[1, 2] - 0.0593) < 1e-4)
        let white = m * SIMD3<Double>(1, 1, 1)
        #expect(abs(white.x - 0.3127 / 0.3290) < Tolerance.double && abs(white.y - 1) < Tolerance.double)
    }

    @Test(arguments: [
        (Chromaticity.d65, 6504.0), (Chromaticity.illuminantA, 2856.0), (Chromaticity.d50, 5003.0), (Chromaticity.d55, 5503.0),
    ])
    func correlatedColorTemperatureOfStandardIlluminants(xy: SIMD2<Double>, kelvin: Double) {
        let t = Chromaticity.correlatedColorTemperature(xy)
        #expect(abs(t - kelvin) < 8, "CCT of \(xy) = \(t), expected about \(kelvin)")
    }

    @Test func bradfordMapsWhiteToWhite() {
        let a = Bradford.adaptation(from: Chromaticity.d50, to: Chromaticity.d65)
        let mapped = a * Chromaticity.xyz(Chromaticity.d50)
        let target = Chromaticity.xyz(Chromaticity.d65)
        #expect(abs(mapped.x - target.x) < Tolerance.double && abs(mapped.y - target.y) < Tolerance.double && abs(mapped.z - target.z) < Tolerance.double)
        let back = Bradford.adaptation(from: Chromaticity.d65, to: Chromaticity.d50)
        #expect((a * back).maxDifference(to: .identity) < Tolerance.double)
    }

    /// A camera whose native space is linear Rec.2020, calibrated under D65 and shot under
    /// D65: the whole conversion must be the identity.
    @Test func rec2020CameraGivesIdentity() throws {
        let toXYZ = rgbToXYZ((0.708, 0.292), (0.170, 0.797), (0.131, 0.046), white: (0.3127, 0.3290))
        let calibration = ColorCalibration(illuminants: [21], colorMatrices: [flatInverse(toXYZ)], cameraCalibrations: [nil],
                                           forwardMatrices: [nil], reductionMatrices: [nil], illuminantData: [nil],
                                           asShotNeutral: [1, 1, 1])
        let t = try ColorTransform.make(metadata: metadata(calibration), encoding: .linearRec2020, path: "test")
        #expect(t.matrix.maxDifference(to: .identity) < Tolerance.matrix, "\(t.matrix)")
        #expect(abs(t.whiteXY.x - 0.3127) < 1e-7 && abs(t.whiteXY.y - 0.3290) < 1e-7)
    }

    /// A camera whose native space is linear Rec.709 (sRGB primaries), D65: the conversion is
    /// the Rec.709 → Rec.2020 matrix of ITU-R BT.2087 (4 decimals).
    @Test func rec709CameraGivesBT2087Matrix() throws {
        let toXYZ = rgbToXYZ((0.64, 0.33), (0.30, 0.60), (0.15, 0.06), white: (0.3127, 0.3290))
        let calibration = ColorCalibration(illuminants: [21], colorMatrices: [flatInverse(toXYZ)], cameraCalibrations: [nil],
                                           forwardMatrices: [nil], reductionMatrices: [nil], illuminantData: [nil],
                                           asShotNeutral: [1, 1, 1])
        let t = try ColorTransform.make(metadata: metadata(calibration), encoding: .linearRec2020, path: "test")
        let bt2087 = Matrix3([0.6274, 0.3293, 0.0433, 0.0691, 0.9195, 0.0114, 0.0164, 0.0880, 0.8956])
        #expect(t.matrix.maxDifference(to: bt2087) < 1e-4, "\(t.matrix)")
    }

    /// The iPhone 12 Pro profile (two illuminants, no forward matrix): the as-shot neutral
    /// round-trips through the iterative white point, and maps to (1, 1, 1).
    @Test func iPhoneAsShotNeutral() throws {
        let url = try TestData.shared("real/iphone12pro_proraw_header_only.dng")
        let dng = try DNGFile.open(path: url.path)
        let model = try CameraColorModel(calibration: dng.metadata.calibration, path: url.path)
        let n = dng.metadata.calibration.asShotNeutral!
        let neutral = SIMD3(n[0], n[1], n[2])
        let xy = try model.whitePoint(ofNeutral: neutral)
        let back = model.cameraNeutral(ofWhite: xy)
        #expect(abs(back.x - neutral.x) < Tolerance.float && abs(back.y - neutral.y) < Tolerance.float && abs(back.z - neutral.z) < Tolerance.float)
        let t = try ColorTransform.make(metadata: dng.metadata, encoding: .linearRec2020, path: url.path)
        let white = t.matrix * neutral
        #expect(abs(white.x - 1) < Tolerance.float && abs(white.y - 1) < Tolerance.float && abs(white.z - 1) < Tolerance.float, "\(white)")
        let cct = Chromaticity.correlatedColorTemperature(xy)
        #expect(cct > 4000 && cct < 7500, "as-shot CCT \(cct)")
        let camera = try ColorTransform.make(metadata: dng.metadata, encoding: .cameraNative, path: url.path)
        let unit = camera.matrix * neutral
        #expect(abs(unit.x - 1) < Tolerance.double && abs(unit.y - 1) < Tolerance.double && abs(unit.z - 1) < Tolerance.double)
    }

    /// With forward matrices the neutral still maps to (1, 1, 1), and interpolation between
    /// two calibrations moves in reciprocal temperature.
    @Test func forwardMatrixPathMapsNeutralToWhite() throws {
        let cmA = [1.1, -0.3, -0.1, -0.4, 1.4, 0.05, -0.05, 0.2, 0.6]
        let cmD65 = [0.9, -0.3, -0.1, -0.4, 1.3, 0.1, -0.1, 0.23, 0.55]
        let fm = [0.70, 0.15, 0.10, 0.28, 0.70, 0.02, 0.02, 0.10, 0.70]
        let calibration = ColorCalibration(illuminants: [17, 21], colorMatrices: [cmA, cmD65], cameraCalibrations: [nil, nil],
                                           forwardMatrices: [fm, fm], reductionMatrices: [nil, nil], illuminantData: [nil, nil],
                                           analogBalance: [1.0, 1.0, 1.0], asShotNeutral: [0.5, 1, 0.6])
        let t = try ColorTransform.make(metadata: metadata(calibration), encoding: .linearRec2020, path: "test")
        let white = t.matrix * SIMD3(0.5, 1, 0.6)
        #expect(abs(white.x - 1) < Tolerance.float && abs(white.y - 1) < Tolerance.float && abs(white.z - 1) < Tolerance.float, "\(white)")
        let model = try CameraColorModel(calibration: calibration, path: "test")
        // Outside the bracket the nearest calibration is used alone.
        #expect(model.interpolationWeights(at: [0.5, 0.41]) == [1, 0])   // about 2300 K
        #expect(model.interpolationWeights(at: [0.29, 0.30]) == [0, 1])  // about 8000 K
        let mid = model.interpolationWeights(at: Chromaticity.d50)
        let expected = (1 / Chromaticity.correlatedColorTemperature(Chromaticity.d50) - 1 / 6500) / (1 / 2850 - 1 / 6500)
        #expect(abs(mid[0] - expected) < Tolerance.double && abs(mid[0] + mid[1] - 1) < Tolerance.double)
    }

    @Test func missingColorMatrixIsAClearError() {
        #expect(throws: ColorError.self) {
            try ColorTransform.make(metadata: metadata(ColorCalibration()), encoding: .linearRec2020, path: "x.dng")
        }
    }

    func metadata(_ c: ColorCalibration) -> DNGMetadata {
        DNGMetadata(dngVersion: "1.4.0.0", dngBackwardVersion: "1.3.0.0", calibration: c)
    }
}
