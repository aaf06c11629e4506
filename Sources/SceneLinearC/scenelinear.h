/*
 * scenelinear.h — the SceneLinear library through a C interface (docs/python.md, "The C
 * interface"). Plain C99: opaque handles, status codes, caller-supplied buffers.
 *
 * Every function that can fail returns a status: 0 for success, else the command line's exit
 * code for the failure's category (10 input unreadable, 11 not a DNG, 12 truncated, 13 corrupt
 * data, 14 unsupported feature, 15 unsupported version, 16 output failure, 17 limit exceeded,
 * 18 calibration mismatch, 19 bracket mismatch, 64 usage, 75 temporary failure, 1 internal
 * error), and writes the message — the one the command line prints, naming the file — into
 * `err` (NUL-terminated, cut to `errlen` bytes at a character boundary; `err` may be NULL).
 *
 * Options are JSON objects of the command line's long option names with `_` for `-`
 * (e.g. {"units": "luminance", "demosaic": "superpixel", "threads": 2}); NULL or "" for none.
 * Results that are documents (metadata, measurements) are JSON strings the library allocates;
 * release them with sl_string_free. Pixels are written into buffers the caller allocates.
 *
 * Functions may be called from any thread; a handle is immutable once opened, so one handle
 * may be read from several threads at once. No function keeps a pointer it was given.
 */
#ifndef SCENELINEAR_H
#define SCENELINEAR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The interface's version: a caller refuses a library whose version differs from the one it
 * was written for. */
#define SL_ABI_VERSION 1
int32_t sl_abi_version(void);

/* Copies the library's version ("scenelinear 0.1.0") into `buffer` of `length` bytes; 64
 * when it does not fit. */
int32_t sl_version(char *buffer, size_t length);

/* Details of the calling thread's last failure (the function that failed returned a status
 * other than 0): the file it is about, as the caller named it, into `path` (NUL-terminated,
 * cut to `pathlen` bytes; "" when none), and the operating system's error number (errno)
 * behind it into `system_error` (0 when none). Returns 1 with details, 2 when the path was
 * cut, 0 when the last call succeeded or its failure has neither. Either pointer may be NULL. */
int32_t sl_error_details(int32_t *system_error, char *path, size_t pathlen);

/* An image in memory: a DNG developed to scene-linear light, or an EXR, HDF5 or Radiance .hdr
 * file this tool wrote, with its clip mask, semantic masks, standard deviations and metadata. */
typedef struct sl_image sl_image;

/* Opens `path` (UTF-8) with the develop options in `options_json` (units, exposure,
 * calibration, allow_other_camera, settings_uncertainty, filter_factor, spectral_uncertainty,
 * light_source, color, demosaic, crop, orientation, source, masks, digest, max_memory, max_pixels, threads) and stores a handle in
 * `*out`. */
int32_t sl_image_open(const char *path, const char *options_json, sl_image **out, char *err, size_t errlen);

/* Called by sl_develop once, with the output size, before any pixel (possibly on another
 * thread than the caller's): returns 0 after setting `*pixels` (height × width × 3 floats)
 * and `*clip` (height × width bytes), or nonzero to stop the development (status 64). */
typedef int32_t (*sl_allocate_fn)(void *context, int64_t height, int64_t width, float **pixels, uint8_t **clip);

/* Develops the DNG `path` (the options of sl_image_open) straight into the caller's memory:
 * `allocate` says where; the pixels (R, G, B interleaved) and the clip mask (1 where a camera
 * channel reached white: lower bounds) are written there as the conversion makes them, and
 * no image-sized buffer of the library's own is kept. `*out` receives a handle without
 * pixels: metadata, semantic masks, and the noise model for sl_image_std_of. */
int32_t sl_develop(const char *path, const char *options_json, sl_allocate_fn allocate, void *context, sl_image **out,
                   char *err, size_t errlen);

/* The standard deviations of pixels developed by sl_develop (`pixels`, `clip` as it wrote
 * them), from the handle's noise model, into `dst` (height × width × 3 floats). */
int32_t sl_image_std_of(const sl_image *image, const float *pixels, const uint8_t *clip, float *dst, size_t count,
                        char *err, size_t errlen);

/* Releases a handle (NULL is ignored). */
void sl_image_release(sl_image *image);

/* The image's size: rows, columns and channels (3). */
int32_t sl_image_shape(const sl_image *image, int64_t *height, int64_t *width, int64_t *channels);

/* Copies the pixels, row-major interleaved R, G, B, into `dst` of `count` floats
 * (height × width × 3). */
int32_t sl_image_read(const sl_image *image, float *dst, size_t count, char *err, size_t errlen);

/* Copies each pixel's standard deviation of R, G and B (height × width × 3 floats): the file's
 * own layer (merge, convert --std), else the DNG NoiseProfile's model at the pixel's value, 0
 * where the pixel is clipped. Fails (14) when there is neither. */
int32_t sl_image_read_std(const sl_image *image, float *dst, size_t count, char *err, size_t errlen);

/* Copies the clip mask (height × width bytes, 1 where a camera channel reached white: the
 * pixel's values are lower bounds). Without a recorded mask, every byte is 0. */
int32_t sl_image_read_clip_mask(const sl_image *image, uint8_t *dst, size_t count, char *err, size_t errlen);

/* Copies the semantic mask `name` (its layer name or SemanticName; height × width floats,
 * 0…1). Fails (64) for a name the image does not have. */
int32_t sl_image_read_mask(const sl_image *image, const char *name, float *dst, size_t count, char *err, size_t errlen);

