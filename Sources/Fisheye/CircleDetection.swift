import Foundation
import ImageCore

extension FisheyeLens {
    /// The image circle of an image whose surround is dark (a circular fisheye's black
    /// corners), which must lie wholly inside the image. Nil when fewer than 100 pixels are lit.
    ///
    /// A first estimate takes the pixels whose 5 × 5 average is brighter than `fraction` of
    /// the median over the inscribed circle's inner half — or than the dark corners' level
    /// plus five times their noise, when that is higher — as the circle: their centroid and
    /// √(count / π). It is then refined: every pixel more than 4 px inside the estimated edge
    /// counts as lit, and within 4 px of it a pixel counts when it is brighter than halfway
    /// between the sky just inside the edge (4 to 8 px in, per 64th of the circle) and the
    /// surround just outside (4 to 8 px out); the centroid and √(count / π) of those give the
    /// next estimate, until it moves less than 0.01 px. The half level marks the edge of a
    /// circle blurred by demosaicing as well as of a sharp one, where a fixed low threshold
    /// counts the blurred fringe (and, in a dark frame, the surround's noise) as sky.
    public static func detectCircle(luminance y: [Float], width: Int, height: Int, fraction: Float = 0.02) -> (x: Double, y: Double, r: Double)? {
        let detector = CircleDetector(luminance: y, width: width, height: height)
        guard var circle = detector.firstEstimate(fraction: fraction) else { return nil }
        for _ in 0..<8 {
            guard let next = detector.refined(circle) else { break }
            let moved = max(abs(next.x - circle.x), abs(next.y - circle.y), abs(next.r - circle.r))
            circle = next
            if moved < 0.01 { break }
        }
        return circle
    }
}

/// The steps of `FisheyeLens.detectCircle`, over one image's luminance.
struct CircleDetector {
    typealias Circle = (x: Double, y: Double, r: Double)
    /// The luminance, and its average over 5 × 5 pixels (`smoothed`) for the first estimate.
    let y: [Float], smooth: [Float]
    let width: Int, height: Int

    init(luminance: [Float], width: Int, height: Int) {
        y = luminance
        smooth = Self.smoothed(luminance, width: width, height: height)
        self.width = width
        self.height = height
    }

    /// Each pixel's mean over the 5 × 5 pixels around it that lie in the image and hold a
    /// finite value (NaN where none does): five times less noise, so that the first
    /// estimate's threshold can stay below a dim horizon in a dark frame. Sums along the row
    /// first (left to right), then down the column (top to bottom), in `Float`; the rows'
    /// sums are kept for five rows at a time, so that nothing but the result is as large as
    /// the image.
    static func smoothed(_ v: [Float], width: Int, height: Int) -> [Float] {
        var out = [Float](repeating: .nan, count: v.count)
        guard width > 0, height > 0 else { return out }
        // The sums and counts of finite values along rows r − 2 … r + 2, row y in slot y % 5.
        var sums = [Float](repeating: 0, count: 5 * width), counts = [Float](repeating: 0, count: 5 * width)
        func alongRow(_ row: Int) {
            let slot = (row % 5) * width, first = row * width
            for column in 0..<width {
                var s: Float = 0, n: Float = 0
                for k in max(-2, -column)...min(2, width - 1 - column) {
                    let x = v[first + column + k]
                    s += x.isFinite ? x : 0
                    n += x.isFinite ? 1 : 0
                }
                sums[slot + column] = s
                counts[slot + column] = n
            }
        }
        for row in 0..<min(2, height) { alongRow(row) }
        for row in 0..<height {
            if row + 2 < height { alongRow(row + 2) }
            for column in 0..<width {
                var s: Float = 0, n: Float = 0
                for k in max(-2, -row)...min(2, height - 1 - row) {
                    let j = ((row + k) % 5) * width + column
                    s += sums[j]
                    n += counts[j]
                }
                out[row * width + column] = n > 0 ? s / n : .nan
            }
        }
        return out
    }

    /// Half the width of the band around the edge that the refinement looks at, pixels.
    static let band = 4.0
    /// Azimuth sectors with their own level of the sky inside the edge.
    static let sectors = 64

    /// The pixels above a threshold: `fraction` of the central median, or the dark corners'
    /// median plus five robust standard deviations when that is higher.
    func firstEstimate(fraction: Float) -> Circle? {
        let cx = Double(width) / 2, cy = Double(height) / 2, inner = Double(min(width, height)) / 4
        var central: [Float] = []
        forEachPixel(of: smooth) { column, row, v in
            let dx = Double(column) + 0.5 - cx, dy = Double(row) + 0.5 - cy
            if dx * dx + dy * dy <= inner * inner { central.append(v) }
        }
        guard let median = Self.median(central) else { return nil }
        var threshold = max(median * fraction, Float.leastNonzeroMagnitude)
        if let dark = darkCorners(below: threshold) { threshold = max(threshold, dark.level + 5 * dark.sigma) }
        var count = 0, sx = 0.0, sy = 0.0
        forEachPixel(of: smooth) { column, row, v in
            guard v > threshold else { return }
            count += 1
            sx += Double(column) + 0.5
            sy += Double(row) + 0.5
        }
        guard count >= 100 else { return nil }
        return (sx / Double(count), sy / Double(count), (Double(count) / Double.pi).squareRoot())
    }

