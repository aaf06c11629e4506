import ArgumentParser
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(
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

        @Flag(help: "Print JSON instead of text.")
        var json = false

        @Flag(help: "Also list every tag of every IFD.")
        var tags = false

        @Flag(help: "Decode the raw image and compare it with the digest the file records (exit code 13 on a mismatch).")
        var verifyDigest = false

        @Flag(name: .shortAndLong, help: "Accepted by every command; info has no progress or summary lines to leave out.")
        var quiet = false

        @Option(name: .customLong("max-pixels"), help: ArgumentHelp("With --verify-digest: refuse raw images larger than this many pixels, as convert does (suffix K, M or G; default 1073741824).", valueName: "n"))
        var maxPixels: String?

        @Option(name: .customLong("max-memory"), help: ArgumentHelp("With --verify-digest: refuse files whose decode would need more memory than this, as convert does; also the most read from standard input, 1 GiB without it (suffix K, M, G for KiB, MiB, GiB; default three quarters of the allocation's memory). Exit code 17.", valueName: "bytes"))
        var maxMemory: String?

        func validate() throws {
            if let maxPixels { _ = try LimitOptions.parse(maxPixels, base: 1000, what: "--max-pixels") }
            if let maxMemory { _ = try LimitOptions.parse(maxMemory, base: 1024, what: "--max-memory") }
        }

        func developOptions() throws -> DevelopOptions {
            var options = DevelopOptions()
            if let maxPixels { options.limits.maxPixels = try LimitOptions.parse(maxPixels, base: 1000, what: "--max-pixels") }
            if let maxMemory { options.maxMemoryBytes = try LimitOptions.parse(maxMemory, base: 1024, what: "--max-memory") }
            return options
        }

        /// Standard input, read up to `limit` bytes.
        /// - Throws: `LimitError` past the limit.
        static func readStandardInput(limit: Int) throws -> Data {
            var data = Data()
            while true {
                let chunk = FileHandle.standardInput.readData(ofLength: 1 << 20)
                if chunk.isEmpty { return data }
                guard data.count + chunk.count <= limit else {
                    throw LimitError(path: "<stdin>", reason: "standard input is longer than the limit of \(limit) bytes (--max-memory)")
                }
                data.append(chunk)
            }
        }

        func run() throws {
            var mismatch = false
            try reportingFailures(json: json) {
                let dng: DNGFile
                if file == "-" {
                    // At most --max-memory, or 1 GiB without it (a DNG larger than that comes as a file).
                    let limit = maxMemory == nil ? min(1 << 30, Pipeline.memoryLimit(try developOptions())) : Pipeline.memoryLimit(try developOptions())
                    let data = try Self.readStandardInput(limit: limit)
                    dng = try DNGFile(file: FileBytes(data: data, path: "<stdin>"))
                } else {
                    dng = try DNGFile.open(path: file)
                }
                let digest = verifyDigest ? try Pipeline.digestState(dng, verify: true, options: try developOptions()) : nil
                if case .mismatch = digest { mismatch = true }
                let report = InfoReport(dng: dng, includeTags: tags, digest: digest)
                print(json ? try report.json() : report.text)
            }
            if mismatch { throw ExitCode(FailureCategory.corruptData.exitCode) }
        }
    }
}
