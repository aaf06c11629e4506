import ImageCore

/// What happens to values outside a stage's logical range after each opcode.
///
/// DNG 1.7.1 (chapter 7) clips the image to the logical range of its stage after every
/// opcode: 0 … 2^16 − 1 (or 2^32 − 1) at Stage 1, 0 … 1 at Stages 2 and 3. That loses
/// information a measurement wants: noise around black averages to the true (near-zero)
/// signal only if its negative half is kept, and a gain map lifting a saturated sample
/// above 1 should stay visibly above 1 so it can be flagged rather than silently flattened.
public enum ClippingPolicy: String, Sendable, CaseIterable, Codable {
    /// The specification's behaviour: the whole image is clipped to the logical range
    /// before the first opcode that changes values, and every value an opcode writes is
    /// clipped again. Matches the DNG SDK's integer stages.
    case dngClip
    /// No clipping: negatives and values above the range are kept. The report still
    /// counts, per opcode, how many written values lie outside the range.
    case keepRange
}

/// The image an opcode list is applied to: where it sits in the stage's coordinate
/// system, and the facts about it the opcodes need.
///
/// Opcode rectangles are in the coordinates of the stage's image: Stage 1 (OpcodeList1)
/// is the whole raw IFD with (0, 0) at its top-left pixel; Stages 2 and 3 (OpcodeList2/3)
/// are the ActiveArea-cropped image with (0, 0) at the ActiveArea's top-left. GainMap
/// positions and the vignette and warp centres are relative to `imageBounds`.
public struct OpcodeContext: Sendable {
    /// The stage image's rectangle in its own coordinates (normally (0, 0) to
    /// (height, width)); relative positions are fractions of it.
    public var imageBounds: PixelRect
    /// The stage row of the buffer's first row (0 when the buffer is the whole image).
    public var originRow: Int
    /// The stage column of the buffer's first column.
    public var originColumn: Int
    /// What happens to values outside the stage's logical range. Default: `.dngClip`.
    public var clipping: ClippingPolicy
    /// The image's Bayer phase in DNG encoding (see `bayerPhase(cfaPattern:)`) when it is
    /// a one-plane 2 × 2 RGB Bayer mosaic; `nil` otherwise. The bad-pixel opcodes run only
    /// on such images.
    public var bayerPhase: Int?
    /// The top of the Stage 1 logical range: 65,535 for samples of up to 16 bits,
    /// 4,294,967,295 for 32-bit samples.
    public var stage1Maximum: Float
    /// True when the Stage 1 samples are integers. The DNG SDK then holds Stages 2 and 3 as
    /// 16-bit codes (0 … 65,535 for 0 … 1) and DeltaPerRow/DeltaPerColumn deltas at those
    /// stages are in code units (1/65,535); for floating-point sources they are in linear
    /// reference units. Default: true (every file this project decodes today).
    public var integerSource: Bool

    /// Creates a context.
    /// - Parameters:
    ///   - imageBounds: the stage image's rectangle in its own coordinates.
    ///   - originRow: the stage row of the buffer's first row.
    ///   - originColumn: the stage column of the buffer's first column.
    ///   - clipping: the clipping policy (default `.dngClip`, the specification's).
    ///   - bayerPhase: the Bayer phase (0 … 3) of a one-plane Bayer image, else `nil`.
    ///   - stage1Maximum: the top of the Stage 1 range (default 65,535).
    ///   - integerSource: whether the Stage 1 samples were integers (default true).
    public init(imageBounds: PixelRect, originRow: Int = 0, originColumn: Int = 0,
                clipping: ClippingPolicy = .dngClip, bayerPhase: Int? = nil,
                stage1Maximum: Float = 65535, integerSource: Bool = true) {
        self.imageBounds = imageBounds
        self.originRow = originRow
        self.originColumn = originColumn
        self.clipping = clipping
        self.bayerPhase = bayerPhase
        self.stage1Maximum = stage1Maximum
        self.integerSource = integerSource
    }

