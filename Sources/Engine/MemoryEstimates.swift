import Foundation

/// How a file is developed, which decides its peak memory (`Pipeline.estimatedPeakBytes`).
public enum DevelopRoute: String, Sendable, CaseIterable, Codable {
    /// One EXR file written as its rows are made (`convert` to one half-float EXR).
    case streamedEXR
    /// One HDF5 file written as its rows are made.
    case streamedHDF5
    /// The half-float image held whole (several output formats, a Radiance picture).
    case halfImage
    /// The `Float` image held whole (32-bit outputs, measurements of the whole image).
    case floatImage
    /// The passes of `stats`, `histogram`, `ratio` over a DNG (decoded blocks kept).
    case measurement
    /// The same with charts drawn beside them: `report`, `--ev-map`.
    case measurementWithCharts
    /// `convert --analysis`: the conversion and the measurements' passes.
    case convertWithAnalysis
}

extension Pipeline {
    /// What the process holds before it develops anything (its code, the libraries, the
    /// runtime), counted once per process.
    public static let processBaseBytes = 34 << 20

    /// Bytes per raw pixel and fixed bytes (beyond `processBaseBytes`) of a route, for raw
    /// images developed block by block; measured on simulated 3 and 12 MP LinearRaw and CFA
    /// captures (`benchmarks/memory_estimate.py`, docs/performance.md#memory-estimate-2026-11-27,
    /// measured again on 2026-11-29 once measurements decoded lossless-JPEG blocks again and
    /// the executable carried its runtime) and set about 20 % above them (the peaks vary by up
    /// to 10 % between runs).
    static func memoryModel(_ route: DevelopRoute, cfa: Bool) -> (fixed: Int, perPixel: Double) {
        switch route {
        case .streamedEXR: return (20 << 20, 1.6)
        case .streamedHDF5: return (32 << 20, 3.5)
        case .halfImage: return (4 << 20, 19)
        case .floatImage: return (3 << 20, 22.4)
        case .measurement: return cfa ? (18 << 20, 2.2) : (10 << 20, 2.0)
        case .measurementWithCharts: return cfa ? (60 << 20, 2.3) : (41 << 20, 2.0)
        case .convertWithAnalysis: return cfa ? (19 << 20, 25.6) : (22 << 20, 10.4)
        }
    }

    /// Whether `raw` is developed block by block (the routes' models hold), as far as its
    /// IFD tells: LinearRaw with three samples per pixel or a 2×2 Bayer CFA, chunky
    /// (PlanarConfiguration 1, or one sample per pixel) integer samples of at most 16 bits or
    /// floating-point samples (`floatSampleBytes`), not JPEG XL (whose libjxl decoders hold
    /// more per tile; a plan, which has read the storage, gives its route:
    /// `estimatedPeakBytes(_:plannedRoute:)`).
    static func developsByBlocks(_ raw: ImageIFD) -> Bool {
        let layout = raw.photometric == Photometric.linearRaw ? raw.samplesPerPixel == 3
            : raw.photometric == Photometric.cfa && raw.samplesPerPixel == 1 && raw.cfa.map { $0.repeatRows == 2 && $0.repeatCols == 2 } == true
        let samples = raw.sampleFormat == 3 || (raw.bitsPerSample.first ?? 16) <= 16
        let chunky = raw.planarConfiguration == 1 || raw.samplesPerPixel == 1
        return layout && samples && chunky && raw.compression != Compression.jpegXL
    }

    /// What floating-point samples add to a route's model, which was measured on 16-bit
    /// integers in small tiles: each decoding thread holds its block as `Float` (4 bytes a
    /// sample, counted whole: large tiles, such as JPEG XL's, weigh in the peak), and the
    /// decoded blocks a measurement keeps for its later passes (`measurementBlockCache`) are
    /// 2 bytes a sample larger than 16-bit ones. Measured on simulated float16 and float32
    /// captures and the DNG SDK's float16 JPEG XL sample (docs/performance.md).
    static func floatSampleBytes(_ raw: ImageIFD, route: DevelopRoute) -> (fixed: Double, perPixel: Double) {
        guard raw.sampleFormat == 3 else { return (0, 0) }
        let spp = Double(max(1, raw.samplesPerPixel))
        let blockPixels = raw.layout.map { Double($0.blockWidth) * Double($0.blockHeight) } ?? Double(raw.width) * Double(raw.height)
        let inFlight = Double(min(Parallel.threadCount, max(1, raw.layout?.offsets.count ?? 1)))
        let kept = [DevelopRoute.measurement, .measurementWithCharts, .convertWithAnalysis].contains(route) ? 2 * spp : 0
        return (inFlight * blockPixels * spp * 4, kept)
    }

