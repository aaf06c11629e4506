import Foundation
import SceneLinearKit

/// Writes plots for the analysis commands (placeholder until the plotting module lands).
enum PlotOutput {
    static func writeHistograms(_ results: [FileAnalysis], to path: String) throws {
        throw OutputError(path: path, reason: "plots are not available in this build")
    }
}
