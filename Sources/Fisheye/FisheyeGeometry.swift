import Foundation
import ImageCore

/// One fisheye lens on one `width` × `height` image: each pixel's θ (of its centre, radians;
/// on the circle for a pixel whose centre lies outside it) and solid angle ω (sr), both 0 for
/// a pixel wholly outside the image circle. Made once per image and shared by whatever needs
/// it: a streamed measurement asks for the rectangles its patches cover (`withValues`), a
/// writer for the whole arrays (`arrays`), and a value made `whole()` computes them once for
/// both.
///
/// The solid angle is the spherical quadrilateral spanned by the view directions of the
/// pixel's four corners (two spherical triangles, each by Van Oosterom and Strackee's
/// formula), accurate at the rim where the centre's dΩ/dA is not; a corner beyond the image
/// circle is taken on the circle, so a pixel on the rim counts about the part of the field it
/// sees. A pixel's values depend on its own corners only, so a rectangle's values equal the
/// same pixels of the whole arrays bit for bit, however the image is cut.
public struct FisheyeGeometry: Sendable {
    public let lens: FisheyeLens
    public let width: Int, height: Int
    /// The pixels a corner inside the circle may touch: outside this rectangle θ and ω are 0.
    public let bounds: PixelRect
    /// The whole arrays, when made (`whole()`).
    private let held: Values?

    /// θ and ω of a set of pixels, row-major.
    public struct Values: Sendable {
        public var theta: [Float]
        public var solidAngle: [Double]
    }

    public init(lens: FisheyeLens, width: Int, height: Int) {
        self.lens = lens
        self.width = width
        self.height = height
        bounds = Self.bounds(lens, width: width, height: height)
        held = nil
    }

    private init(_ geometry: FisheyeGeometry, held: Values) {
        lens = geometry.lens
        width = geometry.width
        height = geometry.height
        bounds = geometry.bounds
        self.held = held
    }

    /// The same geometry holding its whole arrays (computed now, once; 12 bytes a pixel):
    /// for consumers that need them whole and share them with others.
    public func whole() -> FisheyeGeometry {
        held == nil ? FisheyeGeometry(self, held: computeWhole()) : self
    }

    /// The whole arrays, row-major over the image: those held, else computed now.
    public var arrays: Values { held ?? computeWhole() }

    /// Each pixel centre's azimuth about the image circle's centre, radians counter-clockwise
    /// from the image's +x axis (row-major; 0 outside the circle, where `solidAngle` is 0).
    public func azimuths(solidAngle omega: [Double]) -> [Float] {
        var azimuth = [Float](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width where omega[y * width + x] > 0 {
                azimuth[y * width + x] = Float(atan2(lens.centerY - (Double(y) + 0.5), Double(x) + 0.5 - lens.centerX))
            }
        }
        return azimuth
    }

    /// Calls `body` with θ and ω of the pixels of `rect` (which must lie in the image): row y,
    /// column x at index (y − rect.top) · stride + (x − rect.left). Read from the held arrays,
    /// else computed for the rectangle alone.
    public func withValues<R>(in rect: PixelRect,
                              _ body: (_ theta: UnsafePointer<Float>, _ solidAngle: UnsafePointer<Double>, _ stride: Int) throws -> R) rethrows -> R {
        if let held {
            return try held.theta.withUnsafeBufferPointer { t in
                try held.solidAngle.withUnsafeBufferPointer { o in
                    let first = rect.top * width + rect.left
                    return try body(t.baseAddress! + first, o.baseAddress! + first, width)
                }
            }
        }
        let count = max(0, rect.width * rect.height)
        return try withUnsafeTemporaryAllocation(of: Float.self, capacity: max(1, count)) { t in
            try withUnsafeTemporaryAllocation(of: Double.self, capacity: max(1, count)) { o in
                fill(rect, theta: t.baseAddress!, solidAngle: o.baseAddress!)
                return try body(t.baseAddress!, o.baseAddress!, rect.width)
            }
        }
    }

