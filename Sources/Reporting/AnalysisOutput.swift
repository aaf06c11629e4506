import Measuring
import Engine
import Analysis
import Foundation

/// Text, JSON and CSV renderings of analysis results (one combined table for many files).
public enum AnalysisOutput {
    /// JSON with schema "scenelinear.analysis/1": `{schema, software, files: [FileAnalysis]}`.
    public static func json(_ files: [FileAnalysis]) throws -> String {
        struct Document: Encodable {
            let schema = "scenelinear.analysis/1"
            let software = SceneLinearVersion.software
            let files: [FileAnalysis]
        }
        return try ReportJSON.encode(Document(files: files))
    }

    static func number(_ v: Double?) -> String {
        guard let v, v.isFinite else { return "" }
        return String(format: "%.7g", v)
    }

    package static func csvField(_ s: String) -> String {
        s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
    }

    // MARK: statistics

    /// CSV: one row per file, region and quantity.
    public static func statisticsCSV(_ files: [FileAnalysis], percentiles: [Double]) -> String {
        var header = ["file", "region", "quantity", "pixels", "clipped_pixels", "negative_pixels", "mean", "mean_se", "median",
                      "median_se", "std", "min", "max"]
        header += percentiles.map { "p\(String(format6: $0))" }
        header += ["dr_robust_stops", "noise_floor", "dr_above_noise_stops", "units", "mean_u_rel", "mean_low95", "mean_high95"]
        header += ["mean_kind", "median_kind", "std_kind", "min_kind", "max_kind"] + percentiles.map { "p\(String(format6: $0))_kind" }
        header += ["error"]
        var rows = [header.joined(separator: ",")]
        for f in files {
            if let e = f.error {
                rows.append(([csvField(f.file)] + Array(repeating: "", count: header.count - 2) + [csvField(e)]).joined(separator: ","))
                continue
            }
            for r in f.regions {
                for q in RegionStatistics.quantities {
                    let s = r.measurement.channels[q]!
                    var row = [csvField(f.file), csvField(r.name), q, String(r.measurement.pixels), r.measurement.clippedPixels.map(String.init) ?? "",
                               String(r.measurement.negativePixels), number(s.mean), number(s.meanStandardError), number(s.median),
                               number(s.medianStandardError), number(s.standardDeviation), number(s.minimum), number(s.maximum)]
                    row += percentiles.map { p in number(s.percentiles.first { $0.percentile == p }?.value) }
                    let dr = q == "Y" ? r.dynamicRange : nil
                    row += [number(dr?.robustStops), number(dr?.noiseFloor), number(dr?.stopsAboveNoiseFloor)]
                    // Absolute units: the budget of the quantity's mean (all items combined).
                    let budget = r.budgets?.first { $0.quantity == q && $0.statistic == "mean" }
                    row += [f.unitSymbol.isEmpty ? "relative" : csvField(f.unitSymbol), number(budget?.relativeStandardUncertainty),
                            number(budget?.low95), number(budget?.high95)]
                    row += [s.kind, s.medianKind, s.standardDeviationKind, s.minimumKind, s.maximumKind].map(\.rawValue)
                    row += percentiles.map { p in s.percentiles.first { $0.percentile == p }?.kind.rawValue ?? "" }
                    row.append("")
                    rows.append(row.joined(separator: ","))
                }
            }
        }
        return rows.joined(separator: "\n")
    }

