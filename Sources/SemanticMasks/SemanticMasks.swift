import DNGContainer
import ImageCore
import ImageGeometry
import RawDecode
import Synchronization

/// Why a semantic mask could not be used: the mask's own failure (truncated, corrupt,
/// unsupported, ...), which keeps its category and so its exit code, with the mask named
/// and the way to convert without masks.
public struct SemanticMaskError: SceneLinearFailure {
    public let path: String
    public var file: String? { path }
    public let ifd: String
    public let semanticName: String
    public let underlying: any SceneLinearFailure

    public init(path: String, ifd: String, semanticName: String, underlying: any SceneLinearFailure) {
        self.path = path
        self.ifd = ifd
        self.semanticName = semanticName
        self.underlying = underlying
    }

    public var category: FailureCategory { underlying.category }
    public var description: String {
        let name = semanticName.isEmpty ? "" : " \(semanticName)"
        let text = underlying.description
        let named = text.hasPrefix(path) ? text : "\(path): \(text)"
        return "\(named) (mask\(name) in \(ifd); convert with --no-masks to leave the masks out)"
    }
}

/// DNG 1.6 semantic masks (NewSubFileType 65540, PhotometricInterpretation 52527): decoded,
/// scaled to 0…1, resampled onto the Stage 3 grid and given the output geometry, so each
/// mask matches the scene-linear image pixel for pixel.
public enum SemanticMasks {
    /// The mask values as 0…1: unsigned integers divided by 2^BitsPerSample − 1, floating
    /// point values as they are.
    /// - Throws: `RawDecodeError.unsupported` for a mask with more than one sample per pixel.
    public static func unitValues(_ stored: StoredImage, path: String) throws -> ImageBuffer<Float> {
        let scale = try unitScale(stored, path: path)
        switch stored.samples {
        case .uint16(let b):
            // In parallel chunks, into memory written only once (a mask can be the size of the image).
            let values = LargeBuffer.make(Float.self, count: b.samples.count, reading: b.samples) { range, codes, out in
                for i in range { out[i] = Float(codes[i]) * Float(scale) }
            }
            return ImageBuffer(width: b.width, height: b.height, channels: 1, samples: values)
        case .uint32(let b):
            return ImageBuffer(width: b.width, height: b.height, channels: 1, samples: b.samples.map { Float(Double($0) * scale) })
        case .float32(let b):
            return b
        }
    }

    /// `unitValues` of 16-bit codes rounded to half floats, as every half-float output rounds
    /// them, without a `Float` image between.
    static func unitHalves(_ codes: ImageBuffer<UInt16>, scale: Double) -> ImageBuffer<Float16> {
        let halves = LargeBuffer.make(Float16.self, count: codes.samples.count, reading: codes.samples) { range, codes, out in
            var values = [Float](repeating: 0, count: 4096)
            values.withUnsafeMutableBufferPointer { v in
                for start in stride(from: range.lowerBound, to: range.upperBound, by: v.count) {
                    let n = min(v.count, range.upperBound - start)
                    for k in 0..<n { v[k] = Float(codes[start + k]) * Float(scale) }
                    _ = HalfConversion.convert(UnsafeBufferPointer(rebasing: v[0..<n]), to: UnsafeMutableBufferPointer(start: out + start, count: n))
                }
            }
        }
        return ImageBuffer(width: codes.width, height: codes.height, channels: 1, samples: halves)
    }

    /// What an unsigned integer code is multiplied by to give 0…1: 1 / (2^BitsPerSample − 1).
    /// - Throws: `RawDecodeError.unsupported` for a mask with more than one sample per pixel.
    static func unitScale(_ stored: StoredImage, path: String) throws -> Double {
        guard stored.channels == 1 else {
            throw RawDecodeError.unsupported(path: path, ifd: stored.ifd.path,
                                             reason: "a semantic mask with \(stored.channels) samples per pixel (1 expected)")
        }
        return 1 / (pow2(stored.ifd.bitsPerSample.first ?? 8) - 1)
    }

    private static func pow2(_ bits: Int) -> Double { Double(UInt64(1) << UInt64(min(max(bits, 1), 32))) }

    /// Decodes the semantic mask `ifd` of `dng` as 0…1 values at its stored size.
    /// - Throws: `SemanticMaskError` wrapping the decoder's error.
    public static func decode(_ dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits = DecodeLimits()) throws -> ImageBuffer<Float> {
        try naming(ifd, of: dng) { try unitValues(RawDecoder.decodeAnyImage(dng, ifd: ifd, limits: limits), path: dng.path) }
    }

    /// `body`, its failures wrapped in a `SemanticMaskError` naming mask `ifd`.
    static func naming<T>(_ ifd: ImageIFD, of dng: DNGFile, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as any SceneLinearFailure {
            throw SemanticMaskError(path: dng.path, ifd: ifd.path, semanticName: ifd.semanticName ?? "", underlying: failure)
        }
    }

