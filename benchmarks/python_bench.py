#!/usr/bin/env python3
"""The Python package against the command line and rawpy, side by side in one run.

Simulates two 12 MP ProRAW-style DNGs (LinearRaw, lossless JPEG; the sky-with-sun scene,
seeds 1 and 2; cached under .build/bench-inputs/python/) with the release binary, installs
nothing (run `make python` first so that `import scenelinear` is the optimised build), then,
interleaved over `--runs` rounds, each in a fresh interpreter or process:

- `scenelinear convert f.dng -o f.exr` (half-float ZIP EXR with its clip mask, the default):
  the whole process, wall time and peak resident memory;
- `sl.open(f).image()`: the call's wall time (after `import scenelinear` and the library's
  loading) and the peak resident memory it adds to the interpreter's, as the first call of
  the process and after a call on the small bundled sample (a later call: the code it runs
  already resident);
- `rawpy.imread(f).postprocess(gamma=(1, 1), no_auto_bright=True, output_bps=16)`: the same;
- two files, each developed 3 times, in one Python thread against two Python threads
  (`ThreadPoolExecutor`, one file each), each call with the library's own threads set to 1
  and, separately, left at every core; and with library threads 1, each Python thread
  reusing one output array from call to call (`sl.open(f, out=a)`);
- `import scenelinear` in a fresh interpreter.

Prints a Markdown report with the medians and the ratios the targets name.
Usage: benchmarks/python_bench.py [--runs 3] [--size 4032x3024] [--bin .build/release/scenelinear]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from processes import timed  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

CALL = r"""
import json, resource, sys, time
what, warm, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
if what == "scenelinear":
    import scenelinear as sl
    sl.library_version()  # loads the library
    def run(p):
        with sl.open(p) as img:
            return img.image()
else:
    import rawpy
    def run(p):
        with rawpy.imread(p) as raw:
            return raw.postprocess(gamma=(1, 1), no_auto_bright=True, output_bps=16)
if warm != "-":
    run(warm)  # a small file first: the code the call runs is then resident, as for every later call
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
a = run(paths[0])
seconds = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "added_mb": (peak - base) / 1024, "shape": list(a.shape), "dtype": str(a.dtype)}))
"""

THREADS = r"""
import json, sys, time
from concurrent.futures import ThreadPoolExecutor
import numpy as np
import scenelinear as sl
sl.library_version()
threads = None if sys.argv[1] == "all" else int(sys.argv[1])
reuse = sys.argv[2] == "reuse"
paths = sys.argv[3:]
REPEATS = 3
def run(p):
    out = None
    for _ in range(REPEATS):
        with sl.open(p, threads=threads, out=out) as img:
            img.image()
            if reuse and out is None:
                out = np.empty(img.shape, dtype=np.float32)
run(paths[0])  # warm the page cache and the library
t = time.perf_counter()
for p in paths:
    run(p)
one = time.perf_counter() - t
t = time.perf_counter()
with ThreadPoolExecutor(len(paths)) as pool:
    list(pool.map(run, paths))
