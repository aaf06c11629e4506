import ArgumentParser

/// `-q, --quiet`, which every command takes.
struct QuietOption: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Print only the command's result and errors: no progress bar, no summary or 'wrote …' lines, no warnings of lower bounds. The result is info's and validate's report, the tables of stats, histogram and ratio, illuminance's values, calibrate's constant, or the --json document.")
    var quiet = false
}

/// How a command prints: `-q` and `--json`.
struct OutputStyleOptions: ParsableArguments {
    @OptionGroup var quietOption: QuietOption

    @Flag(help: "Print the result as one JSON document instead of text; its \"schema\" field names the layout (docs/cli.md, docs/schemas/). A failure that stops the command is reported on stderr as a JSON object.")
    var json = false

    var quiet: Bool { quietOption.quiet }
}

/// `--timings`, of the commands that time their steps.
struct TimingsOption: ParsableArguments {
    @Flag(help: "Print the seconds each step took: convert's container, develop, hash and each export (after the summary, or in the --json document), merge's decode, align, ratios, merge, develop, layers and write (on stderr). See docs/cli.md.")
    var timings = false
}
