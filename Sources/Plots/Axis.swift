import Foundation

/// Linear mapping from axis coordinates to pixels.
///
/// Axis coordinates are the data values on a linear axis, EV on a stops axis and log₁₀ of
/// the data on a logarithmic axis, so every axis maps linearly once its values are in
/// axis coordinates (`coordinate(_:)`).
public struct AxisMapping: Sendable, Hashable {
    /// Range of axis coordinates shown.
    public var domain: ClosedRange<Double>
    /// Pixel position of `domain.lowerBound`.
    public var start: Double
    /// Pixel position of `domain.upperBound` (smaller than `start` for a y axis).
    public var end: Double
    /// Whether data values are shown on a log₁₀ scale.
    public var logarithmic: Bool

    /// A mapping of `domain` (axis coordinates) onto the pixels from `start` to `end`.
    public init(domain: ClosedRange<Double>, start: Double, end: Double, logarithmic: Bool = false) {
        self.domain = domain
        self.start = start
        self.end = end
        self.logarithmic = logarithmic
    }

    /// The axis coordinate of a data value: the value itself, or its log₁₀ (nil when ≤ 0).
    public func coordinate(_ value: Double) -> Double? {
        guard value.isFinite else { return nil }
        if logarithmic { return value > 0 ? log10(value) : nil }
        return value
    }

    /// The pixel position of an axis coordinate.
    public func pixel(coordinate c: Double) -> Double {
        let span = domain.upperBound - domain.lowerBound
        return start + (span > 0 ? (c - domain.lowerBound) / span : 0.5) * (end - start)
    }

    /// The pixel position of a data value (nil when it has no place on a log axis).
    public func pixel(_ value: Double) -> Double? {
        coordinate(value).map { pixel(coordinate: $0) }
    }
}

/// A tick on an axis: its axis coordinate and its label (nil for an unlabelled tick).
public struct AxisTick: Sendable, Hashable {
    /// Position in axis coordinates.
    public var coordinate: Double
    /// Text under (or beside) the tick; nil = a minor, unlabelled tick.
    public var label: String?

    /// A tick at `coordinate` with `label`.
    public init(_ coordinate: Double, _ label: String?) {
        self.coordinate = coordinate
        self.label = label
    }
}

/// Tick positions and labels: 1-2-5 steps, whole stops, decades.
public enum AxisTicks {
    /// The 1, 2 or 5 × 10ᵏ step that divides `span` into about `target` intervals.
    public static func niceStep(span: Double, target: Int) -> Double {
        guard span > 0, span.isFinite else { return 1 }
        let raw = span / Double(max(1, target))
        let magnitude = pow(10, (log10(raw)).rounded(.down))
        let fraction = raw / magnitude
        let nice: Double = fraction <= 1.5 ? 1 : fraction <= 3.5 ? 2 : fraction <= 7.5 ? 5 : 10
        return nice * magnitude
    }

    /// Multiples of a nice step inside `range` (about `target` intervals), labelled.
    public static func linear(_ range: ClosedRange<Double>, target: Int) -> [AxisTick] {
        let step = niceStep(span: range.upperBound - range.lowerBound, target: target)
        let first = (range.lowerBound / step - 1e-9).rounded(.up)
        let last = (range.upperBound / step + 1e-9).rounded(.down)
        guard last >= first, last - first < 1000 else { return [] }
        return stride(from: first, through: last, by: 1).map { k in
            let v = k * step
            return AxisTick(v, AxisFormat.number(abs(v) < step * 1e-9 ? 0 : v, step: step))
        }
    }

    /// `range` widened to multiples of the nice step for `target` intervals (for count axes
    /// that should end on a labelled tick).
    public static func niceRange(_ range: ClosedRange<Double>, target: Int) -> ClosedRange<Double> {
        let step = niceStep(span: range.upperBound - range.lowerBound, target: target)
        return (range.lowerBound / step).rounded(.down) * step...(range.upperBound / step).rounded(.up) * step
    }

    /// A tick at every whole stop in `range`; labels on multiples of the smallest of 1, 2, 5,
    /// 10 stops that leaves `minimumSpacing` pixels between labels at `pixelsPerStop`.
    public static func stops(_ range: ClosedRange<Double>, pixelsPerStop: Double, minimumSpacing: Double) -> [AxisTick] {
        let every = [1, 2, 5, 10, 20].first { Double($0) * pixelsPerStop >= minimumSpacing } ?? 50
        let first = Int(range.lowerBound.rounded(.up)), last = Int(range.upperBound.rounded(.down))
        guard last >= first, last - first < 2000 else { return [] }
        return (first...last).map { s in AxisTick(Double(s), s % every == 0 ? AxisFormat.stops(Double(s)) : nil) }
    }

