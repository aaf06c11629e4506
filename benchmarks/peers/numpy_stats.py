#!/usr/bin/env python3
"""Peer: what a researcher writes by hand for a statistics report of one of our EXRs —
read it with the OpenEXR package, then per channel and for luminance Y the mean, standard
deviation, min, max and the percentiles `stats` reports (numpy, inverted CDF, which is
`stats`' definition), and an EV histogram of Y at 4 bins per stop.

Usage: numpy_stats.py INPUT.exr — prints one JSON line: the statistics and in-process times."""
import json
import sys
import time

t0 = time.perf_counter()
import numpy as np
import OpenEXR

t1 = time.perf_counter()
with OpenEXR.File(sys.argv[1], separate_channels=True) as exr:
    channels = exr.channels()
    rgb = [channels[c].pixels.astype(np.float64).ravel() for c in "RGB"]
t2 = time.perf_counter()
y = 0.2627 * rgb[0] + 0.6780 * rgb[1] + 0.0593 * rgb[2]
percentiles = [0.1, 1, 5, 25, 50, 75, 95, 99, 99.9]
stats = {}
for name, v in zip("RGBY", rgb + [y]):
    stats[name] = {"mean": float(v.mean()), "std": float(v.std()), "min": float(v.min()), "max": float(v.max()),
                   "percentiles": [float(p) for p in np.percentile(v, percentiles, method="inverted_cdf")]}
positive = y[y > 0]
ev = np.log2(positive)
low, high = np.floor(np.percentile(ev, 0.1, method="inverted_cdf")), np.ceil(ev.max()) + 1
counts, _ = np.histogram(ev, bins=int((high - low) * 4), range=(low, high))
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "read": t2 - t1, "statistics": t3 - t2, "pixels": int(y.size),
                  "histogram_bins": int(counts.size), "stats": stats}))
