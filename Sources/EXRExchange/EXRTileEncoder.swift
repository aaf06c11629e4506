internal import COpenEXR
import ExchangeCore
import Foundation
import ImageCore

/// Encodes and writes every tile of a tiled part, level by level (mip-map level 0 first),
/// rows of tiles top to bottom, on one thread with one OpenEXRCore encode pipeline and the
/// library's own compression routines.
struct EXRTileEncoder {
    let context: EXRContext
    let part: Int32
    /// The pixels of each level, level 0 first.
    let levels: [EXRSourcePlanes]

    func run() throws {
        guard let ctxt = context.handle else { return }
        var levelsX: Int32 = 0, levelsY: Int32 = 0
        try context.check(exr_get_tile_levels(ctxt, part, &levelsX, &levelsY), "exr_get_tile_levels")
        guard Int(levelsX) <= levels.count else {
            throw ExchangeError(path: context.path, operation: "exr_get_tile_levels",
                                message: "the file needs \(levelsX) levels, \(levels.count) were made", category: .internalError)
        }
        var tileWidth: UInt32 = 0, tileHeight: UInt32 = 0
        var levelMode = EXR_TILE_ONE_LEVEL, rounding = EXR_TILE_ROUND_DOWN
        try context.check(exr_get_tile_descriptor(ctxt, part, &tileWidth, &tileHeight, &levelMode, &rounding),
                          "exr_get_tile_descriptor")
        let pipe = UnsafeMutablePointer<exr_encode_pipeline_t>.allocate(capacity: 1)
        pipe.initialize(to: exr_encode_pipeline_t())
        var initialized = false
        defer {
            if initialized { _ = exr_encoding_destroy(ctxt, pipe) }
            pipe.deallocate()
        }
        for level in 0..<Int(levelsX) {
            let planes = levels[level]
            var levelWidth: Int32 = 0, levelHeight: Int32 = 0
            try context.check(exr_get_level_sizes(ctxt, part, Int32(level), Int32(level), &levelWidth, &levelHeight),
                              "exr_get_level_sizes")
            guard Int(levelWidth) == planes.width, Int(levelHeight) == planes.height else {
                throw ExchangeError(path: context.path, operation: "exr_get_level_sizes",
                                    message: "level \(level) is \(levelWidth)×\(levelHeight), the pixels \(planes.width)×\(planes.height)",
                                    category: .internalError)
            }
            let countX = (planes.width + Int(tileWidth) - 1) / Int(tileWidth)
            let countY = (planes.height + Int(tileHeight) - 1) / Int(tileHeight)
            for ty in 0..<countY {
                for tx in 0..<countX {
                    var chunk = exr_chunk_info_t()
                    try context.check(exr_write_tile_chunk_info(ctxt, part, Int32(tx), Int32(ty), Int32(level), Int32(level), &chunk),
                                      "exr_write_tile_chunk_info (tile \(tx), \(ty), level \(level))")
                    // OpenEXRCore 3.1 sizes every tile of a level above 0 as a whole tile; the
                    // tiles at the level's right and bottom edges are smaller (as readers expect).
                    Self.clip(&chunk, to: planes, column: tx * Int(tileWidth), row: ty * Int(tileHeight),
                              tileWidth: Int(tileWidth), tileHeight: Int(tileHeight))
                    if initialized {
                        try context.check(exr_encoding_update(ctxt, part, &chunk, pipe), "exr_encoding_update")
                    } else {
                        try context.check(exr_encoding_initialize(ctxt, part, &chunk, pipe), "exr_encoding_initialize")
                        initialized = true
                    }
                    // For tiles the chunk's start is the tile index, not a pixel position.
                    EXRSourcePlanes.point(pipe, at: planes, x: tx * Int(tileWidth), y: ty * Int(tileHeight))
                    if pipe.pointee.convert_and_pack_fn == nil {
                        try context.check(exr_encoding_choose_default_routines(ctxt, part, pipe),
                                          "exr_encoding_choose_default_routines")
                    }
                    try context.check(exr_encoding_run(ctxt, part, pipe), "exr_encoding_run (tile \(tx), \(ty), level \(level))")
                }
            }
        }
    }

    /// The chunk of the tile whose top-left pixel is (`column`, `row`) cut to the level's
    /// pixels: its width, height and unpacked size (every channel of `planes` at full resolution).
    static func clip(_ chunk: inout exr_chunk_info_t, to planes: EXRSourcePlanes, column: Int, row: Int, tileWidth: Int,
                     tileHeight: Int) {
        let width = min(tileWidth, planes.width - column), height = min(tileHeight, planes.height - row)
        guard Int(chunk.width) != width || Int(chunk.height) != height else { return }
        chunk.width = Int32(width)
        chunk.height = Int32(height)
        chunk.unpacked_size = UInt64(width * height * planes.channels.count * planes.bytesPerSample)
    }
}
