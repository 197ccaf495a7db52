"""benchbox.comparison.compare and ``benchbox compare`` on small hand-made runs written with write_run."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st
from typer.testing import CliRunner

from benchbox.data import comparators
from benchbox.cli import app
from benchbox.comparison.compare import COLUMNS, compare
from benchbox.errors import BenchboxError
from benchbox.stats import adjust_pvalues, fisher_ci, mcnemar_test, wilcoxon_test, williams_test, wilson_ci
from benchbox.storage.runs import write_run
from benchbox.comparison.settings import CompareSettings

SUBSETS = {"MSRpar": 200, "MSRvid": 150}


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    gold = {s: rng.uniform(0, 5, n) for s, n in SUBSETS.items()}
    noise = {s: rng.standard_normal(n) for s, n in SUBSETS.items()}
    query_difficulty = rng.integers(1, 30, 300)
    correct_base = rng.random(400)
    return gold, noise, query_difficulty, correct_base


def _metric(task, subset, metric, value, low=np.nan, high=np.nan, n=0):
    return {"task": task, "subset": subset, "metric": metric, "value": value, "ci_low": low, "ci_high": high, "n": n}


def make_run(tmp_path, name: str, noise_scale: float, rank_shift: int, accuracy: float, *, seed: int = 0,
             fingerprint: str | None = None, config: dict | None = None, data_seed: int = 0,
             tasks: dict | None = None):
    """A run with a correlation task (two subsets + year aggregates), a retrieval task and a classification
    task; ``noise_scale`` degrades the pair scores, ``rank_shift`` the ranks, ``accuracy`` the classifier."""
    gold, noise, difficulty, base = _data(data_seed)
    rng = np.random.default_rng(seed + 100)
    metrics, sts_items = [], []
    scores = {}
    for subset, n in SUBSETS.items():
        score = gold[subset] + noise_scale * noise[subset] + 0.3 * rng.standard_normal(n)
        scores[subset] = score
        r, rho = st.pearsonr(score, gold[subset])[0], st.spearmanr(score, gold[subset])[0]
        metrics += [_metric("sts12", subset, "pearson", r, *fisher_ci(r, n), n),
                    _metric("sts12", subset, "spearman", rho, *fisher_ci(rho, n, spearman=True), n)]
        sts_items.append(pd.DataFrame({"subset": subset, "item": np.arange(n),  # distinct sentences: independent pairs
                                       "sentence1": [f"{subset} a{i}" for i in range(n)],
                                       "sentence2": [f"{subset} b{i}" for i in range(n)],
                                       "gold": gold[subset], "score": score}))
    per = pd.DataFrame(metrics)
    for method in ("pearson", "spearman"):
        values = per[per["metric"] == method]
        metrics.append(_metric("sts12", "all", f"{method}_mean", values["value"].mean(), n=350))
        metrics.append(_metric("sts12", "all", f"{method}_wmean", np.average(values["value"], weights=values["n"]), n=350))
        g, s = np.concatenate(list(gold.values())), np.concatenate(list(scores.values()))
        pooled = (st.pearsonr if method == "pearson" else st.spearmanr)(s, g)[0]
        metrics.append(_metric("sts12", "all", f"{method}_pooled", pooled, n=350))
    rank_rows = []
    for direction in ("i2t", "t2i"):
        ranks = np.maximum(1, difficulty + rank_shift + rng.integers(-1, 2, 300))
        rank_rows.append(pd.DataFrame({"subset": "all", "direction": direction, "query": np.arange(300), "rank": ranks}))
        for k in (1, 5, 10):
            hits = int((ranks <= k).sum())
            metrics.append(_metric("retrieval", direction, f"r{k}", 100 * hits / 300,
                                   *(100 * v for v in wilson_ci(hits, 300)), 300))
        metrics.append(_metric("retrieval", direction, "medr", float(np.floor(np.median(ranks))), n=300))
        metrics.append(_metric("retrieval", direction, "meanr", float(ranks.mean()), n=300))
    metrics.append(_metric("retrieval", "all", "rsum", 0.0, n=600))
    correct = base < accuracy
    metrics.append(_metric("mr", "test", "accuracy", 100 * correct.mean(), n=400))
    items = {
        "sts12": pd.concat(sts_items, ignore_index=True),
        "retrieval": pd.concat(rank_rows, ignore_index=True),
        "mr": pd.DataFrame({"subset": "test", "item": np.arange(400), "gold": 1, "pred": correct.astype(int),
                            "correct": correct}),
    }
    manifest = {"kind": "eval", "encoder": {"name": name, "fingerprint": fingerprint or f"{name}-{seed}-fp",
                                            "config": config or {}, "dim": 4},
                "options": {"seed": 1111}, "tasks": tasks or {}}
    return write_run(tmp_path / "runs", name, manifest, pd.DataFrame(metrics), items)


@pytest.fixture
def two_runs(tmp_path):
    good = make_run(tmp_path, "good", noise_scale=0.5, rank_shift=0, accuracy=0.85)
    bad = make_run(tmp_path, "bad", noise_scale=2.0, rank_shift=6, accuracy=0.70)
    return good, bad


def test_compare_two_runs_tests_every_row(two_runs):
    good, bad = two_runs
    comparison = compare([str(good), str(bad)], settings=CompareSettings(n_boot=200))
    table = comparison.table
    assert list(table.columns) == COLUMNS
    assert comparison.models == ["good", "bad"]  # the encoder names (benchbox.labels)
    assert not table["approximate"].any()
    assert np.allclose(table["diff"], table["value_a"] - table["value_b"])
    assert np.allclose(table["p_holm"], adjust_pvalues(table["p"], "holm"))
    assert np.allclose(table["p_bh"], adjust_pvalues(table["p"], "fdr_bh"))
    rows = table.set_index(["task", "subset", "metric"])
    # Williams' t recomputed from the per-pair scores
    a = pd.read_csv(good / "items" / "sts12.csv")
    b = pd.read_csv(bad / "items" / "sts12.csv")
    part_a, part_b = a[a["subset"] == "MSRvid"], b[b["subset"] == "MSRvid"]
    t, p = williams_test(st.pearsonr(part_a["score"], part_a["gold"])[0], st.pearsonr(part_b["score"], part_b["gold"])[0],
                         st.pearsonr(part_a["score"], part_b["score"])[0], 150)
    row = rows.loc[("sts12", "MSRvid", "pearson")]
    assert row["test"] == "williams" and row["statistic"] == pytest.approx(t) and row["p"] == pytest.approx(p)
    assert row["diff_ci_low"] < row["diff"] < row["diff_ci_high"] and row["verdict"] == "better"
    assert rows.loc[("sts12", "all", "pearson_wmean"), "test"] == "bootstrap (strata)"
    assert rows.loc[("sts12", "all", "spearman_pooled"), "verdict"] == "better"
    # retrieval: McNemar on hit@K, Wilcoxon on ranks; lower median rank is better
    ra = pd.read_csv(good / "items" / "retrieval.csv").query("direction == 't2i'")["rank"].to_numpy()
    rb = pd.read_csv(bad / "items" / "retrieval.csv").query("direction == 't2i'")["rank"].to_numpy()
    assert rows.loc[("retrieval", "t2i", "r10"), "p"] == pytest.approx(mcnemar_test(ra <= 10, rb <= 10)[1])
    assert rows.loc[("retrieval", "t2i", "meanr"), "p"] == pytest.approx(wilcoxon_test(ra, rb)[1])
    assert rows.loc[("retrieval", "t2i", "medr"), "diff"] < 0
    assert rows.loc[("retrieval", "t2i", "medr"), "verdict"] == "better"
    assert ("retrieval", "all", "rsum") not in rows.index  # no paired test for rsum
    assert rows.loc[("mr", "test", "accuracy"), "test"] == "mcnemar"
    assert rows.loc[("mr", "test", "accuracy"), "verdict"] == "better"
    assert comparison.summary_lines() == [
        "good significantly better than bad on 5 of 5 summary rows, worse on 0, no significant "
        "difference on 0 (holm-corrected, 5%)"
    ]


def test_equal_runs_show_no_difference(tmp_path):
    a = make_run(tmp_path, "a", noise_scale=1.0, rank_shift=0, accuracy=0.8, seed=1)
    b = make_run(tmp_path, "b", noise_scale=1.0, rank_shift=0, accuracy=0.8, seed=2)
    comparison = compare([str(a), str(b)], ["sts12"], settings=CompareSettings(n_boot=200, test="steiger"))
    assert set(comparison.table["task"]) == {"sts12"}
    assert (comparison.table["verdict"] == "no significant difference").all()
    assert set(comparison.table.query("subset != 'all'")["test"]) == {"steiger"}
    assert "on 0 of 2 summary rows, worse on 0, no significant difference on 2" in comparison.summary_lines()[0]


def test_paper_comparator_is_approximate(tmp_path):
    paper = comparators.paper_result("paper:merkx2019/char-gru-coco").metrics
    rows = paper[paper["task"] == "sts12"].assign(value=lambda f: f["value"] + 0.15)  # a much better model
    run = write_run(tmp_path / "runs", "mine", {"kind": "eval", "encoder": {"name": "mine", "fingerprint": "abc"}},
                    rows, {})
    comparison = compare([str(run), "paper:merkx2019/char-gru-coco"])
    table = comparison.table
    assert len(table) == 5 and table["approximate"].all()
    assert set(table["test"]) == {"steiger-worst-case"}
    assert (table["verdict"] == "better").sum() >= 4
    assert comparison.summary_lines()[0].endswith("(approximate: published numbers, no per-item scores)")


def test_seed_variance_is_reported(tmp_path):
    runs = [make_run(tmp_path, "char-gru", 1.0, 0, 0.8, seed=s, config={"units": 512, "seed": s}) for s in (1, 2, 3)]
    other = make_run(tmp_path, "glove-bow", 1.5, 2, 0.75)
    comparison = compare([*map(str, runs), str(other)], ["sts12"], settings=CompareSettings(n_boot=50))
    seeds = comparison.seeds
    assert set(seeds["model"]) == {"char-gru (3 seeds)"}
    row = seeds.set_index(["task", "subset", "metric"]).loc[("sts12", "MSRpar", "pearson")]
    values = [pd.read_csv(r / "metrics.csv").query("subset == 'MSRpar' and metric == 'pearson'")["value"].iloc[0]
              for r in runs]
    assert row["n_seeds"] == 3
    assert row["mean"] == pytest.approx(np.mean(values)) and row["sd"] == pytest.approx(np.std(values, ddof=1))
    assert len(comparison.summary_lines()) == 6  # every pair of the four runs


def test_mismatched_items_and_bad_options_are_refused(tmp_path):
    a = make_run(tmp_path, "a", 1.0, 0, 0.8)
    b = make_run(tmp_path, "b", 1.0, 0, 0.8, data_seed=5)  # other gold scores
    with pytest.raises(BenchboxError, match="different gold"):
        compare([str(a), str(b)], ["sts12"])
    with pytest.raises(BenchboxError, match="williams or steiger"):
        compare([str(a), str(b)], settings=CompareSettings(test="fisher"))
    with pytest.raises(BenchboxError, match="at least two"):
        compare([str(a)])


def test_cli_prints_tables_and_writes_csv_and_json(two_runs, tmp_path):
    good, bad = two_runs
    result = CliRunner().invoke(app, ["compare", str(good), str(bad), "--task", "sts12", "--test-resamples", "100",
                                      "--csv", str(tmp_path / "c.csv"), "--json", str(tmp_path / "c.json"), "-q"])
    assert result.exit_code == 0, result.output
    assert "significantly better than" in result.output and "MSRvid" in result.output
    table = pd.read_csv(tmp_path / "c.csv")
    assert list(table.columns) == COLUMNS and len(table) == 10
    payload = json.loads((tmp_path / "c.json").read_text())
    assert payload["summary"][0].startswith("good significantly better than bad on 2 of 2")
    assert len(payload["comparisons"]) == 10 and payload["correction"] == "holm"


@pytest.mark.realdata
def test_glove_bow_against_the_published_glove_bow(data_root, tmp_path):
    """GloVe 6B-50d BOW evaluated on demand against the paper's GloVe 840B BOW on STS12 (approximate)."""
    comparison = compare(["glove-bow", "paper:merkx2019/glove-bow"], ["sts12"], data_dir=data_root.root,
                         runs_dir=tmp_path / "runs")
    table = comparison.table
    assert len(table) == 5 and table["approximate"].all()
    assert list((tmp_path / "runs").iterdir())  # the on-demand run was saved
    assert comparison.summary_lines()[0].startswith("glove-bow significantly better than paper:merkx2019/glove-bow")
