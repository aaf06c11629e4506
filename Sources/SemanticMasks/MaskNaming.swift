import ImageCore

/// Short layer names for semantic masks, derived from their SemanticName URNs.
///
/// The rule, applied to each mask in file order:
///
/// 1. Take the last component of the SemanticName (after the last `:` or `/`), in lower case,
///    with every character other than `a`–`z`, `0`–`9`, `_` and `-` replaced by `_`.
/// 2. Strip a leading `semantic` and a trailing `matte`, then leading and trailing `_`/`-`;
///    when nothing is left, keep the whole component from step 1; when that is empty too
///    (no SemanticName), use `mask`.
/// 3. Names that occur more than once, and the reserved name `clipped` (the EXR clip mask
///    channel), get a suffix `_<instance ID>` when every mask of that name has a distinct,
///    non-empty SemanticInstanceID, else `_1`, `_2`, ... in file order.
///
/// So `urn:com:apple:photo:2020:aux:semanticskymatte` is `sky`, `…:semanticskinmatte`
/// `skin`, `…:semantichairmatte` `hair`, `…:semanticteethmatte` `teeth`,
/// `…:semanticglassesmatte` `glasses`, `urn:com:apple:photo:2018:aux:portraiteffectsmatte`
/// `portraiteffects`, and `urn:com:apple:photo:2020:aux:hairsegmentationmatte`
/// `hairsegmentation`. The full URN is kept beside the name in every output.
public enum MaskNaming {
    /// Names other layers of an output already use.
    public static let reserved: Set<String> = ["clipped"]

    /// The name of one mask before de-duplication (steps 1 and 2).
    public static func baseName(_ semanticName: String?) -> String {
        let component = lastComponent(semanticName ?? "")
        var core = Substring(component)
        if core.hasPrefix("semantic") { core = core.dropFirst("semantic".count) }
        if core.hasSuffix("matte") { core = core.dropLast("matte".count) }
        let trimmed = String(core).trimmingSeparators
        if !trimmed.isEmpty { return trimmed }
        let whole = component.trimmingSeparators
        return whole.isEmpty ? "mask" : whole
    }

    /// Unique layer names for masks in file order (all three steps).
    public static func layerNames(_ masks: [(semanticName: String?, instanceID: String?)]) -> [String] {
        let bases = masks.map { baseName($0.semanticName) }
        var names = bases
        var groups: [String: [Int]] = [:]
        for (i, b) in bases.enumerated() { groups[b, default: []].append(i) }
        for (base, members) in groups where members.count > 1 || reserved.contains(base) {
            let ids = members.map { sanitized(masks[$0].instanceID ?? "").trimmingSeparators }
            let useIDs = ids.allSatisfy { !$0.isEmpty } && Set(ids).count == ids.count
            for (k, i) in members.enumerated() { names[i] = base + "_" + (useIDs ? ids[k] : String(k + 1)) }
        }
        // A suffixed name may equal another mask's plain name: number on until unique.
        var taken = reserved
        for i in names.indices {
            var candidate = names[i]
            var n = 2
            while taken.contains(candidate) {
                candidate = names[i] + "_" + String(n)
                n += 1
            }
            names[i] = candidate
            taken.insert(candidate)
        }
        return names
    }

    static func lastComponent(_ text: String) -> String {
        let parts = text.split(whereSeparator: { $0 == ":" || $0 == "/" })
        return sanitized(String(parts.last ?? ""))
    }

    /// Lower case, with characters other than a–z, 0–9, `_`, `-` replaced by `_`.
    static func sanitized(_ text: String) -> String {
        String(text.lowercased().unicodeScalars.map { c -> Character in
            let ok = ("a"..."z").contains(c) || ("0"..."9").contains(c) || c == "_" || c == "-"
            return ok ? Character(c) : "_"
        })
    }
}

extension String {
    /// Without leading and trailing `_` and `-`.
    fileprivate var trimmingSeparators: String {
        var s = Substring(self)
        while let f = s.first, f == "_" || f == "-" { s = s.dropFirst() }
        while let l = s.last, l == "_" || l == "-" { s = s.dropLast() }
        return String(s)
    }
}
