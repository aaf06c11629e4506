import ImageCore

/// The decoded samples of one block as `RawDecoder.forEachBlock` hands them on, in the type
/// Stage 1 holds them in (`StoredSampleType`): 16-bit (and narrower) integers, or floating-point
/// samples of any stored width as `Float`. Pixels interleaved; the pointer is valid only for
/// the call it is given to.
public enum BlockSamples {
    case uint16(UnsafePointer<UInt16>)
    case float32(UnsafePointer<Float>)

    /// Samples of `type` (`.uint16` or `.float32`) at `raw`, bound to that type for `count` samples.
    init(binding raw: UnsafeMutableRawPointer, count: Int, as type: StoredSampleType) {
        switch type {
        case .float32: self = .float32(UnsafePointer(raw.bindMemory(to: Float.self, capacity: count)))
        case .uint16: self = .uint16(UnsafePointer(raw.bindMemory(to: UInt16.self, capacity: count)))
        case .uint32: preconditionFailure("32-bit integer samples are not decoded block by block")
        }
    }

    /// Samples already bound to their type (a recorded block replayed).
    init(_ raw: UnsafeRawPointer, as type: StoredSampleType) {
        switch type {
        case .float32: self = .float32(raw.assumingMemoryBound(to: Float.self))
        case .uint16: self = .uint16(raw.assumingMemoryBound(to: UInt16.self))
        case .uint32: preconditionFailure("32-bit integer samples are not decoded block by block")
        }
    }

    /// The samples `n` samples further on.
    public func advanced(by n: Int) -> BlockSamples {
        switch self {
        case .uint16(let p): return .uint16(p + n)
        case .float32(let p): return .float32(p + n)
        }
    }

    public var type: StoredSampleType {
        switch self {
        case .uint16: return .uint16
        case .float32: return .float32
        }
    }

    /// The samples when they are 16-bit integers, else nil.
    public var uint16: UnsafePointer<UInt16>? {
        if case .uint16(let p) = self { return p }
        return nil
    }

    /// The samples when they are floating point, else nil.
    public var float32: UnsafePointer<Float>? {
        if case .float32(let p) = self { return p }
        return nil
    }

    /// Bytes per sample of a block of `type` (2 or 4).
    static func bytes(_ type: StoredSampleType) -> Int { type == .uint16 ? 2 : 4 }
}

extension ImageDigester {
    /// Takes the samples of a decoded block (`add(_:samples:rowStride:)` of its type).
    public func add(_ region: PixelRect, samples: BlockSamples, rowStride: Int) {
        switch samples {
        case .uint16(let p): add(region, samples: p, rowStride: rowStride)
        case .float32(let p): add(region, samples: p, rowStride: rowStride)
        }
    }
}
