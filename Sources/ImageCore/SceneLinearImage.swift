/// What the colour values of an image mean.
public enum ColorEncoding: String, Sendable, Codable, CaseIterable {
    /// Extended linear Rec.2020 (ITU-R BT.2020 primaries, D65 white), scene-referred:
    /// the ASWF colour interop ID `lin_rec2020_scene`, OCIO's "Linear Rec.2020".
    case linearRec2020 = "lin_rec2020_scene"
    /// ACEScg: linear ACES AP1 primaries, ACES white (`lin_ap1_scene`).
    case acesCG = "lin_ap1_scene"
    /// ACES2065-1: linear ACES AP0 primaries, ACES white (`lin_ap0_scene`).
    case aces2065 = "lin_ap0_scene"
    /// Linear Rec.709 / sRGB primaries, D65 (`lin_rec709_scene`).
    case linearRec709 = "lin_rec709_scene"
    /// CIE 1931 XYZ, adapted to a D65 white (`lin_ciexyzd65_scene`); R, G, B hold X, Y, Z.
    case xyzD65 = "lin_ciexyzd65_scene"
    /// White-balanced camera-native RGB: the camera's own primaries, no matrix applied.
    case cameraNative = "camera_native_white_balanced"

    /// The name a colour-managed tool shows for this encoding (OCIO's built-in configs).
    public var displayName: String {
        switch self {
        case .linearRec2020: return "Linear Rec.2020"
        case .acesCG: return "ACEScg"
        case .aces2065: return "ACES2065-1"
        case .linearRec709: return "Linear Rec.709 (sRGB)"
        case .xyzD65: return "CIE XYZ-D65 - Scene-referred"
        case .cameraNative: return "white-balanced camera RGB"
        }
    }
}

/// Which exposure scaling has been applied to the linear reference values.
public enum ExposureMode: String, Sendable, Codable, CaseIterable {
    /// No scaling: 1.0 is the sensor white level after black subtraction.
    case none
    /// Multiplied by 2^(BaselineExposure + BaselineExposureOffset) (DNG tags 50730, 51109).
    case baseline
    /// Divided by the exposure: × f-number² / (exposure time · ISO/100), so captures with
    /// different settings can be compared (proportional to scene radiance).
    case normalized
    /// Absolute: luminance Y in cd/m² (R, G, B scaled alike), `factor` = K · 2^(BE + BEO) ·
    /// N² / (t · S) from a calibration or the exposure metadata (docs/photometry.md).
    case luminance
    /// Absolute, in Radiance's convention: W·sr⁻¹·m⁻², luminance = 179 lm/W × Y; `factor` is
    /// the luminance one divided by 179.
    case radiance

    /// Whether the values are in physical units.
    public var isAbsolute: Bool { self == .luminance || self == .radiance }

    /// The unit of the values, as every output records it.
    public var unitsText: String {
        switch self {
        case .none, .baseline, .normalized:
            return "DNG linear reference value x exposureFactor (1.0 = sensor white level after black subtraction)"
        case .luminance: return "cd/m^2 (luminance Y; R, G, B scaled alike); exposureFactor = cd/m^2 per linear reference value"
        case .radiance: return "W/(sr m^2) (Radiance convention: luminance = 179 lm/W x Y); exposureFactor = W/(sr m^2) per linear reference value"
        }
    }

    /// The unit's symbol: "cd/m²", "W·sr⁻¹·m⁻²", or "" for relative values.
    public var unitSymbol: String {
        switch self {
        case .luminance: return "cd/m²"
        case .radiance: return "W·sr⁻¹·m⁻²"
        default: return ""
        }
    }

    /// The luminance in cd/m² of RGB (1, 1, 1) (EXR `whiteLuminance`) in absolute units.
    public var whiteLuminance: Double? {
        switch self {
        case .luminance: return 1
        case .radiance: return Photometric.radianceEfficacy
        default: return nil
        }
    }
}

/// Constants of the absolute units.
public enum Photometric {
    /// Radiance's luminous efficacy of its white, lm/W (`WHTEFFICACY`): luminance =
    /// 179 × radiance.
    public static let radianceEfficacy = 179.0
}

/// An exposure scaling and the factor it applied. Dividing the image by `factor` gives back
/// the linear reference values (1.0 = sensor white after black subtraction).
public struct ExposureScaling: Sendable, Codable, Equatable {
    public var mode: ExposureMode
    public var factor: Double
    /// For absolute units: how `factor` was obtained (a calibration file and its constant,
    /// or the exposure metadata with the constants used).
    public var source: String?
    /// For absolute units: the relative standard uncertainty (k = 1) of `factor`.
    public var relativeUncertainty: Double?
    /// Its independent parts, as the uncertainty budget lists them (e.g. the calibration
    /// constant and the exposure settings); the parts add in quadrature to
    /// `relativeUncertainty`. Not stored in the files (they keep the combined value).
    public var uncertaintyParts: [UncertaintyPart]?

