import ArgumentParser
import DNGWriter
import Foundation
import SceneLinearKit
import SimulationCheck

extension SceneLinearCommand {
    struct TestChartCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "testchart",
            abstract: "Write a synthetic ProRAW-style DNG whose correct decode is known exactly.",
            discussion: """
                The chart has a 16-stop grey ramp (its brightest step beyond white, so clipped), \
                18 colour patches and a 10-stop gradient, stored as 3 × 12-bit codes through a \
                companding LinearizationTable (exact below its knee, geometric above), black 800, white 64800, in \
                256×256 lossless-JPEG tiles (ProRAW-like; libtiff writes only multiples of 16). \
                With --expected the exact \
                decode of the stored codes, computed independently in double precision, is \
                written as a half-float HDF5 file in the same layout as `convert` writes.
                """)

        @Option(name: .shortAndLong, help: "The DNG to write.")
        var output: String

        @OptionGroup var outputSafety: OutputSafety

        @Option(help: "Also write the exact expected scene-linear image here (HDF5).")
        var expected: String?

        @Option(help: "Width in pixels.")
        var width = 1008

        @Option(help: "Height in pixels.")
        var height = 756

        @Flag(help: "Store the samples uncompressed instead of lossless JPEG.")
        var uncompressed = false

        @OptionGroup var quietOption: QuietOption

        func validate() throws {
            guard width >= 64, height >= 48, width <= 16384, height <= 16384 else {
                throw ValidationError("the chart must be between 64×48 and 16384×16384 pixels")
            }
        }

        func run() throws {
            try reportingFailures {
                let chart = try TestChart.make(width: width, height: height,
                                               compression: uncompressed ? .uncompressed : .losslessJPEG(predictor: 1))
                try DNGWriter.write(chart.dng, to: output)
                let quiet = quietOption.quiet
                if !quiet { print("wrote \(output) (\(width)×\(height), 3 × 12-bit LinearRaw, \(uncompressed ? "uncompressed" : "lossless JPEG"))") }
                guard let expected else { return }
                try chart.writeExpected(of: output, to: expected)
                if !quiet { print("wrote \(expected) (exact expected decode)") }
            }
        }
    }
}
