import DNGWriter
import Foundation
import ImageCore

/// A simulated capture: the DNG to write and everything needed to know its truth.
public struct SimulatedCapture: Sendable {
    public var scene: RenderedScene
    public var camera: CameraModel
    /// The DNG, with stored codes.
    public var dng: RawDNG
    /// Radiance → decoded output factor (see `CameraModel.radianceToOutput`).
    public var radianceToOutput: Double
    /// Per-pixel gains of the lens-shading GainMap the decoder applies (nil without shading).
    public var pixelGains: [Float]?

    /// The scene radiance in the decoder's output units and geometry (linear Rec.2020,
    /// 1.0 = sensor white, no exposure scaling, ActiveArea = the whole image): `L · radianceToOutput`.
    public var groundTruth: ImageBuffer<Double> {
        var out = scene.radiance
        for i in out.samples.indices { out.samples[i] *= radianceToOutput }
        return out
    }

    /// The exact decode of the stored codes (what a perfect decoder outputs for this noise
    /// realisation, or the noise-free expected values when `camera.noise` is false), for a
    /// given camera → output matrix (read it back from the written file). CFA captures give
    /// the 2×2 superpixel result (half size). Also the clip mask.
    public func decode(cameraToOutput m: Matrix3) -> (values: ImageBuffer<Double>, clipMask: [UInt8]) {
        let w = dng.width, h = dng.height
        let table = dng.linearizationTable.map { $0.map(Double.init) }
        let black = dng.blackLevel[0], white = Double(dng.whiteLevel[0])
        // Stage 2, clipped at 1, then the lens-shading GainMap (OpcodeList2, values kept above 1).
        func linear(_ code: UInt16, _ pixel: Int) -> (Double, Bool) {
            let lin = table.map { Int(code) < $0.count ? $0[Int(code)] : $0[$0.count - 1] } ?? Double(code)
            let gain = pixelGains.map { Double($0[pixel]) } ?? 1
            return (Double(Float(min((lin - black) / (white - black), 1)) * Float(gain)), lin >= white)
        }
        if let pattern = dng.cfaPattern {
            let ow = w / 2, oh = h / 2
            var values = [Double](repeating: 0, count: ow * oh * 3)
            var mask = [UInt8](repeating: 0, count: ow * oh)
            for y in 0..<oh {
                for x in 0..<ow {
                    var sum = SIMD3<Double>(), count = SIMD3<Double>()
                    for dy in 0..<2 {
                        for dx in 0..<2 {
                            let colour = Int(pattern[dy * 2 + dx])
                            let (v, clipped) = linear(dng.samples[(2 * y + dy) * w + 2 * x + dx], (2 * y + dy) * w + 2 * x + dx)
                            sum[colour] += v
                            count[colour] += 1
                            if clipped { mask[y * ow + x] |= 1 << UInt8(colour) }
                        }
                    }
                    let out = m * (sum / count)
                    values[3 * (y * ow + x)] = out.x
                    values[3 * (y * ow + x) + 1] = out.y
                    values[3 * (y * ow + x) + 2] = out.z
                }
            }
            return (ImageBuffer(width: ow, height: oh, channels: 3, samples: values), mask)
        }
        var values = [Double](repeating: 0, count: w * h * 3)
        var mask = [UInt8](repeating: 0, count: w * h)
        for i in 0..<(w * h) {
            var x = SIMD3<Double>()
            for p in 0..<3 {
                let (v, clipped) = linear(dng.samples[3 * i + p], i)
                x[p] = v
                if clipped { mask[i] |= 1 << UInt8(p) }
            }
            let out = m * x
            values[3 * i] = out.x
            values[3 * i + 1] = out.y
            values[3 * i + 2] = out.z
        }
        return (ImageBuffer(width: w, height: h, channels: 3, samples: values), mask)
    }

    /// The ground truth at the geometry of `decode`: full size for LinearRaw, the 2×2 cell
    /// means for CFA (superpixel).
    public var groundTruthAtDecodeSize: ImageBuffer<Double> {
        let truth = groundTruth
        guard dng.cfaPattern != nil else { return truth }
        let ow = truth.width / 2, oh = truth.height / 2
        var values = [Double](repeating: 0, count: ow * oh * 3)
        for y in 0..<oh {
            for x in 0..<ow {
                for c in 0..<3 {
                    let s = truth[2 * y, 2 * x, c] + truth[2 * y, 2 * x + 1, c] + truth[2 * y + 1, 2 * x, c] + truth[2 * y + 1, 2 * x + 1, c]
                    values[3 * (y * ow + x) + c] = s / 4
                }
            }
        }
        return ImageBuffer(width: ow, height: oh, channels: 3, samples: values)
    }
}

