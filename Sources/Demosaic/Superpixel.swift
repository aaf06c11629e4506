import ImageCore

/// Half-resolution "superpixel" demosaicing: no interpolation at all.
///
/// Output pixel (y, x) is the 2 × 2 cell at ActiveArea rows 2y, 2y+1 and columns 2x,
/// 2x+1: red and blue are the cell's red and blue samples, green is `(g₁ + g₂) · 0.5` in
/// `Float`. Clip bit of a plane = OR of the clip bits of the cell's samples of that colour.
enum Superpixel {
    static func run(_ mosaic: Mosaic) -> (values: ImageBuffer<Float>, clip: [UInt8]) {
        let outW = mosaic.width / 2, outH = mosaic.height / 2
        let phase = mosaic.phase
        return mosaic.demosaic(width: outW, height: outH) { io in
            Parallel.forEachChunk(count: outH, minimumChunk: 32) { rows in
                band(io, outputTop: 0, rows: rows, width: mosaic.width, phase: phase)
            }
        }
    }

    /// Output `rows` (half-size rows) into `io.dst` and `io.mask`, whose first row is output
    /// row `outputTop`; `width` is the mosaic's.
    static func band(_ io: KernelBuffers, outputTop: Int, rows: Range<Int>, width inW: Int, phase: BayerPhase) {
        let outW = inW / 2
        // Position inside the cell (row, col) of red, blue and the two greens.
        var offsets = [Int](repeating: 0, count: 4) // red, blue, green 1, green 2 (in-row offsets)
        var greens = 0
        for dy in 0..<2 {
            for dx in 0..<2 {
                let o = dy * inW + dx
                switch phase.color(row: dy, col: dx) {
                case CFAColor.red: offsets[0] = o
                case CFAColor.blue: offsets[1] = o
                default:
                    offsets[2 + greens] = o
                    greens += 1
                }
            }
        }
        let (oR, oB, oG1, oG2) = (offsets[0], offsets[1], offsets[2], offsets[3])
        let (pR, pG, pB) = (phase.redPlane, phase.greenPlane, phase.bluePlane)
        let bitR = UInt8(1) << UInt8(pR), bitG = UInt8(1) << UInt8(pG), bitB = UInt8(1) << UInt8(pB)
        for y in rows {
            let s = io.src.row(2 * y), k = io.clipIn.row(2 * y)
            let d = io.dst.row(y - outputTop), m = io.mask.row(y - outputTop)
            for x in 0..<outW {
                let c = 2 * x
                d[3 * x + pR] = s[c + oR]
                d[3 * x + pG] = (s[c + oG1] + s[c + oG2]) * 0.5
                d[3 * x + pB] = s[c + oB]
                let r = k[c + oR] & 1, g = (k[c + oG1] | k[c + oG2]) & 1, b = k[c + oB] & 1
                m[x] = (r != 0 ? bitR : 0) | (g != 0 ? bitG : 0) | (b != 0 ? bitB : 0)
            }
        }
    }
}
