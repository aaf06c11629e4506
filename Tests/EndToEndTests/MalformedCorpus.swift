import Foundation
import DNGContainer
import ImageCore

/// Damaged variants of a valid DNG, made from its parsed structure: truncations at every
/// structural boundary, offsets pointed past the end, wrong counts, oversize and zero
/// dimensions, broken lossless-JPEG Huffman tables and markers, and required tags removed.
/// Each case says which failure categories are acceptable for it.
struct MalformedCorpus {
    struct Case: CustomStringConvertible {
        let name: String
        let bytes: Data
        /// The categories this damage may produce (usually exactly one).
        let expected: Set<FailureCategory>
        var description: String { name }
    }

    let original: Data
    let dng: DNGFile
    let order: ByteOrder
    var cases: [Case] = []

    init(_ data: Data, label: String) throws {
        original = data
        dng = try DNGFile(file: FileBytes(data: data, path: label))
        order = dng.byteOrder
        let raw = try dng.mainRawImage()
        addTruncations(raw: raw, label: label)
        addOffsetDamage(raw: raw, label: label)
        addCountDamage(raw: raw, label: label)
        addDimensionDamage(raw: raw, label: label)
        addHuffmanDamage(raw: raw, label: label)
        addMissingTags(raw: raw, label: label)
    }

    // MARK: byte helpers

    func u16(_ d: Data, _ at: Int) -> Int {
        order == .littleEndian ? Int(d[at]) | Int(d[at + 1]) << 8 : Int(d[at]) << 8 | Int(d[at + 1])
    }

