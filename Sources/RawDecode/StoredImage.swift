import DNGContainer
import ImageCore

/// The type Stage 1 stores samples in.
public enum StoredSampleType: String, Sendable, Equatable, Codable {
    /// Unsigned integers of 1–16 bits (and 8-bit lossy JPEG, JPEG XL integers).
    case uint16
    /// Unsigned integers of 17–32 bits.
    case uint32
    /// IEEE floating point of 16 (half), 24 (DNG's 1-7-16 format) or 32 bits, all of which
    /// `Float` holds exactly.
    case float32
}

/// Stored samples of one of the three types; `samplesPerPixel` interleaved samples per pixel.
public enum StoredSamples: Sendable {
    case uint16(ImageBuffer<UInt16>)
    case uint32(ImageBuffer<UInt32>)
    case float32(ImageBuffer<Float>)

    public var type: StoredSampleType {
        switch self {
        case .uint16: return .uint16
        case .uint32: return .uint32
        case .float32: return .float32
        }
    }

    public var width: Int {
        switch self {
        case .uint16(let b): return b.width
        case .uint32(let b): return b.width
        case .float32(let b): return b.width
        }
    }

    public var height: Int {
        switch self {
        case .uint16(let b): return b.height
        case .uint32(let b): return b.height
        case .float32(let b): return b.height
        }
    }

    public var channels: Int {
        switch self {
        case .uint16(let b): return b.channels
        case .uint32(let b): return b.channels
        case .float32(let b): return b.channels
        }
    }

    /// The sample of `channel` at (`row`, `column`) as a `Double` (exact for every type).
    public subscript(row: Int, column: Int, channel: Int) -> Double {
        switch self {
        case .uint16(let b): return Double(b[row, column, channel])
        case .uint32(let b): return Double(b[row, column, channel])
        case .float32(let b): return Double(b[row, column, channel])
        }
    }
}

/// Stage 1: the samples of an image IFD exactly as stored, after decompression — the full
/// IFD area (including masked areas outside the ActiveArea), `samplesPerPixel` interleaved
/// samples per pixel, in the IFD's own orientation.
///
/// Integer samples of up to 16 bits are `UInt16` (the common case), wider integers
/// `UInt32`, and floating-point samples of any width `Float`.
public struct StoredImage: Sendable {
    /// The IFD these samples came from (its Stage 2 tags travel with the samples).
    public let ifd: ImageIFD
    public let samples: StoredSamples

    public init(ifd: ImageIFD, samples: StoredSamples) {
        precondition(samples.width == ifd.width && samples.height == ifd.height && samples.channels == ifd.samplesPerPixel)
        self.ifd = ifd
        self.samples = samples
    }

    /// Wraps 16-bit (or narrower) integer samples.
    public init(ifd: ImageIFD, samples: ImageBuffer<UInt16>) {
        self.init(ifd: ifd, samples: .uint16(samples))
    }

    public var width: Int { samples.width }
    public var height: Int { samples.height }
    public var channels: Int { samples.channels }
    public var sampleType: StoredSampleType { samples.type }

    /// The samples when they are `UInt16`, else `nil`.
    public var uint16: ImageBuffer<UInt16>? {
        if case .uint16(let b) = samples { return b }
        return nil
    }

    /// The samples when they are `UInt32`, else `nil`.
    public var uint32: ImageBuffer<UInt32>? {
        if case .uint32(let b) = samples { return b }
        return nil
    }

    /// The samples when they are floating point, else `nil`.
    public var float32: ImageBuffer<Float>? {
        if case .float32(let b) = samples { return b }
        return nil
    }
}

/// Limits on what a single decode may allocate.
public struct DecodeLimits: Sendable {
    /// Largest image accepted, in pixels (default 1 gigapixel).
    public var maxPixels = 1 << 30

    public init(maxPixels: Int = 1 << 30) { self.maxPixels = maxPixels }
}
