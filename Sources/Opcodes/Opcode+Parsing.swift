import ImageCore

// Parameter layouts of DNG 1.7.1 chapter 7, one function per opcode. Each checks the
// declared parameter byte count against the layout before reading any array, with
// overflow-safe arithmetic, then checks every value's range.

extension Opcode {
    /// Parses the parameter block of a known opcode ID (1 … 14).
    static func parseParameters(id: UInt32, _ r: inout ByteReader) throws(OpcodeError) -> Opcode {
        switch id {
        case OpcodeID.warpRectilinear: return .warpRectilinear(try parseWarpRectilinear(&r))
        case OpcodeID.warpFisheye: return .warpFisheye(try parseWarpFisheye(&r))
        case OpcodeID.fixVignetteRadial: return .fixVignetteRadial(try parseFixVignetteRadial(&r))
        case OpcodeID.fixBadPixelsConstant: return .fixBadPixelsConstant(try parseFixBadPixelsConstant(&r))
        case OpcodeID.fixBadPixelsList: return .fixBadPixelsList(try parseFixBadPixelsList(&r))
        case OpcodeID.trimBounds: return .trimBounds(try parseTrimBounds(&r))
        case OpcodeID.mapTable: return .mapTable(try parseMapTable(&r))
        case OpcodeID.mapPolynomial: return .mapPolynomial(try parseMapPolynomial(&r))
        case OpcodeID.gainMap: return .gainMap(try parseGainMap(&r))
        case OpcodeID.deltaPerRow: return .deltaPerRow(try parseAreaValues(&r, perRow: true))
        case OpcodeID.deltaPerColumn: return .deltaPerColumn(try parseAreaValues(&r, perRow: false))
        case OpcodeID.scalePerRow: return .scalePerRow(try parseAreaValues(&r, perRow: true))
        case OpcodeID.scalePerColumn: return .scalePerColumn(try parseAreaValues(&r, perRow: false))
        case OpcodeID.warpRectilinear2: return .warpRectilinear2(try parseWarpRectilinear2(&r))
        default:
            throw r.site.error(.unknownOpcode, "ID \(id) is not an opcode of DNG 1.7.1")
        }
    }
}

// MARK: - Shared checks

extension ByteReader {
    /// Throws `.parameterSize` unless exactly `items × itemSize + extra` bytes remain.
    func expectRemaining(items: Int, itemSize: Int, extra: Int = 0, layout: String) throws(OpcodeError) {
        let (product, overflow1) = items.multipliedReportingOverflow(by: itemSize)
        let (needed, overflow2) = product.addingReportingOverflow(extra)
        guard items >= 0, !overflow1, !overflow2, needed == remaining else {
            let shown = (overflow1 || overflow2) ? "more than 2^63" : "\(needed)"
            throw site.error(.parameterSize, "\(layout) needs \(shown) more bytes, the parameter block has \(remaining)")
        }
    }

    /// Reads a double and throws `.invalidParameter` when it is NaN or infinite.
    mutating func finite(_ what: String) throws(OpcodeError) -> Double {
        let x = try f64(what)
        guard x.isFinite else { throw site.error(.invalidParameter, "\(what) is \(x)") }
        return x
    }

    /// Reads `count` finite doubles.
    mutating func finiteArray(_ count: Int, _ what: String) throws(OpcodeError) -> [Double] {
        var out: [Double] = []
        out.reserveCapacity(count)
        for i in 0..<count { out.append(try finite("\(what) \(i)")) }
        return out
    }

    /// Reads a relative optical centre (horizontal first), each component in 0 … 1.
    mutating func opticalCenter() throws(OpcodeError) -> (x: Double, y: Double) {
        let x = try finite("the optical centre's horizontal position")
        let y = try finite("the optical centre's vertical position")
        guard (0...1).contains(x), (0...1).contains(y) else {
            throw site.error(.invalidParameter, "the optical centre (\(x), \(y)) is outside the image (relative coordinates 0 … 1)")
        }
        return (x, y)
    }

