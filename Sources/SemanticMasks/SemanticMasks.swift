import DNGContainer
import ImageCore
import ImageGeometry
import RawDecode

/// Why a semantic mask could not be used: the mask's own failure (truncated, corrupt,
/// unsupported, ...), which keeps its category and so its exit code, with the mask named
/// and the way to convert without masks.
public struct SemanticMaskError: SceneLinearFailure {
    public let path: String
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
        let ifd = stored.ifd
        guard stored.channels == 1 else {
            throw RawDecodeError.unsupported(path: path, ifd: ifd.path,
                                             reason: "a semantic mask with \(stored.channels) samples per pixel (1 expected)")
        }
        let bits = ifd.bitsPerSample.first ?? 8
        let scale = Float(1 / (pow2(bits) - 1))
        switch stored.samples {
        case .uint16(let b):
            // In parallel chunks, into memory written only once (a mask can be the size of the image).
            let values = LargeBuffer.make(Float.self, count: b.samples.count, reading: b.samples) { range, codes, out in
                for i in range { out[i] = Float(codes[i]) * scale }
            }
            return ImageBuffer(width: b.width, height: b.height, channels: 1, samples: values)
        case .uint32(let b):
            let s = 1 / (pow2(bits) - 1)
            return ImageBuffer(width: b.width, height: b.height, channels: 1, samples: b.samples.map { Float(Double($0) * s) })
        case .float32(let b):
            return b
        }
    }

    private static func pow2(_ bits: Int) -> Double { Double(UInt64(1) << UInt64(min(max(bits, 1), 32))) }

    /// Decodes the semantic mask `ifd` of `dng` as 0…1 values at its stored size.
    /// - Throws: `SemanticMaskError` wrapping the decoder's error.
    public static func decode(_ dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits = DecodeLimits()) throws -> ImageBuffer<Float> {
        try decodeWithKind(dng, ifd: ifd, limits: limits).values
    }

    /// `decode`, and whether the mask was stored in integers (its values then finite, at
    /// least +0).
    static func decodeWithKind(_ dng: DNGFile, ifd: ImageIFD, limits: DecodeLimits) throws -> (values: ImageBuffer<Float>, integers: Bool) {
        do {
            let stored = try RawDecoder.decodeAnyImage(dng, ifd: ifd, limits: limits)
            return (try unitValues(stored, path: dng.path), stored.samples.type != .float32)
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
    /// `MaskResampler`) and transformed by `plan` exactly as the image is.
    /// - Throws: `SemanticMaskError` for the first mask that cannot be decoded.
    public static func layers(_ dng: DNGFile, grid: Stage3Grid, plan: GeometryPlan,
                              limits: DecodeLimits = DecodeLimits()) throws -> [SemanticMaskLayer] {
        let masks = dng.maskIFDs
        let names = layerNames(dng)
        var out: [SemanticMaskLayer] = []
        for (ifd, name) in zip(masks, names) {
            let (values, integers) = try decodeWithKind(dng, ifd: ifd, limits: limits)
            var subArea: MaskSubArea?
            if case .subArea(let a) = MaskSubArea.read(ifd.maskSubArea, maskWidth: values.width, maskHeight: values.height) {
                subArea = a
            }
            // A mask stored on the grid itself is its own resampling (no second mask-sized buffer).
            let onGrid = integers && MaskResampler.isIdentity(width: values.width, height: values.height, subArea: subArea, onto: grid)
                ? values : MaskResampler.resample(values, subArea: subArea, onto: grid)
            out.append(SemanticMaskLayer(name: name, semanticName: semanticName(of: ifd), instanceID: ifd.semanticInstanceID ?? "",
                                         sourceIFD: ifd.path, values: ImageGeometry.apply(plan, to: onGrid)))
        }
        return out
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
