// EXR recompression through the OpenEXR C++ library, for DWAA/DWAB (see exr_dwa.h).
#include "exr_dwa.h"

#include <ImfChannelList.h>
#include <ImfFrameBuffer.h>
#include <ImfHeader.h>
#include <ImfInputFile.h>
#include <ImfOutputFile.h>

#include <cstdio>
#include <exception>
#include <vector>

int scenelinear_exr_rewrite(const char *input, const char *output, int compression, float level,
                            char *message, size_t message_size) {
    try {
        Imf::InputFile in(input);
        Imf::Header header = in.header();
        if (header.hasTileDescription()) {
            std::snprintf(message, message_size, "only scanline files are rewritten; the input is tiled");
            return 1;
        }
        if (compression < 0 || compression >= int(Imf::NUM_COMPRESSION_METHODS)) {
            std::snprintf(message, message_size, "unknown compression %d", compression);
            return 1;
        }
        header.compression() = Imf::Compression(compression);
        if (header.compression() == Imf::DWAA_COMPRESSION || header.compression() == Imf::DWAB_COMPRESSION) {
            header.dwaCompressionLevel() = level;
        }
        const Imath::Box2i window = header.dataWindow();
        const long width = long(window.max.x) - window.min.x + 1;
        const long height = long(window.max.y) - window.min.y + 1;
        // One buffer per channel, addressed from the data window's origin.
        Imf::FrameBuffer frame;
        std::vector<std::vector<char>> buffers;
        for (Imf::ChannelList::ConstIterator c = header.channels().begin(); c != header.channels().end(); ++c) {
            const size_t size = c.channel().type == Imf::HALF ? 2 : 4;
            buffers.emplace_back(size_t(width) * size_t(height) * size);
            char *origin = buffers.back().data() - (long(window.min.y) * width + window.min.x) * long(size);
            frame.insert(c.name(), Imf::Slice(c.channel().type, origin, size, size * size_t(width)));
        }
        in.setFrameBuffer(frame);
        in.readPixels(window.min.y, window.max.y);
        Imf::OutputFile out(output, header);
        out.setFrameBuffer(frame);
        out.writePixels(int(height));
        return 0;
    } catch (const std::exception &e) {
        std::snprintf(message, message_size, "%s", e.what());
        return 1;
    }
}