    /// Reads the 32-byte area specification: top, left, bottom, right (signed), plane,
    /// planes, row pitch, column pitch (unsigned).
    mutating func area(allowWholeImage: Bool) throws(OpcodeError) -> OpcodeArea {
        let top = try i32("the area's top")
        let left = try i32("the area's left")
        let bottom = try i32("the area's bottom")
        let right = try i32("the area's right")
        let plane = Int(try u32("the first plane"))
        let planes = Int(try u32("the plane count"))
        let rowPitch = Int(try u32("the row pitch"))
        let colPitch = Int(try u32("the column pitch"))
        let area = OpcodeArea(top: top, left: left, bottom: bottom, right: right, plane: plane, planes: planes,
                              rowPitch: rowPitch, colPitch: colPitch)
        guard planes >= 1 else { throw site.error(.invalidParameter, "the plane count is 0") }
        guard rowPitch >= 1, colPitch >= 1 else {
            throw site.error(.invalidParameter, "the row/column pitch \(rowPitch)/\(colPitch) is 0")
        }
        if area.coversWholeImage {
            guard allowWholeImage else {
                throw site.error(.invalidParameter, "the area is empty (all zero), but this opcode's value count depends on its size")
            }
            guard rowPitch == 1, colPitch == 1 else {
                throw site.error(.invalidParameter, "the whole-image (all-zero) area has pitches \(rowPitch)/\(colPitch); only 1/1 is meaningful")
            }
        } else if top >= bottom || left >= right {
            throw site.error(.invalidParameter, "the area \(area.rect) is empty or inverted")
        }
        return area
    }

    /// Reads a Bayer phase (0 … 3).
    mutating func bayerPhase() throws(OpcodeError) -> Int {
        let phase = try u32("the Bayer phase")
        guard phase <= 3 else { throw site.error(.invalidParameter, "the Bayer phase is \(phase); it must be 0 … 3") }
        return Int(phase)
    }
}

// MARK: - The opcodes

extension Opcode {
    static func parseWarpRectilinear(_ r: inout ByteReader) throws(OpcodeError) -> WarpRectilinear {
        let n = Int(try r.u32("the number of coefficient sets"))
        guard n >= 1 else { throw r.site.error(.invalidParameter, "the number of coefficient sets is 0") }
        try r.expectRemaining(items: n, itemSize: 6 * 8, extra: 2 * 8,
                              layout: "\(n) coefficient sets of 6 doubles and the optical centre")
        var planes: [WarpRectilinear.Coefficients] = []
        for p in 0..<n {
            let radial = try r.finiteArray(4, "set \(p) radial coefficient kr")
            let tangential = try r.finiteArray(2, "set \(p) tangential coefficient kt")
            planes.append(.init(radial: radial, tangential: tangential))
        }
        let c = try r.opticalCenter()
        return WarpRectilinear(planes: planes, centerX: c.x, centerY: c.y)
    }

    static func parseWarpFisheye(_ r: inout ByteReader) throws(OpcodeError) -> WarpFisheye {
        let n = Int(try r.u32("the number of coefficient sets"))
        guard n >= 1 else { throw r.site.error(.invalidParameter, "the number of coefficient sets is 0") }
        try r.expectRemaining(items: n, itemSize: 4 * 8, extra: 2 * 8,
                              layout: "\(n) coefficient sets of 4 doubles and the optical centre")
        var planes: [[Double]] = []
        for p in 0..<n { planes.append(try r.finiteArray(4, "set \(p) radial coefficient kr")) }
        let c = try r.opticalCenter()
        return WarpFisheye(planes: planes, centerX: c.x, centerY: c.y)
    }

