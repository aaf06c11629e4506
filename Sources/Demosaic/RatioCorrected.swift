import ImageCore

/// Ratio Corrected Demosaicing (RCD), after the algorithm published by Luis Sanz Rodríguez
/// (2017, github.com/LuisSR/RCD-Demosaicing), written here for scene-linear data.
///
/// 1. **Direction.** A zero-sum 7-tap high-pass filter `[1, −3, −1, 6, −1, −3, 1]` is run
///    along each column and each row of the mosaic and squared; summed over three
///    neighbours it gives the vertical and horizontal activities `V` and `H`, and
///    `vh = V / (V + H)` (1 = edges run horizontally: interpolate along rows). The same
///    on the two diagonals gives `pq`. Each is "refined": the mean of the four diagonal
///    neighbours replaces the centre value when it is further from 0.5 (more decided).
/// 2. **Low-pass.** `L = [1 2 1; 2 4 2; 1 2 1] / 16` over the mosaic: a soft luminance in
///    which red, green and blue count 1 : 2 : 1 at every site.
/// 3. **Green** at red and blue sites: from each of the four neighbouring greens,
///    `Ĝ_n = G_n · (1 + (L₀ − L_n) / (L₀ + L_n))` with `L_n` two sites away in that
///    direction (the ratio correction); the north/south and west/east estimates are
///    blended by inverse gradients, then vertical and horizontal by `vh`.
/// 4. **Red and blue**: at blue/red sites from the four diagonal colour differences
///    `C − G`, blended by inverse diagonal gradients and `pq`; then at green sites from the
///    four edge neighbours' colour differences, blended by `vh`.
///
/// Changes for scene-linear data: the ratio denominator is floored at `ratioFloor`
/// and the factor kept in [0, 2] (its range for non-negative data), so values near or
/// below black — kept negative here — cannot blow it up; and each interpolated value is
/// limited to the range of the samples it is interpolated from (the published version
/// clamps to [0, 1]), which removes overshoot, keeps every output ≤ 1 and makes flat
/// areas exact. Image edges are handled by mirroring the mosaic (reflect-101).
///
/// The image is processed in row bands (in parallel), each band in tiles whose scratch
/// buffers are allocated once per band; tiles overlap by `margin` pixels, the reach of
/// the algorithm, so the result does not depend on the tiling.
enum RatioCorrected {
    /// Pixels of context each tile reads beyond its output on every side (even, so the
    /// tile's buffer has the image's Bayer phase).
    static let margin = 10
    static let bandHeight = 64
    static let tileWidth = 256
    /// Added to gradients so that they are never zero.
    static let eps: Float = 1e-5
    /// Lower bound of the directional activities.
    static let epsSquared: Float = 1e-10
    /// Lower bound of the ratio correction's denominator `L₀ + L_n` (2⁻¹², in white units).
    static let ratioFloor: Float = 1.0 / 4096

    static func run(_ mosaic: Mosaic) -> (values: ImageBuffer<Float>, clip: [UInt8]) {
        let w = mosaic.width, h = mosaic.height
        let rowHasClip = RowClipIndex(mosaic)
        let bands = (h + bandHeight - 1) / bandHeight
        return mosaic.demosaic(width: w, height: h) { io in
            Parallel.forEach(bands) { b in
                let y0 = b * bandHeight
                band(io, outputTop: 0, y0: y0, rows: min(bandHeight, h - y0), width: w, height: h, phase: mosaic.phase,
                     rowHasClip: rowHasClip)
            }
        }
    }

    /// Demosaics rows `y0 ..< y0 + rows` (`y0` a multiple of `bandHeight`, `rows` at most
    /// `bandHeight`) into `io.dst` and `io.mask`, whose first row is image row `outputTop`.
    static func band(_ io: KernelBuffers, outputTop: Int, y0: Int, rows th: Int, width w: Int, height h: Int,
                     phase: BayerPhase, rowHasClip: RowClipIndex) {
        let tile = Tile(src: io.src.base, clipIn: io.clipIn.base, dst: io.dst.base, mask: io.mask.base, width: w, height: h,
                        phase: phase, rowHasClip: rowHasClip, outputTop: outputTop)
        defer { tile.deallocate() }
        var x0 = 0
        while x0 < w {
            let tw = min(tileWidth, w - x0)
            tile.process(y0: y0, th: th, x0: x0, tw: tw)
            x0 += tw
        }
    }

