import Foundation
import Testing
import TestSupport

/// The options of the command line as `scenelinear <command> --help` lists them: every option
/// that several commands take comes from one option group, so each appears with one help text
/// (and one default) wherever it appears, and no command lost or gained one.
@Suite struct CommandLineOptionsTests {
    /// The subcommands, in the order the root help lists them.
    static let commands = ["info", "convert", "merge", "illuminance", "glare", "stats", "histogram", "ratio", "report", "calibrate",
                           "calibrate-lens", "simulate", "validate", "manifest", "sequence", "sun", "testchart"]

    static let analysis: Set<String> = ["stats", "histogram", "ratio", "report"]
    /// The commands that decode DNGs within limits (`LimitOptions`).
    static let decoding: Set<String> = analysis.union(["convert", "merge", "illuminance", "glare", "calibrate", "sequence"])
    /// Those and calibrate-lens (which develops with its own demosaicing: superpixels).
    static let limited: Set<String> = decoding.union(["calibrate-lens"])
    /// The commands with absolute units (`UnitOptions`).
    static let units: Set<String> = analysis.union(["convert", "merge", "illuminance", "glare", "sequence"])
    static let fisheye: Set<String> = analysis.union(["merge", "illuminance", "glare", "calibrate", "sequence"])

    /// Each shared option and the commands that list it.
    static let shared: [String: Set<String>] = [
        "--quiet": Set(commands),
        "--json": ["info", "convert", "merge", "illuminance", "glare", "stats", "histogram", "ratio", "calibrate", "calibrate-lens", "validate", "sequence", "sun"],
        "--timings": ["convert", "merge"],
        "--overwrite": Set(commands).subtracting(["info", "sun", "glare"]),
        "--demosaic": decoding,
        "--exposure": analysis.union(["convert", "merge"]),
        "--source": analysis.union(["convert"]),
        "--color": ["convert", "merge"],
        "--crop": ["convert", "merge"],
        "--no-orientation": ["convert", "merge"],
        "--units": units,
        "--calibration": units,
        "--allow-other-camera": units,
        "--settings-uncertainty": units,
        "--filter-factor": units,
        "--spectral-uncertainty": units,
        "--light-source": units,
        "--lens": units.union(["calibrate"]),
        "--allow-other-lens": units.union(["calibrate"]),
        "--projection": fisheye,
        "--fov": fisheye,
        "--circle": fisheye,
        "--stray-light": analysis.union(["illuminance"]),
        "--stray-light-angle": analysis.union(["illuminance"]),
        "--bright-source": analysis.union(["illuminance"]),
        "--max-pixels": limited.union(["info"]),
        "--max-memory": limited.union(["info"]),
        "--ignore-digest": limited,
        "--skip-digest": limited,
        "--threads": limited,
        "--region": analysis.union(["convert", "calibrate", "sequence"]),
        "--ratio": ["ratio", "report"],
        "--quantity": ["ratio", "report"],
        "--statistic": ["ratio", "report"],
        "--bins-per-stop": ["histogram", "report"],
        "--csv": ["stats", "histogram", "ratio"],
        "--ev-map": ["stats", "histogram", "ratio"],
        "--utc-offset": ["sequence", "sun"],
        "--glare-threshold": ["glare", "sequence"],
        "--unchecked-ratios": ["merge", "sequence"],
        "--peak-limit": ["glare", "sequence"],
        "--merge-angle": ["glare", "sequence"],
        "--glare-draws": ["glare", "sequence"],
        "--glare-seed": ["glare", "sequence"],
    ]

    /// Options of one command that share a name with a shared option but mean something of
    /// their own there.
    static let ownMeaning: [String: Set<String>] = ["validate": ["--ratio", "--calibration", "--lens"], "calibrate": ["--light-source"]]

    /// Options several commands take with a meaning (or default) of each command's own.
    static let perCommand: Set<String> = ["--output", "--format", "--plot", "--percentiles", "--exr-type", "--exr-layout",
                                          "--hdf5-type", "--help", "--version", "--frame-filter", "--site", "--sets", "--shard", "--no-resume"]

