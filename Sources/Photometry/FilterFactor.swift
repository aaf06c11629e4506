import Foundation
import ImageCore

/// The transmittance of a filter in front of the lens (a neutral-density filter, or a factor
/// measured with and without it): the share of the scene's light that reaches the sensor,
/// 0 < T ≤ 1. A capture through it is divided by T to give the scene's values, and T's
/// uncertainty is an item of every budget (`filter`; docs/lens.md).
///
/// Written `0.001`, `0.001±0.00003` (absolute), `0.001±3%` (relative), or as an optical
/// density `ND3`, `ND3.0±0.02` (T = 10^−D; the ± in density). Without a stated uncertainty
/// the transmittance is a nominal one: `nominalRelativeUncertainty`.
public struct FilterFactor: Sendable, Codable, Equatable {
    /// T, 0 < T ≤ 1.
    public var transmittance: Double
    /// Relative standard uncertainty of T (k = 1).
    public var relativeUncertainty: Double
    /// Whether the uncertainty was stated (false: the nominal default).
    public var stated: Bool
    /// The text it was read from (as the outputs record it).
    public var text: String

    /// Relative standard uncertainty of a nominal transmittance (a filter's label, not a
    /// measurement): 20 %. One published ×1000 filter passed 1.26·10⁻³, 1.23·10⁻³ and
    /// 0.84·10⁻³ of red, green and blue light (26 %, 23 % and −16 % from its label), so a
    /// label is good to about a quarter; ±0.1 in density, rectangular, is 13 %.
    public static let nominalRelativeUncertainty = 0.20

    public init(transmittance: Double, relativeUncertainty: Double, stated: Bool, text: String) {
        self.transmittance = transmittance
        self.relativeUncertainty = relativeUncertainty
        self.stated = stated
        self.text = text
    }

    /// Why a filter factor cannot be read.
    public struct ParseError: Error, CustomStringConvertible, Equatable {
        public var text: String
        public var reason: String
        public var description: String { "filter factor '\(text)': \(reason)" }
    }

    /// Reads `0.001`, `0.001±3%`, `0.001+-0.00003`, `ND3`, `ND3.0±0.02`.
    public static func parse(_ text: String) throws(ParseError) -> FilterFactor {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        func fail(_ reason: String) -> ParseError { ParseError(text: text, reason: reason) }
        var body = trimmed, spread: String?
        for separator in ["±", "+-", "+/-"] {
            if let range = trimmed.range(of: separator) {
                body = String(trimmed[..<range.lowerBound]).trimmingCharacters(in: .whitespaces)
                spread = String(trimmed[range.upperBound...]).trimmingCharacters(in: .whitespaces)
                break
            }
        }
        let density = body.lowercased().hasPrefix("nd")
        let numberText = density ? String(body.dropFirst(2)).trimmingCharacters(in: .whitespaces) : body
        guard let number = Double(numberText), number.isFinite else {
            throw fail("expected a transmittance such as 0.001 or an optical density such as ND3, optionally with ±u or ±u%")
        }
        let t = density ? pow(10, -number) : number
        if density, number < 0 { throw fail("an optical density cannot be negative") }
        guard t > 0 else { throw fail("a transmittance must be above 0") }
        guard t <= 1 else {
            throw fail("a transmittance is at most 1 (the share of the light the filter passes: a filter that passes 1/1000 of it is 0.001 or ND3)")
        }
        guard let spread else {
            return FilterFactor(transmittance: t, relativeUncertainty: nominalRelativeUncertainty, stated: false, text: trimmed)
        }
        let percent = spread.hasSuffix("%")
        guard let u = Double(percent ? String(spread.dropLast()) : spread), u.isFinite, u >= 0 else {
            throw fail("the uncertainty after ± must be a number ≥ 0, optionally with %")
        }
        let relative: Double
        if percent {
            relative = u / 100
        } else if density {
            relative = log(10) * u  // σ_T / T = ln 10 · σ_D
        } else {
            relative = u / t
        }
        guard relative < 1 else { throw fail("an uncertainty of \(String(format: "%.3g", 100 * relative)) % of the transmittance leaves nothing of it") }
        return FilterFactor(transmittance: t, relativeUncertainty: relative, stated: true, text: trimmed)
    }

    /// Reads a frame's filter, `N=T[±u]` (N the frame's number from 1): the frame's index
    /// (from 0) and the filter.
    public static func parseFrame(_ text: String) throws(ParseError) -> (frame: Int, filter: FilterFactor) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, let n = Int(parts[0].trimmingCharacters(in: .whitespaces)), n >= 1 else {
            throw ParseError(text: text, reason: "give N=T: a frame number from 1 and the transmittance of its filter (e.g. 1=0.001±3% or 1=ND3)")
        }
        return (n - 1, try parse(parts[1]))
    }

    /// The budget item of a scale that divides by this transmittance.
    public var uncertaintyPart: ExposureScaling.UncertaintyPart {
        let how = stated ? "as stated" : "a nominal transmittance: ±\(Int(100 * Self.nominalRelativeUncertainty)) % (a label, not a measurement; docs/lens.md)"
        return .init(name: "filter", relative: relativeUncertainty,
                     note: String(format: "the filter's transmittance T = %.6g (%@), %@", transmittance, text, how))
    }
}

extension ExposureScaling {
    /// The scaling of values captured through `filter`: the factor divided by its
    /// transmittance, its uncertainty in quadrature with the scale's (item `filter`).
    public func through(_ filter: FilterFactor) -> ExposureScaling {
        var s = appending(filter.uncertaintyPart)
        s.factor /= filter.transmittance
        s.source = (source.map { $0 + "; " } ?? "") + String(format: "divided by the filter's transmittance %.6g (%@)", filter.transmittance, filter.text)
        return s
    }
}
