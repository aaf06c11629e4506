import ImageCore

/// Full-resolution bilinear demosaicing.
///
/// At a red or blue site the missing green is the mean of the four edge neighbours and the
/// other of red/blue the mean of the four diagonal neighbours; at a green site each of red
/// and blue is the mean of its two neighbours (left/right in the row holding that colour,
/// above/below otherwise). Outside the image the mosaic is mirrored (reflect-101), which
/// keeps the phase. Every value is a mean of samples of its own colour, so it lies within
/// their range; the clip bit of a plane is the OR of the clip bits of exactly those samples.
enum Bilinear {
    static func run(_ mosaic: Mosaic) -> (values: ImageBuffer<Float>, clip: [UInt8]) {
        let w = mosaic.width, h = mosaic.height
        let phase = mosaic.phase
        let rowHasClip = RowClipIndex(mosaic)
        return mosaic.demosaic(width: w, height: h) { io in
            Parallel.forEachChunk(count: h, minimumChunk: 16) { rows in
                band(io, outputTop: 0, rows: rows,
                     width: w, height: h, phase: phase, rowHasClip: rowHasClip)
            }
        }
    }

    /// Demosaics `rows` into `io.dst` and `io.mask`, whose first row is image row `outputTop`.
    static func band(_ io: KernelBuffers, outputTop: Int, rows: Range<Int>, width w: Int, height h: Int, phase: BayerPhase,
                     rowHasClip: RowClipIndex) {
        for r in rows {
            let up = reflect(r - 1, h), dn = reflect(r + 1, h)
            let rowIsRed = r & 1 == phase.redRowParity
            // Plane of the row's own non-green colour (X) and of the other (Y).
            let pX = rowIsRed ? phase.redPlane : phase.bluePlane
            let pY = rowIsRed ? phase.bluePlane : phase.redPlane
            let greenCol = (phase.greenParity ^ (r & 1)) & 1
            let kernel = RowKernel(
                above: io.src.row(up), row: io.src.row(r), below: io.src.row(dn),
                out: io.dst.row(r - outputTop), pX: pX, pY: pY, pG: phase.greenPlane, greenCol: greenCol)
            kernel.pixel(0, reflect(-1, w), 1)
            if w > 2 {
                for c in 1..<(w - 1) { kernel.pixel(c, c - 1, c + 1) }
            }
            kernel.pixel(w - 1, w - 2, reflect(w, w))
            let m = io.mask.row(r - outputTop)
            if rowHasClip[up] || rowHasClip[r] || rowHasClip[dn] {
                let masks = RowMaskKernel(
                    above: io.clipIn.row(up), row: io.clipIn.row(r), below: io.clipIn.row(dn), out: m,
                    bitX: 1 << UInt8(pX), bitY: 1 << UInt8(pY), bitG: 1 << UInt8(phase.greenPlane),
                    greenCol: greenCol)
                for c in 0..<w { masks.pixel(c, reflect(c - 1, w), reflect(c + 1, w)) }
            } else {
                m.initialize(repeating: 0, count: w)
            }
        }
    }

    /// The bilinear formulas for one output row, given the three source rows.
    private struct RowKernel {
        let above: UnsafePointer<Float>
        let row: UnsafePointer<Float>
        let below: UnsafePointer<Float>
        let out: UnsafeMutablePointer<Float>
        let pX: Int, pY: Int, pG: Int
        let greenCol: Int

        /// Column `c`, with its left and right neighbours at `l` and `r` (mirrored at edges).
        @inline(__always)
        func pixel(_ c: Int, _ l: Int, _ r: Int) {
            let o = out + 3 * c
            if c & 1 == greenCol {
                o[pG] = row[c]
                o[pX] = (row[l] + row[r]) * 0.5
                o[pY] = (above[c] + below[c]) * 0.5
            } else {
                o[pX] = row[c]
                o[pG] = (above[c] + below[c] + row[l] + row[r]) * 0.25
                o[pY] = (above[l] + above[r] + below[l] + below[r]) * 0.25
            }
        }
    }

    /// The clip-mask rule for one output row: the OR of the samples each value used.
    private struct RowMaskKernel {
        let above: UnsafePointer<UInt8>
        let row: UnsafePointer<UInt8>
        let below: UnsafePointer<UInt8>
        let out: UnsafeMutablePointer<UInt8>
        let bitX: UInt8, bitY: UInt8, bitG: UInt8
        let greenCol: Int

        @inline(__always)
        func pixel(_ c: Int, _ l: Int, _ r: Int) {
            var bits: UInt8 = 0
            if c & 1 == greenCol {
                if row[c] & 1 != 0 { bits |= bitG }
                if (row[l] | row[r]) & 1 != 0 { bits |= bitX }
                if (above[c] | below[c]) & 1 != 0 { bits |= bitY }
            } else {
                if row[c] & 1 != 0 { bits |= bitX }
                if (above[c] | below[c] | row[l] | row[r]) & 1 != 0 { bits |= bitG }
                if (above[l] | above[r] | below[l] | below[r]) & 1 != 0 { bits |= bitY }
            }
            out[c] = bits
        }
    }
}

/// Which rows of the mosaic hold at least one clipped sample (bit 0 of the clip mask), so
/// that the mask kernels can skip the common case of rows far from any highlight.
public struct RowClipIndex: Sendable {
    private let flags: [Bool]

    /// Per mosaic row: whether it holds a clipped sample (bit 0 of its clip bytes).
    public init(flags: [Bool]) { self.flags = flags }

    init(_ mosaic: Mosaic) {
        let w = mosaic.width, h = mosaic.height
        var flags = [Bool](repeating: false, count: h)
        mosaic.clip.withUnsafeBufferPointer { clipAll in
            flags.withUnsafeMutableBufferPointer { flagsAll in
                // Safe because each chunk writes the flags of its own rows; the clip mask is only read.
                nonisolated(unsafe) let clip = clipAll.baseAddress!, out = flagsAll.baseAddress!
                Parallel.forEachChunk(count: h, minimumChunk: 64) { rows in
                    for r in rows { out[r] = Self.holdsClip(clip + r * w, width: w) }
                }
            }
        }
        self.flags = flags
    }

    /// Whether a mosaic row of `width` clip bytes holds a clipped sample (bit 0).
    public static func holdsClip(_ row: UnsafePointer<UInt8>, width: Int) -> Bool {
        var any: UInt8 = 0
        for c in 0..<width { any |= row[c] }
        return any & 1 != 0
    }

    subscript(row: Int) -> Bool { flags[row] }

    /// True when any row in `rows` (already inside the image) holds a clipped sample.
    func any(_ rows: Range<Int>) -> Bool {
        for r in rows where flags[r] { return true }
        return false
    }
}
