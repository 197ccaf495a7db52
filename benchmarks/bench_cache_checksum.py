"""What the embedding cache's shard checksums (issue #17) cost on a warm ``--task sts`` run of GloVe-BOW.

Run: ``BENCHBOX_DATA=../shared/data python benchmarks/bench_cache_checksum.py``.

The cache is filled once; then each warm run (everything served by the cache) happens in a fresh child
process, alternating the checked reader (sha256 of every shard, then parse; today's code) with the baseline
reader of before the change (``np.load`` of the keys, a memory map of the embeddings, no checksum). Prints
the median of 5 of each and their ratio, and the cost of opening the shards alone, also for a synthetic
sbert-sized shard (20,000 × 384 float32, 31 MB).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

REPEATS = 5
CHILD = r"""
import json, sys, time
import numpy as np
import benchbox
import benchbox.storage.cache as cache_mod
from benchbox.storage.cache import EmbeddingCache
from benchbox.task_contract.options import TaskOptions

def baseline_read(keys_file):  # the reader before issue #17: no checksum, embeddings memory-mapped
    keys = np.load(keys_file)
    emb = np.load(keys_file.with_name(keys_file.name.replace(".keys.npy", ".emb.npy")), mmap_mode="r")
    if len(keys) != len(emb):
        raise ValueError("corrupt")
    return keys, emb

if sys.argv[3] == "baseline":
    cache_mod.read_shard = baseline_read
cache = EmbeddingCache(sys.argv[2])
t0 = time.perf_counter()
for fingerprint in [p.name for p in cache.directory.iterdir()]:
    cache._load(fingerprint)
t1 = time.perf_counter()
ev = benchbox.run_tasks("glove-bow", ["sts"], data_dir=sys.argv[1], cache=cache, options=TaskOptions())
t2 = time.perf_counter()
assert sys.argv[3] == "fill" or (ev.cache_stats["misses"] == 0 and cache.quarantined == 0)
print(json.dumps({"open_s": t1 - t0, "eval_s": t2 - t0, "values": [r.value for r in ev.records]}))
"""
BIG_SHARD = r"""
import json, sys, time
import numpy as np
import benchbox.storage.cache as cache_mod
from benchbox.storage.cache import EmbeddingCache
folder = sys.argv[1]
if sys.argv[2] == "fill":
    rng = np.random.default_rng(0)
    EmbeddingCache(folder).embed("big", [f"sentence {i}" for i in range(20000)],
                                 lambda s: rng.normal(size=(len(s), 384)).astype(np.float32))
    sys.exit()
if sys.argv[2] == "baseline":
    def baseline_read(keys_file):
        return np.load(keys_file), np.load(keys_file.with_name(keys_file.name.replace(".keys.npy", ".emb.npy")),
                                            mmap_mode="r")
    cache_mod.read_shard = baseline_read
cache = EmbeddingCache(folder)
t0 = time.perf_counter()
cache._load("big")
t1 = time.perf_counter()
out = cache.embed("big", [f"sentence {i}" for i in range(20000)], None)  # every row read once
t2 = time.perf_counter()
print(json.dumps({"open_s": t1 - t0, "served_s": t2 - t0}))
"""


def child(code: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    lines = proc.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}


def median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def main() -> None:
    data_dir = os.environ.get("BENCHBOX_DATA")
    if not data_dir:
        sys.exit("set BENCHBOX_DATA to a data root with STS12-16 (e.g. ../shared/data)")
    with tempfile.TemporaryDirectory() as cache:
        child(CHILD, data_dir, cache, "fill")  # cold: fills the cache
        runs: dict[str, list[dict]] = {"baseline": [], "checked": []}
        for _ in range(REPEATS):
            for reader in runs:
                runs[reader].append(child(CHILD, data_dir, cache, reader))
        assert runs["baseline"][0]["values"] == runs["checked"][0]["values"]  # same numbers either way
        n_shards = sum(1 for _ in os.scandir(os.path.join(cache, os.listdir(cache)[0]))) // 3
    print(f"warm GloVe-BOW --task sts ({n_shards} shards), median of {REPEATS}, fresh process each:")
    for reader, rows in runs.items():
        print(f"  {reader:8s}: run {median(rows, 'eval_s'):.3f} s, of which opening the shards "
              f"{1000 * median(rows, 'open_s'):.1f} ms")
    ratio = median(runs["checked"], "eval_s") / median(runs["baseline"], "eval_s")
    print(f"  checked / baseline run time: {ratio:.3f}")
    with tempfile.TemporaryDirectory() as folder:
        child(BIG_SHARD, folder, "fill")
        big = {reader: [child(BIG_SHARD, folder, reader) for _ in range(REPEATS)] for reader in ("baseline", "checked")}
    print("one sbert-sized shard (20,000 x 384 float32, 31 MB), median of 5:")
    for reader, rows in big.items():
        print(f"  {reader:8s}: open {1000 * median(rows, 'open_s'):.1f} ms, open + serve every row "
              f"{1000 * median(rows, 'served_s'):.1f} ms")


if __name__ == "__main__":
    main()
