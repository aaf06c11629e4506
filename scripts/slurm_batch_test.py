"""The cases of scripts/slurm-batch-test.sh, run against the cluster that script started.

Run by that script (which starts and stops the cluster and sets SLURM_CONF and
SCENELINEAR_BIN), not on its own: `slurm_batch_test.py --work DIR --runs K --time-limit S`.
"""

import argparse
import collections
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import OpenEXR

FINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                "BOOT_FAIL", "DEADLINE", "PREEMPTED", "REVOKED", "SPECIAL_EXIT"}
SCENES = ["sunset", "colour-chart", "grey-ramp"]
INPUTS = 24
# Shard k of 8 gets inputs k, k+8, k+16. Their sizes (0.02 to 0.5 MP) make shards 0-3 end at
# very different times, so that the tasks of a throttled array (--array=0-7%4) start while
# others are writing into the folder: Slurm starts a pending task a second or two after a
# slot frees.
SIZES = ["160x120", "320x240", "576x384", "816x612", "480x320", "512x352", "576x384", "640x416"]

JOB_SCRIPT = r"""#!/bin/bash
#SBATCH --cpus-per-task=1
# A task of a job array converting INPUT_DIR into OUTPUT_DIR as docs/batch.md shows; the
# shard is the job array's (SLURM_ARRAY_TASK_*), or ${SLURM_ARRAY_TASK_ID}/N when N is given.
# Its exit code, start and end times go to STATUS_DIR/exit-<job>_<task> (sacct has no
# accounting on the test cluster).
# usage: sbatch --array=… job.sh STATUS_DIR INPUT_DIR OUTPUT_DIR [N]
status_dir=$1 input_dir=$2 output_dir=$3 parts=${4:-}
start=$(date +%s.%N)
if [ -n "$parts" ]; then
    "$SCENELINEAR_BIN" convert "$input_dir/" -o "$output_dir/" --format exr --shard "${SLURM_ARRAY_TASK_ID}/$parts"
else
    "$SCENELINEAR_BIN" convert "$input_dir/" -o "$output_dir/" --format exr
fi
rc=$?
echo "$rc $start $(date +%s.%N)" > "$status_dir/exit-${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
exit $rc
"""


STUDY_SCRIPT = r"""#!/bin/bash
#SBATCH --cpus-per-task=1
# A task of a job array measuring a study's sets (docs/studies.md): its shard is the job
# array's. Exit code, start and end to STATUS_DIR/exit-<job>_<task>.
# usage: sbatch --array=… study.sh STATUS_DIR FRAMES_DIR STUDY_DIR
status_dir=$1 frames_dir=$2 study_dir=$3
start=$(date +%s.%N)
"$SCENELINEAR_BIN" sequence "$frames_dir" -o "$study_dir" --projection equidistant -q
rc=$?
echo "$rc $start $(date +%s.%N)" > "$status_dir/exit-${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
exit $rc
"""


class Deadline(Exception):
    pass


