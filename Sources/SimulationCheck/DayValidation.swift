import Foundation
import SceneLinearKit

/// A study of a simulated day checked against the day's truth (`<name>.day.jsonl`): per set,
/// E_v and DGP against the truth — inside the 95 % interval for a value, a lower bound's 95 %
/// lower end never above the truth — and a cloud set flagged. Passes when no bound is above the truth, every
/// cloud set is flagged, and each coverage over the sets measured as values is not below
/// what 95 % coverage gives with probability 0.999 (binomial).
public struct DayValidationReport: Codable, Sendable {
    public var schema = "scenelinear.validation-day/1"
    public struct SetCheck: Codable, Sendable {
        public var set: Int
        public var id: String?
        public var status: String
        public var cloud: Bool
        public var flags: [String]
        public var illuminance: Double?, illuminanceTruth: Double
        public var illuminanceKind: String?
        /// A value's interval holds the truth, or a lower bound's 95 % lower end lies at or below
        /// it; nil when not measured.
        public var illuminanceHolds: Bool?
        public var dgp: Double?, dgpTruth: Double
        public var dgpKind: String?
        public var dgpHolds: Bool?
    }
    public var sets: [SetCheck]
    /// Sets measured as values (E_v a value, DGP a value or not evaluated, no cloud), and how
    /// many of their intervals held the truth.
    public var valueSets: Int
    public var illuminanceCovered: Int, dgpCovered: Int
    /// The least count of `valueSets` that 95 % coverage reaches with probability 0.999.
    public var leastPlausible: Int
    public var lowerBounds: Int, boundsAboveTruth: Int
    public var cloudSets: Int, cloudsFlagged: Int
    public var missing: Int, failed: Int
    public var passed: Bool

    public func json() throws -> String { try ReportJSON.encode(self) }

    public var text: String {
        func pct(_ n: Int) -> String { valueSets > 0 ? String(format: "%.1f %%", 100 * Double(n) / Double(valueSets)) : "–" }
        var lines = ["\(sets.count) sets: \(valueSets) measured as values (no cloud), \(lowerBounds) lower bounds, \(cloudSets) with a cloud, \(failed) failed, \(missing) not in the study"]
        lines.append("E_v: 95 % intervals hold the truth in \(illuminanceCovered)/\(valueSets) (\(pct(illuminanceCovered)))")
        lines.append("DGP: 95 % intervals hold the truth in \(dgpCovered)/\(valueSets) (\(pct(dgpCovered))); at least \(leastPlausible) expected")
        lines.append("lower bounds above the truth: \(boundsAboveTruth) of \(lowerBounds); clouds flagged: \(cloudsFlagged) of \(cloudSets)")
        for s in sets where s.illuminanceHolds == false || s.dgpHolds == false || (s.cloud && !s.flags.contains("scene-changed")) {
            lines.append(String(format: "  set %d: E_v %@ (%@) against %.6g, DGP %@ (%@) against %.4f%@", s.set,
                                s.illuminance.map { String(format: "%.6g", $0) } ?? "–", s.illuminanceKind ?? "–",
                                s.illuminanceTruth, s.dgp.map { String(format: "%.4f", $0) } ?? "–", s.dgpKind ?? "–", s.dgpTruth,
                                s.cloud ? " (cloud, flags: \(s.flags.joined(separator: " ")))" : ""))
        }
        lines.append(passed ? "PASSED" : "FAILED")
        return lines.joined(separator: "\n")
    }
}

