import Foundation
import ImageCore

/// A camera to simulate: exposure, sensor, noise, ADC, colour and storage, all in one
/// JSON-serialisable description. The defaults describe a ProRAW-like phone camera.
///
/// Signal chain, per pixel and channel (c = camera channel of linear Rec.2020 radiance L,
/// `c = M_cam · L`):
///
/// 1. electrons: `μ = c · quantumScale · exposureTime / fNumber²` (+ dark current · t), with
///    photo-response non-uniformity `× (1 + prnu · z)` and a fixed offset `dsnu · z'` (z, z'
///    fixed standard-normal per pixel), then Poisson shot noise and Gaussian read noise
///    (electrons), clipped to the full-well capacity;
/// 2. digital numbers: `DN = black + gain · e`, `gain = (adcMax − black) / fullWell ·
///    iso / baseISO`, rounded and clipped to 0 … adcMax;
/// 3. storage: DN directly (`companding == nil`) or through a `CompandingCurve` of
///    `companding` bits to the nearest code (like ProRAW).
///
/// The DNG records WhiteLevel = min(adcMax, black + gain · fullWell) and a NoiseProfile
/// consistent with steps 1–2: `S = gain / (W − B)`, `O = (gain² (σ_read² + dark · t) + 1/12) / (W − B)²`
/// (the white, temporal part of the noise; PRNU and DSNU are fixed patterns, which the DNG
/// noise model leaves out).
public struct CameraModel: Codable, Sendable, Equatable {
    /// "linear-raw" (three samples per pixel, like ProRAW) or "cfa".
    public var layout = "linear-raw"
    /// Bayer phase for CFA: RGGB, BGGR, GRBG or GBRG.
    public var cfaPattern = "RGGB"

    public var exposureTime = 0.01
    public var fNumber = 1.8
    public var iso = 100.0
    public var baseISO = 100.0
    /// The sensor's ISO 12232 saturation-based speed against its ISO label, in stops: −⅓
    /// (the default) is a sensor ⅓ stop less sensitive than its label says, as measured
    /// cameras often are. It sets the scene's absolute luminance (the truth record's
    /// `photometry`), not the raw data.
    public var sensitivityOffset = -1.0 / 3
    /// Electrons per second per unit radiance at f/1. `nil`: chosen so that radiance 1.0 at
    /// this camera's exposure time and f-number just reaches the full well at base ISO.
    public var quantumScale: Double?

    public var fullWell = 12000.0
    /// Read noise, electrons RMS.
    public var readNoise = 2.5
    /// Dark current, electrons per second.
    public var darkCurrent = 0.0
    /// Photo-response non-uniformity: relative standard deviation of the pixel gain.
    public var prnu = 0.0
    /// Dark-signal non-uniformity: standard deviation of a fixed per-pixel offset, electrons.
    public var dsnu = 0.0

    public var adcBits = 14
    /// Black level, DN.
    public var blackLevel = 512.0
    /// Bits of the stored codes when companding (12 like ProRAW), or `nil` to store DN.
    public var companding: Int? = 12

    /// Camera channel sensitivities to linear Rec.2020 (row-major 3×3, `c = M_cam · L`).
    /// `nil`: a wide-gamut camera with native primaries (0.68, 0.31), (0.21, 0.74),
    /// (0.14, 0.05) and channel gains (0.5, 1, 0.7) for D65 white.
    public var cameraMatrix: [Double]?

    /// Lens shading: fraction of light lost in the image corners (0 ≤ k < 1), undone by a
    /// GainMap in OpcodeList2; `nil` for none.
    public var lensShading: Double?
    /// Vignetting the DNG does not record (a real lens's fall-off, per camera channel): the
    /// light of each channel × V_c(r) at the pixel's centre (docs/lens.md). Nil: none.
    public var vignetting: RadialFalloff?
    /// Stray light (veiling glare): a share of every pixel's light spread evenly about it by
    /// the lens (docs/lens.md#stray-light). Nil: none.
    public var strayLight: SimulatedStrayLight?

