# SceneLinear — the two commands a user needs:
#   make demo   installs what is missing, builds, converts the bundled sample DNG, shows what it wrote
#   make test   installs what is missing, builds and runs every test (unit, end-to-end, external readers)

SWIFT ?= swift
PYTHON := $(CURDIR)/.venv/bin/python
RELEASE_BIN := .build/release/scenelinear
SAMPLE := datasets/sample/chart.dng
DEMO_OUT := demo-output

.PHONY: all bootstrap build release test demo clean

all: release

bootstrap:
	@scripts/bootstrap.sh

build: bootstrap
	$(SWIFT) build

release: bootstrap
	$(SWIFT) build -c release

test: bootstrap
	$(SWIFT) build --build-tests
	SCENELINEAR_PYTHON=$(PYTHON) $(SWIFT) test --skip-build

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
	$(RELEASE_BIN) validate datasets/sim/sunset.dng

clean:
	rm -rf .build $(DEMO_OUT)
