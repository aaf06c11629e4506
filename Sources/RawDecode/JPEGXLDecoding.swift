internal import CJXL
import DNGContainer
import ImageCore

extension BlockPlan {
    // MARK: JPEG XL (compression 52546, DNG 1.7)

    /// Decodes a JPEG XL block (bare codestream or ISOBMFF container) with libjxl: on the
    /// calling thread when the image has at least as many blocks as there are threads (the
    /// blocks run in parallel), else with libjxl's own thread pool. The image must be
    /// exactly the block's size with `blockSPP` colour channels (1 or 3); extra channels
    /// (alpha, ...) are not part of the DNG samples and are ignored, as the Adobe DNG SDK
    /// does. Orientation stored in the codestream is not applied: the tile is taken as coded.
    ///
    /// Integer samples: a JPEG XL integer `v` of `B` bits stands for the nominal value
    /// `v / (2^B − 1)` in [0, 1]; the stored DNG sample is that value on the IFD's own
    /// `BitsPerSample` = `T` scale, `round(v × (2^T − 1) / (2^B − 1))`. This is the
    /// identity when `B = T` (what writers produce: the Adobe DNG SDK writes 8-bit
    /// codestreams for 8-bit data and 16-bit ones otherwise), and equals the Adobe DNG SDK's
    /// reading whenever `T` is 8 or 16. Floating-point images are read as `Float` (exact for
    /// float16).
    ///
    /// libjxl writes into a scratch buffer (not cleared first) from which the visible part is
    /// placed into the image, or, when the output is the block's own buffer (`outputIsBlock`,
    /// chunky) of the stream's own samples (16-bit integers, or floats), straight into that
    /// buffer. With a `decodeProgress` for an image of few blocks (`reportsDecodeProgress`),
    /// libjxl hands its rows over as it renders them (`JXLRowSink`) and the progress is told
    /// of each.
    func decodeJPEGXL(_ block: Block, into output: UnsafeMutableRawPointer) throws(RawDecodeError) {
        func corrupt(_ reason: String) -> RawDecodeError { jxlCorrupt(block, reason) }
        try loadJPEGXLLibrary(block)
        MallocThresholds.fixed
        guard let handle = JXLDecoder() else { throw corrupt("libjxl could not create a decoder") }
        let decoder = handle.decoder
        let events = Int32(JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_FULL_IMAGE.rawValue)
        guard JxlDecoderSubscribeEvents(decoder, events) == JXL_DEC_SUCCESS,
              JxlDecoderSetKeepOrientation(decoder, 1) == JXL_DEC_SUCCESS else {
            throw corrupt("libjxl rejected the decoder settings")
        }
        let threads = Parallel.threadCount
        if blocks.count < threads, let pool = JxlThreadParallelRunnerCreate(nil, threads) {
            handle.runner = pool
            guard JxlDecoderSetParallelRunner(decoder, JxlThreadParallelRunner, pool) == JXL_DEC_SUCCESS else {
                throw corrupt("libjxl rejected its thread pool")
            }
        }
        let samples = block.width * block.rows * blockSPP
        let isFloat = encoding.isFloat
        // The output: bytes (8-bit integers), UInt16 or Float, chosen from the basic info.
        var pixels: UnsafeMutableRawPointer?
        var format = JxlPixelFormat(num_channels: UInt32(blockSPP), data_type: JXL_TYPE_UINT16,
                                    endianness: JXL_NATIVE_ENDIAN, align: 0)
        var sawImage = false
        var streamBits = 0

        try withBytes(of: block) { (raw: UnsafeRawBufferPointer) throws(RawDecodeError) in
            let data = raw.assumingMemoryBound(to: UInt8.self)
            let signature = JxlSignatureCheck(data.baseAddress, data.count)
            guard signature == JXL_SIG_CODESTREAM || signature == JXL_SIG_CONTAINER else {
                throw corrupt(signature == JXL_SIG_NOT_ENOUGH_BYTES ? "too short to be a JPEG XL stream"
                                                                    : "not a JPEG XL codestream or container (no JPEG XL signature)")
            }
            guard JxlDecoderSetInput(decoder, data.baseAddress, data.count) == JXL_DEC_SUCCESS else {
                throw corrupt("libjxl rejected the input")
            }
            JxlDecoderCloseInput(decoder)
            // The input is valid only inside this closure: libjxl lets go of it before it ends.
            defer { _ = JxlDecoderReleaseInput(decoder) }
            loop: while true {
                let status = JxlDecoderProcessInput(decoder)
                switch status {
                case JXL_DEC_SUCCESS:
                    break loop
                case JXL_DEC_ERROR:
                    throw corrupt("libjxl could not decode the stream")
                case JXL_DEC_NEED_MORE_INPUT:
                    throw corrupt("the stream ends early (truncated JPEG XL data)")
                case JXL_DEC_BASIC_INFO:
                    var info = JxlBasicInfo()
                    guard JxlDecoderGetBasicInfo(decoder, &info) == JXL_DEC_SUCCESS else {
                        throw corrupt("libjxl could not read the basic info")
                    }
                    (format.data_type, streamBits) = try jxlSampleType(of: info, block)
                case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                    var needed = 0
                    guard JxlDecoderImageOutBufferSize(decoder, &format, &needed) == JXL_DEC_SUCCESS else {
                        throw corrupt("libjxl could not size the output")
                    }
                    let sampleBytes = format.data_type == JXL_TYPE_FLOAT ? 4 : format.data_type == JXL_TYPE_UINT8 ? 1 : 2
                    guard needed == samples * sampleBytes else {
                        throw corrupt("libjxl wants a \(needed)-byte output buffer for \(samples) samples")
                    }
                    let buffer: UnsafeMutableRawPointer
                    if let pixels {
                        buffer = pixels  // a later frame: the same buffer again
                    } else if outputIsBlock, !planar, format.data_type == (isFloat ? JXL_TYPE_FLOAT : JXL_TYPE_UINT16) {
                        buffer = output
                    } else {
                        buffer = .allocate(byteCount: needed, alignment: 64)
                        handle.scratch = buffer
                    }
                    pixels = buffer
                    if let decodeProgress, reportsDecodeProgress {
                        let sink = JXLRowSink(base: buffer, width: block.width, rows: block.rows,
                                              pixelBytes: blockSPP * sampleBytes, progress: decodeProgress)
                        handle.sink = sink
                        guard JxlDecoderSetImageOutCallback(decoder, &format, JXLRowSink.receive,
                                                            Unmanaged.passUnretained(sink).toOpaque()) == JXL_DEC_SUCCESS else {
                            throw corrupt("libjxl rejected the output callback")
                        }
                    } else {
                        guard JxlDecoderSetImageOutBuffer(decoder, &format, buffer, needed) == JXL_DEC_SUCCESS else {
                            throw corrupt("libjxl rejected the output buffer")
                        }
                    }
                case JXL_DEC_FULL_IMAGE:
                    sawImage = true
                default:
                    throw corrupt("unexpected libjxl decoder status \(status.rawValue)")
                }
            }
        }
        guard sawImage, let pixels else { throw corrupt("the stream holds no image frame") }
        guard handle.scratch != nil else { return }  // decoded in place
        placeJXL(pixels, type: format.data_type, streamBits: streamBits, block, into: output)
    }

