import Analysis
import Engine
import Foundation
import Synchronization

/// E_v's sums (docs/fisheye.md) over some of an image's pixels: over one patch, then over
/// the image circle, the patches' sums added in the order of their positions
/// (`IlluminanceSums.Collector`), so that the total depends neither on the number of threads
/// nor on the order the patches arrive in. In the image's own units (Y with Rec.2020's
/// weights); w = cos θ · ω is a pixel's weight.
struct IlluminanceSums: Sendable, Equatable {
    /// Σ Y · w over the finite pixels.
    var sum = 0.0
    /// The part of `sum` from pixels with a clipped channel, and how many they are.
    var clippedSum = 0.0, clippedPixels = 0
    /// Σ ω over the finite pixels.
    var solidAngle = 0.0
    /// Every pixel of the circle (ω > 0), and those whose values are not finite (left out).
    var pixels = 0, nonFinitePixels = 0
    /// Pixels of the circle from patches without a clip mask: their clipping is not known.
    var unmaskedPixels = 0
    /// Σ w² g · (R, G, B) and Σ w² g² (g: a pixel's gain, 1 without gains): the noise
    /// model's variance of `sum` (`NoiseModel.Kernel.regionVariance`).
    var weightedOutputs = SIMD3<Double>(), weightedGains = 0.0
    /// Σ w² σ² of R, G, B from a standard deviation layer (`DeviationLayer.regionVariance`).
    var squares = SIMD3<Double>()
    /// Σ w · (R, G, B, 1) by position in a 2×2 cell: a CFA image's raw-site sums (`SiteLayout`).
    var parity = ParitySums()
    /// With a lens calibration (`LensSums`): what E_v's vignetting term needs.
    var lens = LensSums()
    /// With stated stray light: the sums over its zone.
    var stray = StrayLightSums()

    static func += (a: inout IlluminanceSums, b: IlluminanceSums) {
        a.sum += b.sum
        a.clippedSum += b.clippedSum
        a.clippedPixels += b.clippedPixels
        a.solidAngle += b.solidAngle
        a.pixels += b.pixels
        a.nonFinitePixels += b.nonFinitePixels
        a.unmaskedPixels += b.unmaskedPixels
        a.weightedOutputs += b.weightedOutputs
        a.weightedGains += b.weightedGains
        a.squares += b.squares
        for k in 0..<4 { a.parity.sums[k] += b.parity.sums[k] }
        a.lens += b.lens
        a.stray += b.stray
    }

    /// What the sums of a patch read besides its values: the geometry of the image, and per
    /// pixel (row-major over the image) the gains of the noise sums and the standard
    /// deviation layer, when the image has them.
    struct Reader: Sendable {
        let geometry: FisheyeGeometry
        var gains: [Float]?
        var deviation: [Float]?
        /// The lens calibration whose correction the image carries (a DNG developed with it).
        let vignetting: LensCalibration?
        /// Its model departure per channel, worked out once for the pixels' radii.
        private let departures: [LensCalibration.ModelDeparture]
        /// The pixels about very bright sources, with stated stray light.
        let zone: StrayLightZone?

        init(geometry: FisheyeGeometry, gains: [Float]?, deviation: [Float]?, vignetting: LensCalibration?, zone: StrayLightZone? = nil) {
            self.geometry = geometry
            self.gains = gains
            self.deviation = deviation
            self.vignetting = vignetting
            self.zone = zone
            departures = vignetting.map { lens in (0..<3).map { lens.departure(channel: $0) } } ?? []
        }

        /// The sums over the pixels of `patch` that lie in the image circle; nil when none can.
        func sums(_ patch: ImagePatch) -> IlluminanceSums? {
            guard let part = patch.clipped(to: geometry.bounds) else { return nil }
            return geometry.withValues(in: part.rect) { theta, omega, stride in
                var s = IlluminanceSums()
                for y in part.rect.top..<part.rect.bottom {
                    add(row: y, of: part, theta: theta + (y - part.rect.top) * stride, omega: omega + (y - part.rect.top) * stride,
                        into: &s)
                }
                return s
            }
        }