    static func parseWarpRectilinear2(_ r: inout ByteReader) throws(OpcodeError) -> WarpRectilinear2 {
        let n = Int(try r.u32("the number of coefficient sets"))
        guard n >= 1 else { throw r.site.error(.invalidParameter, "the number of coefficient sets is 0") }
        try r.expectRemaining(items: n, itemSize: 19 * 8, extra: 2 * 8 + 4,
                              layout: "\(n) coefficient sets of 19 doubles, the optical centre and the reciprocal flag")
        var planes: [WarpRectilinear2.Coefficients] = []
        for p in 0..<n {
            let radial = try r.finiteArray(15, "set \(p) radial coefficient kr")
            let tangential = try r.finiteArray(2, "set \(p) tangential coefficient kt")
            let lo = try r.finite("set \(p) minimum valid radius")
            let hi = try r.finite("set \(p) maximum valid radius")
            guard lo <= hi else {
                throw r.site.error(.invalidParameter, "set \(p) valid radius range \(lo) … \(hi) is inverted")
            }
            planes.append(.init(radial: radial, tangential: tangential, minimumValidRadius: lo, maximumValidRadius: hi))
        }
        let c = try r.opticalCenter()
        let reciprocal = try r.u32("the reciprocal flag") != 0
        return WarpRectilinear2(planes: planes, centerX: c.x, centerY: c.y, useReciprocal: reciprocal)
    }

    static func parseFixVignetteRadial(_ r: inout ByteReader) throws(OpcodeError) -> FixVignetteRadial {
        try r.expectRemaining(items: 7, itemSize: 8, layout: "5 coefficients and the optical centre")
        let k = try r.finiteArray(5, "coefficient k")
        let c = try r.opticalCenter()
        return FixVignetteRadial(coefficients: k, centerX: c.x, centerY: c.y)
    }

    static func parseFixBadPixelsConstant(_ r: inout ByteReader) throws(OpcodeError) -> FixBadPixelsConstant {
        try r.expectRemaining(items: 2, itemSize: 4, layout: "the constant and the Bayer phase")
        let constant = try r.u32("the constant")
        return FixBadPixelsConstant(constant: constant, bayerPhase: try r.bayerPhase())
    }

    static func parseFixBadPixelsList(_ r: inout ByteReader) throws(OpcodeError) -> FixBadPixelsList {
        let phase = try r.bayerPhase()
        let pointCount = Int(try r.u32("the bad point count"))
        let rectCount = Int(try r.u32("the bad rectangle count"))
        let (pointBytes, o1) = pointCount.multipliedReportingOverflow(by: 8)
        guard !o1 else { throw r.site.error(.parameterSize, "\(pointCount) bad points cannot fit in the parameter block") }
        try r.expectRemaining(items: rectCount, itemSize: 16, extra: pointBytes,
                              layout: "\(pointCount) points of 8 bytes and \(rectCount) rectangles of 16 bytes")
        var points: [BadPixel] = []
        points.reserveCapacity(pointCount)
        for _ in 0..<pointCount {
            let row = try r.i32("a bad point's row")
            let column = try r.i32("a bad point's column")
            points.append(BadPixel(row: row, column: column))
        }
        var rects: [PixelRect] = []
        rects.reserveCapacity(rectCount)
        for i in 0..<rectCount {
            let rect = PixelRect(top: try r.i32("a rectangle's top"), left: try r.i32("a rectangle's left"),
                                 bottom: try r.i32("a rectangle's bottom"), right: try r.i32("a rectangle's right"))
            guard rect.bottom >= rect.top, rect.right >= rect.left else {
                throw r.site.error(.invalidParameter, "bad rectangle \(i) \(rect) is inverted")
            }
            rects.append(rect)
        }
        return FixBadPixelsList(bayerPhase: phase, points: points, rectangles: rects)
    }

    static func parseTrimBounds(_ r: inout ByteReader) throws(OpcodeError) -> PixelRect {
        try r.expectRemaining(items: 4, itemSize: 4, layout: "top, left, bottom and right")
        let rect = PixelRect(top: try r.i32("top"), left: try r.i32("left"),
                             bottom: try r.i32("bottom"), right: try r.i32("right"))
        guard !rect.isEmpty else { throw r.site.error(.invalidParameter, "the bounds \(rect) are empty") }
        return rect
    }

