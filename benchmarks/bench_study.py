"""``benchbox study`` wall time with the local pool (``--jobs N``) vs one cell at a time (``--jobs 1``).

Run: ``python benchmarks/bench_study.py [STUDY.toml] [--jobs N] [--repeats R]``. Without a study file, a small
built-in study: four GloVe-BOW cells (cased / uncased lookup × two SICK/STS-B task orders) on the embedded
STS-B and SICK, so it runs anywhere; pass the README's worked study for the real figure. Each run starts from
an empty study folder (and its own embedding cache, so that no run profits from another's encodings); the
figures are medians over the repeats and the ratio serial / pool.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUILT_IN = """
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


def timed(study: Path, jobs: int, work: Path) -> float:
    env = {**os.environ, "BENCHBOX_CACHE": str(work / "cache"), "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "benchbox", "study", str(study), "--out", str(work / "study"),
                    "--jobs", str(jobs), "-q"], check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", nargs="?", type=Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        study = args.study
        if study is None:
            study = Path(tmp) / "study.toml"
            study.write_text(BUILT_IN)
        times: dict[int, list[float]] = {1: [], args.jobs: []}
        for repeat in range(args.repeats):
            for jobs in times:
                times[jobs].append(timed(study.resolve(), jobs, Path(tmp) / f"{jobs}-{repeat}"))
        serial, pool = statistics.median(times[1]), statistics.median(times[args.jobs])
        print(f"study: {args.study or 'built-in (4 GloVe-BOW cells, stsb-cosine + sickr-cosine)'}")
        print(f"one cell at a time (--jobs 1):  median {serial:.1f} s over {args.repeats} runs {times[1]}")
        print(f"local pool (--jobs {args.jobs}):        median {pool:.1f} s over {args.repeats} runs {times[args.jobs]}")
        print(f"speed-up serial / pool: {serial / pool:.2f}x on {os.cpu_count()} CPU(s)")


if __name__ == "__main__":
    main()
