#!/usr/bin/env python3
"""A first side-by-side timing of `scenelinear convert` against peer tools on one DNG.

Usage: benchmarks/quick_compare.py [--runs N] [--dng FILE]

Without --dng it writes a 4032×3024 test chart (12 MP, 3 × 12-bit lossless JPEG) with the
release binary. Each command runs N times, interleaved (A B C A B C ...), whole process
wall time; medians and ratios to scenelinear's EXR conversion are printed as a Markdown
table. Peers: dcraw (16-bit linear TIFF of camera RGB) and rawpy/LibRaw (16-bit linear
postprocess, then OpenEXR's Python package writes a half EXR with ZIP), when installed.
This is not the full benchmark harness: the test chart is smooth, so its lossless-JPEG
tiles decode faster than a real photograph's.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, ".build", "release", "scenelinear")
PY = os.path.join(ROOT, ".venv", "bin", "python")

RAWPY_EXR = r"""
import sys, numpy as np, rawpy, OpenEXR
with rawpy.imread(sys.argv[1]) as r:
    rgb = r.postprocess(gamma=(1, 1), no_auto_bright=True, output_bps=16, use_camera_wb=True, user_flip=0)
half = (rgb.astype(np.float32) / 65535.0).astype(np.float16)
header = {"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}
with OpenEXR.File(header, {"RGB": half}) as f:
    f.write(sys.argv[2])
"""


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dng")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="scenelinear-bench-")
    dng = args.dng or os.path.join(tmp, "chart12mp.dng")
    if not args.dng:
        subprocess.run([BIN, "testchart", "-o", dng, "--width", "4032", "--height", "3024"], check=True, stdout=subprocess.DEVNULL)
    commands = {
        "scenelinear → EXR (zip, default)": [BIN, "convert", dng, "-o", os.path.join(tmp, "a.exr")],
        "scenelinear → EXR (piz)": [BIN, "convert", dng, "-o", os.path.join(tmp, "b.exr"), "--exr-compression", "piz"],
        "scenelinear → EXR (none)": [BIN, "convert", dng, "-o", os.path.join(tmp, "c.exr"), "--exr-compression", "none"],
        "scenelinear → HDF5 (deflate 4)": [BIN, "convert", dng, "-o", os.path.join(tmp, "d.h5")],
        "scenelinear → HDF5 (none)": [BIN, "convert", dng, "-o", os.path.join(tmp, "e.h5"), "--hdf5-level", "0"],
    }
    if shutil.which("dcraw"):
        commands["dcraw -4 -T (16-bit TIFF)"] = ["sh", "-c", f"dcraw -4 -T -c '{dng}' > '{tmp}/f.tiff'"]
    probe = subprocess.run([PY, "-c", "import rawpy, OpenEXR"], capture_output=True)
    if probe.returncode == 0:
        script = os.path.join(tmp, "rawpy_exr.py")
        open(script, "w").write(RAWPY_EXR)
        commands["rawpy (LibRaw) + OpenEXR → EXR (zip)"] = [PY, script, dng, os.path.join(tmp, "g.exr")]
    times = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            times[name].append(timed(cmd))
    base = statistics.median(times["scenelinear → EXR (zip, default)"])
    print(f"{args.runs} interleaved runs, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; input {os.path.basename(dng)} ({os.path.getsize(dng)} bytes)")
    print()
    print("| command | median s | × scenelinear EXR zip |")
    print("|---|---|---|")
    for name, values in times.items():
        m = statistics.median(values)
        print(f"| {name} | {m:.3f} | {m / base:.2f} |")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
