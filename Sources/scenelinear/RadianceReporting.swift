import Foundation
import SceneLinearKit

extension RadianceLowerBounds {
    /// Prints the warning for a picture holding lower bounds (`warning(for:)`) on stderr.
    func warn(path: String) {
        guard let text = warning(for: path) else { return }
        FileHandle.standardError.write(Data("scenelinear: warning: \(text)\n".utf8))
    }
}
