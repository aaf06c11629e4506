import Foundation

/// A file's size and modification time as they were when it was opened, to tell whether it
/// changed while it was read — another process still writing it, or rewriting it in place.
/// A measurement that reads a file in several passes must see the same bytes in each; one
/// that reads it once must not mix two versions. The file is held open, so a file replaced
/// under its name (renamed over) is not a change: the passes go on reading the one opened.
public final class FileWatch: Sendable {
    public let path: String
    private let descriptor: Int32
    private let opened: Stamp

    private struct Stamp: Equatable, Sendable {
        var size: Int64
        var seconds: Int
        var nanoseconds: Int

        init(_ info: stat) {
            size = Int64(info.st_size)
            seconds = info.st_mtim.tv_sec
            nanoseconds = info.st_mtim.tv_nsec
        }
    }

    /// Opens `path` without waiting (a FIFO opened for reading would wait for a writer);
    /// nil when it cannot be opened or is not a regular file (the reader refuses those itself).
    public init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return nil
        }
        self.path = path
        descriptor = fd
        opened = Stamp(info)
    }

    deinit { close(descriptor) }

    /// Whether the file's size or modification time differs from when it was opened (or it
    /// can no longer be asked).
    public var changed: Bool {
        var info = stat()
        return fstat(descriptor, &info) != 0 || Stamp(info) != opened
    }
}
