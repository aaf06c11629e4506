import Foundation
import ImageCore
import Testing

/// Helpers shared by the test targets: the shared dataset folder, temporary directories,
/// tolerances and a seeded random number generator.
public enum TestData {
    /// The folder of real files that nobody on the project wrote (`../shared/datasets` from
    /// the package root, or `$SCENELINEAR_SHARED_DATASETS`). `nil` when absent.
    public static var sharedDatasets: URL? {
        let env = ProcessInfo.processInfo.environment["SCENELINEAR_SHARED_DATASETS"]
        let url = env.map { URL(fileURLWithPath: $0) } ?? packageRoot.appendingPathComponent("../shared/datasets").standardized
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }

    /// The package root (the folder holding Package.swift).
    public static var packageRoot: URL {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }

    /// A file in the shared datasets. When the folder is absent the running test is
    /// skipped (reported as such, with the reason); CI does not install these files.
    public static func shared(_ relativePath: String) throws -> URL {
        guard let base = sharedDatasets else {
            try TestRequirement.unavailable("the shared datasets folder (../shared/datasets or SCENELINEAR_SHARED_DATASETS)",
                                            installedByBootstrap: false)
        }
        return base.appendingPathComponent(relativePath)
    }

    /// A new empty temporary directory.
    public static func temporaryDirectory(_ label: String = "test") -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("scenelinear-\(label)-\(getpid())-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Reads a little-endian uint16 file.
    public static func readU16LE(_ url: URL) throws -> [UInt16] {
        let data = try Data(contentsOf: url)
        var out = [UInt16](repeating: 0, count: data.count / 2)
        data.withUnsafeBytes { raw in
            for i in 0..<out.count {
                let lo = UInt16(raw[2 * i])
                let hi = UInt16(raw[2 * i + 1])
                out[i] = lo | (hi << 8)
            }
        }
        return out
    }
}

/// A small, fast, seeded generator (SplitMix64) so randomized tests are repeatable.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Named tolerances used across the tests.
public enum Tolerance {
    /// Half-float rounding: relative error 2^-11 of round-to-nearest, stated as 2^-10 to
    /// leave room for the Float32 arithmetic before rounding.
    public static let halfRelative: Double = 1.0 / 1024.0
    /// Values below this (2^-12 of white) are compared with an absolute tolerance instead.
    public static let halfFloor: Double = 1.0 / 4096.0
    /// Colour-matrix arithmetic in Double.
    public static let matrix: Double = 1e-9
    /// Sums of the same Double values added in another grouping (patch by patch, per
    /// thread, streamed against in memory): relative, as documented for means and spreads.
    public static let regroupedSum: Double = 1e-12
    /// A closed-form Double computation against its value typed out (a few roundings).
    public static let double: Double = 1e-12
    /// Float32 pipeline arithmetic (Stage 2 scaling, opcodes, matrices in Float) against
    /// an expectation computed in Double: 2^-20 ≈ 9.5e-7, a few roundings of 2^-24.
    public static let float: Double = 1e-6
    /// A reduction summed in Float against one summed in Double (EV map footprints).
    public static let floatSum: Double = 1e-5
    /// Decimal values as the DNG stores them (rationals) against the decimals typed out.
    public static let rational: Double = 1e-9

    /// |a − b| ≤ `relative` · max(|a|, |b|); equal values (both NaN included) always.
    public static func close(_ a: Double, _ b: Double, relative: Double) -> Bool {
        a == b || (a.isNaN && b.isNaN) || abs(a - b) <= relative * max(abs(a), abs(b))
    }
}

/// True when `actual` equals `expected` to half-float rounding: relative error ≤ 2^-10
/// where |expected| > 2^-12, absolute error ≤ 2^-22 (half spacing near 2^-12) below it.
public func isHalfClose(_ actual: Double, _ expected: Double) -> Bool {
    if abs(expected) > Tolerance.halfFloor {
        return abs(actual - expected) <= Tolerance.halfRelative * abs(expected)
    }
    return abs(actual - expected) <= Tolerance.halfFloor * Tolerance.halfRelative
}

/// The shortest wall time, in seconds, of `repeats` runs of `body` (for benchmarks that print
/// figures; nothing asserts on time).
public func bestTime(_ repeats: Int, _ body: () throws -> Void) rethrows -> Double {
    var best = Double.infinity
    for _ in 0..<repeats {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return best
}

extension TestData {
    /// The folder of the Adobe DNG SDK 1.7.1 sample files that
    /// `scripts/fetch-dng-sdk-samples.sh` fetches: `$SCENELINEAR_DNG_SDK_SAMPLES`, else
    /// `~/.cache/scenelinear/dng-sdk-samples` (never inside the repository).
    public static var dngSDKSamples: URL {
        if let env = ProcessInfo.processInfo.environment["SCENELINEAR_DNG_SDK_SAMPLES"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/scenelinear/dng-sdk-samples")
    }

    /// A DNG SDK sample file (e.g. `03_jxl_bayer_raw_integer.dng`). When it has not been
    /// fetched (scripts/fetch-dng-sdk-samples.sh, which needs the network) the running test
    /// is skipped.
    public static func dngSDKSample(_ name: String) throws -> URL {
        guard let url = dngSDKSampleIfPresent(name) else {
            try TestRequirement.unavailable("\(dngSDKSamples.appendingPathComponent(name).path) (run scripts/fetch-dng-sdk-samples.sh)",
                                            installedByBootstrap: false)
        }
        return url
    }

    /// A DNG SDK sample file, or nil when it has not been fetched (for `.enabled(if:)`).
    public static func dngSDKSampleIfPresent(_ name: String) -> URL? {
        let url = dngSDKSamples.appendingPathComponent(name)
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }
}

/// What a test needs from outside the package: when it is missing, the test is skipped
/// and reported as skipped with the reason (`Test.cancel`), never passed. With
/// `SCENELINEAR_REQUIRE_TOOLS=1` (set by `make test`'s CI entry point, `.ci/run`) a
/// missing tool that `scripts/bootstrap.sh` installs — the Python environment, exrheader,
/// h5dump, exiftool, the built binary — fails the test instead.
public enum TestRequirement {
    /// Whether missing bootstrap-installed tools fail the run.
    public static let toolsRequired = ProcessInfo.processInfo.environment["SCENELINEAR_REQUIRE_TOOLS"] == "1"

    public struct Missing: Error, CustomStringConvertible {
        public let what: String
        public var description: String { "required for this test and installed by scripts/bootstrap.sh, but missing: \(what)" }
    }

    /// Skips the running test because `what` is missing — or fails it, when CI requires
    /// what the bootstrap installs.
    public static func unavailable(_ what: String, installedByBootstrap: Bool) throws -> Never {
        if installedByBootstrap && toolsRequired { throw Missing(what: what) }
        try Test.cancel("skipped: \(what) not available")
    }
}
