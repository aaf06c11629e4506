import Foundation
import ImageCore

/// A calibration kept as a JSON file (`CameraCalibration`, `LensCalibration`): its schema
/// name, and reading, encoding and writing it the one way.
protocol CalibrationFile: Codable {
    /// "scenelinear.calibration/1", ...
    static var schemaName: String { get }
    /// What the file is, in messages ("calibration", "lens calibration").
    static var kind: String { get }
    var schema: String { get }
}

extension CalibrationFile {
    /// The file at `path` decoded and its schema checked.
    /// - Throws: `PhotometryError` naming the file: unreadable, not this kind of file, or
    ///   another schema.
    static func decode(_ path: String) throws -> Self {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PhotometryError(path: path, reason: "cannot read the \(kind) file", category: .inputUnreadable)
        }
        let value: Self
        do { value = try JSONDecoder().decode(Self.self, from: data) } catch {
            throw PhotometryError(path: path, reason: "not a \(kind) file (\(schemaName)): \(error)", category: .corruptData)
        }
        guard value.schema == schemaName else {
            throw PhotometryError(path: path, reason: "schema \(value.schema), not \(schemaName)", category: .unsupportedVersion)
        }
        return value
    }

    /// The file as pretty-printed JSON.
    func encodedJSON() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// Writes the file (its `json()`) to `path`, atomically.
    /// - Returns: what was written.
    /// - Throws: `PhotometryError` (output failure) when it cannot be written; `AtomicFile`'s errors.
    @discardableResult
    func writeJSON(to path: String) throws -> Data {
        let data = try encodedJSON()
        try AtomicFile.write(to: path) { temporary in
            do { try data.write(to: URL(fileURLWithPath: temporary)) } catch {
                throw PhotometryError(path: path, reason: "cannot write the \(Self.kind): \(error.localizedDescription)", category: .outputFailure)
            }
        }
        return data
    }
}
