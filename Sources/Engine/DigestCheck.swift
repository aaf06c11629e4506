import Foundation

/// What to do with the MD5 digests a DNG records of its raw data (NewRawImageDigest,
/// RawImageDigest, OriginalRawFileDigest).
public enum DigestPolicy: String, Sendable, CaseIterable {
    /// Compute the digest while decoding; a mismatch fails with `RawDigestError` (exit 13).
    case verify
    /// Compute it; on a mismatch convert anyway and record "mismatch, ignored" in the output.
    case ignoreMismatch = "ignore"
    /// Do not compute it (the output records "not checked").
    case skip
}

extension Pipeline {
    /// The raw-image digest to verify while decoding `raw`, or nil when the file records
    /// none, the check is off, or `raw` is not the main raw image (which the digests cover).
    static func digestExpectation(_ dng: DNGFile, raw: ImageIFD, main: ImageIFD,
                                  options: DevelopOptions) throws -> RawDigestExpectation? {
        guard options.digest != .skip, raw.path == main.path else { return nil }
        return try RawImageDigest.expectation(dng, raw: raw)
    }

    /// Compares the digests the file records with those of its data (`imageDigest` from the
    /// decoding pass), and returns the processing items the outputs record.
    /// - Throws: `RawDigestError.mismatch` naming both digests, unless the policy ignores it.
    ///
    /// - Parameter assumingImageMatches: the items the check will give when the raw image's
    ///   digest matches, before it is decoded (`imageDigest` is not used); what a header
    ///   written before the image records. The OriginalRawFileDigest is checked either way.
    static func checkDigests(_ dng: DNGFile, raw: ImageIFD, main: ImageIFD, expectation: RawDigestExpectation?,
                             imageDigest: MD5Digest.Value?, options: DevelopOptions,
                             assumingImageMatches: Bool = false) throws -> [MetadataItem] {
        guard options.digest != .skip else { return [MetadataItem("digest", .text("not checked"))] }
        guard raw.path == main.path else {
            return [MetadataItem("digest", .text("not checked: the digests cover the main raw image, not \(raw.path)"))]
        }
        var items: [MetadataItem] = []
        var outcomes: [DigestOutcome] = []
        if let expectation, assumingImageMatches {
            outcomes.append(DigestOutcome(tag: expectation.tag, stored: expectation.stored, computed: expectation.stored))
        } else if let expectation, let imageDigest {
            outcomes.append(try expectation.outcome(dng, imageDigest: imageDigest, limits: options.limits))
        } else {
            items.append(MetadataItem("digest", .text("absent")))
        }
        if let original = try RawImageDigest.checkOriginalRawFile(dng) { outcomes.append(original) }
        for outcome in outcomes {
            let key = outcome.tag == .originalRawFileDigest ? "originalRawFileDigest" : "digest"
            if outcome.matches {
                items.append(MetadataItem(key, .text("verified")))
                items.append(MetadataItem(key + "Tag", .text(outcome.tag.name)))
                items.append(MetadataItem(key + "Value", .text(MD5Digest.hex(outcome.stored))))
                continue
            }
            let image = outcome.tag == .originalRawFileDigest ? "OriginalRawFileData" : raw.path
            guard options.digest == .ignoreMismatch else { throw outcome.error(path: dng.path, image: image) }
            items.append(MetadataItem(key, .text("mismatch, ignored")))
            items.append(MetadataItem(key + "Tag", .text(outcome.tag.name)))
            items.append(MetadataItem(key + "Stored", .text(MD5Digest.hex(outcome.stored))))
            items.append(MetadataItem(key + "Computed", .text(MD5Digest.hex(outcome.computed))))
        }
        return items
    }

    /// The digest state of a DNG for `info`: without `verify`, whether a digest is present;
    /// with it, the raw image decoded (no development) and the digest compared.
    public static func digestState(_ dng: DNGFile, verify: Bool, options: DevelopOptions = DevelopOptions()) throws -> DigestState {
        let limits = options.limits
        let raw = try dng.mainRawImage()
        guard let expectation = try RawImageDigest.expectation(dng, raw: raw) else { return .absent }
        let stored = MD5Digest.hex(expectation.stored)
        guard verify else { return .present(tag: expectation.tag, stored: stored, reason: "not verified (info --verify-digest decodes the raw image to check it)") }
        // The same limits as a conversion: a crafted size is refused before anything is decoded.
        try checkLimits(raw, path: dng.path, options: options)
        let digester = try expectation.makeDigester(dng)
        if digester.isCompressed, let layout = raw.layout {
            // A digest of the compressed blocks needs no decoding.
            let file = dng.file
            for (i, (offset, length)) in zip(layout.offsets, layout.byteCounts).enumerated() {
                guard file.contains(offset: offset, length: length) else {
                    throw RawDecodeError.truncated(path: dng.path, ifd: raw.path, block: "\(layout.kind == .tiles ? "tile" : "strip") \(i)",
                                                   offset: offset, length: length, fileSize: file.count)
                }
                file.withBytes(offset: offset, length: length) { digester.addCompressed(i, bytes: $0) }
            }
        } else {
            _ = try RawDecoder.decode(dng, ifd: raw, limits: limits, digester: digester)
        }
        let outcome = try expectation.outcome(dng, imageDigest: digester.finish(), limits: limits)
        return outcome.matches ? .verified(tag: expectation.tag, digest: stored)
                               : .mismatch(tag: expectation.tag, stored: stored, computed: MD5Digest.hex(outcome.computed))
    }
}
