# SceneLinear — the two commands a user needs:
#   make demo   installs what is missing, builds, converts the bundled sample DNG, shows what it wrote,
#               installs the Python package into .venv and runs the README's Python example
#   make test   installs what is missing, builds and runs every test (unit, end-to-end, external readers),
#               then the batch recipes on a private one-node Slurm cluster and with GNU parallel
#               (make test-slurm, docs/batch.md), the decoders under AddressSanitizer and a short
#               fuzz run of each libFuzzer target.
#               Tests whose tools or data are missing are reported as skipped, by name and count;
#               with SCENELINEAR_REQUIRE_TOOLS=1 (CI) a missing tool the bootstrap installs fails them.

SWIFT ?= swift
PYTHON := $(CURDIR)/.venv/bin/python
RELEASE_BIN := .build/release/scenelinear
# The tests' build: optimised, with internal names visible to the test targets, in a scratch
# directory of its own so that it and `make release` (the demo, the benchmarks: no
# -enable-testing) do not rebuild each other. The main suite runs in about a sixth of an
# unoptimised build's time; the unoptimised code with its assertions runs in `make test-asan`.
TEST_SCRATCH := $(CURDIR)/.build-test
TEST_BUILD := -c release -Xswiftc -enable-testing --scratch-path $(TEST_SCRATCH)
TEST_BIN := $(TEST_SCRATCH)/release/scenelinear
SAMPLE := datasets/sample/chart.dng
DEMO_OUT := demo-output

# Test suites run again under AddressSanitizer by `make test-asan`: those that read untrusted
# bytes (the container, the decoders, the opcode lists, the EXR, HDF5 and Radiance readers,
# the semantic masks, the malformed corpus, the engine over them) and those that hand our
# buffers to a C library's readers and writers (libtiff, libjxl, libjpeg, HDF5, OpenEXR, zlib,
# libdeflate, libcrypto). The simulator, batches, charts and thread-count checks run on top
# of these and only in the main suite (under AddressSanitizer they took 8 of its 13 minutes
# of CPU); the fuzz targets below run the parsers under AddressSanitizer as well.
ASAN_SUITES := DNGContainerTests|RunLengthDeflateTests|LosslessJPEGTests|RawDecodeTests|LinearizeTests|OpcodesTests|DemosaicTests|ImageExchangeTests|SemanticMasksTests|MalformedCorpusTests|StreamingDevelopTests|OpcodeList1Tests|DigestTests|RoundTripTests|EXRStreamTests|HDF5StreamTests
FUZZ_SECONDS ?= 20
SUNSET_REGIONS := --region sky=10%,10%,28%,38% --region sun=38%,69%,46%,75%

.PHONY: all bootstrap build release test test-python python wheel test-slurm test-asan fuzz-smoke demo clean

all: release

bootstrap:
	@scripts/bootstrap.sh

build: bootstrap
	$(SWIFT) build

release: bootstrap
	$(SWIFT) build -c release

test: bootstrap
	@scripts/fetch-dng-sdk-samples.sh || echo "make test: the DNG SDK sample files could not be fetched; the tests that read them are reported as skipped"
	scripts/check-unsafe.sh
	$(SWIFT) build --build-tests $(TEST_BUILD)
	SCENELINEAR_PYTHON=$(PYTHON) scripts/run-tests.sh $(TEST_BUILD)
	$(MAKE) --no-print-directory test-python
	$(MAKE) --no-print-directory test-slurm
	$(MAKE) --no-print-directory test-asan
	$(MAKE) --no-print-directory fuzz-smoke

# The Python package (python/, docs/python.md): installed into .venv from the build the tests
# made (no second build), then its pytest suite against the command line of that build.
test-python: bootstrap
	$(PYTHON) -m pip install -q --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps ./python \
		--config-settings swift-build-config=release --config-settings "swift-build-args=-Xswiftc -enable-testing --scratch-path $(TEST_SCRATCH)"
	$(SWIFT) build $(TEST_BUILD) --product scenelinear
	SCENELINEAR_BIN=$(TEST_BIN) $(PYTHON) -m pytest -q -p no:cacheprovider python/tests

# The Python package into .venv, built from an optimised library (`import scenelinear`).
python: bootstrap
	$(PYTHON) -m pip install -q --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps ./python

