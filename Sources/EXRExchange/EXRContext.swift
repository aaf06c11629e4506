internal import COpenEXR
import ExchangeCore
import Foundation
import ImageCore
import Synchronization

/// Collects the messages OpenEXRCore reports for one context, instead of printing them.
final class EXRMessageLog: Sendable {
    private let messages = Mutex<[String]>([])

    func append(_ message: String) {
        messages.withLock { $0.append(message) }
    }

    /// All messages so far, joined; empty when the library said nothing.
    var text: String {
        messages.withLock { $0.joined(separator: "; ") }
    }
}

/// Routes OpenEXRCore error callbacks to the `EXRMessageLog` of the context they came from.
///
/// The context's `user_data` cannot be used for this: with the library's own file I/O it
/// holds the file handle. Errors raised inside `exr_start_read`/`exr_start_write`, before
/// the caller knows the context pointer, are routed by the calling thread instead.
enum EXRErrorRouter {
    private struct Routes {
        var byContext: [UInt: EXRMessageLog] = [:]
        var byThread: [ObjectIdentifier: EXRMessageLog] = [:]
    }

    private static let routes = Mutex(Routes())

    private static var threadKey: ObjectIdentifier { ObjectIdentifier(Thread.current) }

    static func register(_ log: EXRMessageLog, context: exr_const_context_t) {
        routes.withLock { $0.byContext[UInt(bitPattern: context)] = log }
    }

    static func unregister(context: exr_const_context_t) {
        _ = routes.withLock { $0.byContext.removeValue(forKey: UInt(bitPattern: context)) }
    }

    /// Runs `body` with `log` receiving the errors of contexts not yet registered that
    /// report on this thread.
    static func routingThread<T>(to log: EXRMessageLog, _ body: () -> T) -> T {
        let key = threadKey
        routes.withLock { $0.byThread[key] = log }
        defer { _ = routes.withLock { $0.byThread.removeValue(forKey: key) } }
        return body()
    }

    static func deliver(context: exr_const_context_t?, message: String) {
        let key = threadKey
        let log = routes.withLock { r in context.flatMap { r.byContext[UInt(bitPattern: $0)] } ?? r.byThread[key] }
        log?.append(message)
    }

    /// The callback installed in every context initializer.
    static let handler: exr_error_handler_cb_t = { context, code, message in
        let text = message.map { String(cString: $0) } ?? String(cString: exr_get_default_error_message(code))
        EXRErrorRouter.deliver(context: context, message: text)
    }
}

extension UInt {
    init(bitPattern pointer: OpaquePointer) {
        self = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pointer)))
    }
}

/// The success code, as the `Int32` the C functions return.
let exrSuccess = exr_result_t(EXR_ERR_SUCCESS.rawValue)

/// An open OpenEXRCore context for reading or writing, with its message log.
///
/// `finish()` must be called exactly once (`deinit` does it when the caller did not).
final class EXRContext {
    private(set) var handle: exr_context_t?
    let log = EXRMessageLog()
    let path: String
    let writing: Bool

    private init(path: String, writing: Bool) {
        self.path = path
        self.writing = writing
    }

    /// The library's default initializer with this module's error handler.
    private static func initializer() -> exr_context_initializer_t {
        var initializer = cexr_default_initializer()
        initializer.error_handler_fn = EXRErrorRouter.handler
        return initializer
    }

    /// Opens `path` for reading (`exr_start_read`).
    static func openForReading(_ path: String) throws -> EXRContext {
        let context = EXRContext(path: path, writing: false)
        var initializer = initializer()
        var handle: exr_context_t?
        let rv = EXRErrorRouter.routingThread(to: context.log) {
            exr_start_read(&handle, path, &initializer)
        }
        if let handle {
            context.handle = handle
            EXRErrorRouter.register(context.log, context: handle)
        }
        if rv != exrSuccess {
            throw context.error(rv, "exr_start_read")
        }
        return context
    }

    /// Creates `path` for writing (`exr_start_write`, writing the file directly: the
    /// caller already writes to a temporary name).
    static func create(_ path: String) throws -> EXRContext {
        let context = EXRContext(path: path, writing: true)
        var initializer = initializer()
        var handle: exr_context_t?
        let rv = EXRErrorRouter.routingThread(to: context.log) {
            exr_start_write(&handle, path, EXR_WRITE_FILE_DIRECTLY, &initializer)
        }
        if let handle {
            context.handle = handle
            EXRErrorRouter.register(context.log, context: handle)
        }
        if rv != exrSuccess {
            throw context.error(rv, "exr_start_write")
        }
        return context
    }

    /// Throws when `rv` is not success; `operation` names the C function.
    func check(_ rv: exr_result_t, _ operation: String) throws {
        if rv != exrSuccess { throw error(rv, operation) }
    }

    /// An `ExchangeError` for result `rv` of `operation`, with the logged messages.
    func error(_ rv: exr_result_t, _ operation: String) -> ExchangeError {
        let code = String(cString: exr_get_error_code_as_string(rv))
        let logged = log.text
        let message = logged.isEmpty ? "\(code): \(String(cString: exr_get_default_error_message(rv)))" : "\(code): \(logged)"
        return ExchangeError(path: path, operation: operation, message: message,
                             category: writing ? .outputFailure : EXRContext.readCategory(rv))
    }

    /// The failure category of a read error code.
    static func readCategory(_ rv: exr_result_t) -> FailureCategory {
        switch UInt32(bitPattern: rv) {
        case EXR_ERR_FILE_ACCESS.rawValue: return .inputUnreadable
        case EXR_ERR_READ_IO.rawValue: return .truncated
        case EXR_ERR_FEATURE_NOT_IMPLEMENTED.rawValue, EXR_ERR_USE_SCAN_DEEP_WRITE.rawValue,
             EXR_ERR_USE_TILE_DEEP_WRITE.rawValue:
            return .unsupportedFeature
        default: return .corruptData
        }
    }

    /// Closes the context (`exr_finish`); for a write this completes the file.
    func finish() throws {
        guard let key = handle else { return }
        var handle: exr_context_t? = key
        self.handle = nil
        let rv = exr_finish(&handle)
        EXRErrorRouter.unregister(context: key)
        try check(rv, "exr_finish")
    }

    deinit {
        if let key = handle {
            var handle: exr_context_t? = key
            _ = exr_finish(&handle)
            EXRErrorRouter.unregister(context: key)
        }
    }
}
