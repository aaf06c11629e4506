#!/usr/bin/env python3
"""JPEG XL DNGs to EXR against the peer's decode of the same tiles, side by side in one run.

For each DNG SDK 1.7.1 sample with JPEG XL tiles (fetched by scripts/fetch-dng-sdk-samples.sh
into $SCENELINEAR_DNG_SDK_SAMPLES, default ~/.cache/scenelinear/dng-sdk-samples), interleaved
over `--runs` rounds:

- `scenelinear convert FILE -o x.exr` (the default half-float ZIP EXR, 2 threads): the whole
  process, fork to exit, and its peak resident memory (/usr/bin/time);
- the peer, benchmarks/peers/jxl_tiles.py: imagecodecs' libjxl decoding the same tiles in
  process (Stage 1 only: no linearization, colour, geometry, compression or file), its
  fastest arrangement of the round (one after another with 1 or 2 libjxl threads, or two
  Python threads of one tile each) and tifffile's `asarray`.

Reports medians and the ratios the targets name: our conversion ÷ the peer's decode (target
≤ 1.5) and our peak ÷ the half-float output's pixel data (R, G, B; target ≤ 1).

Usage: benchmarks/jxl_bench.py [--runs 3] [--bin .build/release/scenelinear] [--out docs/jxl-benchmark.md]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from processes import timed  # noqa: E402

SAMPLES = ["01_jxl_linear_raw_integer.dng", "02_jxl_linear_raw_float.dng", "03_jxl_bayer_raw_integer.dng"]
HERE = os.path.dirname(os.path.abspath(__file__))


def peer(python, path):
    """The peer's times for one round: its fastest decode arrangement and tifffile's asarray."""
    r = subprocess.run([python, os.path.join(HERE, "peers", "jxl_tiles.py"), path, "1"], capture_output=True, text=True,
                       cwd=os.path.join(HERE, "peers"))
    if r.returncode != 0:
        sys.exit(f"jxl_tiles.py {path} failed: {r.stderr[-2000:]}")
    d = json.loads(r.stdout.strip().splitlines()[-1])
    best = min(d[k]["min"] for k in ("serial_nt1", "serial_nt2", "pool2_nt1"))
    return best, d["asarray"]["min"], d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", default=".build/release/scenelinear")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--out", default="docs/jxl-benchmark.md")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    samples = os.environ.get("SCENELINEAR_DNG_SDK_SAMPLES", os.path.expanduser("~/.cache/scenelinear/dng-sdk-samples"))
    present = [s for s in SAMPLES if os.path.exists(os.path.join(samples, s))]
    if not present:
        sys.exit(f"no DNG SDK samples in {samples}: run scripts/fetch-dng-sdk-samples.sh")
    work = os.path.join(".build", "bench-inputs", "jxl")
    os.makedirs(work, exist_ok=True)
    rows = {s: {"ours": [], "peak": [], "peer": [], "asarray": []} for s in present}
    info = {}
    for _ in range(a.runs):
        for s in present:
            path = os.path.join(samples, s)
            seconds, peak = timed([binary, "convert", path, "-o", os.path.join(work, "x.exr"), "-q", "--overwrite"])
            best, asarray, info[s] = peer(a.python, path)
            r = rows[s]
            r["ours"].append(seconds), r["peak"].append(peak), r["peer"].append(best), r["asarray"].append(asarray)
            print(s, seconds, round(peak), best, asarray, file=sys.stderr)
    lines = ["# JPEG XL DNGs to EXR: speed and memory against the peer's decode", "",
             f"`benchmarks/jxl_bench.py --runs {a.runs}` — medians of interleaved rounds on the DNG SDK 1.7.1 samples; "
             f"ours: `scenelinear convert FILE -o x.exr` (half-float ZIP, whole process); the peer: imagecodecs "
             f"{next(iter(info.values()))['libjxl']} decoding the same tiles in process (its fastest arrangement of each round; "
             "Stage 1 only) and tifffile's `asarray`. 2-core shared machine, so read the ratios.", "",
             "| file | image | ours → EXR | peak | imagecodecs decode | tifffile `asarray` | ours ÷ decode | peak ÷ half output |",
             "|---|---|---|---|---|---|---|---|"]
    for s in present:
        r = {k: statistics.median(v) for k, v in rows[s].items()}
        shape = info[s]["shape"]
        pixels = shape[0] * shape[1]
        half_mb = pixels * 3 * 2 / 2**20
        lines.append(f"| {s} | {'×'.join(map(str, shape))}, {info[s]['tiles']} tiles | {r['ours']:.2f} s | {r['peak']:.0f} MB | "
                     f"{r['peer']:.3f} s | {r['asarray']:.3f} s | {r['ours'] / r['peer']:.2f}× | {r['peak'] / half_mb:.2f} |")
    open(a.out, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
