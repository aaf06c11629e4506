import ArgumentParser
import Foundation
import SceneLinearKit

extension SceneLinearCommand {
    struct Sequence: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Group a study's DNG frames into bracket sets by capture time and exposure pattern.",
            discussion: """
                Reads each DNG's capture time (DateTimeOriginal with SubSecTimeOriginal, in UTC by \
                OffsetTimeOriginal or --utc-offset), exposure, aperture, body, lens and size, sorts \
                the frames by time and starts a new set when the pause from the end of one exposure \
                (its start + exposure time) to the next start exceeds --gap, when the body, lens, \
                size or aperture changes, or when an exposure repeats one already in the set (the \
                pattern starting again). A set of another size than --frames-per-set (default: the \
                most common size found) is not a set: its frames are listed as unassigned with the \
                reason, as are frames without a capture time or exposure time. Nothing is dropped \
                silently and no frame is merged into a wrong set.

                Prints the sets (id, start and end in UTC, files, each frame's exposure in stops \
                below the longest) and the unassigned frames; --json prints schema \
                "scenelinear.sequence/1"; -o writes that document to a file (the study's record \
                of its grouping and its rule). Exit code 0 also when frames are unassigned: read \
                the report. docs/studies.md#bracket-sets.
                """)

        @Argument(help: "DNG files or folders of them.")
        var inputs: [String]

        @Option(help: ArgumentHelp("The longest pause within a set, seconds, from the end of one exposure to the start of the next.", valueName: "s"))
        var gap: Double = 2

        @Option(help: ArgumentHelp("The frames of a complete set (default: the most common set size).", valueName: "N"))
        var framesPerSet: Int?

        @Option(parsing: .unconditional, help: ArgumentHelp("The camera clock's zone for files without OffsetTimeOriginal: ±HH:MM east of UTC.", valueName: "±HH:MM"))
        var utcOffset: String?

        @Option(name: .shortAndLong, help: ArgumentHelp("Write the grouping (schema scenelinear.sequence/1) to this file.", valueName: "grouping.json"))
        var output: String?

        @OptionGroup var style: OutputStyleOptions
        @OptionGroup var outputSafety: OutputSafety

        func validate() throws {
            if !(gap >= 0 && gap <= 86400) { throw ValidationError("--gap must lie between 0 and 86400 seconds") }
            if let framesPerSet, framesPerSet < 2 || framesPerSet > 1000 { throw ValidationError("--frames-per-set must lie between 2 and 1000") }
            if let utcOffset, UTCTime.parseOffset(utcOffset) == nil { throw ValidationError("--utc-offset '\(utcOffset)' is not ±HH:MM") }
        }

        func run() throws {
            try reportingFailures(json: style.json) {
                let frames = try SequenceFrames.read(inputs, fallbackOffset: utcOffset.flatMap(UTCTime.parseOffset))
                let report = SequenceReport(BracketGrouping(frames: frames, rule: GroupingRule(gap: gap, framesPerSet: framesPerSet)))
                if let output { try report.write(to: output) }
                if style.json {
                    print(try report.json())
                } else if !style.quiet || !report.grouping.sets.isEmpty {
                    print(report.text)
                }
            }
        }
    }
}
