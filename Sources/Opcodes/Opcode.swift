import ImageCore

/// Which of the three DNG opcode lists a list is, which also fixes the processing stage it
/// runs on and the coordinate system of its rectangles.
///
/// - `list1` (tag 51008, OpcodeList1): Stage 1, the raw IFD's stored values as read,
///   before linearization; coordinates are those of the whole raw IFD (masked areas
///   included); logical range 0 … 2^16 − 1 (or 2^32 − 1 for 32-bit samples).
/// - `list2` (tag 51009, OpcodeList2): Stage 2, just after mapping to linear reference
///   values; coordinates are those of the ActiveArea-cropped image (its top-left is 0, 0);
///   logical range 0 … 1.
/// - `list3` (tag 51022, OpcodeList3): Stage 3, just after demosaicing; same coordinates
///   and range as Stage 2.
public enum OpcodeListID: Int, Sendable, CaseIterable, Codable {
    case list1 = 1
    case list2 = 2
    case list3 = 3

    /// The TIFF tag that holds the list.
    public var tag: UInt16 {
        switch self {
        case .list1: return 51008
        case .list2: return 51009
        case .list3: return 51022
        }
    }

    /// "OpcodeList1", "OpcodeList2" or "OpcodeList3".
    public var name: String { "OpcodeList\(rawValue)" }

    /// The processing stage (1, 2 or 3) the list is applied to.
    public var stage: Int { rawValue }
}

/// The opcode IDs of DNG 1.7.1 (chapter 7) and their names.
public enum OpcodeID {
    public static let warpRectilinear: UInt32 = 1
    public static let warpFisheye: UInt32 = 2
    public static let fixVignetteRadial: UInt32 = 3
    public static let fixBadPixelsConstant: UInt32 = 4
    public static let fixBadPixelsList: UInt32 = 5
    public static let trimBounds: UInt32 = 6
    public static let mapTable: UInt32 = 7
    public static let mapPolynomial: UInt32 = 8
    public static let gainMap: UInt32 = 9
    public static let deltaPerRow: UInt32 = 10
    public static let deltaPerColumn: UInt32 = 11
    public static let scalePerRow: UInt32 = 12
    public static let scalePerColumn: UInt32 = 13
    public static let warpRectilinear2: UInt32 = 14

    /// The specification's name of an opcode ID, or "unknown opcode" outside 1…14.
    public static func name(of id: UInt32) -> String {
        switch id {
        case 1: return "WarpRectilinear"
        case 2: return "WarpFisheye"
        case 3: return "FixVignetteRadial"
        case 4: return "FixBadPixelsConstant"
        case 5: return "FixBadPixelsList"
        case 6: return "TrimBounds"
        case 7: return "MapTable"
        case 8: return "MapPolynomial"
        case 9: return "GainMap"
        case 10: return "DeltaPerRow"
        case 11: return "DeltaPerColumn"
        case 12: return "ScalePerRow"
        case 13: return "ScalePerColumn"
        case 14: return "WarpRectilinear2"
        default: return "unknown opcode"
        }
    }
}

/// The fixed 16-byte header in front of every opcode's parameters.
public struct OpcodeHeader: Sendable, Equatable {
    /// The opcode ID (1 … 14 in DNG 1.7.1).
    public var id: UInt32
    /// The DNG version the opcode needs, one byte per component: 0x01030000 is 1.3.0.0.
    public var version: UInt32
    /// Flag bits: bit 0 optional, bit 1 may be skipped when rendering a preview.
    public var flags: UInt32

    public init(id: UInt32, version: UInt32, flags: UInt32) {
        self.id = id
        self.version = version
        self.flags = flags
    }

    /// Bit 0: a reader that does not understand the opcode may skip it.
    public var isOptional: Bool { flags & 1 != 0 }
    /// Bit 1: the opcode may be skipped when rendering a preview.
    public var mayBeSkippedForPreview: Bool { flags & 2 != 0 }
    /// The version as "1.3.0.0".
    public var versionString: String {
        "\(version >> 24).\((version >> 16) & 0xFF).\((version >> 8) & 0xFF).\(version & 0xFF)"
    }

