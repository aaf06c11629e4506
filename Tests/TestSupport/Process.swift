import Foundation

/// The result of running an external program.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

extension TestData {
    /// The Python interpreter with the project's test packages (h5py, OpenEXR, numpy,
    /// imagecodecs, ...): `$SCENELINEAR_PYTHON`, else `<package root>/.venv/bin/python`
    /// (made by `scripts/bootstrap.sh`). `nil` (and a "skipped" line on stderr) when absent.
    public static var python: URL? {
        let env = ProcessInfo.processInfo.environment["SCENELINEAR_PYTHON"]
        let url = env.map { URL(fileURLWithPath: $0) } ?? packageRoot.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            FileHandle.standardError.write(Data("skipped: Python test environment not found at \(url.path) (run scripts/bootstrap.sh)\n".utf8))
            return nil
        }
        return url
    }

    /// Finds an executable on PATH (e.g. `exrheader`, `h5dump`), or `nil`.
    public static func tool(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(dir)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        FileHandle.standardError.write(Data("skipped: \(name) not found on PATH (run scripts/bootstrap.sh)\n".utf8))
        return nil
    }

    /// Runs `executable` with `arguments`, waits, and captures its output.
    @discardableResult
    public static func run(_ executable: URL, _ arguments: [String], stdin: Data? = nil) throws -> ProcessResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
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
    public static func runPython(_ script: String, _ arguments: [String] = []) throws -> ProcessResult? {
        guard let python else { return nil }
        return try run(python, ["-"] + arguments, stdin: Data(script.utf8))
    }
}
