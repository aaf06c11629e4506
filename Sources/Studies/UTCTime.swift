import Foundation

/// A moment as seconds since 1970-01-01 00:00:00 UTC (no leap seconds, as POSIX and CF's
/// `standard` calendar count them), read from ISO 8601 text or EXIF's local date with its offset.
public struct UTCTime: Sendable, Equatable, Comparable, Hashable, Codable {
    public var seconds: Double

    public init(seconds: Double) { self.seconds = seconds }

    /// From a proleptic Gregorian civil date and time at UTC offset `offsetMinutes`.
    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Double = 0, offsetMinutes: Int = 0) {
        let days = Self.daysSince1970(year: year, month: month, day: day)
        seconds = Double(days) * 86400 + Double(hour * 3600 + minute * 60 - offsetMinutes * 60) + second
    }

    public static func < (a: UTCTime, b: UTCTime) -> Bool { a.seconds < b.seconds }

    /// The Julian day (UT): 2440587.5 at 1970-01-01 00:00.
    public var julianDay: Double { 2440587.5 + seconds / 86400 }

    /// Seconds since the UTC day began.
    public var secondsIntoDay: Double {
        let s = seconds.truncatingRemainder(dividingBy: 86400)
        return s < 0 ? s + 86400 : s
    }

    /// "YYYY-MM-DDTHH:MM:SS[.fff]Z" (milliseconds when the time has a fraction).
    public var iso8601: String {
        let whole = (seconds * 1000).rounded() / 1000
        let days = Int((whole / 86400).rounded(.down))
        let (y, m, d) = Self.civil(daysSince1970: days)
        let rest = whole - Double(days) * 86400
        let h = Int(rest / 3600), mi = Int(rest.truncatingRemainder(dividingBy: 3600) / 60)
        let s = rest - Double(h * 3600 + mi * 60)
        let secondText = s == s.rounded(.down) ? String(format: "%02d", Int(s)) : String(format: "%06.3f", s)
        return String(format: "%04d-%02d-%02dT%02d:%02d:", y, m, d, h, mi) + secondText + "Z"
    }

    /// ISO 8601 with a zone: "2026-06-21T12:00:00Z", "…T12:00:00.25+02:00", "…T12:00:00-0700"
    /// (a space may stand for T). Without a zone it is refused: a local time is not a moment.
    public static func parse(iso text: String) -> Result<UTCTime, StudyInputError> {
        let chars = Array(text.trimmingCharacters(in: .whitespaces))
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= chars.count, range.allSatisfy({ chars[$0].isASCII && chars[$0].isNumber }) else { return nil }
            return Int(String(chars[range]))
        }
        let bad = StudyInputError("'\(text)' is not an ISO 8601 time with its zone (such as 2026-06-21T12:00:00Z or 2026-06-21T14:00:00+02:00)")
        guard chars.count >= 20, chars[4] == "-", chars[7] == "-", chars[10] == "T" || chars[10] == " ", chars[13] == ":", chars[16] == ":",
              let y = number(0..<4), let mo = number(5..<7), let d = number(8..<10),
              let h = number(11..<13), let mi = number(14..<16), let s = number(17..<19) else { return .failure(bad) }
        var k = 19, fraction = 0.0
        if k < chars.count, chars[k] == "." || chars[k] == "," {
            var digits = "0."
            k += 1
            while k < chars.count, chars[k].isASCII, chars[k].isNumber { digits.append(chars[k]); k += 1 }
            guard digits.count > 2, let f = Double(digits) else { return .failure(bad) }
            fraction = f
        }
        guard let offset = parseOffset(String(chars[k...])) else { return .failure(bad) }
        return make(y, mo, d, h, mi, Double(s) + fraction, offset, text: text)
    }

    /// EXIF's DateTimeOriginal ("YYYY:MM:DD HH:MM:SS", local), SubSecTimeOriginal (digits of a
    /// second's fraction) and OffsetTimeOriginal ("±HH:MM"); without an offset, `fallbackOffset`
    /// (minutes east of UTC), else the reason it cannot be placed in time.
    public static func parse(exif date: String, subSeconds: String? = nil, offset: String?,
                             fallbackOffset: Int? = nil) -> Result<UTCTime, StudyInputError> {
        let c = Array(date.utf8)
        func number(_ r: Range<Int>) -> Int? {
            guard r.upperBound <= c.count, r.allSatisfy({ c[$0] >= 48 && c[$0] <= 57 }) else { return nil }
            return Int(String(decoding: c[r], as: UTF8.self))
        }
        guard c.count >= 19, let y = number(0..<4), let mo = number(5..<7), let d = number(8..<10),
              let h = number(11..<13), let mi = number(14..<16), let s = number(17..<19) else {
            return .failure(StudyInputError("DateTimeOriginal '\(date)' is not EXIF's YYYY:MM:DD HH:MM:SS"))
        }
        var second = Double(s)
        if let sub = subSeconds?.trimmingCharacters(in: .whitespaces), !sub.isEmpty {
            guard sub.allSatisfy({ $0.isASCII && $0.isNumber }), let f = Double("0." + sub) else {
                return .failure(StudyInputError("SubSecTimeOriginal '\(sub)' is not digits"))
            }
            second += f
        }
        let minutes: Int
        if let offset, !offset.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let m = parseOffset(offset.trimmingCharacters(in: .whitespaces)) else {
                return .failure(StudyInputError("OffsetTimeOriginal '\(offset)' is not ±HH:MM"))
            }
            minutes = m
        } else if let fallbackOffset {
            minutes = fallbackOffset
        } else {
            return .failure(StudyInputError("the capture time \(date) has no UTC offset (OffsetTimeOriginal): give the camera clock's zone with --utc-offset"))
        }
        return make(y, mo, d, h, mi, second, minutes, text: date)
    }

    /// "Z", "±HH:MM", "±HHMM" or "±HH" as minutes east of UTC; nil otherwise.
    public static func parseOffset(_ text: String) -> Int? {
        if text == "Z" || text == "z" { return 0 }
        let c = Array(text)
        guard let sign = c.first, sign == "+" || sign == "-" || sign == "−" else { return nil }
        let digits = c.dropFirst().filter { $0 != ":" }
        guard [2, 4].contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              c.count - 1 - digits.count <= 1 else { return nil }
        let h = Int(String(digits.prefix(2)))!, m = digits.count == 4 ? Int(String(digits.suffix(2)))! : 0
        guard h <= 14, m < 60 else { return nil }
        return (sign == "+" ? 1 : -1) * (h * 60 + m)
    }

    static func make(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Double, _ offset: Int, text: String) -> Result<UTCTime, StudyInputError> {
        let monthDays = [31, (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(mo), (1...monthDays[mo - 1]).contains(d), h < 24, mi < 60, s < 61 else {
            return .failure(StudyInputError("'\(text)' is not a valid date and time"))
        }
        return .success(UTCTime(year: y, month: mo, day: d, hour: h, minute: mi, second: s, offsetMinutes: offset))
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (negative before it).
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }

    /// The civil date of a day count from 1970-01-01.
    static func civil(daysSince1970 n: Int) -> (Int, Int, Int) {
        let z = n + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let dayOfEra = z - era * 146097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let d = dayOfYear - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
