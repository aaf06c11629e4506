import Foundation
import ImageCore

/// How a fisheye lens maps the angle θ from its axis to the distance r from the image
/// circle's centre (f: focal length in pixels).
public enum FisheyeProjection: String, Sendable, Codable, CaseIterable {
    /// r = f · θ (Radiance's `-vta`).
    case equidistant
    /// r = 2 f · sin(θ / 2) (equal-area; Radiance has no such view).
    case equisolid
    /// r = f · sin θ (Radiance's `-vth`).
    case orthographic
    /// r = 2 f · tan(θ / 2) (Radiance's `-vts`).
    case stereographic

    /// r / f at angle θ (radians).
    public func radius(_ theta: Double) -> Double {
        switch self {
        case .equidistant: return theta
        case .equisolid: return 2 * sin(theta / 2)
        case .orthographic: return sin(theta)
        case .stereographic: return 2 * tan(theta / 2)
        }
    }

    /// θ (radians) at r / f; nil where the projection reaches no direction (orthographic
    /// beyond r = f, equisolid beyond r = 2f).
    public func angle(_ r: Double) -> Double? {
        switch self {
        case .equidistant: return r
        case .equisolid: return r <= 2 ? 2 * asin(r / 2) : nil
        case .orthographic: return r <= 1 ? asin(r) : nil
        case .stereographic: return 2 * atan(r / 2)
        }
    }

    /// The largest field of view (degrees) the projection can have.
    public var maximumFieldOfView: Double {
        switch self {
        case .orthographic: return 180
        case .equisolid, .equidistant, .stereographic: return 360
        }
    }
}

/// A circular fisheye image: its projection, full field of view and image circle (the
/// circle where θ = fieldOfView / 2), with each point's view direction; each pixel's θ and
/// solid angle on an image of a given size are its `FisheyeGeometry`'s.
/// Pixels are unit squares, pixel (x, y) spanning [x, x + 1] × [y, y + 1]; the optical axis
/// is the camera's view direction, and "up" in the image is −y.
public struct FisheyeLens: Sendable, Equatable, Codable {
    public var projection: FisheyeProjection
    /// Full field of view across the image circle, degrees.
    public var fieldOfView: Double
    /// The image circle's centre, pixels (the image's centre is (width / 2, height / 2)).
    public var centerX: Double
    public var centerY: Double
    /// The image circle's radius, pixels.
    public var radius: Double

    public init(projection: FisheyeProjection, fieldOfView: Double, centerX: Double, centerY: Double, radius: Double) {
        self.projection = projection
        self.fieldOfView = fieldOfView
        self.centerX = centerX
        self.centerY = centerY
        self.radius = radius
    }

    /// The circle inscribed in a `width` × `height` image, centred.
    public init(projection: FisheyeProjection, fieldOfView: Double, width: Int, height: Int) {
        self.init(projection: projection, fieldOfView: fieldOfView, centerX: Double(width) / 2, centerY: Double(height) / 2,
                  radius: Double(min(width, height)) / 2)
    }

    /// Why the lens cannot be used, or nil.
    /// The largest radius and centre coordinate an image circle may have, in pixels.
    public static let coordinateLimit = 1e7

    public var problem: String? {
        guard fieldOfView > 0, fieldOfView <= projection.maximumFieldOfView else {
            return "a field of view of \(fieldOfView)° is outside 0…\(projection.maximumFieldOfView)° for the \(projection.rawValue) projection"
        }
        guard radius > 0, radius.isFinite, centerX.isFinite, centerY.isFinite else { return "the image circle needs a positive radius" }
        guard radius <= Self.coordinateLimit, abs(centerX) <= Self.coordinateLimit, abs(centerY) <= Self.coordinateLimit else {
            return "the image circle (centre \(centerX), \(centerY), radius \(radius) px) lies beyond ±\(Int(Self.coordinateLimit)) pixels"
        }
        return nil
    }

    /// Half the field of view, radians.
    public var maximumAngle: Double { fieldOfView * .pi / 360 }

    /// The focal length in pixels.
    public var focalLength: Double { radius / projection.radius(maximumAngle) }

    /// The unit view direction at image point (x, y) (pixel units), in the camera frame
    /// (z along the axis, x right, y up), or nil outside what the projection maps.
    public func direction(x: Double, y: Double) -> SIMD3<Double>? {
        direction(x: x, y: y, clamped: false)
    }

    /// `direction`, or with `clamped` a point beyond the image circle taken on the circle
    /// along the same azimuth.
    func direction(x: Double, y: Double, clamped: Bool) -> SIMD3<Double>? {
        let dx = x - centerX, dy = centerY - y
        let r = (dx * dx + dy * dy).squareRoot()
        let rn = (clamped ? min(r, radius) : r) / focalLength
        guard let theta = projection.angle(rn) else { return nil }
        guard r > 0 else { return SIMD3(0, 0, 1) }
        let s = sin(theta)
        return SIMD3(s * dx / r, s * dy / r, cos(theta))
    }

    /// θ of the centre of pixel (x, y), radians; nil outside the mapped directions.
    public func angle(column x: Int, row y: Int) -> Double? {
        let dx = Double(x) + 0.5 - centerX, dy = Double(y) + 0.5 - centerY
        return projection.angle((dx * dx + dy * dy).squareRoot() / focalLength)
    }

    /// The solid angle of the spherical triangle of unit vectors a, b, c.
    static func triangle(_ a: SIMD3<Double>, _ b: SIMD3<Double>, _ c: SIMD3<Double>) -> Double {
        let cross = SIMD3(b.y * c.z - b.z * c.y, b.z * c.x - b.x * c.z, b.x * c.y - b.y * c.x)
        let numerator = abs((a * cross).sum())
        let denominator = 1 + (a * b).sum() + (b * c).sum() + (c * a).sum()
        return 2 * atan2(numerator, denominator)
    }

