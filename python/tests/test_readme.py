"""The README's Python example runs as written, from the repository's root."""
import os
import re
import subprocess
import sys

from conftest import REPO


def test_readme_example_runs():
    text = open(os.path.join(REPO, "README.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "the README has no Python example"
    example = blocks[0]
    assert len(example.strip().splitlines()) == 5
    r = subprocess.run([sys.executable, "-c", example], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Estimate(value=" in r.stdout and "kind='value'" in r.stdout and "budget=(BudgetItem(name='noise'" in r.stdout