/* The image's metadata as a JSON document (schema scenelinear.image/1, docs/python.md). */
int32_t sl_image_metadata(const sl_image *image, char **json, char *err, size_t errlen);

/* Measures the files in `paths_json` (a JSON list of paths) with the options in
 * `options_json` (the develop options and regions, percentiles, bins_per_stop, linear, range,
 * ratios, quantity, statistic) and stores the command line's `--json` document (schema
 * scenelinear.analysis/1) in `*json`. A file that cannot be measured is reported in the
 * document with its error, as on the command line; the status is then that file's code. */
int32_t sl_analyze(const char *paths_json, const char *options_json, char **json, char *err, size_t errlen);

/* Measures an image in memory (opened, merged, or made from arrays) with the options in
 * `options_json` (regions, percentiles, bins_per_stop, linear, range, ratios, quantity,
 * statistic, projection, fov, circle, threads): the `--json` document of scenelinear.analysis/1
 * for that image. A DNG measured by path (sl_analyze) takes its means over the raw sites of a
 * CFA image; this measures the developed pixels. */
int32_t sl_image_analyze(const sl_image *image, const char *options_json, char **json, char *err, size_t errlen);

/* An image from caller arrays: `pixels` height × width × 3 floats (R, G, B interleaved),
 * optional `clip` (height × width bytes, nonzero: a lower bound) and `std` (height × width × 3
 * floats, each pixel's standard deviation), copied. Options: name (a label for messages),
 * units (relative, luminance, radiance: what the values are), color (their colour space). */
int32_t sl_image_from_array(const float *pixels, int64_t height, int64_t width, const uint8_t *clip, const float *std,
                            const char *options_json, sl_image **out, char *err, size_t errlen);

/* Merges the raw frames in `frames_json` (a JSON list of DNG paths) into an image in memory,
 * as `scenelinear merge` does (options: the develop options and reference, ratio_tolerance,
 * saturation, unchecked_ratios, align, align_range, max_disagreement, frame_filters: a list of
 * "N=T[±u]" texts): its pixels, per-pixel
 * standard deviations (sl_image_read_std), lower-bound mask (sl_image_read_clip_mask), frames
 * used (sl_image_read_frames) and the merge's report (key "merge" of sl_image_metadata). */
int32_t sl_merge(const char *frames_json, const char *options_json, sl_image **out, char *err, size_t errlen);

/* Copies a merged image's frame counts (height × width bytes: frames used by the pixel's
 * least-covered channel). Fails (64) for an image that is not a merge. */
int32_t sl_image_read_frames(const sl_image *image, uint8_t *dst, size_t count, char *err, size_t errlen);

/* Illuminance at a fisheye camera for each file of `paths_json`, as `scenelinear illuminance
 * --json` (schema scenelinear.illuminance/1). Options: projection (required), fov, circle,
 * the develop options (units luminance by default). */
int32_t sl_illuminance(const char *paths_json, const char *options_json, char **json, char *err, size_t errlen);

/* Simulates a capture (or a bracket) with known truth, as `scenelinear simulate`: options
 * scene, output (directory, required), name, width, height, layout, seed, noise,
 * exposure_time, iso, bracket (list of stops), frame_filters (a list of "N=T"). The
 * document lists the DNG frames and the truth files by role (schema scenelinear.simulation/1). */
int32_t sl_simulate(const char *options_json, char **json, char *err, size_t errlen);

/* A fisheye lens on the image (options projection, fov, circle — "auto" finds it in this
 * image): each pixel's angle from the optical axis (theta, radians), azimuth (radians,
 * counter-clockwise from +x) and solid angle (sr), height × width floats each, 0 outside the
 * image circle; the lens as a JSON document. */
int32_t sl_image_fisheye(const sl_image *image, const char *options_json, float *theta, float *azimuth, float *solid_angle,
                         size_t count, char **lens_json, char *err, size_t errlen);

/* A new handle: the image with a mask layer `name` (height × width weights 0…1, copied), which
 * regions then name as "name=mask:<name>". */
int32_t sl_image_with_mask(const sl_image *image, const char *name, const float *values, size_t count, sl_image **out,
                           char *err, size_t errlen);

/* Fits a camera's luminance calibration, as `scenelinear calibrate`: `references_json` a JSON
 * list of {"photo", "region" (a region spec), "luminance" (cd/m²), "relative_uncertainty"
 * (fraction, default 0.01), "method"} or, for fisheye photos, {"photo",
 * "illuminance_vertical" (lux), ...}; options demosaic, meter_uncertainty (percent, default
 * 2.9), projection, fov, circle, threads, light_source (what the references were lit by),
 * spectral_factors (a list of "NAME=F[±u%]"). The document is the calibration file's
 * (schema scenelinear.calibration/1). */
int32_t sl_calibrate(const char *references_json, const char *options_json, char **json, char *err, size_t errlen);

/* Fits a lens's vignetting from flat-field captures, as `scenelinear calibrate-lens`:
 * `flats_json` a JSON list of DNG paths; options cells, max_residual (percent), center ([x, y]
 * relative to the image), digest, max_memory, max_pixels, threads. The document is the lens
 * calibration file's (schema scenelinear.lens/1). */
int32_t sl_calibrate_lens(const char *flats_json, const char *options_json, char **json, char *err, size_t errlen);

/* Releases a string the library returned (NULL is ignored). */
void sl_string_free(char *s);

#ifdef __cplusplus
}
#endif

#endif /* SCENELINEAR_H */