# A wheel of the Python package with the Swift runtime bundled, in dist/, checked in a new
# virtual environment that cannot reach the toolchain (scripts/check-wheel.sh; docs/python.md).
wheel: release
	@command -v patchelf >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends patchelf
	scripts/check-wheel.sh

# The batch recipes of docs/batch.md (job arrays, a cancel and resubmit, reruns of single indices,
# refused array shapes, GNU parallel) on a private one-node Slurm cluster started in a temporary
# directory and stopped at the end; about 80 s. SLURM_RUNS=20 repeats the job arrays 20 times (7 min).
SLURM_RUNS ?= 1
test-slurm: bootstrap
	$(SWIFT) build $(TEST_BUILD) --product scenelinear
	SCENELINEAR_BIN=$(TEST_BIN) SCENELINEAR_PYTHON=$(PYTHON) scripts/slurm-batch-test.sh --runs $(SLURM_RUNS)

# The parsers and decoders under AddressSanitizer (a separate build in .build-asan), the
# command-line tests running that build's binary. libhdf5 asks malloc for sizes it reads from a
# damaged file and reports NULL as an error: allocator_may_return_null=1 lets AddressSanitizer
# return NULL as glibc does, instead of stopping the process (Fuzz/run.sh does the same).
test-asan: bootstrap
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	SCENELINEAR_TEST_SANITIZER=address SCENELINEAR_PYTHON=$(PYTHON) ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 scripts/run-tests.sh --sanitize=address \
		--scratch-path .build-asan --filter '$(ASAN_SUITES)'

# Each libFuzzer target for FUZZ_SECONDS, two at a time (Fuzz/smoke.sh, docs/robustness.md), built
# once, unoptimised (half the build time of the optimised targets Fuzz/run.sh builds by default for
# long runs); a crash fails the run. Beside them, the
# command-line fuzzer (Fuzz/cli_fuzz.py) for FUZZ_SECONDS against the tests' binary: random argument
# vectors for every command; a signal, a hang or an undocumented exit code fails the run. Its seed is
# fixed (CLI_FUZZ_SEED, 1) so that a failure here is the same vector on any machine; explore with
# other seeds by hand (make fuzz-smoke CLI_FUZZ_SEED=$(date +%s)), the seed is printed.
CLI_FUZZ_SEED ?= 1
export CLI_FUZZ_SEED
fuzz-smoke: export SCENELINEAR_FUZZ_CONFIG = debug
fuzz-smoke: export SCENELINEAR_BIN = $(TEST_BIN)
fuzz-smoke: export SCENELINEAR_PYTHON = $(PYTHON)
fuzz-smoke: bootstrap
	$(SWIFT) build $(TEST_BUILD) --product scenelinear
	Fuzz/smoke.sh $(FUZZ_SECONDS)

demo: release
	@mkdir -p $(DEMO_OUT)
	$(RELEASE_BIN) info $(SAMPLE)
	@echo
	$(RELEASE_BIN) convert $(SAMPLE) -o $(DEMO_OUT)/ --format exr,hdf5 --timings
	@echo
	@echo "exrheader $(DEMO_OUT)/chart.exr (excerpt):"
	@exrheader $(DEMO_OUT)/chart.exr | sed -n -e '/^chromaticities/,/white/p' -e '/^colorInteropID/p' -e '/^compression/p' -e '/^dataWindow/p' -e '/^sceneLinear:exposure/p'
	@echo "h5dump -H $(DEMO_OUT)/chart.h5 (datasets):"
	@h5dump -H -A 0 $(DEMO_OUT)/chart.h5 | grep -E 'DATASET|DATATYPE|DATASPACE'
	@$(PYTHON) scripts/compare_expected.py $(DEMO_OUT)/chart.h5 datasets/sample/chart-expected.h5
	@echo
	$(RELEASE_BIN) validate datasets/sim/sunset.dng --plot $(DEMO_OUT)/sunset-validation.png
	@echo
	$(RELEASE_BIN) ratio datasets/sim/sunset.dng $(SUNSET_REGIONS)
	$(RELEASE_BIN) report datasets/sim/sunset.dng $(SUNSET_REGIONS) -o $(DEMO_OUT)/sunset-report.html
	@echo
	@echo "The Python package (import scenelinear), installed into .venv; the README's example:"
	@$(MAKE) --no-print-directory python
	$(PYTHON) scripts/run_readme_example.py

clean:
	rm -rf .build .build-asan Fuzz/.build-fuzz $(DEMO_OUT)
