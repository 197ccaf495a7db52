"""``benchbox study`` wall time: the local pool (``--jobs N``) vs one cell at a time (``--jobs 1``), and the Ray
path's overhead per cell, in one run.

Run: ``python benchmarks/bench_study.py [STUDY.toml] [--built-in NAME] [--jobs N] [--repeats R] [--no-ray]``.
Without a study file, one of two built-in studies (:data:`BUILT_IN`), evaluated on the embedded STS-B and SICK:
``glove-bow`` (the default; runs anywhere), four GloVe-BOW cells of a few seconds each (cased / uncased lookup ×
two vector spellings), where the study's own start and last step weigh most; ``char-gru-seeds``, four char-GRU
seeds each trained for about half a minute on Flickr8k's captions (one thread, as the README's worked study
trains; they are not embedded: ``BENCHBOX_DATA=../shared/data``), where the cells do. Pass the README's worked
study for the real figure. A study that fails (its check, or a cell) stops the benchmark with the study's own
message. Each run
starts from an empty study folder and its own embedding cache (no run profits from another's encodings), and
its environment has no ``OMP_NUM_THREADS``: the study sets each cell's threads itself, as it does for a user.

Each study's time is split, from its cells' markers, into the part before the first cell starts (loading and
checking the study), the cells (first start to last ``done.json``: what the pool parallelises) and the part
after (compare and report, once per study); the CPU time of the study and its cells (user + system) shows whether
the pool adds work or only waits for cores (on a shared machine, other jobs take some). The Ray path runs the same study with ``--ray`` on a local Ray
instance of N CPUs started here (its start is not counted); its overhead per cell is its extra wall time over
the pool, divided by the number of cells. Figures are medians over the repeats; the speed-up is also given per
repeat (one cell at a time and the pool run back to back, so a change in the machine's load between repeats
affects both), with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GLOVE_BOW = """
[study]
tasks = ["stsb-cosine", "sickr-cosine"]
baseline = "glove-bow"

[[encoder]]
name = "glove-bow"

[[encoder]]
name = "glove-bow"
options = { lowercase = "false" }

[[encoder]]
name = "glove-bow"
options = { lowercase = "true", vectors = "glove-6b-50d" }

[[encoder]]
name = "glove-bow"
options = { lowercase = "false", vectors = "glove-6b-50d" }
"""

CHAR_GRU_SEEDS = """
[study]
tasks = ["stsb-cosine", "sickr-cosine"]

[[encoder]]
name = "char-gru"
seeds = [1, 2, 3, 4]
train = { dataset = "flickr8k", visual = "cluster", hidden = 64, epochs = 1, cycle-epochs = 1, max-captions = 1500, threads = 1 }
"""

#: the built-in studies, by name, with the line that describes them
BUILT_IN = {"glove-bow": (GLOVE_BOW, "4 GloVe-BOW cells, stsb-cosine + sickr-cosine"),
            "char-gru-seeds": (CHAR_GRU_SEEDS, "4 char-GRU seeds trained on 1,500 Flickr8k captions, stsb-cosine + sickr-cosine")}


def timed(study: Path, work: Path, args: list[str]) -> dict[str, float]:
    """One study from scratch: its wall time, and the time before, during and after its cells."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    env["BENCHBOX_CACHE"] = str(work / "cache")
    start, cpu = time.time(), _children_cpu()
    done = subprocess.run([sys.executable, "-m", "benchbox", "study", str(study), "--out", str(work / "study"), "-q",
                           *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    end, cpu = time.time(), _children_cpu() - cpu
    if done.returncode:
        raise SystemExit(f"benchbox study {' '.join(args)} exited {done.returncode}:\n{done.stderr.strip()}")
    cells = [c for c in (work / "study" / "cells").iterdir()]
    first = min(json.loads((c / "stage.json").read_text())["since"] for c in cells)
    last = max((c / "done.json").stat().st_mtime for c in cells)
    return {"total": end - start, "before": first - start, "cells": last - first, "after": end - last,
            "cpu": cpu, "n": len(cells)}


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes (the study and, through it, its cells)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def line(name: str, runs: list[dict[str, float]]) -> str:
    return (f"{name:<28} total {median(runs, 'total'):5.1f} s = before cells {median(runs, 'before'):4.1f} + cells "
            f"{median(runs, 'cells'):5.1f} + compare/report {median(runs, 'after'):4.1f}; CPU {median(runs, 'cpu'):5.1f} s  (totals: "
            f"{', '.join(format(r['total'], '.1f') for r in runs)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", nargs="?", type=Path)
    parser.add_argument("--built-in", choices=sorted(BUILT_IN), default="glove-bow",
                        help="The built-in study run without a study file.")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-ray", action="store_true", help="Skip the Ray path.")
    args = parser.parse_args()
    load_before = os.getloadavg()
    ray_address = None
    if not args.no_ray:
        import ray

        ray_address = ray.init(num_cpus=args.jobs, include_dashboard=False, log_to_driver=False).address_info["address"]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            study = args.study
            if study is None:
                study = Path(tmp) / "study.toml"
                study.write_text(BUILT_IN[args.built_in][0])
            modes = {"one cell at a time (--jobs 1)": ["--jobs", "1"], f"local pool (--jobs {args.jobs})": ["--jobs", str(args.jobs)]}
            if ray_address:
                modes[f"Ray ({args.jobs} CPUs)"] = ["--ray", ray_address]
            times: dict[str, list[dict[str, float]]] = {name: [] for name in modes}
            for repeat in range(args.repeats):
                for i, (name, extra) in enumerate(modes.items()):
                    times[name].append(timed(study.resolve(), Path(tmp) / f"{i}-{repeat}", extra))
    finally:
        if ray_address:
            ray.shutdown()
    serial, pool = (times[name] for name in list(modes)[:2])
    load_after = os.getloadavg()
    print(f"study: {args.study or f'built-in {args.built_in} ({BUILT_IN[args.built_in][1]})'}; "
          f"{os.cpu_count()} CPU(s), load average (1, 5 min) {load_before[0]:.1f}, {load_before[1]:.1f} before and "
          f"{load_after[0]:.1f}, {load_after[1]:.1f} after; medians of {args.repeats} runs")
    for name in modes:
        print(line(name, times[name]))
    per_repeat = [s["total"] / p["total"] for s, p in zip(serial, pool)]
    print(f"speed-up of the pool over one cell at a time: {median(serial, 'total') / median(pool, 'total'):.2f}x "
          f"for the whole study, {median(serial, 'cells') / median(pool, 'cells'):.2f}x for its cells; per repeat "
          f"{', '.join(format(r, '.2f') for r in per_repeat)} (median {statistics.median(per_repeat):.2f}x)")
    if ray_address:
        ray_runs = times[list(modes)[2]]
        per_cell = (median(ray_runs, "total") - median(pool, "total")) / pool[0]["n"]
        print(f"Ray overhead per cell over the local pool: {per_cell:+.2f} s (whole study "
              f"{median(ray_runs, 'total') - median(pool, 'total'):+.1f} s over {pool[0]['n']} cells)")


if __name__ == "__main__":
    main()
