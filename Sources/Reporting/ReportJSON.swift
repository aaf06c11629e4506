import Foundation

/// The JSON every report of the CLI prints: pretty-printed, sorted keys, unescaped slashes,
/// and infinite or NaN values as `null` (JSON has no such numbers; a string where the schema
/// says number would break its readers).
package enum ReportJSON {
    /// What the encoder writes for a non-finite value before it becomes `null`.
    private static let placeholder = "\u{1F}non-finite\u{1F}"

    package static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: placeholder, negativeInfinity: placeholder,
                                                                      nan: placeholder)
        let text = String(decoding: try encoder.encode(value), as: UTF8.self)
        return text.replacingOccurrences(of: "\"\(placeholder)\"", with: "null")
    }
}