    /// A context for a buffer that is the whole stage image.
    /// - Parameters:
    ///   - image: the buffer; the stage bounds become (0, 0) to (height, width).
    ///   - clipping: the clipping policy (default `.dngClip`).
    ///   - bayerPhase: the Bayer phase (0 … 3) of a one-plane Bayer image, else `nil`.
    public init(wholeImage image: ImageBuffer<Float>, clipping: ClippingPolicy = .dngClip, bayerPhase: Int? = nil) {
        self.init(imageBounds: PixelRect(width: image.width, height: image.height), clipping: clipping,
                  bayerPhase: bayerPhase)
    }

    /// The DNG Bayer phase of a 2 × 2 CFA pattern whose top-left pixel is at stage (0, 0).
    ///
    /// The pattern lists the colours of (0, 0), (0, 1), (1, 0), (1, 1) with 0 red, 1 green,
    /// 2 blue (CFAPattern, tag 33422). The DNG encoding is 0 for G R / B G, 1 for R G / G B,
    /// 2 for B G / G R and 3 for G B / R G.
    /// - Returns: the phase, or `nil` when the pattern is not an RGB Bayer pattern.
    public static func bayerPhase(cfaPattern: [Int]) -> Int? {
        switch cfaPattern {
        case [1, 0, 2, 1]: return 0
        case [0, 1, 1, 2]: return 1
        case [2, 1, 1, 0]: return 2
        case [1, 2, 0, 1]: return 3
        default: return nil
        }
    }
}

/// What applying an opcode list did.
public struct OpcodeReport: Sendable, Equatable {
    /// An opcode that ran.
    public struct Applied: Sendable, Equatable {
        /// The opcode's position in the list, counted from 0.
        public var index: Int
        public var id: UInt32
        /// The samples the opcode processed (pixels repaired for the bad-pixel opcodes, 0
        /// for TrimBounds).
        public var samples: Int
        /// Written samples outside the stage's logical range: clipped under `.dngClip`,
        /// kept under `.keepRange`.
        public var outOfRange: Int

        public init(index: Int, id: UInt32, samples: Int, outOfRange: Int) {
            self.index = index
            self.id = id
            self.samples = samples
            self.outOfRange = outOfRange
        }

        /// The opcode's name.
        public var name: String { OpcodeID.name(of: id) }
    }

    /// Why an opcode did not run.
    public enum SkipReason: Sendable, Equatable {
        /// An optional opcode with an ID this reader does not know.
        case unknownOptional
        /// An optional opcode needing a DNG version newer than 1.7.1.0.
        case newerVersion
        /// A warp (WarpRectilinear, WarpFisheye, WarpRectilinear2): it moves pixels, and
        /// this module leaves geometry to the caller.
        case geometric
        /// A WarpRectilinear or WarpFisheye right after an optional WarpRectilinear2,
        /// which replaces it for readers that understand DNG 1.6.
        case replacedByWarpRectilinear2
        /// An optional opcode that cannot run on this image (the text says why).
        case notApplicable(String)
    }

    /// An opcode that did not run.
    public struct Skipped: Sendable, Equatable {
        public var index: Int
        public var id: UInt32
        public var reason: SkipReason

        public init(index: Int, id: UInt32, reason: SkipReason) {
            self.index = index
            self.id = id
            self.reason = reason
        }

        /// The opcode's name.
        public var name: String { OpcodeID.name(of: id) }
    }

    /// The opcodes that ran, in list order.
    public var applied: [Applied] = []
    /// The opcodes that did not run, in list order.
    public var skipped: [Skipped] = []
    /// Notes: parse-time warnings of the list, then anything noticed while applying.
    public var warnings: [String] = []
    /// The rectangle the image should be cropped to when the list held TrimBounds (the
    /// intersection of all of them), in stage coordinates; the buffer itself is not cropped.
    public var trimBounds: PixelRect?
    /// Samples outside the logical range before the first value-changing opcode (clipped
    /// under `.dngClip`).
    public var inputOutOfRange: Int = 0

    public init() {}

    /// The geometric opcodes that the caller still has to consider (not replaced by a
    /// WarpRectilinear2).
    public var pendingWarps: [Int] { skipped.filter { $0.reason == .geometric }.map(\.index) }
}
