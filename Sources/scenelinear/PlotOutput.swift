import Foundation
import SceneLinearKit

/// Writes the charts of the analysis commands.
enum PlotOutput {
    /// One histogram chart per file and region: `path` itself when there is one, else
    /// `<stem>-1.<ext>`, `<stem>-2.<ext>`, … in the order of the table, each named on stderr
    /// unless `quiet`.
    static func writeHistograms(_ results: [FileAnalysis], to path: String, quiet: Bool) throws {
        _ = try AnalysisCharts.format(of: path)
        let plots = results.filter { $0.error == nil }.flatMap { file in
            file.regions.compactMap { AnalysisCharts.histogram(file, region: $0) }
        }
        let url = URL(fileURLWithPath: path)
        let stem = url.deletingPathExtension().path, ext = url.pathExtension
        for (i, plot) in plots.enumerated() {
            let target = plots.count == 1 ? path : "\(stem)-\(i + 1).\(ext)"
            try AnalysisCharts.write({ PlotRenderer.render(plot, format: $0) }, to: target)
            if !quiet { FileHandle.standardError.write(Data("wrote \(target) (\(plot.title))\n".utf8)) }
        }
    }
}
