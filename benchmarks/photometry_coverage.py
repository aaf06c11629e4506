#!/usr/bin/env python3
"""Closed-loop check of absolute luminance over seeded trials.

For each layout and demosaicing method and each seed: simulate the grey ramp, calibrate on
patch grey/12 with its true luminance (exact reference: no meter uncertainty), then measure
every unclipped patch in cd/m² with that calibration. Reports, per patch, the mean relative
error and how often the 95 % interval of the mean held the truth; and over all patches.

Usage: benchmarks/photometry_coverage.py [--seeds 200] [--bin .build/release/scenelinear]
                                         [--out docs/photometry-coverage.md]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

CONFIGS = [("linear-raw", None), ("cfa", "superpixel"), ("cfa", "bilinear"), ("cfa", "rcd")]
REFERENCE = "grey/12"


def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r.stdout


def region(patch, scale, inset=4):
    r = patch["rect"]
    t, l, b, rr = (r["top"] // scale + inset, r["left"] // scale + inset, r["bottom"] // scale - inset, r["right"] // scale - inset)
    return patch["name"].replace("/", "-") + f"={t},{l},{b},{rr}"


def trial(binary, work, layout, demosaic, seed):
    name = f"ramp-{layout}-{demosaic or 'none'}-{seed}"
    run([binary, "simulate", "--scene", "grey-ramp", "--size", "512x256", "--layout", layout, "--seed", str(seed),
         "--name", name, "-o", work, "-q"])
    dng = os.path.join(work, name + ".dng")
    record = json.load(open(os.path.join(work, name + ".truth.json")))
    truth = record["photometry"]["patchLuminance"]
    scale = 2 if demosaic == "superpixel" else 1
    patches = [p for p in record["patches"] if p["name"].startswith("grey/")]
    extra = ["--demosaic", demosaic] if demosaic else []
    reference = next(p for p in patches if p["name"] == REFERENCE)
    camera = os.path.join(work, name + ".camera.json")
    run([binary, "calibrate", dng, "--region", region(reference, scale), "--luminance", repr(truth[REFERENCE]),
         "--luminance-uncertainty", "0", "--meter-uncertainty", "0", "-o", camera, "--json"] + extra)
    others = [p for p in patches if p["name"] != REFERENCE]
    args = [binary, "stats", dng, "--units", "luminance", "--calibration", camera, "--json", "--percentiles", "50"] + extra
    for p in others:
        args += ["--region", region(p, scale)]
    doc = json.loads(run(args))
    out = {}
    for p, r in zip(others, doc["files"][0]["regions"]):
        if r["measurement"]["clippedPixels"] != 0:
            continue
        b = r["budgets"][0]
        l = truth[p["name"]]
        out[p["name"]] = (b["value"] / l - 1, b["low95"] <= l <= b["high95"], b["relativeStandardUncertainty"])
    for f in os.listdir(work):
        if f.startswith(name):
            os.remove(os.path.join(work, f))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--bin", default=".build/release/scenelinear")
    ap.add_argument("--out")
    a = ap.parse_args()
    lines = [f"Grey ramp 512×256, default camera, {a.seeds} seeds; calibrated on {REFERENCE} with its true luminance;",
             "per patch: mean relative error of the Y mean in cd/m², its mean stated relative uncertainty, and how often",
             "the 95 % interval held the true luminance (binomial 95 % range for 200 trials at p = 0.95: 92–98 %).", ""]
    with tempfile.TemporaryDirectory() as work:
        for layout, demosaic in CONFIGS:
            stats = {}
            for seed in range(1, a.seeds + 1):
                for k, v in trial(a.bin, work, layout, demosaic, seed).items():
                    stats.setdefault(k, []).append(v)
            label = layout + (f", {demosaic}" if demosaic else "")
            lines += [f"### {label}", "", "| patch | mean error | stated u (k = 1) | coverage |", "|---|---|---|---|"]
            inside = total = 0
            for name in sorted(stats, key=lambda n: int(n.split("/")[1])):
                v = stats[name]
                errors = [e for e, _, _ in v]
                cov = sum(1 for _, c, _ in v if c) / len(v)
                u = sum(x for _, _, x in v) / len(v)
                inside += sum(1 for _, c, _ in v if c)
                total += len(v)
                lines.append(f"| {name} | {100 * sum(errors) / len(errors):+.3f} % | {100 * u:.3g} % | {100 * cov:.1f} % ({len(v)}) |")
            lines += ["", f"All patches: {100 * inside / total:.1f} % of {total} intervals held the truth.", ""]
            print(f"{label}: {100 * inside / total:.1f} % of {total}", file=sys.stderr)
    text = "\n".join(lines)
    if a.out:
        open(a.out, "w").write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
