import Measuring
import Engine
/// Iso-contours of a per-pixel weight map (a semantic mask), for outlining it on charts.
public enum MaskContours {
    /// The closed polygons where `values` crosses `level`, in image pixel coordinates
    /// ((0, 0) = top-left corner of the first pixel), by marching squares.
    ///
    /// Each value sits at its pixel's centre. Maps larger than `maxSize` on their longer side
    /// are first reduced by averaging square blocks of pixels (the value then sits at the
    /// block's centre), so the outline has about as many vertices as the chart has pixels.
    /// The map is surrounded by a ring of zeros half a block outside the image, so every
    /// contour closes; a region touching the image edge is outlined along that edge. A
    /// corner point is inside when its value is ≥ `level`; a cell with two opposite corners
    /// inside is split by the mean of its four corners. Crossings are placed by linear
    /// interpolation along the cell edges.
    public static func isoLines(_ values: [Float], width: Int, height: Int, level: Float = 0.5,
                                maxSize: Int = 800) -> [[SIMD2<Double>]] {
        guard width > 0, height > 0, values.count == width * height else { return [] }
        let f = max(1, (max(width, height) + maxSize - 1) / max(1, maxSize))
        let gw = (width + f - 1) / f, gh = (height + f - 1) / f
        // Padded grid: index 0 and gw + 1 (gh + 1) are the ring of zeros.
        let pw = gw + 2, ph = gh + 2
        var grid = [Float](repeating: 0, count: pw * ph)
        for by in 0..<gh {
            for bx in 0..<gw {
                var sum: Float = 0
                var n: Float = 0
                for y in (by * f)..<min(height, (by + 1) * f) {
                    for x in (bx * f)..<min(width, (bx + 1) * f) {
                        sum += values[y * width + x]
                        n += 1
                    }
                }
                grid[(by + 1) * pw + bx + 1] = sum / n
            }
        }
        func centres(_ blocks: Int, _ size: Int) -> [Double] {
            var c = [-Double(f) / 2]
            for b in 0..<blocks { c.append(Double(b * f + min((b + 1) * f, size)) / 2) }
            c.append(Double(size) + Double(f) / 2)
            return c
        }
        let cx = centres(gw, width), cy = centres(gh, height)
        func value(_ i: Int, _ j: Int) -> Float { grid[j * pw + i] }
        func inside(_ i: Int, _ j: Int) -> Bool { value(i, j) >= level }

        // Edge ids: horizontal edge (i, j)–(i + 1, j) is 2·(j·pw + i), vertical (i, j)–(i, j + 1) is that + 1.
        func horizontal(_ i: Int, _ j: Int) -> Int { 2 * (j * pw + i) }
        func vertical(_ i: Int, _ j: Int) -> Int { 2 * (j * pw + i) + 1 }
        var links: [Int: [Int]] = [:]
        func connect(_ a: Int, _ b: Int) {
            links[a, default: []].append(b)
            links[b, default: []].append(a)
        }
        for j in 0..<(ph - 1) {
            for i in 0..<(pw - 1) {
                let tl = inside(i, j), tr = inside(i + 1, j), br = inside(i + 1, j + 1), bl = inside(i, j + 1)
                let top = horizontal(i, j), bottom = horizontal(i, j + 1), left = vertical(i, j), right = vertical(i + 1, j)
                switch (tl, tr, br, bl) {
                case (false, false, false, false), (true, true, true, true): break
                case (false, false, false, true), (true, true, true, false): connect(left, bottom)
                case (false, false, true, false), (true, true, false, true): connect(bottom, right)
                case (false, false, true, true), (true, true, false, false): connect(left, right)
                case (false, true, false, false), (true, false, true, true): connect(top, right)
                case (false, true, true, false), (true, false, false, true): connect(top, bottom)
                case (false, true, true, true), (true, false, false, false): connect(left, top)
                case (false, true, false, true), (true, false, true, false):
                    // Saddle: the centre decides whether the inside corners connect.
                    let centre = (value(i, j) + value(i + 1, j) + value(i + 1, j + 1) + value(i, j + 1)) / 4
                    if (centre >= level) == tr {
                        connect(left, top)
                        connect(bottom, right)
                    } else {
                        connect(top, right)
                        connect(left, bottom)
                    }
                }
            }
        }
        func point(_ edge: Int) -> SIMD2<Double> {
            let cell = edge / 2, i = cell % pw, j = cell / pw
            let (i2, j2) = edge % 2 == 0 ? (i + 1, j) : (i, j + 1)
            let a = Double(value(i, j)), b = Double(value(i2, j2))
            let t = a == b ? 0.5 : min(max((Double(level) - a) / (b - a), 0), 1)
            return SIMD2(cx[i] + t * (cx[i2] - cx[i]), cy[j] + t * (cy[j2] - cy[j]))
        }
        var loops: [[SIMD2<Double>]] = []
        var visited = Set<Int>()
        for start in links.keys.sorted() where !visited.contains(start) {
            var loop: [SIMD2<Double>] = []
            var previous = -1, current = start
            while !visited.contains(current) {
                visited.insert(current)
                loop.append(point(current))
                let next = links[current]!.first { $0 != previous && !visited.contains($0) }
                guard let next else { break }
                previous = current
                current = next
            }
            if loop.count >= 3 { loops.append(loop) }
        }
        return loops
    }

    /// The area of a closed polygon (shoelace formula, always ≥ 0).
    public static func area(_ polygon: [SIMD2<Double>]) -> Double {
        guard polygon.count >= 3 else { return 0 }
        var twice = 0.0
        for k in polygon.indices {
            let a = polygon[k], b = polygon[(k + 1) % polygon.count]
            twice += a.x * b.y - b.x * a.y
        }
        return abs(twice) / 2
    }
}
