import Foundation
import Testing
import TestSupport

/// The notebooks in `notebooks/` run (nbclient's jupyter-execute) against outputs the test
/// makes, and their own assertions hold.
@Suite struct NotebookTests {
    @Test func readOutputsNotebookRuns() throws {
        guard let python = TestData.python else { return }
        let execute = python.deletingLastPathComponent().appendingPathComponent("jupyter-execute")
        guard FileManager.default.isExecutableFile(atPath: execute.path) else {
            FileHandle.standardError.write(Data("skipped: jupyter-execute not in the Python environment\n".utf8))
            return
        }
        let dir = TestData.temporaryDirectory("notebook")
        defer { try? FileManager.default.removeItem(at: dir) }
        let chart = dir.appendingPathComponent("chart.dng").path
        guard let made = try CLI.run(["testchart", "-o", chart]), made.status == 0,
              let converted = try CLI.run(["convert", chart, "-o", dir.path, "--format", "exr,hdf5"]), converted.status == 0 else {
            Issue.record("could not make the notebook's input")
            return
        }
        let notebook = TestData.packageRoot.appendingPathComponent("notebooks/read_outputs.ipynb").path
        let result = try TestData.run(URL(fileURLWithPath: "/usr/bin/env"), [
            "SCENELINEAR_H5=" + dir.appendingPathComponent("chart.h5").path,
            "SCENELINEAR_EXR=" + dir.appendingPathComponent("chart.exr").path,
            execute.path, notebook,
        ])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("ramp.png").path), "the notebook saves its plot")
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
