#!/usr/bin/env python3
"""SceneLinear benchmark harness: `scenelinear convert` against peer decoders on simulated captures.

Usage (normally through benchmarks/run.sh, which installs and builds first):

    .venv/bin/python benchmarks/bench.py [--sizes 12,48] [--runs 5] [--quick]
        [--layouts linear-raw,cfa] [--all-compressions] [--out REPORT.md] [--json RAW.json]
    .venv/bin/python benchmarks/bench.py --render RAW.json [--out REPORT.md]   # report of a saved run

Inputs are noisy captures of the built-in `sunset` scene written by `scenelinear simulate`
(LinearRaw, ProRAW-style, and Bayer CFA), cached under .build/bench-inputs/ and keyed by
scene, layout, size and the binary's version. Every command is a whole process, timed with
time.perf_counter around fork/exec/wait, its peak resident memory read from os.wait4; the
commands run interleaved (A B C … A B C …) after one untimed round that also checks the
outputs (peers decode the same picture; scenelinear's 1- and 2-thread outputs compare
equal). Outputs go to a temporary directory and are deleted after every run.

The Markdown report goes to stdout (and --out); --json keeps every raw number. The
project's performance targets are checked at the end and reported as pass or fail.
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BIN = os.path.join(ROOT, ".build", "release", "scenelinear")
DEFAULT_PY = os.path.join(ROOT, ".venv", "bin", "python")
DEFAULT_CACHE = os.path.join(ROOT, ".build", "bench-inputs")
NAMED_SIZES = {"12": (4032, 3024), "48": (8064, 6048)}
SCENE = "sunset"
BASE = "sl-exr-zip"  # every time ratio is relative to this command on the same input

# Peer programs (benchmarks/peers/), run as `python SCRIPT INPUT [OUTPUT]`; each prints one JSON
# line of its own in-process times on stdout.
HERE = os.path.dirname(os.path.abspath(__file__))
PEER_SCRIPTS = {"rawpy_exr": os.path.join(HERE, "peers", "rawpy_exr.py"),
                "tifffile_stage1": os.path.join(HERE, "peers", "tifffile_stage1.py")}
CHECKER = os.path.join(HERE, "check_outputs.py")
PYTHON_IMPORTS = "import numpy, tifffile, imagecodecs"


# ---------------------------------------------------------------------------------------------
# Small helpers


def log(message):
    print(message, file=sys.stderr, flush=True)


def median(values):
    return statistics.median(values) if values else float("nan")


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def capture(argv, **kwargs):
    try:
        result = subprocess.run(argv, capture_output=True, text=True, **kwargs)
        return (result.stdout + result.stderr).strip()
    except OSError as error:
        return f"unavailable ({error.strerror})"


def parse_size(text):
    text = text.strip().lower()
    if text in NAMED_SIZES:
        return NAMED_SIZES[text]
    if "x" in text:
        w, h = text.split("x")
        return int(w), int(h)
    raise SystemExit(f"--sizes: {text!r} is neither 12, 48 nor WIDTHxHEIGHT")


def size_label(w, h):
    named = next((name for name, size in NAMED_SIZES.items() if size == (w, h)), None)
    return f"{named} MP" if named else f"{w * h / 1e6:.0f} MP"


def mb(nbytes):
    return nbytes / 1e6


def fmt_ratio(x):
    return "–" if x is None or x != x else f"{x:.2f}"


# ---------------------------------------------------------------------------------------------
# Commands


class Command:
    """One program to time. argv may contain {inp}, {out} and {script:NAME}."""

    def __init__(self, key, label, argv, ext, kind, threads=None, variant=None, stdout_is_output=False,
                 shown=None):
        self.key, self.label, self.argv, self.ext, self.kind = key, label, argv, ext, kind
        self.threads, self.variant, self.stdout_is_output = threads, variant, stdout_is_output
        self.shown = shown  # the command line as printed in the report

    def env(self):
        env = dict(os.environ)
        env.pop("SCENELINEAR_THREADS", None)
        if self.threads is not None:
            env["SCENELINEAR_THREADS"] = str(self.threads)
        return env


def scenelinear_commands(binary, all_compressions):
    compressions = ["none", "zip", "piz"] + (["rle", "zips", "pxr24"] if all_compressions else [])
    commands = []
    for c in compressions:
        default = " (default: run-length deflate)" if c == "zip" else ""
        commands.append(Command(f"sl-exr-{c}", f"scenelinear → EXR {c}{default}",
                                [binary, "convert", "{inp}", "-o", "{out}", "--exr-compression", c],
                                ".exr", "scenelinear", variant=f"exr-{c}",
                                shown=f"scenelinear convert IN -o OUT.exr --exr-compression {c}"))
    commands.append(Command("sl-exr-zip-l1", "scenelinear → EXR zip, libdeflate level 1 (--exr-zip-level 1)",
                            [binary, "convert", "{inp}", "-o", "{out}", "--exr-compression", "zip", "--exr-zip-level", "1"],
                            ".exr", "scenelinear", variant="exr-zip-libdeflate",
                            shown="scenelinear convert IN -o OUT.exr --exr-zip-level 1"))
    commands.append(Command("sl-h5-0", "scenelinear → HDF5 uncompressed",
                            [binary, "convert", "{inp}", "-o", "{out}", "--hdf5-level", "0"],
                            ".h5", "scenelinear", variant="h5-0",
                            shown="scenelinear convert IN -o OUT.h5 --hdf5-level 0"))
    commands.append(Command("sl-h5-default", "scenelinear → HDF5 shuffle + run-length deflate (default)",
                            [binary, "convert", "{inp}", "-o", "{out}"],
                            ".h5", "scenelinear", variant="h5-default",
                            shown="scenelinear convert IN -o OUT.h5"))
    return commands


def one_thread_variants(commands, keys):
    variants = []
    for c in commands:
        if c.key in keys:
            variants.append(Command(c.key + "-t1", c.label + ", 1 thread", c.argv, c.ext, c.kind, threads=1,
                                    variant=c.variant, shown="SCENELINEAR_THREADS=1 " + c.shown))
    return variants


def peer_commands(python, have_rawpy, have_dcraw, have_tifffile):
    commands = []
    if have_rawpy:
        commands.append(Command("rawpy-exr", "rawpy (LibRaw) + OpenEXR → half EXR zip",
                                [python, "{script:rawpy_exr}", "{inp}", "{out}"], ".exr", "peer",
                                shown="python: rawpy postprocess(linear, 16 bit, camera WB) → OpenEXR half, ZIP"))
    if have_dcraw:
        commands.append(Command("dcraw", "dcraw -4 -T (16-bit linear TIFF)",
                                ["dcraw", "-4", "-T", "-c", "{inp}"], ".tiff", "peer", stdout_is_output=True,
                                shown="dcraw -4 -T -c IN > OUT.tiff"))
    if have_tifffile:
        commands.append(Command("tifffile-stage1", "tifffile + imagecodecs: Stage-1 decode only",
                                [python, "{script:tifffile_stage1}", "{inp}"], ".npy", "peer",
                                shown="python: tifffile page.asarray() of the raw IFD (lossless JPEG via imagecodecs)"))
        commands.append(Command("python-imports", "(reference) python + import numpy, tifffile, imagecodecs",
                                [python, "-c", PYTHON_IMPORTS], ".none", "reference",
                                shown=f"python -c '{PYTHON_IMPORTS}'"))
    return commands


class Runner:
    def __init__(self, workdir, scripts):
        self.workdir = workdir
        self.scripts = scripts
        self.rundir = os.path.join(workdir, "run")
        os.makedirs(self.rundir, exist_ok=True)

    def argv(self, command, inp, out):
        argv = []
        for a in command.argv:
            if a.startswith("{script:"):
                argv.append(self.scripts[a[len("{script:"):-1]])
            else:
                argv.append(a.replace("{inp}", inp).replace("{out}", out))
        return argv

    def run(self, command, inp, outdir=None, extra=(), keep=False, want_hash=False):
        """Runs once; returns wall seconds, peak RSS bytes, stdout text, output path, hash."""
        outdir = outdir or self.rundir
        os.makedirs(outdir, exist_ok=True)
        out = os.path.join(outdir, "out" + command.ext)
        argv = self.argv(command, inp, out) + list(extra)
        stdout_path = out if command.stdout_is_output else os.path.join(outdir, "stdout.txt")
        stderr_path = os.path.join(outdir, "stderr.txt")
        with open(stdout_path, "wb") as so, open(stderr_path, "wb") as se:
            start = time.perf_counter()
            process = subprocess.Popen(argv, stdout=so, stderr=se, env=command.env())
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        with open(stderr_path, errors="replace") as f:
            stderr = f.read()
        stdout = ""
        if not command.stdout_is_output:
            with open(stdout_path, errors="replace") as f:
                stdout = f.read()
        if process.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited with {process.returncode}:\n{stderr[-2000:]}")
        produced = out if os.path.exists(out) else None
        digest = sha256(out) if (want_hash and produced) else None
        size = os.path.getsize(out) if produced else None
        if not keep:
            for name in os.listdir(outdir):
                os.remove(os.path.join(outdir, name))
        return {"wall": wall, "maxrss": usage.ru_maxrss * 1024, "stdout": stdout, "output": produced,
                "sha256": digest, "bytes": size}


# ---------------------------------------------------------------------------------------------
# Inputs


def prepare_input(binary, cache, version, layout, width, height, regenerate):
    key = f"{SCENE}-{layout}-{width}x{height}-v{version}"
    directory = os.path.join(cache, key)
    dng = os.path.join(directory, f"{SCENE}.dng")
    meta_path = os.path.join(directory, "input.json")
    if regenerate and os.path.isdir(directory):
        shutil.rmtree(directory)
    if not os.path.exists(meta_path) or not os.path.exists(dng):
        log(f"bench: simulating {key} …")
        shutil.rmtree(directory, ignore_errors=True)
        staging = directory + ".partial"
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)
        argv = [binary, "simulate", "--scene", SCENE, "--size", f"{width}x{height}", "--layout", layout,
                "-o", staging, "--name", SCENE]
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        elapsed = time.perf_counter() - start
        for name in os.listdir(staging):  # keep only the DNG and the small truth description
            if name not in (f"{SCENE}.dng", f"{SCENE}.truth.json"):
                os.remove(os.path.join(staging, name))
        os.rename(staging, directory)
        with open(meta_path, "w") as f:
            json.dump({"argv": argv[1:], "seconds": elapsed}, f)
    shown = f"scenelinear simulate --scene {SCENE} --size {width}x{height} --layout {layout}"
    info = json.loads(subprocess.run([binary, "info", "--json", dng], check=True, capture_output=True,
                                     text=True).stdout)
    raw = next(im for im in info["images"] if im["path"] == info["mainRawImage"])
    layout_info = raw["layout"]
    samples = raw["width"] * raw["height"] * len(raw["bitsPerSample"])
    compressed = sum(layout_info["byteCounts"])
    return {
        "key": key, "layout": layout, "path": dng, "width": width, "height": height,
        "megapixels": width * height / 1e6, "simulate": shown,
        "fileBytes": os.path.getsize(dng), "rawIFD": raw["path"], "photometric": raw["photometric"],
        "bitsPerSample": raw["bitsPerSample"], "samplesPerPixel": len(raw["bitsPerSample"]),
        "compression": raw["compression"], "tileKind": layout_info["kind"],
        "tileWidth": layout_info["blockWidth"], "tileHeight": layout_info["blockHeight"],
        "tiles": len(layout_info["byteCounts"]), "compressedBytes": compressed,
        "bitsPerStoredSample": compressed * 8 / samples,
        "linearizationEntries": len(raw.get("linearizationTable", [])),
        "blackLevel": raw.get("blackLevel"), "whiteLevel": raw.get("whiteLevel"),
        "dngVersion": info.get("metadata", {}).get("dngVersion"),
    }


def describe_input(inp):
    kind = {34892: "LinearRaw", 32803: "CFA (Bayer)"}.get(inp["photometric"], str(inp["photometric"]))
    compression = {7: "lossless JPEG", 1: "uncompressed"}.get(inp["compression"], str(inp["compression"]))
    bits = inp["bitsPerSample"]
    tiles = (f"{inp['tiles']} tiles of {inp['tileWidth']}×{inp['tileHeight']}" if inp["tileKind"] == "tiles"
             else f"{inp['tiles']} {inp['tileKind']}")
    lin = (f", LinearizationTable of {inp['linearizationEntries']} entries (companding curve)"
           if inp["linearizationEntries"] else "")
    return (f"{inp['width']}×{inp['height']} ({inp['megapixels']:.1f} MP) {kind}, "
            f"{len(bits)} × {bits[0]}-bit samples, {compression}, {tiles}{lin}, black {inp['blackLevel'][0]}, "
            f"white {inp['whiteLevel'][0]}; {mb(inp['fileBytes']):.1f} MB on disk, "
            f"{inp['bitsPerStoredSample']:.2f} bits per stored sample")


# ---------------------------------------------------------------------------------------------
# Checks of the outputs (the untimed first round)


def check_round(runner, inputs, commands_for, workdir, python):
    """One untimed run of every command with its output kept: warms the caches; then
    check_outputs.py (a separate process, so that this one stays small) compares the peers'
    pictures with scenelinear's and the 1- and 2-thread outputs with each other."""
    checks = {}
    for inp in inputs:
        log(f"bench: checking outputs on {inp['key']}")
        base = os.path.join(workdir, "check", inp["key"])
        results = {}
        for c in commands_for[inp["key"]]:
            results[c.key] = runner.run(c, inp["path"], outdir=os.path.join(base, c.key), keep=True,
                                        want_hash=c.kind == "scenelinear")
        job = {"reference": results["sl-h5-0"]["output"], "peers": {}, "pairs": {}}
        if "dcraw" in results:
            job["peers"]["dcraw"] = results["dcraw"]["output"]
        if "rawpy-exr" in results:
            job["peers"]["rawpy-exr"] = results["rawpy-exr"]["output"]
        if "tifffile-stage1" in results:
            job["peers"]["tifffile-stage1"] = inp["path"]
        for c in commands_for[inp["key"]]:
            if c.threads == 1:
                two = next(d for d in commands_for[inp["key"]] if d.variant == c.variant and d.threads is None)
                job["pairs"][c.variant] = [results[c.key]["output"], results[two.key]["output"]]
        job_path = os.path.join(base, "job.json")
        with open(job_path, "w") as f:
            json.dump(job, f)
        checked = subprocess.run([python, CHECKER, job_path], check=True, capture_output=True, text=True)
        report = json.loads(checked.stdout)
        report["outputBytes"] = {k: r["bytes"] for k, r in results.items() if r["bytes"] is not None}
        for variant, (one, two) in job["pairs"].items():
            report["pairs"][variant]["sha256"] = [
                next(r["sha256"] for r in results.values() if r["output"] == path) for path in (one, two)]
        for name in ("rawpy-exr", "tifffile-stage1"):
            if name in results:
                report["peers"][name]["inProcess"] = json.loads(results[name]["stdout"])
        checks[inp["key"]] = report
        shutil.rmtree(base)
    return checks


