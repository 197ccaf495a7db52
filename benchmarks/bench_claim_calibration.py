"""Calibration of the claim-level verdict (issue 31): how often does ``compare`` call a difference where there is
none, and how often does it find one that is there?

Design (through the public API: :func:`benchbox.run_tasks`, ``Evaluation.save``, :func:`resolve_sources`,
:func:`compare_sources` with its defaults): two encoders that are GloVe bag-of-words (6B, 50-d) plus Gaussian noise
tied to the sentence text — the same text gets the same noise vector within a replicate, so pairs that share a
sentence share its noise, as real encoders' errors do. Under the null both encoders draw their noise with the
same scale, so on every row the two population correlations are exactly equal; every rejection is a false one.
The rows are the 26 semantic rows with cosine scoring: STS12–16 (24 subsets), STS-B and SICK-R test
(``stsb-cosine``, ``sickr-cosine``; the supervised ``stsb``/``sickr`` probes would cost a training per run).

Scenarios:

- ``null, 1 vs 1``: one run per model, sentence-tied noise (scale ``--sigma``);
- ``null, 1 vs 1 + word noise``: as above plus noise tied to each word (per run), averaged over the sentence;
- ``null, 3 vs 3 seeds``: per model one sentence-tied noise shared by its seeds, plus word noise per seed
  (declared as seeds with ``compare_sources(seeds=...)``), so the seed-aware test and the pooled test both enter;
- ``power``: model A's noise scale lowered so that the mean Δr over the 26 rows is about 0.006 and 0.012.

Printed per scenario: the claim's false-positive (or detection) rate, the pooled test's, and the per-row unadjusted
rejection rate (Pearson rows), each with a Wilson 95% interval; the mean Δr; replicates and seconds. Run:
``BENCHBOX_DATA=../shared/data python benchmarks/bench_claim_calibration.py`` (``--help`` for replicate counts;
the defaults are the issue's minimum: 200 single-run and 100 seed replicates, 100 per power level).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import sparse
from statsmodels.stats.proportion import proportion_confint

import benchbox
from benchbox.comparison.compare import compare_sources
from benchbox.comparison.sources import resolve_sources
from benchbox.task_contract.options import TaskOptions

TASKS = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb-cosine", "sickr-cosine"]
WORD = re.compile(r"\S+")


class Vocabulary:
    """Every sentence the tasks will encode, with its GloVe-BOW vector and its words (rows of a sparse
    sentence × word averaging matrix), so that each replicate's noisy encoders cost one matrix product."""

    def __init__(self, data_dir: str) -> None:
        seen: list[str] = []

        class Recorder:
            name, dim = "recorder", 4

            def fingerprint(self):
                return "recorder"

            def encode(self, sentences, batch_size=128):
                seen.extend(sentences)
                return np.random.default_rng(len(seen)).standard_normal((len(sentences), 4)).astype(np.float32)

        benchbox.run_tasks(Recorder(), TASKS, data_dir=data_dir, cache=False, options=TaskOptions(bootstrap=0))
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

    def noise(self, rng: np.random.Generator, sentence_sigma: float, word_sigma: float) -> np.ndarray:
        dim = self.base.shape[1]
        out = sentence_sigma * self.scale * rng.standard_normal((len(self.sentences), dim))
        if word_sigma:
            out += word_sigma * self.scale * (self.averaging @ rng.standard_normal((self.averaging.shape[1], dim)))
        return out


class NoisyGlove:
    """An encoder: GloVe-BOW plus a fixed noise matrix, looked up by the sentence text."""

    dim = 50

    def __init__(self, name: str, vocabulary: Vocabulary, noise: np.ndarray) -> None:
        self.name, self.vocabulary, self.vectors = name, vocabulary, vocabulary.base + noise
        self.token = os.urandom(8).hex()

    def fingerprint(self) -> str:
        return f"{self.name}-{self.token}"  # a fresh encoder each replicate: nothing cached, no run reused

    def encode(self, sentences, batch_size=128):
        return self.vectors[[self.vocabulary.index[s] for s in sentences]].astype(np.float32)


