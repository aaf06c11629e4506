internal import COpenEXR
import Foundation
import ImageCore

/// Compresses the chunks of one scanline part on several threads and writes them in
/// increasing order.
///
/// OpenEXRCore 3.1 lets every thread own an `exr_encode_pipeline_t` on the same context,
/// but `exr_write_scanline_chunk` refuses a chunk out of order unless the line order is
/// RANDOM_Y (and a random order would make the bytes depend on thread timing). The
/// pipeline's hooks make the order: `exr_encoding_run` packs and compresses, then calls
/// `yield_until_ready_fn`, which here blocks until every earlier chunk is written, then
/// `write_fn`, which here calls the library's own writer and lets the next chunk go.
/// Workers claim chunks in increasing order, so the lowest unwritten chunk always
/// belongs to a running worker and no wait can deadlock. With one thread the library's
/// default routines are used unchanged, which is the reference for byte-identity.
struct EXRChunkEncoder {
    let context: EXRContext
    let part: Int32
    let planes: EXRSourcePlanes

    /// Encodes and writes every chunk of the part.
    ///
    /// - Throws: `ExchangeError` with the first failure.
    func run(threads: Int) throws {
        guard let ctxt = context.handle else { return }
        var linesPerChunk: Int32 = 0
        try context.check(exr_get_scanlines_per_chunk(ctxt, part, &linesPerChunk), "exr_get_scanlines_per_chunk")
        var chunkCount: Int32 = 0
        try context.check(exr_get_chunk_count(ctxt, part, &chunkCount), "exr_get_chunk_count")
        let workers = max(1, min(threads, Int(chunkCount)))
        let order = EXRWriteOrder(total: Int(chunkCount))
        nonisolated(unsafe) let encoder = self
        nonisolated(unsafe) let handle = ctxt
        let lines = Int(linesPerChunk)
        Parallel.forEach(workers) { _ in
            encoder.work(handle, order: order, linesPerChunk: lines, ordered: workers > 1)
        }
        if let (rv, operation) = order.firstFailure {
            throw context.error(rv, operation)
        }
    }

    private func work(_ ctxt: exr_context_t, order: EXRWriteOrder, linesPerChunk: Int, ordered: Bool) {
        let pipe = UnsafeMutablePointer<exr_encode_pipeline_t>.allocate(capacity: 1)
        pipe.initialize(to: exr_encode_pipeline_t())
        var initialized = false
        defer {
            if initialized { _ = exr_encoding_destroy(ctxt, pipe) }
            pipe.deallocate()
        }
        while let index = order.claim() {
            var chunk = exr_chunk_info_t()
            var rv = exr_write_scanline_chunk_info(ctxt, part, Int32(index * linesPerChunk), &chunk)
            guard rv == exrSuccess else { return order.fail(index, rv, "exr_write_scanline_chunk_info") }
            if initialized {
                rv = exr_encoding_update(ctxt, part, &chunk, pipe)
                guard rv == exrSuccess else { return order.fail(index, rv, "exr_encoding_update") }
            } else {
                rv = exr_encoding_initialize(ctxt, part, &chunk, pipe)
                guard rv == exrSuccess else { return order.fail(index, rv, "exr_encoding_initialize") }
                initialized = true
            }
            point(pipe, at: Int(chunk.start_y))
            if pipe.pointee.convert_and_pack_fn == nil {
                rv = exr_encoding_choose_default_routines(ctxt, part, pipe)
                guard rv == exrSuccess else { return order.fail(index, rv, "exr_encoding_choose_default_routines") }
                if ordered {
                    order.setLibraryWriter(pipe.pointee.write_fn)
                    pipe.pointee.yield_until_ready_fn = EXRWriteOrder.waitForTurn
                    pipe.pointee.write_fn = EXRWriteOrder.writeInTurn
                    pipe.pointee.encoding_user_data = Unmanaged.passUnretained(order).toOpaque()
                }
            }
            rv = exr_encoding_run(ctxt, part, pipe)
            guard rv == exrSuccess else { return order.fail(index, rv, "exr_encoding_run") }
        }
    }