        /// Adds the pixels of row `y` of `part` (`theta`, `omega` from its first pixel on).
        @inline(__always)
        private func add(row y: Int, of part: ImagePatch, theta: UnsafePointer<Float>, omega: UnsafePointer<Double>,
                         into s: inout IlluminanceSums) {
            let weights = Rec2020.luminanceWeights, width = geometry.width, left = part.rect.left
            let values = part.values + 3 * (y - part.rect.top) * part.rowStride
            let mask = part.mask.map { $0 + (y - part.rect.top) * part.rowStride }
            var even = SIMD4<Double>(), odd = SIMD4<Double>()
            for k in 0..<part.rect.width where omega[k] > 0 {
                let i = y * width + left + k
                let rgb = SIMD3(Double(values[3 * k]), Double(values[3 * k + 1]), Double(values[3 * k + 2]))
                let luminance = (rgb * weights).sum()
                let weight = Double(cos(theta[k])) * omega[k]
                s.pixels += 1
                if mask == nil { s.unmaskedPixels += 1 }
                guard rgb.x.isFinite, rgb.y.isFinite, rgb.z.isFinite else {
                    s.nonFinitePixels += 1
                    continue
                }
                s.sum += luminance * weight
                if (left + k) & 1 == 0 { even += SIMD4(rgb.x, rgb.y, rgb.z, 1) * weight } else { odd += SIMD4(rgb.x, rgb.y, rgb.z, 1) * weight }
                s.solidAngle += omega[k]
                // Σ w² g · rgb and Σ w² g²: the model's region variance (demosaic correlation included).
                let gain = gains.map { Double($0[i]) } ?? 1
                s.weightedOutputs += rgb * (gain * weight * weight)
                s.weightedGains += gain * gain * weight * weight
                if let deviation {
                    let d = SIMD3(Double(deviation[3 * i]), Double(deviation[3 * i + 1]), Double(deviation[3 * i + 2]))
                    s.squares += d * d * (weight * weight)
                }
                if let mask, mask[k] != 0 {
                    s.clippedPixels += 1
                    s.clippedSum += luminance * weight
                }
                if let vignetting {
                    s.lens.add(rgb * weight, x: left + k, y: y, width: width, height: geometry.height, lens: vignetting, departures: departures)
                }
                if let zone { s.stray.add(mark: zone.marks[i], luminance: luminance, weight: weight, omega: omega[k]) }
            }
            s.parity.sums[(y & 1) * 2] += even
            s.parity.sums[(y & 1) * 2 + 1] += odd
        }
    }

    /// The sums of a pass's patches, kept by position and added in order once the pass is over.
    final class Collector: Sendable {
        private struct Part: Sendable {
            let top: Int, left: Int
            let sums: IlluminanceSums
        }
        private let parts = Mutex<[Part]>([])

        func add(_ sums: IlluminanceSums, at rect: PixelRect) {
            parts.withLock { $0.append(Part(top: rect.top, left: rect.left, sums: sums)) }
        }

        /// Σ over the patches, in the order of their positions (top, then left).
        var total: IlluminanceSums {
            parts.withLock { parts in
                parts.sorted { ($0.top, $0.left) < ($1.top, $1.left) }.reduce(into: IlluminanceSums()) { $0 += $1.sums }
            }
        }
    }
}

/// The passes E_v is summed over, with what is known of their image (`Pipeline.KnownImage`:
/// from the start, or once a DNG's first pass is over) and what the sums read beside it.
struct IlluminanceSource {
    var passes: ImageScan
    var known: Pipeline.KnownImage
    /// A DNG developed with a lens calibration: E_v's vignetting term is computed (`LensSums`).
    var vignetting: LensCalibration?
    /// Per-pixel gains of the noise sums (`NoiseModel.pixelGains`), row-major over the image.
    var gains: [Float]?
    var deviation: DeviationLayer?

    /// An image held whole, scanned in memory.
    init(_ input: AnalysisInput) {
        passes = input.image.scan
        known = Pipeline.KnownImage(input.image)
        known.noise = input.noise
        gains = input.noise?.pixelGains
        deviation = input.deviation
    }

    init(_ streamed: Pipeline.StreamedSource) {
        passes = streamed.passes
        known = streamed.known
    }

    /// The file at `path` as its E_v is measured: without holding its image where it can be
    /// (`Pipeline.streamedSource`: a DNG developed patch by patch, our EXR or HDF5 file in its
    /// stored samples), else loaded whole (`AnalysisInput.load`: another colour space, a
    /// standard deviation layer). A DNG's decoded blocks are not kept for a second pass
    /// (`--circle auto`'s): on 48 MP captures that pass took no longer decoding again, and
    /// kept blocks cost 96 MB (CFA) to 288 MB (LinearRaw) beside the luminance planes.
    static func of(_ path: String, options: DevelopOptions) throws -> IlluminanceSource {
        var source: IlluminanceSource
        if let streamed = try Pipeline.streamedSource(path, develop: options, keepBlocks: false) {
            source = IlluminanceSource(streamed)
        } else {
            source = IlluminanceSource(try AnalysisInput.load(path, options: options))
        }
        source.vignetting = try Pipeline.lensForCapture(path, options: options)
        return source
    }
}

