#!/usr/bin/env bash
# A short run of every libFuzzer target and of the command-line fuzzer (`make fuzz-smoke`, part
# of `make test`): one build of all targets and their seeds, then the runs two at a time
# (libFuzzer runs on one core), each for SECONDS. Each target's output is printed when it ends (its last lines, or all of it when
# it failed); a crash, a timeout or running out of memory in any target, or a target that does
# not start, fails the whole run once every target has had its turn.
#
#   Fuzz/smoke.sh [SECONDS]
set -uo pipefail
cd "$(dirname "$0")"
seconds=${1:-20}
./run.sh build || exit 1
export SCENELINEAR_FUZZ_PREBUILT=1
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# Each entry: a target and its extra arguments (hdf5-h5py reads h5py's seeds as well).
runs=("container" "lossless-jpeg" "decode" "exr" "scene" "hdf5" "hdf5-h5py corpus/hdf5" "cli")
failed=()
run_pair() {
    local pids=() names=() i status target extra entry
    for entry in "$@"; do
        read -r target extra <<<"$entry"
        ./run.sh "$target" "$seconds" $extra >"$logs/$target.log" 2>&1 &
        pids+=($!)
        names+=("$target")
    done
    for i in "${!pids[@]}"; do
        if wait "${pids[$i]}"; then status=0; else status=$?; fi
        echo "== Fuzz/run.sh ${names[$i]} $seconds: exit $status"
        if [ "$status" -eq 0 ]; then
            tail -n 12 "$logs/${names[$i]}.log"
        else
            cat "$logs/${names[$i]}.log"
            failed+=("${names[$i]}")
        fi
    done
}
for ((k = 0; k < ${#runs[@]}; k += 2)); do
    run_pair "${runs[@]:k:2}"
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz smoke: failed: ${failed[*]} (crashes in Fuzz/crashes/<target>/)" >&2
    exit 1
fi
echo "fuzz smoke: ${#runs[@]} runs, $seconds s each, no findings"
