"""Retrieval metrics at MSCOCO scale: 5,000 images × 25,000 captions of 2048-d float32 embeddings.

Run: ``python benchmarks/bench_retrieval.py [--repeats 3] [--device cpu|cuda] [--sample-images 100]``.

Times (median over repeats) and peak memory of ``retrieval_metrics`` for ``coco-5k`` (one 5000 × 25000
problem) and ``coco-1k`` (five consecutive 1000 × 5000 folds), cosine similarity, against
- a straightforward per-query numpy implementation (VSE++ ``evaluation.py`` style: one score vector and one
  ``argsort`` per query). It is timed on the first ``--sample-images`` images (their i2t queries and the t2i
  queries of their captions) and extrapolated linearly to all 5,000 / 25,000 queries (every query costs the
  same: one matrix–vector product over the full gallery and one sort); its ranks on that sample are checked
  equal to ours;
- one bare 5,000 × 25,000 × 2,048 matrix product (torch, the same BLAS our blocks use; numpy also shown):
  the physical floor, since every score must be computed once.
Targets (issue 5): ≥ 10× faster than per-query; within 2× of the bare product; peak memory < 1.5 GB.

Times: the four computations run in interleaved rounds in one process, so that all see the same load on a
shared machine; the ratio to the bare product is taken within each round (median over rounds).
Peak memory: each computation runs once more in a fresh child process that first builds the embeddings, then
resets the kernel's peak-RSS mark (``/proc/self/clear_refs`` ← 5) and reports VmHWM − VmRSS at that moment: the
extra resident memory the computation needed beyond its inputs (on CUDA: ``torch.cuda.max_memory_allocated``,
inputs included, since they are copied to the device).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from proc_status import status_mb  # benchmarks/proc_status.py (scripts run from this folder)

N_IMAGES, DIM = 5000, 2048
MODES = ("matmul-numpy", "matmul-torch", "ours-5k", "ours-1k")


def make_inputs():
    """Seeded embeddings: captions are their image plus noise (retrieval well above chance)."""
    import numpy as np

    rng = np.random.default_rng(0)
    images = rng.standard_normal((N_IMAGES, DIM), dtype=np.float32)
    captions = rng.standard_normal((5 * N_IMAGES, DIM), dtype=np.float32)
    captions *= 15.0
    captions += np.repeat(images, 5, axis=0)
    return images, captions



def per_query_ranks(images, captions, sample: int, folds: int):
    """VSE++-style ranks (1-based) of the first ``sample`` images and their captions, one query at a time."""
    import numpy as np

    images = images / np.linalg.norm(images, axis=1, keepdims=True)
    captions = captions / np.linalg.norm(captions, axis=1, keepdims=True)
    size = N_IMAGES // folds
    gallery_i, gallery_c = images[:size], captions[: 5 * size]  # the samples lie in the first fold
    i2t, t2i = [], []
    t0 = time.perf_counter()
    for index in range(sample):
        order = np.argsort(gallery_c @ gallery_i[index])[::-1]
        i2t.append(1 + min(np.where(order == j)[0][0] for j in range(5 * index, 5 * index + 5)))
    t1 = time.perf_counter()
    for j in range(5 * sample):
        order = np.argsort(gallery_i @ gallery_c[j])[::-1]
        t2i.append(1 + np.where(order == j // 5)[0][0])
    t2 = time.perf_counter()
    return np.array(i2t), np.array(t2i), t1 - t0, t2 - t1


def run_mode(mode: str, images, captions, device: str) -> dict | None:
    """One run of ``mode``: the metrics for ``ours-*``, nothing for the bare products."""
    import numpy as np
    import torch

    from benchbox.tasks.retrieval_metrics import retrieval_metrics

    if mode.startswith("ours"):
        return retrieval_metrics(images, captions, folds=5 if mode == "ours-1k" else 1, device=device)
    if mode == "matmul-numpy":
        np.matmul(images, captions.T)
    else:
        a, b = torch.from_numpy(images).to(device), torch.from_numpy(captions).to(device)
        a @ b.T
        if device == "cuda":
            torch.cuda.synchronize()
    return None


def memory_child(mode: str, device: str) -> dict:
    """Peak memory of one run of ``mode`` beyond its inputs, in a fresh process."""
    import torch

    images, captions = make_inputs()
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    base = status_mb("VmRSS")
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    run_mode(mode, images, captions, device)
    peak = torch.cuda.max_memory_allocated() / 2**20 if device == "cuda" else status_mb("VmHWM") - base
    return {"peak_mb": peak}


def timing_child(repeats: int, device: str, sample: int) -> dict:
    """Interleaved rounds of every mode (so that all see the same machine load), then the per-query sample."""
    images, captions = make_inputs()
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    metrics = {}
    for _ in range(repeats):
        for mode in MODES:
            t0 = time.perf_counter()
            result = run_mode(mode, images, captions, device)
            times[mode].append(time.perf_counter() - t0)
            if result is not None:
                metrics[mode] = result
    out: dict = {"times": times}
    for mode, folds in (("ours-5k", 1), ("ours-1k", 5)):
        ref_i2t, ref_t2i, ti, tt = per_query_ranks(images, captions, sample, folds)
        m = metrics[mode]
        out[mode] = {
            # each of the 5000 i2t (25000 t2i) queries costs what one sampled query did
            "per_query_s": ti / sample * N_IMAGES + tt / (5 * sample) * 5 * N_IMAGES,
            "equal": bool((m["i2t"]["ranks"][:sample] == ref_i2t).all() and (m["t2i"]["ranks"][: 5 * sample] == ref_t2i).all()),
            "r1": [m["i2t"]["r1"], m["t2i"]["r1"]],
        }
    return out



def run_child(args: argparse.Namespace, *extra: str) -> dict:
    cmd = [sys.executable, __file__, "--device", args.device, "--repeats", str(args.repeats),
           "--sample-images", str(args.sample_images), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{' '.join(extra)} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--sample-images", type=int, default=100)
    parser.add_argument("--memory-child")
    parser.add_argument("--timing-child", action="store_true")
    args = parser.parse_args()
    if args.memory_child:
        print(json.dumps(memory_child(args.memory_child, args.device)))
        return
    if args.timing_child:
        print(json.dumps(timing_child(args.repeats, args.device, args.sample_images)))
        return
    import torch

    print(f"{N_IMAGES} images x {5 * N_IMAGES} captions x {DIM}-d float32, device {args.device}, "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.repeats} interleaved rounds")
    peaks = {mode: run_child(args, "--memory-child", mode)["peak_mb"] for mode in MODES}
    timing = run_child(args, "--timing-child")
    times = timing["times"]
    floor = [min(a, b) for a, b in zip(times["matmul-numpy"], times["matmul-torch"])]
    for mode in ("matmul-numpy", "matmul-torch"):
        print(f"bare product ({mode[7:]:5s}): min {min(times[mode]):6.2f} s  median {statistics.median(times[mode]):6.2f} s"
              f"   peak +{peaks[mode]:5.0f} MB")
    for name, mode in (("coco-5k", "ours-5k"), ("coco-1k", "ours-1k")):
        t, r = times[mode], timing[mode]
        ratio = statistics.median(x / f for x, f in zip(t, floor))
        print(f"{name}: min {min(t):6.2f} s  median {statistics.median(t):6.2f} s  = {ratio:4.2f}x the bare product "
              f"(median over rounds of the ratio to that round's faster product; "
              f"{'coco-1k computes 1/5 of the scores' if name == 'coco-1k' else 'target <= 2x'})  "
              f"peak +{peaks[mode]:4.0f} MB (target < 1536)")
        print(f"    per-query numpy ~{r['per_query_s']:6.1f} s (extrapolated from {args.sample_images} images and "
              f"their captions; ranks equal to ours: {r['equal']}) -> speed-up {r['per_query_s'] / min(t):5.1f}x "
              f"vs our best, {r['per_query_s'] / max(t):5.1f}x vs our worst (target >= 10x)   "
              f"R@1 i2t/t2i {r['r1'][0]:.1f}/{r['r1'][1]:.1f}")


if __name__ == "__main__":
    main()
