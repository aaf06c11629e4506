import Foundation
import SceneLinearKit

/// The DNG container parser and the metadata report on arbitrary bytes: errors are fine,
/// crashes are bugs.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContainer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    if let dng = try? DNGFile(file: FileBytes(data: bytes, path: "fuzz.dng")) {
        _ = try? InfoReport(dng: dng, includeTags: true).json()
        for image in dng.images { _ = try? dng.opcodeListBytes(2, of: image) }
    }
    return 0
}