class Harness:
    def __init__(self, work, time_limit):
        self.work = work
        self.binary = os.environ["SCENELINEAR_BIN"]
        self.passed = 0
        self.failed = 0
        self.failures = []
        self.deadline = time.monotonic() + time_limit
        self.inputs_dir = os.path.join(work, "inputs")
        self.job = os.path.join(work, "job.sh")
        with open(self.job, "w") as f:
            f.write(JOB_SCRIPT)
        os.chmod(self.job, 0o755)
        self.exr_cache = {}

    # ---- reporting

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print(f"ok   {what}" + (f" ({detail})" if detail else ""), flush=True)
        else:
            self.failed += 1
            self.failures.append(what)
            print(f"FAIL {what}" + (f": {detail}" if detail else ""), flush=True)
        return ok

    def note(self, text):
        print(f"     {text}", flush=True)

    def remaining(self):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Deadline()
        return left

    def run(self, argv, **kwargs):
        return subprocess.run(argv, capture_output=True, text=True, timeout=self.remaining(), **kwargs)

    # ---- inputs

    def make_inputs(self):
        os.makedirs(self.inputs_dir)
        scratch = os.path.join(self.work, "simulated")
        jobs = []
        for i in range(INPUTS):
            scene = SCENES[i % len(SCENES)]
            name = f"in-{i:02d}-{scene}"
            jobs.append((name, [self.binary, "simulate", "--scene", scene, "--size", SIZES[i % 8], "--seed", str(1000 + i),
                                "--name", name, "-o", scratch, "--quiet"]))
        running = []
        errors = []
        # Two at a time: the machine has two cores.
        try:
            while jobs or running:
                while jobs and len(running) < 2:
                    name, argv = jobs.pop(0)
                    running.append((name, subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
                name, p = running[0]
                out, _ = p.communicate(timeout=self.remaining())
                running.pop(0)
                if p.returncode != 0:
                    errors.append(f"{name}: exit {p.returncode}: {out.strip()[-300:]}")
        finally:
            for _, p in running:
                p.kill()
                p.wait()
        for dng in glob.glob(os.path.join(scratch, "*.dng")):
            shutil.move(dng, self.inputs_dir)
        shutil.rmtree(scratch, ignore_errors=True)
        names = sorted(os.listdir(self.inputs_dir))
        digests = {hashlib.sha256(open(os.path.join(self.inputs_dir, n), "rb").read()).hexdigest() for n in names}
        self.check(not errors and len(names) == INPUTS and len(digests) == INPUTS,
                   f"inputs: {INPUTS} different DNGs simulated ({SIZES[0]} to {SIZES[-1]}, scenes {', '.join(SCENES)}, "
                   f"seeds 1000-{999 + INPUTS})",
                   "; ".join(errors) or f"{len(names)} files, {len(digests)} different")
        # The batch's order: inputs sorted by path, shard i taking positions ≡ i (mod n).
        self.inputs = names
        self.stems = [os.path.splitext(n)[0] for n in names]

    # ---- Slurm

    def submit(self, array, folder, parts=None):
        """Submits the job script as an array; returns the job id."""
        status = os.path.join(folder + ".status")
        os.makedirs(folder, exist_ok=True)
        os.makedirs(status, exist_ok=True)
        argv = ["sbatch", "--parsable", f"--array={array}", "--cpus-per-task=1", "--job-name=scenelinear-test",
                "-o", os.path.join(status, "slurm-%A_%a.out"), "-D", self.work,
                self.job, status, self.inputs_dir, folder] + ([str(parts)] if parts else [])
        r = self.run(argv)
        if r.returncode != 0:
            raise RuntimeError(f"sbatch {array}: {r.stderr.strip()}")
        return r.stdout.strip().split(";")[0]

    def task_states(self, job):
        """{task id: (state, exit code)} from slurmctld; pending ranges under their text."""
        r = self.run(["scontrol", "-o", "show", "job", job])
        states = {}
        if r.returncode != 0:
            return states
        for line in r.stdout.splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            task = fields.get("ArrayTaskId", "")
            key = int(task) if task.isdigit() else task
            states[key] = (fields.get("JobState", "?"), fields.get("ExitCode", "?"))
        return states

    def wait(self, job, limit=150, on_poll=None):
        """Waits until every task of the job is final; returns (states, most tasks seen running at once)."""
        end = time.monotonic() + min(limit, self.remaining())
        most_running = 0
        while True:
            states = self.task_states(job)
            running = sum(1 for s, _ in states.values() if s == "RUNNING")
            most_running = max(most_running, running)
            if on_poll and on_poll(states):
                on_poll = None
            if states and all(s in FINAL_STATES for s, _ in states.values()):
                return states, most_running
            if time.monotonic() > end:
                self.run(["scancel", job])
                raise RuntimeError(f"job {job} not finished after {limit} s: {states}")
            time.sleep(0.1)

    def exits(self, folder, job):
        """{task: (rc, start, end)} written by the job script."""
        out = {}
        for path in glob.glob(os.path.join(folder + ".status", f"exit-{job}_*")):
            task = int(path.rsplit("_", 1)[1])
            rc, start, end = open(path).read().split()
            out[task] = (int(rc), float(start), float(end))
        return out

    def task_output(self, folder, job, task):
        path = os.path.join(folder + ".status", f"slurm-{job}_{task}.out")
        try:
            return open(path, errors="replace").read().strip()
        except OSError:
            return "(no output file)"

    def check_tasks(self, label, folder, job, states, tasks, expect_rc=0):
        """Every task ended with expect_rc, by its exit file and by slurmctld."""
        exits = self.exits(folder, job)
        bad = []
        for t in tasks:
            state, code = states.get(t, ("missing", "?"))
            rc = exits.get(t, (None,))[0]
            want_state = "COMPLETED" if expect_rc == 0 else "FAILED"
            if rc != expect_rc or state != want_state or code != f"{expect_rc}:0":
                bad.append(f"task {t}: exit file {rc}, slurmctld {state} {code}; output: "
                           + self.task_output(folder, job, t)[-400:].replace("\n", " | "))
        extra = sorted(set(k for k in states if isinstance(k, int)) - set(tasks))
        if extra:
            bad.append(f"unexpected tasks {extra}")
        return self.check(not bad, f"{label}: tasks {','.join(map(str, tasks))} of job {job} exited {expect_rc}",
                          "; ".join(bad) if bad else f"slurmctld: {sorted(set(s for s, _ in states.values()))}")

    @staticmethod
    def concurrency(intervals):
        events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
        most = now = 0
        for _, d in events:
            now += d
            most = max(most, now)
        return most

    # ---- output folder

    def verify_exr(self, path):
        """'' when the file is a complete EXR (every channel read whole), else why not."""
        try:
            with OpenEXR.File(path, separate_channels=True) as f:
                part = f.parts[0]
                (x0, y0), (x1, y1) = part.header["dataWindow"]
                want = (y1 - y0 + 1, x1 - x0 + 1)
                for name, channel in part.channels.items():
                    if channel.pixels is None or tuple(channel.pixels.shape[:2]) != want:
                        return f"channel {name}: {None if channel.pixels is None else channel.pixels.shape}, want {want}"
            return ""
        except Exception as error:  # noqa: BLE001 - any failure to read is the finding
            return f"unreadable: {str(error).replace(path, 'the file')}"

    def check_folder(self, label, folder, ok_counts=None, allow_other_records=False, manifests=None):
        """The folder after a batch: ok_counts[stem] "ok" records per input (default 1 each)."""
        ok_counts = ok_counts or {s: 1 for s in self.stems}
        records = collections.defaultdict(list)
        torn = []
        manifest_names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(folder, "scenelinear-manifest*.jsonl")))
        for name in manifest_names:
            for n, line in enumerate(open(os.path.join(folder, name), errors="replace").read().split("\n")):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:
                    torn.append(f"{name}:{n + 1}: {line[:80]!r}")
                    continue
                stem = os.path.splitext(os.path.basename(r.get("input", "")))[0]
                records[stem].append((name, r))
        self.check(not torn, f"{label}: every manifest line is one JSON record",
                   "; ".join(torn[:4]) + (f" … {len(torn)} in all" if len(torn) > 4 else ""))

        wrong = []
        for stem in self.stems:
            oks = [r for _, r in records.get(stem, []) if r.get("status") == "ok"]
            others = [r for _, r in records.get(stem, []) if r.get("status") != "ok"]
            if len(oks) != ok_counts[stem]:
                wrong.append(f"{stem}: {len(oks)} ok (want {ok_counts[stem]})")
            if others and not allow_other_records:
                wrong.append(f"{stem}: {len(others)} record(s) {[(r.get('status'), r.get('error')) for r in others][:2]}")
        unknown = sorted(set(records) - set(self.stems))
        if unknown:
            wrong.append(f"records of unknown inputs {unknown[:4]}")
        want = set(ok_counts.values())
        self.check(not wrong, f"{label}: every input has {' or '.join(map(str, sorted(want)))} \"ok\" record(s)"
                   + (" (and no other record)" if not allow_other_records else ""),
                   "; ".join(wrong[:6]) + (f" … {len(wrong)} in all" if len(wrong) > 6 else "")
                   or f"{sum(len(v) for v in records.values())} records in {len(manifest_names)} manifest(s)")

        if manifests is not None:
            same = manifest_names == sorted(manifests)
            self.check(same, f"{label}: the manifests are " + (", ".join(sorted(manifests)) if len(manifests) < 3 else
                                                               f"{manifests[0]} … {manifests[-1]} ({len(manifests)})"),
                       "" if same else f"found {manifest_names}")

        # Outputs: exactly one EXR per input, the latest ok record's, complete, same SHA-256.
        files = os.listdir(folder)
        exrs = sorted(f for f in files if f.endswith(".exr") and not f.startswith("."))
        bad = []
        if exrs != sorted(s + ".exr" for s in self.stems):
            missing = sorted(set(s + ".exr" for s in self.stems) - set(exrs))
            extra = sorted(set(exrs) - set(s + ".exr" for s in self.stems))
            bad.append(f"missing {missing[:4]} ({len(missing)}), extra {extra[:4]} ({len(extra)})")
        for stem in self.stems:
            path = os.path.join(folder, stem + ".exr")
            oks = [r for _, r in records.get(stem, []) if r.get("status") == "ok"]
            if not os.path.exists(path) or not oks:
                continue
            latest = max(oks, key=lambda r: r.get("finished", ""))
            data = open(path, "rb").read()
            digest = hashlib.sha256(data).hexdigest()
            recorded = [o.get("sha256") for o in latest.get("outputs", []) if o.get("path", "").endswith("/" + stem + ".exr")]
            if recorded != [digest]:
                bad.append(f"{stem}.exr: SHA-256 {digest[:12]}, recorded {[(s or '')[:12] for s in recorded]}")
            if digest not in self.exr_cache:
                self.exr_cache[digest] = self.verify_exr(path)
            if self.exr_cache[digest]:
                bad.append(f"{stem}.exr: {self.exr_cache[digest]}")
        self.check(not bad, f"{label}: {len(self.stems)} outputs, each a complete EXR with its recorded SHA-256",
                   "; ".join(bad[:6]) + (f" … {len(bad)} in all" if len(bad) > 6 else ""))

        partials = sorted(f for f in files if f.startswith(".") and ".partial-" in f)
        self.check(not partials, f"{label}: no .<name>.partial-* temporary left",
                   f"{len(partials)} left: {partials[:4]}" if partials else "")
        return records

    def positions(self, index, parts):
        return [s for p, s in enumerate(self.stems) if p % parts == index]

    # ---- the cases

    def case_a(self, run, runs):
        # All eight at once, then at most four at once (`%4`): tasks 4-7 then start while
        # others are writing into the folder, as on a busy cluster.
        for array in ("0-7", "0-7%4"):
            label = ("a" if runs == 1 else f"a[{run + 1}/{runs}]") + ("" if array == "0-7" else " %4")
            folder = os.path.join(self.work, f"a{run + 1}" + ("" if array == "0-7" else "-throttled"))
            start = time.monotonic()
            job = self.submit(array, folder)
            states, most_running = self.wait(job)
            self.note(f"{label}: --array={array}, implicit shards: job {job} took {time.monotonic() - start:.1f} s")
            self.check_tasks(label, folder, job, states, list(range(8)))
            exits = self.exits(folder, job)
            intervals = sorted((s, e) for _, s, e in exits.values())
            together = self.concurrency(intervals)
            midway = sum(1 for s, _ in intervals if any(s0 < s < e0 for s0, e0 in intervals) and any(e0 < s for _, e0 in intervals))
            self.check(together >= 4, f"{label}: at least 4 tasks ran at once",
                       f"{together} at most by the tasks' start and end times; squeue saw {most_running} running at once"
                       + (f"; {midway} task(s) started after one had ended, while others ran" if array != "0-7" else ""))
            self.check_folder(label, folder, manifests=[f"scenelinear-manifest.shard-{i}-of-8.jsonl" for i in range(8)])

    def case_b(self):
        folder = os.path.join(self.work, "b")
        job = self.submit("0-7", folder)
        seen = {}

        def cancel_when_started(states):
            # Cancel as soon as the first input is done: the tasks are then in the middle.
            done = sum(len(open(p).read().splitlines()) for p in glob.glob(os.path.join(folder, "scenelinear-manifest*.jsonl")))
            if done >= 1 and any(s == "RUNNING" for s, _ in states.values()):
                self.run(["scancel", job])
                seen["done"] = done
                seen["partials"] = len([f for f in os.listdir(folder) if ".partial-" in f])
                return True
            return False

        states, _ = self.wait(job, on_poll=cancel_when_started)
        cancelled = sorted(t for t, (s, _) in states.items() if s == "CANCELLED")
        self.check(bool(cancelled), "b: scancel ended running tasks in the middle of the batch",
                   f"{seen.get('done', 0)} of {INPUTS} inputs recorded and {seen.get('partials', 0)} temporaries when cancelled; "
                   f"tasks cancelled: {cancelled}; others: {sorted((t, s) for t, (s, _) in states.items() if s != 'CANCELLED')}")
        job2 = self.submit("0-7", folder)
        states2, _ = self.wait(job2)
        self.note(f"b: job {job} cancelled, job {job2} resubmitted into the same folder")
        self.check_tasks("b", folder, job2, states2, list(range(8)))
        self.check_folder("b", folder, allow_other_records=True,
                          manifests=[f"scenelinear-manifest.shard-{i}-of-8.jsonl" for i in range(8)])

    def case_c(self):
        folder = os.path.join(self.work, "c")
        job = self.submit("0-3", folder, parts=4)
        states, _ = self.wait(job)
        self.check_tasks("c", folder, job, states, list(range(4)))
        four = [f"scenelinear-manifest.shard-{i}-of-4.jsonl" for i in range(4)]
        self.check_folder("c", folder, manifests=four)
        counts = {s: 1 for s in self.stems}
        for indices in ([2], [1, 3]):
            array = ",".join(map(str, indices))
            deleted = [s for i in indices for s in self.positions(i, 4)]
            for stem in deleted:
                os.unlink(os.path.join(folder, stem + ".exr"))
                counts[stem] += 1
            job = self.submit(array, folder, parts=4)
            states, _ = self.wait(job)
            label = f"c --array={array}"
            self.note(f"{label}: the outputs of index {' and '.join(map(str, indices))} ({len(deleted)} files) deleted, "
                      f"--shard ${{SLURM_ARRAY_TASK_ID}}/4 resubmitted as job {job}")
            self.check_tasks(label, folder, job, states, indices)
            self.check_folder(label, folder, ok_counts=counts, manifests=four)

    def case_d(self):
        folder = os.path.join(self.work, "d-2,3")
        job = self.submit("2,3", folder)
        states, _ = self.wait(job)
        self.check_tasks("d --array=2,3 (no --shard)", folder, job, states, [2, 3], expect_rc=64)
        said = [self.task_output(folder, job, t) for t in (2, 3)]
        self.check(all("--shard" in s for s in said), "d --array=2,3: the refusal points to --shard",
                   " | ".join(s[-200:].replace("\n", " ") for s in said))
        left = sorted(os.listdir(folder))
        self.check(not left, "d --array=2,3: nothing written (no output, no manifest)", f"found {left[:6]}")

        folder = os.path.join(self.work, "d-0-6:2")
        job = self.submit("0-6:2", folder)
        states, _ = self.wait(job)
        label = "d --array=0-6:2 (no --shard)"
        self.check_tasks(label, folder, job, states, [0, 2, 4, 6])
        records = self.check_folder(label, folder, manifests=[f"scenelinear-manifest.shard-{i}-of-4.jsonl" for i in range(4)])
        misplaced = []
        for i in range(4):
            for stem in self.positions(i, 4):
                where = [(m, r.get("shard")) for m, r in records.get(stem, [])]
                if where != [(f"scenelinear-manifest.shard-{i}-of-4.jsonl", f"{i}/4")]:
                    misplaced.append(f"{stem}: {where}")
        self.check(not misplaced, f"{label}: task 2k converted exactly the inputs of shard k/4",
                   "; ".join(misplaced[:4]))

    def case_e(self):
        folder = os.path.join(self.work, "e")
        os.makedirs(folder)
        joblog = os.path.join(self.work, "e.joblog")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_") or k == "SLURM_CONF"}
        r = self.run(["parallel", "--will-cite", "-j", "4", "--joblog", joblog,
                      self.binary, "convert", self.inputs_dir + "/", "-o", folder + "/", "--format", "exr", "--shard", "{}/8"],
                     input="\n".join(map(str, range(8))) + "\n", env=env)
        rows = [line.split("\t") for line in open(joblog).read().splitlines()[1:]]
        codes = {row[8].split("--shard ")[-1]: int(row[6]) for row in rows}
        intervals = [(float(row[2]), float(row[2]) + float(row[3])) for row in rows]
        self.check(r.returncode == 0 and len(rows) == 8 and all(c == 0 for c in codes.values()),
                   "e: seq 0 7 | parallel -j 4 scenelinear convert … --shard {}/8: 8 jobs exited 0",
                   f"parallel exit {r.returncode}; exit codes {codes}; at most {self.concurrency(intervals)} at once"
                   + (f"; stderr: {r.stderr.strip()[-300:]}" if r.returncode else ""))
        self.check_folder("e", folder, manifests=[f"scenelinear-manifest.shard-{i}-of-8.jsonl" for i in range(8)])

    def case_f(self):
        """A study's four sets measured by a job array of four tasks, one set each, into one
        folder; then a run without a shard finds every set done and writes the time series."""
        frames = os.path.join(self.work, "f-frames")
        scene = os.path.join(self.work, "f-sky.json")
        with open(scene, "w") as f:
            json.dump({"name": "sky", "width": 160, "height": 160, "background": [0, 0, 0], "elements": [
                {"type": "sky", "name": "sky", "rgb": [0.45, 0.5, 0.6], "projection": "equidistant", "fov": 180,
                 "model": "cie-overcast", "sun": [30, 60, 4], "sunRGB": [60, 58, 52]}]}, f)
        for k in range(4):
            r = self.run([self.binary, "simulate", "--scene", scene, "--bracket=-8,-4,0", "--name", f"set{k}", "--seed", str(50 + k),
                          "--capture-time", f"2026:06:21 10:{10 * k:02d}:00", "--capture-offset", "+02:00", "-o", frames, "-q"])
            if r.returncode != 0:
                raise RuntimeError(f"simulate: {r.stderr.strip()[-300:]}")
        script = os.path.join(self.work, "study.sh")
        with open(script, "w") as f:
            f.write(STUDY_SCRIPT)
        os.chmod(script, 0o755)
        folder = os.path.join(self.work, "f")
        status = folder + ".status"
        os.makedirs(status)
        r = self.run(["sbatch", "--parsable", "--array=0-3", "--cpus-per-task=1", "--job-name=scenelinear-study",
                      "-o", os.path.join(status, "slurm-%A_%a.out"), "-D", self.work, script, status, frames, folder])
        if r.returncode != 0:
            raise RuntimeError(f"sbatch: {r.stderr.strip()}")
        job = r.stdout.strip().split(";")[0]
        states, _ = self.wait(job)
        self.check_tasks("f: sequence --array=0-3", folder, job, states, [0, 1, 2, 3])
        lines = {}
        for i in range(4):
            path = os.path.join(folder, f"sets-{i + 1}-of-4.jsonl")
            lines[i] = [json.loads(line) for line in open(path)] if os.path.exists(path) else []
        ids = sorted(r["id"] for rs in lines.values() for r in rs)
        self.check(ids == [f"set-{k:04d}" for k in range(1, 5)] and all(len(rs) == 1 and rs[0]["status"] == "ok" for rs in lines.values())
                   and all(rs[0]["shard"] == f"{i}/4" and rs[0].get("illuminance", 0) > 0 for i, rs in lines.items()),
                   "f: each task measured one set, into its own manifest, with E_v", json.dumps({i: [(r["id"], r["status"]) for r in rs] for i, rs in lines.items()}))
        r = self.run([self.binary, "sequence", frames, "-o", folder, "--projection", "equidistant", "--json"])
        document = json.loads(r.stdout) if r.returncode == 0 else {}
        rows = list(open(os.path.join(folder, "timeseries.csv"))) if os.path.exists(os.path.join(folder, "timeseries.csv")) else []
        self.check(document.get("measured") == 0 and document.get("skipped") == 4 and len(rows) == 5,
                   "f: a run without a shard afterwards skips all four and writes their time series",
                   f"exit {r.returncode}, measured {document.get('measured')}, skipped {document.get('skipped')}, {len(rows)} lines; {r.stderr.strip()[-300:]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=300)
    args = parser.parse_args()

    def terminated(signum, frame):
        raise KeyboardInterrupt()

    signal.signal(signal.SIGTERM, terminated)
    h = Harness(args.work, args.time_limit)
    started = time.monotonic()
    mtime = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.stat(h.binary).st_mtime))
    print(f"slurm batch test: {h.binary} (modified {mtime}), SLURM_CONF={os.environ.get('SLURM_CONF')}", flush=True)
    cases = [("inputs", h.make_inputs)]
    cases += [("a" if args.runs == 1 else f"a[{i + 1}/{args.runs}]", (lambda i=i: h.case_a(i, args.runs)))
              for i in range(args.runs)]
    cases += [("b", h.case_b), ("c", h.case_c), ("d", h.case_d), ("e", h.case_e), ("f", h.case_f)]
    try:
        for name, case in cases:
            try:
                case()
            except (Deadline, subprocess.TimeoutExpired):
                h.check(False, f"{name}: finished within the time limit ({args.time_limit:.0f} s for the whole test)")
                break
            except RuntimeError as error:
                h.check(False, f"{name}: ran", str(error))
            if name == "inputs" and h.failed:
                break
    except KeyboardInterrupt:
        h.check(False, "interrupted")
    print(f"     took {time.monotonic() - started:.0f} s", flush=True)
    if h.failures:
        print("     failed: " + "; ".join(h.failures), flush=True)
    print(f"slurm: {h.passed} passed, {h.failed} failed", flush=True)
    return 1 if h.failed else 0


if __name__ == "__main__":
    sys.exit(main())