    /// "lossless-jpeg" or "uncompressed".
    public var storage = "lossless-jpeg"
    public var seed: UInt64 = 1
    /// `false` gives the noise-free capture (quantisation and clipping only).
    public var noise = true
    /// The capture time the DNG records (EXIF DateTimeOriginal, "YYYY:MM:DD HH:MM:SS", the
    /// camera's local time); nil: none.
    public var captureTime: String?
    /// Its UTC offset, "±HH:MM" (EXIF OffsetTimeOriginal), and the fraction of its second as
    /// digits (SubSecTimeOriginal); nil: none.
    public var captureOffset: String?
    public var captureSubSeconds: String?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case layout, cfaPattern, exposureTime, fNumber, iso, baseISO, sensitivityOffset, quantumScale, fullWell, readNoise, darkCurrent
        case prnu, dsnu, adcBits, blackLevel, companding, cameraMatrix, lensShading, vignetting, strayLight, storage, seed, noise, captureTime, captureOffset, captureSubSeconds
    }

    /// Decodes a camera; every field is optional and missing ones keep their defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = CameraModel()
        layout = try c.decodeIfPresent(String.self, forKey: .layout) ?? d.layout
        cfaPattern = try c.decodeIfPresent(String.self, forKey: .cfaPattern) ?? d.cfaPattern
        exposureTime = try c.decodeIfPresent(Double.self, forKey: .exposureTime) ?? d.exposureTime
        fNumber = try c.decodeIfPresent(Double.self, forKey: .fNumber) ?? d.fNumber
        iso = try c.decodeIfPresent(Double.self, forKey: .iso) ?? d.iso
        baseISO = try c.decodeIfPresent(Double.self, forKey: .baseISO) ?? d.baseISO
        sensitivityOffset = try c.decodeIfPresent(Double.self, forKey: .sensitivityOffset) ?? d.sensitivityOffset
        quantumScale = try c.decodeIfPresent(Double.self, forKey: .quantumScale)
        fullWell = try c.decodeIfPresent(Double.self, forKey: .fullWell) ?? d.fullWell
        readNoise = try c.decodeIfPresent(Double.self, forKey: .readNoise) ?? d.readNoise
        darkCurrent = try c.decodeIfPresent(Double.self, forKey: .darkCurrent) ?? d.darkCurrent
        prnu = try c.decodeIfPresent(Double.self, forKey: .prnu) ?? d.prnu
        dsnu = try c.decodeIfPresent(Double.self, forKey: .dsnu) ?? d.dsnu
        adcBits = try c.decodeIfPresent(Int.self, forKey: .adcBits) ?? d.adcBits
        blackLevel = try c.decodeIfPresent(Double.self, forKey: .blackLevel) ?? d.blackLevel
        // An explicit null turns companding off; a missing key keeps the default.
        if c.contains(.companding) {
            companding = try c.decodeIfPresent(Int.self, forKey: .companding)
        }
        cameraMatrix = try c.decodeIfPresent([Double].self, forKey: .cameraMatrix)
        lensShading = try c.decodeIfPresent(Double.self, forKey: .lensShading)
        vignetting = try c.decodeIfPresent(RadialFalloff.self, forKey: .vignetting)
        strayLight = try c.decodeIfPresent(SimulatedStrayLight.self, forKey: .strayLight)
        storage = try c.decodeIfPresent(String.self, forKey: .storage) ?? d.storage
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? d.seed
        noise = try c.decodeIfPresent(Bool.self, forKey: .noise) ?? d.noise
        captureTime = try c.decodeIfPresent(String.self, forKey: .captureTime)
        captureOffset = try c.decodeIfPresent(String.self, forKey: .captureOffset)
        captureSubSeconds = try c.decodeIfPresent(String.self, forKey: .captureSubSeconds)
    }

    /// Encodes every field (absent optionals as null), the capture time only when there is one.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(layout, forKey: .layout)
        try c.encode(cfaPattern, forKey: .cfaPattern)
        try c.encode(exposureTime, forKey: .exposureTime)
        try c.encode(fNumber, forKey: .fNumber)
        try c.encode(iso, forKey: .iso)
        try c.encode(baseISO, forKey: .baseISO)
        try c.encode(sensitivityOffset, forKey: .sensitivityOffset)
        try c.encode(quantumScale, forKey: .quantumScale)
        try c.encode(fullWell, forKey: .fullWell)
        try c.encode(readNoise, forKey: .readNoise)
        try c.encode(darkCurrent, forKey: .darkCurrent)
        try c.encode(prnu, forKey: .prnu)
        try c.encode(dsnu, forKey: .dsnu)
        try c.encode(adcBits, forKey: .adcBits)
        try c.encode(blackLevel, forKey: .blackLevel)
        try c.encode(companding, forKey: .companding)
        try c.encode(cameraMatrix, forKey: .cameraMatrix)
        try c.encode(lensShading, forKey: .lensShading)
        try c.encodeIfPresent(vignetting, forKey: .vignetting)
        try c.encodeIfPresent(strayLight, forKey: .strayLight)
        try c.encode(storage, forKey: .storage)
        try c.encode(seed, forKey: .seed)
        try c.encode(noise, forKey: .noise)
        try c.encodeIfPresent(captureTime, forKey: .captureTime)
        try c.encodeIfPresent(captureOffset, forKey: .captureOffset)
        try c.encodeIfPresent(captureSubSeconds, forKey: .captureSubSeconds)
    }

    /// The camera matrix in use.
    public var cameraFromRec2020: Matrix3 {
        if let m = cameraMatrix, m.count == 9 { return Matrix3(m) }
        func xyz(_ x: Double, _ y: Double) -> SIMD3<Double> { [x / y, 1, (1 - x - y) / y] }
        let d65 = xyz(0.3127, 0.3290)
        func rgbToXYZ(_ r: SIMD3<Double>, _ g: SIMD3<Double>, _ b: SIMD3<Double>) -> Matrix3 {
            let p = Matrix3(rows: r, g, b).transposed
            return p * Matrix3.diagonal(p.inverse! * d65)
        }
        let native = rgbToXYZ(xyz(0.68, 0.31), xyz(0.21, 0.74), xyz(0.14, 0.05))
        let rec2020 = rgbToXYZ(xyz(0.708, 0.292), xyz(0.170, 0.797), xyz(0.131, 0.046))
        return Matrix3.diagonal(SIMD3(0.5, 1.0, 0.7)) * native.inverse! * rec2020
    }

    public var adcMax: Double { Double((1 << adcBits) - 1) }

    /// DN per electron at this ISO.
    public var gain: Double { (adcMax - blackLevel) / fullWell * iso / baseISO }

    /// The WhiteLevel written: the ADC maximum, or full well at low gain.
    public var whiteLevel: Double { min(adcMax, (blackLevel + gain * fullWell).rounded(.down)) }

    /// Electrons per second per unit radiance at f/1 actually used.
    public var effectiveQuantumScale: Double {
        quantumScale ?? fullWell * fNumber * fNumber / exposureTime
    }

    /// The factor from scene radiance to decoded output (linear reference values, before
    /// the colour normalisation): a neutral of radiance L decodes to `L · radianceToOutput`
    /// in every Rec.2020 channel, provided its brightest camera channel's sensitivity is 1.
    public var radianceToOutput: Double {
        effectiveQuantumScale * exposureTime / (fNumber * fNumber) * gain / (whiteLevel - blackLevel)
    }

    /// NoiseProfile (S, O) for linear reference values, one pair for all planes.
    public var noiseProfile: [Double] {
        let range = whiteLevel - blackLevel
        let s = gain / range
        let o = (gain * gain * (readNoise * readNoise + darkCurrent * exposureTime) + 1.0 / 12) / (range * range)
        return [s, o]
    }

    /// The 2×2 CFAPattern colours of `cfaPattern`.
    public var cfaColors: [UInt8]? {
        let map: [Character: UInt8] = ["R": 0, "G": 1, "B": 2]
        let colors = cfaPattern.uppercased().compactMap { map[$0] }
        return colors.count == 4 && Set(colors).count == 3 ? colors : nil
    }

    /// Checks the parameters.
    /// - Throws: `SceneError` naming the bad parameter.
    public func validate() throws {
        func require(_ ok: Bool, _ what: String) throws { if !ok { throw SceneError(reason: "camera: \(what)") } }
        try require(layout == "linear-raw" || layout == "cfa", "layout must be linear-raw or cfa")
        try require(layout != "cfa" || cfaColors != nil, "cfaPattern must be RGGB, BGGR, GRBG or GBRG")
        try require(exposureTime > 0 && fNumber > 0 && iso > 0 && baseISO > 0, "exposureTime, fNumber, iso, baseISO must be positive")
        try require(fullWell > 0 && readNoise >= 0 && darkCurrent >= 0 && prnu >= 0 && dsnu >= 0, "noise parameters must be ≥ 0, fullWell > 0")
        try require((8...16).contains(adcBits), "adcBits must be 8...16")
        try require(blackLevel >= 0 && blackLevel < adcMax / 2, "blackLevel must be below half the ADC range")
        try require(companding == nil || (8...16).contains(companding!), "companding must be 8...16 bits or null")
        try require(storage == "lossless-jpeg" || storage == "uncompressed", "storage must be lossless-jpeg or uncompressed")
        try require(cameraMatrix == nil || cameraMatrix!.count == 9, "cameraMatrix needs 9 values")
        try require(cameraFromRec2020.inverse != nil, "cameraMatrix must be invertible")
        try require((quantumScale ?? 1) > 0, "quantumScale must be positive")
        try require(lensShading.map { $0 >= 0 && $0 < 0.95 } ?? true, "lensShading must be 0 ≤ k < 0.95")
        if let why = vignetting?.problem { throw SceneError(reason: "vignetting: \(why)") }
        if let s = strayLight, !(s.fraction >= 0 && s.fraction < 1 && s.radius > 0 && s.radius <= 1) {
            throw SceneError(reason: "strayLight: fraction must be 0 ≤ f < 1 and radius 0 < r ≤ 1 (of the image's height)")
        }
        // Physical ranges, so that no product of the parameters overflows or loses its meaning.
        try require(exposureTime <= 3600 && (0.5...1024).contains(fNumber) && iso <= 1e7 && baseISO <= 1e7,
                    "exposureTime must be at most 3600 s, fNumber 0.5...1024, iso and baseISO at most 1e7")
        try require(iso / baseISO >= 1e-4 && iso / baseISO <= 1e4, "iso / baseISO must be 1e-4...1e4")
        try require(fullWell <= 1e9 && readNoise <= 1e6 && darkCurrent <= 1e9 && prnu <= 1 && dsnu <= 1e6,
                    "fullWell at most 1e9 e⁻, readNoise and dsnu at most 1e6 e⁻, darkCurrent at most 1e9 e⁻/s, prnu at most 1")
        try require((quantumScale ?? 1) <= 1e30, "quantumScale must be at most 1e30")
        try require(cameraMatrix?.allSatisfy { $0.isFinite && abs($0) <= 1e6 } ?? true, "cameraMatrix values must be finite, at most 1e6")
        // What the capture is computed from, derived from the above: finite and positive.
        let derived = [gain, whiteLevel - blackLevel, effectiveQuantumScale, radianceToOutput] + noiseProfile
        try require(derived.allSatisfy { $0.isFinite && $0 > 0 },
                    "the parameters give no usable capture (gain \(gain), white level \(whiteLevel), radiance to output \(radianceToOutput))")
    }
}
