import DNGContainer
import ImageCore
import RawDecode

/// Stage 2, in DNG order for each plane independently (DNG 1.7.1 chapter 5):
///
/// 1. linearization: `lin = LinearizationTable[min(v, count − 1)]` (identity when absent)
///    for integer samples; floating-point samples are already linear (`lin = v`) and the
///    table does not apply to them;
/// 2. black: `black(r, c, p) = BlackLevel[r mod R][c mod C][p] + BlackLevelDeltaH[c] + BlackLevelDeltaV[r]`,
///    with the pattern origin at the top-left of the ActiveArea;
/// 3. rescale: `x = (lin − black) / (WhiteLevel[p] − maxBlack[p])`, `maxBlack` the largest
///    black level of the plane over the pattern and the deltas;
/// 4. clip: `x = min(x, 1)`; `lin ≥ WhiteLevel[p]` sets bit `p` of the clip mask. Negative
///    values are kept.
///
/// Only the ActiveArea (tag 50829) is kept.
public enum Linearizer {
    /// Maps `stored` to linear reference values.
    /// - Throws: `LinearizeError` when the tags are inconsistent (counts, empty range).
    public static func linearize(_ stored: StoredImage, path: String) throws(LinearizeError) -> LinearImage {
        let plan = try LinearizationPlan(ifd: stored.ifd, path: path)
        return plan.apply(to: stored)
    }
}

/// The validated Stage 2 parameters of one IFD, with a lookup table per plane.
public struct LinearizationPlan: Sendable {
    let ifd: ImageIFD
    let area: PixelRect
    let planes: Int
    let repeatRows: Int
    let repeatCols: Int
    /// BlackLevel, row-column-sample order, repeatRows × repeatCols × planes.
    let black: [Float]
    /// The same as the IFD gives them, for the arithmetic in `Double` (`rowExact`).
    let exactBlack: [Double]
    let deltaH: [Float]?
    let deltaV: [Float]?
    /// Per plane, 65536 entries: the linearized value of each stored value.
    let linearized: [Float]
    /// With uniform black: table, black, scale and clip folded into 65536 entries per plane.
    let folded: [Float]
    /// With `folded`: the plane's clip-mask bit for each stored value (set when the
    /// linearized value reaches the plane's white level).
    let clipBits: [UInt8]
    /// The mapping's white level and scale per plane, as the Float arithmetic uses them.
    private let whiteLevels: [Float], scales: [Float]
    public let mapping: LinearizationMapping