    /// Ticks of a log₁₀ axis over `range` (in log₁₀ units): labelled decades (every second or
    /// fifth when there are many) and unlabelled 2…9 multiples; when the range spans less
    /// than a decade, 1-2-5 ticks labelled as numbers.
    public static func logarithmic(_ range: ClosedRange<Double>, maximumLabels: Int) -> [AxisTick] {
        let lo = range.lowerBound, hi = range.upperBound
        let firstDecade = Int(lo.rounded(.down)), lastDecade = Int(hi.rounded(.up))
        guard lastDecade - firstDecade < 400 else { return [] }
        let decadesInside = (firstDecade...lastDecade).filter { Double($0) >= lo - 1e-9 && Double($0) <= hi + 1e-9 }
        if decadesInside.count < 2 {
            // Less than a decade: linear nice ticks in value space, placed on the log axis.
            let values = linear(pow(10, lo)...pow(10, hi), target: max(2, maximumLabels))
            return values.filter { $0.coordinate > 0 }.map { AxisTick(log10($0.coordinate), $0.label) }
        }
        let every = [1, 2, 3, 5, 10, 20].first { (decadesInside.count + $0 - 1) / $0 <= max(1, maximumLabels) } ?? 50
        // With few decades in view, 2× and 5× are labelled as well.
        let labelInBetween = every == 1 && decadesInside.count <= 2
        var ticks: [AxisTick] = []
        for d in firstDecade...lastDecade {
            let c = Double(d)
            if c >= lo - 1e-9 && c <= hi + 1e-9 {
                ticks.append(AxisTick(c, d % every == 0 ? AxisFormat.power(d) : nil))
            }
            if every == 1 {
                for m in 2...9 {
                    let mc = c + log10(Double(m))
                    guard mc >= lo && mc <= hi else { continue }
                    let label = labelInBetween && (m == 2 || m == 5) ? AxisFormat.multipleOfPower(m, d) : nil
                    ticks.append(AxisTick(mc, label))
                }
            }
        }
        return ticks
    }
}

/// Number formatting for axis labels and notes, independent of the locale, with a true
/// minus sign (U+2212).
public enum AxisFormat {
    /// The minus sign used in labels.
    public static let minus = "\u{2212}"

    /// `value` with as many decimals as `step` needs ("0.25", "−3", "1200").
    public static func number(_ value: Double, step: Double) -> String {
        let decimals = step > 0 ? max(0, min(10, Int((-log10(step) - 1e-9).rounded(.up)))) : 2
        return fixed(value, decimals: decimals)
    }

    /// `value` with exactly `decimals` decimals and a true minus sign.
    public static func fixed(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "NaN" : (value > 0 ? "∞" : minus + "∞") }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let negative = value < 0 && scaled != 0
        let whole = (scaled / scale).rounded(.down)
        var s = negative ? minus : ""
        s += String(Int64(whole))
        if decimals > 0 {
            let fraction = Int64(scaled - whole * scale)
            let f = String(fraction)
            s += "." + String(repeating: "0", count: max(0, decimals - f.count)) + f
        }
        return s
    }

    /// Stops relative to white with a sign: "+2", "0", "−8", "−2.5".
    public static func stops(_ value: Double) -> String {
        let whole = value.rounded() == value
        let body = whole ? fixed(abs(value), decimals: 0) : fixed(abs(value), decimals: 1)
        if body == "0" || body == "0.0" { return "0" }
        return (value < 0 ? minus : "+") + body
    }

    /// Stops with the unit: "+2 EV", "0 EV", "−8 EV".
    public static func ev(_ value: Double) -> String {
        stops(value) + " EV"
    }

    /// A power of ten for log-axis labels: "0.001", "1", "100", "1k", "1M", "1e−9".
    public static func power(_ exponent: Int) -> String {
        switch exponent {
        case 0...2: return "1" + String(repeating: "0", count: exponent)
        case 3...5: return "1" + String(repeating: "0", count: exponent - 3) + "k"
        case 6...8: return "1" + String(repeating: "0", count: exponent - 6) + "M"
        case -4 ... -1: return "0." + String(repeating: "0", count: -exponent - 1) + "1"
        default: return "1e" + (exponent < 0 ? minus : "") + String(abs(exponent))
        }
    }

    /// `multiple` × 10^`exponent` written like `power`: "0.002", "5", "20", "5k".
    public static func multipleOfPower(_ multiple: Int, _ exponent: Int) -> String {
        let p = power(exponent)
        if p.hasPrefix("1e") { return "\(multiple)" + p.dropFirst() }
        if p.hasPrefix("0.") { return String(p.dropLast()) + "\(multiple)" }
        return "\(multiple)" + p.dropFirst()
    }

    /// A count for axis labels: "0", "250", "1.5k", "20k", "3M". The unit suffix is chosen
    /// from `largest` (the largest label on the axis; the value itself by default) so one
    /// axis uses one unit: 0, 4k, 8k, 12k rather than 0, 4000, 8000, 12k.
    public static func count(_ value: Double, step: Double, largest: Double? = nil) -> String {
        let magnitude = max(abs(largest ?? value), abs(value), abs(step))
        if magnitude >= 1e6 && step >= 1e5 { return number(value / 1e6, step: step / 1e6) + "M" }
        if magnitude >= 1e4 && step >= 100 { return number(value / 1e3, step: step / 1e3) + "k" }
        return number(value, step: step)
    }

    /// An integer with thin groups of three digits: "1 234 567".
    public static func grouped(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += " " }
            out.append(c)
        }
        return (value < 0 ? minus : "") + out
    }
}