two = time.perf_counter() - t
print(json.dumps({"one_thread": one, "two_threads": two}))
"""

IMPORT = r"""
import json, time
t = time.perf_counter()
import scenelinear
print(json.dumps({"seconds": time.perf_counter() - t}))
"""


def python(code, *args):
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"python {args} failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--size", default="4032x3024")
    ap.add_argument("--bin", default=os.path.join(REPO, ".build", "release", "scenelinear"))
    a = ap.parse_args()
    width, height = map(int, a.size.split("x"))
    inputs = os.path.join(REPO, ".build", "bench-inputs", "python", a.size)
    files = [os.path.join(inputs, f"s{seed}", "sky-sun.dng") for seed in (1, 2)]
    for seed, f in zip((1, 2), files):
        if not os.path.exists(f):
            subprocess.run([a.bin, "simulate", "--scene", "sky-sun", "--size", a.size, "--seed", str(seed), "-o",
                            os.path.dirname(f), "-q"], check=True)
    out = os.path.join(inputs, "out.exr")
    rows = {k: [] for k in ("convert_s", "convert_mb", "sl_s", "sl_mb", "sl_warm_s", "sl_warm_mb", "rawpy_s", "rawpy_mb", "one1", "two1",
                            "oneN", "twoN", "oneR", "twoR", "import_s")}
    sample = os.path.join(REPO, "datasets", "sim", "sunset.dng")
    shape = None
    for _ in range(a.runs):
        s, mb = timed([a.bin, "convert", files[0], "-o", out, "--overwrite", "-q"])
        rows["convert_s"].append(s)
        rows["convert_mb"].append(mb)
        r = python(CALL, "scenelinear", "-", files[0])
        rows["sl_s"].append(r["seconds"])
        rows["sl_mb"].append(r["added_mb"])
        shape = r["shape"]
        r = python(CALL, "scenelinear", sample, files[0])
        rows["sl_warm_s"].append(r["seconds"])
        rows["sl_warm_mb"].append(r["added_mb"])
        r = python(CALL, "rawpy", "-", files[0])
        rows["rawpy_s"].append(r["seconds"])
        rows["rawpy_mb"].append(r["added_mb"])
        for key, threads, arrays in (("1", "1", "new"), ("N", "all", "new"), ("R", "1", "reuse")):
            r = python(THREADS, threads, arrays, *files)
            rows["one" + key].append(r["one_thread"])
            rows["two" + key].append(r["two_threads"])
        rows["import_s"].append(python(IMPORT)["seconds"])
    m = {k: statistics.median(v) for k, v in rows.items()}
    float_mb = shape[0] * shape[1] * shape[2] * 4 / 2 ** 20
    print(f"# The Python package: {width}×{height} ProRAW-style DNG, medians of {a.runs} interleaved rounds\n")
    print(f"{os.cpu_count()} CPUs; float32 image {float_mb:.0f} MiB.\n")
    print("| | wall time | peak memory | ratio |")
    print("|---|---|---|---|")
    print(f"| `scenelinear convert` → half EXR (whole process) | {m['convert_s']:.3f} s | {m['convert_mb']:.0f} MiB | 1 |")
    print(f"| `sl.open(p).image()`, the process's first call | {m['sl_s']:.3f} s | +{m['sl_mb']:.0f} MiB "
          f"({m['sl_mb'] / float_mb:.2f}× the float32 image) | {m['sl_s'] / m['convert_s']:.2f}× convert |")
    print(f"| `sl.open(p).image()`, a later call | {m['sl_warm_s']:.3f} s | +{m['sl_warm_mb']:.0f} MiB "
          f"({m['sl_warm_mb'] / float_mb:.2f}× the float32 image) | {m['sl_warm_s'] / m['convert_s']:.2f}× convert |")
    print(f"| `rawpy … postprocess(16-bit linear)` (the call) | {m['rawpy_s']:.3f} s | +{m['rawpy_mb']:.0f} MiB | "
          f"{m['rawpy_s'] / m['sl_s']:.1f}× `sl.open().image()` |")
    print(f"| 2 files × 3, one Python thread → two threads, library threads = 1 | {m['one1']:.3f} → {m['two1']:.3f} s | | "
          f"{m['one1'] / m['two1']:.2f}× throughput |")
    print(f"| 2 files × 3, one Python thread → two threads, library threads = all | {m['oneN']:.3f} → {m['twoN']:.3f} s | | "
          f"{m['oneN'] / m['twoN']:.2f}× throughput |")
    print(f"| the same, library threads = 1, each thread's array reused (`open(p, out=a)`) | {m['oneR']:.3f} → {m['twoR']:.3f} s | | "
          f"{m['oneR'] / m['twoR']:.2f}× throughput |")
    print(f"| `import scenelinear` (fresh interpreter) | {1000 * m['import_s']:.0f} ms | | |")


if __name__ == "__main__":
    main()
