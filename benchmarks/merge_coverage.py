#!/usr/bin/env python3
"""Closed-loop check of the bracket merge and of fisheye illuminance over seeded trials.

Merge: for each layout and seed, simulate a bracket of the sky-with-sun scene (4 EV apart)
and run `scenelinear validate` on its frames (the merge against the truth). Reports the
per-pixel 95 % coverage per seed and over all seeds, the worst patch bias among patches
whose standard error allows 0.2 %, the measured/predicted noise ratios, and the seeds that
failed any check.

Illuminance: for each projection and seed, simulate a CIE overcast dome (noise on, a camera
whose ISO label is exact, so K = 120 is true) and compare `scenelinear illuminance` with
the analytic 7π/9 · L_z, and with Radiance's evalglare -V on the .hdr it writes.

Usage: benchmarks/merge_coverage.py [--seeds 200] [--bin .build/release/scenelinear]
                                    [--out docs/merge-coverage.md]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

BRACKETS = [("linear-raw", "-8,-4,0,4"), ("cfa", "-8,-4,0,4,8")]
PROJECTIONS = ["equidistant", "equisolid", "orthographic", "stereographic"]


def run(args, ok=(0,)):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode not in ok:
        sys.exit(f"{' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r


def radiance_bin():
    try:
        import pyradiance
        d = os.path.join(os.path.dirname(pyradiance.__file__), "bin")
        return d if os.path.exists(os.path.join(d, "evalglare")) else None
    except ImportError:
        return None


def merge_trial(binary, work, layout, stops, seed):
    name = f"sky-{layout}-{seed}"
    run([binary, "simulate", "--scene", "sky-sun", "--size", "384x256", "--layout", layout, "--seed", str(seed),
         f"--bracket={stops}", "--name", name, "-o", work, "-q"])
    frames = [os.path.join(work, f"{name}_{k + 1}.dng") for k in range(len(stops.split(",")))]
    doc = json.loads(run([binary, "validate", *frames, "--json"], ok=(0, 20)).stdout)
    for f in os.listdir(work):
        if f.startswith(name):
            os.remove(os.path.join(work, f))
    measured = [p for p in doc["patches"] if p.get("lowerBoundHolds") is None]
    bias = [abs(b) for p in measured for b, se, t in zip(p["relativeBias"], p["standardError"], p["truth"])
            if se / t < 0.002 / 3]
    ratios = [r for p in measured if p["pixels"] >= 500 for r in p["varianceRatio"]]
    gains = [min(b / v for b, v in zip(p["bestFrameVariance"], p["measuredVariance"])) for p in measured
             if p.get("bestFrameVariance")]
    return {"coverage": doc["coverage"], "maxBias": max(bias) if bias else 0.0, "ratios": ratios, "passed": doc["passed"],
            "misstated": [f["exposureSource"] for f in doc["merge"]["frames"] if f["exposureSource"] == "measured"],
            "lower": doc["lowerBoundPatches"], "gains": gains}


def dome_trial(binary, work, projection, seed, bin_dir):
    name = f"dome-{projection}-{seed}"
    scene = os.path.join(work, name + ".json")
    json.dump({"name": name, "width": 512, "height": 512, "elements": [
        {"type": "sky", "rgb": [0.45, 0.5, 0.6], "projection": projection, "fov": 180, "model": "cie-overcast"}]}, open(scene, "w"))
    camera = os.path.join(work, "camera.json")
    json.dump({"sensitivityOffset": 0, "seed": seed}, open(camera, "w"))
    run([binary, "simulate", "--scene", scene, "--camera", camera, "-o", work, "-q"])
    truth = json.load(open(os.path.join(work, name + ".truth.json")))["photometry"]["illuminance"]
    hdr = os.path.join(work, name + ".hdr")
    doc = json.loads(run([binary, "illuminance", os.path.join(work, name + ".dng"), "--projection", projection, "--json", "-o", hdr]).stdout)
    ours = doc["results"][0]["illuminance"]
    theirs = None
    if bin_dir:
        r = subprocess.run([os.path.join(bin_dir, "evalglare"), "-V", hdr], capture_output=True, text=True)
        try:
            theirs = float(r.stdout.strip())
        except ValueError:
            theirs = None
    for f in os.listdir(work):
        if f.startswith(name):
            os.remove(os.path.join(work, f))
    return ours / truth - 1, (theirs / ours - 1) if theirs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--dome-seeds", type=int, default=10)
    ap.add_argument("--bin", default=".build/release/scenelinear")
    ap.add_argument("--out", default="docs/merge-coverage.md")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    lines = ["# Bracket merge and fisheye illuminance over seeded trials", "",
             f"`benchmarks/merge_coverage.py --seeds {a.seeds} --dome-seeds {a.dome_seeds}` (figures below from one run; "
             "the tests run a small seeded version: `Tests/MergingTests`, `Tests/EndToEndTests/IlluminanceTests.swift`).", "",
             "## Merge: the sky-with-sun scene, 384×256, brackets 4 EV apart", "",
             "Per seed, `scenelinear validate` merges the frames (superpixel for CFA, reference = the 0 EV frame) and "
             "checks every patch against the truth (docs/validation.md). Coverage: the share of patch pixels and channels "
             "(lower bounds excepted) whose ± 1.96 σ interval holds the true value.", "",
             "| layout | frames | seeds | coverage, all | coverage per seed: min – max | seeds in 93–97 % | worst bias (measurable patches) | noise ratio median [5 %, 95 %] | merged vs best frame (variance), median | seeds passed | exposure misread |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as work:
        for layout, stops in BRACKETS:
            results = []
            for seed in range(1, a.seeds + 1):
                results.append(merge_trial(binary, work, layout, stops, seed))
                print(layout, seed, f"{results[-1]['coverage']:.4f}", file=sys.stderr)
            cov = [r["coverage"] for r in results]
            ratios = sorted(x for r in results for x in r["ratios"])
            gains = [g for r in results for g in r["gains"]]
            inside = sum(0.93 <= c <= 0.97 for c in cov)
            lines.append(f"| {layout} | {stops} | {len(results)} | {100 * statistics.mean(cov):.2f} % | "
                         f"{100 * min(cov):.2f} – {100 * max(cov):.2f} % | {inside}/{len(results)} | "
                         f"{100 * max(r['maxBias'] for r in results):.3f} % | {statistics.median(ratios):.3f} "
                         f"[{ratios[len(ratios) // 20]:.3f}, {ratios[len(ratios) * 19 // 20]:.3f}] | "
                         f"{statistics.median(gains):.3f} | {sum(r['passed'] for r in results)}/{len(results)} | "
                         f"{sum(bool(r['misstated']) for r in results)} |")
        lines += ["", "\"Seeds passed\": every check of `validate` (bias, noise against the std layer and the best frame, coverage, "
                  "lower bounds). A bracket runs some 175 checks at 4 standard errors (p ≈ 6·10⁻⁵ each, so about 1 % of "
                  "brackets fail one by chance); the worst bias is over the patch channels whose standard error allows 0.2 % "
                  "(below 0.067 %), the largest of some 10 000 such means.",
                  "", "## Illuminance: CIE overcast domes, 512×512, 180°", "",
                  "E_v against the analytic 7π/9 · L_z (in lux, through the simulation's photometry), and Radiance's "
                  "`evalglare -V` on the `.hdr` `illuminance -o` writes (equisolid remapped to an equidistant view).", "",
                  "| projection | seeds | E_v error: mean | worst | evalglare − ours: worst |", "|---|---|---|---|---|"]
        bin_dir = radiance_bin()
        for projection in PROJECTIONS:
            errs, glare = [], []
            for seed in range(1, a.dome_seeds + 1):
                e, g = dome_trial(binary, work, projection, seed, bin_dir)
                errs.append(e)
                if g is not None:
                    glare.append(g)
            worst_glare = f"{100 * max(abs(g) for g in glare):.4f} %" if glare else "not run (no pyradiance)"
            lines.append(f"| {projection} | {len(errs)} | {100 * statistics.mean(errs):+.4f} % | {100 * max(abs(e) for e in errs):.4f} % | {worst_glare} |")
    open(a.out, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
