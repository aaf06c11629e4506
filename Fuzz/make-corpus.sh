#!/usr/bin/env bash
# Writes the fuzzers' seed corpus from files the project generates itself (idempotent):
# small EXR and HDF5 files written by `convert`, scene descriptions, small DNGs (LinearRaw and CFA, uncompressed and lossless JPEG, with a GainMap, BigTIFF-free)
# and lossless-JPEG streams cut out of them.
set -euo pipefail
cd "$(dirname "$0")"
# The command line that writes the files: SCENELINEAR_BIN (absolute), else the debug build.
bin=${SCENELINEAR_BIN:-../.build/debug/scenelinear}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# EXR and HDF5 files as `convert` writes them (the analysis commands' other inputs): small,
# with and without compression, a clip mask and semantic-mask layers' worth of attributes.
if [ ! -f corpus/.done-exchange ]; then
    [ -x "$bin" ] || (cd .. && swift build --product scenelinear >/dev/null)
    mkdir -p corpus/exr corpus/hdf5
    $bin testchart -o "$tmp/small.dng" --width 64 --height 48 >/dev/null
    for c in none zip piz rle; do
        $bin convert "$tmp/small.dng" -o "corpus/exr/small-$c.exr" --exr-compression $c --exr-clip-mask >/dev/null
    done
    $bin convert "$tmp/small.dng" -o corpus/hdf5/small.h5 >/dev/null
    $bin convert "$tmp/small.dng" -o corpus/hdf5/small-raw.h5 --hdf5-level 0 >/dev/null
    $bin convert "$tmp/small.dng" -o corpus/hdf5/small-analysis.h5 --analysis >/dev/null
    touch corpus/.done-exchange
fi
# Scene descriptions (`simulate --scene FILE.json`): the built-in scenes at 64×48, as the
# simulation records them (the "scene" of <name>.truth.json), and one scene with every
# element type.
if [ ! -f corpus/.done-scene ]; then
    [ -x "$bin" ] || (cd .. && swift build --product scenelinear >/dev/null)
    mkdir -p corpus/scene
    for s in grey-ramp colour-chart sunset; do
        $bin simulate --scene $s --size 64x48 --no-noise -o "$tmp" --name "scene-$s" -q
        python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))["scene"], sys.stdout)' \
            "$tmp/scene-$s.truth.json" > "corpus/scene/$s.json"
    done
    cat > corpus/scene/every-element.json <<'JSON'
{ "name": "every-element", "width": 64, "height": 48, "unit": "absolute",
  "background": [0.18, 0.18, 0.18],
  "elements": [
    { "type": "rect", "name": "sky", "rect": [0, 0, 0.4, 1], "rgb": [0.10, 0.14, 0.22] },
    { "type": "rect", "name": "pixels", "rect": [2, 3, 20, 30], "rgb": [1, 2, 3] },
    { "type": "disk", "name": "sun", "center": [0.7, 0.2], "radius": 0.05, "rgb": [0.9, 0.85, 0.7] },
    { "type": "ramp", "name": "grey", "rect": [0.4, 0, 0.6, 1], "steps": 16, "top": 0.95, "rgb": [1, 1, 1] },
    { "type": "gradient", "rect": [0.6, 0, 1, 1], "from": [0.01, 0.01, 0.01], "to": [0.5, 0.5, 0.5], "log": true },
    { "type": "gradient", "rect": [0.8, 0, 1, 0.5], "from": [0, 0, 0], "to": [1, 1, 1] }
  ] }
JSON
    touch corpus/.done-scene
fi
# The hdf5-h5py target's seeds: HDF5 layouts the project's writer does not make but the reader
# reads, written by h5py when the project's Python environment ($SCENELINEAR_PYTHON, else .venv)
# has it: contiguous and compact datasets, a user block, a fill value with unwritten chunks,
# the file format 1.10 chunk indexes; and the earliest file format (h5py's default), whose
# object headers have no checksum.
python=${SCENELINEAR_PYTHON:-../.venv/bin/python}
if [ ! -f corpus/.done-h5py ] && [ -x "$python" ] && "$python" -c "import h5py" 2>/dev/null; then
    mkdir -p corpus/hdf5-h5py
    "$python" - corpus/hdf5-h5py <<'PY'