# ---------------------------------------------------------------------------------------------
# Per-stage times


def flatten_timings(timings):
    flat = {}
    for key, value in timings.items():
        if isinstance(value, dict):
            for sub, v in value.items():
                flat[f"{key}:{sub}"] = v
        else:
            flat[key] = value
    return flat


def stage_runs_for(runner, inp, commands, samples):
    """`convert … --timings --json` once for every scenelinear command on one input (untimed by
    the harness: the program reports its own stage times)."""
    for c in commands:
        if c.kind != "scenelinear":
            continue
        result = runner.run(c, inp["path"], extra=("--timings", "--json"))
        document = json.loads(result["stdout"])
        # The convert document lists its files; the timings are the (one) file's.
        timings = document["timings"] if "timings" in document else document["files"][0]["timings"]
        flat = flatten_timings(timings)
        flat["wall"] = result["wall"]
        samples.setdefault(inp["key"], {}).setdefault(c.key, []).append(flat)


def stage_medians(samples):
    medians = {}
    for key, per_command in samples.items():
        medians[key] = {}
        for ckey, runs in per_command.items():
            fields = sorted({f for run in runs for f in run})
            medians[key][ckey] = {f: median([run[f] for run in runs if f in run]) for f in fields}
    return medians


# ---------------------------------------------------------------------------------------------
# Machine and tools


