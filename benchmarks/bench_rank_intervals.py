"""Coverage of the leaderboard's 95% rank intervals, and how often its significance groups exclude the true best
(issue 45), in a simulation with known true ranks.

Data (one replicate): five models on 3 correlation tasks of 4 subsets × 100 sentence pairs. Gold g ~ N(0, 1);
model m scores a pair ``a_m·g + 0.8·u + e_m`` with u ~ N(0, 1) a per-pair component shared by every model (the
paired design: models err on the same hard pairs) and e_m ~ N(0, 1) its own. Its population Pearson r is
``a_m / sqrt(a_m² + 1.64)`` on every subset, so its true overall score (the mean over tasks of the mean over
subsets) is that r and the true ranks are known. The standard error of the difference of two models' overall
scores is about 0.019 (400 simulated pairs at r 0.60 and 0.59). Designs (true r of the models):

- ``crowded``: 0.60, 0.59, 0.58, 0.57, 0.55 — neighbours about half a standard error apart;
- ``spread``: 0.65, 0.60, 0.55, 0.50, 0.45 — 2.6 standard errors apart;
- ``tied top``: 0.60, 0.60, 0.58, 0.56, 0.54 — two models share rank 1 (the true rank of each is 1), the others
  one standard error apart;
- ``half``, ``quarter``, ``tenth``: neighbours 0.005, 0.0025, 0.001 apart (half, a quarter, a tenth of
  ``crowded``'s gap: 0.26, 0.13, 0.05 standard errors): towards a tie;
- ``all tied``: five models at 0.58 — every true rank is 1 (ties share the best rank);
- ``random``: each replicate draws the five true r uniformly from [0.55, 0.60] (neighbours 0.4 standard errors
  apart on average, sometimes close and sometimes far): a leaderboard with the spacings above in one.

Discreteness makes the coverage depend on the spacing: a model whose neighbours are far apart gets the interval
[r, r] and it holds (100%, ``spread``); near a tie the bootstrap of ranks is known to be inconsistent (Hall &
Miller 2009) and the intervals of the outermost models run short (``tenth``; with an exact tie, ``all tied``, an
interval must reach rank 1 from wherever the noise put the model, and often does not); in between the
percentile interval holds more than 95% of the draws (an atom of rank straddles each tail) and covers more
(``crowded``).

**Rank intervals** (``--replicates``, default 300 per design): the leaderboard's own functions on per-item arrays —
each task's items resampled by :func:`benchbox.stats.ranking.cluster_weights` (strata = subsets), each model's Pearson
per subset recomputed by :func:`benchbox.comparison.resampled_scores.resampled_score`, the overall mean ranked by
:func:`benchbox.stats.ranking.ranks` and its interval taken by :func:`benchbox.stats.ranking.rank_intervals` (``--resamples``
replicates, default 500). Printed: the share of (model, replicate) whose interval holds its true rank, the share
of replicates where every model's does, and the mean interval length.

**Significance groups** (``--group-replicates``, default 200, design ``crowded`` and ``tied top``): each replicate's
runs written as benchbox runs and put through ``benchbox leaderboard``'s :func:`benchbox.comparison.leaderboard.build`
(claims of compare against the observed best); printed: how often a true best model (rank 1) is put "below the
best". Run: ``nice -n 10 python benchmarks/bench_rank_intervals.py`` (``--help``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchbox.stats import ranking
from benchbox.comparison.resampled_scores import resampled_score
from benchbox.task_contract.protocol import MetricSpec

DESIGNS = {"crowded": [0.60, 0.59, 0.58, 0.57, 0.55], "spread": [0.65, 0.60, 0.55, 0.50, 0.45],
           "tied top": [0.60, 0.60, 0.58, 0.56, 0.54], "half": [0.60, 0.595, 0.59, 0.585, 0.58],
           "quarter": [0.60, 0.5975, 0.595, 0.5925, 0.59], "tenth": [0.60, 0.599, 0.598, 0.597, 0.596],
           "all tied": [0.58] * 5,
           "random": "five true r drawn uniformly from [0.55, 0.60] in each replicate"}
RANDOM_RANGE = (0.55, 0.60)
TASKS, SUBSETS, PAIRS, SHARED = ("sim-a", "sim-b", "sim-c"), 4, 100, 0.8
PEARSON = MetricSpec("pearson", "correlation", unit="r", summary=True)


def simulate(true_r: list[float], rng: np.random.Generator) -> dict[str, list[pd.DataFrame]]:
    """Per task, one per-item table per model (subset, item, gold, score)."""
    k = SHARED**2 + 1
    slopes = np.array([r * np.sqrt(k) / np.sqrt(1 - r**2) for r in true_r])
    out = {}
    for task in TASKS:
        n = SUBSETS * PAIRS
        gold, shared = rng.standard_normal(n), rng.standard_normal(n)
        subset = np.repeat([f"s{i}" for i in range(SUBSETS)], PAIRS)
        out[task] = [pd.DataFrame({"subset": subset, "item": np.arange(n), "gold": gold,
                                   "score": a * gold + SHARED * shared + rng.standard_normal(n)}) for a in slopes]
    return out


def true_scores(design: list[float] | str, rng: np.random.Generator) -> list[float]:
    """A replicate's true r of the models: the design's, or five drawn for ``random``."""
    return rng.uniform(*RANDOM_RANGE, size=5).tolist() if isinstance(design, str) else design


def rank_coverage(design: list[float] | str, replicates: int, resamples: int, seed: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    covered, joint, length = [], [], []
    for _ in range(replicates):
        true_r = true_scores(design, rng)
        truth = ranking.ranks(np.array(true_r))
        data = simulate(true_r, rng)
        overall = 0.0
        for task, frames in data.items():
            weights = ranking.cluster_weights(frames[0]["subset"].to_numpy(), np.arange(len(frames[0])), resamples, rng)
            overall = overall + np.stack([resampled_score(PEARSON, None, f, weights) for f in frames], axis=1)
        low, high = ranking.rank_intervals(ranking.ranks(overall / len(data)))
        inside = (low <= truth) & (truth <= high)
        covered.append(inside.mean())
        joint.append(inside.all())
        length.append((high - low + 1).mean())
    return float(np.mean(covered)), float(np.mean(joint)), float(np.mean(length))


def write_replicate(data: dict[str, list[pd.DataFrame]], folder: Path) -> None:
    from benchbox.storage.runs import write_run

    for m in range(len(next(iter(data.values())))):
        metrics = []
        for task, frames in data.items():
            items = frames[m]
            for subset, part in items.groupby("subset"):
                metrics.append({"task": task, "subset": subset, "metric": "pearson",
                                "value": float(np.corrcoef(part["gold"], part["score"])[0, 1]), "n": len(part)})
        manifest = {"kind": "eval", "encoder": {"name": f"model{m}", "fingerprint": f"model{m}-fp",
                                                "config": {"m": m}, "dim": 4}, "options": {"seed": 1111}, "tasks": {}}
        write_run(folder, f"model{m}", manifest, pd.DataFrame(metrics), {t: f[m] for t, f in data.items()})


def group_misses(design: list[float] | str, replicates: int, resamples: int,
                 seed: int) -> tuple[float, float, float]:
    """(share of true-best models put below the best, share of replicates with any such, true-best models per
    replicate)."""
    from benchbox.comparison.leaderboard import BELOW_BEST, Settings, build, load_sources

    rng = np.random.default_rng(seed)
    missed, any_missed, bests = 0, 0, 0
    for i in range(replicates):
        true_r = true_scores(design, rng)
        best = {f"model{m}" for m, r in enumerate(true_r) if r == max(true_r)}
        with tempfile.TemporaryDirectory() as tmp:
            write_replicate(simulate(true_r, rng), Path(tmp))
            board = build(load_sources([tmp]), settings=Settings(resamples, seed + i, "all")).frame
        below = set(board.loc[board["group"] == BELOW_BEST, "label"]) & best
        missed += len(below)
        any_missed += bool(below)
        bests += len(best)
    return missed / bests, any_missed / replicates, bests / replicates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--group-replicates", type=int, default=200)
    parser.add_argument("--group-resamples", type=int, default=200)
    parser.add_argument("--group-designs", default="crowded,tied top", help="designs of the significance-group part")
    parser.add_argument("--designs", default=",".join(DESIGNS), help="designs of the rank-interval part")
    parser.add_argument("--seed", type=int, default=45)
    args = parser.parse_args()
    print(f"rank intervals: {args.replicates} replicates per design, {args.resamples} bootstrap replicates each")
    for name, true_r in ((name, DESIGNS[name]) for name in args.designs.split(",") if args.replicates):
        start = time.monotonic()
        covered, joint, length = rank_coverage(true_r, args.replicates, args.resamples, args.seed)
        shown = true_r if isinstance(true_r, str) else [round(r, 4) for r in true_r]
        print(f"  {name:9s} true r {shown}: coverage {covered:.1%} per model, {joint:.1%} all models at once; "
              f"mean interval {length:.2f} ranks ({time.monotonic() - start:.0f} s)", flush=True)
    if args.group_replicates:
        print(f"significance groups: {args.group_replicates} replicates per design through the leaderboard "
              f"(claims of compare, Holm), {args.group_resamples} bootstrap replicates")
        for name in args.group_designs.split(","):
            start = time.monotonic()
            share, any_share, count = group_misses(DESIGNS[name], args.group_replicates, args.group_resamples,
                                                   args.seed)
            print(f"  {name:9s}: a true best put below the best in {share:.1%} of (best, replicate) "
                  f"({count:g} true best), in {any_share:.1%} of replicates ({time.monotonic() - start:.0f} s)",
                  flush=True)


if __name__ == "__main__":
    main()
