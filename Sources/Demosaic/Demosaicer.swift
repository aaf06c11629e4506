import DNGContainer
import ImageCore
import Linearize

/// How the two missing colours of each CFA site are obtained.
public enum DemosaicMethod: String, CaseIterable, Sendable {
    /// No interpolation: each 2 × 2 cell becomes one pixel (half width, half height), red
    /// and blue taken as measured, green the mean of the two greens. For radiometry.
    case superpixel
    /// Full resolution; each missing colour is the mean of the nearest samples of that
    /// colour (2 or 4 of them). Fast, soft, with colour fringes at sharp edges.
    case bilinear
    /// Full resolution; Ratio Corrected Demosaicing (L. Sanz Rodríguez, 2017): edge-aware
    /// green from ratio-corrected directional estimates, red and blue from colour
    /// differences. The default.
    case rcd
}

/// Stage 3 for CFA images: a one-plane Bayer mosaic of linear reference values → three
/// planes of camera colour (CFAPlaneColor order, normally red, green, blue).
///
/// Units are unchanged (0 black, 1 white, negatives kept). Interpolated values never leave
/// the range of the samples they were computed from, so no output value exceeds 1; bit `p`
/// of the output clip mask is set when a clipped sample contributed to plane `p` at that
/// pixel (see `docs/demosaic.md` for the exact rule of each method).
public enum Demosaicer {
    /// The method used when none is named: `.rcd`.
    public static let defaultMethod: DemosaicMethod = .rcd

    /// CFA Stage 2 image → Stage 3, three planes (half size for `.superpixel`).
    ///
    /// The CFA pattern's origin is the top-left pixel of the IFD, not of the ActiveArea:
    /// ActiveArea pixel (r, c) has the colour
    /// `pattern[((r + top) mod 2) · 2 + (c + left) mod 2]`, with (top, left) the
    /// ActiveArea's origin from `image.mapping.activeArea`. Image edges are handled by
    /// mirroring the mosaic about its first and last rows and columns, which keeps the
    /// Bayer phase. The result carries `image.ifd` and `image.mapping` over; for
    /// `.superpixel`, output pixel (y, x) covers ActiveArea rows 2y…2y+1 and columns
    /// 2x…2x+1 (a trailing odd row or column is dropped).
    ///
    /// - Throws: `DemosaicError` when the image has more than one plane, the ActiveArea is
    ///   smaller than 2 × 2, or the CFA is not a 2 × 2 red/green/blue Bayer pattern with
    ///   CFALayout 1.
    public static func demosaic(_ image: LinearImage, cfa: CFADescription,
                                method: DemosaicMethod = defaultMethod) throws(DemosaicError) -> Stage3Image {
        let ifdPath = image.ifd.path
        guard image.planes == 1 else { throw DemosaicError(ifd: ifdPath, reason: .planeCount(image.planes)) }
        let phase = try phase(cfa: cfa, activeArea: image.mapping.activeArea, width: image.width, height: image.height, ifd: ifdPath)
        let mosaic = Mosaic(values: image.values.samples, clip: image.clipMask,
                            width: image.width, height: image.height, phase: phase)
        let planes: (values: ImageBuffer<Float>, clip: [UInt8])
        switch method {
        case .superpixel: planes = Superpixel.run(mosaic)
        case .bilinear: planes = Bilinear.run(mosaic)
        case .rcd: planes = RatioCorrected.run(mosaic)
        }
        return Stage3Image(planes: LinearImage(ifd: image.ifd, values: planes.values, clipMask: planes.clip, mapping: image.mapping))
    }

    /// The Bayer phase of a `width` × `height` mosaic over `activeArea`.
    /// - Throws: `DemosaicError` when the mosaic is smaller than 2 × 2 or `cfa` is not a 2 × 2
    ///   red/green/blue Bayer pattern with CFALayout 1.
    static func phase(cfa: CFADescription, activeArea: PixelRect, width: Int, height: Int,
                      ifd: String) throws(DemosaicError) -> BayerPhase {
        let phase = try BayerPhase(cfa: cfa, top: activeArea.top, left: activeArea.left, ifd: ifd)
        guard width >= 2, height >= 2 else { throw DemosaicError(ifd: ifd, reason: .tooSmall(width: width, height: height)) }
        return phase
    }
}

/// The validated input of a demosaicing kernel: the mosaic, its clip mask (bit 0 used)
/// and its Bayer phase relative to the first pixel.
struct Mosaic: Sendable {
    let values: [Float]
    let clip: [UInt8]
    let width: Int
    let height: Int
    let phase: BayerPhase
}