def machine_info():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = None
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                memory = int(line.split()[1]) * 1024
    nproc = capture(["nproc"])
    return {"nproc": nproc, "cpu": cpu, "memoryBytes": memory, "kernel": platform.release(),
            "os": os_name()}


def os_name():
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.platform()


def tool_versions(binary, python):
    versions = {"scenelinear": capture([binary, "--version"])}
    versions["swift"] = capture(["swift", "--version"]).splitlines()[0] if shutil.which("swift") else "not found"
    probe = ("import json, sys, numpy\nv = {'python': sys.version.split()[0], 'numpy': numpy.__version__}\n"
             "for name in ('rawpy', 'OpenEXR', 'tifffile', 'imagecodecs', 'h5py'):\n"
             "    try:\n        m = __import__(name); v[name] = getattr(m, '__version__', '?')\n"
             "    except Exception as e:\n        v[name] = None\n"
             "try:\n    import rawpy; v['libraw'] = '.'.join(map(str, rawpy.libraw_version))\n"
             "except Exception:\n    v['libraw'] = None\n"
             "print(json.dumps(v))")
    result = subprocess.run([python, "-c", probe], capture_output=True, text=True)
    versions.update(json.loads(result.stdout) if result.returncode == 0 else {})
    if shutil.which("dcraw"):
        banner = capture(["dcraw"])
        versions["dcraw"] = next((l.strip() for l in banner.splitlines() if "dcraw" in l and " v" in l), banner[:60])
        package = capture(["dpkg-query", "-W", "-f=${Version}", "dcraw"])
        if package and "no packages" not in package:
            versions["dcraw"] += f" (Debian package {package})"
    else:
        versions["dcraw"] = None
    return versions


