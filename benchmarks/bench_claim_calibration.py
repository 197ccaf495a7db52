"""Calibration of the claim-level verdict (issues 31, 42): how often does ``compare`` call a difference where there
is none, and how often does it find one that is there?

Design: two encoders that are GloVe bag-of-words (6B, 50-d) plus Gaussian noise tied to the sentence text — the
same text gets the same noise vector within a replicate, so pairs that share a sentence share its noise, as real
encoders' errors do. Under the null both encoders draw their noise with the same scale, so on every row the two
population correlations are exactly equal; every rejection is a false one. The rows are the 26 semantic rows with
cosine scoring: STS12–16 (24 subsets), STS-B and SICK-R test (``stsb-cosine``, ``sickr-cosine``).

Scenarios (``--scenarios``):

- ``1v1``: one run per model, sentence-tied noise (scale ``--sigma``);
- ``3v3``, ``5v5``: seeds that share item error: per model ONE sentence-tied draw shared by all its seeds, plus
  word noise per seed (``--word-sigma``: a draw per word, averaged over the sentence's words), so seeds differ
  by seed-level noise and share the item-level one, as the seeds of one configuration scored on the same
  sentences do;
- ``power``: one run a model, model A's sentence noise × (1 − shrink) (``--power-shrink``), so that the mean Δr
  over the 26 rows is about 0.0067 and 0.0128.

Speed: the claim needs the per-item cosine scores of every run, their sentence groups and the rows' clusters,
nothing else. The set-up runs the tasks once (through :func:`benchbox.run_tasks`) to read every row's pairs and
gold; a replicate then draws the noise, scores every pair with one vectorised cosine and computes the claim from
the per-item scores with the functions ``compare`` calls (:func:`claim_tests`). ``--check`` (on in ``--quick``)
runs the first replicate of the 1v1 and 3v3 scenarios through the public API as well — ``run_tasks``,
``Evaluation.save``, :func:`resolve_sources`, :func:`compare_sources` with its defaults and the seeds declared —
and stops unless the claim's p is the fast path's. ``--workers N`` spreads the replicates over N processes
(each replicate's draws come from its own seed, so the figures do not depend on N).

Printed per scenario: the rejection rate at 5% of the claim, of the intersection–union rule of 88a3f56
(max(pooled p, seed p)) on the same draws, of the pooled (per-row, random-effects) test alone and of the
unadjusted per-row jackknife tests, each with a Wilson 95% interval; the mean Δr; replicates and seconds. With
the 1v1 and power scenarios together, the most power any test of a weighted mean of the rows' Δz can have at each
power level (:func:`power_bound`), beside the 88a3f56 rule's. Run:
``BENCHBOX_DATA=../shared/data python benchmarks/bench_claim_calibration.py --workers 2`` (``--help``);
``--quick`` is the CI's: a few replicates of every scenario and the API check.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import multiprocessing
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.stats import norm
from statsmodels.stats.proportion import proportion_confint

import benchbox
from benchbox.comparison.compare import compare_sources
from benchbox.comparison.pairing import row_clusters
from benchbox.comparison.sources import resolve_sources
from benchbox.stats import grouped_jackknife_test, sentence_groups
from benchbox.stats import seeds as seed_stats
from benchbox.stats.claim_test import joint_test
from benchbox.stats.pooling import pool_effects
from benchbox.task_contract.options import TaskOptions

TASKS = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb-cosine", "sickr-cosine"]
WORD = re.compile(r"\S+")
#: scenario name → (seeds a model, word noise on, power shrink of A's sentence noise or None)
SCENARIOS = {"1v1": (1, False, None), "3v3": (3, True, None), "5v5": (5, True, None)}


@dataclass
class Row:
    """One summary row: its task and subset, gold, the vocabulary index of each pair's two sentences, its
    sentence groups within the row (None: no two pairs share a sentence), its cluster and its global groups."""

    task: str
    subset: str
    gold: np.ndarray
    first: np.ndarray
    second: np.ndarray
    groups: np.ndarray | None
    cluster: str
    claim_groups: np.ndarray


class Design:
    """Every sentence the tasks encode, with its GloVe-BOW vector and its words (rows of a sparse sentence × word
    averaging matrix), and every row's pairs: a replicate's encoders then cost one product and one cosine."""

    def __init__(self, data_dir: str) -> None:
        seen: list[str] = []

        class Recorder:
            name, dim = "recorder", 4

            def fingerprint(self):
                return "recorder"

            def encode(self, sentences, batch_size=128):
                seen.extend(sentences)
                return np.random.default_rng(len(seen)).standard_normal((len(sentences), 4)).astype(np.float32)

        evaluation = benchbox.run_tasks(Recorder(), TASKS, data_dir=data_dir, cache=False,
                                        options=TaskOptions(bootstrap=0))
        self.sentences = list(dict.fromkeys(seen))
        self.index = {s: i for i, s in enumerate(self.sentences)}
        self.base = benchbox.load_encoder("glove-bow").encode(self.sentences).astype(np.float64)
        words = [WORD.findall(s.lower()) or [""] for s in self.sentences]
        vocab = {w: i for i, w in enumerate(dict.fromkeys(w for ws in words for w in ws))}
        rows = np.repeat(np.arange(len(words)), [len(ws) for ws in words])
        cols = np.array([vocab[w] for ws in words for w in ws])
        weights = np.concatenate([np.full(len(ws), 1 / len(ws)) for ws in words])
        self.averaging = sparse.csr_matrix((weights, (rows, cols)), shape=(len(words), len(vocab)))
        self.scale = float(np.sqrt(np.mean(self.base**2)))  # the per-dimension size of the GloVe-BOW vectors
        items = {r.task: r.items for r in evaluation.results}
        clusters = row_clusters(items, {task: ("subset", "item") for task in items})
        everything = pd.concat([frame.assign(task=task) for task, frame in items.items()], ignore_index=True)
        everything["subset"] = everything["subset"].astype(str)
        linked = sentence_groups(everything["sentence1"], everything["sentence2"])  # across every row
        self.rows = []
        for (task, subset), part in everything.groupby(["task", "subset"], sort=False):
            groups = sentence_groups(part["sentence1"], part["sentence2"])
            self.rows.append(Row(task, subset, part["gold"].to_numpy(float),
                                 np.array([self.index[s] for s in part["sentence1"]]),
                                 np.array([self.index[s] for s in part["sentence2"]]),
                                 groups if groups.max() + 1 < len(groups) else None,
                                 clusters.get((task, subset), f"{task}/{subset}"),
                                 linked[part.index.to_numpy()]))

    def noise(self, rng: np.random.Generator, sentence_sigma: float, word_sigma: float) -> np.ndarray:
        dim = self.base.shape[1]
        out = sentence_sigma * self.scale * rng.standard_normal((len(self.sentences), dim))
        if word_sigma:
            out += word_sigma * self.scale * (self.averaging @ rng.standard_normal((self.averaging.shape[1], dim)))
        return out

    def scores(self, vectors: np.ndarray) -> list[np.ndarray]:
        """Every row's per-item cosine (in float32, as the tasks compute it)."""
        v = vectors.astype(np.float32)
        norms = np.linalg.norm(v, axis=1)
        out = []
        for row in self.rows:
            dots = np.einsum("ij,ij->i", v[row.first], v[row.second])
            with np.errstate(invalid="ignore", divide="ignore"):
                out.append(np.nan_to_num((dots / (norms[row.first] * norms[row.second])).astype(np.float64)))
        return out


