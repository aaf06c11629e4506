import FuzzSupport

@_cdecl("FuzzLosslessJPEG_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzzLosslessJPEG(data, size) }
}
