#!/usr/bin/env bash
# Builds the Python package's wheel with the Swift runtime bundled (make wheel) into dist/,
# then checks it where no Swift toolchain is: a new virtual environment in a temporary
# directory, the wheel and numpy installed, run with a PATH and environment that do not
# reach the toolchain; the example must run and no library of the toolchain's directory may
# be loaded. The system libraries the library links or loads on first use (OpenEXR, libjxl,
# HDF5, libtiff, ...) come from the Debian packages scripts/bootstrap.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
rm -rf dist && mkdir -p dist
.venv/bin/python -m pip wheel -q --no-build-isolation --no-deps ./python -w dist \
    --config-settings bundle-runtime=true
wheel=$(ls dist/scenelinear-*.whl)
echo "check-wheel: built $wheel ($(du -h "$wheel" | cut -f1))"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
/usr/bin/python3 -m venv "$scratch/venv"
"$scratch/venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel" numpy
cp datasets/sim/sunset.dng "$scratch/"
cat > "$scratch/check.py" <<'PY'
import sys
import scenelinear as sl
with sl.open("sunset.dng", units="luminance") as img:
    assert img.image().shape == (384, 512, 3)
r = sl.stats("sunset.dng", regions={"sky": "10%,10%,28%,38%"}, units="luminance")
print("sky", r["sky"].Y.mean.value, "cd/m²")
toolchain = sys.argv[1]
maps = open("/proc/self/maps").read()
loaded = sorted({line.split()[-1] for line in maps.splitlines() if line.split()[-1].startswith("/") and ".so" in line})
from_toolchain = [p for p in loaded if p.startswith(toolchain)]
assert not from_toolchain, from_toolchain
print(len(loaded), "libraries loaded; none from", toolchain)
PY
(cd "$scratch" && env -i HOME="$HOME" PATH=/usr/bin:/bin "$scratch/venv/bin/python" check.py "$toolchain")
echo "check-wheel: the wheel runs without the Swift toolchain"
