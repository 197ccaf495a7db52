"""GloVe-BOW on STS12–16: wall time and peak memory, cold vs warm embedding cache; encoding throughput;
vector loading time. Run: ``BENCHBOX_DATA=../shared/data python benchmarks/bench_sts.py``.

Targets (issue 2): warm-cache run < 10% of the cold run's time; ≥ 50,000 sentences/s once the vectors are
loaded; loading the 400k × 50 vectors < 2 s after the first use. Every figure is a median over repeats;
each full run happens in a fresh child process so that its peak memory (ru_maxrss) is its own.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPEATS = 3
CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import benchbox
from benchbox.storage.cache import EmbeddingCache
from benchbox.task_contract.options import TaskOptions
def run():
    return benchbox.run_tasks("glove-bow", ["sts"], data_dir=sys.argv[1], cache=EmbeddingCache(sys.argv[2]),
                              options=TaskOptions(bootstrap=int(sys.argv[3])))
t1 = time.perf_counter()
ev = run()
t2 = time.perf_counter()
run()  # the same evaluation again in this process: steady state, everything served by the cache
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "eval_s": t2 - t1, "again_s": t3 - t2,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "encoded": ev.cache_stats["misses"]}))
"""
LOAD_CHILD = r"""
import json, time
t0 = time.perf_counter()
from benchbox.encoders.glove_bow import GloveBowEncoder
enc = GloveBowEncoder()
enc.word_vectors.index  # vocabulary and matrix ready to encode
print(json.dumps({"load_s": time.perf_counter() - t0}))
"""


def child(code: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def full_runs(data_dir: str, bootstrap: int) -> None:
    cold, warm = [], []
    for _ in range(REPEATS):
        with tempfile.TemporaryDirectory() as cache:
            cold.append(child(CHILD, data_dir, cache, str(bootstrap)))
            warm.append(child(CHILD, data_dir, cache, str(bootstrap)))
    print(f"\nfull STS12-16 run, bootstrap={bootstrap} (median of {REPEATS}, fresh process each)")
    for label, rows in (("cold cache", cold), ("warm cache", warm)):
        print(f"  {label}: evaluation {median(rows, 'eval_s'):.3f} s (+ imports {median(rows, 'import_s'):.2f} s), "
              f"peak RSS {median(rows, 'peak_mb'):.0f} MB, sentences encoded {rows[0]['encoded']}")
    print(f"  warm/cold evaluation time: {median(warm, 'eval_s') / median(cold, 'eval_s'):.1%} (target < 10%)")
    print(f"  repeated in one process (warm, imports and registry already loaded): {median(warm, 'again_s'):.3f} s "
          f"= {median(warm, 'again_s') / median(cold, 'eval_s'):.1%} of the cold run")


def throughput() -> None:
    from benchbox.data.root import DataRoot
    from benchbox.encoders.glove_bow import GloveBowEncoder
    from benchbox.task_contract.options import TaskOptions
    from benchbox.tasks.sts import STS12, STS13, STS14, STS15, STS16

    root = DataRoot(os.environ.get("BENCHBOX_DATA"))
    sentences: list[str] = []
    for task in (STS12(), STS13(), STS14(), STS15(), STS16()):
        for rel in task.required_files(TaskOptions()):
            if ".input." in rel:
                for line in root.path(rel).read_text(encoding="utf-8").splitlines():
                    sentences.extend(line.split("\t")[:2])
    sentences = (sentences * (100_000 // len(sentences) + 1))[:100_000]
    encoder = GloveBowEncoder()
    encoder.encode(sentences[:10])  # vectors and vocabulary loaded
    times = []
    for _ in range(5):
        t = time.perf_counter()
        encoder.encode(sentences)
        times.append(time.perf_counter() - t)
    rate = len(sentences) / statistics.median(times)
    print(f"\nencoding throughput: {rate:,.0f} sentences/s (median of 5 x {len(sentences):,} STS sentences; target >= 50,000)")


def main() -> None:
    data_dir = os.environ.get("BENCHBOX_DATA")
    if not data_dir:
        sys.exit("set BENCHBOX_DATA to a data root with STS12-16 (e.g. ../shared/data)")
    child(LOAD_CHILD)  # first use (OS file cache, bytecode)
    loads = [child(LOAD_CHILD) for _ in range(REPEATS)]
    print(f"loading GloVe 6B 50-d (400k x 50) after first use: {median(loads, 'load_s'):.3f} s incl. imports "
          f"(median of {REPEATS}; target < 2 s)")
    throughput()
    full_runs(data_dir, bootstrap=1000)
    full_runs(data_dir, bootstrap=0)


if __name__ == "__main__":
    main()
