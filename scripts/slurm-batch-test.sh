#!/usr/bin/env bash
# The batch recipes of docs/batch.md on a real Slurm cluster: a private one-node cluster on this
# machine (scripts/slurm-cluster.sh, loopback only) runs `scenelinear convert` as job arrays, and
# GNU parallel runs the sharded recipe; after each, the output folder is checked.
#
#   scripts/slurm-batch-test.sh [--runs K] [--keep]
#
#   SCENELINEAR_BIN            the binary under test (default .build/debug/scenelinear)
#   SCENELINEAR_PYTHON         the Python with OpenEXR (default .venv/bin/python)
#   SCENELINEAR_REQUIRE_TOOLS  1: missing Slurm, MUNGE or GNU parallel fails the test instead of
#                              skipping it (the tools come from scripts/bootstrap.sh)
#   --runs K                   run case (a) K times, each into fresh folders (default 1)
#   SCENELINEAR_SLURM_TIME_LIMIT  seconds for the whole run (default 300, plus 60 per extra run)
#   --keep                     keep the temporary directory (cluster, inputs, outputs, logs)
#
# The cases (24 small simulated DNGs; jobs run one CPU each on a node that declares 8):
#   a  --array=0-7 into one folder, sharding implicit (SLURM_ARRAY_TASK_ID/COUNT/MIN/STEP);
#      at least 4 tasks must have run at once; then --array=0-7%4 into another, whose later
#      tasks start while others are writing (the shards' inputs differ in size);
#   b  an array cancelled (scancel) while its tasks run, then the same array resubmitted;
#   c  --array=0-3 with an explicit --shard ${SLURM_ARRAY_TASK_ID}/4; then one index's outputs
#      deleted and --array=2 resubmitted, two more deleted and --array=1,3 resubmitted;
#   d  --array=2,3 without --shard: every task refused with exit 64, nothing written;
#      --array=0-6:2 without --shard: 4 shards covering every input once;
#   e  seq 0 7 | parallel -j 4 scenelinear convert … --shard {}/8.
# After each: every input has one "ok" manifest record (two where its outputs were deleted and
# converted again), the outputs are the recorded ones (SHA-256) and complete EXRs (read whole
# with OpenEXR), no other output, no .<name>.partial-* temporary, every task's exit code is the
# expected one (the job script writes it; slurmctld's record is checked too, as sacct has no
# accounting here). One line per check, then `slurm: N passed, M failed`; exit 1 on a failure.
# The cluster is stopped on exit, whatever happens (trap); the whole run has a time limit.
set -uo pipefail
cd "$(dirname "$0")/.."

python=${SCENELINEAR_PYTHON:-.venv/bin/python}
missing=()
for tool in sbatch squeue scancel scontrol sinfo slurmctld slurmd munged mungekey parallel; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || missing+=("$tool")
done
[ -x "$python" ] || missing+=("$python")
if ((${#missing[@]})); then
    if [ "${SCENELINEAR_REQUIRE_TOOLS:-0}" = 1 ]; then
        echo "FAIL: slurm batch test: missing ${missing[*]} (scripts/bootstrap.sh installs them)"
        echo "slurm: 0 passed, 1 failed"
        exit 1
    fi
    echo "SKIP: slurm batch test: missing ${missing[*]} (scripts/bootstrap.sh installs them)"
    exit 0
fi

bin=${SCENELINEAR_BIN:-.build/debug/scenelinear}
if [ ! -x "$bin" ]; then
    echo "FAIL: slurm batch test: no binary at $bin (build it, or set SCENELINEAR_BIN)"
    echo "slurm: 0 passed, 1 failed"
    exit 1
fi
export SCENELINEAR_BIN=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

runs=1
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --runs=*) runs=${1#--runs=}; shift ;;
        --keep) keep=1; shift ;;
        *) echo "usage: $0 [--runs K] [--keep]" >&2; exit 64 ;;
    esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "--runs: a positive number" >&2; exit 64; }

work=$(mktemp -d "${TMPDIR:-/tmp}/scenelinear-slurm.XXXXXX")
cluster=$work/cluster
cleanup() {
    scripts/slurm-cluster.sh stop "$cluster" 2>/dev/null || true
    [ "$keep" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ "$keep" = 1 ] && echo "slurm batch test: keeping $work"
if ! scripts/slurm-cluster.sh start "$cluster"; then
    echo "FAIL: slurm batch test: the cluster did not start"
    echo "slurm: 0 passed, 1 failed"
    exit 1
fi
export SLURM_CONF=$cluster/slurm.conf

# The time limit: 5 minutes, and 1 more for each further run of case (a).
limit=${SCENELINEAR_SLURM_TIME_LIMIT:-$((300 + 60 * (runs - 1)))}
"$python" scripts/slurm_batch_test.py --work "$work" --runs "$runs" --time-limit "$limit" &
child=$!
trap 'kill -TERM $child 2>/dev/null; wait $child; exit 130' INT
trap 'kill -TERM $child 2>/dev/null; wait $child; exit 143' TERM
wait $child
