/// A 3×3 matrix of `Double`, row-major, for colour transforms.
///
/// Colour matrices are small and computed once per image, so clarity beats speed here;
/// the per-pixel work uses the `Float` copy from `floatRows`.
public struct Matrix3: Equatable, Sendable, CustomStringConvertible, Codable {
    /// Row-major entries: `e[3*row + column]`.
    public var e: [Double]

    public init(_ entries: [Double]) {
        precondition(entries.count == 9, "Matrix3 needs 9 entries")
        e = entries
    }

    public init(rows r0: SIMD3<Double>, _ r1: SIMD3<Double>, _ r2: SIMD3<Double>) {
        e = [r0.x, r0.y, r0.z, r1.x, r1.y, r1.z, r2.x, r2.y, r2.z]
    }

    public static let identity = Matrix3([1, 0, 0, 0, 1, 0, 0, 0, 1])

    public static func diagonal(_ d: SIMD3<Double>) -> Matrix3 {
        Matrix3([d.x, 0, 0, 0, d.y, 0, 0, 0, d.z])
    }

    public subscript(row: Int, column: Int) -> Double {
        get { e[3 * row + column] }
        set { e[3 * row + column] = newValue }
    }

    public func row(_ r: Int) -> SIMD3<Double> { SIMD3(e[3 * r], e[3 * r + 1], e[3 * r + 2]) }

    public static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
        var out = [Double](repeating: 0, count: 9)
        for r in 0..<3 {
            for c in 0..<3 {
                out[3 * r + c] = a[r, 0] * b[0, c] + a[r, 1] * b[1, c] + a[r, 2] * b[2, c]
            }
        }
        return Matrix3(out)
    }

    public static func * (a: Matrix3, v: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3((a.row(0) * v).sum(), (a.row(1) * v).sum(), (a.row(2) * v).sum())
    }

    public static func * (s: Double, a: Matrix3) -> Matrix3 { Matrix3(a.e.map { $0 * s }) }

    public static func + (a: Matrix3, b: Matrix3) -> Matrix3 { Matrix3(zip(a.e, b.e).map { $0 + $1 }) }

    public var transposed: Matrix3 {
        Matrix3([e[0], e[3], e[6], e[1], e[4], e[7], e[2], e[5], e[8]])
    }

    public var determinant: Double {
        e[0] * (e[4] * e[8] - e[5] * e[7]) - e[1] * (e[3] * e[8] - e[5] * e[6])
            + e[2] * (e[3] * e[7] - e[4] * e[6])
    }

    /// The inverse, or `nil` when the matrix is singular (|det| below 1e-12 of its scale).
    public var inverse: Matrix3? {
        let det = determinant
        let scale = e.map { abs($0) }.max() ?? 0
        guard det.isFinite, abs(det) > 1e-12 * max(scale * scale * scale, .leastNormalMagnitude) else {
            return nil
        }
        let c00 = e[4] * e[8] - e[5] * e[7]
        let c01 = e[5] * e[6] - e[3] * e[8]
        let c02 = e[3] * e[7] - e[4] * e[6]
        let c10 = e[2] * e[7] - e[1] * e[8]
        let c11 = e[0] * e[8] - e[2] * e[6]
        let c12 = e[1] * e[6] - e[0] * e[7]
        let c20 = e[1] * e[5] - e[2] * e[4]
        let c21 = e[2] * e[3] - e[0] * e[5]
        let c22 = e[0] * e[4] - e[1] * e[3]
        return (1 / det) * Matrix3([c00, c10, c20, c01, c11, c21, c02, c12, c22])
    }

    /// Largest absolute difference between entries.
    public func maxDifference(to other: Matrix3) -> Double {
        zip(e, other.e).map { abs($0 - $1) }.max() ?? 0
    }

    /// The entries as `Float`, row-major, for per-pixel loops.
    public var floatEntries: [Float] { e.map { Float($0) } }

    public var description: String {
        (0..<3).map { r in "[" + (0..<3).map { c in String(format6: self[r, c]) }.joined(separator: ", ") + "]" }
            .joined(separator: " ")
    }
}

extension String {
    /// A compact rendering with up to 6 significant digits.
    public init(format6 value: Double) {
        if value == value.rounded(), abs(value) < 1e9 {
            self = String(Int(value))
        } else {
            var s = String(value)
            if s.count > 10 {
                let m = (value * 1e6).rounded() / 1e6
                s = String(m)
            }
            self = s
        }
    }
}