    /// One part of a scale's uncertainty.
    public struct UncertaintyPart: Sendable, Codable, Equatable {
        public var name: String
        public var relative: Double
        public var note: String

        public init(name: String, relative: Double, note: String) {
            self.name = name
            self.relative = relative
            self.note = note
        }
    }

    public init(mode: ExposureMode, factor: Double, source: String? = nil, relativeUncertainty: Double? = nil,
                uncertaintyParts: [UncertaintyPart]? = nil) {
        self.mode = mode
        self.factor = factor
        self.source = source
        self.relativeUncertainty = relativeUncertainty
        self.uncertaintyParts = uncertaintyParts
    }

    public static let none = ExposureScaling(mode: .none, factor: 1)

    /// The scaling with the part named `name` given another size and note (the others, and
    /// the combined uncertainty in quadrature, following); itself when it has no such part.
    public func replacing(_ name: String, relative: Double, note: String) -> ExposureScaling {
        guard var parts = uncertaintyParts, let k = parts.firstIndex(where: { $0.name == name }) else { return self }
        var s = self
        parts[k] = UncertaintyPart(name: name, relative: relative, note: note)
        s.uncertaintyParts = parts
        s.relativeUncertainty = parts.map { $0.relative * $0.relative }.reduce(0, +).squareRoot()
        return s
    }

    /// The scaling with one more independent part of its uncertainty (in quadrature; the
    /// parts listed so far, or the whole as "scale" when none are, kept before it).
    public func appending(_ part: UncertaintyPart) -> ExposureScaling {
        var s = self
        let u = relativeUncertainty ?? 0
        s.relativeUncertainty = (u * u + part.relative * part.relative).squareRoot()
        var parts = uncertaintyParts ?? []
        if parts.isEmpty, u > 0 { parts.append(.init(name: "scale", relative: u, note: source ?? "not recorded")) }
        s.uncertaintyParts = parts + [part]
        return s
    }
}

/// CIE 1931 xy chromaticities of linear Rec.2020 (ITU-R BT.2020) with a D65 white.
public enum Rec2020 {
    public static let red: SIMD2<Double> = [0.708, 0.292]
    public static let green: SIMD2<Double> = [0.170, 0.797]
    public static let blue: SIMD2<Double> = [0.131, 0.046]
    public static let white: SIMD2<Double> = [0.3127, 0.3290]
    /// Luminance weights Y = 0.2627 R + 0.6780 G + 0.0593 B.
    public static let luminanceWeights: SIMD3<Double> = [0.2627, 0.6780, 0.0593]
}

/// The scene-referred result of the pipeline: three `Float` channels per pixel, plus the
/// clip mask carried over from Stage 2.
///
/// Values are never clipped: negatives (noise around black, out-of-gamut colours) and
/// values above 1 are kept. The unit is the DNG linear reference value (1.0 = the sensor
/// white level after black subtraction) times `exposure.factor`.
public struct SceneLinearImage: Sendable {
    /// RGB, interleaved, row-major.
    public var pixels: ImageBuffer<Float>
    /// One byte per pixel, bit `c` set when camera channel `c` was at or above its white
    /// level in Stage 2 (its true value is unknown: a lower bound). `nil` when not known.
    public var clipMask: [UInt8]?
    public var encoding: ColorEncoding
    public var exposure: ExposureScaling
    public var provenance: ImageProvenance
    /// The DNG's semantic masks (sky, skin, hair, ...) on the same pixel grid as `pixels`,
    /// in file order; empty when the file has none or they were not asked for.
    public var masks: [SemanticMaskLayer] {
        didSet {
            for m in masks { precondition(m.width == pixels.width && m.height == pixels.height) }
        }
    }

    public init(pixels: ImageBuffer<Float>, clipMask: [UInt8]?, encoding: ColorEncoding,
                exposure: ExposureScaling, provenance: ImageProvenance, masks: [SemanticMaskLayer] = []) {
        checkSceneLinearLayout(width: pixels.width, height: pixels.height, channels: pixels.channels,
                               clipMask: clipMask, masks: masks)
        self.pixels = pixels
        self.clipMask = clipMask
        self.encoding = encoding
        self.exposure = exposure
        self.provenance = provenance
        self.masks = masks
    }

    public var width: Int { pixels.width }
    public var height: Int { pixels.height }

    /// Number of pixels with any clipped channel.
    public var clippedPixelCount: Int { clipMask?.reduce(0) { $0 + ($1 != 0 ? 1 : 0) } ?? 0 }
}

