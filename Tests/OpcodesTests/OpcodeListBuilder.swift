import ImageCore
import Opcodes

/// Appends big-endian values to a byte array.
struct BigEndianWriter {
    var bytes: [UInt8] = []

    mutating func u32(_ v: UInt32) { for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) } }
    mutating func i32(_ v: Int) { u32(UInt32(bitPattern: Int32(v))) }
    mutating func u16(_ v: UInt16) { bytes.append(UInt8(v >> 8)); bytes.append(UInt8(v & 0xFF)) }
    mutating func f32(_ v: Float) { u32(v.bitPattern) }
    mutating func f64(_ v: Double) { for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v.bitPattern >> UInt64(shift))) } }

    mutating func area(_ a: OpcodeArea) {
        i32(a.top); i32(a.left); i32(a.bottom); i32(a.right)
        u32(UInt32(a.plane)); u32(UInt32(a.planes)); u32(UInt32(a.rowPitch)); u32(UInt32(a.colPitch))
    }
}

/// Serialises opcodes into an opcode list the way a DNG writer does (DNG 1.7.1 chapter 7),
/// written from the layout description independently of the parser under test.
struct OpcodeListBuilder {
    private var records: [(id: UInt32, version: UInt32, flags: UInt32, parameters: [UInt8])] = []

    /// Appends a typed opcode.
    mutating func add(_ opcode: Opcode, version: UInt32 = 0x0103_0000, flags: UInt32 = 0) {
        records.append((opcode.id, version, flags, Self.parameters(of: opcode)))
    }

    /// Appends an opcode with arbitrary ID and parameter bytes.
    mutating func addRaw(id: UInt32, version: UInt32 = 0x0103_0000, flags: UInt32 = 0, parameters: [UInt8]) {
        records.append((id, version, flags, parameters))
    }

    /// The list's bytes: count, then header and parameters of each opcode.
    var bytes: [UInt8] {
        var w = BigEndianWriter()
        w.u32(UInt32(records.count))
        for r in records {
            w.u32(r.id); w.u32(r.version); w.u32(r.flags); w.u32(UInt32(r.parameters.count))
            w.bytes += r.parameters
        }
        return w.bytes
    }

    /// A list with one opcode.
    static func list(_ opcodes: Opcode..., flags: UInt32 = 0) -> [UInt8] {
        var b = OpcodeListBuilder()
        for op in opcodes { b.add(op, flags: flags) }
        return b.bytes
    }

    /// The parameter bytes of an opcode.
    static func parameters(of opcode: Opcode) -> [UInt8] {
        var w = BigEndianWriter()
        switch opcode {
        case .warpRectilinear(let op):
            w.u32(UInt32(op.planes.count))
            for p in op.planes { p.radial.forEach { w.f64($0) }; p.tangential.forEach { w.f64($0) } }
            w.f64(op.centerX); w.f64(op.centerY)
        case .warpFisheye(let op):
            w.u32(UInt32(op.planes.count))
            for p in op.planes { p.forEach { w.f64($0) } }
            w.f64(op.centerX); w.f64(op.centerY)
        case .warpRectilinear2(let op):
            w.u32(UInt32(op.planes.count))
            for p in op.planes {
                p.radial.forEach { w.f64($0) }; p.tangential.forEach { w.f64($0) }
                w.f64(p.minimumValidRadius); w.f64(p.maximumValidRadius)
            }
            w.f64(op.centerX); w.f64(op.centerY); w.u32(op.useReciprocal ? 1 : 0)
        case .fixVignetteRadial(let op):
            op.coefficients.forEach { w.f64($0) }
            w.f64(op.centerX); w.f64(op.centerY)
        case .fixBadPixelsConstant(let op):
            w.u32(op.constant); w.u32(UInt32(op.bayerPhase))
        case .fixBadPixelsList(let op):
            w.u32(UInt32(op.bayerPhase)); w.u32(UInt32(op.points.count)); w.u32(UInt32(op.rectangles.count))
            for p in op.points { w.i32(p.row); w.i32(p.column) }
            for r in op.rectangles { w.i32(r.top); w.i32(r.left); w.i32(r.bottom); w.i32(r.right) }
        case .trimBounds(let r):
            w.i32(r.top); w.i32(r.left); w.i32(r.bottom); w.i32(r.right)
        case .mapTable(let op):
            w.area(op.area); w.u32(UInt32(op.table.count)); op.table.forEach { w.u16($0) }
        case .mapPolynomial(let op):
            w.area(op.area); w.u32(UInt32(op.coefficients.count - 1)); op.coefficients.forEach { w.f64($0) }
        case .gainMap(let op):
            w.area(op.area)
            w.u32(UInt32(op.pointsV)); w.u32(UInt32(op.pointsH))
            w.f64(op.spacingV); w.f64(op.spacingH); w.f64(op.originV); w.f64(op.originH)
            w.u32(UInt32(op.mapPlanes))
            op.gains.forEach { w.f32($0) }
        case .deltaPerRow(let op), .deltaPerColumn(let op), .scalePerRow(let op), .scalePerColumn(let op):
            w.area(op.area); w.u32(UInt32(op.values.count)); op.values.forEach { w.f32($0) }
        case .unknown(_, let parameters):
            w.bytes = parameters
        }
        return w.bytes
    }
}
