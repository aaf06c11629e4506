import ArgumentParser
import Foundation
import SceneLinearKit

@main
struct SceneLinearCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenelinear",
        abstract: "Decode DNG raw photos (Apple ProRAW first) into scene-referred linear light.",
        discussion: """
            Output values are DNG linear reference values (1.0 = the sensor white level after \
            black subtraction) in extended linear Rec.2020 (D65) by default, or ACEScg, \
            ACES2065-1, linear Rec.709, CIE XYZ (D65) or camera RGB: negatives and values above 1 \
            are kept; only samples at or above the sensor's white level are set to white and \
            flagged in a clip mask. Exposure scaling and the colour space are options, and \
            every output file records what was applied; --units luminance or radiance gives \
            absolute values (cd/m², W·sr⁻¹·m⁻²) from a calibration (`calibrate`) or the exposure \
            metadata, with the scale's uncertainty. `merge` combines raw brackets noise-optimally \
            (per-pixel standard deviations, lower bounds where every frame clipped); `illuminance` \
            integrates a fisheye image into lux. See docs/ for the maths and file formats.

            Every command takes -q (no progress bar or summary lines); --json documents carry a \
            "schema" field (docs/cli.md, docs/schemas/); errors go to stderr.

            Exit codes: 0 success; 1 internal error; 10 input missing or unreadable; 11 not a \
            TIFF/DNG file; 12 truncated file; 13 corrupt data; 14 unsupported feature; \
            15 unsupported DNG version; 16 output cannot be written; 17 over a resource limit \
            (--max-pixels, --max-memory); 18 a --calibration of another camera body; 19 frames that cannot be \
            merged (another camera or size, one frame, a repeated frame, frames of different scenes, no common valid pixels); 20 validate: the capture does not match its truth; \
            64 usage error (a bad argument, a region outside or partly outside the image, an output path that is an input or an existing file \
            not written by scenelinear without --overwrite, a job array that cannot be mapped to shards); 75 temporary failure, \
            try again (another process removed this one's temporary file); 129, 130, 141, 143 stopped by SIGHUP, SIGINT, \
            SIGPIPE, SIGTERM (the process's temporary files removed first).
            """,
        version: SceneLinearVersion.version,
        subcommands: [Info.self, Convert.self, Merge.self, Illuminance.self, Glare.self, Stats.self, HistogramCommand.self, Ratio.self, Report.self, Calibrate.self, CalibrateLens.self, Simulate.self,
                      Validate.self, Manifest.self, Sequence.self, Sun.self,
                      TestChartCommand.self])

    /// Installs the signal handlers (a temporary is removed on SIGTERM, SIGINT, SIGHUP and
    /// SIGPIPE, and the exit code is 128 + the signal) and the overwrite rule of the command,
    /// then runs it.
    static func main() {
        ProcessGuard.install()
        do {
            var command = try parseAsRoot()
            if let writer = command as? any WritesFiles {
                OverwritePolicy.current = OverwritePolicy(overwrite: writer.outputSafety.overwrite, inputs: writer.inputPaths)
            }
            try command.run()
        } catch {
            finishStandardOutput()
            exit(withError: error)
        }
        finishStandardOutput()
    }
}

/// Flushes standard output; when what was printed could not be written (a full disk, a
/// closed pipe with SIGPIPE ignored), says so and exits 16 instead of succeeding with the
/// output lost.
func finishStandardOutput() {
    if let reason = ProcessGuard.flushStandardOutput() {
        FileHandle.standardError.write(Data("scenelinear: error: cannot write standard output: \(reason)\n".utf8))
        exit(FailureCategory.outputFailure.exitCode)
    }
}

/// A failure as `--json` reports it on stderr.
struct FailureDocument: Encodable {
    /// The category's name (`FailureCategory.name`).
    var error: String
    var message: String
    var exitCode: Int
    /// The file the failure is about, when there is one.
    var file: String?
    /// The operating system's error number (errno) when a system call failed.
    var systemError: Int32?

    init(_ failure: any SceneLinearFailure) {
        error = failure.category.name
        message = failure.description
        exitCode = Int(failure.category.exitCode)
        file = failure.file
        systemError = failure.systemError
    }

    /// One line of JSON.
    var line: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return ((try? encoder.encode(self)) ?? Data()) + Data("\n".utf8)
    }
}

/// Runs `body`; a `SceneLinearFailure` is printed (as text, or JSON with `json`) and turned
/// into its exit code, so scripts can tell what went wrong.
func reportingFailures(json: Bool = false, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let failure as any SceneLinearFailure {
        if json {
            FileHandle.standardError.write(FailureDocument(failure).line)
        } else {
            FileHandle.standardError.write(Data("scenelinear: error: \(failure.description)\n".utf8))
        }
        throw ExitCode(failure.category.exitCode)
    }
}
