/// A problem found while reading or writing a lossless JPEG stream.
///
/// Each case names one distinct problem and carries the byte offset in the stream (counted
/// from the first byte of the data passed in) and the offending values, so that the
/// `description` can say exactly what is wrong and where. `category` groups the cases for
/// callers that map them onto their own error kinds.
public enum LJ92Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// The data does not begin with the SOI marker (FF D8).
    case missingSOI
    /// The data ends at `offset` where more bytes are needed: inside a marker segment, inside
    /// the entropy-coded data, or before the EOI marker. Also thrown when an entropy-coded
    /// segment ends (at the marker at `offset`) more than 7 bits short of its last code.
    case truncated(offset: Int)
    /// A byte other than 0xFF at `offset`, where a marker must begin.
    case expectedMarker(offset: Int, found: UInt8)
    /// The marker `marker` (the byte after 0xFF) at `offset` may not occur there: RSTn, SOI,
    /// TEM or a reserved marker among the headers, EOI before the scan, DNL, or any marker
    /// other than EOI after the scan.
    case unexpectedMarker(marker: UInt8, offset: Int)
    /// A start-of-frame marker of a process other than non-hierarchical lossless Huffman
    /// coding (SOF3): the DCT-based (lossy) processes SOF0–SOF2, the arithmetic-coded SOF9–SOF11,
    /// the hierarchical (differential) SOF5–SOF7 and SOF13–SOF15, or the hierarchical
    /// markers DHP and EXP.
    case unsupportedProcess(marker: UInt8, offset: Int)
    /// The length field `length` of the marker segment `marker` at `offset` does not fit the
    /// segment's content (too short, or different from what its fields require).
    case invalidSegmentLength(marker: UInt8, offset: Int, length: Int)
    /// A second frame header (SOF3) at `offset`.
    case duplicateFrameHeader(offset: Int)
    /// The frame header's sample precision P is outside 2...16.
    case invalidPrecision(Int)
    /// The frame header gives zero lines or zero samples per line (zero lines would need a
    /// DNL marker, which is not supported).
    case invalidDimensions(width: Int, height: Int)
    /// The frame header's component count Nf is outside 1...4 (0 is corrupt; T.81 allows up
    /// to 255 for this process, but more than 4 is not supported).
    case invalidComponentCount(Int)
    /// The frame header at `offset` lists the component identifier `id` twice.
    case duplicateComponentID(id: Int, offset: Int)
    /// The component `componentID` has sampling factors other than 1×1.
    case unsupportedSampling(componentID: Int, horizontal: Int, vertical: Int)
    /// A Huffman table specification at `offset` has a table class other than 0 or 1, or a
    /// destination identifier above 3 (`classAndID` is the Tc/Th byte).
    case invalidHuffmanTableID(classAndID: UInt8, offset: Int)
    /// The code lengths of Huffman table `table` (DHT at `offset`) assign more codes of some
    /// length than fit in the code space.
    case huffmanCodeOverflow(table: Int, offset: Int)
    /// Huffman table `table` lists a difference category `symbol` above 16, at `offset`.
    case invalidHuffmanSymbol(table: Int, symbol: Int, offset: Int)
    /// The scan header (SOS) at `offset` comes before any frame header.
    case missingFrameHeader(offset: Int)
    /// The scan codes `scan` components but the frame has `frame`: only a single scan of all
    /// components, interleaved (as DNG uses), is supported.
    case unsupportedScanComponents(scan: Int, frame: Int)
    /// The scan's component number `index` has identifier `foundID`, but the frame header's
    /// component at that position has `expectedID`.
    case scanComponentMismatch(index: Int, expectedID: Int, foundID: Int)
    /// The scan header at `offset` selects Huffman table `table`, which was never defined.
    case missingHuffmanTable(table: Int, offset: Int)
    /// The scan header at `offset` selects Huffman table `table`, which defines no codes.
    case emptyHuffmanTable(table: Int, offset: Int)
    /// The scan's predictor selection value (Ss) is outside 1...7.
    case invalidPredictor(Int)
    /// The scan's point transform (Al) is not below the sample precision (or above 15).
    case invalidPointTransform(Int)
    /// The restart interval `interval` (in MCUs) is not a whole number of lines of `width`
    /// MCUs, as T.81 H.1.1 requires for the lossless process.
    case invalidRestartInterval(interval: Int, width: Int)
    /// The bits at byte `offset` of the entropy-coded data match no code of the Huffman table
    /// in use.
    case invalidHuffmanCode(offset: Int)
    /// At `offset` the marker `found` stands where restart marker RST`expected` belongs.
    case restartMismatch(expected: Int, found: UInt8, offset: Int)
    /// The output buffer holds `available` samples but the frame has `needed`.
    case outputTooSmall(needed: Int, available: Int)
    /// Encoding: the sample at `index` has value `value`, which needs more than `precision` bits.
    case sampleExceedsPrecision(index: Int, value: Int, precision: Int)

    /// A coarse grouping of the error cases.
    public enum Category: Sendable, Equatable {
        /// The stream ends before the data it needs.
        case truncated
        /// The stream is damaged or does not follow T.81.
        case corrupt
        /// A valid JPEG stream that uses a feature this codec does not implement.
        case unsupported
        /// The caller passed an unusable argument (output too small, sample out of range).
        case invalidArgument
    }

    /// The group this error belongs to.
    public var category: Category {
        switch self {
        case .truncated: return .truncated
        case .unsupportedProcess, .unsupportedSampling, .unsupportedScanComponents:
            return .unsupported
        case .invalidComponentCount(let n):
            return n > 4 ? .unsupported : .corrupt
        case .outputTooSmall, .sampleExceedsPrecision: return .invalidArgument
        default: return .corrupt
        }
    }

    /// A one-line message, e.g. "corrupt lossless-JPEG stream: invalid Huffman code at byte 1234".
    public var description: String {
        let corrupt = "corrupt lossless-JPEG stream"
        let unsupported = "unsupported lossless-JPEG stream"
        switch self {
        case .missingSOI:
            return "not a JPEG stream: missing SOI marker (FF D8) at byte 0"
        case .truncated(let offset):
            return "truncated lossless-JPEG stream: data ends at byte \(offset) before the image is complete"
        case .expectedMarker(let offset, let found):
            return "\(corrupt): expected a marker at byte \(offset), found \(hex(found))"
        case .unexpectedMarker(let marker, let offset):
            return "\(corrupt): unexpected marker \(markerName(marker)) at byte \(offset)"
        case .unsupportedProcess(let marker, let offset):
            return "\(unsupported): \(markerName(marker)) at byte \(offset) is \(processName(marker)), "
                + "not lossless Huffman coding (SOF3)"
        case .invalidSegmentLength(let marker, let offset, let length):
            return "\(corrupt): \(markerName(marker)) segment at byte \(offset) has invalid length \(length)"
        case .duplicateFrameHeader(let offset):
            return "\(corrupt): second frame header at byte \(offset)"
        case .invalidPrecision(let p):
            return "\(corrupt): sample precision \(p) bits is outside 2...16"
        case .invalidDimensions(let width, let height):
            return "\(corrupt): frame of \(width)×\(height) samples (zero width or height)"
        case .invalidComponentCount(let n):
            return "\(unsupported): \(n) components (1...4 supported)"
        case .duplicateComponentID(let id, let offset):
            return "\(corrupt): component identifier \(id) appears twice in the frame header at byte \(offset)"
        case .unsupportedSampling(let id, let h, let v):
            return "\(unsupported): component \(id) has sampling factors \(h)×\(v) (only 1×1 supported)"
        case .invalidHuffmanTableID(let tcth, let offset):
            return "\(corrupt): Huffman table class/identifier \(hex(tcth)) at byte \(offset)"
        case .huffmanCodeOverflow(let table, let offset):
            return "\(corrupt): Huffman table \(table) at byte \(offset) has more codes than its lengths allow"
        case .invalidHuffmanSymbol(let table, let symbol, let offset):
            return "\(corrupt): Huffman table \(table) lists difference category \(symbol) (above 16) at byte \(offset)"
        case .missingFrameHeader(let offset):
            return "\(corrupt): scan header at byte \(offset) before any frame header"
        case .unsupportedScanComponents(let scan, let frame):
            return "\(unsupported): scan codes \(scan) of the frame's \(frame) components (only one interleaved scan supported)"
        case .scanComponentMismatch(let index, let expected, let found):
            return "\(corrupt): scan component \(index) has identifier \(found), frame component \(index) has \(expected)"
        case .missingHuffmanTable(let table, let offset):
            return "\(corrupt): scan header at byte \(offset) selects undefined Huffman table \(table)"
        case .emptyHuffmanTable(let table, let offset):
            return "\(corrupt): scan header at byte \(offset) selects Huffman table \(table), which has no codes"
        case .invalidPredictor(let p):
            return "\(corrupt): predictor \(p) is outside 1...7"
        case .invalidPointTransform(let pt):
            return "\(corrupt): point transform \(pt) is not below the sample precision"
        case .invalidRestartInterval(let interval, let width):
            return "\(corrupt): restart interval \(interval) is not a whole number of lines of \(width) samples"
        case .invalidHuffmanCode(let offset):
            return "\(corrupt): invalid Huffman code at byte \(offset)"
        case .restartMismatch(let expected, let found, let offset):
            return "\(corrupt): expected restart marker RST\(expected) at byte \(offset), found \(markerName(found))"
        case .outputTooSmall(let needed, let available):
            return "lossless-JPEG output buffer too small: \(needed) samples needed, \(available) available"
        case .sampleExceedsPrecision(let index, let value, let precision):
            return "lossless-JPEG encoding: sample \(index) has value \(value), more than \(precision) bits"
        }
    }
}

