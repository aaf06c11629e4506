"""Fixtures of the Python package's tests: the installed package (or $SCENELINEAR_LIB), the
command line built from the same sources (for parity), and the repository's data sets."""
import json
import os
import shutil
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATASETS = os.path.join(REPO, "datasets")
SUNSET = os.path.join(DATASETS, "sim", "sunset.dng")
GREY_RAMP = os.path.join(DATASETS, "sim", "grey-ramp.dng")
CHART = os.path.join(DATASETS, "sample", "chart.dng")
SKY = "sky=10%,10%,28%,38%"
SUN = "sun=38%,69%,46%,75%"


def cli_path():
    return os.environ.get("SCENELINEAR_BIN", os.path.join(REPO, ".build", "debug", "scenelinear"))


@pytest.fixture(scope="session")
def cli():
    """Runs the command line; returns (exit code, stdout, stderr)."""
    path = cli_path()
    if not os.path.exists(path):
        pytest.fail(f"the command line is not built at {path} (swift build), or set SCENELINEAR_BIN")

    def run(*args):
        r = subprocess.run([path, *args], capture_output=True, text=True)
        return r.returncode, r.stdout, r.stderr
    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    def run(*args):
        code, out, err = cli(*args, "--json")
        assert code == 0, err
        return json.loads(out)
    return run


def require_tool(name):
    """A tool the bootstrap installs: missing, the test fails under SCENELINEAR_REQUIRE_TOOLS=1 and skips (named) otherwise."""
    if shutil.which(name):
        return
    if os.environ.get("SCENELINEAR_REQUIRE_TOOLS") == "1":
        pytest.fail(f"{name} is missing (scripts/bootstrap.sh installs it)")
    pytest.skip(f"{name} is not installed")


def shared_dataset_dir():
    """The shared real DNGs ($SCENELINEAR_SHARED_DATASETS, default ../shared/datasets beside the repository)."""
    return os.environ.get("SCENELINEAR_SHARED_DATASETS", os.path.join(REPO, "..", "shared", "datasets"))