    /// What a layer records as its SemanticName: the URN, or for the transparency mask
    /// (which has none) a description.
    public static func semanticName(of ifd: ImageIFD) -> String {
        ifd.role == .transparencyMask ? (ifd.semanticName ?? "transparency mask (NewSubFileType 4)") : ifd.semanticName ?? ""
    }

    /// The layer names of the file's mask layers (semantic masks and the transparency mask,
    /// which is named `transparency`), in file order (see `MaskNaming`).
    public static func layerNames(_ dng: DNGFile) -> [String] {
        MaskNaming.layerNames(dng.maskIFDs.map { ($0.role == .transparencyMask ? "transparency" : $0.semanticName, $0.semanticInstanceID) })
    }

    /// Every semantic mask of `dng` on the output grid: decoded, resampled onto `grid` (see
    /// `MaskResampler`) and transformed by `plan` exactly as the image is; held in half floats
    /// when `half` (for outputs that store them so: the same bits, half the memory).
    /// - Throws: `SemanticMaskError` for the first mask that cannot be decoded.
    public static func layers(_ dng: DNGFile, grid: Stage3Grid, plan: GeometryPlan, limits: DecodeLimits = DecodeLimits(),
                              half: Bool = false) throws -> [SemanticMaskLayer] {
        try zip(dng.maskIFDs, layerNames(dng)).map { ifd, name in
            try naming(ifd, of: dng) {
                let bytes = half ? try byteCodes(dng, ifd: ifd, grid: grid, plan: plan, limits: limits) : nil
                let placed = try bytes ?? layerValues(RawDecoder.decodeAnyImage(dng, ifd: ifd, limits: limits), grid: grid, plan: plan,
                                                      half: half, path: dng.path)
                let (semantic, instance) = (semanticName(of: ifd), ifd.semanticInstanceID ?? "")
                switch placed {
                case .float(let v):
                    return SemanticMaskLayer(name: name, semanticName: semantic, instanceID: instance, sourceIFD: ifd.path, values: v)
                case .half(let h):
                    return SemanticMaskLayer(name: name, semanticName: semantic, instanceID: instance, sourceIFD: ifd.path,
                                             width: h.width, height: h.height, halves: h.samples)
                case .coded(let codes, let levels):
                    return SemanticMaskLayer(name: name, semanticName: semantic, instanceID: instance, sourceIFD: ifd.path,
                                             width: codes.width, height: codes.height, codes: codes.samples, levels: levels)
                }
            }
        }
    }

    enum Placed {
        case float(ImageBuffer<Float>)
        case half(ImageBuffer<Float16>)
        /// Codes of at most 256 levels and each level's half float.
        case coded(ImageBuffer<UInt8>, levels: [Float16])
    }

    /// A mask of unsigned integers of at most 8 bits stored on the output grid itself, with a
    /// geometry that only crops and turns, decoded block by block straight into one byte a
    /// pixel with its 256 levels' half floats (the weights `layerValues` would round to half,
    /// in a quarter of its memory and without the mask's 16-bit codes held whole); nil for
    /// any other mask, or one that `RawDecoder.forEachBlock` does not decode block by block.
    ///
    /// A JPEG XL mask's tiles are decoded one after another on the calling thread: libjxl's
    /// frame buffers for a tile are tens of megabytes, and freed on a worker thread they stay
    /// at the top of that thread's malloc arena, which `malloc_trim` does not shrink, for the
    /// rest of the conversion (about 40 MB more at the peak of 02_jxl_linear_raw_float.dng,
    /// against 0.05 s more time; docs/performance.md).
    static func byteCodes(_ dng: DNGFile, ifd: ImageIFD, grid: Stage3Grid, plan: GeometryPlan, limits: DecodeLimits) throws -> Placed? {
        let (width, height) = (ifd.width, ifd.height), bits = ifd.bitsPerSample.first ?? 8
        guard ifd.samplesPerPixel == 1, ifd.sampleFormat == 1, (1...8).contains(bits), !plan.resamples,
              MaskResampler.isIdentity(width: width, height: height, subArea: subArea(of: ifd, width: width, height: height),
                                       onto: grid) else { return nil }
        var codes = LargeBuffer.uninitialized(UInt8.self, count: width * height)
        let wide = Atomic(false)
        let threads = ifd.compression == Compression.jpegXL ? 1 : Parallel.threadCount
        let decoded = try codes.withUnsafeMutableBufferPointer { out in
            let view = PixelView(out, width: width, height: height)
            return try Parallel.withThreadCount(threads) {
                try RawDecoder.forEachBlock(dng, ifd: ifd, limits: limits, anyImage: true) { region, samples, rowStride, _ in
                    // Held as 16-bit codes; none above 255 from a decoder of at most 8 bits.
                    guard let p = samples.uint16 else { return wide.store(true, ordering: .relaxed) }
                    var largest: UInt16 = 0
                    for y in 0..<region.height {
                        let from = p + y * rowStride, to = view.pixel(region.left, region.top + y)
                        for x in 0..<region.width {
                            largest = max(largest, from[x])
                            to[x] = UInt8(truncatingIfNeeded: from[x])
                        }
                    }
                    if largest > 255 { wide.store(true, ordering: .relaxed) }
                }
            }
        }
        guard decoded, !wide.load(ordering: .relaxed) else { return nil }
        let levels = unitHalves(ImageBuffer(width: 256, height: 1, channels: 1, samples: (0...255).map(UInt16.init)),
                                scale: 1 / (Double(1 << bits) - 1))
        return .coded(ImageGeometry.apply(plan, toMask: ImageBuffer(width: width, height: height, channels: 1, samples: codes)),
                      levels: levels.samples)
    }

