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
        FileHandle.standardError.write(Data("\r\(name) [\(Self.bar(filled: Int((fraction * 30).rounded(.down))))] \(Int(fraction * 100)) %\u{1B}[K".utf8))
    }

    /// Clears the bar's line, when it was shown (once: later calls do nothing).
    func finish() {
        finished.store(true, ordering: .relaxed)
        if shown.exchange(false, ordering: .relaxed) { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    /// A bar of `width` characters, `filled` of them "#", the rest ".".
    static func bar(filled: Int, width: Int = 30) -> String {
        let filled = min(width, max(0, filled))
        return String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
    }
}

/// Draws "[#####.....] 3/10 files" on stderr, ending the line when done.
@Sendable func progressBar(done: Int, total: Int) {
    FileHandle.standardError.write(Data("\r[\(FileProgressBar.bar(filled: 30 * done / max(total, 1)))] \(done)/\(total) files".utf8))
    if done == total { FileHandle.standardError.write(Data("\n".utf8)) }
}
