import DNGContainer
import ImageCore

/// Colour codes of CFAPattern and CFAPlaneColor (TIFF/EP): 0 red, 1 green, 2 blue.
enum CFAColor {
    static let red = 0
    static let green = 1
    static let blue = 2
}

/// Where the colours of a 2 × 2 Bayer mosaic sit, relative to the top-left pixel of the
/// ActiveArea, and which output plane holds each colour.
///
/// Every Bayer phase is described by two parities: green sites are those whose
/// `(row + column)` parity is `greenParity`; the non-green sites of rows with parity
/// `redRowParity` are red, those of the other rows blue.
struct BayerPhase: Sendable, Equatable {
    let greenParity: Int
    let redRowParity: Int
    /// Output plane index of red, green and blue (CFAPlaneColor order).
    let redPlane: Int
    let greenPlane: Int
    let bluePlane: Int

    /// Validates the CFA description for an image whose ActiveArea starts at
    /// (`top`, `left`) of the IFD, where CFAPattern's origin lies.
    ///
    /// - Throws: `DemosaicError` when the pattern is not a 2 × 2 Bayer arrangement of red,
    ///   green and blue, the layout is not rectangular, or the tags are inconsistent.
    init(cfa: CFADescription, top: Int, left: Int, ifd: String) throws(DemosaicError) {
        func fail(_ reason: DemosaicError.Reason) -> DemosaicError { DemosaicError(ifd: ifd, reason: reason) }
        guard cfa.repeatRows == 2, cfa.repeatCols == 2 else {
            throw fail(.repeatPattern(rows: cfa.repeatRows, cols: cfa.repeatCols))
        }
        guard cfa.pattern.count == 4 else { throw fail(.patternCount(count: cfa.pattern.count, rows: 2, cols: 2)) }
        guard cfa.layout == 1 else { throw fail(.layout(cfa.layout)) }
        guard cfa.planeColors.count == 3, Set(cfa.planeColors) == [CFAColor.red, CFAColor.green, CFAColor.blue] else {
            throw fail(.planeColors(cfa.planeColors))
        }
        // The site colours relative to the ActiveArea's top-left pixel.
        func site(_ r: Int, _ c: Int) -> Int { cfa.pattern[((r + top) & 1) * 2 + ((c + left) & 1)] }
        let s00 = site(0, 0), s01 = site(0, 1), s10 = site(1, 0), s11 = site(1, 1)
        let g = CFAColor.green
        let greenParity: Int
        let nonGreen: (row0: Int, row1: Int)
        if s00 == g && s11 == g && s01 != g && s10 != g {
            greenParity = 0
            nonGreen = (s01, s10)
        } else if s01 == g && s10 == g && s00 != g && s11 != g {
            greenParity = 1
            nonGreen = (s00, s11)
        } else {
            throw fail(.notBayer(cfa.patternName))
        }
        if nonGreen == (CFAColor.red, CFAColor.blue) {
            redRowParity = 0
        } else if nonGreen == (CFAColor.blue, CFAColor.red) {
            redRowParity = 1
        } else {
            throw fail(.notBayer(cfa.patternName))
        }
        self.greenParity = greenParity
        redPlane = cfa.planeColors.firstIndex(of: CFAColor.red)!
        greenPlane = cfa.planeColors.firstIndex(of: CFAColor.green)!
        bluePlane = cfa.planeColors.firstIndex(of: CFAColor.blue)!
    }

    /// The colour code (0 red, 1 green, 2 blue) of ActiveArea pixel (`row`, `col`).
    @inline(__always)
    func color(row: Int, col: Int) -> Int {
        if (row + col) & 1 == greenParity { return CFAColor.green }
        return row & 1 == redRowParity ? CFAColor.red : CFAColor.blue
    }

    /// The output plane of colour code `color`.
    @inline(__always)
    func plane(of color: Int) -> Int {
        color == CFAColor.red ? redPlane : (color == CFAColor.green ? greenPlane : bluePlane)
    }
}

/// Reflects an index into `0..<count` about the first and last samples without repeating
/// them ("reflect-101"): `-1 → 1`, `count → count - 2`.
///
/// The period is `2 (count - 1)`, an even number, so a reflected index has the parity of
/// the original and a mirrored Bayer mosaic keeps its phase. Requires `count ≥ 2`.
@inline(__always)
func reflect(_ index: Int, _ count: Int) -> Int {
    if index >= 0 && index < count { return index }
    let period = 2 * (count - 1)
    var m = index % period
    if m < 0 { m += period }
    return m < count ? m : period - m
}
