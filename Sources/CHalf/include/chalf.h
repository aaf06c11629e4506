#ifndef SCENELINEAR_CHALF_H
#define SCENELINEAR_CHALF_H
#include <stddef.h>
#include <stdint.h>

/// Converts count IEEE binary32 values to binary16 bit patterns, rounding to nearest even.
/// Uses the F16C instructions when the CPU has them (checked once, at run time), else a
/// portable bit-exact software path.
/// Returns how many results are infinite or NaN (values beyond ±65504 round to infinity).
size_t chalf_f32_to_f16(const float *src, uint16_t *dst, size_t count);

/// Converts count binary16 bit patterns to IEEE binary32 values (exact).
void chalf_f16_to_f32(const uint16_t *src, float *dst, size_t count);

/// 1 when the hardware path is in use.
int chalf_has_f16c(void);
#endif
