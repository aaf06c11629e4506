import Measuring
import Analysis
import Engine
import Foundation
import ImageCore
import Photometry

/// The circumsolar zone of a fisheye image: the pixels within `angle` of the sun, whose
/// direction in the camera's frame comes from the camera's orientation and the sun's position
/// (docs/studies.md#the-sun-in-the-image). Its share of E_v says how much of a measurement
/// rests on the sun and its aureole — where stray light, the lens's model at its rim and
/// clipping matter most.
public struct CircumsolarResult: Codable, Sendable, Equatable {
    /// The zone's radius, degrees.
    public var angle: Double
    /// The sun's angle from the optical axis (degrees), and its image position (pixels) when
    /// it lies within the lens's field of view.
    public var sunFromAxis: Double
    public var sunX: Double?, sunY: Double?
    /// Whether the zone reaches into the image circle, its pixels there, and their share of
    /// E_v (Σ Y cos θ ω over the zone ÷ over the circle).
    public var inView: Bool
    public var pixels: Int
    public var illuminanceShare: Double
}

extension Pipeline {
    /// The circumsolar zone of `input` through `geometry` for the sun at `sun` (a unit vector in
    /// the camera's frame: right, up, forward), `angle` degrees across its radius.
    public static func circumsolar(_ input: AnalysisInput, geometry: FisheyeGeometry, sun: SIMD3<Double>, angle: Double) -> CircumsolarResult {
        let lens = geometry.lens, image = input.image
        let fromAxis = acos(min(1, max(-1, sun.z))) * 180 / .pi
        let position = Self.imagePosition(of: sun, lens: lens)
        var result = CircumsolarResult(angle: angle, sunFromAxis: fromAxis, sunX: position?.x, sunY: position?.y, inView: false, pixels: 0,
                                       illuminanceShare: 0)
        guard fromAxis - angle < lens.maximumAngle * 180 / .pi else { return result }
        let toLuminance = image.exposure.mode == .radiance ? Photometric.radianceEfficacy : 1
        let weights = Rec2020.luminanceWeights * toLuminance, cosZone = cos(angle * .pi / 180)
        let samples = image.pixels.samples, width = image.width
        let box = zoneBox(sun: sun, angle: angle, lens: lens, width: width, height: image.height)
        var zone = 0.0, total = 0.0
        GlareEvaluation.scan(image, geometry: geometry) { i, theta, omega in
            let y = (SIMD3(Double(samples[3 * i]), Double(samples[3 * i + 1]), Double(samples[3 * i + 2])) * weights).sum()
            guard y.isFinite else { return }
            let w = y * cos(theta) * omega
            total += w
            let x = i % width, row = i / width
            guard x >= box.left, x < box.right, row >= box.top, row < box.bottom else { return }
            guard let d = lens.direction(x: Double(i % width) + 0.5, y: Double(i / width) + 0.5), (d * sun).sum() >= cosZone else { return }
            zone += w
            result.pixels += 1
        }
        result.inView = result.pixels > 0
        result.illuminanceShare = total > 0 ? zone / total : 0
        return result
    }

    /// The pixels that can lie within `angle` of `sun`: the box about the zone's rim in the
    /// image (2 pixels wider), or the whole image when part of the rim falls outside the field.
    static func zoneBox(sun: SIMD3<Double>, angle: Double, lens: FisheyeLens, width: Int, height: Int) -> PixelRect {
        guard var points = circumsolarOutline(sun: sun, angle: angle, lens: lens) else { return PixelRect(top: 0, left: 0, bottom: height, right: width) }
        if let centre = imagePosition(of: sun, lens: lens) { points.append(centre) }
        let xs = points.map(\.x), ys = points.map(\.y)
        return PixelRect(top: max(0, Int(ys.min()!) - 2), left: max(0, Int(xs.min()!) - 2),
                         bottom: min(height, Int(ys.max()!) + 3), right: min(width, Int(xs.max()!) + 3))
    }

    /// The zone's rim in the image (72 points, pixels), or nil when part of it lies beyond the
    /// field of view.
    public static func circumsolarOutline(sun: SIMD3<Double>, angle: Double, lens: FisheyeLens) -> [SIMD2<Double>]? {
        let helper = abs(sun.z) < 0.9 ? SIMD3<Double>(0, 0, 1) : SIMD3<Double>(1, 0, 0)
        var p = SIMD3(sun.y * helper.z - sun.z * helper.y, sun.z * helper.x - sun.x * helper.z, sun.x * helper.y - sun.y * helper.x)
        p /= (p * p).sum().squareRoot()
        let q = SIMD3(sun.y * p.z - sun.z * p.y, sun.z * p.x - sun.x * p.z, sun.x * p.y - sun.y * p.x), a = angle * .pi / 180
        var rim: [SIMD2<Double>] = []
        for k in 0..<72 {
            let phi = Double(k) * .pi / 36
            guard let point = imagePosition(of: sun * cos(a) + (p * cos(phi) + q * sin(phi)) * sin(a), lens: lens) else { return nil }
            rim.append(point)
        }
        return rim
    }

    /// Where a direction (camera frame) falls in the image, or nil beyond the field of view.
    public static func imagePosition(of d: SIMD3<Double>, lens: FisheyeLens) -> SIMD2<Double>? {
        let theta = acos(min(1, max(-1, d.z)))
        guard theta <= lens.maximumAngle else { return nil }
        let r = lens.focalLength * lens.projection.radius(theta), planar = (d.x * d.x + d.y * d.y).squareRoot()
        guard planar > 0 else { return SIMD2(lens.centerX, lens.centerY) }
        return SIMD2(lens.centerX + r * d.x / planar, lens.centerY - r * d.y / planar)
    }

    /// The share of each pixel `selection` holds (by weight) that lies in the zone.
    public static func circumsolarShare(of selection: PixelSelection, lens: FisheyeLens, sun: SIMD3<Double>, angle: Double) -> Double {
        let b = selection.bounds, cosZone = cos(angle * .pi / 180)
        var inside = 0.0, all = 0.0
        for y in b.top..<b.bottom {
            for x in b.left..<b.right {
                let w = Double(selection.weights?[y * selection.width + x] ?? 1)
                guard w > 0 else { continue }
                all += w
                if let d = lens.direction(x: Double(x) + 0.5, y: Double(y) + 0.5), (d * sun).sum() >= cosZone { inside += w }
            }
        }
        return all > 0 ? inside / all : 0
    }
}