# ---------------------------------------------------------------------------------------------
# Report


def build_report(data):
    lines = []
    add = lines.append
    m = data["machine"]
    add(f"# SceneLinear benchmark — {data['date']}")
    add("")
    add(f"Command: `{data['command']}`")
    add("")
    add(f"- Machine: {m['nproc']} CPUs ({m['cpu']}), {m['memoryBytes'] / 2**30:.1f} GiB, {m['os']}, "
        f"Linux {m['kernel']}")
    la = data["load"]
    waited = f" (after waiting {la['waited'] / 60:.0f} min for it to settle)" if la["waited"] >= 30 else ""
    add(f"- Load average (1/5/15 min): at start {' '.join(f'{x:.2f}' for x in la['start'])}{waited}, "
        f"after {' '.join(f'{x:.2f}' for x in la['after'])}; 1-min load at the start of each timed round "
        f"{min(la['rounds']):.2f}–{max(la['rounds']):.2f}")
    v = data["versions"]
    add(f"- Tools: scenelinear {v.get('scenelinear')} ({v.get('swift')}); rawpy {v.get('rawpy')} "
        f"(LibRaw {v.get('libraw')}); OpenEXR (Python) {v.get('OpenEXR')}; {v.get('dcraw') or 'dcraw not installed'}; "
        f"tifffile {v.get('tifffile')}; imagecodecs {v.get('imagecodecs')}; numpy {v.get('numpy')}; "
        f"h5py {v.get('h5py')}; Python {v.get('python')}")
    add(f"- Method: whole-process wall time (fork to exit), {data['runsText']}, interleaved "
        f"(A B C … A B C …) after one untimed checking round; outputs deleted after each run. "
        f"Peak memory is the child's ru_maxrss (os.wait4), median over the runs. "
        f"Per-stage times: median of {data['stageRuns']} `--timings --json` run(s) per case, made in the "
        f"first rounds right after the timed commands (not timed themselves). "
        f"The harness itself peaked at {mb(data['harnessMaxrss']):.0f} MB (a child's ru_maxrss cannot be "
        f"lower than its parent's at the time it starts, so this is the floor of the memory column).")
    add("")
    add("## Inputs")
    add("")
    for inp in data["inputs"]:
        add(f"- **{inp['key']}** (`{inp['simulate']}`): {describe_input(inp)}")
    for inp in data["inputs"]:
        key = inp["key"]
        res = data["results"][key]
        half = inp["halfBytes"]
        add("")
        add(f"## {size_label(inp['width'], inp['height'])} {inp['layout']} — {inp['width']}×{inp['height']}")
        add("")
        add(f"Half-float RGB output: {mb(half):.1f} MB. Runs: {inp['runs']}.")
        add("")
        add("| command | median s | min s | × scenelinear EXR zip | peak RSS MB | peak ÷ half output | output MB |")
        add("|---|---|---|---|---|---|---|")
        for c in data["commands"][key]:
            r = res[c["key"]]
            out = data["checks"][key]["outputBytes"].get(c["key"])
            add(f"| {c['label']} | {r['median']:.3f} | {r['min']:.3f} | {fmt_ratio(r['ratio'])} | "
                f"{mb(r['maxrssMedian']):.0f} | {r['maxrssMedian'] / half:.2f} | "
                f"{'' if out is None else f'{mb(out):.1f}'} |")
        add("")
        for line in ratio_lines(res):
            add(f"- {line}")
        peers = data["checks"][key]["peers"]
        for name, p in peers.items():
            r = p.get("r")
            what = (f"Stage-1 codes {p['inProcess']['shape']} {p['inProcess']['dtype']} "
                    f"({p['inProcess']['min']}–{p['inProcess']['max']}), through the LinearizationTable"
                    if name == "tifffile-stage1" else f"output {p['shape']} {p['dtype']}")
            add(f"- Check, {name}: {what}; "
                + (f"picture correlation with scenelinear's (4×4 block means) r = {r:.4f}" if r is not None
                   else "shape differs from scenelinear's, not compared"))
        if "rawpy-exr" in peers:
            ip = peers["rawpy-exr"]["inProcess"]
            add(f"- rawpy script in-process (check round): imports {ip['import']:.2f} s, LibRaw decode + "
                f"postprocess {ip['libraw']:.2f} s, to half {ip['to_half']:.2f} s, EXR write {ip['exr_write']:.2f} s")
        if "tifffile-stage1" in res:
            dec = res["tifffile-stage1"].get("inProcessDecodeMedian")
            imp = res["tifffile-stage1"].get("inProcessImportMedian")
            add(f"- tifffile in-process (timed runs, median): imports {imp:.3f} s, raw IFD decode {dec:.3f} s")
    add("")
    add("## Where scenelinear's time goes (per stage, seconds)")
    add("")
    stage_fields = ["container", "hash", "develop"]
    for inp in data["inputs"]:
        key = inp["key"]
        stages = data["stages"][key]
        present = [f for f in stage_fields if any(f in s for s in stages.values())]
        extra = sorted({f for s in stages.values() for f in s if f not in stage_fields and f != "wall"
                        and not f.startswith("export:")} - set(present))
        add(f"**{size_label(inp['width'], inp['height'])} {inp['layout']}**")
        add("")
        add("| command | " + " | ".join(present + extra) + " | export | sum of stages | whole process | outside the stages |")
        add("|---|" + "---|" * (len(present) + len(extra) + 4))
        for c in data["commands"][key]:
            if c["kind"] != "scenelinear":
                continue
            s = stages[c["key"]]
            export = sum(v for f, v in s.items() if f.startswith("export:"))
            # The conversion hashes the input on a thread of its own while it decodes
            # (inline with one thread), so its hash is not added to the sum.
            concurrent_hash = c.get("threads") != 1
            total = sum(v for f, v in s.items() if f != "wall" and not (concurrent_hash and f == "hash"))
            cells = [f"{s.get(f, 0):.3f}" for f in present + extra]
            add(f"| {c['label']} | " + " | ".join(cells) + f" | {export:.3f} | {total:.3f} | {s['wall']:.3f} | "
                f"{s['wall'] - total:.3f} |")
        add("")
    add("On two threads the input is hashed alongside the decoding, so `hash` is not part of the sum of "
        "stages there.")
    add("")
    add("## One thread against two")
    add("")
    add("| input | output | 1 thread s | 2 threads s | speed-up | peak MB (1 / 2) | files byte-identical | content identical |")
    add("|---|---|---|---|---|---|---|---|")
    for inp in data["inputs"]:
        key = inp["key"]
        res = data["results"][key]
        for c in data["commands"][key]:
            if c.get("threads") != 1:
                continue
            two = next(d for d in data["commands"][key] if d["variant"] == c["variant"] and d.get("threads") is None)
            ident = data["identity"][key][c["variant"]]
            one_s, two_s = res[c["key"]]["median"], res[two["key"]]["median"]
            add(f"| {size_label(inp['width'], inp['height'])} {inp['layout']} | {c['variant']} | {one_s:.3f} | "
                f"{two_s:.3f} | {one_s / two_s:.2f} | {mb(res[c['key']]['maxrssMedian']):.0f} / "
                f"{mb(res[two['key']]['maxrssMedian']):.0f} | {yes_no(ident['bytesIdentical'])} "
                f"({ident['distinctHashes']} distinct SHA-256 in {ident['files']} files) | "
                f"{yes_no(ident['contentIdentical'])}{ident['note']} |")
    scaling = data["scaling"]
    if scaling:
        add("")
        add("## Scaling with image size")
        add("")
        add("| layout | command | " + " | ".join(f"s/MP at {s}" for s in scaling["sizes"]) + " | time per MP, large ÷ small | "
            + " | ".join(f"peak MB/MP at {s}" for s in scaling["sizes"]) + " |")
        add("|---|---|" + "---|" * (2 * len(scaling["sizes"]) + 1))
        for row in scaling["rows"]:
            add(f"| {row['layout']} | {row['label']} | " + " | ".join(f"{x:.4f}" for x in row["secondsPerMP"])
                + f" | {row['perMPRatio']:.2f} | " + " | ".join(f"{x:.1f}" for x in row["peakMBPerMP"]) + " |")
    add("")
    add("## Targets")
    add("")
    for t in data["targets"]:
        add(f"- **{t['status']}** — {t['target']}: {t['detail']}")
    add("")
    return "\n".join(lines)