class NoisyGlove:
    """An encoder: GloVe-BOW plus a fixed noise matrix, looked up by the sentence text (the API check)."""

    dim = 50

    def __init__(self, name: str, design: Design, vectors: np.ndarray) -> None:
        self.name, self.design, self.vectors = name, design, vectors
        self.token = os.urandom(8).hex()

    def fingerprint(self) -> str:
        return f"{self.name}-{self.token}"  # a fresh encoder each replicate: nothing cached, no run reused

    def encode(self, sentences, batch_size=128):
        return self.vectors[[self.design.index[s] for s in sentences]].astype(np.float32)


def intersection_union(design: Design, a: list[list[np.ndarray]], b: list[list[np.ndarray]]) -> dict[str, float]:
    """The claim of 88a3f56 from per-item scores (``a[s][row]``: seed s's scores on a row): per row and run pair the
    grouped jackknife's (Δz, var), averaged over the run pairs; random-effects pooling (DL) with the rows'
    clusters (CR2, or the sign-flip test below 4 df); with seeds, Student's t on the per-seed scores weighted with
    the random-effects weights; p = max(pooled p, seed p). Returns the pooled p, the claim's p, the per-row
    jackknife p of the first run pair and the rows' variances (the claim test of issue 42 weights with them)."""
    effects, variances, row_p = [], [], []
    for i, row in enumerate(design.rows):
        found = [grouped_jackknife_test(row.gold, sa[i], sb[i], row.groups) for sa in a for sb in b]
        effects.append(np.mean([f.diff_z for f in found]))
        variances.append(np.mean([f.var_z for f in found]))
        row_p.append(found[0].p)
    pooled = pool_effects(effects, variances, method="dl", clusters=[row.cluster for row in design.rows])
    p = pooled.p
    if max(len(a), len(b)) > 1:
        weights = 1 / (np.asarray(variances) + pooled.tau2)
        on_scale = [seed_stats.per_seed_scores(
            [[np.arctanh(np.corrcoef(row.gold, s[i])[0, 1]) for i, row in enumerate(design.rows)] for s in side],
            weights) for side in (a, b)]
        p = max(p, seed_stats.seed_test(*on_scale).p)
    return {"pooled": pooled.p, "old": p, "row_p": row_p, "effects": np.asarray(effects),
            "variances": np.asarray(variances)}


