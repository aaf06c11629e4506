#!/usr/bin/env bash
# Builds the libFuzzer targets with AddressSanitizer (optimised; SCENELINEAR_FUZZ_CONFIG=debug
# for a debug build) and runs one.
#
#   Fuzz/run.sh TARGET [SECONDS] [extra libFuzzer flags]
#   TARGET: container | lossless-jpeg | decode | exr | hdf5 | hdf5-h5py | scene
#   (hdf5-h5py: the hdf5 target from h5py's files instead of the project's, docs/robustness.md)
#   Fuzz/run.sh cli SECONDS   the command-line fuzzer (cli_fuzz.py) instead: random argument
#                         vectors for the binary SCENELINEAR_BIN, seed CLI_FUZZ_SEED (default 1),
#                         with the project's Python (SCENELINEAR_PYTHON, default ../.venv)
#   Fuzz/run.sh build     builds every target and writes the seeds, runs nothing; after it,
#                         SCENELINEAR_FUZZ_PREBUILT=1 lets runs of several targets at once
#                         skip the build (they would share one build directory; Fuzz/smoke.sh)
#
# The seed corpus is made by Fuzz/make-corpus.sh from files the project generates itself;
# crashes land in Fuzz/crashes/<target>/ (each one becomes a regression test).
set -euo pipefail
cd "$(dirname "$0")"
target=${1:?target: container, lossless-jpeg, decode, exr, hdf5, hdf5-h5py or scene}
seconds=${2:-60}
shift $(( $# > 1 ? 2 : 1 ))
case "$target" in
    cli) exec "${SCENELINEAR_PYTHON:-../.venv/bin/python}" cli_fuzz.py --binary "${SCENELINEAR_BIN:-../.build/debug/scenelinear}" \
             --seconds "$seconds" --seed "${CLI_FUZZ_SEED:-1}" "$@" ;;
    build) product="" ;;
    container) product=FuzzContainer ;;
    lossless-jpeg) product=FuzzLosslessJPEG ;;
    decode) product=FuzzDecode ;;
    exr) product=FuzzEXR ;;
    scene) product=FuzzScene ;;
    # libhdf5 keeps a few hundred bytes per malformed file it gave up on (inside the library,
    # unreachable from here): leak detection would stop every run at once. -detect_leaks=0
    # stops libFuzzer's own check; ASAN_OPTIONS stops the one each process of fork mode
    # (-fork=N) runs when it exits, which would otherwise count as a crashed job.
    # libhdf5 also asks malloc for sizes it reads from the file (an object header chunk's
    # length) and reports an error when it gets NULL, as glibc returns for an impossible
    # size; allocator_may_return_null=1 makes AddressSanitizer return NULL too, instead of
    # stopping the run on the request (a NULL libhdf5 did not check would still crash).
    hdf5|hdf5-h5py) product=FuzzHDF5; set -- -detect_leaks=0 "$@"
          export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" ;;
    *) echo "unknown target $target" >&2; exit 64 ;;
esac
ln -sfn .. scenelinear-root
log=$(mktemp)
config=${SCENELINEAR_FUZZ_CONFIG:-release}
# The build plan of this package goes stale when the main package gains or loses source
# files (it is a path dependency); let SwiftPM plan again (compiled objects are kept).
if [ "${SCENELINEAR_FUZZ_PREBUILT:-0}" != 1 ]; then
    rm -f ".build-fuzz/$config.yaml"
    if ! swift build -c "$config" ${product:+--product "$product"} --scratch-path .build-fuzz \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library >"$log" 2>&1; then
        grep -v "Cannot export local symbol" "$log" >&2
        rm -f "$log"
        exit 1
    fi
    ./make-corpus.sh
fi
rm -f "$log"
[ "$target" = build ] && exit 0
if [ ! -d "corpus/$target" ]; then
    echo "no seeds for $target: Fuzz/make-corpus.sh writes them with h5py (the project's Python environment, scripts/bootstrap.sh)" >&2
    exit 1
fi
mkdir -p "work/$target" "crashes/$target"
".build-fuzz/$config/$product" "work/$target" "corpus/$target" -max_total_time="$seconds" -max_len=262144 \
    -rss_limit_mb=4096 -artifact_prefix="crashes/$target/" -print_final_stats=1 "$@"