def yes_no(flag):
    return {True: "yes", False: "no", None: "–"}[flag]


def ratio_lines(res):
    lines = []
    base = res[BASE]["median"]
    if "rawpy-exr" in res:
        lines.append(f"rawpy+OpenEXR ÷ scenelinear zip = {res['rawpy-exr']['median'] / base:.2f}× "
                     f"(per-round {range_text(res['rawpy-exr']['roundRatios'])})")
    if "dcraw" in res:
        lines.append(f"dcraw ÷ scenelinear zip = {res['dcraw']['median'] / base:.2f}× "
                     f"(per-round {range_text(res['dcraw']['roundRatios'])})")
    if "tifffile-stage1" in res:
        t = res["tifffile-stage1"]["median"]
        for key, name in (("sl-exr-none", "EXR none"), ("sl-h5-0", "HDF5 none")):
            lines.append(f"scenelinear {name} ÷ tifffile Stage 1 = {res[key]['median'] / t:.2f}× "
                         f"(against its in-process decode alone: "
                         f"{res[key]['median'] / res['tifffile-stage1']['inProcessDecodeMedian']:.2f}×)")
    return lines


def range_text(values):
    return f"{min(values):.2f}–{max(values):.2f}" if values else "–"


# ---------------------------------------------------------------------------------------------
# Targets


