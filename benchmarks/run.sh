#!/usr/bin/env bash
# The benchmark in one command: installs what is missing (scripts/bootstrap.sh and the
# Debian package dcraw, a peer), builds the release binary, then runs benchmarks/bench.py
# with the arguments given here, e.g.
#   benchmarks/run.sh --quick
#   benchmarks/run.sh --sizes 12,48 --runs 5 --out report.md --json report.json
# or, with --merge first, benchmarks/merge_bench.py (brackets; installs the peer HDRutils):
#   benchmarks/run.sh --merge --sizes 12 --runs 3
# or, with --jxl first, benchmarks/jxl_bench.py (the DNG SDK's JPEG XL samples, fetched first,
# against imagecodecs' decode of their tiles):
#   benchmarks/run.sh --jxl --runs 3
# The report goes to stdout; progress and build output to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh >&2

if ! command -v dcraw >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    install_dcraw() {
        DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
            --no-install-recommends dcraw >&2
    }
    echo "run.sh: installing dcraw" >&2
    install_dcraw || { $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq >&2 && install_dcraw; }
fi

${SWIFT:-swift} build -c release >&2

if [ "${1:-}" = "--merge" ]; then
    shift
    .venv/bin/python -c "import HDRutils" 2>/dev/null || .venv/bin/pip install -q HDRutils >&2
    exec .venv/bin/python benchmarks/merge_bench.py "$@"
fi
if [ "${1:-}" = "--jxl" ]; then
    shift
    scripts/fetch-dng-sdk-samples.sh >&2
    exec .venv/bin/python benchmarks/jxl_bench.py "$@"
fi
exec .venv/bin/python benchmarks/bench.py "$@"
