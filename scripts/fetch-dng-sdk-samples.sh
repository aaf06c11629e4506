#!/usr/bin/env bash
# Fetches the sample DNG files of the Adobe DNG SDK 1.7.1 (JPEG XL linear and Bayer raw
# images, ProfileGainTableMap2, ImageSequenceInfo, ImageStats, HDR/SDR profiles) into a
# cache directory outside the repository. They ship in the source archive of the PyPI
# package dngpy 0.1.3, under extern/sample_files/; this script downloads that archive
# with pip, checks its SHA-256 and unpacks only those files.
#
#   scripts/fetch-dng-sdk-samples.sh            # into $SCENELINEAR_DNG_SDK_SAMPLES,
#                                               # default ~/.cache/scenelinear/dng-sdk-samples
#
# Running it again does nothing once the files are in place. The tests that read the
# samples (RawDecodeTests.DNGSDKSampleTests) look in the same directory and are skipped
# when it is absent.
set -euo pipefail

version=0.1.3
archive=dngpy-$version.tar.gz
archive_sha256=10d84ff5b1b3b3bd72e92e4fa94a02e90f5e2d369297d0e10f90be91fd2345a8
marker=.dngpy-$version.complete

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
dest=${SCENELINEAR_DNG_SDK_SAMPLES:-$HOME/.cache/scenelinear/dng-sdk-samples}

dest=$(realpath -m "$dest")
case "$dest/" in
    "$repo"/*)
        echo "fetch-dng-sdk-samples: $dest is inside the repository; choose a directory outside it" >&2
        exit 2 ;;
esac
mkdir -p "$dest"

if [[ -f "$dest/$marker" ]]; then
    missing=0
    while read -r sum name; do
        [[ -f "$dest/$name" ]] || missing=1
    done < "$dest/$marker"
    if [[ $missing == 0 ]]; then
        echo "DNG SDK samples already in $dest"
        exit 0
    fi
fi

if [[ -n "${SCENELINEAR_PYTHON:-}" ]]; then
    python=$SCENELINEAR_PYTHON
elif [[ -x "$repo/.venv/bin/python" ]]; then
    python=$repo/.venv/bin/python
else
    python=python3
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/dng-sdk-samples.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Only dngpy itself as a source archive; pip still prepares its metadata, for which it
# installs the build backend from wheels in an isolated environment.
"$python" -m pip download --quiet --no-deps --no-binary dngpy "dngpy==$version" -d "$work"
echo "$archive_sha256  $work/$archive" | sha256sum --check --quiet

mkdir -p "$work/unpacked"
tar -xzf "$work/$archive" -C "$work/unpacked" --strip-components=3 --wildcards "dngpy-$version/extern/sample_files/*"
shopt -s nullglob
files=("$work/unpacked"/*)
if [[ ${#files[@]} == 0 ]]; then
    echo "fetch-dng-sdk-samples: no files under extern/sample_files/ in $archive" >&2
    exit 1
fi

# Move the files in, then write the marker (a SHA-256 list) last: an interrupted run
# leaves no marker and is redone.
rm -f "$dest/$marker"
for f in "${files[@]}"; do
    mv -f "$f" "$dest/"
done
(cd "$dest" && for f in "${files[@]}"; do sha256sum "$(basename "$f")"; done) > "$work/$marker"
mv "$work/$marker" "$dest/$marker"
echo "DNG SDK samples (${#files[@]} files) in $dest"
