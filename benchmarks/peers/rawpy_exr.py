#!/usr/bin/env python3
"""Peer: LibRaw (through rawpy) develops a DNG to 16-bit linear RGB with the camera's white
balance, then the OpenEXR Python package writes it as a half-float RGB EXR with ZIP.

Usage: rawpy_exr.py INPUT.dng OUTPUT.exr — prints one JSON line of in-process times."""
import json
import sys
import time

t0 = time.perf_counter()
import numpy as np
import OpenEXR
import rawpy

t1 = time.perf_counter()
with rawpy.imread(sys.argv[1]) as raw:
    rgb = raw.postprocess(gamma=(1, 1), no_auto_bright=True, output_bps=16, use_camera_wb=True, user_flip=0)
t2 = time.perf_counter()
half = (rgb.astype(np.float32) * np.float32(1 / 65535)).astype(np.float16)
t3 = time.perf_counter()
header = {"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}
with OpenEXR.File(header, {"RGB": half}) as exr:
    exr.write(sys.argv[2])
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "libraw": t2 - t1, "to_half": t3 - t2, "exr_write": t4 - t3,
                  "shape": list(rgb.shape)}))