def evaluate_targets(data):
    targets = []
    primary = next((i for i in data["inputs"] if i["layout"] == "linear-raw" and (i["width"], i["height"]) == NAMED_SIZES["12"]), None)

    def add(target, ok, detail):
        status = "not measured" if ok is None else ("PASS" if ok else "FAIL")
        targets.append({"target": target, "status": status, "detail": detail, "pass": ok})

    if primary is None:
        add("12 MP LinearRaw targets", None, "the 12 MP LinearRaw input was not part of this run")
    else:
        res = data["results"][primary["key"]]
        base = res[BASE]["median"]
        for peer, need, name in (("rawpy-exr", 5.0, "rawpy+OpenEXR"), ("dcraw", 3.0, "dcraw")):
            if peer not in res:
                add(f"12 MP LinearRaw: convert → half EXR ZIP ≥ {need:.0f}× faster than {name}", None,
                    f"{name} not available")
                continue
            ratio = res[peer]["median"] / base
            add(f"12 MP LinearRaw: convert → half EXR ZIP ≥ {need:.0f}× faster than {name}", ratio >= need,
                f"{ratio:.2f}× ({name} {res[peer]['median']:.3f} s, scenelinear {base:.3f} s; per-round ratios "
                f"{range_text(res[peer]['roundRatios'])})")
        if "tifffile-stage1" in res:
            t = res["tifffile-stage1"]["median"]
            decode = res["tifffile-stage1"]["inProcessDecodeMedian"]
            ratios = {k: res[k]["median"] / t for k in ("sl-exr-none", "sl-h5-0")}
            best = min(ratios.values())
            add("12 MP LinearRaw: convert → uncompressed EXR or HDF5 within 2× of the tifffile+imagecodecs "
                "Stage-1 decode", best <= 2.0,
                f"EXR none {ratios['sl-exr-none']:.2f}×, HDF5 none {ratios['sl-h5-0']:.2f}× of the tifffile "
                f"process ({t:.3f} s); against tifffile's in-process decode alone ({decode:.3f} s, "
                f"without Python start-up and imports): EXR none {res['sl-exr-none']['median'] / decode:.2f}×, "
                f"HDF5 none {res['sl-h5-0']['median'] / decode:.2f}×")
        half = primary["halfBytes"]
        peaks = {c["key"]: res[c["key"]]["maxrssMedian"] for c in data["commands"][primary["key"]]
                 if c["kind"] == "scenelinear" and not c["key"].endswith("-whole")}
        worst = max(peaks, key=peaks.get)
        best = min(peaks, key=peaks.get)
        add("12 MP LinearRaw: peak memory ≤ 2× the half-float output size", peaks[worst] <= 2 * half,
            f"half output {mb(half):.1f} MB; scenelinear peaks {mb(peaks[best]):.0f}–{mb(peaks[worst]):.0f} MB = "
            f"{peaks[best] / half:.2f}–{peaks[worst] / half:.2f}× (highest: {worst})")
    for ext, name in (("exr", "EXR"), ("h5", "HDF5")):
        entries = [(key, variant, ident) for key, variants in data["identity"].items()
                   for variant, ident in variants.items() if variant.startswith(ext + "-")]
        if not entries:
            continue
        files = sum(ident["files"] for _, _, ident in entries)
        if all(ident["bytesIdentical"] for _, _, ident in entries):
            add(f"{name} outputs identical between 1 and 2 threads", True,
                f"byte-identical: {len(entries)} settings × inputs, one SHA-256 each over {files} files "
                f"(every timed run and the checking round)")
        elif all(ident["contentIdentical"] for _, _, ident in entries):
            notes = sorted({ident["note"].lstrip("; ") for _, _, ident in entries if ident["note"]})
            add(f"{name} outputs identical between 1 and 2 threads", True,
                f"pixel data, clip mask and every attribute identical (checking round); the files are not "
                f"byte-identical: {'; '.join(notes)}")
        else:
            bad = [f"{key} {variant}{ident['note']}" for key, variant, ident in entries
                   if not ident["contentIdentical"]]
            add(f"{name} outputs identical between 1 and 2 threads", False, "; ".join(bad))
    return targets