    /// libjxl is loaded on first use (`CLazyLibraries`): a program that reads no JPEG XL never
    /// loads it, nor the libraries it needs. Where it cannot be loaded, JPEG XL is a feature
    /// this installation lacks, reported for the block as such.
    private func loadJPEGXLLibrary(_ block: Block) throws(RawDecodeError) {
        guard let reason = LazyLibrary.jpegXL.load() else { return }
        throw .unsupportedBlock(path: path, ifd: ifd.path, block: name(block), reason: "JPEG XL cannot be decoded: \(reason)")
    }

    private func jxlCorrupt(_ block: Block, _ reason: String) -> RawDecodeError {
        .corruptStream(path: path, ifd: ifd.path, block: name(block), codec: "JPEG XL", reason: reason)
    }

    /// Checks a stream's basic info against the block, and chooses the type libjxl writes:
    /// the stream's own 8- or 16-bit integers when they are the IFD's, else `Float` (floats,
    /// and integers to be rescaled from B to T bits). Returns it with the stream's depth B.
    private func jxlSampleType(of info: JxlBasicInfo, _ block: Block) throws(RawDecodeError) -> (JxlDataType, Int) {
        guard Int(info.xsize) == block.width, Int(info.ysize) == block.rows else {
            throw .shortBlock(path: path, ifd: ifd.path, block: name(block),
                              reason: "JPEG XL image \(info.xsize)×\(info.ysize), the \(blockKind) is \(block.width)×\(block.rows)")
        }
        guard Int(info.num_color_channels) == blockSPP else {
            throw .shortBlock(path: path, ifd: ifd.path, block: name(block),
                              reason: "JPEG XL image with \(info.num_color_channels) colour channels, the \(blockKind) has \(blockSPP) samples per pixel")
        }
        guard info.have_animation == 0 else {
            throw .unsupportedBlock(path: path, ifd: ifd.path, block: name(block),
                                    reason: "an animated JPEG XL stream (several frames)")
        }
        let isFloat = encoding.isFloat
        let streamIsFloat = info.exponent_bits_per_sample > 0
        guard streamIsFloat == isFloat else {
            throw jxlCorrupt(block, "the stream holds \(streamIsFloat ? "floating-point" : "integer") samples (\(info.bits_per_sample) bits), SampleFormat \(ifd.sampleFormat) says \(isFloat ? "floating point" : "integer")")
        }
        let streamBits = Int(info.bits_per_sample)
        if !isFloat, !(1...16).contains(streamBits) {
            throw .unsupportedBlock(path: path, ifd: ifd.path, block: name(block),
                                    reason: "\(streamBits)-bit integer JPEG XL samples (DNG allows up to 16)")
        }
        if !isFloat, streamBits == 8, encoding.bits == 8 { return (JXL_TYPE_UINT8, streamBits) }
        if !isFloat, streamBits == 16, encoding.bits == 16 { return (JXL_TYPE_UINT16, streamBits) }
        return (JXL_TYPE_FLOAT, streamBits)
    }