    /// The median and robust standard deviation (1.4826 × the median absolute deviation) of
    /// the image's corner squares whose median lies below `threshold`; nil when none does.
    func darkCorners(below threshold: Float) -> (level: Float, sigma: Float)? {
        let side = max(2, min(width, height) / 16)
        var values: [Float] = []
        for (left, top) in [(0, 0), (width - side, 0), (0, height - side), (width - side, height - side)] {
            var corner: [Float] = []
            for row in top..<(top + side) { for column in left..<(left + side) { corner.append(smooth[row * width + column]) } }
            if let m = Self.median(corner), m < threshold { values += corner }
        }
        guard let level = Self.median(values), let spread = Self.median(values.map { abs($0 - level) }) else { return nil }
        return (level, 1.4826 * spread)
    }

    /// The next estimate from `c`: the centroid and √(count / π) of the pixels inside the
    /// band around its edge and of those in the band above the local half level. Where the
    /// sky at the edge is less than 10 times the surround's noise, the 5 × 5 averages are
    /// classified instead of the pixels (noise would otherwise tip many of them).
    func refined(_ c: Circle) -> Circle? {
        var values = y
        var levels = edgeLevels(c, of: y)
        if let sigma = levels.sigma, (Self.median(levels.inside) ?? 0) - levels.outside < 10 * sigma {
            values = smooth
            levels = edgeLevels(c, of: smooth)
        }
        var count = 0, sx = 0.0, sy = 0.0
        forEachPixel(of: values, near: c, margin: Self.band + 1) { column, row, v in
            let px = Double(column) + 0.5, py = Double(row) + 0.5
            let d = ((px - c.x) * (px - c.x) + (py - c.y) * (py - c.y)).squareRoot()
            guard d < c.r + Self.band else { return }
            if d >= c.r - Self.band {
                let inside = levels.inside[sector(px - c.x, py - c.y)]
                guard v > (inside + levels.outside) / 2 else { return }
            }
            count += 1
            sx += px
            sy += py
        }
        guard count >= 100 else { return nil }
        return (sx / Double(count), sy / Double(count), (Double(count) / Double.pi).squareRoot())
    }

    /// The median of `values` just inside the edge of `c` (from one to two bands in) per
    /// sector — the whole ring's where a sector has no pixel — and just outside it (one to
    /// two bands out; 0 where that ring leaves the image), with the outside ring's robust
    /// standard deviation (nil without one).
    func edgeLevels(_ c: Circle, of values: [Float]) -> (inside: [Float], outside: Float, sigma: Float?) {
        var rings = [[Float]](repeating: [], count: Self.sectors)
        var outside: [Float] = []
        forEachPixel(of: values, near: c, margin: 2 * Self.band + 1) { column, row, v in
            let dx = Double(column) + 0.5 - c.x, dy = Double(row) + 0.5 - c.y
            let d = (dx * dx + dy * dy).squareRoot()
            if d >= c.r - 2 * Self.band && d < c.r - Self.band { rings[sector(dx, dy)].append(v) }
            if d >= c.r + Self.band && d < c.r + 2 * Self.band { outside.append(v) }
        }
        let whole = Self.median(rings.flatMap { $0 }) ?? 0
        let level = Self.median(outside) ?? 0
        let sigma = Self.median(outside.map { abs($0 - level) }).map { 1.4826 * $0 }
        return (rings.map { Self.median($0) ?? whole }, level, sigma)
    }

    /// The azimuth sector of an offset from the centre.
    func sector(_ dx: Double, _ dy: Double) -> Int {
        let turn = (atan2(dy, dx) / (2 * .pi) + 1).truncatingRemainder(dividingBy: 1)
        return min(Self.sectors - 1, Int(turn * Double(Self.sectors)))
    }

    /// Calls `body` for every pixel, or only for those of the square around `circle`
    /// widened by `margin`.
    func forEachPixel(of values: [Float]? = nil, near circle: Circle? = nil, margin: Double = 0,
                      _ body: (_ column: Int, _ row: Int, _ value: Float) -> Void) {
        let values = values ?? y
        var rows = 0..<height, columns = 0..<width
        if let c = circle {
            func span(_ centre: Double, _ limit: Int) -> Range<Int> {
                let low = min(max(Int((centre - c.r - margin).rounded(.down)), 0), limit)
                return low..<min(max(Int((centre + c.r + margin).rounded(.up)), low), limit)
            }
            rows = span(c.y, height)
            columns = span(c.x, width)
        }
        for row in rows { for column in columns { body(column, row, values[row * width + column]) } }
    }

    /// The median of the finite values; nil when there are none.
    static func median(_ values: [Float]) -> Float? {
        let sorted = values.filter(\.isFinite).sorted()
        return sorted.isEmpty ? nil : sorted[sorted.count / 2]
    }
}
