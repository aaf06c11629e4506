import Foundation
import Testing

/// The result of running an external program.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

extension TestData {
    /// The Python interpreter with the project's test packages (h5py, OpenEXR, numpy,
    /// imagecodecs, ...): `$SCENELINEAR_PYTHON`, else `<package root>/.venv/bin/python`
    /// (made by `scripts/bootstrap.sh`), or `nil` when absent (for `.enabled(if:)`).
    public static var python: URL? {
        let url = pythonPath
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }

    static var pythonPath: URL {
        let env = ProcessInfo.processInfo.environment["SCENELINEAR_PYTHON"]
        return env.map { URL(fileURLWithPath: $0) } ?? packageRoot.appendingPathComponent(".venv/bin/python")
    }

    /// The `scenelinear` executable of the build the tests belong to: the one beside the
    /// running test executable (`<scratch path>/<configuration>/`), so that an optimised test
    /// build runs its own command line and never an older one of another configuration. The
    /// running test is skipped (or, in CI, fails) when it has not been built.
    public static func commandLine() throws -> URL {
        let running = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let url = running.deletingLastPathComponent().appendingPathComponent("scenelinear")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            try TestRequirement.unavailable("the scenelinear binary beside the tests at \(url.path) (swift build --build-tests)",
                                            installedByBootstrap: true)
        }
        return url
    }

    /// Whether the tests run in the AddressSanitizer build (`make test-asan` sets
    /// `SCENELINEAR_TEST_SANITIZER=address`): there a process of the command line costs about
    /// a CPU-second, so tests that start hundreds of them run a sample of their cases.
    public static let underAddressSanitizer = ProcessInfo.processInfo.environment["SCENELINEAR_TEST_SANITIZER"] == "address"

    /// The Python interpreter; the running test is skipped (or, in CI, fails) without it.
    public static func requirePython() throws -> URL {
        guard let python else {
            try TestRequirement.unavailable("the Python test environment at \(pythonPath.path) (run scripts/bootstrap.sh)",
                                            installedByBootstrap: true)
        }
        return python
    }

    /// An executable on PATH (e.g. `exrheader`, `h5dump`); the running test is skipped (or,
    /// in CI, fails) without it.
    public static func tool(_ name: String) throws -> URL {
        guard let url = toolIfPresent(name) else {
            try TestRequirement.unavailable("\(name) on PATH (run scripts/bootstrap.sh)", installedByBootstrap: true)
        }
        return url
    }

    /// An executable on PATH, or nil.
    public static func toolIfPresent(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(dir)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Runs `executable` with `arguments`, waits, and captures its output.
    @discardableResult
    public static func run(_ executable: URL, _ arguments: [String], stdin: Data? = nil,
                           environment: [String: String]? = nil) throws -> ProcessResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        if stdin != nil { process.standardInput = input }
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(stdin)
            try? input.fileHandleForWriting.close()
        }
        // Read both pipes concurrently so a large stderr cannot block the child.
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return ProcessResult(status: process.terminationStatus,
                             stdout: String(decoding: outData, as: UTF8.self),
                             stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs a Python script (passed on stdin) with the test interpreter and `arguments`.
    /// The running test is skipped (or, in CI, fails) without the Python environment.
    public static func runPython(_ script: String, _ arguments: [String] = []) throws -> ProcessResult {
        try run(try requirePython(), ["-"] + arguments, stdin: Data(script.utf8))
    }
}