    /// The help of `arguments`, wrapped at a fixed width.
    static func help(_ arguments: [String]) throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "100"
        let r = try TestData.run(try CLI.binary, arguments, environment: environment)
        #expect(r.status == 0, "\(arguments): \(r.stderr)")
        return r.stdout
    }

    /// The options of a help text: each long name with its help (continuation lines joined,
    /// white space collapsed), from every section that lists options. An option's line starts
    /// with its names and value placeholders (`-q, --quiet`, `--fov <fov>`,
    /// `--exr-clip-mask/--no-exr-clip-mask`); its help follows on the line or the next lines.
    static func options(_ help: String) -> [String: String] {
        var out: [String: String] = [:]
        var current: [String] = [], text: [String] = []
        func finish() {
            let joined = text.joined(separator: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for name in current { out[name] = joined }
            current = []
            text = []
        }
        for line in help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("  -") {
                finish()
                let words = line.split(separator: " ").map(String.init)
                let label = words.prefix { $0.hasPrefix("-") || $0.hasPrefix("<") }
                current = label.flatMap { $0.split(separator: "/").map(String.init) }
                    .map { $0.hasSuffix(",") ? String($0.dropLast()) : $0 }.filter { $0.hasPrefix("--") }
                text = Array(words.dropFirst(label.count))
            } else if line.hasPrefix("    "), !current.isEmpty {
                text.append(line)
            } else {
                finish()
            }
        }
        finish()
        return out
    }

    @Test(.enabled(if: (try? CLI.binary) != nil || TestRequirement.toolsRequired))
    func sharedOptionsHaveOneHelpText() throws {
        // The root help lists exactly these commands.
        let root = try Self.help(["--help"])
        let listed = root.split(separator: "\n", omittingEmptySubsequences: false).drop { !$0.hasPrefix("SUBCOMMANDS:") }.dropFirst()
            .prefix { !$0.isEmpty }
            .compactMap { $0.hasPrefix("  ") && !$0.hasPrefix("   ") ? $0.split(separator: " ").first.map(String.init) : nil }
        #expect(listed == Self.commands)

        var byCommand: [String: [String: String]] = [:]
        for command in Self.commands {
            let options = Self.options(try Self.help([command, "--help"]))
            #expect(options["--help"] == "Show help information.", "\(command): the help was not parsed")
            byCommand[command] = options
        }
        for (option, expected) in Self.shared.sorted(by: { $0.key < $1.key }) {
            let having = Set(byCommand.filter { command, options in
                options[option] != nil && !(Self.ownMeaning[command]?.contains(option) ?? false)
            }.keys)
            #expect(having == expected, "\(option) is listed by \(having.sorted()), expected \(expected.sorted())")
            let texts = Dictionary(grouping: having.sorted(), by: { byCommand[$0]?[option] ?? "" })
            #expect(texts.count == 1, "\(option) has \(texts.count) help texts: \(texts.map { "\($0.value.joined(separator: ", ")): \($0.key)" })")
            #expect(texts.keys.allSatisfy { !$0.isEmpty }, "\(option) has no help text")
        }
        // Every other option several commands list means something of each command's own.
        var listers: [String: [String]] = [:]
        for (command, options) in byCommand { for name in options.keys { listers[name, default: []].append(command) } }
        for (name, commands) in listers where commands.count > 1 && Self.shared[name] == nil {
            #expect(Self.perCommand.contains(name), "\(name) is declared by \(commands.sorted()) separately: share one option group")
        }
    }

    /// The parser of the test against a known layout: a short and a long name, an option with
    /// a value name too long for the first column, an inversion, wrapped continuation lines
    /// and a titled section.
    @Test func helpParsing() {
        let help = """
            OPTIONS:
              -q, --quiet             Print only the result
                                      and errors.
              --calibration <file.json>
                                      A camera calibration.
              --statistic <statistic> Statistic: mean or median. (values: mean, median; default:
                                      mean)
              --exr-clip-mask/--no-exr-clip-mask
                                      Carry the clip mask (default:
                                      on).

            FISHEYE BRACKET:
              --fov <fov>             Field of view.
              -h, --help              Show help information.

            """
        let options = Self.options(help)
        #expect(options["--quiet"] == "Print only the result and errors.")
        #expect(options["--calibration"] == "A camera calibration.")
        #expect(options["--exr-clip-mask"] == "Carry the clip mask (default: on).")
        #expect(options["--no-exr-clip-mask"] == "Carry the clip mask (default: on).")
        #expect(options["--fov"] == "Field of view.")
        #expect(options["--help"] == "Show help information.")
        #expect(options["--statistic"] == "Statistic: mean or median. (values: mean, median; default: mean)")
        #expect(options.count == 7)
    }
}