    /// A readable table.
    public static func statisticsText(_ files: [FileAnalysis], percentiles: [Double]) -> String {
        var lines: [String] = []
        for f in files {
            if let e = f.error {
                lines.append("\(f.file): error: \(e)")
                continue
            }
            lines.append("\(f.file): \(f.width)×\(f.height), \(f.colorSpace), \(f.scaleText)\(f.noiseModel ? "" : " (no NoiseProfile: no standard errors)")")
            for r in f.regions {
                let m = r.measurement
                lines.append("  region \(r.name): \(m.pixels) pixels, \(m.clippingSummary), \(m.negativePixels) with a negative channel"
                             + (r.nonFinitePixels > 0 ? "; \(r.nonFinitePixels) NaN or infinite pixels left out" : ""))
                let pcols = percentiles.map { "p" + String(format6: $0) }
                lines.append("    q         mean         ±se      median        std         min         max " + pcols.map { $0.padding(toLength: 11, withPad: " ", startingAt: 0) }.joined(separator: " "))
                for q in RegionStatistics.quantities {
                    let s = m.channels[q]!
                    var line = "    \(q)  " + cell(s.mean, s.kind) + String(format: " %11.3g ", s.meanStandardError ?? .nan)
                    line += [cell(s.median, s.medianKind), cell(s.standardDeviation, s.standardDeviationKind), cell(s.minimum, s.minimumKind),
                             cell(s.maximum, s.maximumKind)].joined(separator: " ")
                    for p in percentiles {
                        let value = s.percentiles.first { $0.percentile == p }
                        line += " " + cell(value?.value ?? .nan, value?.kind ?? .value)
                    }
                    lines.append(line)
                }
                if let legend = kindLegend(m) { lines.append("    " + legend) }
                let dr = r.dynamicRange
                var drText = "    dynamic range of Y:"
                if let s = dr.robustStops { drText += String(format: " %.2f stops (p%@ to p%@)", s, String(format6: dr.lowPercentile), String(format6: dr.highPercentile)) }
                if let s = dr.stopsAboveNoiseFloor, let f = dr.noiseFloor { drText += String(format: ", %.2f stops above the noise floor (Y = %.3g, SNR 1)", s, f) }
                if !dr.kind.isValue { drText += " — " + (dr.kind == .lowerBound ? "at least this (the high percentile is a lower bound)" : dr.kind.words) }
                lines.append(drText)
                // (Y's budgets; JSON has R's, G's and B's too.)
                for b in r.budgets ?? [] where b.quantity == "Y" { lines.append("    " + budgetText(b, unit: f.unitSymbol)) }
                if let s = r.strayLight, s.sourcePixels + s.flaggedPixels > 0 || s.bound > 0 {
                    lines.append(String(format: "    stray light: %d source pixels (%.3g %% of the region's Σ L ω), %d flagged within the angle of a source (%.3g %%); veiling light may lift the mean by up to %.3g %%",
                                        s.sourcePixels, 100 * s.sourceShare, s.flaggedPixels, 100 * s.flaggedShare, 100 * s.bound))
                }
            }
            for ratio in f.ratios { lines.append("  " + ratioText(ratio)) }
        }
        return lines.joined(separator: "\n")
    }

    /// A number in an 11-character column, marked by its kind: "≥" lower bound, "≤" upper
    /// bound, "?" undetermined, "~" clipping unknown.
    static func cell(_ v: Double, _ kind: ResultKind) -> String {
        let number = v == 0 ? "0" : String(format: "%.5g", v)
        return (kind.symbol + number).leftPadded(11)
    }

    /// What the marks in a region's table mean, when it has any.
    static func kindLegend(_ m: RegionMeasurement) -> String? {
        let kinds = Set(m.channels.values.flatMap { s in [s.kind, s.medianKind, s.standardDeviationKind, s.minimumKind, s.maximumKind] + s.percentiles.map(\.kind) })
        guard kinds.contains(where: { !$0.isValue }) else { return nil }
        if kinds.contains(.clippingUnknown) { return "~ clipping unknown (no clip mask): any value may be a lower bound" }
        return "≥ lower bound, ≤ upper bound, ? undetermined: clipped pixels hold less than the light that reached them"
    }

    /// One budget as a line: each item's relative uncertainty, the combined one and the
    /// 95 % interval (for a bound, its one end).
    public static func budgetText(_ b: UncertaintyBudget, unit: String) -> String {
        var s = String(format: "%@ %@ %@%.6g %@: ", b.quantity, b.statistic, b.kind.symbol, b.value, unit)
        s += b.items.map { String(format: "%@ %.3g %%", $0.name, 100 * $0.relative) }.joined(separator: " ⊕ ")
        s += String(format: " = ±%.3g %% (k = 1); ", 100 * b.relativeStandardUncertainty) + intervalText(kind: b.kind, low: b.low95, high: b.high95)
        if !b.notIncluded.isEmpty { s += "; not included: " + b.notIncluded.joined(separator: "; ") }
        return s
    }

    // MARK: ratios

    /// "95 % interval [a, b]", or for a bound "LOWER BOUND, 95 % lower end a" and the like.
    public static func intervalText(kind: ResultKind, low: Double?, high: Double?) -> String {
        switch kind {
        case .lowerBound: return "LOWER BOUND" + (low.map { String(format: ", 95 %% lower end %.6g", $0) } ?? "")
        case .upperBound: return "UPPER BOUND" + (high.map { String(format: ", 95 %% upper end %.6g", $0) } ?? "")
        case .undetermined: return "UNDETERMINED (clipped pixels move it either way)"
        case .value, .clippingUnknown:
            guard let low, let high else { return "no interval" }
            return String(format: "95 %% interval [%.6g, %.6g]", low, high) + (kind == .clippingUnknown ? " (clipping unknown: may be a lower bound)" : "")
        }
    }

