import ImageCore

/// The OpenEXR compressions a SceneLinear EXR can be written with.
///
/// `none`, `rle`, `zips`, `zip`, `piz` are lossless for every channel type; `pxr24` is
/// lossless for HALF channels and rounds FLOAT ones to 24 bits; `b44` and `b44a` are lossy
/// (4×4 HALF blocks packed into 14 bytes, 3 for flat blocks with B44A; FLOAT channels are
/// kept as they are); `dwaa` and `dwab` are lossy for R, G, B and lossless for the other
/// channels (OpenEXRCore 3.1 has no DWA encoder: the file is written uncompressed, then
/// rewritten by the OpenEXR C++ library, `CEXRDWA`). Raw values are the names `exrheader`
/// prints.
public enum EXRCompression: String, CaseIterable, Sendable {
    /// No compression: largest files, fastest to write and read.
    case none
    /// Run-length encoding: fast, weak on noisy data.
    case rle
    /// zlib, one scanline per chunk.
    case zips
    /// zlib, 16 scanlines per chunk.
    case zip
    /// Wavelet + Huffman, 32 scanlines per chunk: fast to write, slower to read.
    case piz
    /// 24-bit float truncation + zlib; lossless for HALF channels.
    case pxr24
    /// Lossy: 4×4 blocks of HALF values in 14 bytes (FLOAT channels are stored as they are).
    case b44
    /// B44, with flat blocks stored in 3 bytes.
    case b44a
    /// Lossy: DCT of R, G, B (and Y, RY, BY) in 32-scanline chunks, other channels (masks,
    /// alpha) lossless; written through the OpenEXR C++ library (scanline files only).
    case dwaa
    /// DWAA in 256-scanline chunks.
    case dwab

    /// Whether decoding gives back exactly the values written (for HALF channels).
    public var isLossless: Bool { ![.b44, .b44a, .dwaa, .dwab].contains(self) }
}

/// The sample type of the EXR colour and mask channels.
public enum EXRPixelType: String, CaseIterable, Sendable {
    /// IEEE binary16: the default; values beyond ±65504 become ±infinity.
    case half
    /// IEEE binary32: the pipeline's own precision, twice the size.
    case float
}

/// How the extra layers (clip mask, semantic masks) are named in the EXR.
public enum EXRLayout: String, CaseIterable, Sendable {
    /// One part; the masks are channels `mask_<name>` (no layer dots), so readers that
    /// treat any layered file as multi-layer (Blender 3.x) open it as a plain RGB(A) image.
    case flat
    /// One part; the masks are layers `mask.<name>.Y` (Nuke and OIIO group them by layer).
    case layers
}

/// Tiled output: square tiles of `tileSize` pixels, optionally with mip-map levels
/// (each level half the size of the one above, rounded down, by 2×2 averaging).
public struct EXRTiling: Sendable, Equatable {
    public var tileSize: Int
    public var mipmaps: Bool

    public init(tileSize: Int = 64, mipmaps: Bool = false) {
        self.tileSize = tileSize
        self.mipmaps = mipmaps
    }
}

/// How `EXRFile.write` encodes an image.
///
/// The default, ZIP, is deflated by `RunLengthDeflater` (runs and per-block Huffman codes,
/// no general match search), which measured on 4032×3024 noisy captures is about three times
/// as fast as libdeflate's fastest level and 0.8 % smaller (docs/performance.md); a
/// `zipLevel` chooses libdeflate at that level instead. ZIP's 16-scanline blocks are read
/// quickly by every compositor, and the stream is plain zlib, so every reader decodes it.
public struct EXROptions: Sendable {
    /// The compression of every chunk.
    public var compression: EXRCompression
    /// Deflate level: libdeflate's 0–12 for `.zip` and `.zips` (0 stores, 1 is the fastest);
    /// for `.pxr24`, zlib's 0–9 (higher values count as 9). `nil`: `RunLengthDeflater` for
    /// ZIP/ZIPS, the library's default (zlib's 6) for PXR24.
    public var zipLevel: Int?
    /// Adds the clip mask channel (`mask_clipped`, or `mask.clipped.Y` with the `layers`
    /// layout): 1 where `clipMask != 0`, else 0 (all 0 when the image has no clip mask).
    /// On by default, so that clipping travels with the pixels: a reader of a file without
    /// the channel cannot tell a clipped pixel from an unclipped one.
    public var includeClipMask: Bool = true
    /// HALF (default) or FLOAT channels.
    public var pixelType: EXRPixelType = .half
    /// Scanline (nil, the default) or tiled output.
    public var tiling: EXRTiling? = nil
    /// Names of the mask channels.
    public var layout: EXRLayout = .flat