/// What a demosaicing kernel reads and fills, as views shared by the bands demosaiced at once
/// (`PixelView`'s rule: each band writes its own output rows and reads only the mosaic):
/// `src` and `clipIn`, the mosaic and its clip bytes, row `r` of the view being mosaic row `r`
/// (only the rows the band reads need be held); `dst`, three interleaved planes, and `mask`,
/// clip bits per pixel, row 0 of each being the band's first output row (`outputTop`).
struct KernelBuffers: Sendable {
    let src: PixelView<Float>
    let clipIn: PixelView<UInt8>
    let dst: PixelView<Float>
    let mask: PixelView<UInt8>

    /// Views of a whole mosaic (`width` × `height`) and of an output of `outputWidth` ×
    /// `outputHeight` pixels.
    init(mosaic src: UnsafePointer<Float>, clip: UnsafePointer<UInt8>, width: Int, height: Int,
         output dst: UnsafeMutablePointer<Float>, mask: UnsafeMutablePointer<UInt8>, outputWidth: Int, outputHeight: Int) {
        self.src = PixelView(UnsafeMutablePointer(mutating: src), width: width, height: height)
        self.clipIn = PixelView(UnsafeMutablePointer(mutating: clip), width: width, height: height)
        self.dst = PixelView(dst, width: outputWidth, height: outputHeight, channels: 3)
        self.mask = PixelView(mask, width: outputWidth, height: outputHeight)
    }
}

extension Mosaic {
    /// Allocates a `width × height` three-plane output and its clip mask, lets `fill` write
    /// every value of both, and returns them.
    func demosaic(width: Int, height: Int, _ fill: (KernelBuffers) -> Void) -> (values: ImageBuffer<Float>, clip: [UInt8]) {
        let count = width * height
        var out = [Float](unsafeUninitializedCapacity: count * 3) { _, n in n = count * 3 }
        var clip = [UInt8](unsafeUninitializedCapacity: count) { _, n in n = count }
        values.withUnsafeBufferPointer { srcAll in
            self.clip.withUnsafeBufferPointer { clipInAll in
                out.withUnsafeMutableBufferPointer { dstAll in
                    clip.withUnsafeMutableBufferPointer { maskAll in
                        fill(KernelBuffers(mosaic: srcAll.baseAddress!, clip: clipInAll.baseAddress!, width: self.width,
                                           height: self.height, output: dstAll.baseAddress!, mask: maskAll.baseAddress!,
                                           outputWidth: width, outputHeight: height))
                    }
                }
            }
        }
        return (ImageBuffer(width: width, height: height, channels: 3, samples: out), clip)
    }
}

/// How a demosaicing method cuts a `width` × `height` mosaic into bands of output rows, the
/// mosaic rows each band reads, and the demosaicing of one band from a window of the
/// mosaic's rows that holds them — for a pipeline that keeps only a window of the mosaic.
/// Each band is what `Demosaicer.demosaic` gives for those rows, bit for bit, since every
/// method reads the mosaic around its rows and writes only its own (RCD in its own 64-row
/// bands).
public struct DemosaicBands: Sendable {
    public let width: Int, height: Int
    public let method: DemosaicMethod
    let phase: BayerPhase

    /// - Parameters: the mosaic's size and `activeArea`, its place in the IFD (for the Bayer phase).
    /// - Throws: `DemosaicError` as `Demosaicer.demosaic`.
    public init(width: Int, height: Int, cfa: CFADescription, activeArea: PixelRect, ifd: String,
                method: DemosaicMethod) throws(DemosaicError) {
        phase = try Demosaicer.phase(cfa: cfa, activeArea: activeArea, width: width, height: height, ifd: ifd)
        self.width = width
        self.height = height
        self.method = method
    }

    /// The size of the three-plane output (half of the mosaic's for `.superpixel`).
    public var outputWidth: Int { method == .superpixel ? width / 2 : width }
    public var outputHeight: Int { method == .superpixel ? height / 2 : height }

    /// Output rows per band.
    public var bandRows: Int { method == .rcd ? RatioCorrected.bandHeight : 32 }
    public var bandCount: Int { (outputHeight + bandRows - 1) / bandRows }
    public func rows(ofBand b: Int) -> Range<Int> { (b * bandRows)..<min(outputHeight, (b + 1) * bandRows) }