    /// What the mask layers developed with `raw` add to its peak (semantic masks and the
    /// transparency mask, unless `options.includeMasks` is off): each is held on the output
    /// grid as `Float` until the output is written (half floats for a file written as its
    /// rows are made, counted as `Float` all the same: 4 bytes per pixel of the ActiveArea, the
    /// output grid without DefaultScale), and the one being made also holds its decoded
    /// samples (2 bytes each up to 16 bits, else 4) and their `Float` values (4 bytes) per
    /// mask pixel: an upper bound. The routes' models leave masks out. (The DNG SDK's float16
    /// JPEG XL sample, whose 8-bit transparency mask is the size of its image, peaks about 1.3
    /// bytes per pixel higher with it into an EXR, where the mask is held as bytes, and 8 into
    /// an HDF5 file: docs/performance.md.)
    public static func maskBytes(_ dng: DNGFile, raw: ImageIFD, options: DevelopOptions) -> Int {
        let masks = dng.maskIFDs
        guard options.includeMasks, !masks.isEmpty else { return 0 }
        let output = Double(raw.activeArea.width) * Double(raw.activeArea.height)
        let making = masks.map { mask in
            let stored: Double = mask.sampleFormat == 3 || (mask.bitsPerSample.first ?? 8) > 16 ? 4 : 2
            return (stored + 4) * Double(mask.width) * Double(mask.height) * Double(max(1, mask.samplesPerPixel))
        }.max() ?? 0
        let bytes = Double(masks.count) * 4 * output + making
        return bytes >= Double(Int.max / 2) ? .max : Int(bytes)
    }

    /// What a plan's Stage 1, collected whole for its storage alone (interleaved fields,
    /// planes) and then cut into strips, adds to its route's estimate: the decoded samples,
    /// 2 bytes each up to 16 bits, else 4. 0 when the plan is estimated whole (`memoryRoute`
    /// nil) or decodes block by block.
    public static func collectedStage1Bytes(_ raw: ImageIFD, plan: DevelopPlan) -> Int {
        guard plan.stage1 == .collected, plan.memoryRoute != nil else { return 0 }
        let stored: Double = raw.sampleFormat == 3 || (raw.bitsPerSample.first ?? 16) > 16 ? 4 : 2
        let bytes = Double(raw.width) * Double(raw.height) * Double(max(1, raw.samplesPerPixel)) * stored
        return bytes >= Double(Int.max / 2) ? .max : Int(bytes)
    }

    /// `a + b`, at most `Int.max`.
    public static func adding(_ a: Int, _ b: Int) -> Int { a > Int.max - b ? .max : a + b }

    /// The estimated peak memory of the whole process developing `raw` by `route`, in
    /// bytes (`processBaseBytes` included); `wholeImagePeakBytes` for an image not developed
    /// block by block, or when the route is not known. Overflow-safe.
    public static func estimatedPeakBytes(_ raw: ImageIFD, route: DevelopRoute?) -> Int {
        estimatedPeakBytes(raw, plannedRoute: developsByBlocks(raw) ? route : nil)
    }

    /// The estimated peak of a plan's memory route (`DevelopPlan.memoryRoute`: nil when the
    /// plan collects a stage whole). The plan has read the storage, so its route is taken as
    /// it is (a JPEG XL file of 16-bit tiles is developed tile by tile; one stored in
    /// interleaved fields is not).
    public static func estimatedPeakBytes(_ raw: ImageIFD, plannedRoute route: DevelopRoute?) -> Int {
        let file = estimatedFileBytes(raw, plannedRoute: route)
        return file > Int.max - processBaseBytes ? .max : file + processBaseBytes
    }

    /// What one file adds to a process by `route` (`estimatedPeakBytes` less the process's
    /// base): what a file in a batch reserves.
    public static func estimatedFileBytes(_ raw: ImageIFD, route: DevelopRoute?) -> Int {
        estimatedFileBytes(raw, plannedRoute: developsByBlocks(raw) ? route : nil)
    }

    /// `estimatedFileBytes` of a plan's memory route (see `estimatedPeakBytes(_:plannedRoute:)`).
    public static func estimatedFileBytes(_ raw: ImageIFD, plannedRoute route: DevelopRoute?) -> Int {
        guard let route else { return wholeImagePeakBytes(raw) }
        let pixels = raw.width.multipliedReportingOverflow(by: raw.height)
        guard !pixels.overflow else { return .max }
        let (fixed, perPixel) = memoryModel(route, cfa: raw.photometric == Photometric.cfa)
        let (floatFixed, floatPerPixel) = floatSampleBytes(raw, route: route)
        let bytes = Double(pixels.partialValue) * (perPixel + floatPerPixel) + Double(fixed) + floatFixed
        return bytes >= Double(Int.max / 2) ? .max : Int(bytes)
    }

    /// The estimated peak memory of developing the DNG at `path` with `options` by `route`,
    /// from its header, its masks included (`maskBytes`; 0 when the header cannot be read:
    /// developing it then fails at once anyway).
    public static func estimatedPeakBytes(path: String, options: DevelopOptions, route: DevelopRoute?) -> Int {
        guard let dng = try? DNGFile.open(path: path), let (raw, _, _) = try? selectImage(dng, options: options) else { return 0 }
        return adding(estimatedPeakBytes(raw, route: route), maskBytes(dng, raw: raw, options: options))
    }

    /// What the file at `path` reserves in a batch (`estimatedFileBytes`, its masks included).
    public static func estimatedFileBytes(path: String, options: DevelopOptions, route: DevelopRoute?) -> Int {
        guard let dng = try? DNGFile.open(path: path), let (raw, _, _) = try? selectImage(dng, options: options) else { return 0 }
        return adding(estimatedFileBytes(raw, route: route), maskBytes(dng, raw: raw, options: options))
    }
}
