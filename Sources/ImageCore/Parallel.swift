import Dispatch
import Foundation
import Synchronization

/// Data-parallel loops over index ranges, using every core.
public enum Parallel {
    /// The number of worker threads to use: the CPUs of this process's allocation
    /// (`Allocation`: affinity mask, cgroup quota, `SLURM_CPUS_PER_TASK`), or the value of
    /// the environment variable `SCENELINEAR_THREADS` when set (≥ 1).
    public static var threadCount: Int {
        threadCountOverride ?? configuredThreads
    }

    /// `SCENELINEAR_THREADS` (≥ 1), else the allocation's CPUs: read once, when first needed.
    private static let configuredThreads: Int = {
        if let value = ProcessInfo.processInfo.environment["SCENELINEAR_THREADS"], let n = Int(value), n >= 1 { return min(n, maxThreads) }
        return processors
    }()

    /// A thread count for what runs inside `withThreadCount` on the calling task or thread,
    /// in place of the environment's.
    @TaskLocal public static var threadCountOverride: Int?

    /// Runs `body` with `threadCount` set to `n` (≥ 1) for the loops it starts, and the
    /// loops those start on their worker threads, without touching the process environment
    /// that other code reads. The command-line tool runs each command inside one (`--threads`).
    public static func withThreadCount<T>(_ n: Int, _ body: () throws -> T) rethrows -> T {
        try $threadCountOverride.withValue(min(max(1, n), maxThreads)) { try body() }
    }

    /// The most worker threads ever used (a larger `--threads` or `SCENELINEAR_THREADS` is
    /// taken as this many).
    public static let maxThreads = 1024

    /// `body(i)` on a worker thread with the caller's thread count (task-local values do not
    /// cross into Dispatch's worker threads on their own).
    @inline(__always) private static func inherited(_ override: Int?, _ body: @Sendable (Int) -> Void, _ i: Int) {
        if let override { $threadCountOverride.withValue(override) { body(i) } } else { body(i) }
    }

    private static let processors = max(1, Allocation.current.cpus)

    /// Calls `body` once for each index in `0..<count`, spread over the worker threads.
    public static func forEach(_ count: Int, _ body: @Sendable (Int) -> Void) {
        guard count > 0 else { return }
        let threads = min(count, threadCount)
        if threads == 1 {
            for i in 0..<count { body(i) }
            return
        }
        let override = threadCountOverride
        if threads >= processors {
            DispatchQueue.concurrentPerform(iterations: count) { inherited(override, body, $0) }
            return
        }
        // Fewer threads than cores: that many workers, each taking the next index.
        let next = IndexCounter()
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            while case let i = next.take(), i < count { inherited(override, body, i) }
        }
    }

    /// Splits `0..<count` into contiguous chunks of at least `minimumChunk` and calls
    /// `body` for each chunk in parallel.
    public static func forEachChunk(count: Int, minimumChunk: Int, _ body: @Sendable (Range<Int>) -> Void) {
        guard count > 0 else { return }
        let threads = threadCount
        let chunks = max(1, min(threads * 4, count / max(1, minimumChunk)))
        if chunks == 1 {
            body(0..<count)
            return
        }
        let size = (count + chunks - 1) / chunks
        forEach(chunks) { c in
            let start = c * size
            let end = min(count, start + size)
            if start < end { body(start..<end) }
        }
    }

    /// `forEachChunk` for a body that can fail: the first error (lowest chunk) is rethrown
    /// after all chunks have finished.
    public static func forEachChunkThrowing(count: Int, minimumChunk: Int, _ body: @Sendable (Range<Int>) throws -> Void) throws {
        guard count > 0 else { return }
        let chunks = max(1, min(threadCount * 4, count / max(1, minimumChunk)))
        let size = (count + chunks - 1) / chunks
        _ = try map(chunks) { c in
            let start = c * size, end = min(count, start + size)
            if start < end { try body(start..<end) }
        }
    }

    /// Runs `body` for every index and collects the results in order. The first error
    /// (lowest index) is rethrown after all work has finished.
    public static func map<T: Sendable>(_ count: Int, _ body: @Sendable (Int) throws -> T) throws -> [T] {
        let box = ResultBox<T>(count: count)
        forEach(count) { i in
            do { box.set(i, .success(try body(i))) } catch { box.set(i, .failure(error)) }
        }
        return try box.results.map { try $0!.get() }
    }
}

/// The next index of a loop, shared by its workers.
private final class IndexCounter: Sendable {
    private let value = Atomic<Int>(0)
    func take() -> Int { value.add(1, ordering: .relaxed).oldValue }
}

/// Result slots for `Parallel.map`, one per index.
private final class ResultBox<T: Sendable>: Sendable {
    private let slots: Mutex<[Result<T, any Error>?]>

    init(count: Int) { slots = Mutex(Array(repeating: nil, count: count)) }

    func set(_ i: Int, _ r: sending Result<T, any Error>) {
        slots.withLock { $0[i] = r }
    }

    var results: [Result<T, any Error>?] { slots.withLock { $0 } }
}

/// A total that the workers of a parallel loop add to.
public final class SharedCount: Sendable {
    private let total = Atomic<Int>(0)

    public init() {}

    public func add(_ n: Int) {
        guard n != 0 else { return }
        total.add(n, ordering: .relaxed)
    }

    /// The total; read after the loop (whose end orders the workers' additions before it).
    public var value: Int { total.load(ordering: .relaxed) }
}