    /// One band's scratch buffers and the RCD steps on one tile.
    private struct Tile {
        let src: UnsafePointer<Float>
        let clipIn: UnsafePointer<UInt8>
        let dst: UnsafeMutablePointer<Float>
        let mask: UnsafeMutablePointer<UInt8>
        let width: Int, height: Int
        let phase: BayerPhase
        let rowHasClip: RowClipIndex
        /// The image row of the first row of `dst` and `mask`.
        let outputTop: Int

        // Scratch, (bandHeight + 2 margin) × (tileWidth + 2 margin) each.
        let cfa: UnsafeMutablePointer<Float>
        let hpfA: UnsafeMutablePointer<Float>
        let hpfB: UnsafeMutablePointer<Float>
        let vh: UnsafeMutablePointer<Float>
        /// The low-pass image during step 3, then the diagonal direction `pq`.
        let lpfPQ: UnsafeMutablePointer<Float>
        let green: UnsafeMutablePointer<Float>
        let red: UnsafeMutablePointer<Float>
        let blue: UnsafeMutablePointer<Float>
        let clipBits: UnsafeMutablePointer<UInt8>
        /// Summed-area table of clipped samples, (rows + 1) × (cols + 1).
        let clipSum: UnsafeMutablePointer<Int32>
        let columnMap: UnsafeMutablePointer<Int>
        let floatStorage: UnsafeMutablePointer<Float>

        init(src: UnsafePointer<Float>, clipIn: UnsafePointer<UInt8>, dst: UnsafeMutablePointer<Float>,
             mask: UnsafeMutablePointer<UInt8>, width: Int, height: Int, phase: BayerPhase, rowHasClip: RowClipIndex,
             outputTop: Int) {
            self.outputTop = outputTop
            self.src = src
            self.clipIn = clipIn
            self.dst = dst
            self.mask = mask
            self.width = width
            self.height = height
            self.phase = phase
            self.rowHasClip = rowHasClip
            let rows = bandHeight + 2 * margin, cols = tileWidth + 2 * margin
            let n = rows * cols
            floatStorage = .allocate(capacity: 8 * n)
            cfa = floatStorage
            hpfA = floatStorage + n
            hpfB = floatStorage + 2 * n
            vh = floatStorage + 3 * n
            lpfPQ = floatStorage + 4 * n
            green = floatStorage + 5 * n
            red = floatStorage + 6 * n
            blue = floatStorage + 7 * n
            clipBits = .allocate(capacity: n)
            clipSum = .allocate(capacity: (rows + 1) * (cols + 1))
            columnMap = .allocate(capacity: cols)
        }

        func deallocate() {
            floatStorage.deallocate()
            clipBits.deallocate()
            clipSum.deallocate()
            columnMap.deallocate()
        }

        /// Demosaics output rows `y0..<y0+th`, columns `x0..<x0+tw` (`y0`, `x0` even).
        func process(y0: Int, th: Int, x0: Int, tw: Int) {
            let m = margin
            let s = tw + 2 * m // row stride of every scratch buffer for this tile
            let rows = th + 2 * m
            let anyClip = load(y0: y0, x0: x0, rows: rows, cols: s)
            directions(th: th, tw: tw, s: s)
            lowPass(th: th, tw: tw, s: s)
            interpolateGreen(th: th, tw: tw, s: s)
            diagonalDirections(th: th, tw: tw, s: s)
            redBlueAtRedBlue(th: th, tw: tw, s: s)
            redBlueAtGreenAndStore(y0: y0, x0: x0, th: th, tw: tw, s: s)
            storeMask(y0: y0, x0: x0, th: th, tw: tw, s: s, anyClip: anyClip)
        }

