#!/usr/bin/env python3
"""Command-line fuzzer: random argument vectors against every `scenelinear` command.

    Fuzz/cli_fuzz.py [--binary PATH] [--seconds N] [--seed S] [--jobs 2] [--corpus-dir DIR]
    Fuzz/cli_fuzz.py --replay DIR_OR_FILE...      run saved findings again

Inputs are made with the binary itself in a temporary directory (small simulated captures,
a bracket, a fisheye sky, their EXR, HDF5 and Radiance conversions, a calibration, a batch
manifest) together with hostile paths (a missing file, a directory, a FIFO, /dev/zero, an
empty file, a truncated DNG, text named .dng, a read-only directory, a symlink loop, an
output that is its own input, `-`). Each iteration builds an argument vector for one
command from a grammar of that command's options — their names read from `<command>
--help` — mostly a valid vector with one mutation: an extreme value (1e19, 1e30, nan,
inf, 99999999999999999999 …), a malformed region or range, a hostile path, an unknown,
missing or duplicated option, an empty, very long or non-ASCII string, a hostile
environment variable. Iteration i of seed S is always the same vector.

Each vector runs with a timeout, stdin from /dev/null (a file for `-`), RLIMIT_AS and
RLIMIT_FSIZE set, in a directory of its own; when started as root, the runs are made as
`nobody`, so that the read-only directory is read-only and nothing outside the temporary
directory can be written. A finding is a run that died of a signal (a Swift trap is
SIGILL or SIGTRAP), hit the timeout, exited with a code the documentation does not list
(1, the internal-error code, included), or printed a Swift "Fatal error", a crash banner or
a Python traceback. Each is saved as JSON (argument vector, environment, stdin, exit
status, the tail of stderr with the Swift backtrace) under --corpus-dir and printed with a
shell reproducer; distinct findings (command, kind, signal, first frame of the project's
code or the error message) are shrunk to a minimal vector. The exit status is 1 when
anything was found. Standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import pwd
import random
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_BINARY = REPO / ".build" / "debug" / "scenelinear"
DEFAULT_CORPUS = REPO / "Fuzz" / "crashes" / "cli"

# docs/cli.md and docs/robustness.md, "Exit codes"; the binary's own list (`scenelinear --help`,
# read at start) is added to these. 1 is documented too, as "internal error (a bug)": a finding.
DOCUMENTED_EXIT_CODES = {0, *range(10, 21), 64}
STDERR_MARKERS = ("Fatal error", "Program crashed", "Traceback (most recent call last)",
                  "AddressSanitizer", "runtime error:", "Precondition failed", "Assertion failed",
                  "terminate called", "Segmentation fault", "Illegal instruction")
SWIFT_BACKTRACE = "enable=yes,interactive=no,color=no,registers=none,images=none,threads=crashed,limit=48,top=0"

# ------------------------------------------------------------------------------------------
# Values

NUM_EXTREMES = ["0", "-0", "-1", "1e19", "-1e19", "1e30", "-1e30", "1e308", "-1e308", "1e309", "-1e309",
                "5e-324", "1e-300", "-1e-300", "nan", "-nan", "NaN", "inf", "-inf", "infinity",
                "99999999999999999999", "-99999999999999999999", "9223372036854775807",
                "-9223372036854775808", "9223372036854775808", "18446744073709551615",
                "18446744073709551616", "2147483647", "2147483648", "4294967296", "1e9", "-1e9",
                "0x10", "1_000", "+1", ".5", "1.", "1e", "e5", "", " ", "½", "١٢", "1,5", "0.5.5"]
INT_EXTREMES = ["0", "-1", "-0", "1", "65536", "65537", "100000", "100001", "4096", "4097",
                "2147483647", "2147483648", "4294967296", "9223372036854775807", "9223372036854775808",
                "-9223372036854775808", "18446744073709551615", "99999999999999999999", "1e3", "1.5",
                "nan", "", " 1", "0x10", "+2", "٣"]
BYTES_EXTREMES = ["0", "-1", "1", "1K", "1k", "0K", "-1G", "8E", "1T", "1.5G", "G", "", " 1G", "1G ", "1 G",
                  "9223372036854775807", "9223372036854775807K", "9223372036854775807G", "9007199254740993G",
                  "8589934591G", "8589934592G", "99999999999999999999", "18446744073709551615", "1e9", "nan"]
STRING_EXTREMES = ["", " ", "-", "--", "=", ",", "/", "\\", ".", "..", "%s%n%x", "$(id)", "'\"", "\t", "\n",
                   "é", "☀", "名前", "\u202e", "\U0001F600" * 3, "a" * 300, "x" * 5000, "🌅" * 500]
FLAG_GARBAGE = ["--nope", "-z", "--", "---", "-", "--=", "--json=yes", "--region", "-o", "--help", "-h",
                "--version", "help", "--REGION", "—json", "-qq", "--q", "--threads", "--no-such-flag=1"]


def pick(rng, items):
    return items[rng.randrange(len(items))]


def fmt_num(x: float) -> str:
    s = repr(float(x))
    return s[:-2] if s.endswith(".0") else s


def extreme_number(rng) -> str:
    return pick(rng, NUM_EXTREMES)


def coordinate(rng, *, fraction: bool, extent: int, extreme: bool) -> str:
    if extreme:
        return pick(rng, ["1e19", "-1e19", "1e30", "-1e30", "-1e308", "1e308", "1e309", "nan", "inf", "-inf",
                          "99999999999999999999", "9223372036854775807", "9223372036854775808",
                          "-9223372036854775809", "1e18", "4611686018427387904", "2e9", "-2e9", "5e-324",
                          "-1", "-0.5", "1.0000001", "0", "", "x", "1e", "0x1p3"])
    if fraction:
        return fmt_num(round(100 * rng.random(), 1)) + "%"
    return str(rng.randrange(0, extent + 1))


def region_spec(rng, *, valid: bool, names=None) -> str:
    name = pick(rng, names) if names else pick(rng, ["sky", "sun", "a", "b", "ref", "fg"])
    if not valid and rng.random() < 0.15:
        name = pick(rng, ["", "=", "a/b", "a,b", "ü", "n" * 400, " ", "mask", "poly", name + "=x"])
    kind = rng.random()
    if valid and kind >= 0.88 and rng.random() < 0.7:  # the inputs have no semantic masks: mask regions fail early
        kind = 0.0
    if kind < 0.70:  # box
        fraction = rng.random() < 0.6
        if valid:
            if fraction:  # percentages of the height and width, at least 10 % apart (a pixel on 96 × 128)
                t, l = round(rng.uniform(0, 90), 1), round(rng.uniform(0, 90), 1)
                b, r = round(rng.uniform(t + 10, 100), 1), round(rng.uniform(l + 10, 100), 1)
                box = [fmt_num(v) + "%" for v in (t, l, b, r)]
            else:
                t, b = sorted(rng.sample(range(0, 97), 2))
                l, r = sorted(rng.sample(range(0, 129), 2))
                box = [str(t), str(l), str(b), str(r)]
            return f"{name}={','.join(box)}"
        box = [coordinate(rng, fraction=fraction, extent=128, extreme=False) for _ in range(4)]
        for _ in range(rng.choice([1, 1, 1, 2, 4])):
            box[rng.randrange(4)] = coordinate(rng, fraction=fraction, extent=128, extreme=True)
        shape = rng.random()
        if shape < 0.10: box = box[::-1]                       # reversed
        elif shape < 0.15: box = [box[0], box[1], box[0], box[1]]  # empty
        elif shape < 0.20: box = box[:rng.randrange(0, 4)]      # too few
        elif shape < 0.25: box = box + box[:rng.randrange(1, 4)]  # too many
        sep = "," if rng.random() < 0.9 else pick(rng, [", ", ";", " ", ",,"])
        return f"{name}={sep.join(box)}"
    if kind < 0.88:  # polygon
        n = rng.choice([0, 1, 2, 3, 3, 4, 5, 8, 64, 2000]) if not valid else rng.choice([3, 4, 5, 8])
        pts = []
        for _ in range(n):
            pts += [str(rng.randrange(0, 129)), str(rng.randrange(0, 97))]
        if not valid:
            for _ in range(rng.choice([0, 1, 2])):
                if pts: pts[rng.randrange(len(pts))] = coordinate(rng, fraction=False, extent=128, extreme=True)
            if pts and rng.random() < 0.2: pts.pop()  # odd count
        return f"{name}=poly:{','.join(pts)}"
    mask = pick(rng, ["sky", "skin", "hair", "person", "urn:com:apple:photos:semanticskymatte"]) if valid else \
        pick(rng, ["", "sky", "nope", "urn:", "urn:x:" + "y" * 300, "../sky", "sky,1,2", "ü"])
    return f"{name}=mask:{mask}"


def malformed_region(rng) -> str:
    return pick(rng, ["noequals", "a=", "=0,0,1,1", "a=b=c", "a=poly:", "a=poly", "a=mask", "a=mask:",
                      "a=circle:1,2,3", "a=0,0,1,1,", "a=,,,", "a= 0, 0, 1, 1", "a=1/2,0,1,1", "a=0,0,1",
                      "a=poly:1,2,3", "a=-0,-0,-0,-0", "a=0,0,0,0", "a=1,1,0,0", "a=0.5,0.5,0.5,0.5",
                      "a=1e-320,1e-320,1,1", "a=" + ",".join(["1"] * 1000), "a=0,0,0.3,1", "a=10%,0,20,30",
                      "a=0%,0%,150%,100%", "a=50%,0%,10%,100%", "a=%,%,%,%", "a=poly:0%,0%,1,1,2,2"])


def hist_range(rng, *, valid: bool) -> str:
    if valid:
        lo = rng.uniform(-20, 2)
        return f"{fmt_num(round(lo, 2))},{fmt_num(round(lo + rng.uniform(0.5, 20), 2))}"
    ext = ["1e30", "-1e30", "1e9", "-1e9", "1e19", "-1e19", "1e308", "-1e308", "nan", "inf", "-inf", "0",
           "1e-300", "5e-324", "-5e-324", "4e15", "-4e15", "1e12", "-1e12", "9007199254740993"]
    shape = rng.random()
    if shape < 0.6:
        a, b = pick(rng, ext), pick(rng, ext + ["-10", "0", "10"])
        return f"{a},{b}" if rng.random() < 0.5 else f"{b},{a}"
    return pick(rng, ["-5", "-5,", ",5", "-5,-5", "5,-5", "-5,0,5", "", ",", "a,b", "-1e30,1e30",
                      "-1e9,1e9", "-1e308,1e308", "0,1e-300", "-inf,inf", "nan,nan", "-20,20", "-64,64",
                      "-1024,1024", "-1100,1100", "1e-320,2e-320"])


def csv_numbers(rng, valid_sets, *, valid: bool) -> str:
    if valid:
        return pick(rng, valid_sets)
    shape = rng.random()
    if shape < 0.5:
        vals = pick(rng, valid_sets).split(",")
        vals[rng.randrange(len(vals))] = extreme_number(rng)
        return ",".join(vals)
    return pick(rng, ["", ",", ",,", "1,,2", ",".join(["50"] * 2000), ",".join(str(i % 101) for i in range(3000)),
                      "1;2", "1 2", "a", "-1", "101", "100.000001", "nan", "inf", "1e-320"])


def circle_value(rng, *, valid: bool, auto: bool) -> str:
    if valid:
        if auto and rng.random() < 0.3:
            return "auto"
        return f"{rng.randrange(40, 90)},{rng.randrange(40, 90)},{rng.randrange(20, 70)}"
    parts = [str(rng.randrange(0, 128)) for _ in range(3)]
    for _ in range(rng.choice([1, 1, 2, 3])):
        parts[rng.randrange(3)] = pick(rng, ["1e19", "1e30", "-1e30", "1e308", "-1e308", "5e-324", "1e-300",
                                             "nan", "inf", "0", "-1", "99999999999999999999",
                                             "4611686018427387904", "1e9", "1e15"])
    shape = rng.random()
    if shape < 0.15: parts = parts[:2]
    elif shape < 0.2: parts = parts + ["1"]
    elif shape < 0.25: return pick(rng, ["", "auto,1", "AUTO", "0,0,0", "1,1,-1", "x,y,r"])
    return ",".join(parts)


def size_value(rng, *, valid: bool) -> str:
    if valid:
        return f"{rng.randrange(16, 200)}x{rng.randrange(16, 160)}"
    return pick(rng, ["20000x16", "16x20000", "15x16", "16x15", "20001x16", "16x20001", "0x0", "-16x16", "16x-16",
                      "x", "128", "128x96x3", "9223372036854775807x16", "16x9223372036854775807",
                      "99999999999999999999x16", "20001x20001", "128X96", " 128x96", "128 x 96",
                      "1e3x16", "0x16", "ｘ", "128x", "x96", "", "16x16x", "2147483648x16"])


def bracket_value(rng, *, valid: bool) -> str:
    if valid:
        return pick(rng, ["-4,0,4", "0", "-2,0,2", "0,4", "-8,-4,0,4", "3,-3", "0,0"])
    vals = ["-4", "0", "4"]
    shape = rng.random()
    if shape < 0.5:
        vals[rng.randrange(3)] = pick(rng, ["30", "-30", "30.0000001", "31", "-31", "nan", "inf", "1e308",
                                            "-1e308", "5e-324", "", "x", "1e19"])
        return ",".join(vals)
    return pick(rng, ["", ",", ",,", "-4,,4", "30,-30", ",".join(["0"] * 16), ",".join(["30", "-30"] * 8),
                      "0;4", "-4 0 4", "--4,0,4", "−4,0,4"])


def shard_value(rng, *, valid: bool) -> str:
    if valid:
        n = rng.randrange(1, 4)
        return f"{rng.randrange(0, n)}/{n}"
    return pick(rng, ["0/0", "1/1", "-1/2", "2/2", "0/-1", "1/0", "0/9223372036854775807",
                      "9223372036854775806/9223372036854775807", "9223372036854775807/9223372036854775807",
                      "-9223372036854775808/1", "0/99999999999999999999", "0", "/", "0/", "/2", "0/1/2",
                      "a/b", "0.5/1", " 0/1", "0/1 ", "0//1", ""])


def wb_value(rng, *, valid: bool) -> str:
    if valid:
        return pick(rng, ["as-shot", "d50", "d55", "d65", "0.3127,0.3290", "0.34,0.35", "asshot", "D65"])
    return pick(rng, ["0.5,0.5", "0.49999999,0.5", "1e-300,1e-300", "5e-324,5e-324", "nan,nan", "inf,0.3",
                      "1e19,1", "-0.1,0.3", "0,0", "0.3127", "0.3,0.3,0.3", "d75", "", ",", "0.3127;0.329",
                      "1e-320,0.3", "0.9999999,1e-9"])


# ------------------------------------------------------------------------------------------
# The grammar


class Ctx:
    """Paths every run sees, relative to its working directory."""
    DNGS = ["in/sunset.dng", "in/sky-dome.dng", "in/cfa.dng", "in/chart.dng", "in/sky-sun_2.dng"]
    BRACKET = ["in/sky-sun_1.dng", "in/sky-sun_2.dng", "in/sky-sun_3.dng"]
    ANALYSIS = ["in/sunset.dng", "in/sunset.dng", "in/sunset.exr", "in/sunset.h5", "in/cfa.dng", "in/chart.dng",
                "in/sky-dome.dng", "in/sunset-float.exr", "in/sunset-f32.h5"]
    FISHEYE = ["in/sky-dome.dng", "in/sky-dome-lum.exr", "in/sky-dome-lum.h5"]
    CALIBRATIONS = ["in/camera.json", "in/camera.json", "in/camera-other.json"]
    HOSTILE_CALIBRATIONS = ["in/cal-zero.json", "in/cal-negative.json", "in/cal-huge.json", "in/cal-tiny.json",
                            "in/cal-uncertainty.json", "in/cal-missing.json", "in/cal-1e999.json",
                            "in/cal-deep.json", "in/text.json", "in/empty.json", "in/sunset.truth.json"]
    HOSTILE_CAMERAS = ["in/cam-adc64.json", "in/cam-adc0.json", "in/cam-adc63.json", "in/cam-black.json",
                       "in/cam-fullwell0.json", "in/cam-fullwell-neg.json", "in/cam-exposure0.json",
                       "in/cam-iso-huge.json", "in/cam-companding0.json", "in/cam-companding64.json",
                       "in/cam-matrix-huge.json", "in/cam-matrix-zero.json", "in/cam-shading.json",
                       "in/cam-quantum0.json", "in/cam-cfa-bogus.json", "in/cam-layout-bogus.json",
                       "in/cam-seed-neg.json", "in/text.json", "in/empty.json"]
    SCENES_VALID = ["grey-ramp", "colour-chart", "sunset", "sky-sun", "sky-dome", "in/scene.json",
                    "in/sunset.truth.exr", "in/sky-dome.hdr", "in/sunset.truth.h5"]
    HOSTILE_INPUTS = ["in/missing.dng", "in/adir.dng", "fifo.dng", "/dev/zero", "/dev/null", "in/empty.dng",
                      "in/truncated.dng", "in/text.dng", "in/zero-link.dng", "in/loop.dng", "in/ünïcode ☀.dng",
                      "in/" + "l" * 200 + ".dng", "in/" + "n" * 300 + ".dng", "-", "", ".", "..", "in", "in/",
                      "victim.dng", "in/truncated.exr", "in/truncated.h5", "in/text.exr", "in/text.h5",
                      "in/empty.exr", "in/empty.h5", "in/sunset.truth.json", "in/manifest.jsonl", "ro",
                      "in/sky-dome.hdr", "/proc/self/mem", "/dev/stdin", "in/-rf.dng", "./in/./sunset.dng",
                      "in//sunset.dng", "in/sunset.dng/", "in/sunset.DNG", "a" * 5000,
                      "/" + "/".join(["d"] * 2100), "fifo.exr", "fifo.h5"]
    RARE_INPUTS = {"fifo.dng", "fifo.exr", "fifo.h5", "/dev/zero", "in/zero-link.dng", "/proc/self/mem", "/dev/stdin"}
    HOSTILE_OUTPUT_DIRS = ["ro/", "ro/sub/", "ro", ".", "..", "/", "in/", "victim.dng/", "fifo.dng", "",
                           "out/" + "d/" * 600, "ü ☀/", "/proc/", "-"]


def option_kind(cmd: str, opt: str) -> str:
    table = {
        "region": "region", "range": "range", "percentiles": "percentiles", "circle": "circle", "size": "size",
        "bracket": "bracket", "shard": "shard", "max-pixels": "bytes", "max-memory": "bytes",
        "threads": "int", "bins-per-stop": "int", "linear": "int", "exr-tile-size": "int",
        "exr-zip-level": "int", "hdf5-level": "int", "align-range": "int", "reference": "int", "width": "int",
        "height": "int", "seed": "int",
        "fov": "num", "settings-uncertainty": "num", "ratio-tolerance": "num", "saturation": "num",
        "luminance": "num", "luminance-uncertainty": "num", "reflectance": "num", "illuminance": "num",
        "reflectance-uncertainty": "num", "illuminance-uncertainty": "num", "illuminance-vertical": "num",
        "meter-uncertainty": "num", "exposure-time": "num", "iso": "num",
        "output": "output", "plot": "output", "ev-map": "output", "expected": "output",
        "calibration": "calibration", "truth": "path", "camera": "camera", "scene": "scene",
        "white-balance": "wb", "ratio": "ratio", "name": "string",
    }
    return table.get(opt, "enum")


ENUMS = {
    "format": ["exr", "hdf5", "h5", "hdr", "exr,hdf5", "exr,hdf5,hdr", "EXR", "hdf5,exr,exr"],
    "exposure": ["none", "baseline", "normalized"],
    "units": ["relative", "luminance", "radiance"],
    "color": ["rec2020", "acescg", "aces2065-1", "rec709", "xyz-d65", "camera"],
    "demosaic": ["rcd", "bilinear", "superpixel"],
    "source": ["raw", "enhanced"],
    "crop": ["user", "default", "none"],
    "exr-compression": ["none", "rle", "zips", "zip", "piz", "pxr24", "b44", "b44a", "dwaa", "dwab"],
    "exr-type": ["half", "float"],
    "exr-layout": ["flat", "layers"],
    "hdf5-type": ["float16", "float32"],
    "projection": ["equidistant", "equisolid", "orthographic", "stereographic"],
    "quantity": ["Y", "R", "G", "B"],
    "statistic": ["mean", "median"],
    "layout": ["linear-raw", "cfa"],
    "cfa-pattern": ["RGGB", "BGGR", "GRBG", "GBRG"],
    "storage": ["lossless-jpeg", "uncompressed"],
}
ENUM_EXTREMES = ["", "NONE", "Rec2020", "rec2020 ", "bogus", "exr,", ",", "exr,,hdf5", "jpeg", "auto", "0", "-1",
                 "y", "mean,median", "fisheye", "RGGBX", "rggb", "RGB", "R", "dwa", "a" * 1000, "equisolid\u0000"[:-1]]

VALID_INTS = {
    "threads": ["1", "1", "2", "3"], "bins-per-stop": ["1", "2", "4", "8", "64"], "linear": ["1", "16", "256", "100000"],
    "exr-tile-size": ["1", "7", "16", "64", "65536"], "exr-zip-level": ["0", "1", "6", "12"],
    "hdf5-level": ["0", "1", "5", "9"], "align-range": ["1", "4", "16", "64"], "reference": ["1", "2", "3"],
    "width": ["64", "65", "100", "128"], "height": ["48", "49", "64", "96"], "seed": ["1", "2", "42", "0"],
}
INT_BOUNDS = {  # boundary and extreme values a command documents or invites
    "threads": ["0", "-1", "64", "1000"], "bins-per-stop": ["0", "65", "-1"], "linear": ["0", "100001", "-1"],
    "exr-tile-size": ["0", "65537", "2", "3"], "exr-zip-level": ["-1", "13"], "hdf5-level": ["-1", "10"],
    "align-range": ["0", "4096", "4097", "2048"], "reference": ["0", "4", "-1"],
    "width": ["63", "16385", "0", "-64"], "height": ["47", "16385", "0", "-48"],
    "seed": ["18446744073709551615", "18446744073709551616", "-1"],
}
VALID_NUMS = {
    "fov": ["180", "170", "90", "1", "220"], "settings-uncertainty": ["0", "6.7", "50", "999"],
    "ratio-tolerance": ["0", "3", "50", "99.9"], "saturation": ["0.98", "1", "0.5", "0.01"],
    "luminance": ["100", "250", "1", "0.001"], "luminance-uncertainty": ["1", "0", "5", "999"],
    "reflectance": ["0.18", "1", "0.5"], "illuminance": ["1000", "50000", "1"],
    "reflectance-uncertainty": ["1.7", "0"], "illuminance-uncertainty": ["1", "0"],
    "illuminance-vertical": ["5230", "100", "100000"], "meter-uncertainty": ["2.9", "0"],
    "exposure-time": ["0.01", "0.001", "0.1", "1"], "iso": ["100", "50", "3200"],
}
NUM_BOUNDS = {
    "fov": ["0", "360", "360.0001", "180.0000001", "1e-300", "5e-324", "-180", "720"],
    "saturation": ["0", "1.0000001", "1e-300", "-0"], "ratio-tolerance": ["100", "-0.0001", "99.99999999"],
    "luminance-uncertainty": ["1000", "999.9999", "5%", "%", "-0"], "meter-uncertainty": ["1000", "5%", "-1"],
    "reflectance-uncertainty": ["1000", "5%"], "illuminance-uncertainty": ["1000", "5%"],
    "settings-uncertainty": ["1000", "-1"], "reflectance": ["1.0000001", "0", "-0.18"],
    "exposure-time": ["0", "-0.01", "1e-300", "1e300", "3600"], "iso": ["0", "-100", "1e-300", "1e300"],
}


def int_value(rng, opt, *, valid):
    if valid:
        return pick(rng, VALID_INTS.get(opt, ["1", "2"]))
    return pick(rng, INT_BOUNDS.get(opt, []) + INT_EXTREMES) if rng.random() < 0.5 else pick(rng, INT_BOUNDS.get(opt, ["0"]) or ["0"])


def num_value(rng, opt, *, valid):
    if valid:
        return pick(rng, VALID_NUMS.get(opt, ["1"]))
    bounds = NUM_BOUNDS.get(opt, [])
    return pick(rng, bounds) if bounds and rng.random() < 0.4 else extreme_number(rng)


def bytes_value(rng, *, valid):
    if valid:
        return pick(rng, ["64M", "1G", "100000000", "512M", "2G", "20000", "1000000", "1M"])
    return pick(rng, BYTES_EXTREMES)


def output_value(rng, cmd, opt, *, valid):
    if opt == "ev-map":
        good = ["map.png", "map.svg", "map.pdf", "m/map.png"]
        bad = ["map.jpg", "map", ".png", "ro/map.png", "map.PNG", "fifo.dng", "in/sunset.dng", "victim.dng.png",
               "/dev/full.png", "ü☀.png", "-", "", "x" * 300 + ".png", "d/" * 500 + "m.png"]
    elif opt == "plot":
        good = ["plot.png", "plot.svg", "plot.pdf"]
        bad = ["plot.txt", "plot", "ro/plot.png", ".svg", "plot.PDF", "-", "", "x" * 300 + ".png", "victim.dng"]
    elif opt == "expected":
        good = ["expected.h5"]
        bad = ["expected.exr", "ro/expected.h5", "victim.dng", "", "-", "in/sunset.h5", "e.h5/"]
    else:  # --output / -o
        good = {"convert": ["out.exr", "out.h5", "out.hdf5", "outdir/", "out.exr", "-"],
                "merge": ["merged.exr", "merged.h5"],
                "illuminance": ["sky.hdr", "sky.h5"],
                "report": ["report.html", "report.md", "report.pdf", "report.html"],
                "calibrate": ["cam.json"], "simulate": ["sim", "sim/"], "manifest": ["merged.jsonl"],
                "testchart": ["chart.dng"]}.get(cmd, ["out"])
        bad = ["ro/out.exr", "ro/", "in/out.exr", "victim.dng", "victim.exr", "victim.h5", "out.dng", "out.EXR",
               "out.tif", "out", "", "-", ".", "..", "/", "fifo.dng", "out.hdr", "out.exr/", "ü ☀.exr", "/proc/x.exr",
               "o" * 300 + ".exr", "d/" * 600 + "x.exr", "ro/sub/x.h5", "report.pdf", "merged.hdr",
               "x.html", "x.md", "x.h5", "victim.dng/x.exr", "-o"]
    return pick(rng, good) if valid else pick(rng, bad)


def value_for(rng, cmd, opt, *, valid, regions=None):
    kind = option_kind(cmd, opt)
    if not valid and rng.random() < 0.08:
        return pick(rng, STRING_EXTREMES)
    if kind == "region":
        if valid:
            return region_spec(rng, valid=True, names=regions)
        return malformed_region(rng) if rng.random() < 0.2 else region_spec(rng, valid=False, names=regions)
    if kind == "range":
        return hist_range(rng, valid=valid)
    if kind == "percentiles":
        return csv_numbers(rng, ["1,5,25,75,95,99", "50", "0,100", "1,50,99", "0.1,99.9", ""], valid=valid)
    if kind == "circle":
        return circle_value(rng, valid=valid, auto=(cmd == "illuminance"))
    if kind == "size":
        return size_value(rng, valid=valid)
    if kind == "bracket":
        return bracket_value(rng, valid=valid)
    if kind == "shard":
        return shard_value(rng, valid=valid)
    if kind == "bytes":
        return bytes_value(rng, valid=valid)
    if kind == "int":
        return int_value(rng, opt, valid=valid)
    if kind == "num":
        return num_value(rng, opt, valid=valid)
    if kind == "output":
        return output_value(rng, cmd, opt, valid=valid)
    if kind == "calibration":
        return pick(rng, Ctx.CALIBRATIONS) if valid else pick(rng, Ctx.HOSTILE_CALIBRATIONS + Ctx.HOSTILE_INPUTS[:12])
    if kind == "camera":
        return "in/camera-model.json" if valid else pick(rng, Ctx.HOSTILE_CAMERAS + ["fifo.json", "in/missing.json"])
    if kind == "path":  # --truth
        good = {"validate": ["in/sunset.truth.json", "in/sky-sun.truth.json"]}.get(cmd, ["in/sunset.truth.json"])
        return pick(rng, good) if valid else pick(rng, ["in/sky-dome.truth.json", "in/camera.json", "in/text.json",
                                                        "in/empty.json", "fifo.json", "in/missing.json",
                                                        "in/cal-1e999.json", "in/cal-deep.json", "in/truth-bad.json"])
    if kind == "scene":
        return pick(rng, Ctx.SCENES_VALID) if valid else pick(rng, [
            "nope", "", "SUNSET", "in/text.json", "in/empty.json", "in/scene-huge.json", "in/scene-nan.json",
            "in/truncated.exr", "in/truncated.h5", "in/text.exr", "in/empty.h5", "fifo.json", "fifo.exr",
            "in/missing.exr", "in/sunset.dng", "in/sky-dome-lum.exr", "in/sunset.exr", "/dev/zero",
            "in/zero-link.exr", "in/adir.exr", "in/scene-deep.json", "in/sunset.expected.h5"])
    if kind == "wb":
        return wb_value(rng, valid=valid)
    if kind == "ratio":
        if cmd == "validate":
            good = ["sky/sun", "sun/sky", "sky/foreground", "foreground/sky"]
            return pick(rng, good) if valid else pick(rng, ["nope/sky", "sky", "sky/sky", "/", "sky/sun/x", "a//b", ""])
        names = regions or ["a", "b"]
        if valid:
            return f"{pick(rng, names)}/{pick(rng, names)}"
        return pick(rng, ["a", "/", "a/", "/b", "a/b/c", "x/y", "a//b", "a/a", "", "ü/☀", "a\\b", "n" * 500 + "/a"])
    if kind == "string":
        return pick(rng, ["frame", "x", "sunset"]) if valid else pick(rng, STRING_EXTREMES + ["../escape", "ro/x",
                                                                                              "a/b", ".hidden"])
    values = ENUMS.get(opt)
    if values is None:  # an option this grammar does not know yet: generic values
        return pick(rng, ["1", "x", "in/sunset.dng", "out.exr"]) if valid else pick(rng, NUM_EXTREMES + STRING_EXTREMES)
    return pick(rng, values) if valid else pick(rng, ENUM_EXTREMES)


class Item:
    """One element of an argument vector: a positional, or an option with its value."""
    __slots__ = ("kind", "name", "value", "form")

    def __init__(self, kind, name=None, value=None, form="space"):
        self.kind, self.name, self.value, self.form = kind, name, value, form

    def tokens(self, short_names):
        if self.kind in ("pos", "raw"):
            return [self.value]
        if self.kind == "flag":
            return ["--" + self.name]
        flag = "--" + self.name
        if self.form == "short" and self.name in short_names:
            flag = "-" + short_names[self.name]
        if self.form == "equals":
            return [flag + "=" + self.value]
        if self.form == "novalue":
            return [flag]
        return [flag, self.value]

    def to_json(self):
        return [self.kind, self.name, self.value, self.form]

    @classmethod
    def from_json(cls, j):
        return cls(*j)


def dash_form(item, rng):
    """A value starting with '-' is passed as --name=value (mostly): as a separate word the
    parser takes it for an option, and the vector would only test that."""
    if item.kind == "opt" and item.value.startswith("-") and item.form in ("space", "short") and rng.random() < 0.85:
        item.form = "equals"
    return item


class Grammar:
    def __init__(self, commands: dict):
        # commands: name -> {long: {"value": bool, "short": str|None, "inverse": str|None}}
        self.commands = commands

    def options(self, cmd):
        return self.commands.get(cmd, {})

    def has(self, cmd, opt):
        return opt in self.options(cmd)

    def short_names(self, cmd):
        return {k: v["short"] for k, v in self.options(cmd).items() if v.get("short")}

    def opt(self, cmd, name, rng, *, valid=True, regions=None):
        spec = self.options(cmd)[name]
        if not spec["value"]:
            return Item("flag", name)
        form = "short" if spec.get("short") and rng.random() < 0.5 else "space"
        return dash_form(Item("opt", name, value_for(rng, cmd, name, valid=valid, regions=regions), form), rng)

    # -- valid base vectors --------------------------------------------------------------

    def base(self, cmd, rng):
        """A valid-looking vector (before mutation), plus the region names it defines."""
        items, names = [], []

        def add(name, value=None, valid=True):
            if not self.has(cmd, name):
                return
            if value is None:
                items.append(self.opt(cmd, name, rng, valid=valid, regions=names or None))
            elif value is True:
                items.append(Item("flag", name))
            else:
                items.append(dash_form(Item("opt", name, value), rng))

        def maybe(names_list, p):
            for n in names_list:
                if self.has(cmd, n) and rng.random() < p:
                    add(n)

        def regions(k):
            for i in range(k):
                nm = pick(rng, ["sky", "sun", "fg", "a", "b", "ref"]) + ("" if i == 0 or rng.random() < 0.7 else str(i))
                names.append(nm)
                items.append(Item("opt", "region", region_spec(rng, valid=True, names=[nm])))

        limits = ["max-pixels", "max-memory", "threads", "ignore-digest", "skip-digest"]
        units = ["units", "calibration", "allow-other-camera", "settings-uncertainty"]
        if cmd == "info":
            items.append(Item("pos", value=pick(rng, Ctx.DNGS + ["-", "-"])))
            maybe(["json", "tags", "verify-digest", "quiet"], 0.35)
        elif cmd == "convert":
            batch = rng.random() < 0.2
            if batch:
                for p in rng.sample(Ctx.DNGS, rng.randrange(2, 4)):
                    items.append(Item("pos", value=p))
                if rng.random() < 0.3:
                    items.append(Item("pos", value="in/batch"))
                add("output", pick(rng, ["outdir/", "outdir"]))
                maybe(["shard", "no-resume", "format"], 0.3)
            else:
                items.append(Item("pos", value=pick(rng, Ctx.DNGS)))
                add("output")
                if rng.random() < 0.25 and self.has(cmd, "analysis"):
                    add("analysis", True)
                    regions(rng.randrange(0, 3))
            maybe(["exposure", "color", "white-balance", "demosaic", "source", "crop", "no-orientation",
                   "exr-compression", "exr-type", "exr-layout", "exr-zip-level", "no-exr-clip-mask", "no-masks",
                   "hdf5-type", "hdf5-level", "json", "quiet", "timings"], 0.12)
            if rng.random() < 0.15:
                add("exr-tiled", True)
                maybe(["exr-tile-size", "exr-mipmaps"], 0.5)
            if rng.random() < 0.2:
                add("units", pick(rng, ["luminance", "radiance"]))
                maybe(["calibration", "settings-uncertainty"], 0.4)
            maybe(limits, 0.08)
        elif cmd == "merge":
            frames = list(Ctx.BRACKET)
            if rng.random() < 0.3:
                frames = rng.sample(frames, rng.randrange(2, 4))
            items += [Item("pos", value=f) for f in frames]
            add("output")
            maybe(["reference", "ratio-tolerance", "saturation", "unchecked-ratios", "align", "color", "demosaic",
                   "crop", "no-orientation", "exr-type", "hdf5-type", "timings", "json", "quiet"], 0.12)
            if self.has(cmd, "align-range") and any(i.name == "align" for i in items) and rng.random() < 0.5:
                add("align-range")
            if rng.random() < 0.2:
                add("units", pick(rng, ["luminance", "radiance"]))
                maybe(["calibration"], 0.4)
            elif rng.random() < 0.2:
                add("exposure", pick(rng, ["none", "baseline"]))
            maybe(limits, 0.08)
        elif cmd == "illuminance":
            items.append(Item("pos", value=pick(rng, Ctx.FISHEYE)))
            add("projection")
            maybe(["fov", "circle", "demosaic", "output", "json", "quiet"], 0.2)
            maybe(units, 0.1)
            maybe(limits, 0.08)
        elif cmd in ("stats", "histogram", "ratio", "report"):
            k = 1 if rng.random() < 0.75 else rng.randrange(2, 4)
            for _ in range(k):
                items.append(Item("pos", value=pick(rng, Ctx.ANALYSIS)))
            regions(rng.randrange(2, 4) if cmd == "ratio" else rng.randrange(0, 4))
            maybe(["exposure", "demosaic", "source", "quiet"], 0.1)
            if rng.random() < 0.15:
                add("units", pick(rng, ["luminance", "radiance"]))
                maybe(["calibration", "settings-uncertainty"], 0.4)
            if rng.random() < 0.1:
                add("projection")
                maybe(["fov", "circle"], 0.5)
            maybe(limits, 0.08)
            if cmd != "report":
                maybe(["ev-map"], 0.08)
                if rng.random() < 0.3:
                    add(pick(rng, ["json", "csv"]), True)
            if cmd == "stats":
                maybe(["percentiles"], 0.3)
            elif cmd == "histogram":
                maybe(["bins-per-stop", "range", "plot"], 0.3)
                maybe(["linear"], 0.2)
            elif cmd == "ratio":
                maybe(["quantity", "statistic"], 0.3)
                if rng.random() < 0.3:
                    add("ratio")
            else:
                add("output")
                maybe(["format", "quantity", "statistic", "percentiles", "bins-per-stop"], 0.15)
                if rng.random() < 0.2 and len(names) >= 2:
                    add("ratio")
        elif cmd == "calibrate":
            mode = rng.random()
            if mode < 0.2:
                items.append(Item("pos", value="in/sky-dome.dng"))
                add("illuminance-vertical")
                add("projection")
                maybe(["fov", "circle", "illuminance-uncertainty"], 0.3)
            else:
                photos = ["in/sunset.dng"] if rng.random() < 0.8 else ["in/sunset.dng", "in/chart.dng"]
                items += [Item("pos", value=p) for p in photos]
                items.append(Item("opt", "region", pick(rng, ["ref=10%,10%,28%,38%", "ref=70%,5%,95%,95%",
                                                             region_spec(rng, valid=True, names=["ref"])])))
                if mode < 0.7:
                    add("luminance")
                    maybe(["luminance-uncertainty"], 0.3)
                else:
                    add("reflectance")
                    add("illuminance")
                    maybe(["reflectance-uncertainty", "illuminance-uncertainty"], 0.3)
            add("output")
            maybe(["meter-uncertainty", "demosaic", "json"], 0.15)
            maybe(limits, 0.08)
        elif cmd == "simulate":
            add("scene")
            add("size")
            add("output")
            add("quiet", True)
            maybe(["camera", "name", "layout", "cfa-pattern", "storage", "seed", "no-noise", "exposure-time", "iso"],
                  0.15)
            if rng.random() < 0.2:
                add("bracket")
        elif cmd == "validate":
            if rng.random() < 0.75:
                items.append(Item("pos", value=pick(rng, ["in/sunset.dng", "in/sky-dome.dng", "in/cfa.dng"])))
                maybe(["ratio", "plot"], 0.2)
            else:
                items += [Item("pos", value=f) for f in Ctx.BRACKET]
            maybe(["truth", "json", "calibration", "quiet"], 0.15)
        elif cmd == "manifest":
            items.append(Item("pos", value=pick(rng, ["in/manifest.jsonl", "in/batch", "in/batch/scenelinear-manifest.jsonl"])))
            if rng.random() < 0.3:
                items.append(Item("pos", value="in/manifest.jsonl"))
            maybe(["output", "quiet"], 0.4)
        elif cmd == "testchart":
            add("output")
            maybe(["width", "height", "uncompressed", "quiet"], 0.5)
            maybe(["expected"], 0.3)
        # Options --help lists that the grammar above never adds (new ones) get a chance too.
        known = {i.name for i in items if i.name}
        for name in self.options(cmd):
            if name not in known and name not in GRAMMAR_COVERED.get(cmd, ()) and rng.random() < 0.05:
                items.append(self.opt(cmd, name, rng, valid=True, regions=names or None))
        return items, names


GRAMMAR_COVERED = {}  # per command, the options Grammar.base adds itself; any other --help lists gets a 5 % chance
ALL_COMMON = {"quiet", "json", "csv", "max-pixels", "max-memory", "threads", "ignore-digest", "skip-digest", "units",
              "calibration", "allow-other-camera", "settings-uncertainty", "region", "exposure", "demosaic", "source",
              "projection", "fov", "circle", "ev-map", "output"}
for _c, _opts in {
        "info": {"json", "tags", "verify-digest", "quiet"},
        "convert": {"shard", "no-resume", "format", "analysis", "color", "white-balance", "crop", "no-orientation",
                    "exr-compression", "exr-type", "exr-layout", "exr-zip-level", "no-exr-clip-mask", "exr-clip-mask",
                    "no-masks", "hdf5-type", "hdf5-level", "timings", "exr-tiled", "exr-tile-size", "exr-mipmaps"},
        "merge": {"reference", "ratio-tolerance", "saturation", "unchecked-ratios", "align", "align-range", "color",
                  "crop", "no-orientation", "exr-type", "hdf5-type", "timings"},
        "illuminance": set(), "stats": {"percentiles"}, "histogram": {"bins-per-stop", "range", "plot", "linear"},
        "ratio": {"quantity", "statistic", "ratio"},
        "report": {"format", "quantity", "statistic", "percentiles", "bins-per-stop", "ratio"},
        "calibrate": {"illuminance-vertical", "luminance", "luminance-uncertainty", "reflectance", "illuminance",
                      "reflectance-uncertainty", "illuminance-uncertainty", "meter-uncertainty"},
        "simulate": {"scene", "size", "camera", "name", "layout", "cfa-pattern", "storage", "seed", "no-noise", "noise",
                     "exposure-time", "iso", "bracket"},
        "validate": {"truth", "ratio", "plot"}, "manifest": set(),
        "testchart": {"width", "height", "uncompressed", "expected"}}.items():
    GRAMMAR_COVERED[_c] = _opts | ALL_COMMON


# ------------------------------------------------------------------------------------------
# Mutations

ENV_MUTATIONS = [
    {"SCENELINEAR_THREADS": "0"}, {"SCENELINEAR_THREADS": "-1"}, {"SCENELINEAR_THREADS": "9223372036854775807"},
    {"SCENELINEAR_THREADS": "100000"}, {"SCENELINEAR_THREADS": "x"}, {"SCENELINEAR_THREADS": ""},
    {"SCENELINEAR_THREADS": "64"},
    {"SLURM_ARRAY_TASK_ID": "9223372036854775807", "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_ARRAY_TASK_MIN": "-1"},
    {"SLURM_ARRAY_TASK_ID": "-9223372036854775808", "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_ARRAY_TASK_MIN": "1"},
    {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "9223372036854775807"},
    {"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "0"},
    {"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_COUNT": "2"},
    {"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "2"},
    {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "1"},
    {"LANG": "tr_TR.UTF-8", "LC_ALL": "tr_TR.UTF-8"}, {"LC_ALL": "de_DE.UTF-8"}, {"TMPDIR": "/nonexistent"},
    {"TMPDIR": "ro"}, {"HOME": "/nonexistent"}, {"COLUMNS": "0"}, {"COLUMNS": "-1"}, {"COLUMNS": "99999999999"},
]


def mutate(grammar, cmd, items, names, rng, env, stdin):
    """Applies one mutation in place; returns (cmd, stdin) (the command or stdin may change)."""
    opts = list(grammar.options(cmd))
    op = rng.random()
    # Enumerations are checked by the argument parser itself: their extreme values are
    # tried less often than those of numbers, regions, ranges and paths.
    valued = [i for i in items if i.kind == "opt" for _ in range(1 if option_kind(cmd, i.name) == "enum" else 4)]
    opts = [o for o in opts for _ in range(1 if option_kind(cmd, o) == "enum" else 3)]
    positional = [k for k, i in enumerate(items) if i.kind == "pos"]
    if op < 0.34 and valued:  # an extreme value for an option already there
        it = pick(rng, valued)
        it.value = value_for(rng, cmd, it.name, valid=False, regions=names or None)
        dash_form(it, rng)
    elif op < 0.50 and opts:  # an option added, with an extreme (or valid) value
        name = pick(rng, opts)
        it = grammar.opt(cmd, name, rng, valid=rng.random() < 0.4, regions=names or None)
        items.insert(rng.randrange(len(items) + 1), it)
    elif op < 0.62:  # a hostile input path
        path = pick(rng, Ctx.HOSTILE_INPUTS)
        if path in Ctx.RARE_INPUTS and rng.random() < 0.75:  # these stall or read without end: rarer
            path = pick(rng, Ctx.HOSTILE_INPUTS[:9])
        if positional and rng.random() < 0.7:
            items[pick(rng, positional)].value = path
        else:
            items.insert(rng.randrange(len(items) + 1), Item("pos", value=path))
        if path == "-" or (path == "/dev/stdin"):
            stdin = pick(rng, ["in/sunset.dng", "in/sunset.dng", "/dev/zero", "in/truncated.dng", "in/empty.dng",
                               "/dev/null", "in/text.dng"])
    elif op < 0.68 and items:  # something removed
        del items[rng.randrange(len(items))]
    elif op < 0.73 and items:  # something duplicated (same or another value)
        it = pick(rng, items)
        dup = Item(it.kind, it.name, it.value, it.form)
        if dup.kind == "opt" and rng.random() < 0.5:
            dup.value = value_for(rng, cmd, dup.name, valid=rng.random() < 0.5, regions=names or None)
        items.insert(rng.randrange(len(items) + 1), dup)
    elif op < 0.79:  # an unknown flag or a stray token
        items.insert(rng.randrange(len(items) + 1), Item("raw", value=pick(rng, FLAG_GARBAGE + STRING_EXTREMES[:8])))
    elif op < 0.83 and valued:  # an option without its value, or glued with =
        it = pick(rng, valued)
        it.form = pick(rng, ["novalue", "equals", "equals"])
        if it.form == "novalue":
            items.remove(it)
            items.append(it)
    elif op < 0.87:  # an option of another command
        other = pick(rng, list(grammar.commands))
        oo = list(grammar.options(other))
        if oo:
            name = pick(rng, oo)
            it = grammar.opt(other, name, rng, valid=rng.random() < 0.5)
            items.insert(rng.randrange(len(items) + 1), it)
    elif op < 0.92 and (valued or items):  # a string value replaced by an empty, long or non-ASCII one
        it = pick(rng, valued or items)
        it.value = pick(rng, STRING_EXTREMES)
    elif op < 0.96:  # the environment
        env.update(pick(rng, ENV_MUTATIONS))
    elif op < 0.98:  # the order
        rng.shuffle(items)
    else:  # another command's name, or none
        cmd = pick(rng, ["help", "", "Info", "convert-", "stats", "--version", "test-chart", "-h", "x" * 100])
    return cmd, stdin


def generate(grammar, seed, index):
    """Iteration `index` of `seed`: (command, items, env, stdin, stdout, mutations)."""
    rng = random.Random(f"cli-fuzz/{seed}/{index}")
    cmds = sorted(grammar.commands)
    # The measuring commands have the most options and the deepest code: weighted up.
    weights = {"stats": 3, "histogram": 3, "ratio": 2, "report": 2, "convert": 3, "calibrate": 2, "illuminance": 2,
               "simulate": 2, "merge": 2, "info": 1, "validate": 1, "manifest": 1, "testchart": 1}
    pool = [c for c in cmds for _ in range(weights.get(c, 1))]
    cmd = pick(rng, pool)
    items, names = grammar.base(cmd, rng)
    env, stdin = {}, None
    if any(i.kind == "pos" and i.value == "-" for i in items):
        stdin = "in/sunset.dng"
    r = rng.random()
    n = 0 if r < 0.10 else 1 if r < 0.72 else 2 if r < 0.90 else rng.randrange(3, 6)
    for _ in range(n):
        cmd, stdin = mutate(grammar, cmd, items, names, rng, env, stdin)
    stdout = "/dev/full" if rng.random() < 0.02 else None
    return cmd, items, env, stdin, stdout, n


def argv_of(grammar, cmd, items):
    short = grammar.short_names(cmd)
    out = [cmd] if cmd else []
    for it in items:
        out += it.tokens(short)
    return out


# ------------------------------------------------------------------------------------------
# Reading --help

OPTION_LINE = re.compile(r"^  (?:-([A-Za-z]), )?--([A-Za-z0-9][\w-]*)(?:/--([\w-]+))?(?: <([^>]*)>)?(?:\s|$)")


def parse_help(binary: str, cmd: str) -> dict:
    text = subprocess.run([binary, cmd, "--help"], capture_output=True, text=True, timeout=60).stdout
    options, in_options = {}, False
    for line in text.splitlines():
        if line.startswith("OPTIONS:"):
            in_options = True
            continue
        if not in_options:
            continue
        m = OPTION_LINE.match(line)
        if not m:
            continue
        short, name, inverse, value = m.groups()
        if name in ("help", "version"):
            continue
        options[name] = {"short": short, "value": value is not None, "inverse": inverse}
        if inverse:
            options[inverse] = {"short": None, "value": False, "inverse": None}
    return options


def documented_exit_codes(help_text: str) -> set:
    """The codes of the "Exit codes: 0 success; 1 internal error; …; 129, 130 stopped by …"
    paragraph of the top-level help."""
    m = re.search(r"Exit codes:(.*?)(?:\n\s*\n|$)", help_text, re.S)
    codes = set()
    for part in (m.group(1).replace("\n", " ").split(";") if m else []):
        lead = re.match(r"\s*((?:\d+,\s*)*\d+)\s", part)
        if lead:
            codes |= {int(c) for c in re.findall(r"\d+", lead.group(1))}
    return codes - {1}


def read_grammar(binary: str) -> Grammar:
    text = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60).stdout
    DOCUMENTED_EXIT_CODES.update(documented_exit_codes(text))
    names, in_sub = [], False
    for line in text.splitlines():
        if line.startswith("SUBCOMMANDS:"):
            in_sub = True
            continue
        if in_sub:
            m = re.match(r"^  ([a-z][\w-]*)(?:\s|$)", line)
            if m:
                names.append(m.group(1))
            elif line and not line.startswith(" "):
                break
    if not names:
        raise SystemExit(f"cli-fuzz: no subcommands in `{binary} --help`")
    return Grammar({c: parse_help(binary, c) for c in names if c != "help"})


# ------------------------------------------------------------------------------------------
# Setup


def run_quiet(binary, args, cwd):
    r = subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, SCENELINEAR_THREADS="2"))
    if r.returncode != 0:
        raise SystemExit(f"cli-fuzz: setup failed: scenelinear {' '.join(args)} exited {r.returncode}:\n{r.stderr[-2000:]}")


def write_json(path, obj):
    Path(path).write_text(json.dumps(obj, indent=1))


def make_inputs(binary: str, root: Path):
    """The inputs under root/in, made with the binary itself (a few seconds)."""
    i = root / "in"
    i.mkdir()
    sim = lambda *a: run_quiet(binary, ["simulate", *a, "-o", "in", "-q"], root)
    sim("--scene", "sunset", "--size", "128x96")
    sim("--scene", "sky-sun", "--size", "96x64", "--bracket", "-4,0,4")
    sim("--scene", "sky-dome", "--size", "128x128")
    sim("--scene", "colour-chart", "--size", "96x64", "--layout", "cfa", "--name", "cfa")
    run_quiet(binary, ["testchart", "-o", "in/chart.dng", "--width", "64", "--height", "48", "-q"], root)
    conv = lambda *a: run_quiet(binary, ["convert", *a, "-q"], root)
    conv("in/sunset.dng", "-o", "in/sunset.exr")
    conv("in/sunset.dng", "-o", "in/sunset.h5", "--analysis", "--region", "sky=10%,10%,28%,38%")
    conv("in/sunset.dng", "-o", "in/sunset-float.exr", "--exr-type", "float", "--exr-tiled", "--exr-tile-size", "16")
    conv("in/sunset.dng", "-o", "in/sunset-f32.h5", "--hdf5-type", "float32", "--hdf5-level", "3")
    conv("in/sky-dome.dng", "-o", "in/sky-dome-lum.exr", "--units", "luminance")
    conv("in/sky-dome.dng", "-o", "in/sky-dome-lum.h5", "--units", "luminance")
    run_quiet(binary, ["illuminance", "in/sky-dome.dng", "--projection", "equisolid", "-o", "in/sky-dome.hdr", "-q"], root)
    run_quiet(binary, ["calibrate", "in/sunset.dng", "--region", "ref=10%,10%,28%,38%", "--luminance", "100",
                       "-o", "in/camera.json"], root)
    conv("in/sunset.dng", "in/chart.dng", "in/cfa.dng", "-o", "in/batch/")
    shutil.copy(i / "batch" / "scenelinear-manifest.jsonl", i / "manifest.jsonl")
    # Hostile derivatives of the calibration, the camera model and the scene.
    cal = json.loads((i / "camera.json").read_text())
    other = json.loads(json.dumps(cal)); other["camera"]["model"] = "Another camera"
    write_json(i / "camera-other.json", other)
    for name, change in {"zero": ("constant", 0), "negative": ("constant", -352.4), "huge": ("constant", 1e308),
                         "tiny": ("constant", 5e-324), "uncertainty": ("relativeUncertainty", 1e308)}.items():
        c = json.loads(json.dumps(cal)); c[change[0]] = change[1]
        write_json(i / f"cal-{name}.json", c)
    c = json.loads(json.dumps(cal)); del c["constant"]
    write_json(i / "cal-missing.json", c)
    (i / "cal-1e999.json").write_text(json.dumps(cal).replace('"constant": 352', '"constant": 1e999352'))
    (i / "cal-deep.json").write_text("[" * 100000 + "]" * 100000)
    truth = json.loads((i / "sunset.truth.json").read_text())
    write_json(i / "camera-model.json", truth["camera"])
    bad_cams = {"adc64": {"adcBits": 64}, "adc0": {"adcBits": 0}, "adc63": {"adcBits": 63},
                "black": {"blackLevel": 1e300}, "fullwell0": {"fullWell": 0}, "fullwell-neg": {"fullWell": -1},
                "exposure0": {"exposureTime": 0}, "iso-huge": {"iso": 1e308}, "companding0": {"companding": 0},
                "companding64": {"companding": 64}, "matrix-huge": {"cameraMatrix": [1e308] * 9},
                "matrix-zero": {"cameraMatrix": [0] * 9}, "shading": {"lensShading": 1e9},
                "quantum0": {"quantumScale": 0}, "cfa-bogus": {"cfaPattern": "XXXX", "layout": "cfa"},
                "layout-bogus": {"layout": "bogus"}, "seed-neg": {"seed": -1}}
    for name, change in bad_cams.items():
        write_json(i / f"cam-{name}.json", {**truth["camera"], **change})
    write_json(i / "scene.json", truth["scene"])
    write_json(i / "scene-huge.json", {**truth["scene"], "width": 1 << 40, "height": 1 << 40})
    (i / "scene-nan.json").write_text(json.dumps(truth["scene"]).replace('"radius": 0.08', '"radius": 1e999'))
    (i / "scene-deep.json").write_text('{"elements":' + "[" * 50000 + "]" * 50000 + "}")
    bad_truth = json.loads(json.dumps(truth)); bad_truth["radianceToOutput"] = -1e308; bad_truth["patches"] = []
    write_json(i / "truth-bad.json", bad_truth)
    # Hostile files.
    (i / "adir.dng").mkdir()
    (i / "adir.exr").mkdir()
    for name in ("empty.dng", "empty.exr", "empty.h5", "empty.json"):
        (i / name).write_bytes(b"")
    (i / "text.dng").write_text("this is not a DNG\n")
    (i / "text.exr").write_text("this is not an EXR\n")
    (i / "text.h5").write_text("this is not HDF5\n")
    (i / "text.json").write_text("{not json")
    for src, dst in (("sunset.dng", "truncated.dng"), ("sunset.exr", "truncated.exr"), ("sunset.h5", "truncated.h5")):
        data = (i / src).read_bytes()
        (i / dst).write_bytes(data[: len(data) // 2])
    os.symlink("/dev/zero", i / "zero-link.dng")
    os.symlink("/dev/zero", i / "zero-link.exr")
    os.symlink("loop.dng", i / "loop.dng")
    shutil.copy(i / "sunset.dng", i / "ünïcode ☀.dng")
    shutil.copy(i / "sunset.dng", i / ("l" * 200 + ".dng"))
    shutil.copy(i / "sunset.dng", i / "-rf.dng")
    for p in [i, *i.rglob("*")]:
        if not p.is_symlink():
            p.chmod(0o755 if p.is_dir() else 0o644)
    ro = root / "ro"
    (ro / "sub").mkdir(parents=True)
    ro.chmod(0o555)
    (ro / "sub").chmod(0o555)


def unprivileged_user(want: str | None):
    if os.geteuid() != 0 or not want:
        return None
    try:
        pw = pwd.getpwnam(want)
    except KeyError:
        return None
    return pw.pw_uid, pw.pw_gid


# ------------------------------------------------------------------------------------------
# Running one vector

class Limits:
    def __init__(self, memory_gib: float, fsize_gib: float, nproc: int):
        self.memory = int(memory_gib * (1 << 30))
        self.fsize = int(fsize_gib * (1 << 30))
        self.nproc = nproc

    def __call__(self):  # preexec_fn: only setrlimit (async-signal-safe enough; workers are single-threaded)
        resource.setrlimit(resource.RLIMIT_AS, (self.memory, self.memory))
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.fsize, self.fsize))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if self.nproc:
            resource.setrlimit(resource.RLIMIT_NPROC, (self.nproc, self.nproc))


class Runner:
    def __init__(self, binary, root: Path, slot: int, timeout: float, limits: Limits, user):
        self.binary, self.root, self.timeout, self.limits, self.user = binary, root, timeout, limits, user
        self.dir = root / f"run{slot}"
        self.home = root / f"home{slot}"
        self.home.mkdir(exist_ok=True)
        self._own(self.home)
        self.current = None

    def _own(self, path):
        if self.user:
            os.chown(path, *self.user)

    def prepare(self, argv):
        if self.dir.exists():
            shutil.rmtree(self.dir, ignore_errors=True)
            if self.dir.exists():  # something the run made unremovable (mode 000 directories)
                subprocess.run(["chmod", "-R", "u+rwx", str(self.dir)], capture_output=True)
                shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir()
        os.symlink("../in", self.dir / "in")
        os.symlink("../ro", self.dir / "ro")
        for f in ("fifo.dng", "fifo.json", "fifo.exr", "fifo.h5"):
            os.mkfifo(self.dir / f)
        joined = "\0".join(argv)
        for ext in ("dng", "exr", "h5"):
            if f"victim.{ext}" in joined:
                shutil.copy(self.root / "in" / f"sunset.{ext}", self.dir / f"victim.{ext}")
        self._own(self.dir)
        for p in self.dir.iterdir():
            if not p.is_symlink():
                self._own(p)

    def env(self, extra):
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(self.home), "SCENELINEAR_THREADS": "1",
               "SWIFT_BACKTRACE": SWIFT_BACKTRACE, "TMPDIR": str(self.dir)}
        env.update(extra)
        if env.get("TMPDIR") in ("ro",):
            env["TMPDIR"] = str(self.dir / "ro")
        return env

    def run(self, argv, env_extra, stdin_path, stdout_path):
        """Runs one vector: dict(returncode, timed_out, seconds, stderr)."""
        if self.user is None and os.geteuid() == 0:
            # Runs as root (no unprivileged user): no output may land outside the run's directory.
            argv = [("rootguard/" if a in ("/", "..", "/proc/") or a.startswith("/proc/x") else a) for a in argv]
        self.prepare(argv)
        stdin = open(os.devnull, "rb") if not stdin_path else open(
            stdin_path if stdin_path.startswith("/") else self.dir / stdin_path, "rb")
        out = open(stdout_path if stdout_path else self.root / f"stdout-{self.dir.name}", "wb")
        err_path = self.root / f"stderr-{self.dir.name}"
        err = open(err_path, "wb")
        kwargs = {}
        if self.user:
            kwargs = dict(user=self.user[0], group=self.user[1], extra_groups=[])
        start = time.monotonic()
        timed_out = False
        try:
            p = subprocess.Popen([self.binary, *argv], cwd=self.dir, env=self.env(env_extra), stdin=stdin, stdout=out,
                                 stderr=err, start_new_session=True, preexec_fn=self.limits, **kwargs)
        except (OSError, ValueError) as e:
            stdin.close(); out.close(); err.close()
            return {"returncode": None, "timed_out": False, "seconds": 0.0, "stderr": f"cannot start: {e}",
                    "error": str(e)}
        self.current = p
        try:
            p.wait(self.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.kill(p.pid, signal.SIGQUIT)  # the Swift backtracer prints where it is
                p.wait(5)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                pass
        finally:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # the run's own process group only
            except (ProcessLookupError, PermissionError):
                pass
            p.wait()
            self.current = None
            stdin.close(); out.close(); err.close()
        seconds = time.monotonic() - start
        with open(err_path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 16000))
            stderr = f.read().decode("utf-8", "replace")
        return {"returncode": p.returncode, "timed_out": timed_out, "seconds": seconds, "stderr": stderr}

    def kill_current(self):
        p = self.current
        if p is not None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


FRAME = re.compile(r"^\s*\d+ (?:\[[^\]]*\] )*\s*0x[0-9a-f]+ (.+?) \+ \d+ in (\S+)(?: at (\S+))?")


def top_frame(stderr: str) -> str | None:
    """The first frame of the project's own code in a Swift backtrace ("Region.parse(_:) Region.swift:184")."""
    for line in stderr.splitlines():
        m = FRAME.match(line)
        if not m:
            continue
        func, image, where = m.groups()
        if where and "/Sources/" in where and "/checkouts/" not in where and "/.build/" not in where:
            file_line = re.sub(r":\d+$", "", where.rsplit("/", 1)[-1])
            return f"{func} {file_line}"
    return None


