"""Timing whole processes for the benchmarks: wall time and peak resident memory."""
import subprocess
import sys


def timed(args):
    """Seconds and peak resident MB (MiB) of one process, fork to exit, as /usr/bin/time
    measures them; ends the benchmark with the process's error output when it fails."""
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({r.returncode}): {r.stderr[-2000:]}")
    seconds, kb = r.stderr.strip().splitlines()[-1].split()
    return float(seconds), int(kb) / 1024
