#!/usr/bin/env python3
"""Peer: Stage 1 of a DNG with JPEG XL tiles (compression 52546) through imagecodecs' libjxl.

Usage: jxl_tiles.py INPUT.dng [RUNS] — tifffile finds the raw IFD (LinearRaw or CFA, also
inside SubIFDs); the tiles' bytes are read once, then timed in-process (median and minimum
of RUNS, default 3):

  asarray        tifffile's own decode of the IFD into one array (its thread pool);
  serial_nt1     imagecodecs.jpegxl_decode of every tile in turn, numthreads=1;
  serial_nt2     the same, libjxl's thread pool of 2 for each tile;
  pool2_nt1      two Python threads decoding tiles in parallel, numthreads=1 each.

Prints one JSON line: the libjxl version, the IFD's shape and tile count, and the times."""
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import imagecodecs
import tifffile
from dng_raw_page import raw_page


def timed(runs, body):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        body()
        times.append(time.perf_counter() - start)
    return {"median": round(statistics.median(times), 4), "min": round(min(times), 4)}


path = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
with tifffile.TiffFile(path) as tif:
    page = raw_page(tif)
    if page is None or page.compression != 52546:
        sys.exit("no raw IFD with JPEG XL tiles")
    handle = tif.filehandle
    tiles = []
    for offset, count in zip(page.dataoffsets, page.databytecounts):
        handle.seek(offset)
        tiles.append(handle.read(count))
    pool = ThreadPoolExecutor(2)
    result = {
        "libjxl": imagecodecs.jpegxl_version(),
        "shape": list(page.shape),
        "tiles": len(tiles),
        "asarray": timed(runs, page.asarray),
        "serial_nt1": timed(runs, lambda: [imagecodecs.jpegxl_decode(t, numthreads=1) for t in tiles]),
        "serial_nt2": timed(runs, lambda: [imagecodecs.jpegxl_decode(t, numthreads=2) for t in tiles]),
        "pool2_nt1": timed(runs, lambda: list(pool.map(lambda t: imagecodecs.jpegxl_decode(t, numthreads=1), tiles))),
    }
print(json.dumps(result))