    public init(ifd: ImageIFD, path: String) throws(LinearizeError) {
        func fail(_ reason: String) -> LinearizeError { LinearizeError(path: path, ifd: ifd.path, reason: reason) }
        self.ifd = ifd
        planes = ifd.samplesPerPixel
        area = ifd.activeArea
        guard (1...8).contains(planes) else { throw fail("\(planes) samples per pixel (at most 8 are supported)") }
        guard area.top >= 0, area.left >= 0, area.bottom <= ifd.height, area.right <= ifd.width, !area.isEmpty else {
            throw fail("ActiveArea \(area) is empty or outside the \(ifd.width)×\(ifd.height) image")
        }
        guard ifd.blackLevelRepeatDim.count == 2 else {
            throw fail("BlackLevelRepeatDim has \(ifd.blackLevelRepeatDim.count) values, expected 2")
        }
        repeatRows = ifd.blackLevelRepeatDim[0]
        repeatCols = ifd.blackLevelRepeatDim[1]
        guard (1...64).contains(repeatRows), (1...64).contains(repeatCols) else {
            throw fail("BlackLevelRepeatDim \(repeatRows)×\(repeatCols) is outside 1...64")
        }
        let blackCount = repeatRows * repeatCols * planes
        var black = ifd.blackLevel
        if black.count == 1 && blackCount > 1 { black = Array(repeating: black[0], count: blackCount) }
        guard black.count == blackCount else {
            throw fail("BlackLevel has \(black.count) values; BlackLevelRepeatDim \(repeatRows)×\(repeatCols) × \(planes) planes needs \(blackCount)")
        }
        if let h = ifd.blackLevelDeltaH, h.count != area.width {
            throw fail("BlackLevelDeltaH has \(h.count) values; the ActiveArea is \(area.width) wide")
        }
        if let v = ifd.blackLevelDeltaV, v.count != area.height {
            throw fail("BlackLevelDeltaV has \(v.count) values; the ActiveArea is \(area.height) high")
        }
        guard ifd.whiteLevel.count == planes else {
            throw fail("WhiteLevel has \(ifd.whiteLevel.count) values for \(planes) planes")
        }
        let maxH = ifd.blackLevelDeltaH?.max() ?? 0
        let maxV = ifd.blackLevelDeltaV?.max() ?? 0
        var maxBlack: [Double] = []
        var scale: [Double] = []
        for p in 0..<planes {
            var m = -Double.infinity
            for i in stride(from: p, to: blackCount, by: planes) { m = max(m, black[i]) }
            m += maxH + maxV
            let range = ifd.whiteLevel[p] - m
            guard range > 0, range.isFinite else {
                throw fail("WhiteLevel \(String(format6: ifd.whiteLevel[p])) of plane \(p) is not above its largest black level \(String(format6: m))")
            }
            maxBlack.append(m)
            scale.append(1 / range)
        }
        self.black = black.map(Float.init)
        exactBlack = black
        deltaH = ifd.blackLevelDeltaH?.map(Float.init)
        deltaV = ifd.blackLevelDeltaV?.map(Float.init)
        let table = ifd.linearizationTable
        var lut = [Float](repeating: 0, count: 65536)
        if let table, let last = table.last {
            for v in 0..<65536 { lut[v] = Float(v < table.count ? table[v] : last) }
        } else {
            for v in 0..<65536 { lut[v] = Float(v) }
        }
        linearized = lut
        var folded: [Float] = []
        var clipBits: [UInt8] = []
        if repeatRows == 1 && repeatCols == 1 && deltaH == nil && deltaV == nil {
            folded = [Float](repeating: 0, count: 65536 * planes)
            clipBits = [UInt8](repeating: 0, count: 65536 * planes)
            for p in 0..<planes {
                let b = self.black[p], sc = Float(scale[p]), white = Float(ifd.whiteLevel[p])
                for v in 0..<65536 {
                    folded[p * 65536 + v] = min((lut[v] - b) * sc, 1)
                    clipBits[p * 65536 + v] = lut[v] >= white ? 1 << UInt8(p) : 0
                }
            }
        }
        self.folded = folded
        self.clipBits = clipBits
        whiteLevels = ifd.whiteLevel.map(Float.init)
        scales = scale.map(Float.init)
        let tableApplies = ifd.sampleFormat != 3
        mapping = LinearizationMapping(maxBlack: maxBlack, white: ifd.whiteLevel, scale: scale,
                                       tableEntries: tableApplies ? table?.count ?? 0 : 0, activeArea: area)
    }

    /// True when black does not depend on the position: one value per plane, no deltas.
    var isUniformBlack: Bool { repeatRows == 1 && repeatCols == 1 && deltaH == nil && deltaV == nil }

    /// Applies the mapping to the ActiveArea of `stored`.
    public func apply(to stored: StoredImage) -> LinearImage {
        precondition(stored.channels == planes)
        switch stored.samples {
        case .uint16(let samples):
            return apply(to: samples)
        case .uint32(let samples):
            // Integers: through the table when there is one (past its end: the last entry).
            if let table = ifd.linearizationTable, let last = table.last {
                return apply(to: samples) { v in Double(v < table.count ? table[Int(v)] : last) }
            }
            return apply(to: samples) { Double($0) }
        case .float32(let samples):
            // Floating-point samples are already in the linearized domain.
            return apply(to: samples) { Double($0) }
        }
    }

    /// 16-bit (and narrower) integers, the common case: table lookups, row chunks of the
    /// ActiveArea through `linearize` on all cores.
    private func apply(to samples: ImageBuffer<UInt16>) -> LinearImage {
        wholeImage(samples) { src, rowStride, rows, dst, mask in
            linearize(src, rowStride: rowStride, rows: rows, columns: 0..<area.width, into: dst, mask: mask)
        }
    }

