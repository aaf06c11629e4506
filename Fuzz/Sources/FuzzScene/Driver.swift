import FuzzSupport

@_cdecl("FuzzScene_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzzScene(data, size) }
}