def fatal_message(stderr: str) -> str | None:
    for line in stderr.splitlines():
        if "Fatal error" in line or "Precondition failed" in line or "Assertion failed" in line:
            return re.sub(r"^.*?(Fatal error|Precondition failed|Assertion failed)", r"\1", line).strip()[:200]
    for marker in STDERR_MARKERS:
        for line in stderr.splitlines():
            if marker in line:
                return line.strip()[:200]
    return None


def normalise(msg: str) -> str:
    msg = re.sub(r"0x[0-9a-fA-F]+", "0x…", msg)
    msg = re.sub(r"\d+(\.\d+)?(e[+-]?\d+)?", "N", msg)
    return msg[:160]


def classify(result, cmd):
    """None, or (kind, detail) of a finding."""
    rc, stderr = result["returncode"], result["stderr"]
    if result.get("error"):
        return None  # the vector could not be started (e.g. an argument too long for execve): not the binary's
    if result["timed_out"]:
        return "timeout", None
    if rc is not None and rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        if name in ("SIGXFSZ",):
            return "file-size-limit", name
        return "signal", name
    if rc not in DOCUMENTED_EXIT_CODES:
        return ("internal-error" if rc == 1 else "undocumented-exit"), f"exit {rc}"
    if any(m in stderr for m in STDERR_MARKERS[:4]):
        return "stderr", f"exit {rc}"
    return None


