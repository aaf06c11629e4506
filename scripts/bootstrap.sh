#!/usr/bin/env bash
# Installs what SceneLinear needs on Debian 12, idempotently:
#   - Debian packages: the C libraries (libtiff, HDF5, OpenEXR, OpenSSL's libcrypto, zlib,
#     libdeflate, libjxl, libjpeg-turbo, Cairo and Pango for the charts) and the independent
#     tools the tests check outputs with (exrheader/exrinfo, h5dump, tiffdump, exiftool,
#     pdftoppm, and Blender, whose headless image loader the EXR layout is tested against:
#     about 160 packages and 0.85 GB, measured at about one minute to install here);
#   - the batch recipes' tools for scripts/slurm-batch-test.sh: Slurm (slurmctld, slurmd and
#     the client commands), MUNGE and GNU parallel. No daemon is started by the install (a
#     policy-rc.d refusing service starts is put in place for the install when none is there;
#     without systemd the packages' postinst scripts would otherwise start a system munged):
#     the test runs its own private cluster with scripts/slurm-cluster.sh;
#   - a Python virtual environment in .venv with the independent readers used by the tests
#     and notebooks (h5py, OpenEXR, numpy, imagecodecs, tifffile, OpenColorIO, xarray with
#     h5netcdf and netCDF4, jsonschema).
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(pkg-config libtiff-dev libhdf5-dev libopenexr-dev libssl-dev zlib1g-dev libdeflate-dev libjxl-dev
          libjpeg62-turbo-dev libcairo2-dev libpango1.0-dev fonts-dejavu-core openexr hdf5-tools libtiff-tools libimage-exiftool-perl
          poppler-utils blender openimageio-tools python3-venv slurmctld slurmd slurm-client munge parallel)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "bootstrap: installing Debian packages: ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    # munge's, slurmctld's and slurmd's postinst scripts start their service through
    # invoke-rc.d; with no policy-rc.d (and no systemd) that would leave a system munged running.
    # A temporary policy-rc.d that refuses every start (exit 101) keeps the install inert.
    policy=/usr/sbin/policy-rc.d
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\n# temporary, from scenelinear scripts/bootstrap.sh: no service starts during the install\nexit 101\n' \
            | $sudo tee "$policy" >/dev/null
        $sudo chmod 755 "$policy"
        trap '$sudo rm -f "$policy"' EXIT
    fi
    $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}"
fi

# The project's own pkg-config files (scripts/pkgconfig/*.pc), where SwiftPM's pkg-config
# search finds them: the compile flags without link flags of the modules whose libraries are
# loaded on first use (Cairo and Pango, libhdf5, libtiff, the OpenEXR C++ library).
pc_dir=/usr/local/lib/pkgconfig
for file in scripts/pkgconfig/*.pc; do
    pc=$(basename "$file")
    if ! cmp -s "$file" "$pc_dir/$pc"; then
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo mkdir -p "$pc_dir"
        $sudo cp "$file" "$pc_dir/$pc"
    fi
done

requirements=scripts/python-requirements.txt
stamp=.venv/.requirements.sha256
want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "bootstrap: preparing the Python environment in .venv"
    python3 -m venv .venv
    .venv/bin/python -m pip install -q --disable-pip-version-check -r "$requirements"
    echo "$want" > "$stamp"
fi
