import ArgumentParser
import SceneLinearKit

/// `--overwrite`, shared by every command that writes files.
struct OutputSafety: ParsableArguments {
    @Flag(help: "Replace what exists at an output path even when scenelinear did not write it (another program's file, a read-only file, a symbolic link: the link is replaced, its target left alone). Without it such a path is refused (exit 64); a file scenelinear wrote is replaced either way. An output path that is one of the inputs is always refused.")
    var overwrite = false
}

/// A command that writes files: its inputs are never overwritten, and what else exists at
/// its output paths is replaced by the rule of `OverwritePolicy` (docs/robustness.md).
protocol WritesFiles {
    var outputSafety: OutputSafety { get }
    /// Every file the command reads (inputs, calibrations, scene files).
    var inputPaths: [String] { get }
}

extension SceneLinearCommand.Convert: WritesFiles {
    var inputPaths: [String] { files + ((try? listedFiles()) ?? []) + [filesFrom, unitOptions.calibration].compactMap { $0 } + unitOptions.lens }
}
extension SceneLinearCommand.Merge: WritesFiles {
    var inputPaths: [String] { frames + [unitOptions.calibration].compactMap { $0 } + unitOptions.lens }
}
extension SceneLinearCommand.Illuminance: WritesFiles {
    var inputPaths: [String] { files + [unitOptions.calibration].compactMap { $0 } + unitOptions.lens }
}
extension SceneLinearCommand.Calibrate: WritesFiles {
    var inputPaths: [String] { photos + lensOptions.lens }
}
extension SceneLinearCommand.CalibrateLens: WritesFiles {
    var inputPaths: [String] { flats }
}
extension SceneLinearCommand.Manifest: WritesFiles {
    var inputPaths: [String] { paths }
}
extension SceneLinearCommand.Simulate: WritesFiles {
    var inputPaths: [String] { [scene, camera].compactMap { $0 } }
}
extension SceneLinearCommand.Validate: WritesFiles {
    var inputPaths: [String] { files + [calibration].compactMap { $0 } + lensFiles }
}
extension SceneLinearCommand.TestChartCommand: WritesFiles {
    var inputPaths: [String] { [] }
}
extension SceneLinearCommand.Stats: WritesFiles {
    var outputSafety: OutputSafety { options.source.outputSafety }
    var inputPaths: [String] { options.source.inputs + [options.source.unitOptions.calibration].compactMap { $0 } }
}
extension SceneLinearCommand.HistogramCommand: WritesFiles {
    var outputSafety: OutputSafety { options.source.outputSafety }
    var inputPaths: [String] { options.source.inputs + [options.source.unitOptions.calibration].compactMap { $0 } }
}
extension SceneLinearCommand.Ratio: WritesFiles {
    var outputSafety: OutputSafety { options.source.outputSafety }
    var inputPaths: [String] { options.source.inputs + [options.source.unitOptions.calibration].compactMap { $0 } }
}
extension SceneLinearCommand.Report: WritesFiles {
    var outputSafety: OutputSafety { source.outputSafety }
    var inputPaths: [String] { source.inputs + [source.unitOptions.calibration].compactMap { $0 } }
}
extension SceneLinearCommand.Sequence: WritesFiles {
    var inputPaths: [String] { inputs + [sets, unitOptions.calibration].compactMap { $0 } + unitOptions.lens }
}
