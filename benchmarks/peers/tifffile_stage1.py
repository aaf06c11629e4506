#!/usr/bin/env python3
"""Peer: Stage 1 alone — tifffile finds the raw IFD (LinearRaw or CFA, also inside SubIFDs)
and decodes its tiles (lossless JPEG through imagecodecs) to an array of stored codes.

Usage: tifffile_stage1.py INPUT.dng [CODES.npy] — checks the array's shape and that it is not
all zero, optionally saves it, and prints one JSON line of in-process times."""
import json
import sys
import time

t0 = time.perf_counter()
import imagecodecs  # noqa: F401  (the lossless JPEG codec tifffile uses)
import numpy as np
import tifffile
from dng_raw_page import raw_page

t1 = time.perf_counter()
with tifffile.TiffFile(sys.argv[1]) as tif:
    page = raw_page(tif)
    if page is None:
        sys.exit("no LinearRaw or CFA image found")
    codes = page.asarray()
    t2 = time.perf_counter()
    samples = page.samplesperpixel
    expected = (page.imagelength, page.imagewidth) + ((samples,) if samples > 1 else ())
    if codes.shape != expected:
        sys.exit(f"decoded shape {codes.shape}, expected {expected}")
    if not codes.any():
        sys.exit("decoded image is all zero")
    if len(sys.argv) > 2:
        np.save(sys.argv[2], codes)
print(json.dumps({"import": t1 - t0, "decode": t2 - t1, "shape": list(codes.shape), "dtype": str(codes.dtype),
                  "photometric": int(page.photometric), "min": int(codes.min()), "max": int(codes.max())}))