        // MARK: loading

        /// Copies the tile and its margin from the mosaic, mirroring outside the image.
        /// Returns whether any copied sample is clipped.
        private func load(y0: Int, x0: Int, rows: Int, cols: Int) -> Bool {
            let m = margin
            for j in 0..<cols { columnMap[j] = reflect(x0 - m + j, width) }
            var anyClip = false
            for i in 0..<rows {
                let sr = reflect(y0 - m + i, height)
                let from = src + sr * width
                let to = cfa + i * cols
                for j in 0..<cols { to[j] = from[columnMap[j]] }
                let clipTo = clipBits + i * cols
                if rowHasClip[sr] {
                    let clipFrom = clipIn + sr * width
                    for j in 0..<cols { clipTo[j] = clipFrom[columnMap[j]] & 1 }
                    anyClip = true
                } else {
                    clipTo.initialize(repeating: 0, count: cols)
                }
            }
            return anyClip
        }

        // MARK: step 1, horizontal / vertical direction

        /// `vh` within 6 pixels of the output, from squared high-pass responses within 7.
        /// (Row pointers shifted by the filter offsets keep the inner loops free of index
        /// arithmetic, so they vectorise.)
        private func directions(th: Int, tw: Int, s: Int) {
            let m = margin
            let lo = m - 7, hi = m + tw + 7
            for i in (m - 7)..<(m + th + 7) {
                let c = cfa + i * s
                let (u1, u2, u3, d1, d2, d3) = (c - s, c - 2 * s, c - 3 * s, c + s, c + 2 * s, c + 3 * s)
                let (l1, l2, l3, r1, r2, r3) = (c - 1, c - 2, c - 3, c + 1, c + 2, c + 3)
                let a = hpfA + i * s, b = hpfB + i * s
                for j in lo..<hi {
                    let v = (u3[j] - u1[j] - d1[j] + d3[j]) - 3 * (u2[j] + d2[j]) + 6 * c[j]
                    let hz = (l3[j] - l1[j] - r1[j] + r3[j]) - 3 * (l2[j] + r2[j]) + 6 * c[j]
                    a[j] = v * v
                    b[j] = hz * hz
                }
            }
            for i in (m - 6)..<(m + th + 6) {
                let a = hpfA + i * s, b = hpfB + i * s, out = vh + i * s
                let (au, ad, bl, br) = (a - s, a + s, b - 1, b + 1)
                for j in (m - 6)..<(m + tw + 6) {
                    let vStat = max(epsSquared, au[j] + a[j] + ad[j])
                    let hStat = max(epsSquared, bl[j] + b[j] + br[j])
                    out[j] = vStat / (vStat + hStat)
                }
            }
        }

        // MARK: step 2, low-pass

        /// `L = [1 2 1; 2 4 2; 1 2 1] / 16` within 7 pixels of the output.
        private func lowPass(th: Int, tw: Int, s: Int) {
            let m = margin
            for i in (m - 7)..<(m + th + 7) {
                let c = cfa + i * s, u = c - s, d = c + s
                let (ul, ur, cl, cr, dl, dr) = (u - 1, u + 1, c - 1, c + 1, d - 1, d + 1)
                let out = lpfPQ + i * s
                for j in (m - 7)..<(m + tw + 7) {
                    out[j] = 0.25 * c[j] + 0.125 * ((u[j] + d[j]) + (cl[j] + cr[j]))
                        + 0.0625 * ((ul[j] + ur[j]) + (dl[j] + dr[j]))
                }
            }
        }

        // MARK: step 3, green

        /// The ratio correction `1 + (l0 − ln) / (l0 + ln)`, denominator floored and the
        /// factor kept in [0, 2].
        @inline(__always)
        private static func ratio(_ l0: Float, _ ln: Float) -> Float {
            let f = 1 + (l0 - ln) / max(l0 + ln, ratioFloor)
            return min(max(f, 0), 2)
        }