def claim_tests(design: Design, a: list[list[np.ndarray]], b: list[list[np.ndarray]]) -> dict[str, float]:
    """The p of every rule the bench reports on one replicate's per-item scores."""
    out = intersection_union(design, a, b)
    out["claim"] = joint_test([row.gold for row in design.rows], *([np.array([s[i] for s in side])
                              for i in range(len(design.rows))] for side in (a, b)),
                              [row.claim_groups for row in design.rows], variances=out["variances"],
                              clusters=[row.cluster for row in design.rows]).p
    return out


def draw(design: Design, rng: np.random.Generator, seeds: int, sigma: float, word_sigma: float,
         sigma_a: float) -> dict[str, list[np.ndarray]]:
    """Each model's seeds' vectors: one sentence-tied draw per model, plus word noise per seed when on."""
    runs = {}
    for model, scale in (("A", sigma_a), ("B", sigma)):
        shared = design.base + design.noise(rng, scale, 0.0)
        runs[model] = [shared + design.noise(rng, 0.0, word_sigma) if word_sigma else shared for _ in range(seeds)]
    return runs


DESIGN: Design | None = None  # the workers' copy, inherited by fork


def replicate(job: tuple[int, int, int, float, float, float]) -> dict[str, float]:
    """One replicate: its own seed (entropy, scenario, index), its draws, every rule's p and the mean Δr."""
    entropy, scenario, index, sigma, word_sigma, sigma_a = job
    seeds = int(scenario)
    rng = np.random.default_rng([entropy, scenario, index])
    runs = draw(DESIGN, rng, seeds, sigma, word_sigma, sigma_a)
    a, b = ([DESIGN.scores(v) for v in runs[m]] for m in ("A", "B"))
    out = claim_tests(DESIGN, a, b)
    dr = [np.corrcoef(row.gold, a[0][i])[0, 1] - np.corrcoef(row.gold, b[0][i])[0, 1]
          for i, row in enumerate(DESIGN.rows)]
    return {"claim": float(out["claim"] < 0.05), "old": float(out["old"] < 0.05),
            "pooled": float(out["pooled"] < 0.05), "rows": float(np.mean(np.asarray(out["row_p"]) < 0.05)),
            "n_rows": float(len(out["row_p"])), "dr": float(np.mean(dr)), "p_claim": out["claim"],
            "effects": out["effects"], "variances": out["variances"]}


