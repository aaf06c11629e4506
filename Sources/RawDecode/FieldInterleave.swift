import ImageCore

/// RowInterleaveFactor (50975) and ColumnInterleaveFactor (52547, DNG 1.7.1): the rows,
/// and the columns within each row, of the image are stored as interleaved fields.
///
/// With a row factor `N`, the stored image (what the tiles or strips hold, assembled as
/// usual) has the rows of field 0 first — image rows 0, N, 2N, … — then those of field 1
/// (rows 1, N + 1, …), and so on; the column factor does the same for the columns. The
/// fields are fields of the whole image, not of each tile: a 2 × 2 Bayer image with both
/// factors 2 is stored as four sub-images of half the width and half the height, one per
/// CFA colour (DNG 1.7.1, ColumnInterleaveFactor), and tiles cut that stored image as they
/// cut any other. The Adobe DNG SDK reads it the same way: the whole image is read with
/// the factors taken as 1, then rearranged.
///
/// When a dimension `n` is not a multiple of its factor `f`, the first `n mod f` fields
/// hold one row (or column) more than the others: field `k` holds `⌈(n − k) / f⌉` of them.
struct FieldInterleave: Sendable, Equatable {
    /// Number of row fields (RowInterleaveFactor), ≥ 1.
    let rowFactor: Int
    /// Number of column fields (ColumnInterleaveFactor), ≥ 1.
    let columnFactor: Int

    static let none = FieldInterleave(rowFactor: 1, columnFactor: 1)

    var isNone: Bool { rowFactor == 1 && columnFactor == 1 }

    /// Where field `k` of `factor` fields starts among `count` stored rows (or columns):
    /// after the fields before it, `count / factor` entries each and one more for the first
    /// `count mod factor`.
    @inline(__always)
    static func fieldStart(_ k: Int, count: Int, factor: Int) -> Int {
        k * (count / factor) + Swift.min(k, count % factor)
    }

    /// The stored position of image row (or column) `i` among `count`.
    @inline(__always)
    static func storedIndex(_ i: Int, count: Int, factor: Int) -> Int {
        fieldStart(i % factor, count: count, factor: factor) + i / factor
    }

    /// The field `k` and the position `j` within it of stored row (or column) `s` among
    /// `count`: the image row (or column) is `k + j × factor`.
    @inline(__always)
    static func field(ofStored s: Int, count: Int, factor: Int) -> (k: Int, j: Int) {
        let short = count / factor, long = count % factor  // `long` fields hold short + 1
        let inLong = long * (short + 1)
        if s < inLong { return (s / (short + 1), s % (short + 1)) }
        return (long + (s - inLong) / short, (s - inLong) % short)
    }

    /// Copies `count` samples of one stored row, `spp` per pixel, holding stored columns
    /// `first ..< first + count / spp` of a `width`-column image, to their image columns in
    /// `row` (`rowSpp` samples per pixel, from sample `plane` of each pixel).
    @inline(__always)
    func scatterColumns<T>(_ source: UnsafePointer<T>, first: Int, pixels: Int, spp: Int, width: Int,
                           into row: UnsafeMutablePointer<T>, rowSpp: Int, plane: Int) {
        let factor = columnFactor, step = factor * rowSpp
        var s = first, src = source
        let end = first + pixels
        while s < end {
            // The stored columns from `s` to the end of its field are every `factor`th image column.
            let (k, j) = Self.field(ofStored: s, count: width, factor: factor)
            let run = Swift.min(Self.fieldStart(k + 1, count: width, factor: factor), end) - s
            let dst = row + (k + j * factor) * rowSpp + plane
            if spp == 1 {
                for t in 0..<run { dst[t * step] = src[t] }
            } else {
                for t in 0..<run {
                    for c in 0..<spp { dst[t * step + c] = src[t * spp + c] }
                }
            }
            src += run * spp
            s += run
        }
    }
}
