#!/usr/bin/env python3
"""The memory estimate against the real peak: `--max-memory` and a batch's budget are only as
good as `Pipeline.estimatedPeakBytes`, which must lie above each route's real peak and within
1.5 times it.

For simulated captures (the `sunset` scene; LinearRaw and CFA; 3 and 12 MP, 48 MP with
--large) each route's command is run once by the binary under test, its peak resident memory
read from os.wait4 (ru_maxrss), and compared with the estimate `scenelinear info --json`
reports for that route (`memoryEstimates`). Prints a Markdown table (docs/performance.md
keeps the last one) and exits 1 when an estimate is below its peak or above 1.5 times it.

With --float 16 or 32 each capture is first rewritten (tifffile, in the Python environment of
scripts/bootstrap.sh) as floating-point samples of that width: 0 at black, 1 at white, in
256 × 256 tiles of Deflate with the floating-point predictor (Predictor 3), the raw image in
IFD0 with the capture's colour tags.

    benchmarks/memory_estimate.py [--binary .build/release/scenelinear] [--large] [--float BITS] [--work DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROUTES = [
    ("streamedEXR", ["convert", "{dng}", "-o", "{out}/x.exr"]),
    ("streamedHDF5", ["convert", "{dng}", "-o", "{out}/x.h5"]),
    ("halfImage", ["convert", "{dng}", "-o", "{out}/", "--format", "exr,hdf5"]),
    ("floatImage", ["convert", "{dng}", "-o", "{out}/x.exr", "--exr-type", "float"]),
    ("measurement", ["stats", "{dng}"]),
    ("measurement", ["histogram", "{dng}"]),
    ("measurementWithCharts", ["report", "{dng}", "-o", "{out}/r.html"]),
    ("measurementWithCharts", ["stats", "{dng}", "--ev-map", "{out}/ev.png"]),
    ("convertWithAnalysis", ["convert", "{dng}", "-o", "{out}/a.h5", "--analysis"]),
]


# DNG tags of the capture's IFD0 and raw IFD kept in a float rewrite (colour, CFA, capture).
KEPT_TAGS = [271, 272, 274, 33434, 33437, 34855, 50706, 50707, 50708, 50721, 50722, 50728, 50730, 50778, 50779,
             33421, 33422, 50710, 50711, 51041]


def floatify(source, destination, bits):
    """Rewrites the simulated DNG `source` with floating-point samples of `bits` bits."""
    import numpy as np
    import tifffile
    with tifffile.TiffFile(source) as tif:
        ifd0 = tif.pages[0]
        raw = ifd0.pages[0] if ifd0.pages else ifd0
        samples = raw.asarray().astype(np.float64)
        tags = {tag.code: tag for tag in list(ifd0.tags) + list(raw.tags)}
        if 50712 in tags:
            table = np.asarray(tags[50712].value, dtype=np.float64)
            samples = table[np.minimum(samples.astype(np.int64), len(table) - 1)]
        black = tags[50714].value
        black = black[0] / black[1] if isinstance(black, tuple) else float(black)
        white = float(np.atleast_1d(tags[50717].value)[0])
        photometric = raw.photometric
        extratags = [(code, tags[code].dtype, tags[code].count, tags[code].value, True) for code in KEPT_TAGS if code in tags]
    extratags += [(50714, 5, 1, (0, 1), True), (50717, 4, 1, 1, True)]
    floats = ((samples - black) / (white - black)).astype(np.float16 if bits == 16 else np.float32)
    tifffile.imwrite(destination, floats, photometric=photometric, planarconfig="contig", tile=(256, 256),
                     compression="zlib", predictor=3, extratags=extratags, metadata=None)


def peak_of(argv):
    """Runs argv; returns (exit status, peak RSS in bytes)."""
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"memory_estimate: {' '.join(argv)} failed ({code}): {err}")
    return usage.ru_maxrss * 1024


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(root, ".build/release/scenelinear"))
    parser.add_argument("--large", action="store_true", help="also 48 MP captures")
    parser.add_argument("--work", help="keep the captures here (default: a temporary directory)")
    parser.add_argument("--float", type=int, choices=[16, 32], help="rewrite the captures as floats of this width")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="scenelinear-memory-")
    sizes = [(2016, 1512), (4032, 3024)] + ([(8064, 6048)] if args.large else [])
    rows, bad = [], 0
    try:
        for layout in ["linear-raw", "cfa"]:
            for width, height in sizes:
                directory = os.path.join(work, f"{layout}-{width}x{height}")
                dng = os.path.join(directory, "sunset.dng")
                if not os.path.exists(dng):
                    subprocess.run([args.binary, "simulate", "--scene", "sunset", "--size", f"{width}x{height}",
                                    "--layout", layout, "-o", directory, "-q"], check=True)
                if args.float:
                    floats = os.path.join(directory, f"sunset-float{args.float}.dng")
                    if not os.path.exists(floats):
                        # In a process of its own: the children forked from this one would
                        # otherwise start with its numpy arrays resident (ru_maxrss counts them).
                        subprocess.run([sys.executable, os.path.abspath(__file__), "--floatify", dng, floats, str(args.float)],
                                       check=True)
                    dng = floats
                info = json.loads(subprocess.run([args.binary, "info", "--json", dng], check=True,
                                                 capture_output=True, text=True).stdout)
                estimates = info["memoryEstimates"]
                for route, template in ROUTES:
                    out = os.path.join(directory, "out")
                    shutil.rmtree(out, ignore_errors=True)
                    os.makedirs(out)
                    argv = [args.binary] + [a.format(dng=dng, out=out) for a in template] + ["-q", "--overwrite"]
                    peak = peak_of(argv)
                    ratio = estimates[route] / peak
                    ok = 1.0 <= ratio <= 1.5
                    bad += not ok
                    shown = " ".join(a if a != "{out}/" else "out/" for a in template[:1] + template[2:]).replace("{out}/", "")
                    rows.append((layout + (f" float{args.float}" if args.float else ""), f"{width * height / 1e6:.1f}", route, shown,
                                 peak / 2**20, estimates[route] / 2**20, ratio, ok))
                    print(f"{layout} {width}x{height} {route:20s} peak {peak / 2**20:7.1f} MiB  estimate "
                          f"{estimates[route] / 2**20:7.1f} MiB  ×{ratio:.2f}{'' if ok else '  OUTSIDE 1…1.5'}",
                          file=sys.stderr)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print("| layout | MP | route | command | peak MiB | estimate MiB | estimate ÷ peak |")
    print("|---|---|---|---|---|---|---|")
    for layout, mp, route, command, peak, estimate, ratio, ok in rows:
        print(f"| {layout} | {mp} | {route} | `{command}` | {peak:.0f} | {estimate:.0f} | {ratio:.2f}{'' if ok else ' ✗'} |")
    ratios = [r[6] for r in rows]
    print(f"\n{len(rows)} runs: estimate ÷ peak {min(ratios):.2f} … {max(ratios):.2f}; "
          f"{len(rows) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--floatify"]:
        floatify(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        sys.exit(0)
    sys.exit(main())