/// Values the workers of a parallel loop store by key.
public final class SharedStore<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let values = Mutex<[Key: Value]>([:])

    public init() {}

    public subscript(key: Key) -> Value? {
        get { values.withLock { $0[key] } }
        set { values.withLock { $0[key] = newValue } }
    }

    /// The keys stored so far.
    public var keys: [Key] { values.withLock { Array($0.keys) } }
}

/// A value computed on a thread of its own while the caller goes on with other work, for
/// a serial job that would otherwise leave cores idle (the input's hash during decoding).
/// With one configured thread (`SCENELINEAR_THREADS=1`) it is computed at once, inline.
public final class BackgroundValue<T: Sendable>: Sendable {
    private let value = Mutex<T?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    public init(_ body: @escaping @Sendable () -> T) {
        guard Parallel.threadCount > 1 else {
            value.withLock { $0 = body() }
            finished.signal()
            return
        }
        Thread { [self] in
            let result = body()
            value.withLock { $0 = result }
            finished.signal()
        }.start()
    }

    /// Waits for the value.
    public func wait() -> T {
        finished.wait()
        finished.signal()
        return value.withLock { $0! }
    }
}

/// Large output buffers.
public enum LargeBuffer {
    /// An array of `count` elements whose memory is not cleared first: its pages become
    /// resident only as the caller writes them, and, on kernels that offer transparent huge
    /// pages on request, in 2 MiB pages (a 73 MB image then takes a few dozen page faults
    /// instead of eighteen thousand). The caller must write every element before reading it.
    public static func uninitialized<T: BitwiseCopyable>(_: T.Type, count: Int) -> [T] {
        [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            if let base = buffer.baseAddress { adviseHugePages(UnsafeMutableRawPointer(base), bytes: count * MemoryLayout<T>.stride) }
            initialized = count
        }
    }

    /// An array of `count` elements that `fill` writes in parallel chunks: it gets a range of
    /// indices and the array's first element, and must write every element of its range. In
    /// 2 MiB pages where the kernel offers them, first touched by the threads that fill them.
    public static func make<T: BitwiseCopyable>(_: T.Type, count: Int,
                                                fill: @Sendable (Range<Int>, UnsafeMutablePointer<T>) -> Void) -> [T] {
        make(T.self, count: count, reading: [UInt8]()) { range, _, out in fill(range, out) }
    }

    /// `make` for an array computed from `source`, which `fill` gets to read.
    public static func make<S: Sendable, T: BitwiseCopyable>(_: T.Type, count: Int, reading source: [S],
                                                             fill: @Sendable (Range<Int>, UnsafeBufferPointer<S>,
                                                                              UnsafeMutablePointer<T>) -> Void) -> [T] {
        var out = uninitialized(T.self, count: count)
        update(&out, reading: source, fill)
        return out
    }

    /// Rewrites `array`'s elements in parallel chunks, in place: `body` gets a range of
    /// indices, `source` to read and the array's first element, and writes the elements of its
    /// range (no copy of the array, no fresh memory when it is uniquely referenced).
    public static func update<S: Sendable, T: BitwiseCopyable>(_ array: inout [T], reading source: [S],
                                                               _ body: @Sendable (Range<Int>, UnsafeBufferPointer<S>,
                                                                                  UnsafeMutablePointer<T>) -> Void) {
        source.withUnsafeBufferPointer { input in
            array.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                // Safe because each chunk writes only its own range of the array, and the source is only read.
                nonisolated(unsafe) let pointers = (input, base)
                Parallel.forEachChunk(count: buffer.count, minimumChunk: 1 << 16) { range in body(range, pointers.0, pointers.1) }
            }
        }
    }

    /// An array of `count` zeros (`make` writing zero bytes).
    public static func zeroed<T: BitwiseCopyable>(_: T.Type, count: Int) -> [T] {
        make(T.self, count: count) { range, first in
            memset(first + range.lowerBound, 0, range.count * MemoryLayout<T>.stride)
        }
    }

    /// `uninitialized` as memory the caller owns (and must `deallocate`), for a buffer whose
    /// parts are written through pointers from several threads.
    public static func allocate<T: BitwiseCopyable>(_: T.Type, count: Int) -> UnsafeMutableBufferPointer<T> {
        let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: max(1, count))
        adviseHugePages(UnsafeMutableRawPointer(buffer.baseAddress!), bytes: buffer.count * MemoryLayout<T>.stride)
        return buffer
    }

    /// `allocate` as untyped memory of `byteCount` bytes (at least one), for samples whose
    /// type the caller binds.
    public static func allocate(byteCount: Int, alignment: Int) -> UnsafeMutableRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, byteCount), alignment: alignment)
        adviseHugePages(buffer.baseAddress!, bytes: buffer.count)
        return buffer
    }

    /// Asks the kernel for huge pages on the whole 2 MiB pages inside `bytes` from `start`
    /// (advice only: nothing happens where the kernel does not offer them).
    private static func adviseHugePages(_ start: UnsafeMutableRawPointer, bytes: Int) {
        let huge = 2 << 20
        let first = (Int(bitPattern: start) + huge - 1) & ~(huge - 1)
        let end = (Int(bitPattern: start) + bytes) & ~(huge - 1)
        guard end > first, let aligned = UnsafeMutableRawPointer(bitPattern: first) else { return }
        _ = madvise(aligned, end - first, MADV_HUGEPAGE)
    }
}