        /// The refined direction at `k`: the mean of the four diagonal neighbours when it is
        /// further from 0.5 than the centre value.
        @inline(__always)
        private static func refined(_ d: UnsafeMutablePointer<Float>, _ k: Int, _ s: Int) -> Float {
            let centre = d[k]
            let around = 0.25 * ((d[k - s - 1] + d[k - s + 1]) + (d[k + s - 1] + d[k + s + 1]))
            return abs(0.5 - centre) < abs(0.5 - around) ? around : centre
        }

        /// Green everywhere within 5 pixels of the output.
        private func interpolateGreen(th: Int, tw: Int, s: Int) {
            let m = margin
            let gp = phase.greenParity
            let (s2, s3, s4) = (2 * s, 3 * s, 4 * s)
            for i in (m - 5)..<(m + th + 5) {
                let lo = m - 5, hi = m + tw + 5
                // Green sites: the measured value.
                var j = lo + ((i + lo + gp) & 1)
                while j < hi {
                    green[i * s + j] = cfa[i * s + j]
                    j += 2
                }
                j = lo + ((i + lo + gp + 1) & 1)
                while j < hi {
                    let k = i * s + j
                    let c = cfa + k
                    let l = lpfPQ + k
                    let nGrad = eps + abs(c[-s] - c[s]) + abs(c[0] - c[-s2]) + abs(c[-s] - c[-s3]) + abs(c[-s2] - c[-s4])
                    let sGrad = eps + abs(c[s] - c[-s]) + abs(c[0] - c[s2]) + abs(c[s] - c[s3]) + abs(c[s2] - c[s4])
                    let wGrad = eps + abs(c[-1] - c[1]) + abs(c[0] - c[-2]) + abs(c[-1] - c[-3]) + abs(c[-2] - c[-4])
                    let eGrad = eps + abs(c[1] - c[-1]) + abs(c[0] - c[2]) + abs(c[1] - c[3]) + abs(c[2] - c[4])
                    let l0 = l[0]
                    let nEst = c[-s] * Self.ratio(l0, l[-s2])
                    let sEst = c[s] * Self.ratio(l0, l[s2])
                    let wEst = c[-1] * Self.ratio(l0, l[-2])
                    let eEst = c[1] * Self.ratio(l0, l[2])
                    let vEst = (sGrad * nEst + nGrad * sEst) / (nGrad + sGrad)
                    let hEst = (eGrad * wEst + wGrad * eEst) / (wGrad + eGrad)
                    let d = Self.refined(vh, k, s)
                    let g = d * hEst + (1 - d) * vEst
                    let gMin = min(min(c[-s], c[s]), min(c[-1], c[1]))
                    let gMax = max(max(c[-s], c[s]), max(c[-1], c[1]))
                    green[k] = min(max(g, gMin), gMax)
                    j += 2
                }
            }
        }

        // MARK: step 4, red and blue

        /// `pq` within 4 pixels of the output (written over the low-pass image, no longer
        /// needed), from squared diagonal high-pass responses within 5.
        private func diagonalDirections(th: Int, tw: Int, s: Int) {
            let m = margin
            let d = s + 1, e = s - 1
            for i in (m - 5)..<(m + th + 5) {
                let c = cfa + i * s
                let (p1, p2, p3, n1, n2, n3) = (c - d, c - 2 * d, c - 3 * d, c + d, c + 2 * d, c + 3 * d)
                let (q1, q2, q3, o1, o2, o3) = (c - e, c - 2 * e, c - 3 * e, c + e, c + 2 * e, c + 3 * e)
                let a = hpfA + i * s, b = hpfB + i * s
                for j in (m - 5)..<(m + tw + 5) {
                    let pr = (p3[j] - p1[j] - n1[j] + n3[j]) - 3 * (p2[j] + n2[j]) + 6 * c[j]
                    let qr = (q3[j] - q1[j] - o1[j] + o3[j]) - 3 * (q2[j] + o2[j]) + 6 * c[j]
                    a[j] = pr * pr
                    b[j] = qr * qr
                }
            }
            for i in (m - 4)..<(m + th + 4) {
                let a = hpfA + i * s, b = hpfB + i * s, out = lpfPQ + i * s
                let (ap, an, bp, bn) = (a - d, a + d, b - e, b + e)
                for j in (m - 4)..<(m + tw + 4) {
                    let pStat = max(epsSquared, ap[j] + a[j] + an[j])
                    let qStat = max(epsSquared, bp[j] + b[j] + bn[j])
                    out[j] = pStat / (pStat + qStat)
                }
            }
        }

