import ExchangeCore
import Foundation
import ImageCore

extension RadianceFile {
    /// A Radiance picture read back: radiance in W·sr⁻¹·m⁻² (the pixels divided by the
    /// product of the header's EXPOSURE lines), converted from the picture's primaries
    /// (`PRIMARIES=`, else Radiance's standard ones, equal-energy white) to linear Rec.2020
    /// through CIE XYZ without white adaptation, so that Y × 179 is Radiance's luminance;
    /// and the header's `VIEW=` options, if any.
    public struct Picture: Sendable {
        public var width: Int
        public var height: Int
        /// Linear Rec.2020 radiance, RGB interleaved, top row first.
        public var rec2020: [Float]
        public var view: String?
        /// The header's lines between the `#?` line and the blank line, as written.
        public var header: [String] = []

        /// The value of the header variable `name` (`NAME=value`), its last occurrence, or nil.
        public func headerValue(_ name: String) -> String? {
            header.last { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
        }
    }

    /// Reads a Radiance picture (`.hdr`/`.pic`: `32-bit_rle_rgbe`, `-Y H +X W`, flat or
    /// run-length scanlines) under `limits`.
    /// - Throws: `ExchangeError` naming the file for what it is not (another format or
    ///   orientation, a truncated or malformed scanline: corrupt data), or `.limitExceeded`.
    public static func read(_ path: String, limits: ReadLimits = ReadLimits()) throws -> Picture {
        func fail(_ message: String, _ category: FailureCategory = .corruptData) -> ExchangeError {
            ExchangeError(path: path, operation: "RadianceFile.read", message: message, category: category)
        }
        if let problem = RegularFile.problem(path) { throw fail(problem, .inputUnreadable) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw fail("cannot read the file", .inputUnreadable)
        }
        let bytes = [UInt8](data)
        var at = 0
        func line() -> String? {
            guard at < bytes.count else { return nil }
            let start = at
            while at < bytes.count && bytes[at] != 0x0A { at += 1 }
            let text = String(decoding: bytes[start..<at], as: UTF8.self)
            at += 1
            return text
        }
        guard let magic = line(), magic.hasPrefix("#?") else { throw fail("not a Radiance picture (no #? line)") }
        var exposure = 1.0, view: String?, primaries: [Double]?, header: [String] = []
        while true {
            guard let l = line() else { throw fail("the header has no end") }
            if l.isEmpty { break }
            header.append(l)
            if l.hasPrefix("FORMAT=") {
                let format = l.dropFirst(7).trimmingCharacters(in: .whitespaces)
                guard format == "32-bit_rle_rgbe" else { throw fail("format \(format): only 32-bit_rle_rgbe is read", .unsupportedFeature) }
            } else if l.hasPrefix("EXPOSURE=") {
                guard let e = Double(l.dropFirst(9).trimmingCharacters(in: .whitespaces)), e > 0, e.isFinite else {
                    throw fail("bad header line \(l)")
                }
                exposure *= e
            } else if l.hasPrefix("VIEW=") {
                view = (view.map { $0 + " " } ?? "") + l.dropFirst(5).trimmingCharacters(in: .whitespaces)
            } else if l.hasPrefix("PRIMARIES=") {
                let p = l.dropFirst(10).split(separator: " ").compactMap { Double($0) }
                guard p.count == 8 else { throw fail("bad header line \(l)") }
                primaries = p
            }
        }
        guard let resolution = line() else { throw fail("no resolution line") }
        let parts = resolution.split(separator: " ")
        guard parts.count == 4, parts[0] == "-Y", parts[2] == "+X", let h = Int(parts[1]), let w = Int(parts[3]), w > 0, h > 0 else {
            throw fail("resolution \(resolution): only -Y H +X W (top row first) is read", .unsupportedFeature)
        }
        try limits.check(path: path, width: w, height: h, bytesPerPixel: 16)
        var rgbe = [UInt8](repeating: 0, count: w * 4)
        var out = [Float](repeating: 0, count: w * h * 3)
        let m = try rec2020(fromPrimaries: primaries, path: path)
        let toRec2020 = [Float](m.e.map { Float($0 / exposure) })
        for y in 0..<h {
            try scanline(bytes, &at, width: w, into: &rgbe, path: path, row: y)
            for x in 0..<w {
                let e = Int(rgbe[4 * x + 3])
                guard e != 0 else { continue }
                let f = Float(ldexp(1.0, e - 136))
                let r = (Float(rgbe[4 * x]) + 0.5) * f, g = (Float(rgbe[4 * x + 1]) + 0.5) * f, b = (Float(rgbe[4 * x + 2]) + 0.5) * f
                let o = 3 * (y * w + x)
                for c in 0..<3 { out[o + c] = toRec2020[3 * c] * r + toRec2020[3 * c + 1] * g + toRec2020[3 * c + 2] * b }
            }
        }
        return Picture(width: w, height: h, rec2020: out, view: view, header: header)
    }

    /// Radiance RGB (the given primaries and white, or Radiance's standard ones) → linear
    /// Rec.2020 through XYZ, no adaptation.
    static func rec2020(fromPrimaries p: [Double]?, path: String) throws -> Matrix3 {
        let toXYZ: Matrix3
        if let p {
            func xyz(_ x: Double, _ y: Double) -> SIMD3<Double> { [x / y, 1, (1 - x - y) / y] }
            let m = Matrix3(rows: xyz(p[0], p[1]), xyz(p[2], p[3]), xyz(p[4], p[5])).transposed
            guard let inverse = m.inverse else {
                throw ExchangeError(path: path, operation: "RadianceFile.read", message: "PRIMARIES do not span a colour space", category: .corruptData)
            }
            toXYZ = m * Matrix3.diagonal(inverse * xyz(p[6], p[7]))
        } else {
            toXYZ = fromXYZ.inverse!
        }
        return RGBColorSpace.rec2020.fromXYZ * toXYZ
    }

    /// One scanline into `rgbe` (4 bytes per pixel): the new run-length form (2, 2, width,
    /// four planes of runs and literals) or flat RGBE.
    static func scanline(_ bytes: [UInt8], _ at: inout Int, width: Int, into rgbe: inout [UInt8], path: String, row: Int) throws {
        func fail() -> ExchangeError {
            ExchangeError(path: path, operation: "RadianceFile.read", message: "scanline \(row) is truncated or malformed", category: .corruptData)
        }
        guard at + 4 <= bytes.count else { throw fail() }
        let newRLE = width >= 8 && width <= 0x7FFF && bytes[at] == 2 && bytes[at + 1] == 2 && bytes[at + 2] & 0x80 == 0
        guard newRLE else {
            guard at + 4 * width <= bytes.count else { throw fail() }
            for i in 0..<(4 * width) { rgbe[i] = bytes[at + i] }
            at += 4 * width
            return
        }
        guard (Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])) == width else { throw fail() }
        at += 4
        for plane in 0..<4 {
            var x = 0
            while x < width {
                guard at < bytes.count else { throw fail() }
                var count = Int(bytes[at])
                at += 1
                if count > 128 {
                    count -= 128
                    guard count > 0, x + count <= width, at < bytes.count else { throw fail() }
                    let value = bytes[at]
                    at += 1
                    for i in 0..<count { rgbe[4 * (x + i) + plane] = value }
                } else {
                    guard count > 0, x + count <= width, at + count <= bytes.count else { throw fail() }
                    for i in 0..<count { rgbe[4 * (x + i) + plane] = bytes[at + i] }
                    at += count
                }
                x += count
            }
        }
    }
}
