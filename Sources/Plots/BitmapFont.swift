/// A proportional sans-serif bitmap font for chart text, drawn for this module.
///
/// Glyphs sit on a 13-pixel cell: capitals and digits are 9 pixels tall, lower-case letters
/// 6, descenders 3. Strokes are one pixel wide at scale 1, which renders crisp tick labels
/// at the default chart sizes. Larger integer scales are smoothed rather than blown up: each
/// glyph is enlarged with the Scale2x/Scale3x rules (which fill the steps of diagonals and
/// round outer corners), enlarged twice more, and averaged back down, so edges get
/// anti-aliased coverage while straight strokes stay sharp. The bold weight widens every
/// stroke to the right by one pixel at scales 1 and 2 (two at 3 and 4, …). The font covers printable ASCII plus µ · × ± ° ² − – — … ≤ ≥ ≈ Δ σ
/// → ← ′; other characters draw as a box.
public enum BitmapFont {
    /// Height of the glyph cell in pixels at scale 1.
    public static let cellHeight = 13
    /// Row of the cell just below the baseline (the first descender row).
    public static let baseline = 10
    /// Row of the top of capitals and digits.
    public static let capTop = 1
    /// Height of capitals and digits.
    public static let capHeight = 9
    /// Width of a space at scale 1.
    public static let spaceWidth = 3
    /// Empty columns between two glyphs at scale 1.
    public static let letterSpacing = 1

    /// One glyph at scale 1: `rows[r]` has bit `width − 1 − x` set where column `x` is ink.
    struct Glyph: Sendable {
        var width: Int
        var top: Int
        var rows: [UInt32]

        func ink(_ x: Int, _ row: Int) -> Bool {
            guard x >= 0, x < width, row >= 0, row < rows.count else { return false }
            return rows[row] >> UInt32(width - 1 - x) & 1 == 1
        }
    }

    static let glyphs: [Unicode.Scalar: Glyph] = {
        var table: [Unicode.Scalar: Glyph] = [:]
        for (character, top, source) in glyphSources {
            table[character.unicodeScalars.first!] = parse(top, source)
        }
        table[" "] = Glyph(width: spaceWidth, top: 0, rows: [])
        return table
    }()

    static let missingGlyph = parse(missingGlyphSource.0, missingGlyphSource.1)

    private static func parse(_ top: Int, _ source: String) -> Glyph {
        let rows = source.split(separator: " ")
        let width = rows.first?.count ?? 0
        precondition(rows.allSatisfy { $0.count == width } && top + rows.count <= cellHeight, "malformed glyph \(source)")
        return Glyph(width: width, top: top, rows: rows.map { row in
            row.reduce(UInt32(0)) { ($0 << 1) | ($1 == "#" ? 1 : 0) }
        })
    }

    static func glyph(_ scalar: Unicode.Scalar) -> Glyph {
        glyphs[scalar] ?? missingGlyph
    }

    /// Pixels the bold weight adds to the right of every stroke at `scale`.
    static func boldExtra(scale: Int, bold: Bool) -> Int {
        bold ? (max(1, scale) + 1) / 2 : 0
    }

    /// Whether the font has a glyph of its own for `scalar` (otherwise a box is drawn).
    public static func hasGlyph(_ scalar: Unicode.Scalar) -> Bool {
        glyphs[scalar] != nil
    }

    /// Width in pixels of `text` drawn at `scale`, from the left edge of the first glyph to
    /// the right edge of the last.
    public static func width(of text: String, scale: Int = 1, bold: Bool = false) -> Int {
        let s = max(1, scale), extra = boldExtra(scale: s, bold: bold)
        var total = 0
        var count = 0
        for scalar in text.unicodeScalars {
            let g = glyph(scalar)
            total += g.width * s + (g.rows.isEmpty ? 0 : extra)
            count += 1
        }
        guard count > 0 else { return 0 }
        return total + (count - 1) * letterSpacing * s
    }

    /// Renders `text` into a coverage mask `width(of:) × cellHeight·scale`, 0 = paper, 1 = ink.
    public static func mask(_ text: String, scale: Int = 1, bold: Bool = false) -> TextMask {
        let s = max(1, scale)
        let width = self.width(of: text, scale: s, bold: bold)
        let height = cellHeight * s
        var coverage = [Float](repeating: 0, count: width * height)
        let extra = boldExtra(scale: s, bold: bold)
        var penX = 0
        for scalar in text.unicodeScalars {
            let g = glyph(scalar)
            defer { penX += (g.width + letterSpacing) * s + (g.rows.isEmpty ? 0 : extra) }
            if g.rows.isEmpty { continue }
            var image = render(g, scale: s)
            if extra > 0 { image = widened(image, by: extra) }
            // `image` includes one empty glyph pixel of padding on every side.
            let originX = penX - s, originY = (g.top - 1) * s
            for y in 0..<image.height {
                let ty = originY + y
                guard ty >= 0, ty < height else { continue }
                for x in 0..<image.width {
                    let tx = originX + x
                    let v = image.values[y * image.width + x]
                    guard v > 0, tx >= 0, tx < width else { continue }
                    coverage[ty * width + tx] = max(coverage[ty * width + tx], v)
                }
            }
        }
        return TextMask(width: width, height: height, baseline: baseline * s, coverage: coverage)
    }