    /// θ and ω of every pixel, row bands in parallel.
    private func computeWhole() -> Values {
        var theta = [Float](repeating: 0, count: width * height)
        var omega = [Double](repeating: 0, count: width * height)
        let width = width
        theta.withUnsafeMutableBufferPointer { t in
            omega.withUnsafeMutableBufferPointer { o in
                // Safe because each chunk writes its own rows; the lens is only read.
                nonisolated(unsafe) let t = t, o = o
                Parallel.forEachChunk(count: height, minimumChunk: 16) { rows in
                    fill(PixelRect(top: rows.lowerBound, left: 0, bottom: rows.upperBound, right: width),
                         theta: t.baseAddress! + rows.lowerBound * width, solidAngle: o.baseAddress! + rows.lowerBound * width)
                }
            }
        }
        return Values(theta: theta, solidAngle: omega)
    }

    /// Writes θ and ω of the pixels of `rect` (row-major, `rect.width` apart; 0 outside the
    /// circle). Each corner's direction is computed once (a corner is shared by four pixels):
    /// the corner row above a pixel row and the one below, and which of them lie inside.
    func fill(_ rect: PixelRect, theta t: UnsafeMutablePointer<Float>, solidAngle o: UnsafeMutablePointer<Double>) {
        let n = rect.width
        guard n > 0, rect.height > 0 else { return }
        t.initialize(repeating: 0, count: n * rect.height)
        o.initialize(repeating: 0, count: n * rect.height)
        let inner = PixelRect(top: max(rect.top, bounds.top), left: max(rect.left, bounds.left),
                              bottom: min(rect.bottom, bounds.bottom), right: min(rect.right, bounds.right))
        guard !inner.isEmpty else { return }
        let lens = lens, f = lens.focalLength, radius = lens.radius
        func cornerRow(_ y: Int) -> (directions: [SIMD3<Double>?], inside: [Bool]) {
            let cy = Double(y), dy = cy - lens.centerY
            return ((inner.left...inner.right).map { lens.direction(x: Double($0), y: cy, clamped: true) },
                    (inner.left...inner.right).map { x in let dx = Double(x) - lens.centerX; return dx * dx + dy * dy < radius * radius })
        }
        var above = cornerRow(inner.top)
        for y in inner.top..<inner.bottom {
            let below = cornerRow(y + 1)
            for x in inner.left..<inner.right {
                let k = x - inner.left
                guard above.inside[k] || above.inside[k + 1] || below.inside[k] || below.inside[k + 1],
                      let a = above.directions[k], let b = above.directions[k + 1], let c = below.directions[k + 1],
                      let d = below.directions[k] else { continue }
                let dx = Double(x) + 0.5 - lens.centerX, dy = Double(y) + 0.5 - lens.centerY
                guard let angle = lens.projection.angle(min((dx * dx + dy * dy).squareRoot(), radius) / f) else { continue }
                let i = (y - rect.top) * n + (x - rect.left)
                t[i] = Float(angle)
                o[i] = FisheyeLens.triangle(a, b, c) + FisheyeLens.triangle(a, c, d)
            }
            above = below
        }
    }

    /// The pixels with a corner strictly inside the circle (|corner − centre| < radius), and
    /// a pixel more on each side, within the image.
    static func bounds(_ lens: FisheyeLens, width: Int, height: Int) -> PixelRect {
        guard lens.problem == nil else { return PixelRect(width: width, height: height) }
        func span(_ centre: Double, _ size: Int) -> (Int, Int) {
            let low = Int((centre - lens.radius).rounded(.down)) - 1, high = Int((centre + lens.radius).rounded(.up)) + 1
            return (min(max(low, 0), size), min(max(high, 0), size))
        }
        let (left, right) = span(lens.centerX, width), (top, bottom) = span(lens.centerY, height)
        return PixelRect(top: top, left: left, bottom: bottom, right: right)
    }
}