    /// The visible part of a decoded block from libjxl's scratch buffer into the image.
    private func placeJXL(_ pixels: UnsafeMutableRawPointer, type: JxlDataType, streamBits: Int, _ block: Block,
                          into output: UnsafeMutableRawPointer) {
        let rowStride = block.width * blockSPP
        switch type {
        case JXL_TYPE_FLOAT where encoding.isFloat:
            place(UnsafePointer(pixels.assumingMemoryBound(to: Float.self)), rowStride: rowStride, block, into: output)
        case JXL_TYPE_FLOAT:
            rescale(UnsafePointer(pixels.assumingMemoryBound(to: Float.self)), streamBits: streamBits, rowStride: rowStride,
                    block, into: output)
        case JXL_TYPE_UINT8:
            let src = UnsafePointer(pixels.assumingMemoryBound(to: UInt8.self))
            let count = block.visibleWidth * blockSPP
            for r in 0..<block.visibleRows {
                withDestinationRow(r, of: block, in: output, as: UInt16.self) { dst in
                    let row = src + r * rowStride
                    for i in 0..<count { dst[i] = UInt16(row[i]) }
                }
            }
        default:
            place(UnsafePointer(pixels.assumingMemoryBound(to: UInt16.self)), rowStride: rowStride, block, into: output)
        }
    }

    /// Nominal [0, 1] values of a `streamBits`-bit integer stream → the stream's integers
    /// `v` (Float's error is far below 1/2 at up to 16 bits) → `round(v × (2^T − 1) /
    /// (2^B − 1))` on the IFD's BitsPerSample scale, in exact integer arithmetic.
    private func rescale(_ values: UnsafePointer<Float>, streamBits: Int, rowStride: Int, _ block: Block,
                         into output: UnsafeMutableRawPointer) {
        let streamTop: Int = (1 << streamBits) - 1
        let top: Int = (1 << encoding.bits) - 1
        let scale = Float(streamTop)
        let count: Int = block.visibleWidth * blockSPP
        for r in 0..<block.visibleRows {
            let row: UnsafePointer<Float> = values + r * rowStride
            withDestinationRow(r, of: block, in: output, as: UInt16.self) { dst in
                for i in 0..<count {
                    let nominal: Float = Swift.min(Swift.max(row[i], 0), 1)
                    let v = Int((nominal * scale).rounded())
                    let scaled: Int = (2 * v * top + streamTop) / (2 * streamTop)
                    dst[i] = UInt16(scaled)
                }
            }
        }
    }
}

/// One libjxl decoder, the owner of everything libjxl holds a pointer to: its thread pool,
/// the scratch output buffer and the row sink. They go away together, the decoder first, so
/// libjxl never holds the address of memory already freed.
final class JXLDecoder {
    let decoder: OpaquePointer
    var runner: UnsafeMutableRawPointer?
    var scratch: UnsafeMutableRawPointer?
    var sink: JXLRowSink?

    init?() {
        guard let decoder = JxlDecoderCreate(nil) else { return nil }
        self.decoder = decoder
    }

    deinit {
        JxlDecoderDestroy(decoder)
        if let runner { JxlThreadParallelRunnerDestroy(runner) }
        scratch?.deallocate()
    }
}

/// Where libjxl's image-out callback puts the rows it renders, from its own threads (each
/// call a run of pixels of one row, different calls different pixels): into the output
/// buffer of `width` × `rows` pixels, `pixelBytes` each, and their count on to `progress`.
/// A run outside the buffer — which libjxl, whose image was checked to be the block's
/// size, does not send — is dropped rather than written.
final class JXLRowSink {
    let base: UnsafeMutableRawPointer
    let width: Int, rows: Int, pixelBytes: Int
    let progress: RawDecoder.DecodeProgress

    init(base: UnsafeMutableRawPointer, width: Int, rows: Int, pixelBytes: Int, progress: @escaping RawDecoder.DecodeProgress) {
        (self.base, self.width, self.rows, self.pixelBytes, self.progress) = (base, width, rows, pixelBytes, progress)
    }

    /// The callback libjxl calls, `opaque` the sink.
    static let receive: JxlImageOutCallback = { opaque, x, y, count, pixels in
        guard let opaque, let pixels else { return }
        let sink = Unmanaged<JXLRowSink>.fromOpaque(opaque).takeUnretainedValue()
        guard y < sink.rows, x <= sink.width, count <= sink.width - x else { return }
        (sink.base + (y * sink.width + x) * sink.pixelBytes).copyMemory(from: pixels, byteCount: count * sink.pixelBytes)
        sink.progress(count)
    }
}
