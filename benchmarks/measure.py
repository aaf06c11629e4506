#!/usr/bin/env python3
"""SceneLinear measurement benchmark: the analysis commands against `convert` of the same file,
and `stats` of our own EXR against a numpy script doing the same on that EXR.

Usage (from the project root, after `benchmarks/run.sh` has built the release binary):
    .venv/bin/python benchmarks/measure.py [--sizes 12,48] [--layouts linear-raw,cfa] [--runs 5] [--out report.md]

Inputs are the harness's simulated sunset captures (`bench.py`, cached in .build/bench-inputs).
Each round runs every command once, in the same order, so that load on this shared machine
falls on all of them alike; the report gives medians, peak resident memory, and per-round
ratios (median over rounds) against `convert` (EXR, default ZIP) and against the numpy peer.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the harness: inputs, runner, machine description)

REGIONS = ["--region", "sky=10%,10%,28%,38%", "--region", "sun=38%,69%,46%,75%"]


def commands(binary, python, numpy_script):
    B = binary
    return [
        ("convert", "scenelinear convert IN -o OUT.exr (reference)", [B, "convert", "{inp}", "-o", "{out}.exr"]),
        ("stats", "scenelinear stats IN --json (whole image)", [B, "stats", "{inp}", "--json", "-q"]),
        ("histogram", "scenelinear histogram IN --json (whole image)", [B, "histogram", "{inp}", "--json", "-q"]),
        ("ratio", "scenelinear ratio IN --region sky=… --region sun=…", [B, "ratio", "{inp}", "-q"] + REGIONS),
        ("report", "scenelinear report IN --region … -o OUT.html", [B, "report", "{inp}", "-o", "{out}.html"] + REGIONS),
        ("stats-exr", "scenelinear stats OUR.exr --json (whole image)", [B, "stats", "{exr}", "--json", "-q"]),
        ("numpy-exr", "numpy script: read OUR.exr, mean/std/percentiles per channel + Y, EV histogram",
         [python, numpy_script, "{exr}"]),
    ]


def run_once(argv, inp, exr, outdir):
    out = os.path.join(outdir, "out")
    argv = [a.replace("{inp}", inp).replace("{exr}", exr).replace("{out}", out) for a in argv]
    cmd = bench.Command("x", "", argv, ".none", "measure")
    result = bench.Runner(outdir, {}).run(cmd, inp, outdir=os.path.join(outdir, "run"))
    return result["wall"], result["maxrss"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="12", help="comma-separated: 12, 48 or WIDTHxHEIGHT (default 12)")
    parser.add_argument("--layouts", default="linear-raw,cfa")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bin", default=bench.DEFAULT_BIN)
    parser.add_argument("--python", default=bench.DEFAULT_PY if os.path.exists(bench.DEFAULT_PY) else sys.executable)
    parser.add_argument("--cache", default=bench.DEFAULT_CACHE)
    parser.add_argument("--out", help="also write the Markdown report here")
    parser.add_argument("--json", help="write every raw number here")
    args = parser.parse_args()

    version = bench.capture([args.bin, "--version"]).split()[0]
    numpy_script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "numpy_stats.py")
    os.makedirs(args.cache, exist_ok=True)
    work = tempfile.mkdtemp(prefix="scenelinear-measure-")
    table = commands(args.bin, args.python, numpy_script)
    results = {}
    for size in args.sizes.split(","):
        w, h = bench.parse_size(size.strip())
        for layout in [l.strip() for l in args.layouts.split(",") if l.strip()]:
            inp = bench.prepare_input(args.bin, args.cache, version, layout, w, h, False)
            dng = inp["path"]
            exr = os.path.join(work, f"{inp['key']}.exr")
            bench.capture([args.bin, "convert", dng, "-o", exr])
            rounds = []
            for r in range(args.runs):
                bench.log(f"measure: {inp['key']} round {r + 1}/{args.runs}")
                rounds.append({key: run_once(argv, dng, exr, os.path.join(work, "commands")) for key, _, argv in table})
            results[inp["key"]] = {"input": inp, "rounds": rounds}

    m = bench.machine_info()
    lines = [f"# Measurement benchmark ({version})", "",
             f"{m['nproc']} cores ({m['cpu']}), {m['memoryBytes'] / 2**30:.0f} GiB, {m['os']}; {args.runs} rounds.", ""]
    for key, data in results.items():
        rounds = data["rounds"]
        lines += [f"## {key} ({data['input']['megapixels']:.1f} MP)", "",
                  "| command | median wall (s) | peak RSS (MB) | ÷ convert time (median per round) | peak ÷ convert's |",
                  "|---|---|---|---|---|"]
        convert_peak = statistics.median(r["convert"][1] for r in rounds)
        for k, label, _ in table:
            wall = statistics.median(r[k][0] for r in rounds)
            peak = statistics.median(r[k][1] for r in rounds)
            ratio = statistics.median(r[k][0] / r["convert"][0] for r in rounds)
            lines.append(f"| {label} | {wall:.3f} | {peak / 1e6:.0f} | {ratio:.2f} | {peak / convert_peak:.2f} |")
        speedup = statistics.median(r["numpy-exr"][0] / r["stats-exr"][0] for r in rounds)
        lines += ["", f"`stats` of our EXR is **{speedup:.2f}×** faster than the numpy script (median of per-round ratios).", ""]
    report = "\n".join(lines)
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