    public static func ratioText(_ r: RadianceRatio) -> String {
        var s = String(format: "ratio %@/%@ (%@ %@): %@%.6g", r.numerator, r.denominator, r.quantity, r.statistic, r.kind.symbol, r.ratio)
        if let lo = r.low95, let hi = r.high95 { s += String(format: ", 95 %% interval [%.6g, %.6g]", lo, hi) }
        else if let lo = r.low95 { s += String(format: ", 95 %% lower end %.6g", lo) }
        else if let hi = r.high95 { s += String(format: ", 95 %% upper end %.6g", hi) }
        switch r.kind {
        case .value: break
        case .lowerBound: s += " — a LOWER BOUND: " + r.explanation
        case .upperBound: s += " — an UPPER BOUND: " + r.explanation
        case .undetermined: s += " — UNDETERMINED: " + r.explanation
        case .clippingUnknown: s += " — CLIPPING UNKNOWN: " + r.explanation
        }
        return s
    }

    public static func ratiosCSV(_ files: [FileAnalysis]) -> String {
        var rows = ["file,numerator,denominator,quantity,statistic,ratio,low95,high95,relative_se,kind,error"]
        for f in files {
            if let e = f.error { rows.append([csvField(f.file), "", "", "", "", "", "", "", "", "", csvField(e)].joined(separator: ",")); continue }
            for r in f.ratios {
                rows.append([csvField(f.file), csvField(r.numerator), csvField(r.denominator), r.quantity, r.statistic, number(r.ratio),
                             number(r.low95), number(r.high95), number(r.relativeStandardError), r.kind.rawValue, ""].joined(separator: ","))
            }
        }
        return rows.joined(separator: "\n")
    }

    // MARK: histograms

    public static func histogramCSV(_ files: [FileAnalysis]) -> String {
        var rows = ["file,region,quantity,kind,low,high,count"]
        for f in files {
            if let e = f.error { rows.append([csvField(f.file), "", "", "error", "", "", csvField(e)].joined(separator: ",")); continue }
            for r in f.regions {
                guard let h = r.histogram else { continue }
                for q in RegionStatistics.quantities {
                    let prefix = [csvField(f.file), csvField(r.name), q]
                    for (i, c) in (h.counts[q] ?? []).enumerated() {
                        rows.append((prefix + ["bin", number(h.edges[i]), number(h.edges[i + 1]), String(c)]).joined(separator: ","))
                    }
                    for (kind, v) in [("below", h.below[q] ?? 0), ("above", h.above[q] ?? 0), ("zero", h.zero[q] ?? 0),
                                      ("negative", h.negative[q] ?? 0), ("clipped", h.clipped)] as [(String, Int?)] {
                        rows.append((prefix + [kind, "", "", v.map(String.init) ?? ""]).joined(separator: ","))
                    }
                }
            }
        }
        return rows.joined(separator: "\n")
    }