    /// The newest opcode version this reader understands: 1.7.1.0.
    public static let newestSupportedVersion: UInt32 = 0x0107_0100
}

/// The rectangle, plane range and sampling pitch that most pixel opcodes act on
/// (the first 32 bytes of MapTable, MapPolynomial, GainMap and the per-row/column opcodes).
///
/// The opcode touches rows `top, top + rowPitch, …` below `bottom` and columns
/// `left, left + colPitch, …` left of `right`, in planes `plane ..< plane + planes`, in
/// the coordinate system of the list's stage (see `OpcodeListID`). The rectangle may
/// extend past the image: only its overlap is processed. An all-zero rectangle means the
/// whole image (as the DNG SDK reads it); it is allowed only where no count depends on
/// the rectangle's size.
public struct OpcodeArea: Sendable, Equatable {
    /// First row (inclusive).
    public var top: Int
    /// First column (inclusive).
    public var left: Int
    /// End row (exclusive).
    public var bottom: Int
    /// End column (exclusive).
    public var right: Int
    /// First plane processed.
    public var plane: Int
    /// Number of planes processed (planes beyond the image's are ignored).
    public var planes: Int
    /// Every `rowPitch`-th row from `top` is processed.
    public var rowPitch: Int
    /// Every `colPitch`-th column from `left` is processed.
    public var colPitch: Int

    public init(top: Int, left: Int, bottom: Int, right: Int, plane: Int = 0, planes: Int = 1,
                rowPitch: Int = 1, colPitch: Int = 1) {
        self.top = top
        self.left = left
        self.bottom = bottom
        self.right = right
        self.plane = plane
        self.planes = planes
        self.rowPitch = rowPitch
        self.colPitch = colPitch
    }

    /// An area covering `rect` with the given planes and pitches.
    public init(_ rect: PixelRect, plane: Int = 0, planes: Int = 1, rowPitch: Int = 1, colPitch: Int = 1) {
        self.init(top: rect.top, left: rect.left, bottom: rect.bottom, right: rect.right, plane: plane,
                  planes: planes, rowPitch: rowPitch, colPitch: colPitch)
    }

    /// True for the all-zero rectangle, which stands for the whole image.
    public var coversWholeImage: Bool { top == 0 && left == 0 && bottom == 0 && right == 0 }

    /// The rectangle as a `PixelRect`.
    public var rect: PixelRect { PixelRect(top: top, left: left, bottom: bottom, right: right) }

    /// The number of rows the opcode touches in an unclipped rectangle: ⌈height / rowPitch⌉.
    public var sampledRows: Int { (bottom - top + rowPitch - 1) / rowPitch }
    /// The number of columns the opcode touches in an unclipped rectangle: ⌈width / colPitch⌉.
    public var sampledColumns: Int { (right - left + colPitch - 1) / colPitch }
}

/// WarpRectilinear (ID 1, DNG 1.3): radial and tangential distortion of a rectilinear lens,
/// one coefficient set for all planes or one per plane.
public struct WarpRectilinear: Sendable, Equatable {
    /// The coefficients for one plane.
    public struct Coefficients: Sendable, Equatable {
        /// kr0 … kr3: the source radius ratio is kr0 + kr1 r² + kr2 r⁴ + kr3 r⁶.
        public var radial: [Double]
        /// kt0, kt1: tangential (decentering) terms.
        public var tangential: [Double]

        public init(radial: [Double], tangential: [Double]) {
            self.radial = radial
            self.tangential = tangential
        }
    }

    /// One set per plane, or a single set for all planes.
    public var planes: [Coefficients]
    /// The optical centre, relative: 0 is the left edge, 1 the right edge.
    public var centerX: Double
    /// The optical centre, relative: 0 is the top edge, 1 the bottom edge.
    public var centerY: Double

