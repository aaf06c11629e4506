#!/usr/bin/env python3
"""Closed-loop coverage of the intervals measured from files with a standard deviation layer.

For each case — a single frame converted with `convert --std`, and a bracket merged with
`merge`, each in LinearRaw and CFA (RCD demosaic), as EXR and as HDF5 — and each seed, the
simulator photographs an overcast sky dome (no sun; 256×192, equidistant fisheye) with noise,
and once more without noise (the expected capture, the truth: the same pipeline, the same
file layout). From the noisy file, `stats` gives the mean of R, G, B and Y over four sky
regions with their standard errors and `illuminance` gives E_v with its noise uncertainty;
both come from the file's std layer alone (the measurements read no NoiseProfile from a file
with a layer). A fifth region lies in the dark corner outside the fisheye's circle (truth 0,
read noise alone). A trial holds when |measured − truth| ≤ 1.96 · standard error. For
LinearRaw files, whose pixels are independent, each pixel's own interval is checked too
(value ± 1.96 σ of the layer against the noise-free file's pixel), over all pixels and over
the dark ones. Reported: the share that holds per case and quantity (target 93–97 %), over
all seeds. (A demosaiced CFA pixel's σ is that of a raw sample of its value, larger than an
interpolated pixel's own, so per-pixel shares are not reported for CFA files.)

Usage: benchmarks/std_layer_coverage.py [--seeds 200] [--bin .build/release/scenelinear]
                                        [--out docs/std-layer-coverage.md]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

SCENE = {"name": "dome", "width": 256, "height": 192, "unit": "relative", "background": [0, 0, 0],
         "elements": [{"type": "sky", "name": "sky", "model": "cie-overcast", "projection": "equidistant", "fov": 180,
                       "rgb": [0.45, 0.5, 0.6]}]}
# Sky regions (top, left, bottom, right in pixels), inside the image circle (centre 128, 96; radius 96).
REGIONS = ["a=40,60,60,90", "b=80,150,110,190", "c=120,100,150,130", "d=30,120,50,140"]
# Outside the circle: the top-left corner (every pixel farther than 96 px from the centre).
DARK_REGION = "dark=0,0,40,40"
BRACKET = "-2,0,2"
CASES = [(layout, kind) for kind in ("single", "merged") for layout in ("linear-raw", "cfa")]
FORMATS = ["exr", "h5"]


def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r.stdout


def make_files(binary, work, scene, layout, kind, seed, noise):
    """The files measured (EXR and HDF5 of one capture): a converted frame with its std layer,
    or a merged bracket."""
    name = f"{layout}-{kind}-{seed}-{'n' if noise else 'clean'}"
    base = [binary, "simulate", "--scene", scene, "--layout", layout, "--seed", str(seed), "--name", name, "-o", work, "-q"]
    base += [] if noise else ["--no-noise"]
    outs = {fmt: os.path.join(work, f"{name}.{fmt}") for fmt in FORMATS}
    if kind == "single":
        run(base)
        for out in outs.values():
            run([binary, "convert", os.path.join(work, f"{name}.dng"), "--std", "--units", "luminance", "-o", out, "-q"])
    else:
        run(base + [f"--bracket={BRACKET}"])
        frames = [os.path.join(work, f"{name}_{k + 1}.dng") for k in range(len(BRACKET.split(",")))]
        for out in outs.values():
            run([binary, "merge", *frames, "--units", "luminance", "-o", out, "-q"])
    return outs


def measure(binary, path):
    """{quantity of region: (value, standard error)} and E_v: (value, noise uncertainty)."""
    args = [binary, "stats", path, "--json"]
    for r in REGIONS + [DARK_REGION]:
        args += ["--region", r]
    doc = json.loads(run(args))
    out = {}
    for region in doc["files"][0]["regions"]:
        for q, s in region["measurement"]["channels"].items():
            out[f"{region['name']}.{q}"] = (s["mean"], s.get("meanStandardError"))
    ev = json.loads(run([binary, "illuminance", path, "--projection", "equidistant", "--json"]))["results"][0]
    out["E_v"] = (ev["illuminance"], ev.get("noiseUncertainty"))
    return out


def tally(measured, truth, counts, label):
    """Adds one trial's z-scores to `counts` (held, total, worst |z| by group)."""
    held, total, worst = counts
    for key, (value, se) in measured.items():
        if se is None or se <= 0:
            sys.exit(f"{label}: {key} has no standard error")
        group = "E_v" if key == "E_v" else "dark region" if key.startswith("dark.") else "region means"
        z = (value - truth[key][0]) / se
        total[group] = total.get(group, 0) + 1
        held[group] = held.get(group, 0) + (abs(z) <= 1.96)
        worst[group] = max(worst.get(group, 0), abs(z))


def pixels(path):
    """The RGB values, their σ layer and the clip mask of an EXR, as float64 arrays [H, W, 3] (mask [H, W])."""
    import numpy as np
    import OpenEXR
    channels = OpenEXR.File(path).channels()
    values = channels["RGB"].pixels.astype(np.float64)
    sigma = np.stack([channels[f"std_{c}"].pixels for c in "RGB"], -1).astype(np.float64)
    clip = channels["mask_clipped"].pixels if "mask_clipped" in channels else np.zeros(values.shape[:2])
    return values, sigma, clip