def signature(cmd, kind, detail, stderr):
    frame = top_frame(stderr)
    if kind == "timeout":  # SIGQUIT's backtrace of a blocked system call has no frame of the project's, or none
        return f"{cmd or '(none)'} | timeout | {frame or '(outside the project code)'}"
    if kind in ("internal-error", "undocumented-exit") and not frame:
        lines = [l for l in stderr.splitlines() if l.strip()]
        where = normalise(lines[-1]) if lines else "(no stderr)"
    else:
        where = frame or normalise(fatal_message(stderr) or "") or "(no backtrace)"
    return f"{cmd or '(none)'} | {kind}{' ' + detail if detail else ''} | {where}"


def reproducer(binary, argv, env_extra, stdin, stdout):
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in env_extra.items())
    cmd = " ".join(shlex.quote(a) for a in [binary, *argv])
    redir = ""
    if stdin:
        redir += f" < {shlex.quote(stdin)}"
    if stdout:
        redir += f" > {shlex.quote(stdout)}"
    return f"{'SCENELINEAR_THREADS=1 ' if 'SCENELINEAR_THREADS' not in env_extra else ''}{env + ' ' if env else ''}{cmd}{redir}"


# ------------------------------------------------------------------------------------------
# Workers


def worker(slot, jobs, cfg, grammar_commands, deadline, max_runs, results):
    """Runs iterations slot, slot + jobs, … until the deadline. `results` is a SimpleQueue:
    its put writes at once, so the worker stays single-threaded and forking the runs (with
    their preexec_fn) is safe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    grammar = Grammar(grammar_commands)
    runner = Runner(cfg["binary"], Path(cfg["root"]), slot, cfg["timeout"], Limits(*cfg["limits"]),
                    tuple(cfg["user"]) if cfg["user"] else None)

    def stop(*_):
        runner.kill_current()
        os._exit(3)
    signal.signal(signal.SIGTERM, stop)
    index = slot
    while time.time() < deadline and (max_runs is None or index < max_runs):
        cmd, items, env, stdin, stdout, n = generate(grammar, cfg["seed"], index)
        argv = argv_of(grammar, cmd, items)
        res = runner.run(argv, env, stdin, stdout)
        found = classify(res, cmd)
        record = {"index": index, "cmd": cmd, "rc": res["returncode"], "seconds": res["seconds"],
                  "timed_out": res["timed_out"], "mutations": n}
        if found:
            kind, detail = found
            record["finding"] = {
                "seed": cfg["seed"], "index": index, "command": cmd, "kind": kind, "detail": detail,
                "signature": signature(cmd, kind, detail, res["stderr"]), "argv": argv,
                "items": [it.to_json() for it in items], "env": env, "stdin": stdin, "stdout": stdout,
                "returncode": res["returncode"], "timed_out": res["timed_out"], "seconds": round(res["seconds"], 2),
                "stderr_tail": res["stderr"][-6000:]}
        results.put(record)
        index += jobs
    results.put({"done": slot})


# ------------------------------------------------------------------------------------------
# Minimising and replaying


def same_finding(res, cmd, want_sig):
    found = classify(res, cmd)
    return bool(found) and signature(cmd, *found, res["stderr"]) == want_sig


def minimise(runner, grammar, finding, budget_seconds, log):
    """Greedy: drop items (and environment variables, and stdin) while the signature stays the same."""
    cmd = finding["command"]
    items = [Item.from_json(j) for j in finding["items"]]
    env, stdin, stdout = dict(finding["env"]), finding["stdin"], finding["stdout"]
    want = finding["signature"]
    end = time.time() + budget_seconds
    tries = 0

    def still(items_, env_, stdin_, stdout_):
        nonlocal tries
        tries += 1
        return same_finding(runner.run(argv_of(grammar, cmd, items_), env_, stdin_, stdout_), cmd, want)

    changed = True
    while changed and time.time() < end:
        changed = False
        for k in range(len(items) - 1, -1, -1):
            if time.time() >= end:
                break
            trial = items[:k] + items[k + 1:]
            if still(trial, env, stdin, stdout):
                items, changed = trial, True
        for key in list(env):
            if time.time() < end:
                trial = {k: v for k, v in env.items() if k != key}
                if still(items, trial, stdin, stdout):
                    env, changed = trial, True
        if stdout and time.time() < end and still(items, env, stdin, None):
            stdout, changed = None, True
    argv = argv_of(grammar, cmd, items)
    log(f"cli-fuzz: shrunk {len(finding['argv'])} → {len(argv)} arguments in {tries} runs: {want}")
    return {"argv": argv, "items": [it.to_json() for it in items], "env": env, "stdin": stdin, "stdout": stdout}


def snapshot_binary(binary, root: Path, wait_seconds: float):
    """A private copy of the binary: a rebuild replacing it during the run (the linker
    rewriting the file under running processes) must not turn into findings. Waits, polling
    every 30 s, up to wait_seconds for a binary that is missing or does not run yet."""
    end = time.time() + wait_seconds
    copy = root / "bin" / "scenelinear"
    copy.parent.mkdir(exist_ok=True)
    copy.parent.chmod(0o755)
    while True:
        try:
            shutil.copy2(binary, copy)
            copy.chmod(0o755)
            if subprocess.run([str(copy), "--version"], capture_output=True, timeout=60).returncode == 0:
                return str(copy)
        except (OSError, subprocess.SubprocessError):
            pass
        if time.time() >= end:
            raise SystemExit(f"cli-fuzz: no working binary at {binary} (swift build --product scenelinear)")
        print(f"cli-fuzz: waiting for {binary}", file=sys.stderr, flush=True)
        time.sleep(30)


def setup_root(binary, wait_seconds=0.0):
    """The temporary directory: the binary's copy and the inputs. Returns (root, copy)."""
    root = Path(tempfile.mkdtemp(prefix="scenelinear-cli-fuzz-"))
    root.chmod(0o755)
    try:
        copy = snapshot_binary(binary, root, wait_seconds)
        make_inputs(copy, root)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return root, copy