    /// The mosaic rows band `b` reads: its own and, but for superpixels, the kernel's reach
    /// around them (RCD 10 rows, bilinear 1; mirrored rows at the edges lie inside these).
    public func inputRows(ofBand b: Int) -> Range<Int> {
        let rows = rows(ofBand: b)
        switch method {
        case .superpixel: return (2 * rows.lowerBound)..<min(height, 2 * rows.upperBound)
        case .bilinear: return max(0, rows.lowerBound - 1)..<min(height, rows.upperBound + 1)
        case .rcd: return max(0, rows.lowerBound - RatioCorrected.margin)..<min(height, rows.upperBound + RatioCorrected.margin)
        }
    }

    /// Demosaics band `b` into `values` (its rows × `outputWidth` × 3 interleaved planes) and
    /// `mask` (clip bits per pixel, as `Demosaicer.demosaic` sets them), reading a window of
    /// the mosaic: mosaic row `r` at `window + (r − windowTop) · width` (and its clip bytes,
    /// bit 0 used, likewise in `clip`), for at least the rows `inputRows(ofBand: b)`.
    /// `rowHasClip` says, for those rows, whether they hold a clipped sample.
    public func demosaic(band b: Int, window: UnsafePointer<Float>, clip: UnsafePointer<UInt8>, windowTop: Int,
                         rowHasClip: RowClipIndex, into values: UnsafeMutablePointer<Float>, mask: UnsafeMutablePointer<UInt8>) {
        let rows = rows(ofBand: b)
        // The kernels address the mosaic by image row: shift the window's origin to row 0.
        let io = KernelBuffers(mosaic: window - windowTop * width, clip: clip - windowTop * width, width: width, height: height,
                               output: values, mask: mask, outputWidth: outputWidth, outputHeight: rows.count)
        switch method {
        case .superpixel:
            Superpixel.band(io, outputTop: rows.lowerBound, rows: rows, width: width, phase: phase)
        case .bilinear:
            Bilinear.band(io, outputTop: rows.lowerBound, rows: rows, width: width, height: height, phase: phase,
                          rowHasClip: rowHasClip)
        case .rcd:
            RatioCorrected.band(io, outputTop: rows.lowerBound, y0: rows.lowerBound, rows: rows.count, width: width,
                                height: height, phase: phase, rowHasClip: rowHasClip)
        }
    }
}

/// Stage 3 band by band from a whole Stage 2 mosaic (see `DemosaicBands`).
public struct BandDemosaicer: Sendable {
    let mosaic: Mosaic
    public let bands: DemosaicBands
    let rowHasClip: RowClipIndex

    /// - Parameters: the Stage 2 mosaic over the ActiveArea (`values`, and `clip` with bit 0
    ///   set at clipped samples), `activeArea` its place in the IFD (for the Bayer phase).
    /// - Throws: `DemosaicError` as `Demosaicer.demosaic`.
    public init(values: [Float], clip: [UInt8], width: Int, height: Int, cfa: CFADescription, activeArea: PixelRect,
                ifd: String, method: DemosaicMethod) throws(DemosaicError) {
        bands = try DemosaicBands(width: width, height: height, cfa: cfa, activeArea: activeArea, ifd: ifd, method: method)
        precondition(values.count == width * height && clip.count == width * height)
        mosaic = Mosaic(values: values, clip: clip, width: width, height: height, phase: bands.phase)
        rowHasClip = method == .superpixel ? RowClipIndex(flags: []) : RowClipIndex(mosaic)
    }

    /// Whether `cfa` is a pattern the demosaicing methods take (a 2×2 red/green/blue Bayer
    /// pattern with CFALayout 1).
    public static func supports(cfa: CFADescription, activeArea: PixelRect) -> Bool {
        (try? BayerPhase(cfa: cfa, top: activeArea.top, left: activeArea.left, ifd: "")) != nil
    }

    /// Demosaics band `b` into `values` (its rows × `outputWidth` × 3 interleaved planes) and
    /// `mask` (clip bits per pixel, as `Demosaicer.demosaic` sets them).
    public func demosaic(band b: Int, into values: UnsafeMutablePointer<Float>, mask: UnsafeMutablePointer<UInt8>) {
        mosaic.values.withUnsafeBufferPointer { src in
            mosaic.clip.withUnsafeBufferPointer { clip in
                bands.demosaic(band: b, window: src.baseAddress!, clip: clip.baseAddress!, windowTop: 0, rowHasClip: rowHasClip,
                               into: values, mask: mask)
            }
        }
    }
}