    /// Options for `EXRFile.write`; see the properties for the meaning of each.
    public init(compression: EXRCompression = .zip, zipLevel: Int? = nil, includeClipMask: Bool = true,
                pixelType: EXRPixelType = .half, tiling: EXRTiling? = nil, layout: EXRLayout = .flat) {
        self.compression = compression
        self.zipLevel = zipLevel
        self.includeClipMask = includeClipMask
        self.pixelType = pixelType
        self.tiling = tiling
        self.layout = layout
    }
}

/// The pixels and header of the first part of an EXR file, as `EXRFile.read` returns them.
public struct EXRContents: Sendable {
    /// Data window width.
    public var width: Int
    /// Data window height.
    public var height: Int
    /// Every channel by name, row-major over the data window, widened to `Float`
    /// (HALF exactly, UINT by `Float(value)`).
    public var channels: [String: [Float]]
    /// The raw samples of the HALF channels, for bit-exact comparisons.
    public var halfChannels: [String: [Float16]]
    /// Every header attribute by name (including the required ones such as
    /// `dataWindow`, `channels`, `compression`).
    public var attributes: [String: EXRAttributeValue]
    /// The part's compression, or `nil` when it is not one of `EXRCompression`.
    public var compression: EXRCompression?

    /// Creates contents; used by the reader and by tests.
    public init(width: Int, height: Int, channels: [String: [Float]], halfChannels: [String: [Float16]],
                attributes: [String: EXRAttributeValue], compression: EXRCompression?) {
        self.width = width
        self.height = height
        self.channels = channels
        self.halfChannels = halfChannels
        self.attributes = attributes
        self.compression = compression
    }
}

/// The value of one EXR header attribute.
///
/// Vectors and matrices keep their element order from the file: `v2*`/`v3*` as x, y(, z),
/// matrices row-major, `chromaticities` as red x, y, green x, y, blue x, y, white x, y,
/// boxes as min x, min y, max x, max y.
public enum EXRAttributeValue: Sendable, Equatable {
    case string(String)
    case stringVector([String])
    case int(Int)
    case float(Float)
    case double(Double)
    case floatVector([Float])
    /// 8 values: red, green, blue and white xy.
    case chromaticities([Float])
    case v2i([Int])
    case v2f([Float])
    case v2d([Double])
    case v3i([Int])
    case v3f([Float])
    case v3d([Double])
    case m33f([Float])
    case m33d([Double])
    case m44f([Float])
    case m44d([Double])
    case box2i([Int])
    case box2f([Float])
    case rational(numerator: Int, denominator: Int)
    /// The compression's name as `exrheader` prints it ("zip", "piz", "dwaa", ...).
    case compression(String)
    /// "increasingY", "decreasingY" or "randomY".
    case lineOrder(String)
    /// The channel names of a `chlist`, in file order.
    case channelList([String])
    /// Tile size and level/rounding mode bits of a `tiledesc`.
    case tileDescription(width: Int, height: Int, levelMode: Int, roundingMode: Int)
    /// A type this reader does not decode (preview, keycode, timecode, opaque, ...).
    case other(typeName: String)
}