    public init(planes: [Coefficients], centerX: Double, centerY: Double) {
        self.planes = planes
        self.centerX = centerX
        self.centerY = centerY
    }
}

/// WarpFisheye (ID 2, DNG 1.3): radial distortion of a fisheye lens.
public struct WarpFisheye: Sendable, Equatable {
    /// kr0 … kr3 per plane: the source radius is kr0 θ + kr1 θ³ + kr2 θ⁵ + kr3 θ⁷, θ = atan(r).
    public var planes: [[Double]]
    /// The optical centre, relative to the width.
    public var centerX: Double
    /// The optical centre, relative to the height.
    public var centerY: Double

    public init(planes: [[Double]], centerX: Double, centerY: Double) {
        self.planes = planes
        self.centerX = centerX
        self.centerY = centerY
    }
}

/// WarpRectilinear2 (ID 14, DNG 1.6): rectilinear distortion with radial terms up to
/// r^14, a valid radius range per plane and an optional reciprocal radial model.
public struct WarpRectilinear2: Sendable, Equatable {
    // Layout: planes N (LONG), then per plane kr0 … kr14, kt0, kt1, minimum and maximum
    // valid radius (19 DOUBLEs), then cx, cy (DOUBLE) and the reciprocal flag (LONG).
    /// The coefficients for one plane.
    public struct Coefficients: Sendable, Equatable {
        /// kr0 … kr14: the radial polynomial's coefficients of r⁰ … r¹⁴.
        public var radial: [Double]
        /// kt0, kt1: tangential terms.
        public var tangential: [Double]
        /// The smallest normalised radius the model is valid for.
        public var minimumValidRadius: Double
        /// The largest normalised radius the model is valid for.
        public var maximumValidRadius: Double

        public init(radial: [Double], tangential: [Double], minimumValidRadius: Double, maximumValidRadius: Double) {
            self.radial = radial
            self.tangential = tangential
            self.minimumValidRadius = minimumValidRadius
            self.maximumValidRadius = maximumValidRadius
        }
    }

    /// One set per plane, or a single set for all planes.
    public var planes: [Coefficients]
    /// The optical centre, relative to the width.
    public var centerX: Double
    /// The optical centre, relative to the height.
    public var centerY: Double
    /// When true the radial polynomial gives the reciprocal of the radius ratio.
    public var useReciprocal: Bool

    public init(planes: [Coefficients], centerX: Double, centerY: Double, useReciprocal: Bool) {
        self.planes = planes
        self.centerX = centerX
        self.centerY = centerY
        self.useReciprocal = useReciprocal
    }
}

/// FixVignetteRadial (ID 3, DNG 1.3): multiplies every sample of every plane by
/// g = 1 + k0 r² + k1 r⁴ + k2 r⁶ + k3 r⁸ + k4 r¹⁰, where r is the distance of the pixel
/// centre from the optical centre divided by the distance from the optical centre to the
/// farthest image corner.
public struct FixVignetteRadial: Sendable, Equatable {
    /// k0 … k4.
    public var coefficients: [Double]
    /// The optical centre, relative to the image width (0 … 1).
    public var centerX: Double
    /// The optical centre, relative to the image height (0 … 1).
    public var centerY: Double

    public init(coefficients: [Double], centerX: Double, centerY: Double) {
        self.coefficients = coefficients
        self.centerX = centerX
        self.centerY = centerY
    }
}

/// FixBadPixelsConstant (ID 4, DNG 1.3): on a one-plane Bayer image, samples equal to
/// `constant` are bad and are replaced from same-colour neighbours.
public struct FixBadPixelsConstant: Sendable, Equatable {
    /// The value that marks a bad pixel (a stored value at Stage 1, a 16-bit code later).
    public var constant: UInt32
    /// The Bayer phase, DNG encoding: 0 top-left green with red to its right, 1 top-left
    /// red, 2 top-left blue, 3 top-left green with blue to its right.
    public var bayerPhase: Int