/// "0xAB".
private func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return "0x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
}

/// The T.81 name of a marker (the byte after 0xFF), e.g. "SOF0 (FFC0)".
func markerName(_ marker: UInt8) -> String {
    let code = "FF" + String(hex(marker).dropFirst(2))
    let name: String
    switch marker {
    case 0xC4: name = "DHT"
    case 0xC8: name = "JPG"
    case 0xCC: name = "DAC"
    case 0xC0...0xCF: name = "SOF\(marker - 0xC0)"
    case 0xD0...0xD7: name = "RST\(marker - 0xD0)"
    case 0xD8: name = "SOI"
    case 0xD9: name = "EOI"
    case 0xDA: name = "SOS"
    case 0xDB: name = "DQT"
    case 0xDC: name = "DNL"
    case 0xDD: name = "DRI"
    case 0xDE: name = "DHP"
    case 0xDF: name = "EXP"
    case 0xE0...0xEF: name = "APP\(marker - 0xE0)"
    case 0xFE: name = "COM"
    case 0x01: name = "TEM"
    case 0x00: name = "stuffed zero"
    default: name = "reserved marker"
    }
    return "\(name) (\(code))"
}

/// What a start-of-frame (or hierarchical) marker announces.
private func processName(_ marker: UInt8) -> String {
    switch marker {
    case 0xC0: return "baseline DCT (lossy)"
    case 0xC1: return "extended sequential DCT (lossy)"
    case 0xC2: return "progressive DCT (lossy)"
    case 0xC5: return "differential sequential DCT (lossy, hierarchical)"
    case 0xC6: return "differential progressive DCT (lossy, hierarchical)"
    case 0xC7: return "differential lossless (hierarchical)"
    case 0xC9: return "extended sequential DCT with arithmetic coding (lossy)"
    case 0xCA: return "progressive DCT with arithmetic coding (lossy)"
    case 0xCB: return "lossless with arithmetic coding"
    case 0xCD: return "differential sequential DCT with arithmetic coding (lossy, hierarchical)"
    case 0xCE: return "differential progressive DCT with arithmetic coding (lossy, hierarchical)"
    case 0xCF: return "differential lossless with arithmetic coding (hierarchical)"
    case 0xDE, 0xDF: return "hierarchical coding"
    default: return "not a supported coding process"
    }
}
