/// An RGB raster that draws anti-aliased shapes and text.
///
/// Coordinates are pixels with (0, 0) at the top-left corner of the top-left pixel, so a
/// one-pixel line through pixel centres (x = k + 0.5) covers exactly one column. Shapes are
/// rasterised to coverage (the fraction of each pixel they cover) and blended over the
/// existing pixels in sRGB values: `new = old + (colour − old) · coverage · opacity`.
/// Lines get round joins, and butt ends at the two ends of an open polyline (so dashes and
/// ticks end where they are told to); polygons are filled with the even–odd rule, sampled
/// on four sub-scanlines with exact horizontal coverage.
public struct Canvas: Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// `width × height × 3` bytes, row by row from the top.
    public private(set) var pixels: [UInt8]
    /// Drawing is limited to these pixels (half-open ranges); the whole canvas by default.
    private var clipX: Range<Int>
    private var clipY: Range<Int>

    /// A canvas filled with `background` (its opacity is ignored).
    public init(width: Int, height: Int, background: RGBColor = .white) {
        precondition(width > 0 && height > 0, "canvas must be at least 1×1")
        self.width = width
        self.height = height
        var p = [UInt8](repeating: 0, count: width * height * 3)
        for i in 0..<(width * height) {
            p[3 * i] = background.red
            p[3 * i + 1] = background.green
            p[3 * i + 2] = background.blue
        }
        pixels = p
        clipX = 0..<width
        clipY = 0..<height
    }

    /// The pixels as an image.
    public var image: RasterImage {
        RasterImage(width: width, height: height, rgb: pixels)
    }

    /// Limits drawing to the pixels whose centres lie in `rect`; `nil` allows the whole canvas.
    public mutating func setClip(_ rect: PlotRect?) {
        guard let rect else {
            clipX = 0..<width
            clipY = 0..<height
            return
        }
        let x0 = max(0, Int((rect.minX - 0.5).rounded(.up))), x1 = min(width, Int((rect.maxX - 0.5).rounded(.up)))
        let y0 = max(0, Int((rect.minY - 0.5).rounded(.up))), y1 = min(height, Int((rect.maxY - 0.5).rounded(.up)))
        clipX = x0..<max(x0, x1)
        clipY = y0..<max(y0, y1)
    }

    /// Draws one item of a `Drawing`.
    public mutating func draw(_ item: DrawItem) {
        switch item {
        case .rect(let r, let color): fill(r, color)
        case .line(let points, let style, let closed, _): stroke(points, style, closed: closed)
        case .polygon(let points, let color, _): fill(polygon: points, color)
        case .circle(let center, let radius, let color, let outline):
            if let color { fillCircle(center: center, radius: radius, color) }
            if let outline { strokeCircle(center: center, radius: radius, outline) }
        case .text(let text, let at, let style): draw(text: text, at: at, style: style)
        case .image(let image, let rect): draw(image: image, in: rect)
        case .clip(let rect): setClip(rect)
        }
    }

    // MARK: - Blending

    @inline(__always)
    private mutating func blend(_ x: Int, _ y: Int, _ color: RGBColor, _ alpha: Double) {
        guard alpha > 0, clipX.contains(x), clipY.contains(y) else { return }
        let i = (y * width + x) * 3
        if alpha >= 1 {
            pixels[i] = color.red
            pixels[i + 1] = color.green
            pixels[i + 2] = color.blue
            return
        }
        @inline(__always) func mix(_ old: UInt8, _ new: UInt8) -> UInt8 {
            UInt8((Double(old) + (Double(new) - Double(old)) * alpha).rounded())
        }
        pixels[i] = mix(pixels[i], color.red)
        pixels[i + 1] = mix(pixels[i + 1], color.green)
        pixels[i + 2] = mix(pixels[i + 2], color.blue)
    }

    /// Coverage values over a rectangle of pixels, combined by maximum, then blended once
    /// (so overlapping parts of one shape do not darken).
    private struct Coverage {
        let x0: Int, y0: Int, w: Int, h: Int
        var values: [Float]

        init?(x0: Int, y0: Int, x1: Int, y1: Int) {
            guard x1 > x0, y1 > y0 else { return nil }
            self.x0 = x0
            self.y0 = y0
            w = x1 - x0
            h = y1 - y0
            values = [Float](repeating: 0, count: w * h)
        }

        @inline(__always) mutating func raise(_ x: Int, _ y: Int, _ v: Float) {
            let i = (y - y0) * w + (x - x0)
            if v > values[i] { values[i] = v }
        }
    }

    private mutating func composite(_ coverage: Coverage, _ color: RGBColor) {
        for y in 0..<coverage.h {
            for x in 0..<coverage.w {
                let v = coverage.values[y * coverage.w + x]
                if v > 0 { blend(coverage.x0 + x, coverage.y0 + y, color, Double(min(1, v)) * color.opacity) }
            }
        }
    }

    /// The clip region intersected with a bounding box (in pixel indices).
    private func region(_ minX: Double, _ minY: Double, _ maxX: Double, _ maxY: Double) -> Coverage? {
        guard minX.isFinite, minY.isFinite, maxX.isFinite, maxY.isFinite else { return nil }
        let x0 = max(clipX.lowerBound, Int(max(-1e9, minX).rounded(.down)))
        let y0 = max(clipY.lowerBound, Int(max(-1e9, minY).rounded(.down)))
        let x1 = min(clipX.upperBound, Int(min(1e9, maxX).rounded(.up)) + 1)
        let y1 = min(clipY.upperBound, Int(min(1e9, maxY).rounded(.up)) + 1)
        return Coverage(x0: x0, y0: y0, x1: x1, y1: y1)
    }

    // MARK: - Rectangles

    /// Fills `rect`; pixels it covers partly get partial coverage.
    public mutating func fill(_ rect: PlotRect, _ color: RGBColor) {
        guard rect.width > 0, rect.height > 0 else { return }
        let x0 = max(clipX.lowerBound, Int(rect.minX.rounded(.down))), x1 = min(clipX.upperBound, Int(rect.maxX.rounded(.up)))
        let y0 = max(clipY.lowerBound, Int(rect.minY.rounded(.down))), y1 = min(clipY.upperBound, Int(rect.maxY.rounded(.up)))
        guard x1 > x0, y1 > y0 else { return }
        for y in y0..<y1 {
            let cy = min(Double(y + 1), rect.maxY) - max(Double(y), rect.minY)
            for x in x0..<x1 {
                let cx = min(Double(x + 1), rect.maxX) - max(Double(x), rect.minX)
                blend(x, y, color, cx * cy * color.opacity)
            }
        }
    }

    // MARK: - Lines

    /// Strokes a polyline (closed: also from the last point back to the first), dashed when
    /// the style has a dash pattern.
    public mutating func stroke(_ points: [PlotPoint], _ style: LineStyle, closed: Bool = false) {
        guard points.count >= 2, style.width > 0 else { return }
        var path = points
        if closed { path.append(points[0]) }
        let pieces = style.dash.count >= 2 && style.dash.allSatisfy({ $0 >= 0 }) && style.dash.contains(where: { $0 > 0 })
            ? Self.dashes(path, pattern: style.dash) : [path]
        let hw = style.width / 2
        let xs = path.map(\.x), ys = path.map(\.y)
        guard var coverage = region(xs.min()! - hw - 1, ys.min()! - hw - 1, xs.max()! + hw + 1, ys.max()! + hw + 1) else { return }
        for piece in pieces where piece.count >= 2 {
            let butt = !(closed && pieces.count == 1)
            for i in 0..<(piece.count - 1) {
                addSegment(piece[i], piece[i + 1], halfWidth: hw, buttStart: butt && i == 0,
                           buttEnd: butt && i == piece.count - 2, into: &coverage)
            }
        }
        composite(coverage, style.color)
    }

    private func addSegment(_ a: PlotPoint, _ b: PlotPoint, halfWidth hw: Double, buttStart: Bool, buttEnd: Bool,
                            into coverage: inout Coverage) {
        let delta = b - a
        let length = (delta * delta).sum().squareRoot()
        let reach = hw + 1
        let x0 = max(coverage.x0, Int((min(a.x, b.x) - reach).rounded(.down)))
        let x1 = min(coverage.x0 + coverage.w, Int((max(a.x, b.x) + reach).rounded(.up)) + 1)
        let y0 = max(coverage.y0, Int((min(a.y, b.y) - reach).rounded(.down)))
        let y1 = min(coverage.y0 + coverage.h, Int((max(a.y, b.y) + reach).rounded(.up)) + 1)
        guard x1 > x0, y1 > y0 else { return }
        let u = length > 0 ? delta / length : PlotPoint(1, 0)
        for y in y0..<y1 {
            for x in x0..<x1 {
                let p = PlotPoint(Double(x) + 0.5, Double(y) + 0.5) - a
                let along = (p * u).sum()
                let across = abs(p.x * u.y - p.y * u.x)
                var distance: Double
                var factor = 1.0
                if along < 0 {
                    if buttStart {
                        distance = across
                        factor = min(1, max(0, along + 0.5))
                    } else {
                        distance = (p * p).sum().squareRoot()
                    }
                } else if along > length {
                    if buttEnd {
                        distance = across
                        factor = min(1, max(0, length - along + 0.5))
                    } else {
                        let q = p - delta
                        distance = (q * q).sum().squareRoot()
                    }
                } else {
                    distance = across
                    if buttStart { factor = min(factor, along + 0.5) }
                    if buttEnd { factor = min(factor, length - along + 0.5) }
                }
                let v = min(1, max(0, hw + 0.5 - distance)) * min(1, factor)
                if v > 0 { coverage.raise(x, y, Float(v)) }
            }
        }
    }

    /// Splits a polyline into the "on" pieces of a dash pattern measured along its length.
    static func dashes(_ path: [PlotPoint], pattern: [Double]) -> [[PlotPoint]] {
        var pieces: [[PlotPoint]] = []
        var current: [PlotPoint] = [path[0]]
        var index = 0
        var remaining = pattern[0]
        var on = true
        for i in 0..<(path.count - 1) {
            var a = path[i]
            let b = path[i + 1]
            var segment = ((b - a) * (b - a)).sum().squareRoot()
            while segment > 0 {
                if remaining >= segment {
                    remaining -= segment
                    a = b
                    segment = 0
                    if on { current.append(b) }
                } else {
                    let point = a + (b - a) * (remaining / segment)
                    segment -= remaining
                    a = point
                    if on {
                        current.append(point)
                        pieces.append(current)
                    } else {
                        current = [point]
                    }
                    on.toggle()
                    index = (index + 1) % pattern.count
                    remaining = pattern[index]
                }
            }
        }
        if on && current.count >= 2 { pieces.append(current) }
        return pieces
    }

    // MARK: - Polygons and circles

    /// Fills a polygon (even–odd rule) with anti-aliased edges.
    public mutating func fill(polygon points: [PlotPoint], _ color: RGBColor) {
        guard points.count >= 3 else { return }
        let xs = points.map(\.x), ys = points.map(\.y)
        guard let coverage = region(xs.min()!, ys.min()!, xs.max()!, ys.max()!) else { return }
        let subRows = 4
        var row = [Double](repeating: 0, count: coverage.w)
        for y in coverage.y0..<(coverage.y0 + coverage.h) {
            for k in 0..<row.count { row[k] = 0 }
            for s in 0..<subRows {
                let sy = Double(y) + (Double(s) + 0.5) / Double(subRows)
                var crossings: [Double] = []
                for i in points.indices {
                    let a = points[i], b = points[(i + 1) % points.count]
                    if (a.y <= sy) != (b.y <= sy) { crossings.append(a.x + (sy - a.y) / (b.y - a.y) * (b.x - a.x)) }
                }
                crossings.sort()
                var pair = 0
                while pair + 1 < crossings.count {
                    let left = crossings[pair], right = crossings[pair + 1]
                    pair += 2
                    let first = max(coverage.x0, Int(left.rounded(.down)))
                    let last = min(coverage.x0 + coverage.w - 1, Int(right.rounded(.up)) - 1)
                    guard first <= last else { continue }
                    for x in first...last {
                        let overlap = min(Double(x + 1), right) - max(Double(x), left)
                        if overlap > 0 { row[x - coverage.x0] += overlap / Double(subRows) }
                    }
                }
            }
            for k in 0..<coverage.w where row[k] > 0 {
                blend(coverage.x0 + k, y, color, min(1, row[k]) * color.opacity)
            }
        }
    }

    /// Fills a disc.
    public mutating func fillCircle(center: PlotPoint, radius: Double, _ color: RGBColor) {
        guard radius > 0, var coverage = region(center.x - radius - 1, center.y - radius - 1,
                                                center.x + radius + 1, center.y + radius + 1) else { return }
        for y in coverage.y0..<(coverage.y0 + coverage.h) {
            for x in coverage.x0..<(coverage.x0 + coverage.w) {
                let d = PlotPoint(Double(x) + 0.5, Double(y) + 0.5) - center
                let v = min(1, max(0, radius + 0.5 - (d * d).sum().squareRoot()))
                if v > 0 { coverage.raise(x, y, Float(v)) }
            }
        }
        composite(coverage, color)
    }

    /// Outlines a circle.
    public mutating func strokeCircle(center: PlotPoint, radius: Double, _ style: LineStyle) {
        let hw = style.width / 2
        guard radius > 0, var coverage = region(center.x - radius - hw - 1, center.y - radius - hw - 1,
                                                center.x + radius + hw + 1, center.y + radius + hw + 1) else { return }
        for y in coverage.y0..<(coverage.y0 + coverage.h) {
            for x in coverage.x0..<(coverage.x0 + coverage.w) {
                let d = PlotPoint(Double(x) + 0.5, Double(y) + 0.5) - center
                let v = min(1, max(0, hw + 0.5 - abs((d * d).sum().squareRoot() - radius)))
                if v > 0 { coverage.raise(x, y, Float(v)) }
            }
        }
        composite(coverage, style.color)
    }

    // MARK: - Text and images

    /// Draws `text` with `BitmapFont`, placed by the style's anchors relative to `at`.
    public mutating func draw(text: String, at: PlotPoint, style: TextStyle) {
        guard !text.isEmpty else { return }
        let scale = max(1, style.scale)
        let mask = BitmapFont.mask(text, scale: scale, bold: style.bold)
        let offset = style.baselineOffset(width: Double(mask.width))
        // Screen position of the left end of the baseline, on whole pixels for crisp glyphs.
        let left: Int, base: Int
        if style.rotated {
            left = Int((at.x + offset.across).rounded())
            base = Int((at.y - offset.along).rounded())
        } else {
            left = Int((at.x + offset.along).rounded())
            base = Int((at.y + offset.across).rounded())
        }
        // Mask pixel (u, v) → screen pixel.
        let place: (Int, Int) -> (Int, Int) = style.rotated
            ? { u, v in (left + v - mask.baseline, base - 1 - u) }
            : { u, v in (left + u, base - mask.baseline + v) }
        if let halo = style.halo {
            let radius = 1.5 * Double(scale)
            let reach = Int(radius)
            var offsets: [(Int, Int)] = []
            for dy in -reach...reach {
                for dx in -reach...reach where Double(dx * dx + dy * dy) <= radius * radius { offsets.append((dx, dy)) }
            }
            let w = mask.width + 2 * reach, h = mask.height + 2 * reach
            var grown = [Float](repeating: 0, count: w * h)
            for v in 0..<mask.height {
                for u in 0..<mask.width {
                    let c = mask.coverage[v * mask.width + u]
                    guard c > 0 else { continue }
                    for (dx, dy) in offsets {
                        let i = (v + reach + dy) * w + (u + reach + dx)
                        grown[i] = max(grown[i], min(1, c * 2))
                    }
                }
            }
            for v in 0..<h {
                for u in 0..<w where grown[v * w + u] > 0 {
                    let (x, y) = place(u - reach, v - reach)
                    blend(x, y, halo, Double(grown[v * w + u]) * halo.opacity)
                }
            }
        }
        for v in 0..<mask.height {
            for u in 0..<mask.width {
                let c = mask.coverage[v * mask.width + u]
                guard c > 0 else { continue }
                let (x, y) = place(u, v)
                blend(x, y, style.color, Double(c) * style.color.opacity)
            }
        }
    }

    /// Draws `image` scaled into `rect`, each canvas pixel taking the nearest image pixel.
    public mutating func draw(image: RasterImage, in rect: PlotRect) {
        guard rect.width > 0, rect.height > 0, image.width > 0, image.height > 0 else { return }
        let x0 = max(clipX.lowerBound, Int(rect.minX.rounded())), x1 = min(clipX.upperBound, Int(rect.maxX.rounded()))
        let y0 = max(clipY.lowerBound, Int(rect.minY.rounded())), y1 = min(clipY.upperBound, Int(rect.maxY.rounded()))
        guard x1 > x0, y1 > y0 else { return }
        let sx = Double(image.width) / rect.width, sy = Double(image.height) / rect.height
        let columns = (x0..<x1).map { x in min(image.width - 1, max(0, Int((Double(x) + 0.5 - rect.minX) * sx))) }
        image.rgb.withUnsafeBufferPointer { src in
            pixels.withUnsafeMutableBufferPointer { dst in
                for y in y0..<y1 {
                    let row = min(image.height - 1, max(0, Int((Double(y) + 0.5 - rect.minY) * sy)))
                    for (k, column) in columns.enumerated() {
                        let s = (row * image.width + column) * 3, d = (y * width + x0 + k) * 3
                        dst[d] = src[s]
                        dst[d + 1] = src[s + 1]
                        dst[d + 2] = src[s + 2]
                    }
                }
            }
        }
    }

    /// The colour of pixel (`x`, `y`).
    public func pixel(_ x: Int, _ y: Int) -> SIMD3<UInt8> {
        let i = (y * width + x) * 3
        return SIMD3(pixels[i], pixels[i + 1], pixels[i + 2])
    }
}
