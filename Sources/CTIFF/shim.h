#ifndef SCENELINEAR_CTIFF_SHIM_H
#define SCENELINEAR_CTIFF_SHIM_H
// libtiff 4.5 (Debian libtiff-dev), used to write DNG files. TIFFSetField is variadic, which
// Swift cannot call, so typed wrappers live here; they also convert values to the storage
// type libtiff expects for each field (float for most RATIONAL arrays, uint16 counts, ...).
#include <tiffio.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// The last libtiff error message of one open file.
typedef struct {
    char message[1024];
} ctiff_error_buffer;

static int ctiff_error_handler(TIFF *tif, void *user_data, const char *module, const char *fmt, va_list ap) {
    (void)tif;
    ctiff_error_buffer *b = (ctiff_error_buffer *)user_data;
    if (!b) return 1;
    char text[900];
    vsnprintf(text, sizeof text, fmt, ap);
    snprintf(b->message, sizeof b->message, "%s: %s", module ? module : "libtiff", text);
    return 1;
}

static int ctiff_quiet_handler(TIFF *tif, void *user_data, const char *module, const char *fmt, va_list ap) {
    (void)tif; (void)user_data; (void)module; (void)fmt; (void)ap;
    return 1; // warnings (e.g. about tags libtiff does not know) are not errors here
}

/// Opens a file with errors captured into `errors` and warnings silenced. libtiff keeps
/// `errors` and writes to it on every later error of this file: it must stay allocated
/// until TIFFClose has returned.
static inline TIFF *ctiff_open(const char *path, const char *mode, ctiff_error_buffer *errors) {
    TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
    if (!o) return NULL;
    TIFFOpenOptionsSetErrorHandlerExtR(o, ctiff_error_handler, errors);
    TIFFOpenOptionsSetWarningHandlerExtR(o, ctiff_quiet_handler, NULL);
    TIFF *t = TIFFOpenExt(path, mode, o);
    TIFFOpenOptionsFree(o);
    return t;
}

/// DNG 1.2–1.7 tags libtiff 4.5 does not know, and the TIFF-EP exposure tags written in IFD 0.
/// The names are static storage: libtiff keeps the pointers.
static const TIFFFieldInfo ctiff_dng_fields[] = {
    {33434, 1, 1, TIFF_RATIONAL, FIELD_CUSTOM, 1, 0, (char *)"ExposureTime"},
    {33437, 1, 1, TIFF_RATIONAL, FIELD_CUSTOM, 1, 0, (char *)"FNumber"},
    {34855, -1, -1, TIFF_SHORT, FIELD_CUSTOM, 1, 1, (char *)"ISOSpeedRatings"},
    {36867, -1, -1, TIFF_ASCII, FIELD_CUSTOM, 1, 0, (char *)"DateTimeOriginal"},
    {36881, -1, -1, TIFF_ASCII, FIELD_CUSTOM, 1, 0, (char *)"OffsetTimeOriginal"},
    {37521, -1, -1, TIFF_ASCII, FIELD_CUSTOM, 1, 0, (char *)"SubSecTimeOriginal"},
    {50879, 1, 1, TIFF_SHORT, FIELD_CUSTOM, 1, 0, (char *)"ColorimetricReference"},
    {50964, -1, -1, TIFF_SRATIONAL, FIELD_CUSTOM, 1, 1, (char *)"ForwardMatrix1"},
    {50965, -1, -1, TIFF_SRATIONAL, FIELD_CUSTOM, 1, 1, (char *)"ForwardMatrix2"},
    {51008, -3, -3, TIFF_UNDEFINED, FIELD_CUSTOM, 1, 1, (char *)"OpcodeList1"},
    {51009, -3, -3, TIFF_UNDEFINED, FIELD_CUSTOM, 1, 1, (char *)"OpcodeList2"},
    {51022, -3, -3, TIFF_UNDEFINED, FIELD_CUSTOM, 1, 1, (char *)"OpcodeList3"},
    {51041, -1, -1, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1, (char *)"NoiseProfile"},
    {51109, 1, 1, TIFF_SRATIONAL, FIELD_CUSTOM, 1, 0, (char *)"BaselineExposureOffset"},
    {51110, 1, 1, TIFF_LONG, FIELD_CUSTOM, 1, 0, (char *)"DefaultBlackRender"},
    {51111, 16, 16, TIFF_BYTE, FIELD_CUSTOM, 1, 0, (char *)"NewRawImageDigest"},
    {51125, 4, 4, TIFF_RATIONAL, FIELD_CUSTOM, 1, 0, (char *)"DefaultUserCrop"},
    {52525, -3, -3, TIFF_UNDEFINED, FIELD_CUSTOM, 1, 1, (char *)"ProfileGainTableMap"},
    {52526, -1, -1, TIFF_ASCII, FIELD_CUSTOM, 1, 0, (char *)"SemanticName"},
    {52528, -1, -1, TIFF_ASCII, FIELD_CUSTOM, 1, 0, (char *)"SemanticInstanceID"},
    {52529, 1, 1, TIFF_SHORT, FIELD_CUSTOM, 1, 0, (char *)"CalibrationIlluminant3"},
    {52530, -1, -1, TIFF_SRATIONAL, FIELD_CUSTOM, 1, 1, (char *)"CameraCalibration3"},
    {52531, -1, -1, TIFF_SRATIONAL, FIELD_CUSTOM, 1, 1, (char *)"ColorMatrix3"},
    {52532, -1, -1, TIFF_SRATIONAL, FIELD_CUSTOM, 1, 1, (char *)"ForwardMatrix3"},
    {52536, 4, 4, TIFF_LONG, FIELD_CUSTOM, 1, 0, (char *)"MaskSubArea"},
};

