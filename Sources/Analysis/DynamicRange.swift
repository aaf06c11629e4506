import Foundation
import ImageCore

/// Dynamic range of a region's luminance, in stops.
public struct DynamicRange: Sendable, Codable, Equatable {
    /// Percentiles used for the robust range.
    public var lowPercentile: Double
    public var highPercentile: Double
    /// log₂(Y at the high percentile / Y at the low percentile), over positive values.
    public var robustStops: Double?
    /// The noise floor: the luminance at which signal equals noise (SNR = 1) by the
    /// NoiseProfile, in the image's units.
    public var noiseFloor: Double?
    /// log₂(Y at the high percentile / noise floor): the stops of usable signal above noise.
    public var stopsAboveNoiseFloor: Double?
    /// What the ranges are (`ResultKind`): a lower bound when the high percentile is one (its
    /// clipped pixels hold more light), an upper bound when the low one is.
    public var kind = ResultKind.value

    /// Computes the range from luminance statistics and an optional noise model.
    ///
    /// The noise floor solves `Y = σ_Y(Y)` for a neutral: with `σ² = a·Y + b` (the Y
    /// variance of a grey pixel of luminance Y under the noise model), `Y = (a + √(a² + 4b)) / 2`.
    public static func of(_ y: QuantityStatistics, noise: NoiseModel?, low: Double = 0.1, high: Double = 99.9) -> DynamicRange {
        let pLow = y.percentiles.first { $0.percentile == low }?.value
        let pHigh = y.percentiles.first { $0.percentile == high }?.value
        var robust: Double?
        if let pLow, let pHigh, pLow > 0, pHigh > 0 { robust = log2(pHigh / pLow) }
        var floor: Double?
        var above: Double?
        if let noise {
            let at0 = noise.variance(ofOutput: SIMD3(0, 0, 0)).y
            let at1 = noise.variance(ofOutput: SIMD3(1, 1, 1)).y
            let a = max(at1 - at0, 0), b = max(at0, 0)
            let f = (a + (a * a + 4 * b).squareRoot()) / 2
            if f > 0 {
                floor = f
                if let pHigh, pHigh > 0 { above = log2(pHigh / f) }
            }
        }
        var range = DynamicRange(lowPercentile: low, highPercentile: high, robustStops: robust, noiseFloor: floor,
                                 stopsAboveNoiseFloor: above)
        let highKind = y.percentiles.first { $0.percentile == high }?.kind ?? .value
        let lowKind = y.percentiles.first { $0.percentile == low }?.kind ?? .value
        // log₂(high / low): a bound on the high end bounds it the same way, on the low end the other way.
        range.kind = ResultKind.ofRatio(highKind, lowKind)
        return range
    }
}