def replicate(vocabulary: Vocabulary, data_dir: str, folder: Path, rng: np.random.Generator, *, seeds: int,
              sigma: float, word_sigma: float, sigma_a: float | None = None) -> dict[str, float]:
    """One comparison of model A with model B; returns the claim's and the pooled test's rejection, the share of
    Pearson summary rows rejected unadjusted, and the mean Δr over them."""
    runs, declared = [], {}
    for model, scale in (("A", sigma if sigma_a is None else sigma_a), ("B", sigma)):
        shared = vocabulary.noise(rng, scale, 0.0)  # tied to the sentence, the same for every seed of the model
        labels = []
        for s in range(seeds):
            noise = shared + (vocabulary.noise(rng, 0.0, word_sigma) if word_sigma else 0.0)
            encoder = NoisyGlove(f"{model}{s}", vocabulary, noise)
            evaluation = benchbox.run_tasks(encoder, TASKS, data_dir=data_dir, cache=False,
                                            options=TaskOptions(bootstrap=0), label=f"{model}{s}")
            runs.append(str(evaluation.save(folder)))
            labels.append(f"{model}{s}")
        declared[model] = labels
    models = resolve_sources(runs, TASKS)
    comparison = compare_sources(models, TASKS, n_boot=200, seeds=declared if seeds > 1 else None)
    claims = comparison.claims
    claim = claims[(claims["kind"] == "correlation")].iloc[0]
    table = comparison.table
    rows = table[table["unit"].astype(bool) & (table["metric"] == "pearson")
                 & table["model_a"].str.startswith("A") & table["model_b"].str.startswith("B")]
    return {"claim": float(claim["verdict"] != "no significant difference"), "pooled": float(claim["p_pooled"] < 0.05),
            "rows": float((rows["p"] < 0.05).mean()), "n_rows": float(len(rows)),
            "dr": float(rows["diff"].mean()), "df": float(claim.get("df", np.nan))}


def wilson(hits: float, n: int) -> str:
    low, high = proportion_confint(round(hits), n, method="wilson")
    return f"{100 * hits / n:5.1f}% [{100 * low:4.1f}, {100 * high:4.1f}]"


def scenario(name: str, count: int, vocabulary: Vocabulary, data_dir: str, seed: int, **kwargs) -> dict:
    rng = np.random.default_rng(seed)
    started, results = time.perf_counter(), []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(count):
            folder = Path(tmp) / str(i)
            results.append(replicate(vocabulary, data_dir, folder, rng, **kwargs))
    claim = sum(r["claim"] for r in results)
    pooled = sum(r["pooled"] for r in results)
    row_tests = sum(r["rows"] * r["n_rows"] for r in results)
    n_rows = int(sum(r["n_rows"] for r in results))
    line = (f"| {name} | {count} | {wilson(claim, count)} | {wilson(pooled, count)} | {wilson(row_tests, n_rows)} "
            f"| {np.mean([r['dr'] for r in results]):+.4f} | {np.nanmedian([r['df'] for r in results]):.1f} "
            f"| {time.perf_counter() - started:.0f} |")
    print(line, flush=True)
    return {"name": name, "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=200, help="null replicates of each single-run scenario")
    parser.add_argument("--seed-replicates", type=int, default=100, help="null replicates of 3 vs 3 seeds")
    parser.add_argument("--power-replicates", type=int, default=100, help="replicates per power level")
    parser.add_argument("--sigma", type=float, default=1.0,
                        help="sentence-tied noise, in units of the GloVe-BOW vectors' per-dimension size")
    parser.add_argument("--word-sigma", type=float, default=1.0, help="word noise, same units")
    parser.add_argument("--power-shrink", type=float, nargs=2, default=(0.055, 0.11),
                        help="model A's sentence noise is sigma × (1 − shrink) in the two power scenarios")
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--scenarios", default="null,word,seeds,power",
                        help="comma-separated subset of null, word, seeds, power")
    args = parser.parse_args()
    data_dir = os.environ.get("BENCHBOX_DATA")
    if not data_dir:
        sys.exit("set BENCHBOX_DATA to the data root (../shared/data): the STS12-16 files are not embedded")
    started = time.perf_counter()
    vocabulary = Vocabulary(data_dir)
    print(f"{len(vocabulary.sentences)} sentences, {vocabulary.averaging.shape[1]} words; "
          f"sigma {args.sigma}, word sigma {args.word_sigma}; set-up {time.perf_counter() - started:.0f} s\n")
    print("| scenario | replicates | claim better/worse | pooled p < 5% | per-row unadjusted p < 5% | mean Δr "
          "| median df | s |")
    print("|---|---|---|---|---|---|---|---|")
    chosen = set(args.scenarios.split(","))
    common = {"vocabulary": vocabulary, "data_dir": data_dir, "sigma": args.sigma}
    if "null" in chosen:
        scenario("null, 1 vs 1", args.replicates, seed=args.seed, seeds=1, word_sigma=0.0, **common)
    if "word" in chosen:
        scenario("null, 1 vs 1 + word noise", args.replicates, seed=args.seed + 1, seeds=1,
                 word_sigma=args.word_sigma, **common)
    if "seeds" in chosen:
        scenario("null, 3 vs 3 seeds", args.seed_replicates, seed=args.seed + 2, seeds=3,
                 word_sigma=args.word_sigma, **common)
    for i, shrink in enumerate(args.power_shrink if "power" in chosen else ()):
        scenario(f"power, A's noise × {1 - shrink:.3f}", args.power_replicates, seed=args.seed + 3 + i, seeds=1,
                 word_sigma=0.0, sigma_a=args.sigma * (1 - shrink), **common)


if __name__ == "__main__":
    main()
