internal import CJPEG
import DNGContainer
import LosslessJPEG

extension BlockPlan {
    // MARK: lossless JPEG (compression 7)

    /// Decodes a lossless-JPEG block. Only the total sample count of the frame has to match
    /// the block (DNG 1.7.1 p.21): the frame's samples, in order, are the block's samples in
    /// order, so e.g. a W×H CFA tile may be a W/2 × H frame of 2 components. A DCT-based
    /// stream found here is decoded with libjpeg when the samples are 8-bit, and refused
    /// otherwise: it is never read as lossless data.
    func decodeLosslessJPEG(_ block: Block, into output: UnsafeMutableRawPointer) throws(RawDecodeError) {
        let expected = block.width * block.rows * blockSPP
        let frame: LJ92Frame
        do {
            frame = try withBytes(of: block) { raw throws(LJ92Error) in try LJ92Decoder.readFrame(raw) }
        } catch {
            if case .unsupportedProcess(let marker, _) = error, JPEGFrameInfo.dctMarkers.contains(marker) {
                guard encoding.bits == 8 else {
                    throw .unsupportedBlock(path: path, ifd: ifd.path, block: name(block),
                                            reason: "a DCT-based (lossy) JPEG stream (SOF\(marker - 0xC0)) in compression 7 with \(encoding.bits)-bit samples; lossy JPEG is decoded only for 8-bit data")
                }
                return try decodeDCTJPEG(block, codecName: "baseline JPEG", into: output)
            }
            throw lj92Failure(error, block)
        }
        guard !isYCbCr else {
            throw .unsupportedBlock(path: path, ifd: ifd.path, block: name(block), reason: "YCbCr data in a lossless JPEG stream")
        }
        guard frame.sampleCount == expected else {
            throw .shortBlock(path: path, ifd: ifd.path, block: name(block),
                              reason: "lossless-JPEG frame \(frame.width)×\(frame.height)×\(frame.components) holds \(frame.sampleCount) samples, the \(blockKind) needs \(block.width)×\(block.rows)×\(blockSPP) = \(expected)")
        }
        if outputIsBlock && !planar {
            // The block's own buffer has the stream's layout: decode straight into it.
            let out = UnsafeMutableBufferPointer(start: output.assumingMemoryBound(to: UInt16.self), count: expected)
            do {
                _ = try withBytes(of: block) { raw throws(LJ92Error) in try LJ92Decoder.decode(raw, into: out) }
            } catch {
                throw lj92Failure(error, block)
            }
            return
        }
        var scratch = [UInt16](repeating: 0, count: expected)
        do {
            try scratch.withUnsafeMutableBufferPointer { out throws(LJ92Error) in
                _ = try withBytes(of: block) { raw throws(LJ92Error) in try LJ92Decoder.decode(raw, into: out) }
            }
        } catch {
            throw lj92Failure(error, block)
        }
        scratch.withUnsafeBufferPointer { src in
            place(src.baseAddress!, rowStride: block.width * blockSPP, block, into: output)
        }
    }

    /// A lossless-JPEG error as a Stage 1 error: valid features the decoder does not
    /// implement (hierarchical or arithmetic processes, subsampled components, …) are
    /// unsupported, everything else is corrupt data.
    private func lj92Failure(_ error: LJ92Error, _ block: Block) -> RawDecodeError {
        if error.category == .unsupported {
            return .unsupportedBlock(path: path, ifd: ifd.path, block: name(block), reason: error.description)
        }
        return .corruptBlock(path: path, ifd: ifd.path, block: name(block), error: error)
    }

    // MARK: DCT JPEG (lossy JPEG 34892, and baseline streams under compression 7)