    /// Points the pipeline's channels at the rows of the chunk starting at row `y`.
    private func point(_ pipe: UnsafeMutablePointer<exr_encode_pipeline_t>, at y: Int) {
        let halfSize = MemoryLayout<Float16>.stride
        for c in 0..<Int(pipe.pointee.channel_count) {
            let channel = pipe.pointee.channels + c
            let name = String(cString: channel.pointee.channel_name)
            let source: UnsafeRawPointer
            let pixelStride: Int
            switch name {
            case "R", "G", "B":
                let component = name == "R" ? 0 : name == "G" ? 1 : 2
                source = planes.rgb + ((y * planes.width) * 3 + component) * halfSize
                pixelStride = 3 * halfSize
            default:
                guard let mask = planes.mask else { preconditionFailure("unexpected channel \(name)") }
                source = mask + y * planes.width * halfSize
                pixelStride = halfSize
            }
            channel.pointee.encode_from_ptr = source.assumingMemoryBound(to: UInt8.self)
            channel.pointee.user_pixel_stride = Int32(pixelStride)
            channel.pointee.user_line_stride = Int32(pixelStride * planes.width)
            channel.pointee.user_bytes_per_element = Int16(halfSize)
            channel.pointee.user_data_type = UInt16(EXR_PIXEL_HALF.rawValue)
        }
    }
}

/// Hands out chunk indices in increasing order and lets compressed chunks be written only
/// in that order.
final class EXRWriteOrder: @unchecked Sendable {
    typealias PipelineFunction = @convention(c) (UnsafeMutablePointer<exr_encode_pipeline_t>?) -> exr_result_t

    private let condition = NSCondition()
    private let total: Int
    private var nextToClaim = 0
    private var nextToWrite = 0
    private var aborted = false
    private var libraryWriter: PipelineFunction?
    private(set) var firstFailure: (exr_result_t, String)?

    init(total: Int) { self.total = total }

    /// The next chunk to encode, or nil when all are taken or a worker failed.
    func claim() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        guard !aborted, nextToClaim < total else { return nil }
        nextToClaim += 1
        return nextToClaim - 1
    }

    /// Records a failure of chunk `index` and wakes every waiting worker.
    func fail(_ index: Int, _ rv: exr_result_t, _ operation: String) {
        condition.lock()
        if !aborted { firstFailure = (rv, operation + " (chunk \(index))") }
        aborted = true
        condition.broadcast()
        condition.unlock()
    }

    func setLibraryWriter(_ writer: PipelineFunction?) {
        condition.lock()
        libraryWriter = writer
        condition.unlock()
    }

    /// `yield_until_ready_fn`: blocks until every chunk before this one is written.
    static let waitForTurn: PipelineFunction = { pipe in
        guard let pipe, let order = EXRWriteOrder.owner(of: pipe) else { return exr_result_t(EXR_ERR_INVALID_ARGUMENT.rawValue) }
        let index = Int(pipe.pointee.chunk.idx)
        order.condition.lock()
        defer { order.condition.unlock() }
        while order.nextToWrite != index && !order.aborted { order.condition.wait() }
        return order.aborted ? exr_result_t(EXR_ERR_INCORRECT_CHUNK.rawValue) : exrSuccess
    }

    /// `write_fn`: the library's writer, then the turn passes to the next chunk.
    static let writeInTurn: PipelineFunction = { pipe in
        guard let pipe, let order = EXRWriteOrder.owner(of: pipe) else { return exr_result_t(EXR_ERR_INVALID_ARGUMENT.rawValue) }
        order.condition.lock()
        let writer = order.libraryWriter
        order.condition.unlock()
        guard let writer else { return exr_result_t(EXR_ERR_INVALID_ARGUMENT.rawValue) }
        let rv = writer(pipe)
        if rv == exrSuccess {
            order.condition.lock()
            order.nextToWrite += 1
            order.condition.broadcast()
            order.condition.unlock()
        }
        return rv
    }

    private static func owner(of pipe: UnsafeMutablePointer<exr_encode_pipeline_t>) -> EXRWriteOrder? {
        guard let data = pipe.pointee.encoding_user_data else { return nil }
        return Unmanaged<EXRWriteOrder>.fromOpaque(data).takeUnretainedValue()
    }
}