/// E_v's sums over an image circle with what they give: the lens, the image (its pixels only
/// when it was held), the sum over the raw sites of a CFA image, the variances.
struct IlluminanceMeasurement {
    let lens: FisheyeLens
    let width: Int, height: Int
    let image: SceneLinearImage
    let sums: IlluminanceSums
    /// Σ Y · cos θ · ω in the image's units: over a CFA image's raw sites, which the demosaic
    /// cannot bias (`SiteLayout`), else `sums.sum`.
    let sum: Double
    /// The noise variance of `sum`: from the NoiseProfile (`NoiseModel`), else the file's
    /// standard deviation layer (`DeviationLayer`); nil without either.
    let noiseVariance: Double?
    /// The CFA's sampling of sources smaller than its pattern (same units as `sum`,
    /// `SiteLayout.samplingUncertainty`); nil off a CFA grid.
    let sampling: Double?
    /// The lens calibration the image was corrected with, when its sums hold the vignetting term.
    var vignetting: LensCalibration?
    /// The zone of stated stray light, when its sums were made.
    var strayLight: StrayLightZone?
    /// Whether every pixel of the circle came with a clip mask.
    var clippingKnown: Bool { sums.unmaskedPixels == 0 }

    init(geometry: FisheyeGeometry, image: SceneLinearImage, sums: IlluminanceSums, noise: NoiseModel?, deviation: DeviationLayer?) {
        lens = geometry.lens
        width = geometry.width
        height = geometry.height
        self.image = image
        self.sums = sums
        let weights = Rec2020.luminanceWeights
        let variance = noise.map {
            NoiseModel.Kernel($0, luminance: weights).regionVariance(weightedOutputs: sums.weightedOutputs, weightedGains: sums.weightedGains).y
        } ?? deviation.map { $0.regionVariance(sums.squares).w }
        noiseVariance = variance
        // A CFA image: E_v over its raw sites, and the CFA's sampling of sources smaller than
        // its pattern, less the noise of a one-position green estimate (about 4× the variance
        // of the whole sum's).
        if let layout = SiteLayout.of(image), layout.covers(sums.parity) {
            let e = (layout.outputSums(sums.parity) * weights).sum()
            sum = e
            sampling = layout.samplingUncertainty(sums.parity, noise: e > 0 ? 2 * (variance ?? 0).squareRoot() / e : 0)
        } else {
            sum = sums.sum
            sampling = nil
        }
    }
}

extension Pipeline {
    /// E_v's sums over `source` under the lens `request` gives: with a circle to find
    /// (`--circle auto`), a first pass gathers the image's luminance (`LuminancePlane`) to find
    /// it in, and a second sums.
    /// - Throws: `AnalysisError` when no circle is found or the lens does not fit; the passes' errors.
    static func measureIlluminance(_ source: IlluminanceSource, path: String, lens request: FisheyeLensRequest) throws -> IlluminanceMeasurement {
        var found: FisheyeLens?, zone: StrayLightZone?
        if request.spec == nil || request.strayLight != nil {
            // A first pass gathers the luminance: the circle is found in it, and the sources of
            // stated stray light.
            let plane = LuminancePlane()
            try source.passes.pass({ width, height in plane.prepare(width: width, height: height) }, { plane.add($0) })
            let (width, height, luminance) = plane.take()
            let lens = try request.lens(width: width, height: height, path: path) { luminance }
            if request.spec == nil { found = lens }
            if let stray = request.strayLight {
                if let problem = lens.problem { throw AnalysisError(reason: "\(path): \(problem)", category: .usage) }
                zone = StrayLightZone(luminance: luminance, width: width, height: height, lens: lens, request: stray)
            }
        }
        let detected = found
        return try measureIlluminance(source, path: path, zone: zone) { width, height in
            FisheyeGeometry(lens: detected ?? request.spec!.lens(width: width, height: height), width: width, height: height)
        }
    }

