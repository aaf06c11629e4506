import Foundation

/// A Stage 2 image made outside the file — a merged bracket of raw frames — to be developed
/// by the one conversion in place of the file's own Stage 2: OpcodeList2 is taken as
/// applied (the merge applies each frame's), OpcodeList3, demosaicing, colour, crop and
/// orientation are the file's.
public struct Stage2Replacement: Sendable {
    /// What the output channels are made of.
    public enum Matrix: Sendable {
        /// The file's camera → output matrix with its exposure factor: the image itself.
        case color
        /// That matrix's entries squared: the variances of independent camera planes
        /// carried to the variances of the output channels.
        case squared
        /// The camera planes as they are (e.g. a count per plane).
        case identity
    }

    /// The ActiveArea's planes (the file's size and samples per pixel), with its clip mask.
    public var image: LinearImage
    public var matrix: Matrix

    public init(image: LinearImage, matrix: Matrix) {
        self.image = image
        self.matrix = matrix
    }
}

extension Pipeline {
    /// Develops `replacement` as `dng`'s Stage 2 into `Float` output (see `Stage2Replacement`);
    /// the file is not decoded, its digest not checked.
    public static func develop(_ dng: DNGFile, replacing replacement: Stage2Replacement, options: DevelopOptions,
                               hash: Bool) throws -> DevelopedImage {
        var o = options
        o.digest = .skip
        let s = try stream(dng, options: o, keepClipMask: replacement.matrix == .color, timings: StageTimings(), as: Float.self,
                           convert: { source, target in _ = target.initialize(from: source) }, hash: hash,
                           replacing: replacement)
        let image = SceneLinearImage(pixels: ImageBuffer(width: s.width, height: s.height, channels: 3, samples: s.pixels),
                                     clipMask: s.clipMask, encoding: s.color.encoding, exposure: s.exposure,
                                     provenance: s.provenance, masks: s.masks)
        return DevelopedImage(image: image, dng: dng, rawIFD: s.raw, mapping: s.mapping, color: s.color, geometry: s.geometry,
                              timings: s.timings)
    }
}

/// One raw frame's Stage 2, as a merge of frames takes it: the ActiveArea's linear
/// reference values with OpcodeList1 and OpcodeList2 applied and the clip mask, row by row
/// (`row`), and the gain OpcodeList2 applied to each sample (nil without a list). Frames
/// stored in 16-bit samples keep them (2 bytes per sample) and linearize a row when it is
/// read; others are linearized whole (4 bytes per sample).
public struct FrameStage2: Sendable {
    enum Storage: Sendable {
        /// The decoded 16-bit samples (OpcodeList1 applied), read through the plan; OpcodeList2
        /// applied as its gains.
        case stored(ImageBuffer<UInt16>, LinearizationPlan)
        case linear(LinearImage)
    }
    let storage: Storage
    /// The frame's raw-data digest check: "verified", "absent", "not checked", "mismatch, ignored".
    public var digest = "not checked"
    /// Per sample (planes interleaved, ActiveArea rows): OpcodeList2's factor, read as the list
    /// applied to an image of ones (a GainMap's gain).
    public let gains: [Float]?
    public let raw: ImageIFD
    public let mapping: LinearizationMapping
    public let width: Int, height: Int, planes: Int

    /// Writes ActiveArea row `y`: `width × planes` values (OpcodeList2 applied) and `width`
    /// clip-mask bytes.
    public func row(_ y: Int, values: UnsafeMutablePointer<Float>, clip: UnsafeMutablePointer<UInt8>) {
        switch storage {
        case .stored(let samples, let plan):
            let area = mapping.activeArea, spp = samples.channels
            samples.samples.withUnsafeBufferPointer { s in
                let first = s.baseAddress! + ((y + area.top) * samples.width + area.left) * spp
                plan.linearize(first, rowStride: samples.width * spp, rows: y..<(y + 1), columns: 0..<width, into: values, mask: clip)
            }
            if let gains {
                gains.withUnsafeBufferPointer { g in
                    let base = y * width * planes
                    for i in 0..<(width * planes) { values[i] *= g[base + i] }
                }
            }
        case .linear(let image):
            image.values.samples.withUnsafeBufferPointer { v in
                (values).update(from: v.baseAddress! + y * width * planes, count: width * planes)
            }
            image.clipMask.withUnsafeBufferPointer { c in clip.update(from: c.baseAddress! + y * width, count: width) }
        }
    }
}

extension Pipeline {
    /// The Stage 2 of `dng`'s raw image (see `FrameStage2`), under `options.limits`.
    /// - Throws: the decoder's errors; `RawDecodeError.unsupported` for an OpcodeList2 that
    ///   crops (TrimBounds), which frames merged pixel by pixel cannot have.
    public static func frameStage2(_ dng: DNGFile, options: DevelopOptions) throws -> FrameStage2 {
        let raw = try dng.mainRawImage()
        try checkLimits(raw, path: dng.path, options: options)
        var notes: [MetadataItem] = []
        // The raw-data digest is checked as in a conversion: a damaged frame is refused (exit 13).
        let expectation = try digestExpectation(dng, raw: raw, main: raw, options: options)
        let digester = try expectation?.makeDigester(dng)
        var stored = try RawDecoder.decode(dng, ifd: raw, limits: options.limits, digester: digester)
        let digestItems = try checkDigests(dng, raw: raw, main: raw, expectation: expectation, imageDigest: digester?.finish(),
                                           options: options)
        try dng.file.checkIntact()
        try applyOpcodeList1(dng: dng, raw: raw, to: &stored, clipping: options.opcodeClipping, notes: &notes)
        let plan = try LinearizationPlan(ifd: raw, path: dng.path)
        let area = raw.activeArea, planes = raw.samplesPerPixel
        var gains: [Float]?
        if try dng.opcodeListBytes(2, of: raw) != nil {
            var ones = LinearImage(ifd: raw, values: ImageBuffer(width: area.width, height: area.height, channels: planes,
                                                                 samples: [Float](repeating: 1, count: area.width * area.height * planes)),
                                   clipMask: [UInt8](repeating: 0, count: area.width * area.height), mapping: plan.mapping)
            if try applyOpcodeList(2, dng: dng, raw: raw, to: &ones, clipping: .keepRange, notes: &notes) != nil {
                throw RawDecodeError.unsupported(path: dng.path, ifd: raw.path,
                                                 reason: "OpcodeList2 crops the image (TrimBounds): frames merged pixel by pixel must keep their ActiveArea")
            }
            gains = ones.values.samples
        }
        let storage: FrameStage2.Storage
        if let samples = stored.uint16 {
            storage = .stored(samples, plan)
        } else {
            var linear = try Linearizer.linearize(stored, path: dng.path)
            if let gains { for i in linear.values.samples.indices { linear.values.samples[i] *= gains[i] } }
            storage = .linear(linear)
        }
        var frame = FrameStage2(storage: storage, gains: gains, raw: raw, mapping: plan.mapping, width: area.width, height: area.height,
                                planes: planes)
        frame.digest = digestItems.first { $0.key == "digest" }.map { "\($0.value)" } ?? "absent"
        return frame
    }
}
