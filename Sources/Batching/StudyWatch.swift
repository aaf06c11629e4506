import Foundation
import ImageCore
import Measuring
import Reporting
import Studies

/// A live rig's folder watched for new bracket sets (`sequence --watch`, docs/studies.md#watching-a-folder):
/// each cycle reads the frames whose files have stayed unchanged for `settle` seconds, groups
/// them, and measures the complete sets not yet recorded. A set is complete when a later set
/// has started, or when no frame is still settling (every frame of the folder was written at
/// least `settle` seconds ago). A set recorded with the same files is not read again (the full
/// digest check of a rerun would read every frame each cycle).
public struct StudyWatch: Sendable {
    public var inputs: [String]
    public var output: String
    public var rule: GroupingRule
    public var fallbackOffset: Int?
    public var settle: Double
    public var options: StudyOptions
    /// Frames already read, by path, with their files' modification times: a cycle reads
    /// again only what is new or changed.
    private var known: [String: (changed: Date, frame: SequenceFrame)] = [:]

    public init(inputs: [String], output: String, rule: GroupingRule, fallbackOffset: Int?, settle: Double, options: StudyOptions) {
        self.inputs = inputs
        self.output = output
        self.rule = rule
        self.fallbackOffset = fallbackOffset
        self.settle = settle
        self.options = options
    }

    /// What one cycle saw and did.
    public struct Cycle: Sendable {
        public var grouping: BracketGrouping
        /// Frames still being written (changed less than `settle` seconds ago).
        public var settling: [String] = []
        /// Settled frames that cannot be read as DNGs, with the reason.
        public var unreadable: [BracketGrouping.Left] = []
        /// Sets found but not complete yet.
        public var waiting = 0
        public var summary: StudySummary?
    }

    /// One cycle at `now`: reads, groups and measures what is complete.
    public mutating func cycle(now: Date = Date()) throws -> Cycle {
        let files = (try? AnalysisInput.expand(inputs))?.filter { URL(fileURLWithPath: $0).pathExtension.lowercased() == "dng" } ?? []
        var frames: [SequenceFrame] = [], settling: [String] = [], unreadable: [BracketGrouping.Left] = []
        for file in files {
            let changed = (try? FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date) ?? now
            if now.timeIntervalSince(changed) < settle {
                settling.append(file)
                continue
            }
            if let seen = known[file], seen.changed == changed {
                frames.append(seen.frame)
                continue
            }
            do {
                let read = try SequenceFrames.read([file], fallbackOffset: fallbackOffset)
                frames += read
                if let frame = read.first { known[file] = (changed, frame) }
            } catch {
                unreadable.append(BracketGrouping.Left(file: file, reason: (error as? any SceneLinearFailure)?.description ?? "\(error)"))
            }
        }
        let grouping = BracketGrouping(frames: frames, rule: rule)
        let complete = grouping.sets.enumerated().filter { k, _ in settling.isEmpty || k + 1 < grouping.sets.count }.map(\.element)
        // A set recorded with the same files (measured, or failed: a rerun without --watch
        // tries those again) is not read again.
        let recorded = StudyRun.readRecords(in: output)
        var due = grouping
        due.sets = complete.filter { set in recorded[set.id]?.files != set.files }
        var cycle = Cycle(grouping: grouping, settling: settling, unreadable: unreadable)
        cycle.waiting = grouping.sets.count - complete.count
        if !due.sets.isEmpty {
            cycle.summary = try StudyRun(options: options).run(due, frames: frames, into: output)
        }
        return cycle
    }
}