    public init(constant: UInt32, bayerPhase: Int) {
        self.constant = constant
        self.bayerPhase = bayerPhase
    }
}

/// A bad pixel position in stage coordinates.
public struct BadPixel: Sendable, Equatable, Hashable {
    /// The pixel's row.
    public var row: Int
    /// The pixel's column.
    public var column: Int

    public init(row: Int, column: Int) {
        self.row = row
        self.column = column
    }
}

/// FixBadPixelsList (ID 5, DNG 1.3): listed pixels and rectangles of a one-plane Bayer
/// image are replaced from same-colour neighbours.
public struct FixBadPixelsList: Sendable, Equatable {
    /// The Bayer phase, same encoding as `FixBadPixelsConstant.bayerPhase`.
    public var bayerPhase: Int
    /// Single bad pixels (row, column), stage coordinates.
    public var points: [BadPixel]
    /// Bad rectangles (top and left inclusive, bottom and right exclusive).
    public var rectangles: [PixelRect]

    public init(bayerPhase: Int, points: [BadPixel], rectangles: [PixelRect]) {
        self.bayerPhase = bayerPhase
        self.points = points
        self.rectangles = rectangles
    }
}

/// MapTable (ID 7, DNG 1.3): maps samples of an area through a 16-bit lookup table;
/// indices past the end of the table take its last entry.
public struct MapTable: Sendable, Equatable {
    /// The pixels and planes mapped.
    public var area: OpcodeArea
    /// 1 … 65,536 entries.
    public var table: [UInt16]

    public init(area: OpcodeArea, table: [UInt16]) {
        self.area = area
        self.table = table
    }
}

/// MapPolynomial (ID 8, DNG 1.3): y = c0 + c1 x + … + cN x^N, N ≤ 8, in the stage's
/// logical units (stored values at Stage 1, linear reference values later).
public struct MapPolynomial: Sendable, Equatable {
    /// The pixels and planes mapped.
    public var area: OpcodeArea
    /// c0 … cN, at most 9 coefficients.
    public var coefficients: [Double]

    public init(area: OpcodeArea, coefficients: [Double]) {
        self.area = area
        self.coefficients = coefficients
    }
}

/// GainMap (ID 9, DNG 1.3): multiplies an area by a gain interpolated bilinearly from a
/// grid of map points placed in relative image coordinates.
///
/// Map point (i, j) sits at relative position (`originV` + i · `spacingV`,
/// `originH` + j · `spacingH`), where relative 0 … 1 spans the stage image's height and
/// width. Gains are stored row by row, column by column, plane by plane (plane fastest).
public struct GainMap: Sendable, Equatable {
    /// The pixels and planes the map multiplies.
    public var area: OpcodeArea
    /// MapPointsV: map rows.
    public var pointsV: Int
    /// MapPointsH: map columns.
    public var pointsH: Int
    /// MapSpacingV: relative distance between map rows (ignored for a single row).
    public var spacingV: Double
    /// MapSpacingH: relative distance between map columns (ignored for a single column).
    public var spacingH: Double
    /// MapOriginV: relative position of the first map row.
    public var originV: Double
    /// MapOriginH: relative position of the first map column.
    public var originH: Double
    /// MapPlanes: planes in the map; image planes past the last use the last one.
    public var mapPlanes: Int
    /// pointsV × pointsH × mapPlanes gains.
    public var gains: [Float]

    public init(area: OpcodeArea, pointsV: Int, pointsH: Int, spacingV: Double, spacingH: Double,
                originV: Double, originH: Double, mapPlanes: Int, gains: [Float]) {
        self.area = area
        self.pointsV = pointsV
        self.pointsH = pointsH
        self.spacingV = spacingV
        self.spacingH = spacingH
        self.originV = originV
        self.originH = originH
        self.mapPlanes = mapPlanes
        self.gains = gains
    }

    /// The stored gain of map point (`row`, `column`) in map plane `plane`.
    public func gain(row: Int, column: Int, plane: Int) -> Float {
        gains[(row * pointsH + column) * mapPlanes + plane]
    }
}