def tally_pixels(path, truth_path, counts):
    """Adds one file's per-pixel checks to `counts` (held, total, worst |z| by group): unclipped
    samples whose |value − truth| ≤ 1.96 σ, over all pixels and over the dark ones (truth 0)."""
    import numpy as np
    held, total, worst = counts
    values, sigma, clip = pixels(path)
    truth = pixels(truth_path)[0]
    use = np.repeat((clip == 0)[..., None], 3, axis=-1)
    if np.any(sigma[use] <= 0):
        sys.exit(f"{path}: {(sigma[use] <= 0).sum()} unclipped samples have σ = 0")
    z = np.abs(values - truth) / np.where(sigma > 0, sigma, 1)
    dark = np.repeat((truth.sum(-1) <= 1e-3 * truth.max())[..., None], 3, axis=-1) & use
    for group, mask in (("pixels", use), ("dark pixels", dark)):
        total[group] = total.get(group, 0) + int(mask.sum())
        held[group] = held.get(group, 0) + int((z[mask] <= 1.96).sum())
        worst[group] = max(worst.get(group, 0), float(z[mask].max()))


def cleanup(work, prefix):
    for f in os.listdir(work):
        if f.startswith(prefix):
            os.remove(os.path.join(work, f))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--bin", default=".build/release/scenelinear")
    ap.add_argument("--out")
    a = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as work:
        scene = os.path.join(work, "dome.json")
        with open(scene, "w") as f:
            json.dump(SCENE, f)
        for layout, kind in CASES:
            clean = make_files(a.bin, work, scene, layout, kind, 0, noise=False)
            truths = {fmt: measure(a.bin, path) for fmt, path in clean.items()}
            tallies = {fmt: ({}, {}, {}) for fmt in FORMATS}
            for seed in range(1, a.seeds + 1):
                files = make_files(a.bin, work, scene, layout, kind, seed, noise=True)
                for fmt, path in files.items():
                    tally(measure(a.bin, path), truths[fmt], tallies[fmt], f"{layout} {kind} {fmt} seed {seed}")
                if layout == "linear-raw":
                    tally_pixels(files["exr"], clean["exr"], tallies["exr"])
                cleanup(work, f"{layout}-{kind}-{seed}-n")
            for fmt in FORMATS:
                held, total, worst = tallies[fmt]
                results[(layout, kind, fmt)] = {g: (held[g] / total[g], total[g], worst[g]) for g in total}
                line = ", ".join(f"{g}: {100 * c:.1f} % of {n} (max |z| {w:.2f})" for g, (c, n, w) in results[(layout, kind, fmt)].items())
                print(f"{layout} {kind} {fmt}: {line}", flush=True)
    if a.out:
        version = run([a.bin, "--version"]).strip()
        lines = ["# Intervals from standard deviation layers: closed-loop coverage", "",
                 f"Generated by `benchmarks/std_layer_coverage.py --seeds {a.seeds}` ({version}); see "
                 "[photometry.md](photometry.md#standard-deviation-layers). Each trial: a seeded noisy capture of an overcast "
                 "sky dome (256×192, equidistant fisheye), converted with `convert --std` or merged from a bracket "
                 f"({BRACKET} EV), measured from the file alone, against the same pipeline's noise-free capture: the means "
                 "of four sky regions, of a dark corner outside the fisheye's circle (truth 0, read noise alone) and E_v. "
                 "Held: |measured − truth| ≤ 1.96 standard errors (target 93–97 %).", "",
                 "| layout | file | format | region means (R, G, B, Y of 4 sky regions): held | trials | max \\|z\\| "
                 "| dark region (R, G, B, Y): held | trials | max \\|z\\| | E_v: held | trials | max \\|z\\| |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for (layout, kind, fmt), r in results.items():
            cells = " | ".join(f"{100 * r[g][0]:.1f} % | {r[g][1]} | {r[g][2]:.2f}" for g in ("region means", "dark region", "E_v"))
            lines.append(f"| {layout} | {'convert --std' if kind == 'single' else 'merge'} | {fmt} | {cells} |")
        lines += ["", "Each pixel's own interval (LinearRaw, EXR; samples: pixels × R, G, B, clipped ones left out; "
                  "dark: the noise-free pixel is 0):", "",
                  "| file | pixels: held | samples | max \\|z\\| | dark pixels: held | samples | max \\|z\\| |",
                  "|---|---|---|---|---|---|---|"]
        for (layout, kind, fmt), r in results.items():
            if "pixels" in r:
                cells = " | ".join(f"{100 * r[g][0]:.1f} % | {r[g][1]} | {r[g][2]:.2f}" for g in ("pixels", "dark pixels"))
                lines.append(f"| {'convert --std' if kind == 'single' else 'merge'} | {cells} |")
        with open(a.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
