internal import CHalf

/// Float ↔ IEEE binary16 conversion, using the CPU's F16C instructions when present.
///
/// Rounding is to nearest, ties to even, the same as `Float16(_:)`; values beyond ±65504
/// become ±infinity, and the conversion reports how many did (`HalfRangeError` is what the
/// writers make of it). Conversion is split across cores for large buffers.
public enum HalfConversion {
    /// True when the hardware path is in use on this machine.
    public static var usesHardware: Bool { chalf_has_f16c() != 0 }

    /// Converts `source` into `destination` (same count).
    /// - Returns: how many results are not finite (±infinity from values beyond ±65504, or NaN).
    @discardableResult
    public static func convert(_ source: UnsafeBufferPointer<Float>, to destination: UnsafeMutableBufferPointer<Float16>) -> Int {
        precondition(source.count == destination.count)
        guard let src = source.baseAddress, let dst = destination.baseAddress else { return 0 }
        let raw = UnsafeMutableRawPointer(dst).assumingMemoryBound(to: UInt16.self)
        if source.count < 1 << 19 {
            return chalf_f32_to_f16(src, raw, source.count)  // small (e.g. one row, from a worker): no nested parallelism
        }
        // Safe because each chunk converts its own range.
        nonisolated(unsafe) let s = src, d = raw
        let nonFinite = SharedCount()
        Parallel.forEachChunk(count: source.count, minimumChunk: 1 << 18) { range in
            nonFinite.add(chalf_f32_to_f16(s + range.lowerBound, d + range.lowerBound, range.count))
        }
        return nonFinite.value
    }

    /// Returns `values` as half floats, or throws `HalfRangeError` when one of them is beyond
    /// ±65504 (or not finite): half precision cannot hold it, and infinity is never written.
    /// - Parameter what: names the values in the error, e.g. the output file.
    public static func checkedHalves(_ values: [Float], what: String) throws -> [Float16] {
        var out = [Float16](repeating: 0, count: values.count)
        let nonFinite = values.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in convert(src, to: dst) }
        }
        if nonFinite > 0 { throw HalfRangeError(what: what, count: nonFinite) }
        return out
    }

    /// Converts `source` into `destination` (same count).
    public static func convert(_ source: UnsafeBufferPointer<Float16>, to destination: UnsafeMutableBufferPointer<Float>) {
        precondition(source.count == destination.count)
        guard let src = source.baseAddress, let dst = destination.baseAddress else { return }
        let raw = UnsafeRawPointer(src).assumingMemoryBound(to: UInt16.self)
        // Safe because each chunk converts its own range.
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

/// Values that half precision cannot hold (beyond ±65504, where binary16 has only
/// infinity): nothing is written as infinity. `convert` and `Pipeline.convert` take it as
/// the sign to write 32-bit float channels instead.
public struct HalfRangeError: SceneLinearFailure, Equatable {
    /// What was being converted (e.g. the output file).
    public let what: String
    /// How many values were beyond the range (or not finite).
    public let count: Int

    public init(what: String, count: Int) {
        self.what = what
        self.count = count
    }

    public var category: FailureCategory { .outputFailure }
    public var description: String {
        "\(what): \(count) values are beyond the half-float range (±65504) and would be written as infinity; write 32-bit float channels (--exr-type float, --hdf5-type float32)"
    }
}