        /// Red and blue at every red and blue site within 3 pixels of the output: the
        /// measured colour, and the other one from diagonal colour differences.
        private func redBlueAtRedBlue(th: Int, tw: Int, s: Int) {
            let m = margin
            let gp = phase.greenParity
            let (d, e) = (s + 1, s - 1)
            for i in (m - 3)..<(m + th + 3) {
                let rowIsRed = i & 1 == phase.redRowParity
                let own = rowIsRed ? red : blue
                let other = rowIsRed ? blue : red
                let lo = m - 3, hi = m + tw + 3
                var j = lo + ((i + lo + gp + 1) & 1)
                while j < hi {
                    let k = i * s + j
                    let c = cfa + k // diagonal neighbours hold the other colour
                    let g = green + k
                    own[k] = c[0]
                    let nwGrad = eps + abs(c[-d] - c[d]) + abs(c[-d] - c[-3 * d]) + abs(g[0] - g[-2 * d])
                    let seGrad = eps + abs(c[d] - c[-d]) + abs(c[d] - c[3 * d]) + abs(g[0] - g[2 * d])
                    let neGrad = eps + abs(c[-e] - c[e]) + abs(c[-e] - c[-3 * e]) + abs(g[0] - g[-2 * e])
                    let swGrad = eps + abs(c[e] - c[-e]) + abs(c[e] - c[3 * e]) + abs(g[0] - g[2 * e])
                    let nwEst = c[-d] - g[-d], seEst = c[d] - g[d]
                    let neEst = c[-e] - g[-e], swEst = c[e] - g[e]
                    let pEst = (seGrad * nwEst + nwGrad * seEst) / (nwGrad + seGrad)
                    let qEst = (swGrad * neEst + neGrad * swEst) / (neGrad + swGrad)
                    let q = Self.refined(lpfPQ, k, s)
                    let v = g[0] + (1 - q) * pEst + q * qEst
                    let vMin = min(min(c[-d], c[d]), min(c[-e], c[e]))
                    let vMax = max(max(c[-d], c[d]), max(c[-e], c[e]))
                    other[k] = min(max(v, vMin), vMax)
                    j += 2
                }
            }
        }

        /// Red and blue at green sites from the edge neighbours' colour differences, then
        /// the tile's output pixels in plane order.
        private func redBlueAtGreenAndStore(y0: Int, x0: Int, th: Int, tw: Int, s: Int) {
            let m = margin
            let gp = phase.greenParity
            let (pR, pG, pB) = (phase.redPlane, phase.greenPlane, phase.bluePlane)
            for i in m..<(m + th) {
                let out = dst + ((y0 + i - m - outputTop) * width + x0) * 3
                var j = m + ((i + m + gp + 1) & 1) // red and blue sites: (i + j) parity ≠ gp
                while j < m + tw {
                    let k = i * s + j, o = out + 3 * (j - m)
                    o[pR] = red[k]
                    o[pG] = green[k]
                    o[pB] = blue[k]
                    j += 2
                }
                j = m + ((i + m + gp) & 1) // green sites
                while j < m + tw {
                    let k = i * s + j, o = out + 3 * (j - m)
                    let dir = Self.refined(vh, k, s)
                    o[pR] = Self.atGreen(red + k, green + k, s: s, direction: dir)
                    o[pG] = green[k]
                    o[pB] = Self.atGreen(blue + k, green + k, s: s, direction: dir)
                    j += 2
                }
            }
        }