def check_user(binary, root, user):
    """The unprivileged user must be able to run the binary and read the inputs."""
    if not user:
        return None
    try:
        r = subprocess.run([binary, "info", "in/sunset.dng"], cwd=root, capture_output=True, timeout=60,
                           user=user[0], group=user[1], extra_groups=[])
        if r.returncode == 0:
            return user
    except (OSError, subprocess.SubprocessError):
        pass
    print("cli-fuzz: warning: the runs cannot be made as an unprivileged user; running as root "
          "(the read-only directory is not read-only then)", file=sys.stderr)
    return None


def replay(args, binary, paths):
    files = []
    for p in paths:
        p = Path(p)
        files += sorted(p.glob("*.json")) if p.is_dir() else [p]
    files = [f for f in files if not f.name.startswith("summary")]
    if not files:
        print("cli-fuzz: nothing to replay", file=sys.stderr)
        return 2
    user = unprivileged_user(args.run_as)
    root, copy = setup_root(binary, args.wait_for_binary)
    try:
        read_grammar(copy)  # the documented exit codes
        user = check_user(copy, root, user)
        runner = Runner(copy, root, 0, args.timeout, Limits(args.memory_gib, 2, args.nproc if user else 0), user)
        still = 0
        for f in files:
            d = json.loads(f.read_text())
            res = runner.run(d["argv"], d.get("env", {}), d.get("stdin"), d.get("stdout"))
            found = classify(res, d["command"])
            sig = signature(d["command"], *found, res["stderr"]) if found else None
            status = "REPRODUCED" if sig == d["signature"] else ("DIFFERENT " + sig if sig else "fixed")
            still += bool(found)
            print(f"{f.name}: {status} (exit {res['returncode']}, {res['seconds']:.1f} s)")
            if found and args.verbose:
                print(res["stderr"][-3000:])
        print(f"cli-fuzz: replayed {len(files)}, {still} still failing")
        return 1 if still else 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=str(DEFAULT_BINARY), help="the scenelinear binary (default: .build/debug/scenelinear)")
    ap.add_argument("--seconds", type=float, default=60, help="how long to fuzz (default 60)")
    ap.add_argument("--seed", type=int, default=1, help="seed: iteration i of a seed is always the same vector (default 1)")
    ap.add_argument("--jobs", type=int, default=2, help="parallel runs (default 2)")
    ap.add_argument("--runs", type=int, default=None, help="stop after this many iterations (also bounded by --seconds)")
    ap.add_argument("--corpus-dir", default=str(DEFAULT_CORPUS), help="where findings are written (default Fuzz/crashes/cli)")
    ap.add_argument("--timeout", type=float, default=20, help="seconds per run before it counts as a hang (default 20)")
    ap.add_argument("--memory-gib", type=float, default=6, help="RLIMIT_AS of each run, GiB (default 6)")
    ap.add_argument("--nproc", type=int, default=2048, help="RLIMIT_NPROC of the runs made as --run-as (default 2048)")
    ap.add_argument("--run-as", default="nobody", help="when started as root, run the binary as this user (default nobody; '' = root)")
    ap.add_argument("--minimise-seconds", type=float, default=90, help="time to shrink new distinct findings (default 90; 0 = off)")
    ap.add_argument("--keep-per-signature", type=int, default=3, help="findings saved per distinct signature (default 3)")
    ap.add_argument("--wait-for-binary", type=float, default=0, metavar="SECONDS",
                    help="wait up to this long (polling every 30 s) for a missing binary (default 0)")
    ap.add_argument("--replay", nargs="+", metavar="FINDING", help="run saved findings (files or directories) again")
    ap.add_argument("--print-vectors", type=int, metavar="N", help="print the first N vectors of the seed and exit")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    binary = str(Path(args.binary) if Path(args.binary).is_absolute() else (REPO / args.binary))
    if not os.access(binary, os.X_OK) and args.wait_for_binary <= 0:
        print(f"cli-fuzz: no binary at {binary} (swift build --product scenelinear)", file=sys.stderr)
        return 2
    if args.replay:
        return replay(args, binary, args.replay)

    if args.print_vectors:
        grammar = read_grammar(binary)
        for i in range(args.print_vectors):
            cmd, items, env, stdin, stdout, n = generate(grammar, args.seed, i)
            print(i, reproducer("scenelinear", argv_of(grammar, cmd, items), env, stdin, stdout))
        return 0

    corpus = Path(args.corpus_dir)
    corpus = corpus if corpus.is_absolute() else Path.cwd() / corpus
    corpus.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    user = unprivileged_user(args.run_as)
    root, copy = setup_root(binary, args.wait_for_binary)
    workers = []
    try:
        grammar = read_grammar(copy)
        user = check_user(copy, root, user)
        setup_seconds = time.time() - t0
        print(f"cli-fuzz: seed {args.seed}, {args.jobs} jobs, {args.seconds:g} s, timeout {args.timeout:g} s, "
              f"{len(grammar.commands)} commands, inputs made in {setup_seconds:.1f} s"
              f"{', runs as ' + args.run_as if user else ''}", flush=True)
        cfg = {"binary": copy, "root": str(root), "timeout": args.timeout, "seed": args.seed,
               "limits": (args.memory_gib, 2, args.nproc if user else 0), "user": list(user) if user else None}
        ctx = multiprocessing.get_context("fork")
        results = ctx.SimpleQueue()
        start = time.time()
        deadline = start + args.seconds
        for slot in range(args.jobs):
            p = ctx.Process(target=worker, args=(slot, args.jobs, cfg, grammar.commands, deadline, args.runs, results))
            p.start()
            workers.append(p)
        runs, by_cmd, exits, sigs, findings, busy = 0, {}, {}, {}, 0, 0.0
        done = 0
        saved = {}
        first = {}
        while done < len(workers):
            if results.empty():
                if not any(p.is_alive() for p in workers) and results.empty():
                    break
                time.sleep(0.1)
                continue
            rec = results.get()
            if "done" in rec:
                done += 1
                continue
            runs += 1
            busy += rec["seconds"]
            by_cmd[rec["cmd"]] = by_cmd.get(rec["cmd"], 0) + 1
            key = "timeout" if rec["timed_out"] else str(rec["rc"])
            exits[key] = exits.get(key, 0) + 1
            f = rec.get("finding")
            if not f:
                if args.verbose:
                    print(f"  #{rec['index']} {rec['cmd']} → {key} ({rec['seconds']:.2f} s)")
                continue
            findings += 1
            sig = f["signature"]
            sigs[sig] = sigs.get(sig, 0) + 1
            repro = reproducer(binary, f["argv"], f["env"], f["stdin"], f["stdout"])
            f["reproducer"] = repro
            if saved.get(sig, 0) < args.keep_per_signature:
                saved[sig] = saved.get(sig, 0) + 1
                digest = hashlib.sha1(sig.encode()).hexdigest()[:10]
                path = corpus / f"{f['kind']}-{f['command'] or 'none'}-{digest}-s{args.seed}-{f['index']}.json"
                path.write_text(json.dumps(f, indent=1, ensure_ascii=False))
                f["file"] = str(path)
                if sig not in first:
                    first[sig] = f
                print(f"cli-fuzz: FINDING {sig}\n  reproduce (in the inputs' directory, see --replay): {repro}\n"
                      f"  saved {path}", flush=True)
        for p in workers:
            p.join(5)
        elapsed = time.time() - start
        # Shrink each new distinct finding (not hangs: each try would take the whole timeout).
        minimised = {}
        if args.minimise_seconds > 0 and first:
            runner = Runner(copy, root, 99, args.timeout, Limits(*cfg["limits"]), user)
            end = time.time() + args.minimise_seconds
            for sig, f in first.items():
                if f["kind"] == "timeout" or time.time() >= end:
                    continue
                per = max(5.0, (end - time.time()) / max(1, sum(1 for s in first if s not in minimised)))
                small = minimise(runner, grammar, f, per, lambda m: print(m, flush=True))
                small["reproducer"] = reproducer(binary, small["argv"], small["env"], small["stdin"], small["stdout"])
                minimised[sig] = small
                Path(f["file"]).write_text(json.dumps({**f, "minimal": small}, indent=1, ensure_ascii=False))
        summary = {"seed": args.seed, "jobs": args.jobs, "seconds": round(elapsed, 1), "runs": runs,
                   "runs_per_second": round(runs / elapsed, 2) if elapsed else None, "findings": findings,
                   "distinct": [{"signature": s, "count": n, "example": first[s]["file"] if s in first else None,
                                 "reproducer": (minimised.get(s) or first.get(s, {})).get("reproducer")}
                                for s, n in sorted(sigs.items(), key=lambda kv: -kv[1])],
                   "runs_by_command": dict(sorted(by_cmd.items())), "exit_codes": dict(sorted(exits.items())),
                   "mean_run_seconds": round(busy / runs, 3) if runs else None}
        (corpus / f"summary-s{args.seed}.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False))
        print(f"cli-fuzz: exit codes {json.dumps(summary['exit_codes'])}")
        print(f"cli-fuzz: runs by command {json.dumps(summary['runs_by_command'])}")
        for d in summary["distinct"]:
            print(f"cli-fuzz: {d['count']:5d} × {d['signature']}\n            {d['reproducer']}")
        print(f"cli-fuzz: {runs} runs, {findings} findings ({len(sigs)} distinct) in {elapsed:.0f} s "
              f"({summary['runs_per_second']} runs/s, seed {args.seed})")
        return 1 if findings else 0
    except KeyboardInterrupt:
        for p in workers:
            p.terminate()
        return 130
    finally:
        for p in workers:
            if p.is_alive():
                p.terminate()
                p.join(10)
        shutil.rmtree(root, ignore_errors=True)
        if root.exists():
            subprocess.run(["chmod", "-R", "u+rwx", str(root)], capture_output=True)
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
