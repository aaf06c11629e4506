import Foundation
import LosslessJPEG

/// The lossless-JPEG decoder on arbitrary bytes, into a buffer of at most 4 M samples.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLosslessJPEG(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let raw = UnsafeRawBufferPointer(start: data, count: size)
    guard let frame = try? LJ92Decoder.readFrame(raw), frame.sampleCount <= 1 << 22 else { return 0 }
    var out = [UInt16](repeating: 0, count: frame.sampleCount)
    out.withUnsafeMutableBufferPointer { buffer in
        _ = try? LJ92Decoder.decode(raw, into: buffer)
    }
    return 0
}
