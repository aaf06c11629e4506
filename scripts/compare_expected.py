#!/usr/bin/env python3
"""Compares a SceneLinear HDF5 output with the exact expected image (both read with h5py).

Usage: compare_expected.py OUTPUT.h5 EXPECTED.h5

Prints the largest relative error where the expected value is above 2^-12 of white, the
largest absolute error below it, and the clip-mask agreement; exits 1 when the image is not
equal to the expectation to half-float rounding (relative error <= 2^-10).
"""
import sys

import h5py
import numpy as np


def main() -> int:
    out_path, exp_path = sys.argv[1], sys.argv[2]
    with h5py.File(out_path, "r") as out, h5py.File(exp_path, "r") as exp:
        got = out["image"][...].astype(np.float64)
        want = exp["image"][...].astype(np.float64)
        if got.shape != want.shape:
            print(f"shape differs: {got.shape} vs {want.shape}")
            return 1
        big = np.abs(want) > 2.0**-12
        rel = np.abs(got[big] - want[big]) / np.abs(want[big])
        absolute = np.abs(got[~big] - want[~big])
        mask_equal = bool(np.array_equal(out["clip_mask"][...], exp["clip_mask"][...]))
        print(f"{out_path} vs {exp_path}: {got.shape[1]}x{got.shape[0]}x{got.shape[2]} half floats (read by h5py {h5py.__version__})")
        print(f"  max relative error (|expected| > 2^-12): {rel.max() if rel.size else 0.0:.3e}  (bound 2^-10 = {2.0**-10:.3e})")
        print(f"  max absolute error (|expected| <= 2^-12): {absolute.max() if absolute.size else 0.0:.3e}")
        print(f"  clip masks equal: {mask_equal}; clipped pixels: {int(np.count_nonzero(out['clip_mask'][...]))}")
        ok = (rel.size == 0 or rel.max() <= 2.0**-10) and (absolute.size == 0 or absolute.max() <= 2.0**-22) and mask_equal
        print("  result: " + ("equal to the exact expectation to half-float rounding" if ok else "MISMATCH"))
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
