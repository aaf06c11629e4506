#!/usr/bin/env python3
"""Speed and memory of `scenelinear merge` against converting one frame and against a peer.

Simulates brackets of the sky-with-sun scene (3 frames, -4/0/+4 EV; LinearRaw and CFA) at
the sizes asked for, cached under .build/bench-inputs/merge/, then times whole processes
(fork to exit, peak resident memory from ru_maxrss), interleaved, `--runs` rounds:

- `scenelinear convert` of the middle frame (half-float ZIP EXR, the default);
- `scenelinear merge` of the three frames to a 32-bit float EXR (the default) and to half;
- for CFA, HDRutils (PyPI `HDRutils`, Hanji et al.'s noise-aware raw merge through rawpy /
  LibRaw: Poisson weights, no per-pixel uncertainty) merging the same frames in raw space
  and writing a float EXR with pyexr — exposure times given from the truth record, as it
  reads no DNG exposure tags of these files.

Reports medians and the ratios the targets name: merge ÷ one conversion (target ≤ 3) and
peak memory ÷ the output's pixel data (target ≤ 2: the EXR's channels uncompressed).

Usage: benchmarks/merge_bench.py [--sizes 12] [--runs 3] [--bin .build/release/scenelinear]
                                 [--frames 3] [--out docs/merge-benchmark.md]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from processes import timed  # noqa: E402

SIZES = {12: "4032x3024", 48: "8064x6048"}
HDRUTILS = """
import json, sys, numpy as np, HDRutils, pyexr
rec = json.load(open(sys.argv[1])); files = sys.argv[3:]
exp = [f["exposureTime"] for f in rec["bracket"]]
hdr = HDRutils.merge(files, demosaic_first=False, color_space='raw', exp=exp, gain=[1.0] * len(files), aperture=1.8)
hdr = hdr[0] if isinstance(hdr, tuple) else hdr
pyexr.write(sys.argv[2], hdr.astype(np.float32))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="12")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--frames", type=int, default=3)
    ap.add_argument("--bin", default=".build/release/scenelinear")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--out", default="docs/merge-benchmark.md")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    stops = ",".join(str(4 * (k - (a.frames - 1) // 2)) for k in range(a.frames))
    try:
        import HDRutils  # noqa: F401
        peer = True
    except ImportError:
        peer = False
    lines = ["# Merging brackets: speed and memory", "",
             f"`benchmarks/merge_bench.py --sizes {a.sizes} --runs {a.runs} --frames {a.frames}` — medians of interleaved runs "
             "(whole processes, peak resident memory); 2-core shared machine, so read the ratios.", "",
             "| input | convert one frame | merge → float EXR | merge → half EXR | merge ÷ convert | peak ÷ output (float) | HDRutils (raw merge + float EXR) |",
             "|---|---|---|---|---|---|---|"]
    for size in [int(s) for s in a.sizes.split(",")]:
        for layout in ["linear-raw", "cfa"]:
            work = os.path.join(".build", "bench-inputs", "merge", f"{layout}-{size}")
            os.makedirs(work, exist_ok=True)
            frames = [os.path.join(work, f"sky_{k + 1}.dng") for k in range(a.frames)]
            record = os.path.join(work, "sky.truth.json")
            if not all(os.path.exists(f) for f in frames + [record]):
                subprocess.run([binary, "simulate", "--scene", "sky-sun", "--size", SIZES[size], "--layout", layout,
                                f"--bracket={stops}", "--name", "sky", "-o", work, "-q"], check=True)
            out = os.path.join(work, "out")
            os.makedirs(out, exist_ok=True)
            middle = frames[(a.frames - 1) // 2]
            jobs = {
                "convert": [binary, "convert", middle, "-o", os.path.join(out, "one.exr"), "-q"],
                "merge": [binary, "merge", *frames, "-o", os.path.join(out, "merged.exr"), "-q"],
                "half": [binary, "merge", *frames, "-o", os.path.join(out, "merged-half.exr"), "-q", "--exr-type", "half"],
            }
            if peer and layout == "cfa":
                jobs["hdrutils"] = [a.python, "-c", HDRUTILS, record, os.path.join(out, "hdrutils.exr"), *frames]
            results = {k: [] for k in jobs}
            for _ in range(a.runs):
                for name, args in jobs.items():
                    results[name].append(timed(args))
                    print(layout, size, name, results[name][-1], file=sys.stderr)
            med = {k: (statistics.median(t for t, _ in v), statistics.median(m for _, m in v)) for k, v in results.items()}
            w, h = (int(x) for x in SIZES[size].split("x"))
            output_mb = w * h * 8 * 4 / 2**20  # R, G, B, mask, std_R/G/B, frames as 32-bit floats
            peer_text = (f"{med['hdrutils'][0]:.2f} s, {med['hdrutils'][1]:.0f} MB ({med['hdrutils'][0] / med['merge'][0]:.1f}× our merge's time)"
                         if "hdrutils" in med else "—")
            lines.append(f"| {size} MP {layout}, {a.frames} frames | {med['convert'][0]:.3f} s, {med['convert'][1]:.0f} MB | "
                         f"{med['merge'][0]:.2f} s, {med['merge'][1]:.0f} MB | {med['half'][0]:.2f} s, {med['half'][1]:.0f} MB | "
                         f"{med['merge'][0] / med['convert'][0]:.1f}× | {med['merge'][1] / output_mb:.2f} | {peer_text} |")
    open(a.out, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
