"""The README's Python example runs as written, from the repository's root."""
import os
import subprocess
import sys

from conftest import REPO


def test_readme_example_runs():
    script = os.path.join(REPO, "scripts", "run_readme_example.py")
    r = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    example, output = r.stdout.split("--- output:\n")
    assert len(example.strip().splitlines()) == 5
    assert "Estimate(value=" in output and "kind='value'" in output and "budget=(BudgetItem(name='noise'" in output
