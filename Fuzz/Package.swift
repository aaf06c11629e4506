// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for SceneLinear's parsers and decoders. A separate package so the main
// build never sees their missing `main` (libFuzzer provides it). Build and run with
// Fuzz/run.sh (see docs/robustness.md).
let package = Package(
    name: "SceneLinearFuzz",
    // run.sh links the project root here as `scenelinear-root`, so the identity is stable.
    dependencies: [.package(path: "scenelinear-root")],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "SceneLinearKit", package: "scenelinear-root")]),
        .executableTarget(name: "FuzzContainer", dependencies: ["FuzzSupport", .product(name: "SceneLinearKit", package: "scenelinear-root")]),
        .executableTarget(name: "FuzzLosslessJPEG", dependencies: ["FuzzSupport", .product(name: "SceneLinearKit", package: "scenelinear-root")]),
        .executableTarget(name: "FuzzDecode", dependencies: ["FuzzSupport", .product(name: "SceneLinearKit", package: "scenelinear-root")]),
        .executableTarget(name: "FuzzEXR", dependencies: ["FuzzSupport", .product(name: "SceneLinearKit", package: "scenelinear-root")]),
        .executableTarget(name: "FuzzHDF5", dependencies: ["FuzzSupport", .product(name: "SceneLinearKit", package: "scenelinear-root")]),
        .executableTarget(name: "FuzzScene", dependencies: ["FuzzSupport", .product(name: "CaptureSimulation", package: "scenelinear-root")]),
    ]
)
