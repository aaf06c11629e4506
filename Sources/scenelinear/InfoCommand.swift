import ArgumentParser
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "Summarise a DNG: camera, capture, colour calibration and every image IFD.",
            discussion: """
                Lists each IFD holding image data with its role from NewSubFileType (main raw \
                image, previews, semantic masks, ...), layout and compression, and the Stage 2 \
                tags of raw images (LinearizationTable, BlackLevel, WhiteLevel, ActiveArea, \
                NoiseProfile), and for each semantic mask the layer name `convert` gives it \
                (EXR channel mask_<name>, HDF5 /masks/<name>), its MaskSubArea and how it maps onto the \
                output (the ActiveArea it covers, the output size and orientation). --json \
                prints the same as a JSON document (schema \
                "scenelinear.info/1", full LinearizationTable included); --tags adds every tag \
                of every IFD.

                The raw image digest (NewRawImageDigest or RawImageDigest, the MD5 of the raw \
                data that DNG writers record) is reported as absent or present; with \
                --verify-digest the raw image is decoded and the digest compared: verified, or \
                mismatch (then the exit code is 13 after the report).
                """)

        @Argument(help: "The DNG file, or - to read it from standard input.")
        var file: String

        @OptionGroup var style: OutputStyleOptions

        @Flag(help: "Also list every tag of every IFD.")
        var tags = false

        @Flag(help: "Decode the raw image and compare it with the digest the file records (exit code 13 on a mismatch).")
        var verifyDigest = false

        @OptionGroup var limits: ResourceLimitOptions

        func run() throws {
            var mismatch = false
            try reportingFailures(json: style.json) {
                var options = DevelopOptions()
                limits.apply(to: &options)
                // Standard input: at most --max-memory, or 1 GiB without it (a DNG larger than that comes as a file).
                // (Worked out only then: the allocation's cgroup files are otherwise not read.)
                let limit = file != "-" ? 0
                    : limits.maxMemory == nil ? min(1 << 30, Pipeline.memoryLimit(options)) : Pipeline.memoryLimit(options)
                let report = try InfoReport.make(path: file, includeTags: tags, verifyDigest: verifyDigest, options: options,
                                                 standardInputLimit: limit)
                mismatch = report.digestMismatch
                print(style.json ? try report.json() : report.text)
            }
            if mismatch { throw ExitCode(FailureCategory.corruptData.exitCode) }
        }
    }
}
