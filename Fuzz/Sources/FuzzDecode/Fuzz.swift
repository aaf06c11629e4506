import Foundation
import SceneLinearKit

/// The whole decode path — container, Stage 1, Stage 2, opcodes, demosaicing, colour,
/// geometry — on arbitrary bytes, with a pixel cap so huge declared sizes are refused
/// rather than allocated: the conversion `convert` and the measurements use, into half
/// floats and into `Float`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecode(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    guard let dng = try? DNGFile(file: FileBytes(data: bytes, path: "fuzz.dng")) else { return 0 }
    var options = DevelopOptions()
    options.limits = DecodeLimits(maxPixels: 1 << 20)
    _ = try? Pipeline.develop(dng, options: options)
    _ = try? Pipeline.developHalf(dng, options: options, keepClipMask: true)
    return 0
}
