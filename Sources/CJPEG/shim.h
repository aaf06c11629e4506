#ifndef SCENELINEAR_CJPEG_SHIM_H
#define SCENELINEAR_CJPEG_SHIM_H
// libjpeg-turbo (Debian libjpeg62-turbo-dev): decodes 8-bit DCT JPEG tiles and strips
// (DNG lossy JPEG, compression 34892, and baseline streams found where compression 7 is
// used). libjpeg reports fatal errors through error_exit, which by default calls exit();
// the error manager here jumps back with longjmp instead, and treats libjpeg's warnings
// (corrupt or truncated entropy-coded data, which libjpeg would otherwise fill with grey)
// as failures, so every problem comes back as a status code and a message.
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <jpeglib.h>

enum {
    CJPEG_OK = 0,
    /// libjpeg stopped with an error; `message` says why.
    CJPEG_FAILED = 1,
    /// The frame's size or component count is not the expected one (fields filled in).
    CJPEG_SHAPE_MISMATCH = 2,
    /// The image decoded, but libjpeg warned about corrupt data (`message`, `warnings`).
    CJPEG_CORRUPT_DATA = 3,
};

/// What one decode found.
typedef struct {
    int width;
    int height;
    int components;
    int precision;
    int warnings;
    char message[JMSG_LENGTH_MAX];
} cjpeg_result;

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    cjpeg_result *result;
} cjpeg_error_manager;

static inline void cjpeg_keep_message(j_common_ptr info) {
    cjpeg_error_manager *manager = (cjpeg_error_manager *)info->err;
    if (manager->result->message[0] == 0) {
        (*info->err->format_message)(info, manager->result->message);
    }
}

static inline void cjpeg_error_exit(j_common_ptr info) {
    cjpeg_keep_message(info);
    longjmp(((cjpeg_error_manager *)info->err)->jump, 1);
}

static inline void cjpeg_emit_message(j_common_ptr info, int level) {
    if (level < 0) {  // a warning: the data is damaged
        ((cjpeg_error_manager *)info->err)->result->warnings += 1;
        cjpeg_keep_message(info);
    }
}

static inline void cjpeg_output_message(j_common_ptr info) { (void)info; }

/// Decodes the JPEG stream `data` (after the optional tables-only stream `tables`, the
/// TIFF JPEGTables tag) into `out`: `height` rows of `width * components` bytes, grey or
/// RGB (libjpeg's default conversion from YCbCr). The frame must be exactly
/// `width` × `height` with `components` components and `out_size` must hold it.
static inline int cjpeg_decode(const unsigned char *tables, size_t tables_size,
                               const unsigned char *data, size_t size,
                               int width, int height, int components,
                               unsigned char *out, size_t out_size, cjpeg_result *result) {
    struct jpeg_decompress_struct info;
    cjpeg_error_manager manager;
    memset(result, 0, sizeof(*result));
    memset(&info, 0, sizeof(info));
    info.err = jpeg_std_error(&manager.base);
    manager.base.error_exit = cjpeg_error_exit;
    manager.base.emit_message = cjpeg_emit_message;
    manager.base.output_message = cjpeg_output_message;
    manager.result = result;
    if (setjmp(manager.jump)) {
        jpeg_destroy_decompress(&info);
        return CJPEG_FAILED;
    }
    jpeg_create_decompress(&info);
    if (tables != NULL && tables_size > 0) {
        jpeg_mem_src(&info, tables, (unsigned long)tables_size);
        (void)jpeg_read_header(&info, FALSE);
    }
    jpeg_mem_src(&info, data, (unsigned long)size);
    (void)jpeg_read_header(&info, TRUE);
    result->width = (int)info.image_width;
    result->height = (int)info.image_height;
    result->components = info.num_components;
    result->precision = info.data_precision;
    if (result->width != width || result->height != height || result->components != components
        || (size_t)width * (size_t)height * (size_t)components > out_size) {
        jpeg_destroy_decompress(&info);
        return CJPEG_SHAPE_MISMATCH;
    }
    info.out_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    (void)jpeg_start_decompress(&info);
    size_t stride = (size_t)width * (size_t)components;
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = out + (size_t)info.output_scanline * stride;
        if (jpeg_read_scanlines(&info, &row, 1) != 1) break;
    }
    (void)jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    return result->warnings > 0 ? CJPEG_CORRUPT_DATA : CJPEG_OK;
}

#endif