/// Registers the fields above on an open file. Returns 0 on success. libtiff forgets merged
/// fields when it starts a new directory (TIFFWriteDirectory), so call this for every IFD.
static inline int ctiff_register_dng_fields(TIFF *t) {
    if (TIFFFindField(t, 51041, TIFF_ANY)) return 0; // already registered for this directory
    return TIFFMergeFieldInfo(t, ctiff_dng_fields, (uint32_t)(sizeof ctiff_dng_fields / sizeof ctiff_dng_fields[0]));
}

static inline int ctiff_set_u16(TIFF *t, uint32_t tag, uint16_t v) { return TIFFSetField(t, tag, (int)v); }
static inline int ctiff_set_u32(TIFF *t, uint32_t tag, uint32_t v) { return TIFFSetField(t, tag, v); }
static inline int ctiff_set_string(TIFF *t, uint32_t tag, const char *s) { return TIFFSetField(t, tag, s); }

/// Sets a numeric tag (scalar or array) from doubles, converting them to the storage type
/// libtiff uses for that field, and passing a count only when the field takes one.
/// Returns 1 on success, 0 on failure (unknown tag, unsupported type, libtiff error).
static inline int ctiff_set_numbers(TIFF *t, uint32_t tag, uint32_t count, const double *v) {
    const TIFFField *f = TIFFFindField(t, tag, TIFF_ANY);
    if (!f || count == 0) return 0;
    TIFFDataType type = TIFFFieldDataType(f);
    int size = TIFFFieldSetGetSize(f);
    int pass = TIFFFieldPassCount(f);
    if (!pass && TIFFFieldWriteCount(f) == 1) {
        switch (type) {
        case TIFF_BYTE: case TIFF_SHORT: case TIFF_SBYTE: case TIFF_SSHORT:
            return TIFFSetField(t, tag, (int)v[0]);
        case TIFF_LONG: case TIFF_IFD:
            return TIFFSetField(t, tag, (uint32_t)v[0]);
        case TIFF_SLONG:
            return TIFFSetField(t, tag, (int32_t)v[0]);
        case TIFF_RATIONAL: case TIFF_SRATIONAL: case TIFF_FLOAT: case TIFF_DOUBLE:
            if (size == 4) return TIFFSetField(t, tag, (double)(float)v[0]); // promoted to double
            return TIFFSetField(t, tag, v[0]);
        default:
            return 0;
        }
    }
    if (size <= 0) return 0;
    void *buf = calloc(count, (size_t)size);
    if (!buf) return 0;
    for (uint32_t i = 0; i < count; i++) {
        switch (type) {
        case TIFF_BYTE: case TIFF_UNDEFINED: ((uint8_t *)buf)[i] = (uint8_t)v[i]; break;
        case TIFF_SBYTE: ((int8_t *)buf)[i] = (int8_t)v[i]; break;
        case TIFF_SHORT: ((uint16_t *)buf)[i] = (uint16_t)v[i]; break;
        case TIFF_SSHORT: ((int16_t *)buf)[i] = (int16_t)v[i]; break;
        case TIFF_LONG: case TIFF_IFD: ((uint32_t *)buf)[i] = (uint32_t)v[i]; break;
        case TIFF_SLONG: ((int32_t *)buf)[i] = (int32_t)v[i]; break;
        case TIFF_RATIONAL: case TIFF_SRATIONAL: case TIFF_FLOAT: case TIFF_DOUBLE:
            if (size == 4) ((float *)buf)[i] = (float)v[i]; else ((double *)buf)[i] = v[i];
            break;
        default:
            free(buf);
            return 0;
        }
    }
    int ok = pass ? TIFFSetField(t, tag, count, buf) : TIFFSetField(t, tag, buf);
    free(buf);
    return ok;
}

/// Sets an UNDEFINED/BYTE blob tag (opcode lists, gain table maps).
static inline int ctiff_set_bytes(TIFF *t, uint32_t tag, uint32_t count, const uint8_t *bytes) {
    const TIFFField *f = TIFFFindField(t, tag, TIFF_ANY);
    if (!f) return 0;
    if (TIFFFieldPassCount(f)) return TIFFSetField(t, tag, count, bytes);
    return TIFFSetField(t, tag, bytes);
}

/// Announces `count` SubIFDs: the next `count` directories written become SubIFDs of this one.
static inline int ctiff_set_subifd_count(TIFF *t, uint16_t count) {
    uint64_t offsets[16] = {0};
    if (count > 16) return 0;
    return TIFFSetField(t, TIFFTAG_SUBIFD, count, offsets);
}
#endif