    /// The ActiveArea of `samples` linearized in row chunks on all cores: `chunk` gets the
    /// stored sample of a chunk's first pixel, the row stride in samples, the chunk's rows and
    /// where its values and clip-mask bytes go.
    private func wholeImage<S: Sendable>(_ samples: ImageBuffer<S>,
                                         _ chunk: @Sendable (UnsafePointer<S>, Int, Range<Int>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<UInt8>) -> Void)
        -> LinearImage {
        let width = area.width, height = area.height
        var values = [Float](repeating: 0, count: width * height * planes)
        var clip = [UInt8](repeating: 0, count: width * height)
        let srcRowSamples = samples.width * planes
        let (planes, top, left) = (planes, area.top, area.left)
        samples.samples.withUnsafeBufferPointer { srcAll in
            values.withUnsafeMutableBufferPointer { dstAll in
                clip.withUnsafeMutableBufferPointer { clipAll in
                    // Safe because each chunk writes its own rows; the source is only read.
                    nonisolated(unsafe) let src = srcAll.baseAddress!, dst = dstAll.baseAddress!, mask = clipAll.baseAddress!
                    Parallel.forEachChunk(count: height, minimumChunk: 16) { rows in
                        chunk(src + (rows.lowerBound + top) * srcRowSamples + left * planes, srcRowSamples, rows,
                              dst + rows.lowerBound * width * planes, mask + rows.lowerBound * width)
                    }
                }
            }
        }
        return LinearImage(ifd: ifd, values: ImageBuffer(width: width, height: height, channels: planes, samples: values),
                           clipMask: clip, mapping: mapping)
    }

