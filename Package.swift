// swift-tools-version:6.0
import PackageDescription

// SceneLinear: DNG raw photos → scene-referred linear light, measured and handed on as
// OpenEXR and HDF5. One module per stage of the data flow; C libraries sit behind small
// system-library shim modules (C*), and the CLI is a thin layer over SceneLinearKit.

/// Linker flags: the Swift runtime, Foundation and what they need, from the toolchain's
/// static archives (`swift_static`), as one group.
let staticRuntime = ["-static-stdlib", "-Xlinker", "--start-group"]
    + ["Foundation", "FoundationEssentials", "FoundationInternationalization", "_FoundationICU", "_FoundationCollections",
       "_FoundationCShims", "CoreFoundation", "swiftDispatch", "dispatch", "BlocksRuntime", "swiftSynchronization",
       "swift_RegexParser", "swift_StringProcessing", "swiftGlibc", "swift_Concurrency", "swiftCore", "stdc++"]
        .flatMap { ["-Xlinker", "-l\($0)"] }
    + ["-Xlinker", "--end-group"]

let package = Package(
    name: "SceneLinear",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "scenelinear", targets: ["scenelinear"]),
        .library(name: "SceneLinearKit", targets: ["SceneLinearKit", "Engine", "Measuring", "Glare", "Reporting", "Batching", "Merging",
                                                   "ExchangeCore", "EXRExchange", "HDF5Exchange", "RadianceExchange", "Studies", "Fisheye", "LensFit"]),
        // Scene descriptions and simulated captures, apart from the library: for the fuzz
        // package's `scene` target (Fuzz/).
        .library(name: "CaptureSimulation", targets: ["CaptureSimulation"]),
        // The library through a C interface (Sources/SceneLinearC/scenelinear.h), loaded by the
        // Python package (python/, docs/python.md).
        .library(name: "SceneLinearC", type: .dynamic, targets: ["SceneLinearC"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // ---- C libraries from Debian (module map + shim header only) ----
        .systemLibrary(name: "CTIFF", pkgConfig: "scenelinear-tiff", providers: [.apt(["libtiff-dev"])]),
        .systemLibrary(name: "CHDF5", pkgConfig: "scenelinear-hdf5", providers: [.apt(["libhdf5-dev"])]),
        .systemLibrary(name: "COpenEXR", providers: [.apt(["libopenexr-dev"])]),
        // libcrypto's headers are on the default path and nothing links it: it is loaded on first
        // use (CLazyLibraries), as are libjxl, libhdf5, libtiff and the chart libraries.
        .systemLibrary(name: "CCrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        // libjxl's .pc file adds -DHWY_SHARED_DEFINE, a flag SwiftPM prohibits (with a warning):
        // the module map links libjxl directly and the headers are on the default path.
        .systemLibrary(name: "CJXL", providers: [.apt(["libjxl-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        // Cairo + Pango for the charts (PNG, SVG, PDF); the .pc adds -pthread, which SwiftPM drops with a warning.
        .systemLibrary(name: "CCairo", pkgConfig: "scenelinear-charts", providers: [.apt(["libcairo2-dev", "libpango1.0-dev"])]),
        // ---- plain C: run-time dispatched F16C half-float conversion ----
        .target(name: "CHalf"),
        // ---- plain C: the byte kernels of reading EXR ZIP chunks (SSE2) ----
        .target(name: "CEXRZip"),
        // ---- C++: DWAA/DWAB EXR output through the OpenEXR C++ library (C interface) ----
        .systemLibrary(name: "COpenEXRCxx", pkgConfig: "scenelinear-openexr", providers: [.apt(["libopenexr-dev"])]),
        .target(name: "CEXRDWA", dependencies: ["COpenEXRCxx", "CLazyLibraries"]),

        // ---- the data flow, one module per stage ----
        // Shared value types: images, rectangles, matrices, errors, provenance, hashing.
        // MD5 of eight equal-length messages at once (the raw-image digests' tiles).
        .target(name: "CDigest"),
        // Signal handlers: temporaries removed on SIGTERM/SIGINT/SIGPIPE, inputs truncated under a mapping read as zeros.
        .target(name: "CProcessGuard"),
        // libjxl, the chart libraries, libhdf5, libtiff and libcrypto loaded on first use, through
        // stubs (scripts/generate-lazy-stubs.py); ImageCore.LazyLibrary loads them explicitly.
        .target(name: "CLazyLibraries", dependencies: ["CProcessGuard"], exclude: ["symbols.txt"]),
        .target(name: "ImageCore", dependencies: ["CHalf", "CCrypto", "CDigest", "CProcessGuard", "CLazyLibraries"]),
        // DNG/TIFF structure → typed, validated metadata model.
        .target(name: "DNGContainer", dependencies: ["ImageCore"]),
        // ITU T.81 lossless JPEG (SOF3) decoder and encoder.
        .target(name: "LosslessJPEG"),
        // Stage 1: stored samples of an image IFD (uncompressed, packed, lossless JPEG,
        // Deflate with predictors, JPEG XL, lossy JPEG; integer and floating-point samples).
        .target(name: "RawDecode", dependencies: ["ImageCore", "DNGContainer", "LosslessJPEG", "CDeflate", "CJXL", "CJPEG"]),
        // Stage 2: linear reference values (linearization, black, white, active area, clip mask).
        .target(name: "Linearize", dependencies: ["ImageCore", "DNGContainer", "RawDecode"]),
        // The DNG colour model: camera → XYZ D50 → linear Rec.2020.
        .target(name: "DNGColor", dependencies: ["ImageCore", "DNGContainer", "Linearize"]),
        // Absolute units: the photometric chain from linear values to cd/m², and camera calibrations.
        .target(name: "Photometry", dependencies: ["ImageCore", "DNGContainer"]),
        // Output geometry: DefaultCrop, DefaultUserCrop, DefaultScale, Orientation.
        .target(name: "ImageGeometry", dependencies: ["ImageCore", "DNGContainer"]),
        // Fisheye lenses: the projections, a lens on an image (θ and solid angle per pixel), the
        // image circle found in a picture.
        .target(name: "Fisheye", dependencies: ["ImageCore"]),
        // DNG 1.6 semantic masks: decoded, resampled onto the Stage 3 grid, given the output geometry.
        .target(name: "SemanticMasks", dependencies: ["ImageCore", "DNGContainer", "RawDecode", "ImageGeometry"]),
        // Stage 3 for CFA images: Bayer mosaic → three camera-colour planes.
        .target(name: "Demosaic", dependencies: ["ImageCore", "DNGContainer", "Linearize"]),
        // A fast zlib-format encoder (runs and per-block Huffman codes) for byte-reordered image data.
        .target(name: "RunLengthDeflate", dependencies: ["CDeflate"]),
        // The exchange formats, one module each on a small shared core. ExchangeCore: what every
        // format shares (errors, read limits, images read back for measuring, the streaming
        // writer's rows, the ordered chunk sink); no C library.
        .target(name: "ExchangeCore", dependencies: ["ImageCore"]),
        // OpenEXR writer and reader (OpenEXRCore; DWA through the OpenEXR C++ library).
        .target(name: "EXRExchange", dependencies: ["ExchangeCore", "ImageCore", "COpenEXR", "CEXRDWA", "CEXRZip", "CDeflate", "RunLengthDeflate"]),
        // HDF5 writer and reader (libhdf5, with the chunks compressed and decoded here).
        // The HDF5 file format's structures read by this project itself, from the mapped file:
        // the walks that vet what libhdf5 may decode, the global heap, chunk placement and decoding.
        .target(name: "HDF5Format", dependencies: ["ExchangeCore", "ImageCore", "CDeflate"]),
        .target(name: "HDF5Exchange", dependencies: ["ExchangeCore", "ImageCore", "HDF5Format", "CHDF5", "CLazyLibraries", "CZlib", "CDeflate", "RunLengthDeflate"]),
        // Radiance RGBE pictures (.hdr), written and read here.
        .target(name: "RadianceExchange", dependencies: ["ExchangeCore", "ImageCore"]),
        // DNG opcode lists (OpcodeList1/2/3): parsing every opcode, applying the radiometric ones.
        .target(name: "Opcodes", dependencies: ["ImageCore"]),
        // DNG writer through libtiff (test fixtures, samples; grows into simulated capture).
        .target(name: "DNGWriter", dependencies: ["ImageCore", "LosslessJPEG", "CTIFF"]),
        // Measurements: region statistics, histograms, radiance ratios with uncertainty.
        .target(name: "Analysis", dependencies: ["ImageCore"]),
        // Simulated captures with known ground-truth radiance.
        .target(name: "CaptureSimulation", dependencies: ["ImageCore", "DNGWriter", "Opcodes", "Fisheye"]),
        // Charts (histograms, false-colour EV maps, XY plots) drawn with Cairo and Pango to PNG, SVG and PDF.
        .target(name: "Plots", dependencies: ["ImageCore", "CCairo", "CDeflate", "CLazyLibraries"]),
        // The engine: one streaming develop for every input and command (and the
        // whole-image path for what it does not cover), export, file inspection.
        .target(
            name: "Engine",
            dependencies: [
                "ImageCore", "DNGContainer", "RawDecode", "Linearize", "Demosaic", "DNGColor", "ImageGeometry",
                "ExchangeCore", "EXRExchange", "HDF5Exchange", "RadianceExchange", "Opcodes", "SemanticMasks", "Photometry",
            ]),
        // Measurements of files: requests in, typed results out (statistics, illuminance,
        // glare, calibrations, stray light); no writing of documents or charts.
        .target(name: "Measuring", dependencies: ["Engine", "Analysis", "Plots", "Studies", "Fisheye"]),
        // A lens's vignetting fitted from captures: flat fields or a target swept across the field.
        .target(name: "LensFit", dependencies: ["Measuring", "Engine", "Analysis"]),
        // Glare of a fisheye luminance map: sources, DGP, DGI and UGR with Monte Carlo
        // intervals; the circumsolar zone and the sun's place in the image.
        .target(name: "Glare", dependencies: ["Measuring", "Engine", "Analysis", "Photometry"]),
        // Results handed to people and programs: text/JSON/CSV/HDF5 output, charts, HTML and
        // Markdown reports, converted files with their analysis sidecars.
        .target(name: "Reporting", dependencies: ["Measuring", "Engine", "Analysis", "Plots", "Studies"]),
        // Batches: manifests, resuming, shards; a study's bracket sets merged and measured.
        .target(name: "Batching", dependencies: ["Engine", "Analysis", "Merging", "Measuring", "Glare", "Reporting", "Plots", "Studies"]),
        // Raw brackets merged noise-optimally in Stage 2, then developed by the engine.
        .target(name: "Merging", dependencies: ["Engine"]),
        // Studies over time: capture times in UTC, the sun's position, bracket sets.
        .target(name: "Studies"),
        // The library in one import (engine, measurements, batches, studies).
        .target(name: "SceneLinearKit", dependencies: ["Engine", "Measuring", "LensFit", "Glare", "Reporting", "Batching", "Merging", "Analysis", "Studies"]),
        // The C interface: opaque handles, status codes, JSON options and documents.
        .target(name: "SceneLinearC", dependencies: ["SceneLinearKit", "SimulationCheck", "CaptureSimulation"], exclude: ["scenelinear.h"]),
        // Simulated captures checked against their ground truth, and the test chart:
        // built on the library, not part of its product.
        .target(name: "SimulationCheck", dependencies: ["SceneLinearKit", "CaptureSimulation", "DNGWriter"]),
        // The command-line tool.
        .executableTarget(
            name: "scenelinear",
            dependencies: [
                "SceneLinearKit", "SimulationCheck", "CaptureSimulation", "DNGWriter", "Analysis",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // The Swift runtime and Foundation linked into the optimised executable (docs/performance.md:
            // the loader then binds a few hundred symbols at start instead of thousands, and the
            // binary runs where no Swift toolchain is installed). The static archives are named in
            // one group, since the driver's own list leaves some of their dependencies out. Not in
            // debug builds: under AddressSanitizer, the static CoreFoundation's date formatter frees
            // a pointer the sanitizer did not allocate ("attempting free on address which was not
            // malloc()-ed"), which the dynamic one does not.
            linkerSettings: [.unsafeFlags(staticRuntime, .when(platforms: [.linux], configuration: .release))]),

        // ---- tests ----
        .target(name: "TestSupport", dependencies: ["ImageCore"], path: "Tests/TestSupport"),
        .testTarget(name: "ImageCoreTests", dependencies: ["ImageCore", "Fisheye", "TestSupport"]),
        .testTarget(name: "DNGContainerTests", dependencies: ["DNGContainer", "DNGWriter", "TestSupport", "CTIFF"]),
        .testTarget(name: "LosslessJPEGTests", dependencies: ["LosslessJPEG", "ImageCore", "TestSupport"]),
        .testTarget(name: "RawDecodeTests", dependencies: ["RawDecode", "DNGWriter", "TestSupport", "LosslessJPEG", "CZlib", "CDeflate", "CTIFF"]),
        .testTarget(name: "LinearizeTests", dependencies: ["Linearize", "DNGWriter", "TestSupport"]),
        .testTarget(name: "DemosaicTests", dependencies: ["Demosaic", "TestSupport"]),
        .testTarget(name: "DNGColorTests", dependencies: ["DNGColor", "DNGContainer", "TestSupport"]),
        .testTarget(name: "ImageGeometryTests", dependencies: ["ImageGeometry", "DNGContainer", "TestSupport"]),
        .testTarget(name: "RunLengthDeflateTests", dependencies: ["RunLengthDeflate", "CZlib", "CDeflate", "TestSupport"]),
        // The exchange formats' tests, one target for the four modules (the suite name the
        // Makefile's ASAN_SUITES lists).
        .testTarget(name: "ImageExchangeTests", dependencies: ["ExchangeCore", "EXRExchange", "CEXRZip", "HDF5Exchange", "HDF5Format", "RadianceExchange", "TestSupport"]),
        .testTarget(name: "SemanticMasksTests", dependencies: ["SceneLinearKit", "Engine", "Measuring", "Reporting", "Batching", "SimulationCheck", "SemanticMasks", "DNGWriter", "TestSupport"]),
        .testTarget(name: "AnalysisTests", dependencies: ["Analysis", "TestSupport"]),
        .testTarget(name: "OpcodesTests", dependencies: ["Opcodes", "ImageCore", "TestSupport"]),
        .testTarget(name: "SimulationTests", dependencies: ["SceneLinearKit", "Engine", "Measuring", "Reporting", "Batching", "SimulationCheck", "CaptureSimulation", "Analysis", "DNGWriter", "TestSupport"]),
        .testTarget(name: "PlotsTests", dependencies: ["Plots", "TestSupport", "CCairo"]),
        .testTarget(name: "MergingTests", dependencies: ["SceneLinearKit", "Merging", "SimulationCheck", "CaptureSimulation", "Opcodes", "TestSupport"]),
        .testTarget(name: "StudiesTests", dependencies: ["Studies", "SceneLinearKit", "SimulationCheck", "CaptureSimulation", "Plots", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["SceneLinearKit", "Engine", "Measuring", "Glare", "Reporting", "Batching", "SimulationCheck", "CaptureSimulation", "TestSupport"]),
    ]
)