def through_api(design: Design, data_dir: str, runs: dict[str, list[np.ndarray]]) -> float:
    """The claim's p of these vectors through the public API (``run_tasks``, ``save``, ``resolve_sources``,
    ``compare_sources`` with its defaults and the seeds declared)."""
    with tempfile.TemporaryDirectory() as tmp:
        paths, declared = [], {}
        for model, vectors in runs.items():
            declared[model] = [f"{model}{s}" for s in range(len(vectors))]
            for s, v in enumerate(vectors):
                evaluation = benchbox.run_tasks(NoisyGlove(model, design, v), TASKS, data_dir=data_dir,
                                                cache=False, options=TaskOptions(bootstrap=0), label=f"{model}{s}")
                paths.append(str(evaluation.save(Path(tmp))))
        comparison = compare_sources(resolve_sources(paths, TASKS), TASKS,
                                     seeds=declared if len(runs["A"]) > 1 else None)
    claims = comparison.claims
    return float(claims[claims["kind"] == "correlation"].iloc[0]["p_claim"])


def check(design: Design, data_dir: str, entropy: int, scenario: int, sigma: float, word_sigma: float) -> None:
    """The first replicate of a scenario through the public API and the fast path: one claim p, or stop."""
    rng = np.random.default_rng([entropy, scenario, 0])
    runs = draw(design, rng, scenario, sigma, word_sigma, sigma)
    fast = claim_tests(design, *([design.scores(v) for v in runs[m]] for m in ("A", "B")))["claim"]
    api = through_api(design, data_dir, runs)
    if not math.isclose(fast, api, rel_tol=1e-3, abs_tol=1e-4):
        sys.exit(f"the fast path's claim p {fast:.6g} is not compare_sources' {api:.6g} ({scenario} vs {scenario})")
    print(f"check {scenario} vs {scenario}: claim p {fast:.4g} (fast path) = {api:.4g} (compare_sources)", flush=True)


def wilson(hits: float, n: int) -> str:
    low, high = proportion_confint(round(hits), n, method="wilson")
    return f"{100 * hits / n:5.1f}% [{100 * low:4.1f}, {100 * high:4.1f}]"


def scenario(name: str, jobs: list[tuple], pool) -> list[dict]:
    started = time.perf_counter()
    results = list(pool.imap(replicate, jobs) if pool is not None else map(replicate, jobs))
    count = len(results)
    n_rows = int(sum(r["n_rows"] for r in results))
    rows = sum(r["rows"] * r["n_rows"] for r in results)
    print(f"| {name} | {count} | {wilson(sum(r['claim'] for r in results), count)} "
          f"| {wilson(sum(r['old'] for r in results), count)} | {wilson(sum(r['pooled'] for r in results), count)} "
          f"| {wilson(rows, n_rows)} | {np.mean([r['dr'] for r in results]):+.4f} "
          f"| {time.perf_counter() - started:.0f} |", flush=True)
    return results


def power_bound(null: list[dict], power: list[dict]) -> tuple[float, float]:
    """The most power any test of a weighted mean of the rows' Δz can have at 5% (one run a side): the weights
    1/v̄_r, v̄_r a row's mean variance over the null replicates (the inverse-variance weights of its population
    variance, fixed in advance), and the statistic's null standard deviation known (a z test with no estimation
    error). Returns (power, the old rule's rejection rate on the same power draws)."""
    weights = 1 / np.mean([r["variances"] for r in null], axis=0)
    under_null = np.array([r["effects"] for r in null]) @ weights
    shift = float(np.mean(np.array([r["effects"] for r in power]) @ weights) / under_null.std(ddof=1))
    return float(norm.sf(1.96 - shift) + norm.cdf(-1.96 - shift)), float(np.mean([r["old"] for r in power]))


