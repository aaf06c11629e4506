import Foundation
import Testing
import TestSupport

/// libjxl, the chart libraries (Cairo, Pango, GLib), libhdf5, libtiff, libcrypto and the
/// OpenEXR C++ library are loaded on first use: a command that decodes no JPEG XL never loads libjxl — `info` of a JPEG XL DNG
/// included, which reads no pixels — one that draws nothing never loads Cairo, one that
/// touches no HDF5 file never loads libhdf5 (nor libcurl and the TLS libraries under it), and
/// only writing a DNG loads libtiff, and only a DWA-compressed EXR the OpenEXR C++ library
/// (OpenEXRCore, the C library, is linked) (glibc's loader, LD_DEBUG=files, says which shared
/// objects a process loads and whether at start or by dlopen). A library that cannot be
/// loaded is an error naming the file, with the exit code docs/cli.md gives.
@Suite struct LazyLibraryTests {
    /// The shared objects named `prefix…` that the command loaded, each with how it was
    /// loaded ("needed by …" at start, "dynamically loaded by …" later).
    static func loads(_ arguments: [String], prefix: String) throws -> [String] {
        var environment = ProcessInfo.processInfo.environment
        environment["LD_DEBUG"] = "files"
        let r = try TestData.run(try CLI.binary, arguments, environment: environment)
        try #require(r.status == 0, "\(arguments): \(r.stderr.suffix(2000))")
        return r.stderr.split(separator: "\n").filter { $0.contains("file=\(prefix)") && !$0.contains("generating link map") }
            .map { String($0) }
    }