    /// E_v's sums over one pass of `source`, the geometry made by `geometry` from the image's
    /// size (once, before the first patch): each patch's sums on the thread that has it, added
    /// in the order of the patches' positions.
    /// - Throws: `AnalysisError` for a lens that does not fit; the pass's errors.
    static func measureIlluminance(_ source: IlluminanceSource, path: String, zone: StrayLightZone? = nil,
                                   geometry: @escaping @Sendable (_ width: Int, _ height: Int) throws -> FisheyeGeometry) throws -> IlluminanceMeasurement {
        let pass = IlluminancePass()
        let gains = source.gains, deviation = source.deviation?.deviation
        try source.passes.pass({ width, height in
            let made = try geometry(width, height)
            if let problem = made.lens.problem { throw AnalysisError(reason: "\(path): \(problem)", category: .usage) }
            if let zone, zone.marks.count != width * height {
                throw AnalysisError(reason: "\(path): the image changed size between passes (\(width)×\(height))", category: .corruptData)
            }
            pass.prepare(IlluminanceSums.Reader(geometry: made, gains: gains, deviation: deviation, vignetting: source.vignetting, zone: zone))
        }, { pass.add($0) })
        let (reader, sums) = pass.result()
        // The image is known once its first pass is over (a DNG's provenance).
        guard let reader, let image = source.known.image else { throw AnalysisError(reason: "\(path): no pass over the image was made") }
        var measurement = IlluminanceMeasurement(geometry: reader.geometry, image: image, sums: sums, noise: source.known.noise,
                                                 deviation: source.deviation)
        measurement.vignetting = reader.vignetting
        measurement.strayLight = reader.zone
        return measurement
    }
}

/// One pass of E_v's sums: the reader made before the first patch, and each patch's sums.
final class IlluminancePass: Sendable {
    private let reader = Mutex<IlluminanceSums.Reader?>(nil)
    private let collector = IlluminanceSums.Collector()

    func prepare(_ made: IlluminanceSums.Reader) { reader.withLock { $0 = made } }

    func add(_ patch: ImagePatch) {
        guard let reader = reader.withLock({ $0 }), let sums = reader.sums(patch) else { return }
        collector.add(sums, at: patch.rect)
    }

    func result() -> (reader: IlluminanceSums.Reader?, sums: IlluminanceSums) { (reader.withLock { $0 }, collector.total) }
}

/// The sums E_v's vignetting term is made of (docs/lens.md): per output channel q and camera
/// channel c, Σ w · value_q · (r², r⁴, r⁶) / V_c(r) and Σ w · value_q · d_c(r) (d the model's
/// departure), r the pixel's radius. Once the colour matrix is known they give each camera
/// channel's share of E_v weighted by the correction's sensitivity to its coefficients.
struct LensSums: Sendable, Equatable {
    var gradient = [SIMD3<Double>](repeating: .zero, count: 9)
    var departure = [Double](repeating: 0, count: 9)

    static func += (a: inout LensSums, b: LensSums) {
        for k in 0..<9 {
            a.gradient[k] += b.gradient[k]
            a.departure[k] += b.departure[k]
        }
    }

    /// Adds a pixel's weighted values `weighted` (w · R, G, B) at (x, y) of a `width` × `height`
    /// image (the output taken as Stage 3's grid: exact without a crop, for any orientation of a
    /// centred fall-off).
    mutating func add(_ weighted: SIMD3<Double>, x: Int, y: Int, width: Int, height: Int, lens: LensCalibration,
                      departures: [LensCalibration.ModelDeparture]) {
        let r = lens.falloff.radius(x: x, y: y, width: width, height: height)
        let basis = RadialFalloff.basis(r)
        for c in 0..<3 {
            let g = basis / lens.falloff.transmission(channel: c, r: r), d = departures[c].at(r)
            for q in 0..<3 {
                gradient[3 * q + c] += g * weighted[q]
                departure[3 * q + c] += d * weighted[q]
            }
        }
    }

    /// The relative standard uncertainty of E_v = `total` (Σ w · Y) from the correction:
    /// each camera channel's luminance y_c = (wᵀM)_c · (M⁻¹ · RGB)_c, M the camera → output
    /// matrix; the fit's covariance (channels independent) and the model's departure (taken
    /// as one error of every pixel's sign: linear).
    /// `weights`: the output channels' weights of the quantity (Y: Rec.2020's luminance
    /// weights; R: (1, 0, 0)), `total` its weighted sum.
    func relativeUncertainty(cameraToOutput m: [Double], lens: LensCalibration, total: Double,
                             weights w: SIMD3<Double> = Rec2020.luminanceWeights) -> Double? {
        guard m.count == 9, total > 0, let inverse = Matrix3(m).inverse?.e else { return nil }
        var variance = 0.0, correlated = 0.0
        for c in 0..<3 {
            let luma = w.x * m[c] + w.y * m[3 + c] + w.z * m[6 + c]
            var s = SIMD3<Double>(), d = 0.0
            for q in 0..<3 {
                let a = luma * inverse[3 * c + q]
                s += gradient[3 * q + c] * a
                d += departure[3 * q + c] * a
            }
            let cov = lens.covariance[c]
            for i in 0..<3 { for j in 0..<3 { variance += s[i] * cov[3 * i + j] * s[j] } }
            correlated += d
        }
        return (max(variance, 0) + correlated * correlated).squareRoot() / total
    }
}
