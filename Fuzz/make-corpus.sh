#!/usr/bin/env bash
# Writes the fuzzers' seed corpus from files the project generates itself (idempotent):
# small EXR and HDF5 files written by `convert`, scene descriptions, small DNGs (LinearRaw and CFA, uncompressed and lossless JPEG, with a GainMap, BigTIFF-free)
# and lossless-JPEG streams cut out of them.
set -euo pipefail
cd "$(dirname "$0")"
bin=../.build/debug/scenelinear
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