    /// Decodes an 8-bit DCT JPEG block with libjpeg: the frame must be exactly the block's
    /// size with `blockSPP` components (1 grey, 3 RGB; YCbCr is converted to RGB as libjpeg
    /// does by default). JPEGTables, when present, are read first.
    func decodeDCTJPEG(_ block: Block, codecName: String, into output: UnsafeMutableRawPointer) throws(RawDecodeError) {
        func corrupt(_ reason: String) -> RawDecodeError {
            .corruptStream(path: path, ifd: ifd.path, block: name(block), codec: codecName, reason: reason)
        }
        guard let header = file.withBytes(offset: block.offset, length: block.length, { JPEGFrameInfo.find(in: $0) }) else {
            throw corrupt("no JPEG frame header (SOI … SOFn) found")
        }
        guard JPEGFrameInfo.dctMarkers.contains(header.marker) else {
            throw .unsupportedBlock(path: path, ifd: ifd.path, block: name(block),
                                    reason: "JPEG process SOF\(header.marker - 0xC0) under compression \(ifd.compression) (baseline, extended or progressive Huffman DCT expected)")
        }
        guard blockSPP == 1 || blockSPP == 3 else {
            throw .unsupportedBlock(path: path, ifd: ifd.path, block: name(block),
                                    reason: "a DCT JPEG stream for \(blockSPP) samples per pixel (1 or 3 are decoded)")
        }
        guard header.precision == 8 else {
            throw .unsupportedBlock(path: path, ifd: ifd.path, block: name(block),
                                    reason: "\(header.precision)-bit DCT JPEG (only 8-bit lossy JPEG is decoded)")
        }
        guard header.width == block.width, header.height == block.rows, header.components == blockSPP else {
            throw .shortBlock(path: path, ifd: ifd.path, block: name(block),
                              reason: "JPEG frame \(header.width)×\(header.height)×\(header.components), the \(blockKind) needs \(block.width)×\(block.rows)×\(blockSPP)")
        }
        let count = block.width * block.rows * blockSPP
        var pixels = [UInt8](repeating: 0, count: count)
        var result = cjpeg_result()
        let status = pixels.withUnsafeMutableBufferPointer { out in
            file.withBytes(offset: block.offset, length: block.length) { raw in
                let data = raw.assumingMemoryBound(to: UInt8.self)
                if let tables = jpegTables, !tables.isEmpty {
                    return tables.withUnsafeBufferPointer { t in
                        cjpeg_decode(t.baseAddress, t.count, data.baseAddress, data.count, Int32(block.width),
                                     Int32(block.rows), Int32(blockSPP), out.baseAddress, out.count, &result)
                    }
                }
                return cjpeg_decode(nil, 0, data.baseAddress, data.count, Int32(block.width), Int32(block.rows),
                                    Int32(blockSPP), out.baseAddress, out.count, &result)
            }
        }
        let message = withUnsafeBytes(of: &result.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        switch Int(status) {
        case Int(CJPEG_OK): break
        case Int(CJPEG_SHAPE_MISMATCH):
            throw .shortBlock(path: path, ifd: ifd.path, block: name(block),
                              reason: "JPEG frame \(result.width)×\(result.height)×\(result.components), the \(blockKind) needs \(block.width)×\(block.rows)×\(blockSPP)")
        case Int(CJPEG_CORRUPT_DATA):
            throw corrupt("libjpeg: \(message)\(result.warnings > 1 ? " (and \(result.warnings - 1) more warnings)" : "")")
        default:
            throw corrupt("libjpeg: \(message)")
        }
        let rowStride = block.width * blockSPP
        pixels.withUnsafeBufferPointer { src in
            let s = src.baseAddress!
            for r in 0..<block.visibleRows {
                withDestinationRow(r, of: block, in: output, as: UInt16.self) { dst in
                    let row = s + r * rowStride
                    for i in 0..<(block.visibleWidth * blockSPP) { dst[i] = UInt16(row[i]) }
                }
            }
        }
    }
}

/// The frame header (SOFn) of a JPEG stream, found by walking its marker segments.
struct JPEGFrameInfo: Equatable {
    /// The SOF marker's second byte (0xC0 baseline, 0xC1 extended, 0xC2 progressive,
    /// 0xC3 lossless, ...).
    let marker: UInt8
    let precision: Int
    let height: Int
    let width: Int
    let components: Int

    /// The DCT-based Huffman processes decoded with libjpeg: baseline, extended sequential
    /// and progressive (arithmetic-coded and hierarchical ones are refused).
    static let dctMarkers: Set<UInt8> = [0xC0, 0xC1, 0xC2]

    /// The first frame header of `data`, or nil when the data is not a JPEG stream or ends
    /// before one. Every read is bounds-checked.
    static func find(in data: UnsafeRawBufferPointer) -> JPEGFrameInfo? {
        let n = data.count
        guard n >= 4, data[0] == 0xFF, data[1] == 0xD8 else { return nil }
        var at = 2
        while at + 1 < n {
            guard data[at] == 0xFF else { return nil }
            let marker = data[at + 1]
            at += 2
            if marker == 0xFF { at -= 1; continue }               // fill byte
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { continue }
            if marker == 0xD9 || marker == 0xDA { return nil }    // EOI or SOS before any frame
            guard at + 1 < n else { return nil }
            let length = Int(data[at]) << 8 | Int(data[at + 1])
            guard length >= 2, at + length <= n else { return nil }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard length >= 8 else { return nil }
                return JPEGFrameInfo(marker: marker, precision: Int(data[at + 2]),
                                     height: Int(data[at + 3]) << 8 | Int(data[at + 4]),
                                     width: Int(data[at + 5]) << 8 | Int(data[at + 6]),
                                     components: Int(data[at + 7]))
            }
            at += length
        }
        return nil
    }
}
