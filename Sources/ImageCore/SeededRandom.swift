import Foundation

/// A small, fast, seeded generator (SplitMix64) with uniform and Gaussian draws: the
/// simulation's noise and the glare intervals' Monte Carlo draws. Seeded per stream, so
/// results do not depend on how work is spread over threads.
public struct SeededRandom: Sendable {
    @usableFromInline var state: UInt64
    @usableFromInline var spareNormal: Double?

    /// A generator whose state starts at `state` (mix seeds into it first).
    @inlinable public init(state: UInt64) {
        self.state = state
        spareNormal = nil
    }

    /// SplitMix64.
    @inlinable public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    @inlinable public mutating func uniform() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// Standard normal (Box–Muller, both values used).
    @inlinable public mutating func normal() -> Double {
        if let s = spareNormal {
            spareNormal = nil
            return s
        }
        var u = uniform()
        while u <= 0 { u = uniform() }
        let v = uniform()
        let r = (-2 * log(u)).squareRoot()
        spareNormal = r * sin(2 * .pi * v)
        return r * cos(2 * .pi * v)
    }
}