/// One semantic mask of an image (DNG 1.6: an IFD with NewSubFileType 65540), resampled onto
/// the image's pixel grid: a weight 0…1 per pixel (1 = the pixel shows what the mask names).
public struct SemanticMaskLayer: Sendable, Equatable {
    /// Short, stable layer name derived from `semanticName` (e.g. `sky`); unique within an
    /// image. EXR channel `mask.<name>.Y`, HDF5 dataset `/masks/<name>`.
    public var name: String
    /// The DNG SemanticName (tag 52526), e.g. `urn:com:apple:photo:2020:aux:semanticskymatte`;
    /// empty when the IFD has none.
    public var semanticName: String
    /// The DNG SemanticInstanceID (tag 52528); empty when the IFD has none.
    public var instanceID: String
    /// The IFD the mask was read from, e.g. `IFD0/SubIFD1`.
    public var sourceIFD: String
    /// The weights as they are held: `Float`, or half floats for a layer made only for the
    /// files written as their rows are made, which store masks in half floats (the same bits
    /// as rounding the `Float` weights, in half the memory).
    public enum Samples: Sendable {
        case float([Float])
        case half([Float16])
        /// One byte a weight: each weight is `levels[code]` (a mask of at most 256 levels,
        /// such as an 8-bit mask on the image's own grid, held for the files written as their
        /// rows are made: the same half floats in half their memory).
        case coded([UInt8], levels: [Float16])
    }
    public private(set) var samples: Samples
    /// The layer's size: the size of the image it belongs to.
    public private(set) var width: Int, height: Int

    /// One channel, the same size as the image it belongs to (half floats widened exactly;
    /// setting it holds `Float`).
    public var values: ImageBuffer<Float> {
        get {
            switch samples {
            case .float(let f): return ImageBuffer(width: width, height: height, channels: 1, samples: f)
            case .half(let h): return ImageBuffer(width: width, height: height, channels: 1, samples: HalfConversion.floats(h))
            case .coded(let codes, let levels):
                let widened = levels.map(Float.init)
                return ImageBuffer(width: width, height: height, channels: 1, samples: codes.map { widened[Int($0)] })
            }
        }
        set {
            precondition(newValue.channels == 1, "a mask layer has one channel")
            (width, height, samples) = (newValue.width, newValue.height, .float(newValue.samples))
        }
    }

    /// The weights in half floats, each rounded to nearest as every half-float output rounds them.
    public var halves: [Float16] {
        switch samples {
        case .float(let f): return HalfConversion.halves(f)
        case .half(let h): return h
        case .coded(let codes, let levels): return codes.map { levels[Int($0)] }
        }
    }

    public init(name: String, semanticName: String, instanceID: String = "", sourceIFD: String,
                values: ImageBuffer<Float>) {
        precondition(values.channels == 1, "a mask layer has one channel")
        self.name = name
        self.semanticName = semanticName
        self.instanceID = instanceID
        self.sourceIFD = sourceIFD
        (width, height, samples) = (values.width, values.height, .float(values.samples))
    }

    /// A layer held in half floats (`width` × `height` of them).
    public init(name: String, semanticName: String, instanceID: String = "", sourceIFD: String,
                width: Int, height: Int, halves: [Float16]) {
        precondition(halves.count == width * height, "a mask layer has one channel")
        self.name = name
        self.semanticName = semanticName
        self.instanceID = instanceID
        self.sourceIFD = sourceIFD
        (self.width, self.height, samples) = (width, height, .half(halves))
    }

    /// A layer held as one-byte codes of `levels` (`width` × `height` of them).
    public init(name: String, semanticName: String, instanceID: String = "", sourceIFD: String,
                width: Int, height: Int, codes: [UInt8], levels: [Float16]) {
        precondition(codes.count == width * height, "a mask layer has one channel")
        precondition(levels.count == 256, "one level for each byte")
        self.name = name
        self.semanticName = semanticName
        self.instanceID = instanceID
        self.sourceIFD = sourceIFD
        (self.width, self.height, samples) = (width, height, .coded(codes, levels: levels))
    }

    public static func == (a: SemanticMaskLayer, b: SemanticMaskLayer) -> Bool {
        a.name == b.name && a.semanticName == b.semanticName && a.instanceID == b.instanceID && a.sourceIFD == b.sourceIFD
            && a.width == b.width && a.height == b.height && a.values.samples == b.values.samples
    }
}

/// What every scene-linear image promises: three channels, and a clip mask and mask layers
/// of the image's size.
func checkSceneLinearLayout(width: Int, height: Int, channels: Int, clipMask: [UInt8]?, masks: [SemanticMaskLayer]) {
    precondition(channels == 3, "a scene-linear image has three channels")
    if let mask = clipMask { precondition(mask.count == width * height) }
    for m in masks { precondition(m.width == width && m.height == height) }
}