    /// Radiance's view (`VIEW=` header line) of the square picture around the image circle
    /// (`squareAroundCircle`): `-vta`, `-vth` or `-vts` looking along +z with up +y, `-vh` and
    /// `-vv` the field of view; nil for the equisolid projection, which Radiance has no view for
    /// (such a picture is first remapped to an equidistant one: `equidistantRemap`).
    public var radianceView: String? {
        let type: String
        switch projection {
        case .equidistant: type = "-vta"
        case .orthographic: type = "-vth"
        case .stereographic: type = "-vts"
        case .equisolid: return nil
        }
        return String(format: "%@ -vp 0 0 0 -vd 0 0 1 -vu 0 1 0 -vh %.6g -vv %.6g -vs 0 -vl 0", type, fieldOfView, fieldOfView)
    }

    /// The square picture whose inscribed circle is the image circle: its side in pixels
    /// (the diameter, rounded), and where its top-left pixel lies in the image.
    public var squareAroundCircle: (side: Int, left: Int, top: Int) {
        let side = max(1, Int((2 * radius).rounded()))
        return (side, Int((centerX - Double(side) / 2).rounded()), Int((centerY - Double(side) / 2).rounded()))
    }

    /// The same image circle seen through the equidistant projection: for an output pixel at
    /// distance r_d from the centre, θ = r_d / f_d and the input is read at r_s = f_s · r(θ)
    /// along the same azimuth (bilinear; radiance values, so no Jacobian). `values` has
    /// `channels` interleaved planes over a `side` × `side` square centred on the circle.
    public func equidistantRemap(_ values: [Float], side: Int, channels: Int) -> [Float] {
        var out = [Float](repeating: 0, count: values.count)
        let c = Double(side) / 2, fd = radius / maximumAngle, fs = focalLength
        for y in 0..<side {
            for x in 0..<side {
                let dx = Double(x) + 0.5 - c, dy = Double(y) + 0.5 - c
                let rd = (dx * dx + dy * dy).squareRoot()
                let theta = rd / fd
                guard theta <= maximumAngle + 0.5 / fd else { continue }
                let scale = rd > 0 ? fs * projection.radius(theta) / rd : 0
                let sx = c + dx * scale - 0.5, sy = c + dy * scale - 0.5
                let x0 = Int(sx.rounded(.down)), y0 = Int(sy.rounded(.down))
                let fx = Float(sx - Double(x0)), fy = Float(sy - Double(y0))
                for ch in 0..<channels {
                    func at(_ xx: Int, _ yy: Int) -> Float {
                        let cx = min(max(xx, 0), side - 1), cy = min(max(yy, 0), side - 1)
                        return values[(cy * side + cx) * channels + ch]
                    }
                    let top = at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx
                    let bottom = at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx
                    out[(y * side + x) * channels + ch] = top * (1 - fy) + bottom * fy
                }
            }
        }
        return out
    }
}

extension FisheyeLens {
    /// This lens seen in the square around its image circle (`squareAroundCircle`): the
    /// circle inscribed in the square, the projection unchanged.
    var inSquareAroundCircle: FisheyeLens {
        let side = Double(squareAroundCircle.side)
        var square = self
        square.centerX = side / 2
        square.centerY = side / 2
        square.radius = side / 2
        return square
    }

    /// The lens of the picture `radianceSquare` makes: the circle inscribed in the square,
    /// equidistant when this lens is equisolid (the projection Radiance has no view for).
    public var radianceSquareLens: FisheyeLens {
        var square = inSquareAroundCircle
        if projection == .equisolid { square.projection = .equidistant }
        return square
    }

    /// `values` (`channels` interleaved planes of a `width` × `height` image) as the picture
    /// Radiance's tools read: the square around the image circle, 0 where the circle leaves
    /// the image, remapped to the equidistant projection when the lens is equisolid
    /// (`equidistantRemap`). Every layer of a picture (its pixels, its clip mask) goes
    /// through this same mapping.
    public func radianceSquare(_ values: [Float], width: Int, height: Int, channels: Int) -> [Float] {
        let (side, left, top) = squareAroundCircle
        var out = [Float](repeating: 0, count: side * side * channels)
        for y in 0..<side where (0..<height).contains(top + y) {
            for x in 0..<side where (0..<width).contains(left + x) {
                let from = ((top + y) * width + left + x) * channels, to = (y * side + x) * channels
                for c in 0..<channels { out[to + c] = values[from + c] }
            }
        }
        guard projection == .equisolid else { return out }
        return inSquareAroundCircle.equidistantRemap(out, side: side, channels: channels)
    }
}

/// A fisheye lens as given before the image's size is known: projection, field of view and,
/// optionally, the image circle (centre x, y and radius in output pixels; default: the
/// circle inscribed in the image).
public struct FisheyeSpec: Sendable, Equatable, Codable {
    public var projection: FisheyeProjection
    public var fieldOfView: Double
    public var circle: [Double]?

    public init(projection: FisheyeProjection, fieldOfView: Double, circle: [Double]? = nil) {
        self.projection = projection
        self.fieldOfView = fieldOfView
        self.circle = circle
    }

    /// The lens for a `width` × `height` image.
    public func lens(width: Int, height: Int) -> FisheyeLens {
        guard let c = circle, c.count == 3 else {
            return FisheyeLens(projection: projection, fieldOfView: fieldOfView, width: width, height: height)
        }
        return FisheyeLens(projection: projection, fieldOfView: fieldOfView, centerX: c[0], centerY: c[1], radius: c[2])
    }
}