/// Runs a camera over a scene.
public enum Simulator {
    /// Simulates `camera` photographing `scene`. Deterministic for a given `camera.seed`.
    /// - Throws: `SceneError` for invalid camera parameters.
    public static func capture(_ scene: RenderedScene, camera: CameraModel) throws -> SimulatedCapture {
        try camera.validate()
        let w = scene.radiance.width, h = scene.radiance.height
        let cfa = camera.layout == "cfa" ? camera.cfaColors : nil
        if cfa != nil, w % 2 != 0 || h % 2 != 0 {
            throw SceneError(reason: "a CFA capture needs an even width and height (got \(w)×\(h))")
        }
        let spp = cfa == nil ? 3 : 1
        let m = camera.cameraFromRec2020
        let electronsPerUnit = camera.effectiveQuantumScale * camera.exposureTime / (camera.fNumber * camera.fNumber)
        let dark = camera.darkCurrent * camera.exposureTime
        let gain = camera.gain, black = camera.blackLevel, adcMax = camera.adcMax
        let table = camera.companding.map { CompandingCurve(codeBits: $0, maximum: Int(camera.whiteLevel)).table }
        var samples = [UInt16](repeating: 0, count: w * h * spp)
        let radiance = camera.strayLight.map { $0.spread(scene.radiance) } ?? scene.radiance
        let shading = camera.lensShading.map(LensShading.init(strength:))
        let pixelGains = try shading?.gains(width: w, height: h)
        samples.withUnsafeMutableBufferPointer { outAll in
            // Safe because each chunk writes its own rows.
            nonisolated(unsafe) let out = outAll
            Parallel.forEachChunk(count: h, minimumChunk: 8) { rows in
                for y in rows {
                    var noise = SimulationRandom(seed: camera.seed, stream: 0, row: y)
                    var pattern = SimulationRandom(seed: camera.seed, stream: 1, row: y)
                    for x in 0..<w {
                        let l = SIMD3(radiance[y, x, 0], radiance[y, x, 1], radiance[y, x, 2])
                        let c = m * l
                        for p in 0..<spp {
                            let channel = cfa.map { Int($0[(y % 2) * 2 + x % 2]) } ?? p
                            var vignetting = pixelGains.map { 1 / Double($0[y * w + x]) } ?? 1
                            if let falloff = camera.vignetting {
                                vignetting *= falloff.transmission(channel: channel, r: falloff.radius(x: x, y: y, width: w, height: h))
                            }
                            var mean = max(0, c[channel]) * electronsPerUnit * vignetting + dark
                            var electrons: Double
                            if camera.noise {
                                // Fixed patterns first (drawn every time so the stream does not depend on the scene).
                                let prnu = 1 + camera.prnu * pattern.normal()
                                let dsnu = camera.dsnu * pattern.normal()
                                mean *= prnu
                                electrons = noise.poisson(mean) + camera.readNoise * noise.normal() + dsnu
                            } else {
                                electrons = mean
                            }
                            electrons = min(electrons, camera.fullWell)
                            let dn = min(max((black + gain * electrons).rounded(), 0), adcMax)
                            let code = table.map { CompandingCurve.nearestCode($0, dn) } ?? Int(dn)
                            out[(y * w + x) * spp + p] = UInt16(code)
                        }
                    }
                }
            }
        }
        var dng = RawDNG(width: w, height: h, samples: samples)
        dng.cfaPattern = cfa
        dng.bitsPerSample = camera.companding ?? camera.adcBits
        dng.compression = camera.storage == "uncompressed" ? .uncompressed : .losslessJPEG(predictor: 1)
        dng.tileSize = (256, 256)
        dng.structure = .previewWithRawSubIFD
        dng.byteOrder = .bigEndian
        dng.linearizationTable = table
        dng.blackLevel = Array(repeating: black, count: spp)
        dng.whiteLevel = Array(repeating: Int(camera.whiteLevel), count: spp)
        dng.make = "SceneLinear"
        dng.model = "Simulated camera"
        dng.uniqueCameraModel = "SceneLinear simulated camera"
        dng.dateTimeOriginal = camera.captureTime
        dng.offsetTimeOriginal = camera.captureOffset
        dng.subSecTimeOriginal = camera.captureSubSeconds
        // XYZ → camera: the camera's Rec.2020 sensitivities after XYZ → Rec.2020. The model has
        // no metamerism, so one matrix serves both calibration illuminants.
        let xyzToCamera = (m * rec2020FromXYZ).e
        dng.calibrationIlluminants = [17, 21]
        dng.colorMatrices = [xyzToCamera, xyzToCamera]
        let neutral = m * SIMD3<Double>(1, 1, 1)
        dng.asShotNeutral = [neutral.x, neutral.y, neutral.z].map { $0 / neutral.max() }
        dng.baselineExposure = 0
        dng.noiseProfile = camera.noiseProfile
        if let shading { dng.opcodeLists[2] = LensShading.encodeList([shading.gainMap(planes: spp)]) }
        dng.exposureTime = camera.exposureTime
        dng.fNumber = camera.fNumber
        dng.iso = Int(camera.iso.rounded())
        // The DNG colour model scales white so the brightest camera channel of a neutral reads 1.
        return SimulatedCapture(scene: scene, camera: camera, dng: dng, radianceToOutput: camera.radianceToOutput * neutral.max(),
                                pixelGains: pixelGains)
    }

    /// XYZ (D65) → linear Rec.2020, from the primaries.
    static var rec2020FromXYZ: Matrix3 {
        func xyz(_ x: Double, _ y: Double) -> SIMD3<Double> { [x / y, 1, (1 - x - y) / y] }
        let p = Matrix3(rows: xyz(0.708, 0.292), xyz(0.170, 0.797), xyz(0.131, 0.046)).transposed
        return (p * Matrix3.diagonal(p.inverse! * xyz(0.3127, 0.3290))).inverse!
    }
}
