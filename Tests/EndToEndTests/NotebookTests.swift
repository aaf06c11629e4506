import Foundation
import Testing
import TestSupport

/// The notebooks in `notebooks/` run (nbclient's jupyter-execute) against outputs the test
/// makes, their own assertions hold, and their plots are shown inline.
@Suite struct NotebookTests {
    /// jupyter-execute of the Python environment; the test is skipped (or, in CI, fails)
    /// without it.
    static func jupyterExecute() throws -> URL {
        let execute = try TestData.requirePython().deletingLastPathComponent().appendingPathComponent("jupyter-execute")
        guard FileManager.default.isExecutableFile(atPath: execute.path) else {
            try TestRequirement.unavailable("jupyter-execute in the Python environment (run scripts/bootstrap.sh)", installedByBootstrap: true)
        }
        return execute
    }

    /// Each notebook with the inputs it needs, made here from the committed datasets.
    @Test(arguments: ["read_outputs", "radiance_ratio", "histograms", "validation_walkthrough"])
    func notebookRuns(_ name: String) throws {
        let execute = try Self.jupyterExecute()
        let dir = TestData.temporaryDirectory("notebook-\(name)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let datasets = TestData.packageRoot.appendingPathComponent("datasets")
        var environment = ["SCENELINEAR_NOTEBOOK_OUT=" + dir.path]
        var expectedOutput = ""
        func convert(_ arguments: [String]) throws {
            let r = try CLI.run(["convert"] + arguments)
            #expect(r.status == 0, "\(r.stderr)")
        }
        switch name {
        case "read_outputs":
            let chart = dir.appendingPathComponent("chart.dng").path
            let made = try CLI.run(["testchart", "-o", chart])
            #expect(made.status == 0)
            try convert([chart, "-o", dir.path, "--format", "exr,hdf5"])
            environment += ["SCENELINEAR_H5=" + dir.appendingPathComponent("chart.h5").path,
                            "SCENELINEAR_EXR=" + dir.appendingPathComponent("chart.exr").path]
            expectedOutput = "ramp.png"
        case "radiance_ratio":
            try convert([datasets.appendingPathComponent("sim/sunset.dng").path, "-o", dir.appendingPathComponent("s.h5").path])
            environment += ["SCENELINEAR_SUNSET_H5=" + dir.appendingPathComponent("s.h5").path,
                            "SCENELINEAR_SUNSET_RECORD=" + datasets.appendingPathComponent("sim/sunset.truth.json").path]
            expectedOutput = "sunset_ratio.png"
        case "histograms":
            try convert([datasets.appendingPathComponent("sim/sunset.dng").path, "-o", dir.appendingPathComponent("a.h5").path, "--analysis"])
            environment += ["SCENELINEAR_ANALYSIS_H5=" + dir.appendingPathComponent("a.h5").path]
            expectedOutput = "sunset_histogram.png"
        default:
            try convert([datasets.appendingPathComponent("sim/grey-ramp.dng").path, "-o", dir.appendingPathComponent("r.h5").path, "--crop", "none"])
            environment += ["SCENELINEAR_RAMP_H5=" + dir.appendingPathComponent("r.h5").path,
                            "SCENELINEAR_RAMP_TRUTH=" + datasets.appendingPathComponent("sim/grey-ramp.truth.h5").path,
                            "SCENELINEAR_RAMP_RECORD=" + datasets.appendingPathComponent("sim/grey-ramp.truth.json").path]
            expectedOutput = "validation.png"
        }
        let notebook = TestData.packageRoot.appendingPathComponent("notebooks/\(name).ipynb").path
        let executed = dir.appendingPathComponent("executed.ipynb").path
        let result = try TestData.run(URL(fileURLWithPath: "/usr/bin/env"), environment + [execute.path, notebook, "--output=" + executed])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        // The plots are shown inline: the executed notebook holds at least one PNG output.
        let run = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: executed))) as? [String: Any]
        let outputs = (run?["cells"] as? [[String: Any]] ?? []).flatMap { $0["outputs"] as? [[String: Any]] ?? [] }
        let inline = outputs.filter { ($0["data"] as? [String: Any])?["image/png"] != nil }
        #expect(!inline.isEmpty, "\(name) shows no plot inline")
        let plot = dir.appendingPathComponent(expectedOutput).path
        #expect(FileManager.default.fileExists(atPath: plot), "the notebook saves \(expectedOutput)")
        let size = (try? FileManager.default.attributesOfItem(atPath: plot)[.size] as? Int) ?? 0
        #expect(size > 5000, "\(expectedOutput) is \(size) bytes")
    }

    /// Notebooks are committed with outputs cleared.
    @Test func notebooksHaveNoOutputs() throws {
        let folder = TestData.packageRoot.appendingPathComponent("notebooks")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".ipynb") {
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(name))) as? [String: Any]
            let cells = json?["cells"] as? [[String: Any]] ?? []
            #expect(!cells.isEmpty)
            for cell in cells where cell["cell_type"] as? String == "code" {
                #expect((cell["outputs"] as? [Any])?.isEmpty ?? true, "\(name) has outputs")
                #expect(cell["execution_count"] is NSNull || cell["execution_count"] == nil, "\(name) has execution counts")
            }
        }
    }
}
