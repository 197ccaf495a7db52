"""Structure measures (E_intra, E_inter, ρ_vis with 1000 bootstrap resamples over images): cost.

Run: ``BENCHBOX_DATA=../shared/data python benchmarks/bench_structure.py [--repeats 3] [--dim 1024]``.

1. ``structure-flickr8k`` (1000 images × 5 captions) for a cached encoder (GloVe-BOW; the first run fills the
   embedding cache, the timed runs read it): wall time of ``run_tasks`` without and with image features
   (seeded 2048-d vectors per image id, so ρ_vis and its bootstrap run too). Target: < 2 s.
2. COCO size (5000 images × 5 = 25,000 captions of ``--dim`` float32, 2048-d image features, seeded):
   :func:`benchbox.tasks.structure_measures.structure` with features and 1000 resamples, against one bare
   25,000 × 25,000 × d float32 GEMM (numpy, in row blocks of 2,500 so that its 2.5 GB output is never held:
   the same arithmetic). The two run in interleaved rounds (same machine load); the ratio is taken within each
   round, median over rounds. Target: ≤ 2×. Peak memory: the call runs once more in a fresh child process
   that builds the inputs, resets the kernel's peak-RSS mark (``/proc/self/clear_refs`` ← 5) and reports
   VmHWM − VmRSS: the memory the computation needed beyond its inputs. Target: < 1.5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from proc_status import status_mb  # benchmarks/proc_status.py (scripts run from this folder)

N_IMAGES, FEATURE_DIM, GEMM_ROWS = 5000, 2048, 2500


def coco_inputs(dim: int):
    import numpy as np

    rng = np.random.default_rng(0)
    visual = rng.standard_normal((N_IMAGES, FEATURE_DIM), dtype=np.float32)
    projection = rng.standard_normal((FEATURE_DIM, dim), dtype=np.float32) / np.float32(FEATURE_DIM ** 0.5)
    captions = rng.standard_normal((5 * N_IMAGES, dim), dtype=np.float32) * 4.0
    captions += np.repeat(visual @ projection, 5, axis=0)  # captions near a projection of their image
    return captions, visual


def gemm(x) -> None:
    for start in range(0, len(x), GEMM_ROWS):
        x[start : start + GEMM_ROWS] @ x.T


def ours(x, v) -> None:
    from benchbox.tasks.structure_measures import structure

    structure(x, 5, v, n_boot=1000, seed=1111)



def child(dim: int) -> None:
    """Peak extra memory of one COCO-size call, beyond its inputs (printed as JSON)."""
    x, v = coco_inputs(dim)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    base = status_mb("VmRSS")
    ours(x, v)
    print(json.dumps({"peak_extra_mb": status_mb("VmHWM") - base}))


def flickr8k(repeats: int) -> dict[str, float]:
    import numpy as np

    from benchbox.data.captions import load_flickr8k
    from benchbox.data.root import DataRoot
    from benchbox.evaluation import load_encoder, run_tasks
    from benchbox.data.image_features import save_features
    from benchbox.task_contract.options import TaskOptions

    data = DataRoot()
    ids = load_flickr8k(data, "test").image_ids
    encoder = load_encoder("glove-bow")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        features = Path(tmp) / "features.npz"
        save_features(features, ids, np.random.default_rng(0).standard_normal((len(ids), FEATURE_DIM), dtype=np.float32))
        os.environ.setdefault("BENCHBOX_CACHE", str(Path(tmp) / "cache"))
        run_tasks(encoder, ["structure-flickr8k"], cache=True)  # fill the embedding cache
        for label, options in (("no features", TaskOptions()), ("with features", TaskOptions(flags={"features": str(features)}))):
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                run_tasks(encoder, ["structure-flickr8k"], cache=True, options=options)
                times.append(time.perf_counter() - start)
            out[label] = statistics.median(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dim", type=int, default=1024, help="caption embedding size at COCO scale")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.dim)
        return
    if os.environ.get("BENCHBOX_DATA"):
        for label, seconds in flickr8k(args.repeats).items():
            print(f"structure-flickr8k, cached GloVe-BOW, {label}: median {seconds:.3f} s (target < 2 s)")
    else:
        print("structure-flickr8k: skipped (set BENCHBOX_DATA)")
    x, v = coco_inputs(args.dim)
    rounds = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        gemm(x)
        base = time.perf_counter() - start
        start = time.perf_counter()
        ours(x, v)
        rounds.append((base, time.perf_counter() - start))
    base = statistics.median(r[0] for r in rounds)
    mine = statistics.median(r[1] for r in rounds)
    ratio = statistics.median(r[1] / r[0] for r in rounds)
    print(f"COCO size, 25,000 x {args.dim} captions, 5,000 x {FEATURE_DIM} features, 1000 resamples:")
    print(f"  one 25,000 x 25,000 x {args.dim} float32 GEMM: median {base:.2f} s")
    print(f"  structure (E_intra, E_inter, rho_vis + bootstrap): median {mine:.2f} s, ratio to the GEMM {ratio:.2f} (target <= 2)")
    print("  rounds (GEMM s, structure s): " + ", ".join(f"({a:.1f}, {b:.1f})" for a, b in rounds))
    proc = subprocess.run([sys.executable, __file__, "--child", "--dim", str(args.dim)], capture_output=True, text=True,
                          check=True)
    peak = json.loads(proc.stdout)["peak_extra_mb"]
    print(f"  peak memory beyond the inputs: {peak:.0f} MB (target < 1536 MB)")


if __name__ == "__main__":
    main()
