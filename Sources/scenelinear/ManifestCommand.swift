import ArgumentParser
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct Manifest: ParsableCommand {
        static let configuration = CommandConfiguration(
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

        @Flag(name: .shortAndLong, help: "Print nothing but errors: no summary.")
        var quiet = false

        func run() throws {
            try reportingFailures {
                var files: [String] = []
                for path in paths {
                    var isDirectory: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                        throw ContainerError.fileNotFound(path: path)
                    }
                    if isDirectory.boolValue {
                        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                        files += names.filter { $0.hasPrefix("scenelinear-manifest") && $0.hasSuffix(".jsonl") }.sorted()
                            .map { (path.hasSuffix("/") ? path : path + "/") + $0 }
                    } else {
                        if let problem = RegularFile.problem(path) { throw ContainerError.unreadable(path: path, reason: problem) }
                        files.append(path)
                    }
                }
                let records = BatchConverter.mergeManifests(files)
                let ok = records.filter { $0.status == "ok" }.count
                if !quiet { print("\(files.count) manifest(s), \(records.count) inputs: \(ok) converted, \(records.count - ok) failed") }
                for r in records where r.status != "ok" {
                    FileHandle.standardError.write(Data("failed: \(r.error ?? r.input)\n".utf8))
                }
                if let output {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                    var data = Data()
                    for r in records {
                        data.append(try encoder.encode(r))
                        data.append(0x0A)
                    }
                    try AtomicFile.write(to: output) { temporary in
                        guard FileManager.default.createFile(atPath: temporary, contents: data) else {
                            throw OutputError(path: output, reason: "cannot create the file")
                        }
                    }
                    if !quiet { print("wrote \(output)") }
                }
            }
        }
    }
}
