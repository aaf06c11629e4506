import Foundation
import ImageCore

/// The random numbers of the simulation: a small, fast, seeded generator with uniform,
/// Gaussian and Poisson draws. Every row of an image gets its own stream derived from the
/// seed and the row, so results do not depend on how rows are spread over threads.
struct SimulationRandom {
    private var generator: SeededRandom

    /// A stream for (`seed`, `stream`, `row`).
    init(seed: UInt64, stream: UInt64, row: Int) {
        generator = SeededRandom(state: seed &* 0x9E37_79B9_7F4A_7C15 ^ (stream &+ 1) &* 0xD1B5_4A32_D192_ED03 ^ UInt64(row) &* 0x94D0_49BB_1331_11EB)
        _ = generator.next()
    }

    /// SplitMix64.
    mutating func next() -> UInt64 { generator.next() }

    /// Uniform in [0, 1).
    mutating func uniform() -> Double { generator.uniform() }

    /// Standard normal (Box–Muller, both values used).
    mutating func normal() -> Double { generator.normal() }

    /// A Poisson variate of mean `mean` ≥ 0: multiplication of uniforms for small means,
    /// Hörmann's transformed rejection with squeeze (PTRS, 1993) from 10 up. An infinite
    /// mean (an infinite radiance in a radiance map) is returned as it is, to be clipped at
    /// the full well, and NaN gives 0.
    mutating func poisson(_ mean: Double) -> Double {
        guard mean > 0 else { return 0 }
        guard mean.isFinite else { return mean }
        if mean < 10 {
            let limit = exp(-mean)
            var k = 0.0
            var product = uniform()
            while product > limit {
                k += 1
                product *= uniform()
            }
            return k
        }
        let root = mean.squareRoot(), logMean = log(mean)
        let b = 0.931 + 2.53 * root
        let a = -0.059 + 0.02483 * b
        let inverseAlpha = 1.1239 + 1.1328 / (b - 3.4)
        let vr = 0.9277 - 3.6224 / (b - 2)
        while true {
            let u = uniform() - 0.5
            let v = uniform()
            let us = 0.5 - abs(u)
            let k = ((2 * a / us + b) * u + mean + 0.43).rounded(.down)
            if us >= 0.07 && v <= vr { return k }
            if k < 0 || (us < 0.013 && v > us) { continue }
            if log(v) + log(inverseAlpha) - log(a / (us * us) + b) <= -mean + k * logMean - lgamma(k + 1) { return k }
        }
    }
}