    public static func histogramText(_ files: [FileAnalysis]) -> String {
        var lines: [String] = []
        for f in files {
            if let e = f.error { lines.append("\(f.file): error: \(e)"); continue }
            for r in f.regions {
                guard let h = r.histogram else { continue }
                let unit = h.scale == .log2 ? "EV (0 = white)" : "value"
                lines.append("\(f.file) region \(r.name): \(h.pixels) pixels, \(h.counts["Y"]?.count ?? 0) bins in \(unit); clipped \(h.clipped.map(String.init) ?? "unknown (no clip mask)")")
                let first = (h.scale == .log2 ? "EV from" : "from").padding(toLength: 10, withPad: " ", startingAt: 0)
                lines.append("  " + first + "         R          G          B          Y")
                for i in 0..<(h.edges.count - 1) {
                    let counts = RegionStatistics.quantities.map { String(h.counts[$0]![i]).leftPadded(10) }.joined(separator: " ")
                    lines.append("  " + String(format: "%8.3f", h.edges[i]) + "  " + counts)
                }
                for (kind, d) in [("below", h.below), ("above", h.above), ("zero", h.zero), ("negative", h.negative)] {
                    lines.append("  " + kind.padding(toLength: 8, withPad: " ", startingAt: 0) + "  " +
                                 RegionStatistics.quantities.map { String(d[$0] ?? 0).leftPadded(10) }.joined(separator: " "))
                }
                lines.append("  clipped   " + (h.clipped.map(String.init) ?? "unknown").leftPadded(10) + " (all quantities)")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The analysis as an HDF5 group for `convert --analysis` (layout in docs/file-formats.md).
    public static func hdf5Group(_ f: FileAnalysis) -> HDF5Group {
        var datasets: [HDF5Dataset] = []
        var attributes: [MetadataItem] = [MetadataItem("schema", .text("scenelinear.analysis/1"))]
        for r in f.regions {
            let m = r.measurement
            let prefix = r.name
            var stats: [Double] = []
            var columns: [String] = ["mean", "mean_se", "median", "median_se", "std", "min", "max"]
            let percentiles = m.channels["Y"]!.percentiles.map(\.percentile)
            columns += percentiles.map { "p" + String(format6: $0) }
            for q in RegionStatistics.quantities {
                let s = m.channels[q]!
                stats += [s.mean, s.meanStandardError ?? .nan, s.median, s.medianStandardError ?? .nan, s.standardDeviation, s.minimum, s.maximum]
                stats += s.percentiles.map(\.value)
            }
            let kinds = RegionStatistics.quantities.flatMap { q -> [Int] in
                let s = m.channels[q]!
                return [s.kind, s.kind, s.medianKind, s.medianKind, s.standardDeviationKind, s.minimumKind, s.maximumKind].map(\.code)
                    + s.percentiles.map(\.kind.code)
            }
            datasets.append(HDF5Dataset(name: "\(prefix)_statistics_kind", shape: [4, columns.count], values: .integers(kinds),
                                        attributes: [MetadataItem("rows", .text(RegionStatistics.quantities.joined(separator: ","))),
                                                     MetadataItem("columns", .text(columns.joined(separator: ","))),
                                                     MetadataItem("codes", .text(ResultKind.allCases.map { "\($0.code) \($0.rawValue)" }.joined(separator: ", "))),
                                                     MetadataItem("description", .text("what each value of <region>_statistics is: a value or a bound, because clipped pixels hold less than the light that reached them"))]))
            datasets.append(HDF5Dataset(name: "\(prefix)_statistics", shape: [4, columns.count], values: .doubles(stats),
                                        attributes: [MetadataItem("rows", .text(RegionStatistics.quantities.joined(separator: ","))),
                                                     MetadataItem("columns", .text(columns.joined(separator: ","))),
                                                     MetadataItem("pixels", .integer(m.pixels)),
                                                     MetadataItem("clipped_pixels", .integer(m.clippedPixels ?? -1)),
                                                     MetadataItem("dr_robust_stops", .number(r.dynamicRange.robustStops ?? .nan)),
                                                     MetadataItem("dr_above_noise_stops", .number(r.dynamicRange.stopsAboveNoiseFloor ?? .nan))]))
            if let h = r.histogram {
                datasets.append(HDF5Dataset(name: "\(prefix)_histogram_edges", shape: [h.edges.count], values: .doubles(h.edges),
                                            attributes: [MetadataItem("scale", .text(h.scale.rawValue))]))
                let counts = RegionStatistics.quantities.flatMap { h.counts[$0] ?? [] }
                datasets.append(HDF5Dataset(name: "\(prefix)_histogram_counts", shape: [4, h.edges.count - 1], values: .integers(counts),
                                            attributes: [MetadataItem("rows", .text(RegionStatistics.quantities.joined(separator: ","))),
                                                         MetadataItem("clipped", .integer(h.clipped ?? -1)),
                                                         MetadataItem("below", .integers(RegionStatistics.quantities.map { h.below[$0] ?? 0 })),
                                                         MetadataItem("above", .integers(RegionStatistics.quantities.map { h.above[$0] ?? 0 })),
                                                         MetadataItem("zero", .integers(RegionStatistics.quantities.map { h.zero[$0] ?? 0 })),
                                                         MetadataItem("negative", .integers(RegionStatistics.quantities.map { h.negative[$0] ?? 0 }))]))
            }
        }
        attributes.append(MetadataItem("regions", .text(f.regions.map(\.name).joined(separator: ","))))
        return HDF5Group(name: "analysis", attributes: attributes, datasets: datasets)
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