    /// Stage 2 of a rectangle of 16-bit stored samples, ActiveArea `rows` × `columns`:
    /// `samples` points at the stored sample of its top-left pixel, rows `rowStride`
    /// samples apart. Writes `rows.count` rows of `columns.count` × planes values to
    /// `values` and, when `mask` is given, one clip-mask byte per pixel. Identical to
    /// `apply` on the same pixels.
    public func linearize(_ samples: UnsafePointer<UInt16>, rowStride: Int, rows: Range<Int>, columns: Range<Int>,
                          into values: UnsafeMutablePointer<Float>, mask: UnsafeMutablePointer<UInt8>?) {
        precondition(rows.lowerBound >= 0 && rows.upperBound <= area.height && columns.lowerBound >= 0
                     && columns.upperBound <= area.width)
        let width = columns.count
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: mask == nil ? width : 0) { scratch in
            folded.withUnsafeBufferPointer { fold in
                clipBits.withUnsafeBufferPointer { bits in
                    linearized.withUnsafeBufferPointer { lut in
                        for (i, r) in rows.enumerated() {
                            let srcRow = samples + i * rowStride
                            let dstRow = values + i * width * planes
                            let maskRow = mask.map { $0 + i * width } ?? scratch.baseAddress!
                            if isUniformBlack {
                                rowUniform(srcRow, dstRow, maskRow, width: width, fold: fold.baseAddress!, clip: bits.baseAddress!)
                            } else {
                                rowGeneral(srcRow, dstRow, maskRow, row: r, firstColumn: columns.lowerBound, width: width,
                                           lut: lut.baseAddress!, white: whiteLevels, scale: scales)
                            }
                        }
                    }
                }
            }
        }
    }

    /// 32-bit integers and floating-point samples: row chunks of the ActiveArea through
    /// `rowExact` on all cores, with `linearized` giving step 1.
    private func apply<S: Sendable>(to samples: ImageBuffer<S>, linearized: @escaping @Sendable (S) -> Double) -> LinearImage {
        let (width, planes) = (area.width, planes)
        return wholeImage(samples) { src, rowStride, rows, dst, mask in
            for (i, r) in rows.enumerated() {
                rowExact(src + i * rowStride, dst + i * width * planes, mask + i * width,
                         row: r, firstColumn: 0, width: width, linearized: linearized)
            }
        }
    }

    /// Stage 2 of a rectangle of floating-point stored samples (held as `Float`), as
    /// `linearize` of 16-bit samples: the same arithmetic as `apply` (`rowExact`), so the
    /// values, the clip mask, NaN and infinities are identical to `apply`'s on the same pixels.
    public func linearize(_ samples: UnsafePointer<Float>, rowStride: Int, rows: Range<Int>, columns: Range<Int>,
                          into values: UnsafeMutablePointer<Float>, mask: UnsafeMutablePointer<UInt8>?) {
        precondition(rows.lowerBound >= 0 && rows.upperBound <= area.height && columns.lowerBound >= 0
                     && columns.upperBound <= area.width)
        let width = columns.count
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: mask == nil ? width : 0) { scratch in
            for (i, r) in rows.enumerated() {
                rowExact(samples + i * rowStride, values + i * width * planes, mask.map { $0 + i * width } ?? scratch.baseAddress!,
                         row: r, firstColumn: columns.lowerBound, width: width) { Double($0) }
            }
        }
    }

    /// `linearize` of a decoded block's samples, whichever their type.
    public func linearize(_ samples: BlockSamples, rowStride: Int, rows: Range<Int>, columns: Range<Int>,
                          into values: UnsafeMutablePointer<Float>, mask: UnsafeMutablePointer<UInt8>?) {
        switch samples {
        case .uint16(let p): linearize(p, rowStride: rowStride, rows: rows, columns: columns, into: values, mask: mask)
        case .float32(let p): linearize(p, rowStride: rowStride, rows: rows, columns: columns, into: values, mask: mask)
        }
    }

    /// One row of 32-bit integer or floating-point samples, `width` pixels from ActiveArea
    /// column `firstColumn` of ActiveArea row `row`: the chapter 5 formula per sample in
    /// `Double` (black from the IFD's values, not their `Float` copies), rounded once to
    /// `Float`. A NaN stays NaN and sets no clip bit; +∞ clips to 1 and sets it.
    @inline(__always)
    private func rowExact<S>(_ src: UnsafePointer<S>, _ dst: UnsafeMutablePointer<Float>, _ mask: UnsafeMutablePointer<UInt8>,
                             row: Int, firstColumn: Int, width: Int, linearized: (S) -> Double) {
        let white = mapping.white, scale = mapping.scale, black = exactBlack
        let deltaH = ifd.blackLevelDeltaH, deltaV = ifd.blackLevelDeltaV
        let patternRow = (row % repeatRows) * repeatCols * planes
        let dv = deltaV?[row] ?? 0
        for c in 0..<width {
            let column = firstColumn + c
            let patternBase = patternRow + (column % repeatCols) * planes
            let dh = deltaH?[column] ?? 0
            var bits: UInt8 = 0
            for p in 0..<planes {
                let lin = linearized(src[c * planes + p])
                let b = black[patternBase + p] + dh + dv
                dst[c * planes + p] = Float(min((lin - b) * scale[p], 1))
                if lin >= white[p] { bits |= 1 << UInt8(p) }
            }
            mask[c] = bits
        }
    }

    @inline(__always)
    private func rowUniform(_ src: UnsafePointer<UInt16>, _ dst: UnsafeMutablePointer<Float>, _ mask: UnsafeMutablePointer<UInt8>,
                            width: Int, fold: UnsafePointer<Float>, clip: UnsafePointer<UInt8>) {
        if planes == 3 {
            // Three tables side by side; one pass per pixel, no per-plane loop.
            let fold1 = fold + 65536, fold2 = fold + 131072, clip1 = clip + 65536, clip2 = clip + 131072
            for c in 0..<width {
                let v0 = Int(src[3 &* c]), v1 = Int(src[3 &* c &+ 1]), v2 = Int(src[3 &* c &+ 2])
                dst[3 &* c] = fold[v0]
                dst[3 &* c &+ 1] = fold1[v1]
                dst[3 &* c &+ 2] = fold2[v2]
                mask[c] = clip[v0] | clip1[v1] | clip2[v2]
            }
            return
        }
        for c in 0..<width {
            var bits: UInt8 = 0
            for p in 0..<planes {
                let v = Int(src[c &* planes &+ p])
                dst[c &* planes &+ p] = fold[p &* 65536 &+ v]
                bits |= clip[p &* 65536 &+ v]
            }
            mask[c] = bits
        }
    }

    @inline(__always)
    private func rowGeneral(_ src: UnsafePointer<UInt16>, _ dst: UnsafeMutablePointer<Float>, _ mask: UnsafeMutablePointer<UInt8>,
                            row: Int, firstColumn: Int, width: Int, lut: UnsafePointer<Float>, white: [Float], scale: [Float]) {
        let patternRow = (row % repeatRows) * repeatCols * planes
        let dv = deltaV?[row] ?? 0
        for c in 0..<width {
            let column = firstColumn + c
            let patternBase = patternRow + (column % repeatCols) * planes
            let dh = deltaH?[column] ?? 0
            var bits: UInt8 = 0
            for p in 0..<planes {
                let lin = lut[Int(src[c * planes + p])]
                let b = black[patternBase + p] + dh + dv
                dst[c * planes + p] = min((lin - b) * scale[p], 1)
                if lin >= white[p] { bits |= 1 << UInt8(p) }
            }
            mask[c] = bits
        }
    }
}
