import Foundation
import ImageCore
import Testing
import TestSupport

/// The fisheye geometry alone: for every projection the pixels' solid angles sum to the
/// field of view's 2π (1 − cos(FOV/2)) and their cosine-weighted sum to π sin²(FOV/2), within
/// 0.2 % (docs/fisheye.md); a lens's projection round-trips θ; Radiance's view lines.
@Suite struct FisheyeTests {
    @Test(arguments: FisheyeProjection.allCases)
    func solidAnglesSumToTheField(_ projection: FisheyeProjection) throws {
        for fov in [180.0, 120.0] {
            let lens = FisheyeLens(projection: projection, fieldOfView: fov, width: 600, height: 400)
            let (theta, omega) = lens.geometry(width: 600, height: 400)
            var sum = 0.0, cosine = 0.0
            for i in omega.indices where omega[i] > 0 {
                sum += omega[i]
                cosine += omega[i] * Double(cos(theta[i]))
            }
            let half = fov * .pi / 360
            let field = 2 * .pi * (1 - cos(half)), projected = Double.pi * pow(sin(half), 2)
            #expect(abs(sum / field - 1) < 0.002, "\(projection) \(fov)°: Σω \(sum), expected \(field)")
            #expect(abs(cosine / projected - 1) < 0.002, "\(projection) \(fov)°: Σω cos θ \(cosine), expected \(projected)")
            // Outside the circle: nothing.
            #expect(omega[0] == 0 && omega[599] == 0)
        }
    }

    @Test(arguments: FisheyeProjection.allCases)
    func projectionRoundTrips(_ projection: FisheyeProjection) throws {
        for degrees in stride(from: 0.0, through: 90.0, by: 7.5) {
            let theta = degrees * .pi / 180
            let back = try #require(projection.angle(projection.radius(theta)))
            #expect(abs(back - theta) < 1e-12, "\(projection) \(degrees)°")
        }
        // The orthographic and equisolid lenses map nothing beyond their domain.
        #expect(FisheyeProjection.orthographic.angle(1.01) == nil && FisheyeProjection.equisolid.angle(2.01) == nil)
    }

    @Test func viewsAndRemap() throws {
        let lens = FisheyeLens(projection: .equidistant, fieldOfView: 180, width: 64, height: 64)
        #expect(lens.radianceView == "-vta -vp 0 0 0 -vd 0 0 1 -vu 0 1 0 -vh 180 -vv 180 -vs 0 -vl 0")
        #expect(FisheyeLens(projection: .equisolid, fieldOfView: 180, width: 64, height: 64).radianceView == nil)
        #expect(FisheyeLens(projection: .orthographic, fieldOfView: 180, width: 64, height: 64).radianceView?.hasPrefix("-vth") == true)
        // Equisolid → equidistant: a ring at θ = 60° lands at r = 60/90 of the radius.
        let solid = FisheyeLens(projection: .equisolid, fieldOfView: 180, width: 256, height: 256)
        var values = [Float](repeating: 0, count: 256 * 256)
        for y in 0..<256 {
            for x in 0..<256 {
                guard let t = solid.angle(column: x, row: y) else { continue }
                values[y * 256 + x] = Float(t * 180 / .pi)  // each pixel holds its own θ in degrees
            }
        }
        let remapped = solid.equidistantRemap(values, side: 256, channels: 1)
        let x = 128 + Int((60.0 / 90 * 128).rounded()), y = 128
        #expect(abs(remapped[y * 256 + x] - 60) < 0.6, "\(remapped[y * 256 + x])")
    }

    /// `--circle auto`: an off-centre circle of varying brightness on a dark, noisy surround.
    @Test func detectsTheImageCircle() throws {
        let w = 640, h = 480
        var y = [Float](repeating: 0, count: w * h)
        var rng = SeededGenerator(seed: 9)
        for row in 0..<h {
            for column in 0..<w {
                let dx = Double(column) + 0.5 - 300, dy = Double(row) + 0.5 - 210
                let r = (dx * dx + dy * dy).squareRoot()
                let noise = Float.random(in: -0.002...0.002, using: &rng)
                y[row * w + column] = (r <= 180 ? Float(1 + 0.5 * cos(r / 60)) : 0) + noise
            }
        }
        let found = try #require(FisheyeLens.detectCircle(luminance: y, width: w, height: h))
        #expect(abs(found.x - 300) < 0.5 && abs(found.y - 210) < 0.5 && abs(found.r - 180) < 0.5, "\(found)")
        #expect(FisheyeLens.detectCircle(luminance: [Float](repeating: 0, count: w * h), width: w, height: h) == nil)
    }
}
