import ArgumentParser
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct Manifest: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "manifest",
            abstract: "Merge and summarise batch manifests (e.g. from the shards of a cluster job).",
            discussion: """
                Reads scenelinear-manifest*.jsonl files (given, or found in the given directories), \
                keeps the latest record per input, prints a summary and, with -o, writes the merged \
                manifest (JSON Lines, sorted by input) atomically.
                """)

        @Argument(help: "Manifest files or directories holding them.")
        var paths: [String]

        @OptionGroup var outputSafety: OutputSafety

        @Option(name: .shortAndLong, help: "Write the merged manifest here.")
        var output: String?

        @OptionGroup var quietOption: QuietOption

        func run() throws {
            try reportingFailures {
                let files = try BatchConverter.manifestFiles(paths)
                let records = BatchConverter.mergeManifests(files)
                let ok = records.filter { $0.status == "ok" }.count
                let quiet = quietOption.quiet
                if !quiet { print("\(files.count) manifest(s), \(records.count) inputs: \(ok) converted, \(records.count - ok) failed") }
                for r in records where r.status != "ok" {
                    FileHandle.standardError.write(Data("failed: \(r.error ?? r.input)\n".utf8))
                }
                if let output {
                    try BatchConverter.writeManifest(records, to: output)
                    if !quiet { print("wrote \(output)") }
                }
            }
        }
    }
}
