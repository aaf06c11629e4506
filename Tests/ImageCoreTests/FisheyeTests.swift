import Foundation
@testable import ImageCore
@testable import Fisheye
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
            let values = FisheyeGeometry(lens: lens, width: 600, height: 400).arrays
            let (theta, omega) = (values.theta, values.solidAngle)
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

    /// The former whole-image computation of θ and ω (one pass over every row, the
    /// geometry's own rule): `FisheyeGeometry` must reproduce it bit for bit.
    static func formerGeometry(_ lens: FisheyeLens, width: Int, height: Int) -> (theta: [Float], solidAngle: [Double]) {
        var theta = [Float](repeating: 0, count: width * height)
        var omega = [Double](repeating: 0, count: width * height)
        let f = lens.focalLength
        func cornerRow(_ y: Int) -> (directions: [SIMD3<Double>?], inside: [Bool]) {
            let cy = Double(y), dy = cy - lens.centerY
            return ((0...width).map { lens.direction(x: Double($0), y: cy, clamped: true) },
                    (0...width).map { x in let dx = Double(x) - lens.centerX; return dx * dx + dy * dy < lens.radius * lens.radius })
        }
        var above = cornerRow(0)
        for y in 0..<height {
            let below = cornerRow(y + 1)
            for x in 0..<width {
                guard above.inside[x] || above.inside[x + 1] || below.inside[x] || below.inside[x + 1],
                      let a = above.directions[x], let b = above.directions[x + 1], let c = below.directions[x + 1],
                      let d = below.directions[x] else { continue }
                let dx = Double(x) + 0.5 - lens.centerX, dy = Double(y) + 0.5 - lens.centerY
                guard let angle = lens.projection.angle(min((dx * dx + dy * dy).squareRoot(), lens.radius) / f) else { continue }
                theta[y * width + x] = Float(angle)
                omega[y * width + x] = FisheyeLens.triangle(a, b, c) + FisheyeLens.triangle(a, c, d)
            }
            above = below
        }
        return (theta, omega)
    }

    /// One geometry for every consumer: its whole arrays equal the former whole-image
    /// computation, and any rectangle's values (computed for it alone, or read from the held
    /// arrays) equal the same pixels of the whole arrays, bit for bit — for circles inscribed,
    /// off-centre and partly outside the image, small, and larger than the image. Nothing
    /// outside `bounds` has a solid angle.
    @Test(arguments: FisheyeProjection.allCases)
    func geometryByRectanglesEqualsTheWhole(_ projection: FisheyeProjection) throws {
        let (width, height) = (97, 64)
        let lenses = [FisheyeLens(projection: projection, fieldOfView: 180, width: width, height: height),
                      FisheyeLens(projection: projection, fieldOfView: 150, centerX: 70.3, centerY: 20.8, radius: 41.6),
                      FisheyeLens(projection: projection, fieldOfView: 120, centerX: 30, centerY: 40, radius: 7.25),
                      FisheyeLens(projection: projection, fieldOfView: 180, centerX: 48.5, centerY: 32, radius: 300)]
        var random = SeededGenerator(seed: 7)
        for lens in lenses {
            let geometry = FisheyeGeometry(lens: lens, width: width, height: height), held = geometry.whole()
            let whole = geometry.arrays, former = Self.formerGeometry(lens, width: width, height: height)
            #expect(whole.theta == former.theta && whole.solidAngle == former.solidAngle, "\(lens)")
            #expect(held.arrays.theta == whole.theta && held.arrays.solidAngle == whole.solidAngle)
            let b = geometry.bounds
            var outside = 0
            for y in 0..<height {
                for x in 0..<width where !(b.top..<b.bottom).contains(y) || !(b.left..<b.right).contains(x) {
                    if whole.solidAngle[y * width + x] != 0 || whole.theta[y * width + x] != 0 { outside += 1 }
                }
            }
            #expect(outside == 0, "\(lens): \(outside) pixels outside \(b) have a solid angle")
            var rects = [PixelRect(width: width, height: height), PixelRect(top: 5, left: 0, bottom: 13, right: width),
                         PixelRect(top: 63, left: 96, bottom: 64, right: 97)]
            for _ in 0..<12 {
                let top = Int(random.next() % UInt64(height)), left = Int(random.next() % UInt64(width))
                rects.append(PixelRect(top: top, left: left, bottom: top + 1 + Int(random.next() % UInt64(height - top)),
                                       right: left + 1 + Int(random.next() % UInt64(width - left))))
            }
            for rect in rects {
                for g in [geometry, held] {
                    let differ = g.withValues(in: rect) { theta, omega, stride in
                        var differ = 0
                        for y in rect.top..<rect.bottom {
                            for x in rect.left..<rect.right {
                                let k = (y - rect.top) * stride + (x - rect.left), i = y * width + x
                                if theta[k] != whole.theta[i] || omega[k] != whole.solidAngle[i] { differ += 1 }
                            }
                        }
                        return differ
                    }
                    #expect(differ == 0, "\(lens) \(rect): \(differ) pixels differ")
                }
            }
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

    /// The former 5 × 5 smoothing of `--circle auto` (whole-image arrays for every step).
    static func formerSmoothed(_ v: [Float], width: Int, height: Int) -> [Float] {
        func pass(_ values: [Float], _ counts: [Float], along step: Int, length: Int) -> ([Float], [Float]) {
            var sums = [Float](repeating: 0, count: values.count), n = [Float](repeating: 0, count: values.count)
            for i in values.indices {
                let position = step == 1 ? i % width : i / width
                for k in max(-2, -position)...min(2, length - 1 - position) {
                    sums[i] += values[i + k * step]
                    n[i] += counts[i + k * step]
                }
            }
            return (sums, n)
        }
        let finite = v.map { $0.isFinite ? $0 : 0 }, ones = v.map { $0.isFinite ? Float(1) : 0 }
        let rows = pass(finite, ones, along: 1, length: width)
        let both = pass(rows.0, rows.1, along: width, length: height)
        return zip(both.0, both.1).map { $1 > 0 ? $0 / $1 : .nan }
    }

    /// The smoothing kept to five rows of sums gives the former whole-array result bit for
    /// bit (NaN where the former is NaN), on noisy values with NaNs and infinities, for images
    /// from one pixel to wider than five in either direction. (The former read out of its
    /// array for an image one pixel wide and taller than that, whose column pass it took for
    /// a row pass: such a column is compared with its own mean of up to five values.)
    @Test func smoothingEqualsTheFormer() throws {
        var rng = SeededGenerator(seed: 3)
        for (width, height) in [(1, 1), (7, 1), (2, 3), (5, 5), (6, 9), (33, 20)] {
            var v = (0..<(width * height)).map { _ in Float(rng.next() % 10_000) / 997 - 3 }
            for _ in 0..<(width * height / 6) {
                let i = Int(rng.next() % UInt64(width * height))
                v[i] = [Float.nan, .infinity, -.infinity][Int(rng.next() % 3)]
            }
            let got = CircleDetector.smoothed(v, width: width, height: height), former = Self.formerSmoothed(v, width: width, height: height)
            #expect(zip(got, former).allSatisfy { $0.bitPattern == $1.bitPattern || ($0.isNaN && $1.isNaN) }, "\(width)×\(height)")
        }
        let column: [Float] = [1, 2, .nan, 4, 8, 16, 32]
        let expected: [Float] = [3 / 2, 7 / 3, 15 / 4, 30 / 4, 60 / 4, 60 / 4, 56 / 3]
        #expect(CircleDetector.smoothed(column, width: 1, height: 7) == expected)
        // A row of NaNs: no finite value within reach.
        let nans = [Float](repeating: .nan, count: 12)
        #expect(CircleDetector.smoothed(nans, width: 4, height: 3).allSatisfy { $0.isNaN })
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
