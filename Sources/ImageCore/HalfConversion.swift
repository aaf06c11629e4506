internal import CHalf

/// Float ↔ IEEE binary16 conversion, using the CPU's F16C instructions when present.
///
/// Rounding is to nearest, ties to even, the same as `Float16(_:)`; values beyond ±65504
/// become ±infinity. Conversion is split across cores for large buffers.
public enum HalfConversion {
    /// True when the hardware path is in use on this machine.
    public static var usesHardware: Bool { chalf_has_f16c() != 0 }

    /// Converts `source` into `destination` (same count).
    public static func convert(_ source: UnsafeBufferPointer<Float>, to destination: UnsafeMutableBufferPointer<Float16>) {
        precondition(source.count == destination.count)
        guard let src = source.baseAddress, let dst = destination.baseAddress else { return }
        let raw = UnsafeMutableRawPointer(dst).assumingMemoryBound(to: UInt16.self)
        if source.count < 1 << 19 {
            chalf_f32_to_f16(src, raw, source.count)  // small (e.g. one row, from a worker): no nested parallelism
            return
        }
        nonisolated(unsafe) let s = src, d = raw
        Parallel.forEachChunk(count: source.count, minimumChunk: 1 << 18) { range in
            chalf_f32_to_f16(s + range.lowerBound, d + range.lowerBound, range.count)
        }
    }

    /// Converts `source` into `destination` (same count).
    public static func convert(_ source: UnsafeBufferPointer<Float16>, to destination: UnsafeMutableBufferPointer<Float>) {
        precondition(source.count == destination.count)
        guard let src = source.baseAddress, let dst = destination.baseAddress else { return }
        let raw = UnsafeRawPointer(src).assumingMemoryBound(to: UInt16.self)
        nonisolated(unsafe) let s = raw, d = dst
        Parallel.forEachChunk(count: source.count, minimumChunk: 1 << 18) { range in
            chalf_f16_to_f32(s + range.lowerBound, d + range.lowerBound, range.count)
        }
    }

    /// Returns `values` as half floats.
    public static func halves(_ values: [Float]) -> [Float16] {
        var out = [Float16](repeating: 0, count: values.count)
        values.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in convert(src, to: dst) }
        }
        return out
    }

    /// Returns `values` as floats.
    public static func floats(_ values: [Float16]) -> [Float] {
        var out = [Float](repeating: 0, count: values.count)
        values.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in convert(src, to: dst) }
        }
        return out
    }
}
