#!/usr/bin/env python3
"""Runs the README's Python example (its first ```python block) as written, from the
repository's root, with this interpreter; exits with its status."""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def example():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    if not blocks:
        sys.exit("README.md has no Python example")
    return blocks[0]


if __name__ == "__main__":
    code = example()
    print(code, end="", flush=True)
    print("--- output:", flush=True)
    sys.exit(subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode)