    /// A binary or coverage image used while enlarging glyphs.
    struct Plane {
        var width: Int
        var height: Int
        var values: [Float]

        subscript(x: Int, y: Int) -> Float {
            x >= 0 && y >= 0 && x < width && y < height ? values[y * width + x] : 0
        }
    }

    /// The glyph at `scale` with one glyph pixel of padding around it.
    static func render(_ g: Glyph, scale: Int) -> Plane {
        var plane = Plane(width: g.width + 2, height: g.rows.count + 2, values: [])
        plane.values = (0..<plane.height).flatMap { y in
            (0..<plane.width).map { x in g.ink(x - 1, y - 1) ? Float(1) : 0 }
        }
        guard scale > 1 else { return plane }
        // Enlarge with the corner-filling rules to 2·scale, then average 2×2 blocks.
        let big: Plane
        switch scale {
        case 2: big = scale2x(scale2x(plane))
        case 3: big = scale2x(scale3x(plane))
        case 4: big = scale2x(scale2x(scale2x(plane)))
        default: big = nearest(scale2x(plane), factor: scale)
        }
        return downsample2(big)
    }

    /// Each pixel takes the largest value of itself and the `extra` pixels to its left
    /// (strokes grow to the right); the plane grows by `extra` columns.
    static func widened(_ p: Plane, by extra: Int) -> Plane {
        var out = Plane(width: p.width + extra, height: p.height, values: [])
        out.values.reserveCapacity(out.width * out.height)
        for y in 0..<p.height {
            for x in 0..<out.width {
                var v: Float = 0
                for k in 0...extra { v = max(v, p[x - k, y]) }
                out.values.append(v)
            }
        }
        return out
    }

    /// Scale2x: each pixel becomes 2×2; a corner takes a neighbour's value when the two
    /// neighbours meeting at that corner agree and differ from the other two.
    static func scale2x(_ p: Plane) -> Plane {
        var out = Plane(width: p.width * 2, height: p.height * 2, values: [Float](repeating: 0, count: p.width * p.height * 4))
        for y in 0..<p.height {
            for x in 0..<p.width {
                let e = p[x, y], a = p[x, y - 1], b = p[x + 1, y], c = p[x - 1, y], d = p[x, y + 1]
                let e0 = (c == a && c != d && a != b) ? a : e
                let e1 = (a == b && a != c && b != d) ? b : e
                let e2 = (d == c && d != b && c != a) ? c : e
                let e3 = (b == d && b != a && d != c) ? d : e
                let o = (2 * y) * out.width + 2 * x
                out.values[o] = e0
                out.values[o + 1] = e1
                out.values[o + out.width] = e2
                out.values[o + out.width + 1] = e3
            }
        }
        return out
    }

    /// Scale3x: each pixel becomes 3×3 with the same corner-filling idea on a 3×3 neighbourhood.
    static func scale3x(_ p: Plane) -> Plane {
        var out = Plane(width: p.width * 3, height: p.height * 3, values: [Float](repeating: 0, count: p.width * p.height * 9))
        for y in 0..<p.height {
            for x in 0..<p.width {
                let a = p[x - 1, y - 1], b = p[x, y - 1], c = p[x + 1, y - 1]
                let d = p[x - 1, y], e = p[x, y], f = p[x + 1, y]
                let g = p[x - 1, y + 1], h = p[x, y + 1], i = p[x + 1, y + 1]
                var cell = [Float](repeating: e, count: 9)
                if b != h && d != f {
                    cell[0] = d == b ? d : e
                    cell[1] = (d == b && e != c) || (b == f && e != a) ? b : e
                    cell[2] = b == f ? f : e
                    cell[3] = (d == b && e != g) || (d == h && e != a) ? d : e
                    cell[5] = (b == f && e != i) || (h == f && e != c) ? f : e
                    cell[6] = d == h ? d : e
                    cell[7] = (d == h && e != i) || (h == f && e != g) ? h : e
                    cell[8] = h == f ? f : e
                }
                for k in 0..<9 {
                    out.values[(3 * y + k / 3) * out.width + 3 * x + k % 3] = cell[k]
                }
            }
        }
        return out
    }

    /// Each pixel repeated `factor` × `factor` times.
    static func nearest(_ p: Plane, factor: Int) -> Plane {
        var out = Plane(width: p.width * factor, height: p.height * factor, values: [])
        out.values.reserveCapacity(out.width * out.height)
        for y in 0..<out.height {
            for x in 0..<out.width { out.values.append(p.values[(y / factor) * p.width + x / factor]) }
        }
        return out
    }

    /// The mean of every 2×2 block.
    static func downsample2(_ p: Plane) -> Plane {
        var out = Plane(width: p.width / 2, height: p.height / 2, values: [])
        out.values.reserveCapacity(out.width * out.height)
        for y in 0..<out.height {
            for x in 0..<out.width {
                out.values.append((p[2 * x, 2 * y] + p[2 * x + 1, 2 * y] + p[2 * x, 2 * y + 1] + p[2 * x + 1, 2 * y + 1]) / 4)
            }
        }
        return out
    }
}

/// Text rendered to coverage values, ready to be composited in any colour.
public struct TextMask: Sendable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels (the whole glyph cell).
    public var height: Int
    /// Row just below the baseline, counted from the top of the mask.
    public var baseline: Int
    /// `width × height` values, 0 = paper, 1 = ink.
    public var coverage: [Float]
}
