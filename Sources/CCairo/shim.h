#ifndef SCENELINEAR_CCAIRO_SHIM_H
#define SCENELINEAR_CCAIRO_SHIM_H
// Cairo 1.16 (image, SVG and PDF surfaces) and Pango 1.50 (text layout) from Debian
// (libcairo2-dev, libpango1.0-dev). The stream writers collect a surface's output in a
// growable memory buffer, so Swift never hands a closure to C.
#include <cairo.h>
#include <cairo-svg.h>
#include <cairo-pdf.h>
#include <pango/pangocairo.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned char *data;
    size_t size;
    size_t capacity;
    int failed;
} ccairo_buffer;

static cairo_status_t ccairo_buffer_write(void *closure, const unsigned char *data, unsigned int length) {
    ccairo_buffer *b = (ccairo_buffer *)closure;
    if (b->failed) return CAIRO_STATUS_WRITE_ERROR;
    if (b->size + length > b->capacity) {
        size_t want = b->capacity ? b->capacity : 65536;
        while (want < b->size + length) want *= 2;
        unsigned char *grown = (unsigned char *)realloc(b->data, want);
        if (!grown) { b->failed = 1; return CAIRO_STATUS_NO_MEMORY; }
        b->data = grown;
        b->capacity = want;
    }
    memcpy(b->data + b->size, data, length);
    b->size += length;
    return CAIRO_STATUS_SUCCESS;
}

static inline void ccairo_buffer_free(ccairo_buffer *b) {
    free(b->data);
    b->data = NULL;
    b->size = b->capacity = 0;
}

static inline cairo_surface_t *ccairo_svg_surface(ccairo_buffer *b, double width, double height) {
    cairo_surface_t *s = cairo_svg_surface_create_for_stream(ccairo_buffer_write, b, width, height);
    cairo_svg_surface_restrict_to_version(s, CAIRO_SVG_VERSION_1_1);
    cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PX);   // one SVG pixel per drawing unit
    return s;
}

static inline cairo_surface_t *ccairo_pdf_surface(ccairo_buffer *b, double width, double height) {
    return cairo_pdf_surface_create_for_stream(ccairo_buffer_write, b, width, height);
}

static inline int ccairo_pango_scale(void) { return PANGO_SCALE; }
#endif