extension Pipeline {
    /// Checks the records of a study (`StudyRun.readRecords`) against a simulated day's truths.
    public static func validateDay(truths: [DaySetTruth], records: [StudySetRecord]) -> DayValidationReport {
        let byFirstFrame = Dictionary(records.compactMap { r in r.files.first.map { (URL(fileURLWithPath: $0).lastPathComponent, r) } },
                                      uniquingKeysWith: { a, b in a.finished >= b.finished ? a : b })
        var checks: [DayValidationReport.SetCheck] = []
        for t in truths {
            let r = t.files.first.flatMap { byFirstFrame[$0] }
            func holds(_ value: Double?, _ low: Double?, _ high: Double?, _ kind: String?, truth: Double) -> Bool? {
                guard let value, let kind else { return nil }
                switch kind {
                case ResultKind.value.rawValue: return low.map { $0 <= truth } == true && high.map { truth <= $0 } == true
                // A bound's statement is its 95 % lower end: its value carries the noise too, and
                // when the clipped part is small the noise can lift it past the truth.
                case ResultKind.lowerBound.rawValue: return (low ?? value) <= truth
                default: return nil
                }
            }
            let g = r?.glare?.dgp
            checks.append(.init(set: t.set, id: r?.id, status: r?.status ?? "missing", cloud: t.cloud, flags: r?.flags ?? [],
                                illuminance: r?.illuminance, illuminanceTruth: t.illuminance, illuminanceKind: r?.illuminanceKind,
                                illuminanceHolds: t.cloud ? nil : holds(r?.illuminance, r?.illuminanceLow95, r?.illuminanceHigh95, r?.illuminanceKind, truth: t.illuminance),
                                dgp: g?.value, dgpTruth: t.dgp, dgpKind: g?.kind.rawValue,
                                dgpHolds: t.cloud ? nil : holds(g?.value, g?.low95, g?.high95, g?.kind.rawValue, truth: t.dgp)))
        }
        let values = checks.filter { !$0.cloud && $0.illuminanceKind == ResultKind.value.rawValue && ($0.dgpKind == nil || $0.dgpKind == ResultKind.value.rawValue) }
        let bounds = checks.filter { !$0.cloud && ($0.illuminanceKind == ResultKind.lowerBound.rawValue || $0.dgpKind == ResultKind.lowerBound.rawValue) }
        let above = bounds.filter { $0.illuminanceHolds == false || $0.dgpHolds == false }.count
        let clouds = checks.filter(\.cloud)
        let flagged = clouds.filter { $0.flags.contains("scene-changed") }.count
        let least = leastCount(values.count, coverage: 0.95, probability: 0.001)
        let eCovered = values.filter { $0.illuminanceHolds == true }.count, dCovered = values.filter { $0.dgpHolds == true }.count
        return DayValidationReport(sets: checks, valueSets: values.count, illuminanceCovered: eCovered, dgpCovered: dCovered, leastPlausible: least,
                                   lowerBounds: bounds.count, boundsAboveTruth: above, cloudSets: clouds.count, cloudsFlagged: flagged,
                                   missing: checks.filter { $0.status == "missing" }.count, failed: checks.filter { $0.status == "failed" }.count,
                                   passed: above == 0 && flagged == clouds.count && eCovered >= least && dCovered >= least)
    }

    /// The largest k with P(X < k) ≤ p for X ~ Binomial(n, coverage).
    static func leastCount(_ n: Int, coverage q: Double, probability p: Double) -> Int {
        guard n > 0 else { return 0 }
        var cumulative = 0.0, k = 0
        while k <= n {
            let term = exp(lgamma(Double(n + 1)) - lgamma(Double(k + 1)) - lgamma(Double(n - k + 1)) + Double(k) * log(q) + Double(n - k) * log1p(-q))
            if cumulative + term > p { return k }
            cumulative += term
            k += 1
        }
        return n
    }

    /// The truths of `<name>.day.jsonl`.
    public static func readDay(_ path: String) throws -> [DaySetTruth] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw DayTruthError(path: path, reason: "cannot read it as text (a .day.jsonl written by simulate --day)", category: .inputUnreadable)
        }
        return try text.split(separator: "\n").enumerated().map { k, line in
            do { return try JSONDecoder().decode(DaySetTruth.self, from: Data(line.utf8)) } catch {
                throw DayTruthError(path: path, reason: "line \(k + 1) is not a set's truth (\(error))", category: .corruptData)
            }
        }
    }
}

/// A day's truth file that cannot be used.
public struct DayTruthError: SceneLinearFailure, Equatable {
    public let path: String, reason: String
    public var file: String? { path }
    public let category: FailureCategory
    public var description: String { "\(path): \(reason)" }
}