    @Test func jpegXLIsLoadedOnlyToDecodeIt() throws {
        let chart = TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng").path
        let dir = TestData.temporaryDirectory("lazy-libraries")
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try Self.loads(["info", chart], prefix: "libjxl").isEmpty)
        #expect(try Self.loads(["convert", chart, "-o", dir.appendingPathComponent("c.exr").path, "-q"], prefix: "libjxl").isEmpty)
        #expect(try Self.loads(["stats", chart], prefix: "libjxl").isEmpty)
        let jxl = try TestData.dngSDKSample("01_jxl_linear_raw_integer.dng").path
        #expect(try Self.loads(["info", jxl], prefix: "libjxl").isEmpty)
        let loaded = try Self.loads(["convert", jxl, "-o", dir.appendingPathComponent("j.exr").path, "-q"], prefix: "libjxl")
        #expect(loaded.count == 2 && loaded.allSatisfy { $0.contains("dynamically loaded") }, "\(loaded)")
    }

    @Test func chartLibrariesAreLoadedOnlyToDraw() throws {
        let chart = TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng").path
        let dir = TestData.temporaryDirectory("lazy-charts")
        defer { try? FileManager.default.removeItem(at: dir) }
        for prefix in ["libcairo", "libpango"] {
            #expect(try Self.loads(["info", chart], prefix: prefix).isEmpty)
            #expect(try Self.loads(["stats", chart], prefix: prefix).isEmpty)
            #expect(try Self.loads(["convert", chart, "-o", dir.appendingPathComponent("c.h5").path, "-q"], prefix: prefix).isEmpty)
        }
        let plot = dir.appendingPathComponent("h.png").path
        let cairo = try Self.loads(["histogram", chart, "--plot", plot, "-q"], prefix: "libcairo")
        #expect(!cairo.isEmpty && cairo.allSatisfy { $0.contains("dynamically loaded") }, "\(cairo)")
        #expect(FileManager.default.fileExists(atPath: plot))
    }

    /// The executable carries the Swift runtime and Foundation (linked statically): it loads
    /// no shared object of the Swift toolchain, so it runs where no toolchain is installed.
    @Test func noSwiftRuntimeLibraryIsLoaded() throws {
        let chart = TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng").path
        var all: [String] = []
        for prefix in ["libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime"] {
            all += try Self.loads(["info", chart], prefix: prefix)
        }
        #expect(all.isEmpty, "\(all)")
        // The loader does report what it loads (the check above can fail).
        #expect(!(try Self.loads(["info", chart], prefix: "libc.so")).isEmpty)
    }

    @Test func hdf5AndTIFFAreLoadedOnlyToUseThem() throws {
        let chart = TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng").path
        let dir = TestData.temporaryDirectory("lazy-hdf5")
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try Self.loads(["info", chart], prefix: "libcrypto").isEmpty)
        for prefix in ["libhdf5", "libcurl", "libtiff"] {
            #expect(try Self.loads(["info", chart], prefix: prefix).isEmpty)
            #expect(try Self.loads(["stats", chart], prefix: prefix).isEmpty)
            #expect(try Self.loads(["convert", chart, "-o", dir.appendingPathComponent("c.exr").path, "-q"], prefix: prefix).isEmpty)
        }
        let h5 = dir.appendingPathComponent("c.h5").path
        let hdf5 = try Self.loads(["convert", chart, "-o", h5, "-q"], prefix: "libhdf5")
        #expect(hdf5.count == 2 && hdf5.allSatisfy { $0.contains("dynamically loaded") }, "\(hdf5)")
        let read = try Self.loads(["stats", h5, "--json"], prefix: "libhdf5")
        #expect(read.count == 2 && read.allSatisfy { $0.contains("dynamically loaded") }, "\(read)")
        #expect(try Self.loads(["stats", h5], prefix: "libtiff").isEmpty)
        let tiff = try Self.loads(["simulate", "--scene", "grey-ramp", "--size", "64x48", "-o", dir.path, "-q"], prefix: "libtiff")
        #expect(tiff.count == 1 && tiff[0].contains("dynamically loaded"), "\(tiff)")
    }

    @Test func openEXRCxxIsLoadedOnlyForDWA() throws {
        let chart = TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng").path
        let dir = TestData.temporaryDirectory("lazy-openexr")
        defer { try? FileManager.default.removeItem(at: dir) }
        let zip = dir.appendingPathComponent("z.exr").path, dwa = dir.appendingPathComponent("d.exr").path
        for prefix in ["libOpenEXR-", "libIex-", "libImath-", "libIlmThread-"] {
            #expect(try Self.loads(["info", chart], prefix: prefix).isEmpty)
            #expect(try Self.loads(["stats", chart], prefix: prefix).isEmpty)
            #expect(try Self.loads(["convert", chart, "-o", zip, "-q"], prefix: prefix).isEmpty)
            #expect(try Self.loads(["stats", zip], prefix: prefix).isEmpty)
        }
        let written = try Self.loads(["convert", chart, "-o", dwa, "--exr-compression", "dwaa", "-q"], prefix: "libOpenEXR-")
        #expect(written.count == 1 && written[0].contains("dynamically loaded"), "\(written)")
        let read = try Self.loads(["stats", dwa], prefix: "libOpenEXR-")
        #expect(read.count == 1 && read[0].contains("dynamically loaded"), "\(read)")
    }

    /// Runs the CLI in a mount namespace where each of `hidden` (shared objects, by soname) is
    /// an empty file, so that dlopen fails as it would where the library is not installed.
    static func runWithout(_ hidden: [String], _ arguments: [String]) throws -> ProcessResult {
        let unshare = URL(fileURLWithPath: "/usr/bin/unshare")
        guard FileManager.default.isExecutableFile(atPath: unshare.path),
              (try? TestData.run(unshare, ["--mount", "true"]).status) == 0 else {
            try TestRequirement.unavailable("a mount namespace (unshare --mount, as root) to hide a library", installedByBootstrap: false)
        }
        let mounts = hidden.map { "mount --bind /dev/null /usr/lib/x86_64-linux-gnu/\($0) && " }.joined()
        return try TestData.run(unshare, ["--mount", "sh", "-c", mounts + "exec \"$@\"", "sh", try CLI.binary.path] + arguments)
    }

    @Test func aLibraryThatCannotBeLoadedIsAnErrorNamingTheFile() throws {
        let chart = TestData.packageRoot.appendingPathComponent("datasets/sample/chart.dng").path
        let dir = TestData.temporaryDirectory("lazy-missing")
        defer { try? FileManager.default.removeItem(at: dir) }
        let hdf5 = ["libhdf5_serial.so.103"]
        // Writing HDF5: exit 16, no file and no temporary left; EXR beside it still works.
        let h5 = dir.appendingPathComponent("c.h5").path
        let write = try Self.runWithout(hdf5, ["convert", chart, "-o", h5, "-q"])
        #expect(write.status == 16, "\(write.stderr)")
        #expect(write.stderr.contains("cannot write \(h5): dlopen: HDF5 files cannot be written: the hdf5 library libhdf5_serial.so.103 could not be loaded"),
                "\(write.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
        let exr = try Self.runWithout(hdf5, ["convert", chart, "-o", dir.appendingPathComponent("c.exr").path, "-q"])
        #expect(exr.status == 0, "\(exr.stderr)")
        // Reading HDF5: exit 14.
        let made = try TestData.run(try CLI.binary, ["convert", chart, "-o", h5, "-q"])
        try #require(made.status == 0, "\(made.stderr)")
        let read = try Self.runWithout(hdf5, ["stats", h5])
        #expect(read.status == 14 && read.stderr.contains("cannot read \(h5): dlopen: HDF5 files cannot be read"), "\(read.stderr)")
        // Writing a DNG without libtiff: exit 16.
        let simulated = try Self.runWithout(["libtiff.so.6"], ["simulate", "--scene", "grey-ramp", "--size", "64x48", "-o",
                                                               dir.appendingPathComponent("sim").path, "-q"])
        #expect(simulated.status == 16 && simulated.stderr.contains("the tiff library libtiff.so.6 could not be loaded"), "\(simulated.stderr)")
        // Drawing without Cairo ends the process with exit 69 and no partial plot.
        let plot = dir.appendingPathComponent("h.png").path
        let drawn = try Self.runWithout(["libcairo.so.2"], ["histogram", chart, "--plot", plot, "-q"])
        #expect(drawn.status == 69 && drawn.stderr.contains("the charts library libcairo.so.2 could not be loaded"), "\(drawn.stderr)")
        #expect(!FileManager.default.fileExists(atPath: plot))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }.isEmpty)
        // The raw-data digest without libcrypto: exit 69, nothing written.
        let digest = try Self.runWithout(["libcrypto.so.3"], ["convert", chart, "-o", dir.appendingPathComponent("d.exr").path, "-q"])
        #expect(digest.status == 69 && digest.stderr.contains("the crypto library libcrypto.so.3 could not be loaded"), "\(digest.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("d.exr").path))
        let described = try Self.runWithout(["libcrypto.so.3"], ["info", chart])
        #expect(described.status == 0, "\(described.stderr)")
        // DWA without the OpenEXR C++ library: exit 16 to write (nothing left), 14 to read.
        let openEXR = ["libOpenEXR-3_1.so.30"]
        let dwa = dir.appendingPathComponent("w.exr").path
        let dwaWrite = try Self.runWithout(openEXR, ["convert", chart, "-o", dwa, "--exr-compression", "dwab", "-q"])
        #expect(dwaWrite.status == 16 && dwaWrite.stderr.contains(
            "cannot write \(dwa): dlopen: DWA-compressed EXR files cannot be written: the openexr library libOpenEXR-3_1.so.30 could not be loaded"),
                "\(dwaWrite.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dwa))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }.isEmpty)
        try #require(try TestData.run(try CLI.binary, ["convert", chart, "-o", dwa, "--exr-compression", "dwab", "-q"]).status == 0)
        let dwaRead = try Self.runWithout(openEXR, ["stats", dwa])
        #expect(dwaRead.status == 14 && dwaRead.stderr.contains("DWA-compressed EXR files cannot be read"), "\(dwaRead.stderr)")
        // A zip EXR needs only OpenEXRCore.
        let zipped = try Self.runWithout(openEXR, ["convert", chart, "-o", dir.appendingPathComponent("z.exr").path, "-q"])
        #expect(zipped.status == 0, "\(zipped.stderr)")
        // Decoding JPEG XL without libjxl: exit 14 for the block.
        if let jxl = TestData.dngSDKSampleIfPresent("01_jxl_linear_raw_integer.dng") {
            let decoded = try Self.runWithout(["libjxl.so.0.7"], ["convert", jxl.path, "-o", dir.appendingPathComponent("j.exr").path, "-q"])
            #expect(decoded.status == 14 && decoded.stderr.contains("JPEG XL cannot be decoded: the jxl library libjxl.so.0.7 could not be loaded"),
                    "\(decoded.stderr)")
        }
    }
}
