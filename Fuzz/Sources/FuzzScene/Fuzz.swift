import CaptureSimulation
import Foundation

/// The scene-description reader of `simulate --scene FILE.json` on arbitrary bytes: the JSON
/// decoded and the scene checked and laid out (`SceneLayout`, with the command's default
/// limits), as the command does before it renders; scenes of at most 64 × 64 pixels are
/// rendered too. Errors are fine, crashes are bugs.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScene(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let description = try? SceneDescription.decode(Data(bytes: data, count: size), path: "fuzz.json"),
          let layout = try? SceneLayout(description) else { return 0 }
    if layout.width * layout.height <= 4096 { _ = layout.render() }
    return 0
}
