import Foundation
import Engine
import Merging
import Measuring
import Reporting

/// The document `merge --json` prints (schema scenelinear.merge/1).
package struct MergeDocument: Codable {
    var schema = "scenelinear.merge/1"
    var output: String
    var format: String
    var units: String
    var report: MergeReport
    /// With --projection: the fisheye lens of the merged image.
    var lens: FisheyeLens?
    /// A .hdr's lower bounds (and its mask).
    var lowerBounds: RadianceLowerBounds?

    package init(output: String, format: String, units: String, report: MergeReport, lens: FisheyeLens?, lowerBounds: RadianceLowerBounds?) {
        self.output = output
        self.format = format
        self.units = units
        self.report = report
        self.lens = lens
        self.lowerBounds = lowerBounds
    }

    /// The document as `merge --json` prints it.
    package func json() throws -> String { try ReportJSON.encode(self) }
}

extension MergeReport {
    /// The text `merge` prints: the frames, their exposures and how each ratio was found, the
    /// lower bounds, the frame counts and the standard-deviation layer.
    package func summary(unit: ExposureMode) -> String {
        let r = self
        var lines = ["merged \(r.frames.count) frames, \(r.width)×\(r.height), reference frame \(r.reference + 1) (\(URL(fileURLWithPath: r.frames[r.reference].file).lastPathComponent))"]
        for (i, f) in r.frames.enumerated() {
            let name = URL(fileURLWithPath: f.file).lastPathComponent
            var line = String(format: "  %d %@  %.6g s f/%.3g ISO %.0f  exposure %.6g", i + 1, name, f.exposureTime, f.fNumber, f.iso, f.exposure)
            if let t = f.filterTransmittance {
                line += String(format: "  filter T = %.6g ± %.2g %%", t, 100 * (f.filterRelativeUncertainty ?? 0))
            }
            if let o = f.offset, i != r.reference { line += "  shift (\(o[0]), \(o[1])) px" }
            if f.exposureSource == "metadata, unchecked" {
                line += " (metadata, NOT CHECKED: too few pixels valid in it and its neighbour)"
            } else if let m = f.measuredExposure, let u = f.measuredLogUncertainty {
                line += String(format: " (metadata %.6g, measured %.6g ± %.2g %%, %@)", f.nominalExposure, m, 100 * u,
                               f.exposureSource == "measured" ? "MEASURED USED: the metadata is off"
                                   : f.exposureSource == "measured, filter" ? "agree; the measured ratio used, better known than the filter's" : "agree")
            } else {
                line += " (reference)"
            }
            lines.append(line)
        }
        lines.append("  lower bounds (clipped in every frame): \(r.lowerBoundPixels) pixels")
        lines.append("  pixels by frames used: " + r.framesHistogram.enumerated().map { "\($0.offset): \($0.element)" }.joined(separator: ", "))
        lines.append("  standard deviation layer: \(r.standardDeviation)\(unit.isAbsolute ? " (noise only; the absolute scale's own uncertainty is in the file's scale_relative_uncertainty)" : "")")
        return lines.joined(separator: "\n")
    }
}
