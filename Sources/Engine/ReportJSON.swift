import Foundation

/// The JSON every report of the CLI prints: pretty-printed, sorted keys, unescaped slashes,
/// and infinite or NaN values as the strings "inf", "-inf", "nan".
package enum ReportJSON {
    package static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