# ---------------------------------------------------------------------------------------------
# Main


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="12,48", help="comma-separated: 12, 48 or WIDTHxHEIGHT (default 12,48)")
    parser.add_argument("--layouts", default="linear-raw,cfa", help="comma-separated: linear-raw, cfa")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of every command (default 5)")
    parser.add_argument("--size-runs", action="append", default=[], metavar="SIZE=N",
                        help="fewer (or more) runs for one size, e.g. 48=3")
    parser.add_argument("--quick", action="store_true", help="12 MP only, 3 runs")
    parser.add_argument("--all-compressions", action="store_true", help="also EXR rle, zips and pxr24")
    parser.add_argument("--stage-runs", type=int, default=3,
                        help="--timings --json runs per case, one in each of the first rounds (median; default 3)")
    parser.add_argument("--out", help="also write the Markdown report here")
    parser.add_argument("--json", help="write every raw number here")
    parser.add_argument("--bin", default=DEFAULT_BIN, help="the scenelinear binary (default: the release build)")
    parser.add_argument("--python", default=DEFAULT_PY if os.path.exists(DEFAULT_PY) else sys.executable,
                        help="Python for the peers (default: the project's .venv)")
    parser.add_argument("--cache", default=DEFAULT_CACHE, help="where generated inputs are kept")
    parser.add_argument("--regenerate", action="store_true", help="simulate the inputs again")
    parser.add_argument("--tmpdir", default=None, help="where outputs are written (default: the system's)")
    parser.add_argument("--wait-for-load", type=float, default=None, metavar="LOAD",
                        help="before timing, wait (up to --wait-max s) until the 1-min load is at most LOAD")
    parser.add_argument("--wait-max", type=float, default=900)
    parser.add_argument("--render", metavar="RAW.json",
                        help="run nothing: print (and --out) the report of a run saved with --json")
    args = parser.parse_args()
    if args.render:
        with open(args.render) as f:
            report = build_report(json.load(f))
        print(report)
        if args.out:
            with open(args.out, "w") as f:
                f.write(report + "\n")
        return 0

    if args.quick:
        args.sizes, args.runs = "12", 3
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    layouts = [l.strip() for l in args.layouts.split(",") if l.strip()]
    size_runs = {}
    for item in args.size_runs:
        s, n = item.split("=")
        size_runs[parse_size(s)] = int(n)
    if not os.access(args.bin, os.X_OK):
        raise SystemExit(f"{args.bin} not found: build it with `swift build -c release` (or use benchmarks/run.sh)")

    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = list(os.getloadavg())
    version = capture([args.bin, "--version"]).split()[0]
    versions = tool_versions(args.bin, args.python)
    have_rawpy = bool(versions.get("rawpy")) and bool(versions.get("OpenEXR"))
    have_tifffile = bool(versions.get("tifffile")) and bool(versions.get("imagecodecs"))
    have_dcraw = shutil.which("dcraw") is not None

    os.makedirs(args.cache, exist_ok=True)
    inputs = []
    for w, h in sizes:
        for layout in layouts:
            inp = prepare_input(args.bin, args.cache, version, layout, w, h, args.regenerate)
            inp["runs"] = size_runs.get((w, h), args.runs)
            inputs.append(inp)

    workdir = tempfile.mkdtemp(prefix="scenelinear-bench-", dir=args.tmpdir)
    runner = Runner(workdir, PEER_SCRIPTS)
    try:
        sl = scenelinear_commands(args.bin, args.all_compressions)
        sl += one_thread_variants(sl, {"sl-exr-zip", "sl-exr-none", "sl-h5-0", "sl-h5-default"})
        peers = peer_commands(args.python, have_rawpy, have_dcraw, have_tifffile)
        commands_for = {inp["key"]: sl + peers for inp in inputs}

        waited = 0.0
        if args.wait_for_load is not None:
            wait_start = time.time()
            while os.getloadavg()[0] > args.wait_for_load and time.time() - wait_start < args.wait_max:
                log(f"bench: load {os.getloadavg()[0]:.2f} > {args.wait_for_load}, waiting …")
                time.sleep(30)
            waited = time.time() - wait_start
        load_start = list(os.getloadavg())

        checks = check_round(runner, inputs, commands_for, workdir, args.python)
        for inp in inputs:
            shape = checks[inp["key"]]["outputShape"]
            inp["outputWidth"], inp["outputHeight"] = shape[1], shape[0]
            inp["halfBytes"] = shape[0] * shape[1] * 3 * 2


        raw = {inp["key"]: {c.key: [] for c in commands_for[inp["key"]]} for inp in inputs}
        stage_samples = {}
        round_loads = []
        rounds = max(inp["runs"] for inp in inputs)
        for r in range(rounds):
            round_loads.append(os.getloadavg()[0])
            log(f"bench: timed round {r + 1}/{rounds} (load {round_loads[-1]:.2f})")
            for inp in inputs:
                if r >= inp["runs"]:
                    continue
                for c in commands_for[inp["key"]]:
                    result = runner.run(c, inp["path"], want_hash=c.kind == "scenelinear")
                    result["round"] = r
                    if c.key == "tifffile-stage1":
                        result["inProcess"] = json.loads(result["stdout"])
                    result.pop("output")
                    raw[inp["key"]][c.key].append(result)
                if r < args.stage_runs:  # per-stage times under the same conditions as this round
                    stage_runs_for(runner, inp, commands_for[inp["key"]], stage_samples)
        for inp in inputs:  # when --stage-runs exceeds the number of rounds
            for _ in range(rounds, args.stage_runs):
                stage_runs_for(runner, inp, commands_for[inp["key"]], stage_samples)
        stages = stage_medians(stage_samples)
        load_after = list(os.getloadavg())

        results, identity = {}, {}
        for inp in inputs:
            key = inp["key"]
            per = {}
            base_by_round = {x["round"]: x["wall"] for x in raw[key][BASE]}
            for c in commands_for[key]:
                runs = raw[key][c.key]
                walls = [x["wall"] for x in runs]
                entry = {"walls": walls, "median": median(walls), "min": min(walls),
                         "maxrss": [x["maxrss"] for x in runs], "maxrssMedian": median([x["maxrss"] for x in runs]),
                         "roundRatios": [x["wall"] / base_by_round[x["round"]] for x in runs]}
                if c.key == "tifffile-stage1":
                    entry["inProcessDecodeMedian"] = median([x["inProcess"]["decode"] for x in runs])
                    entry["inProcessImportMedian"] = median([x["inProcess"]["import"] for x in runs])
                if c.kind == "scenelinear":
                    entry["sha256"] = [x["sha256"] for x in runs]
                per[c.key] = entry
            for c in commands_for[key]:
                per[c.key]["ratio"] = per[c.key]["median"] / per[BASE]["median"]
            results[key] = per
            identity[key] = {}
            for c in commands_for[key]:
                if c.threads != 1:
                    continue
                two = next(d for d in commands_for[key] if d.variant == c.variant and d.threads is None)
                check = checks[key]["pairs"][c.variant]
                hashes = per[c.key]["sha256"] + per[two.key]["sha256"] + check["sha256"]
                distinct = len(set(hashes))
                within = {"1": len(set(per[c.key]["sha256"])), "2": len(set(per[two.key]["sha256"]))}
                content = True if distinct == 1 else check.get("contentIdentical")
                note = ""
                if distinct > 1:
                    if max(within.values()) > 1:
                        note += "; files differ even between runs with the same thread count"
                    if content and (check.get("writeTimeAttributesDiffer") or check.get("objectTimesDiffer")):
                        stamps = [f"`{a}` attribute" for a in check.get("writeTimeAttributesDiffer", [])]
                        if check.get("objectTimesDiffer"):
                            stamps.append("HDF5 object modification times")
                        note += "; only the write time differs (" + ", ".join(stamps) + ")"
                    elif check.get("differences"):
                        note += "; differences: " + ", ".join(check["differences"])
                identity[key][c.variant] = {"bytesIdentical": distinct == 1, "distinctHashes": distinct,
                                            "files": len(hashes), "contentIdentical": content,
                                            "distinctWithinThreadCount": within, "note": note}

        scaling = None
        size_keys = sorted({(i["width"], i["height"]) for i in inputs}, key=lambda s: s[0] * s[1])
        if len(size_keys) > 1:
            rows = []
            for layout in layouts:
                row_inputs = [next((i for i in inputs if i["layout"] == layout and (i["width"], i["height"]) == s), None)
                              for s in size_keys]
                if any(i is None for i in row_inputs):
                    continue
                for c in commands_for[row_inputs[0]["key"]]:
                    if c.kind == "reference":
                        continue
                    per_mp = [results[i["key"]][c.key]["median"] / i["megapixels"] for i in row_inputs]
                    mem = [mb(results[i["key"]][c.key]["maxrssMedian"]) / i["megapixels"] for i in row_inputs]
                    rows.append({"layout": layout, "key": c.key, "label": c.label, "secondsPerMP": per_mp,
                                 "perMPRatio": per_mp[-1] / per_mp[0], "peakMBPerMP": mem})
            scaling = {"sizes": [size_label(*s) for s in size_keys], "rows": rows}

        runs_text = ", ".join(f"{inp['runs']} run{'s' if inp['runs'] != 1 else ''} for {size_label(inp['width'], inp['height'])}"
                              for inp in {(i["width"], i["height"]): i for i in inputs}.values())
        data = {
            "date": started.strftime("%Y-%m-%d %H:%M UTC"),
            "command": "benchmarks/run.sh " + " ".join(sys.argv[1:]),
            "machine": machine_info(),
            "load": {"before": load_before, "start": load_start, "waited": waited, "after": load_after,
                     "rounds": round_loads},
            "versions": versions, "runsText": runs_text, "stageRuns": args.stage_runs,
            "inputs": inputs,
            "commands": {k: [{"key": c.key, "label": c.label, "kind": c.kind, "threads": c.threads,
                              "variant": c.variant, "shown": c.shown} for c in cs]
                         for k, cs in commands_for.items()},
            "results": results, "checks": checks, "stages": stages, "stageSamples": stage_samples,
            "identity": identity, "scaling": scaling,
        }
        data["harnessMaxrss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        data["targets"] = evaluate_targets(data)
        data["raw"] = raw
        report = build_report(data)
        print(report)
        if args.out:
            with open(args.out, "w") as f:
                f.write(report + "\n")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(data, f, indent=1, default=str)
        log(f"bench: done in {(datetime.datetime.now(datetime.timezone.utc) - started).total_seconds():.0f} s")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