        /// One of red/blue at a green site from the four edge neighbours (all holding that
        /// colour by now), limited to their range.
        @inline(__always)
        private static func atGreen(_ c: UnsafeMutablePointer<Float>, _ g: UnsafeMutablePointer<Float>,
                                    s: Int, direction dir: Float) -> Float {
            let g0 = g[0]
            let ns = abs(c[-s] - c[s]), we = abs(c[-1] - c[1])
            let nGrad = eps + abs(g0 - g[-2 * s]) + ns + abs(c[-s] - c[-3 * s])
            let sGrad = eps + abs(g0 - g[2 * s]) + ns + abs(c[s] - c[3 * s])
            let wGrad = eps + abs(g0 - g[-2]) + we + abs(c[-1] - c[-3])
            let eGrad = eps + abs(g0 - g[2]) + we + abs(c[1] - c[3])
            let nEst = c[-s] - g[-s], sEst = c[s] - g[s]
            let wEst = c[-1] - g[-1], eEst = c[1] - g[1]
            let vEst = (sGrad * nEst + nGrad * sEst) / (nGrad + sGrad)
            let hEst = (eGrad * wEst + wGrad * eEst) / (wGrad + eGrad)
            let v = g0 + (1 - dir) * vEst + dir * hEst
            let vMin = min(min(c[-s], c[s]), min(c[-1], c[1]))
            let vMax = max(max(c[-s], c[s]), max(c[-1], c[1]))
            return min(max(v, vMin), vMax)
        }

        // MARK: clip mask

        /// The output clip bits. A site's own colour: its own sample. An interpolated
        /// colour: any sample, of any colour, in the square window that can influence the
        /// value — through the estimates or through the direction statistics — is clipped:
        /// radius 5 for green at red/blue sites, 7 for red/blue at blue/red sites, 10 for
        /// red and blue at green sites. An unflagged value therefore does not depend on any
        /// clipped sample at all.
        private func storeMask(y0: Int, x0: Int, th: Int, tw: Int, s: Int, anyClip: Bool) {
            let m = margin
            guard anyClip else {
                for i in 0..<th { (mask + (y0 + i - outputTop) * width + x0).initialize(repeating: 0, count: tw) }
                return
            }
            let rows = th + 2 * m
            let ss = s + 1 // stride of the summed-area table
            for j in 0...s { clipSum[j] = 0 }
            for i in 0..<rows {
                var run: Int32 = 0
                let above = clipSum + i * ss, here = clipSum + (i + 1) * ss
                here[0] = 0
                for j in 0..<s {
                    run += Int32(clipBits[i * s + j])
                    here[j + 1] = above[j + 1] + run
                }
            }
            @inline(__always) func clipped(_ i: Int, _ j: Int, _ r: Int) -> Bool {
                let t = clipSum + (i - r) * ss, b = clipSum + (i + r + 1) * ss
                return b[j + r + 1] - b[j - r] - t[j + r + 1] + t[j - r] != 0
            }
            let gp = phase.greenParity
            let bitR = UInt8(1) << UInt8(phase.redPlane)
            let bitG = UInt8(1) << UInt8(phase.greenPlane)
            let bitB = UInt8(1) << UInt8(phase.bluePlane)
            for i in m..<(m + th) {
                let out = mask + (y0 + i - m - outputTop) * width + x0
                let rowIsRed = i & 1 == phase.redRowParity
                for j in m..<(m + tw) {
                    let own = clipBits[i * s + j] != 0
                    var bits: UInt8 = 0
                    if (i + j) & 1 == gp {
                        if own { bits |= bitG }
                        if clipped(i, j, 10) { bits |= bitR | bitB }
                    } else {
                        let (bitOwn, bitOther) = rowIsRed ? (bitR, bitB) : (bitB, bitR)
                        if own { bits |= bitOwn }
                        if clipped(i, j, 5) { bits |= bitG }
                        if clipped(i, j, 7) { bits |= bitOther }
                    }
                    out[j - m] = bits
                }
            }
        }
    }
}