import sys, os
import numpy as np, h5py
out = sys.argv[1]
data = np.linspace(-0.5, 2, 12 * 9 * 3).reshape(12, 9, 3)
def new(name, **kw):
    f = h5py.File(os.path.join(out, name + ".h5"), "w", **kw)
    f.attrs["format"] = "SceneLinear"
    f.attrs["format_version"] = np.int32(2)
    return f
def image(f, values, **kw):
    d = f.create_dataset("image", data=values, **kw)
    d.attrs["color_space"] = "lin_rec2020_scene"
    return d
with new("h5py-contiguous", userblock_size=512) as f:
    image(f, data.astype(np.float16))
    f.create_dataset("clip_mask", data=(np.arange(12 * 9) % 3).astype(np.uint8).reshape(12, 9))
with new("h5py-compact") as f:
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    d = h5py.Dataset(h5py.h5d.create(f.id, b"image", h5py.h5t.IEEE_F32LE, h5py.h5s.create_simple(data.shape), dcpl=dcpl))
    d[...] = data.astype(np.float32)
    d.attrs["color_space"] = "lin_rec2020_scene"
with new("h5py-fill") as f:
    d = f.create_dataset("image", shape=(12, 9, 3), dtype=np.float16, chunks=(5, 4, 3), fillvalue=0.25, compression="gzip", shuffle=True)
    d[0:5] = data[0:5].astype(np.float16)
    d.attrs["color_space"] = "lin_rec2020_scene"
    m = f.create_group("masks").create_dataset("sky", shape=(12, 9), dtype=np.float16, chunks=(4, 9), compression="gzip")
    m[4:8] = 0.5
for name, kw in [("h5py-v110-fixed", dict(chunks=(5, 4, 3), compression="gzip", shuffle=True)),
                 ("h5py-v110-extensible", dict(chunks=(5, 9, 3), compression="gzip", maxshape=(None, 9, 3))),
                 ("h5py-v110-btree2", dict(chunks=(5, 4, 3), maxshape=(None, None, 3)))]:
    with new(name, libver=("v110", "v110")) as f:
        image(f, data.astype(np.float16), **kw)
PY
    touch corpus/.done-h5py
fi
[ -f corpus/.done ] && exit 0
mkdir -p corpus/container corpus/decode corpus/lossless-jpeg
[ -x "$bin" ] || (cd .. && swift build --product scenelinear >/dev/null)
$bin testchart -o "$tmp/chart.dng" --width 64 --height 48 >/dev/null
$bin testchart -o "$tmp/chart-raw.dng" --width 64 --height 48 --uncompressed >/dev/null
echo '{"lensShading": 0.3, "storage": "lossless-jpeg"}' > "$tmp/shade.json"
$bin simulate --scene sunset --size 64x48 --camera "$tmp/shade.json" -o "$tmp" --name sim >/dev/null
$bin simulate --scene grey-ramp --size 64x48 --layout cfa -o "$tmp" --name cfa >/dev/null
for f in chart chart-raw sim cfa; do
    cp "$tmp/$f.dng" corpus/container/$f.dng
    cp "$tmp/$f.dng" corpus/decode/$f.dng
done
# Lossless-JPEG streams: every SOI…EOI run inside the lossless-JPEG DNGs.
python3 - "$tmp/chart.dng" "$tmp/sim.dng" "$tmp/cfa.dng" <<'PY'
import sys
n = 0
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    start = 0
    while True:
        a = data.find(b"\xff\xd8\xff\xc3", start)
        if a < 0:
            a = data.find(b"\xff\xd8", start)
            if a < 0 or data[a + 2:a + 4] not in (b"\xff\xc4", b"\xff\xc3"):
                break
        b = data.find(b"\xff\xd9", a)
        if b < 0:
            break
        open(f"corpus/lossless-jpeg/stream{n}.ljp", "wb").write(data[a:b + 2])
        n += 1
        start = b + 2
        if n >= 24:
            break
PY
touch corpus/.done
