import Foundation
import ImageCore
import Opcodes

/// Lens shading (vignetting) for simulated captures, recorded in the DNG as a GainMap
/// opcode (OpcodeList2) that undoes it.
///
/// The map has `pointsH` × `pointsV` gains spread evenly over the image, `g = 1 / (1 − k·r²)`
/// with r the distance from the image centre relative to the corner's. The light the sensor
/// receives is the radiance divided by the gain the GainMap opcode computes at each pixel
/// (bilinear between map points), so decoding with the opcode gives the radiance back exactly.
public struct LensShading: Sendable, Equatable {
    /// Fraction of light lost in the corners (0 ≤ k < 1).
    public let strength: Double
    public let pointsH = 9
    public let pointsV = 7

    public init(strength: Double) { self.strength = strength }

    /// The GainMap opcode for an image with `planes` planes (all planes share one map).
    public func gainMap(planes: Int) -> GainMap {
        var gains: [Float] = []
        for v in 0..<pointsV {
            for h in 0..<pointsH {
                let y = Double(v) / Double(pointsV - 1) - 0.5, x = Double(h) / Double(pointsH - 1) - 0.5
                let r2 = (x * x + y * y) / 0.5
                gains.append(Float(1 / (1 - strength * r2)))
            }
        }
        return GainMap(area: OpcodeArea(top: 0, left: 0, bottom: 0, right: 0, plane: 0, planes: planes, rowPitch: 1, colPitch: 1),
                       pointsV: pointsV, pointsH: pointsH, spacingV: 1 / Double(pointsV - 1), spacingH: 1 / Double(pointsH - 1),
                       originV: 0, originH: 0, mapPlanes: 1, gains: gains)
    }

    /// The gain at every pixel of a `width` × `height` image, exactly as the decoder's GainMap
    /// opcode computes it.
    public func gains(width: Int, height: Int) throws -> [Float] {
        var ones = ImageBuffer<Float>(width: width, height: height, channels: 1, repeating: 1)
        let list = try OpcodeList.parse(Self.encodeList([gainMap(planes: 1)]), list: .list2)
        _ = try OpcodeApplier.apply(list, to: &ones, context: OpcodeContext(wholeImage: ones, clipping: .keepRange))
        return ones.samples
    }

    /// A big-endian opcode list holding GainMaps (DNG 1.7.1 chapter 7: count, then per
    /// opcode ID 9, version 1.3.0.0, flags 0, parameter size, parameters).
    public static func encodeList(_ maps: [GainMap]) -> [UInt8] {
        var out: [UInt8] = []
        func u32(_ v: UInt32) { out += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        func f64(_ v: Double) { let b = v.bitPattern; for s in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: b >> UInt64(s))) } }
        u32(UInt32(maps.count))
        for m in maps {
            u32(9)
            u32(0x0103_0000)
            u32(0)
            u32(UInt32(76 + 4 * m.gains.count))
            for v in [m.area.top, m.area.left, m.area.bottom, m.area.right, m.area.plane, m.area.planes, m.area.rowPitch, m.area.colPitch] {
                u32(UInt32(bitPattern: Int32(v)))
            }
            u32(UInt32(m.pointsV))
            u32(UInt32(m.pointsH))
            f64(m.spacingV)
            f64(m.spacingH)
            f64(m.originV)
            f64(m.originH)
            u32(UInt32(m.mapPlanes))
            for g in m.gains { u32(g.bitPattern) }
        }
        return out
    }
}