def main(argv: list[str] | None = None) -> None:
    global DESIGN
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=400, help="null replicates of each null scenario")
    parser.add_argument("--power-replicates", type=int, default=200, help="replicates per power level")
    parser.add_argument("--sigma", type=float, default=1.0,
                        help="sentence-tied noise, in units of the GloVe-BOW vectors' per-dimension size")
    parser.add_argument("--word-sigma", type=float, default=1.0, help="word noise per seed, same units")
    parser.add_argument("--power-shrink", type=float, nargs=2, default=(0.055, 0.11),
                        help="model A's sentence noise is sigma × (1 − shrink) in the two power scenarios")
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--scenarios", default="1v1,3v3,5v5,power", help="comma-separated subset of "
                        f"{', '.join(SCENARIOS)}, power")
    parser.add_argument("--workers", type=int, default=1, help="processes the replicates are spread over")
    parser.add_argument("--check", action="store_true",
                        help="first replicate of 1v1 and 3v3 through compare_sources too (on in --quick)")
    parser.add_argument("--quick", action="store_true", help="3 replicates of every scenario, with --check (CI)")
    args = parser.parse_args(argv)
    if args.quick:
        args.replicates = args.power_replicates = 3
        args.check = True
    data_dir = os.environ.get("BENCHBOX_DATA")
    if not data_dir:
        sys.exit("set BENCHBOX_DATA to the data root (../shared/data): the STS12-16 files are not embedded")
    chosen = args.scenarios.split(",")
    unknown = [c for c in chosen if c not in SCENARIOS and c != "power"]
    if unknown:
        sys.exit(f"unknown scenario(s) {', '.join(unknown)}: use {', '.join(SCENARIOS)}, power")
    started = time.perf_counter()
    DESIGN = Design(data_dir)
    print(f"{len(DESIGN.sentences)} sentences, {DESIGN.averaging.shape[1]} words, {len(DESIGN.rows)} rows; "
          f"sigma {args.sigma}, word sigma {args.word_sigma}; set-up {time.perf_counter() - started:.0f} s\n",
          flush=True)
    if args.check:
        for name in ("1v1", "3v3"):
            seeds, word, _ = SCENARIOS[name]
            if name in chosen:
                check(DESIGN, data_dir, args.seed, seeds, args.sigma, args.word_sigma if word else 0.0)
    print("| scenario | replicates | claim | max(pooled p, seed p) (88a3f56) | pooled p < 5% "
          "| per-row unadjusted p < 5% | mean Δr | s |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    context = multiprocessing.get_context("fork")
    with context.Pool(args.workers) if args.workers > 1 else contextlib.nullcontext() as pool:
        nulls, powers = {}, {}
        for name in (c for c in SCENARIOS if c in chosen):
            seeds, word, _ = SCENARIOS[name]
            word_sigma = args.word_sigma if word else 0.0
            nulls[name] = scenario(f"null, {seeds} vs {seeds}" + (", shared item error" if seeds > 1 else ""),
                                   [(args.seed, seeds, i, args.sigma, word_sigma, args.sigma)
                                    for i in range(args.replicates)], pool)
        for i, shrink in enumerate(args.power_shrink if "power" in chosen else ()):
            powers[shrink] = scenario(f"power, 1 vs 1, A's noise × {1 - shrink:.3f}",
                                      [(args.seed + 1 + i, 1, j, args.sigma, 0.0, args.sigma * (1 - shrink))
                                       for j in range(args.power_replicates)], pool)
    if "1v1" in nulls:
        for shrink, power in powers.items():
            bound, old = power_bound(nulls["1v1"], power)
            print(f"\nA's noise × {1 - shrink:.3f}: the best test of a weighted mean of the rows' Δz (population "
                  f"inverse-variance weights, its variance known) has {100 * bound:.1f}% power; the 88a3f56 rule "
                  f"{100 * old:.1f}% (ratio at most {bound / max(old, 1e-9):.2f})", flush=True)


if __name__ == "__main__":
    main()