    /// The sub-area of the mask `ifd`, stored `width` × `height`, as it is used: nil when the
    /// mask has none or it is ignored (`MaskSubArea.read`).
    static func subArea(of ifd: ImageIFD, width: Int, height: Int) -> MaskSubArea? {
        if case .subArea(let a) = MaskSubArea.read(ifd.maskSubArea, maskWidth: width, maskHeight: height) { return a }
        return nil
    }

    /// One decoded mask on the output grid. A mask of integers stored on the grid itself is its
    /// own resampling (no second mask-sized buffer); asked for half floats with a geometry that
    /// only crops and turns, its 16-bit codes go straight to half floats.
    static func layerValues(_ stored: StoredImage, grid: Stage3Grid, plan: GeometryPlan, half: Bool, path: String) throws -> Placed {
        let scale = try unitScale(stored, path: path)
        let (width, height) = (stored.samples.width, stored.samples.height)
        let subArea = subArea(of: stored.ifd, width: width, height: height)
        let onItsGrid = stored.samples.type != .float32 && MaskResampler.isIdentity(width: width, height: height, subArea: subArea, onto: grid)
        if half, onItsGrid, !plan.resamples, case .uint16(let codes) = stored.samples {
            return .half(ImageGeometry.apply(plan, to: unitHalves(codes, scale: scale)))
        }
        let values = try unitValues(stored, path: path)
        let placed = ImageGeometry.apply(plan, to: onItsGrid ? values : MaskResampler.resample(values, subArea: subArea, onto: grid))
        guard half else { return .float(placed) }
        return .half(ImageBuffer(width: placed.width, height: placed.height, channels: 1, samples: HalfConversion.halves(placed.samples)))
    }
}

/// How one semantic mask maps onto the image, for `info`.
public struct MaskGeometry: Sendable, Codable, Equatable {
    /// The mask's IFD.
    public var ifd: String
    /// The layer name in outputs (`mask.<layer>.Y`, `/masks/<layer>`).
    public var layer: String
    public var semanticName: String?
    public var instanceID: String?
    /// Stored size of the mask.
    public var maskWidth: Int
    public var maskHeight: Int
    /// The MaskSubArea values as found (top, left, full width, full height).
    public var maskSubArea: [Int]?
    /// "absent", "used" or "ignored: <why>".
    public var maskSubAreaUse: String
    /// Size of the mask space stretched over the main image.
    public var maskSpaceWidth: Int
    public var maskSpaceHeight: Int
    /// The area the mask space covers: the main image's ActiveArea, in raw pixels.
    public var coversWidth: Int
    public var coversHeight: Int
    /// Size of the mask in the output of a default conversion (DefaultCrop, DefaultUserCrop,
    /// DefaultScale, Orientation; full-size demosaicing); nil when the crop tags are invalid.
    public var outputWidth: Int?
    public var outputHeight: Int?
    /// The orientation of that output (1–8).
    public var outputOrientation: Int?

    /// The geometry of every semantic mask of `dng` relative to its main raw image (nil
    /// without one).
    public static func describe(_ dng: DNGFile) -> [MaskGeometry] {
        let masks = dng.maskIFDs
        let names = SemanticMasks.layerNames(dng)
        let raw = try? dng.mainRawImage()
        var plan: GeometryPlan?
        if let raw {
            plan = try? ImageGeometry.plan(ifd: raw, orientation: dng.metadata.orientation, width: raw.activeArea.width,
                                           height: raw.activeArea.height, path: dng.path)
        }
        return zip(masks, names).map { ifd, name in
            let reading = MaskSubArea.read(ifd.maskSubArea, maskWidth: ifd.width, maskHeight: ifd.height)
            var space = (ifd.width, ifd.height)
            let use: String
            switch reading {
            case .absent: use = "absent"
            case .subArea(let a):
                use = "used"
                space = (a.fullWidth, a.fullHeight)
            case .ignored(let why): use = "ignored: \(why)"
            }
            return MaskGeometry(ifd: ifd.path, layer: name, semanticName: ifd.semanticName, instanceID: ifd.semanticInstanceID,
                                maskWidth: ifd.width, maskHeight: ifd.height, maskSubArea: ifd.maskSubArea, maskSubAreaUse: use,
                                maskSpaceWidth: space.0, maskSpaceHeight: space.1,
                                coversWidth: raw?.activeArea.width ?? 0, coversHeight: raw?.activeArea.height ?? 0,
                                outputWidth: plan?.outputWidth, outputHeight: plan?.outputHeight,
                                outputOrientation: plan?.orientation)
        }
    }
}
