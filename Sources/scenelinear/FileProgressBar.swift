import Dispatch
import Engine
import Foundation
import Synchronization

/// A progress bar on standard error for one file's conversion: shown only when standard
/// error is a terminal, and only once the conversion has taken two seconds (a short one
/// shows nothing); the line is cleared when the conversion ends.
final class FileProgressBar: Sendable {
    private let name: String
    private let start = DispatchTime.now().uptimeNanoseconds
    private let shown = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    private init(name: String) { self.name = name }

    /// The bar of the file at `path`, or nil when it would not be shown (quiet, or not a terminal).
    static func make(for path: String, quiet: Bool) -> FileProgressBar? {
        guard !quiet, isatty(STDERR_FILENO) == 1 else { return nil }
        return FileProgressBar(name: URL(fileURLWithPath: path).lastPathComponent)
    }

    /// What the engine tells it.
    var progress: DevelopProgress { DevelopProgress { [self] fraction in draw(fraction) } }

    private func draw(_ fraction: Double) {
        guard DispatchTime.now().uptimeNanoseconds - start >= 2_000_000_000, !finished.load(ordering: .relaxed) else { return }
        shown.store(true, ordering: .relaxed)
        let width = 30, filled = Int((fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        FileHandle.standardError.write(Data("\r\(name) [\(bar)] \(Int(fraction * 100)) %\u{1B}[K".utf8))
    }

    /// Clears the bar's line, when it was shown (once: later calls do nothing).
    func finish() {
        finished.store(true, ordering: .relaxed)
        if shown.exchange(false, ordering: .relaxed) { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
