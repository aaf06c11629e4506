import Foundation

/// The adaptive companding curve used to store linear sensor values in fewer bits, like
/// Apple ProRAW's 12-bit codes: a LinearizationTable whose first `knee` codes are the
/// linear values themselves and whose remaining codes are spaced geometrically up to the
/// maximum value.
///
/// Design: with `n` codes and a maximum value `M`, the knee `k` is chosen so that the curve
/// is continuous in slope — the linear segment's step (1) equals the first geometric step
/// (`k · (r − 1)`, `r = (M / k)^(1 / (n − 1 − k))`), i.e. `(n − 1 − k) · ln r = ln(M / k)`
/// with `ln r ≈ 1 / k`. Below the knee every value is stored exactly; above it the
/// quantisation step is a constant fraction `r − 1 ≈ 1/k` of the value (0.13 % for 12-bit
/// codes over 16 bits), far below photon noise, so every stop from the first value to the
/// maximum survives: 16 stops for 65535.
public struct CompandingCurve: Sendable, Equatable {
    /// Number of codes (2^codeBits).
    public let codes: Int
    /// The largest linearized value (the last table entry).
    public let maximum: Int
    /// Codes below the knee map to themselves.
    public let knee: Int

    /// - Parameters:
    ///   - codeBits: bits per stored code (8–16), 12 like ProRAW.
    ///   - maximum: the largest linearized value, e.g. 65535 or the white level.
    public init(codeBits: Int, maximum: Int) {
        precondition((8...16).contains(codeBits) && maximum >= (1 << codeBits) - 1 && maximum <= 65535)
        codes = 1 << codeBits
        self.maximum = maximum
        let n = Double(codes - 1)
        if maximum <= codes - 1 {
            knee = codes - 1
            return
        }
        // Solve (n − k) / k = ln(M / k) for the knee k by bisection (the left side falls faster).
        var lo = 1.0, hi = n - 1
        for _ in 0..<100 {
            let k = (lo + hi) / 2
            if (n - k) / k > log(Double(maximum) / k) { lo = k } else { hi = k }
        }
        knee = Int(lo.rounded(.down))
    }

    /// The LinearizationTable: code → linearized value.
    public var table: [UInt16] {
        let n = codes - 1
        guard knee < n else { return (0..<codes).map { UInt16(min($0, maximum)) } }
        let r = pow(Double(maximum) / Double(knee), 1 / Double(n - knee))
        return (0..<codes).map { i -> UInt16 in
            if i <= knee { return UInt16(i) }
            let v = (Double(knee) * pow(r, Double(i - knee))).rounded()
            return UInt16(min(Double(maximum), max(Double(i), v)))
        }
    }

    /// The code whose table entry is nearest to `value` (values beyond the range clamp).
    ///
    /// A value exactly halfway between two entries — common, since integer DN values meet
    /// a table whose steps are 1 or 2 just above the knee — goes to the even code. Always
    /// taking the lower one would bias the mean of noisy data by up to a quarter of a DN
    /// per tie (−0.03 % around 1400 DN in a 14-bit capture).
    public static func nearestCode(_ table: [UInt16], _ value: Double) -> Int {
        var lo = 0, hi = table.count - 1
        if value <= Double(table[0]) { return 0 }
        if value >= Double(table[hi]) { return hi }
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if Double(table[mid]) <= value { lo = mid } else { hi = mid }
        }
        let below = value - Double(table[lo]), above = Double(table[hi]) - value
        if below == above { return lo % 2 == 0 ? lo : hi }
        return below < above ? lo : hi
    }

    /// The largest relative quantisation step (table[i+1] / table[i] − 1) within each stop
    /// below the maximum: index 0 is the top stop (M/2 ... M), index s is M/2^(s+1) ... M/2^s.
    public func relativeStepPerStop(stops: Int = 16) -> [Double] {
        let t = table.map(Double.init)
        return (0..<stops).map { s in
            let upper = Double(maximum) / pow(2, Double(s)), lower = upper / 2
            var worst = 0.0
            for i in 0..<(t.count - 1) where t[i] >= lower && t[i] < upper && t[i] > 0 {
                worst = max(worst, t[i + 1] / t[i] - 1)
            }
            return worst
        }
    }
}
