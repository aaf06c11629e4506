import Foundation
import SceneLinearKit

/// How the commands report a Radiance picture's lower bounds: the JSON entries of the
/// picture and of its mask, the text lines, and the warning on stderr.
extension RadianceLowerBounds {
    /// This value as a JSON object (for the documents built as dictionaries).
    var jsonObject: Any {
        let data = (try? JSONEncoder().encode(self)) ?? Data("{}".utf8)
        return (try? JSONSerialization.jsonObject(with: data)) ?? [String: Any]()
    }

    /// The `outputs` entries of a picture written at `path` (`format` "hdr"): the picture
    /// with its `lowerBounds`, then its mask, if written, with `maskOf`.
    func outputEntries(path: String, reportedPath: String? = nil) -> [[String: Any]] {
        var entries: [[String: Any]] = [["format": "hdr", "path": reportedPath ?? path, "lowerBounds": jsonObject]]
        if let mask { entries.append(["format": "hdr", "path": mask, "maskOf": reportedPath ?? path]) }
        return entries
    }

    /// Prints the warning for a picture holding lower bounds (`warning(for:)`) on stderr.
    func warn(path: String) {
        guard let text = warning(for: path) else { return }
        FileHandle.standardError.write(Data("scenelinear: warning: \(text)\n".utf8))
    }
}

/// The text line of a written file: "wrote x.hdr (hdr)", "wrote x.clip.hdr (lower-bound mask of x.hdr)".
func wroteLine(_ entry: [String: Any]) -> String {
    let path = entry["path"] as? String ?? "", format = entry["format"] as? String ?? ""
    if let picture = entry["maskOf"] as? String { return "wrote \(path) (lower-bound mask of \(picture))" }
    return "wrote \(path) (\(format))"
}