/// The parameters of DeltaPerRow, DeltaPerColumn, ScalePerRow and ScalePerColumn
/// (IDs 10 – 13, DNG 1.3): an area and one value per sampled row or column.
public struct AreaValues: Sendable, Equatable {
    /// The pixels and planes changed.
    public var area: OpcodeArea
    /// ⌈height / rowPitch⌉ values for the per-row opcodes, ⌈width / colPitch⌉ for the
    /// per-column ones.
    public var values: [Float]

    public init(area: OpcodeArea, values: [Float]) {
        self.area = area
        self.values = values
    }
}

/// One opcode with its parameters.
public enum Opcode: Sendable, Equatable {
    case warpRectilinear(WarpRectilinear)
    case warpFisheye(WarpFisheye)
    case fixVignetteRadial(FixVignetteRadial)
    case fixBadPixelsConstant(FixBadPixelsConstant)
    case fixBadPixelsList(FixBadPixelsList)
    /// TrimBounds (ID 6): the rectangle the image is to be trimmed to.
    case trimBounds(PixelRect)
    case mapTable(MapTable)
    case mapPolynomial(MapPolynomial)
    case gainMap(GainMap)
    /// DeltaPerRow (ID 10): adds one value per sampled row.
    case deltaPerRow(AreaValues)
    /// DeltaPerColumn (ID 11): adds one value per sampled column.
    case deltaPerColumn(AreaValues)
    /// ScalePerRow (ID 12): multiplies by one value per sampled row.
    case scalePerRow(AreaValues)
    /// ScalePerColumn (ID 13): multiplies by one value per sampled column.
    case scalePerColumn(AreaValues)
    case warpRectilinear2(WarpRectilinear2)
    /// An optional opcode this reader does not understand (an ID outside 1 … 14, or a
    /// version newer than 1.7.1.0), kept with its raw parameter bytes.
    case unknown(id: UInt32, parameters: [UInt8])

    /// The opcode ID.
    public var id: UInt32 {
        switch self {
        case .warpRectilinear: return OpcodeID.warpRectilinear
        case .warpFisheye: return OpcodeID.warpFisheye
        case .fixVignetteRadial: return OpcodeID.fixVignetteRadial
        case .fixBadPixelsConstant: return OpcodeID.fixBadPixelsConstant
        case .fixBadPixelsList: return OpcodeID.fixBadPixelsList
        case .trimBounds: return OpcodeID.trimBounds
        case .mapTable: return OpcodeID.mapTable
        case .mapPolynomial: return OpcodeID.mapPolynomial
        case .gainMap: return OpcodeID.gainMap
        case .deltaPerRow: return OpcodeID.deltaPerRow
        case .deltaPerColumn: return OpcodeID.deltaPerColumn
        case .scalePerRow: return OpcodeID.scalePerRow
        case .scalePerColumn: return OpcodeID.scalePerColumn
        case .warpRectilinear2: return OpcodeID.warpRectilinear2
        case .unknown(let id, _): return id
        }
    }

    /// The specification's name ("GainMap", ...).
    public var name: String { OpcodeID.name(of: id) }

    /// True for the opcodes that move pixels (WarpRectilinear, WarpFisheye,
    /// WarpRectilinear2) rather than change their values.
    public var isGeometric: Bool {
        switch self {
        case .warpRectilinear, .warpFisheye, .warpRectilinear2: return true
        default: return false
        }
    }
}

/// One opcode of a list: its position, its header and its parsed parameters.
public struct OpcodeEntry: Sendable, Equatable {
    /// The position in the list, counted from 0.
    public var index: Int
    /// ID, version and flags.
    public var header: OpcodeHeader
    /// The parsed parameters.
    public var opcode: Opcode

    public init(index: Int, header: OpcodeHeader, opcode: Opcode) {
        self.index = index
        self.header = header
        self.opcode = opcode
    }
}