    func put16(_ d: inout Data, _ at: Int, _ v: Int) {
        let b = [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)]
        d[at] = order == .littleEndian ? b[0] : b[1]
        d[at + 1] = order == .littleEndian ? b[1] : b[0]
    }

    func put32(_ d: inout Data, _ at: Int, _ v: UInt32) {
        for i in 0..<4 {
            let byte = UInt8(v >> (8 * UInt32(i)) & 0xFF)
            d[at + (order == .littleEndian ? i : 3 - i)] = byte
        }
    }

    /// Position of the 12-byte entry of `tag` in the IFD at `ifdOffset` (classic TIFF).
    func entryPosition(_ ifd: IFD, _ tag: UInt16) -> Int? {
        guard let i = ifd.entries.firstIndex(where: { $0.tag == tag }) else { return nil }
        return ifd.offset + 2 + 12 * i
    }

    func rawIFD(_ raw: ImageIFD) -> IFD? {
        dng.structure.allIFDs.first { $0.path == raw.path }
    }

    mutating func add(_ name: String, _ bytes: Data, _ expected: Set<FailureCategory>) {
        cases.append(Case(name: name, bytes: bytes, expected: expected))
    }

    // MARK: damage

    /// The file cut at the header, at and inside every IFD, at every out-of-line value and
    /// at the start, middle and last byte of every tile or strip of the main image.
    mutating func addTruncations(raw: ImageIFD, label: String) {
        var cuts: Set<Int> = [0, 1, 4, 7, 8]
        for ifd in dng.structure.allIFDs {
            let n = ifd.entries.count
            for k in [0, 2, 2 + 12, 2 + 12 * (n / 2), 2 + 12 * (n - 1), 2 + 12 * n, 2 + 12 * n + 2] { cuts.insert(ifd.offset + k) }
            for e in ifd.entries where e.byteCount > 4 {
                cuts.insert(e.valueOffset)
                cuts.insert(e.valueOffset + e.byteCount / 2)
            }
        }
        if let layout = raw.layout {
            for (o, c) in zip(layout.offsets, layout.byteCounts) {
                cuts.insert(o)
                cuts.insert(o + c / 2)
                cuts.insert(o + c - 1)
            }
        }
        for cut in cuts.sorted() where cut < original.count {
            // Less than a header: nothing says it was ever a TIFF (empty, or a bare byte-order mark).
            let expected: Set<FailureCategory> = cut < 8 ? [.truncated, .notDNG] : [.truncated]
            add("\(label): cut at \(cut)", original.prefix(cut), expected)
        }
    }

    /// Offsets pointed past the end of the file: IFD0, the SubIFDs, each out-of-line value of
    /// the main image's IFD, one tile offset; and an IFD chain that points back at itself.
    mutating func addOffsetDamage(raw: ImageIFD, label: String) {
        let past = UInt32(original.count + 4096)
        var d = original
        put32(&d, 4, past)
        add("\(label): IFD0 offset past the end", d, [.truncated])
        d = original
        put32(&d, 4, 0xFFFF_FFF0)
        add("\(label): IFD0 offset near 4 GiB", d, [.truncated])
        guard let ifd = rawIFD(raw) else { return }
        for e in ifd.entries where e.byteCount > 4 {
            guard let at = entryPosition(ifd, e.tag) else { continue }
            var d = original
            put32(&d, at + 8, past)
            let required: Set<UInt16> = [Tag.tileOffsets, Tag.tileByteCounts, Tag.stripOffsets, Tag.stripByteCounts, Tag.bitsPerSample,
                                         Tag.linearizationTable, Tag.blackLevel, Tag.whiteLevel, Tag.cfaPattern]
            guard required.contains(e.tag) else { continue }
            add("\(label): \(Tag.name(e.tag)) values past the end", d, [.truncated])
        }
        if let layout = raw.layout, let at = entryPosition(ifd, layout.kind == .tiles ? Tag.tileOffsets : Tag.stripOffsets) {
            let entry = ifd.entries.first { $0.tag == (layout.kind == .tiles ? Tag.tileOffsets : Tag.stripOffsets) }!
            var d = original
            let slot = entry.byteCount > 4 ? entry.valueOffset : at + 8
            if entry.type == .long {
                put32(&d, slot, past)
                add("\(label): first block offset past the end", d, [.truncated])
            }
        }
        // IFD0's next-IFD pointer to IFD0 itself.
        let ifd0 = dng.structure.ifds[0]
        d = original
        put32(&d, ifd0.offset + 2 + 12 * ifd0.entries.count, UInt32(ifd0.offset))
        add("\(label): IFD chain loops to itself", d, [.corruptData])
        // A SubIFD pointer to IFD0 (a cycle through the tree).
        if let at = entryPosition(ifd0, Tag.subIFDs), let e = ifd0.entries.first(where: { $0.tag == Tag.subIFDs }) {
            d = original
            put32(&d, e.count == 1 ? at + 8 : e.valueOffset, UInt32(ifd0.offset))
            add("\(label): SubIFD points back at IFD0", d, [.corruptData])
        }
    }

    /// Counts that disagree with the layout or with the file.
    mutating func addCountDamage(raw: ImageIFD, label: String) {
        guard let ifd = rawIFD(raw) else { return }
        func setCount(_ tag: UInt16, _ count: UInt32, _ what: String, _ expected: Set<FailureCategory>) {
            guard let at = entryPosition(ifd, tag) else { return }
            var d = original
            put32(&d, at + 4, count)
            add("\(label): \(Tag.name(tag)) \(what)", d, expected)
        }
        let blocks = raw.layout?.offsets.count ?? 0
        for tag in [Tag.tileOffsets, Tag.tileByteCounts, Tag.stripOffsets, Tag.stripByteCounts] where blocks > 1 {
            setCount(tag, UInt32(blocks - 1), "count one short", [.corruptData])
        }
        for tag in [Tag.tileOffsets, Tag.tileByteCounts, Tag.stripOffsets, Tag.stripByteCounts, Tag.linearizationTable] {
            setCount(tag, 0x3FFF_FFFF, "count of 2³⁰", [.truncated, .corruptData])
        }
        setCount(Tag.bitsPerSample, 2, "count 2 for \(raw.samplesPerPixel) samples", [.corruptData])
        if let e = ifd.entries.first(where: { $0.tag == Tag.linearizationTable }), e.count < 65536 {
            setCount(Tag.linearizationTable, 70_000, "70 000 entries (past the end)", [.truncated, .corruptData])
        }
        // A byte count that runs past the end of the file.
        if let e = ifd.entries.first(where: { $0.tag == Tag.tileByteCounts || $0.tag == Tag.stripByteCounts }), e.type == .long {
            var d = original
            let slot = e.byteCount > 4 ? e.valueOffset : entryPosition(ifd, e.tag)! + 8
            put32(&d, slot, UInt32(original.count * 2))
            add("\(label): first block byte count past the end", d, [.truncated])
        }
    }

    /// Dimensions: enormous (refused by the pixel cap before any allocation), zero, and
    /// inconsistent with the tile grid.
    mutating func addDimensionDamage(raw: ImageIFD, label: String) {
        guard let ifd = rawIFD(raw) else { return }
        func setValue(_ tag: UInt16, _ v: UInt32, _ what: String, _ expected: Set<FailureCategory>) {
            guard let at = entryPosition(ifd, tag), let e = ifd.entries.first(where: { $0.tag == tag }) else { return }
            var d = original
            if e.type == .short {
                guard v <= 0xFFFF else { return }
                put16(&d, at + 8, Int(v))
            } else {
                put32(&d, at + 8, v)
            }
            add("\(label): \(Tag.name(tag)) \(what)", d, expected)
        }
        // Width and height stored as SHORT cannot be oversize; make them LONG in place.
        for tag in [Tag.imageWidth, Tag.imageLength] {
            guard let at = entryPosition(ifd, tag) else { continue }
            var d = original
            put16(&d, at + 2, Int(FieldType.long.rawValue))
            put32(&d, at + 4, 1)
            put32(&d, at + 8, 0x7FFF_FFFF)
            add("\(label): \(Tag.name(tag)) 2³¹−1", d, [.limitExceeded, .corruptData])
            setValue(tag, 0, "zero", [.corruptData])
        }
        if raw.layout?.kind == .tiles {
            setValue(Tag.tileWidth, 0, "zero", [.corruptData])
            setValue(Tag.tileLength, 0, "zero", [.corruptData])
            setValue(Tag.tileWidth, UInt32((raw.layout?.blockWidth ?? 16) / 2), "halved (tile grid mismatch)", [.corruptData])
        } else {
            setValue(Tag.rowsPerStrip, 0, "zero", [.corruptData])
        }
        setValue(Tag.samplesPerPixel, 0, "zero", [.corruptData])
        setValue(Tag.samplesPerPixel, 200, "200", [.corruptData, .unsupportedFeature])
    }

    /// Lossless-JPEG damage in the first block: an oversubscribed Huffman table, a symbol
    /// above 16, a frame size that disagrees with the tile, a missing end marker, and
    /// scrambled entropy-coded data.
    mutating func addHuffmanDamage(raw: ImageIFD, label: String) {
        guard raw.compression == 7, let layout = raw.layout, let o = layout.offsets.first, let n = layout.byteCounts.first else { return }
        let block = original.subdata(in: o..<(o + n))
        func find(_ marker: UInt8) -> Int? {
            var i = 0
            while i + 1 < block.count {
                if block[block.startIndex + i] == 0xFF && block[block.startIndex + i + 1] == marker { return o + i }
                i += 1
            }
            return nil
        }
        if let dht = find(0xC4) {
            // Segment: FF C4, length (2), Tc/Th (1), 16 code counts, symbols.
            var d = original
            d[dht + 5] = 3  // three codes of length 1: more than a binary code can hold
            add("\(label): Huffman table oversubscribed", d, [.corruptData])
            d = original
            let counts = (0..<16).map { Int(original[dht + 5 + $0]) }
            if counts.reduce(0, +) > 0 {
                d[dht + 21] = 40  // first symbol: difference category 40 (at most 16 exist)
                add("\(label): Huffman symbol 40", d, [.corruptData])
            }
            d = original
            d[dht + 2] = 0xFF
            d[dht + 3] = 0xFF
            add("\(label): Huffman segment length 65535", d, [.corruptData, .truncated])
        }
        if let sof = find(0xC3) {
            var d = original
            // SOF3: FF C3, length (2), precision (1), height (2), width (2): width + 1.
            let w = Int(original[sof + 7]) << 8 | Int(original[sof + 8])
            d[sof + 7] = UInt8((w + 1) >> 8 & 0xFF)
            d[sof + 8] = UInt8((w + 1) & 0xFF)
            add("\(label): JPEG frame width disagrees with the tile", d, [.corruptData])
            d = original
            d[sof + 4] = 40
            add("\(label): JPEG precision 40 bits", d, [.corruptData, .unsupportedFeature])
        }
        if let sos = find(0xDA) {
            // Scramble the middle of the entropy-coded data (no 0xFF bytes, so no false markers).
            var d = original
            let start = sos + 2 + (Int(original[sos + 2]) << 8 | Int(original[sos + 3]))
            let end = o + n - 2
            if end - start > 64 {
                var g = UInt64(0x5EED)
                for i in (start + (end - start) / 3)..<(start + (end - start) / 2) {
                    g = g &* 6364136223846793005 &+ 1442695040888963407
                    d[i] = UInt8(truncatingIfNeeded: g >> 33) & 0x7F
                }
                add("\(label): scrambled lossless-JPEG data", d, [.corruptData])
            }
            d = original
            d[o + n - 1] = 0x00  // EOI marker gone
            add("\(label): no JPEG end marker", d, [.corruptData])
        }
    }

    /// Tags the DNG specification requires, removed one at a time (the IFD rewritten in place
    /// one entry shorter).
    mutating func addMissingTags(raw: ImageIFD, label: String) {
        guard let ifd = rawIFD(raw) else { return }
        var tags: [(UInt16, Set<FailureCategory>)] = [
            (Tag.imageWidth, [.corruptData]), (Tag.imageLength, [.corruptData]),
            (Tag.bitsPerSample, [.corruptData]), (Tag.photometricInterpretation, [.corruptData]),
            (Tag.tileOffsets, [.corruptData]), (Tag.tileByteCounts, [.corruptData]),
            (Tag.stripOffsets, [.corruptData]), (Tag.stripByteCounts, [.corruptData]),
            (Tag.tileWidth, [.corruptData]), (Tag.tileLength, [.corruptData]),
        ]
        if raw.photometric == 32803 {
            let corrupt: Set<FailureCategory> = [.corruptData]
            tags += [(Tag.cfaPattern, corrupt), (Tag.cfaRepeatPatternDim, corrupt)]
        }
        for (tag, expected) in tags {
            guard let d = removing(tag, from: ifd) else { continue }
            add("\(label): no \(Tag.name(tag))", d, expected)
        }
        // DNGVersion and ColorMatrix1 live in IFD0.
        let ifd0 = dng.structure.ifds[0]
        if let d = removing(Tag.dngVersion, from: ifd0) { add("\(label): no DNGVersion", d, [.notDNG]) }
        if let d = removing(Tag.colorMatrix1, from: ifd0) { add("\(label): no ColorMatrix1", d, [.corruptData]) }
    }

    func removing(_ tag: UInt16, from ifd: IFD) -> Data? {
        guard let i = ifd.entries.firstIndex(where: { $0.tag == tag }) else { return nil }
        var d = original
        let n = ifd.entries.count
        let first = ifd.offset + 2
        let next = original.subdata(in: (first + 12 * n)..<(first + 12 * n + 4))
        // Shift the later entries up over the removed one, then the next-IFD pointer.
        let tail = original.subdata(in: (first + 12 * (i + 1))..<(first + 12 * n))
        d.replaceSubrange((first + 12 * i)..<(first + 12 * i + tail.count), with: tail)
        d.replaceSubrange((first + 12 * (n - 1))..<(first + 12 * (n - 1) + 4), with: next)
        put16(&d, ifd.offset, n - 1)
        return d
    }
}