    static func parseMapTable(_ r: inout ByteReader) throws(OpcodeError) -> MapTable {
        let area = try r.area(allowWholeImage: true)
        let n = Int(try r.u32("the table size"))
        guard (1...65536).contains(n) else {
            throw r.site.error(.invalidParameter, "the table has \(n) entries; it must have 1 … 65,536")
        }
        try r.expectRemaining(items: n, itemSize: 2, layout: "\(n) table entries")
        return MapTable(area: area, table: try r.u16Array(n, "the table"))
    }

    static func parseMapPolynomial(_ r: inout ByteReader) throws(OpcodeError) -> MapPolynomial {
        let area = try r.area(allowWholeImage: true)
        let degree = Int(try r.u32("the degree"))
        guard degree <= 8 else { throw r.site.error(.invalidParameter, "the degree is \(degree); at most 8 is allowed") }
        try r.expectRemaining(items: degree + 1, itemSize: 8, layout: "\(degree + 1) coefficients")
        return MapPolynomial(area: area, coefficients: try r.finiteArray(degree + 1, "coefficient"))
    }

    static func parseGainMap(_ r: inout ByteReader) throws(OpcodeError) -> GainMap {
        let area = try r.area(allowWholeImage: true)
        let pointsV = Int(try r.u32("MapPointsV"))
        let pointsH = Int(try r.u32("MapPointsH"))
        let spacingV = try r.finite("MapSpacingV")
        let spacingH = try r.finite("MapSpacingH")
        let originV = try r.finite("MapOriginV")
        let originH = try r.finite("MapOriginH")
        let mapPlanes = Int(try r.u32("MapPlanes"))
        guard pointsV >= 1, pointsH >= 1, mapPlanes >= 1 else {
            throw r.site.error(.invalidParameter, "the map has \(pointsV) × \(pointsH) points and \(mapPlanes) planes; each must be at least 1")
        }
        guard pointsV == 1 || spacingV > 0, pointsH == 1 || spacingH > 0 else {
            throw r.site.error(.invalidParameter, "the map spacing \(spacingV) × \(spacingH) is not positive")
        }
        let (perRow, o1) = pointsH.multipliedReportingOverflow(by: mapPlanes)
        let (count, o2) = perRow.multipliedReportingOverflow(by: pointsV)
        guard !o1, !o2 else {
            throw r.site.error(.parameterSize, "a map of \(pointsV) × \(pointsH) × \(mapPlanes) gains cannot fit in the parameter block")
        }
        try r.expectRemaining(items: count, itemSize: 4,
                              layout: "a map of \(pointsV) × \(pointsH) points × \(mapPlanes) planes (\(count) gains)")
        let gains = try r.f32Array(count, "the gains")
        if let bad = gains.firstIndex(where: { !$0.isFinite }) {
            throw r.site.error(.invalidParameter, "gain \(bad) is \(gains[bad])")
        }
        return GainMap(area: area, pointsV: pointsV, pointsH: pointsH, spacingV: spacingV, spacingH: spacingH,
                       originV: originV, originH: originH, mapPlanes: mapPlanes, gains: gains)
    }

    static func parseAreaValues(_ r: inout ByteReader, perRow: Bool) throws(OpcodeError) -> AreaValues {
        let area = try r.area(allowWholeImage: false)
        let count = Int(try r.u32("the value count"))
        let expected = perRow ? area.sampledRows : area.sampledColumns
        guard count == expected else {
            let what = perRow
                ? "rows \(area.top) ..< \(area.bottom) with row pitch \(area.rowPitch)"
                : "columns \(area.left) ..< \(area.right) with column pitch \(area.colPitch)"
            throw r.site.error(.invalidParameter, "it has \(count) values, but \(what) need \(expected)")
        }
        try r.expectRemaining(items: count, itemSize: 4, layout: "\(count) values")
        let values = try r.f32Array(count, "the values")
        if let bad = values.firstIndex(where: { !$0.isFinite }) {
            throw r.site.error(.invalidParameter, "value \(bad) is \(values[bad])")
        }
        return AreaValues(area: area, values: values)
    }
}
