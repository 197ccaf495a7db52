"""STS12–16 (docs/protocols.md#sts): file reading, cosine scores, correlations, aggregates, SentEval equality."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr

from benchbox import run_tasks
from benchbox.data.root import DataRoot
from benchbox.errors import BenchboxError
from benchbox.stats import fisher_ci
from benchbox.tasks.sts import STS12, cosine_rows, read_sts_subset
from tests.helpers import TableEncoder
from tests.senteval_reference import senteval_sts


def write_subset(folder: Path, name: str, pairs: list[str], gold: list[str]) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    inp, gs = folder / f"STS.input.{name}.txt", folder / f"STS.gs.{name}.txt"
    inp.write_text("".join(p + "\n" for p in pairs), encoding="utf-8")
    gs.write_text("".join(g + "\n" for g in gold), encoding="utf-8")
    return inp, gs


def test_unscored_pairs_are_dropped(tmp_path):
    inp, gs = write_subset(tmp_path, "x", ["a\tb", "c\td", "e\tf", "g\th", "i\tj"], ["1", "", "2.5", "4", "0"])
    subset = read_sts_subset("x", inp, gs)
    assert subset.sentences1 == ["a", "e", "g", "i"]
    assert subset.gold.tolist() == [1.0, 2.5, 4.0, 0.0]


@pytest.mark.parametrize(
    ("pairs", "gold", "message"),
    [
        (["a\tb"] * 5, ["1"] * 4, "every input line needs a gold line"),
        (["a\tb"] * 5, ["1", "x", "2", "3", "4"], "is not a number"),
        (["a\tb", "a\tb\tc", "a\tb", "a\tb", "a\tb"], ["1"] * 5, "expected 2 tab-separated columns, found 3"),
        (["a\tb", "\tb", "a\tb", "a\tb", "a\tb"], ["1"] * 5, "empty sentence"),
        (["a\tb"] * 5, ["1", "7", "2", "3", "4"], "outside [0, 5]"),
        (["a\tb"] * 3, ["1"] * 3, "at least 4"),
    ],
)
def test_bad_files_give_clear_errors(tmp_path, pairs, gold, message):
    inp, gs = write_subset(tmp_path, "x", pairs, gold)
    with pytest.raises(BenchboxError, match=message.replace("[", r"\[").replace("]", r"\]")):
        read_sts_subset("x", inp, gs)


def test_cosine_matches_definition_and_zero_vectors_score_zero():
    a = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    b = np.array([[0.0, 2.0], [2.0, 2.0], [1.0, 0.0]])
    assert cosine_rows(a, b).tolist() == pytest.approx([0.0, 1.0, 0.0])


def make_sts12(tmp_path: Path) -> Path:
    """A tiny STS12 with hand-checkable scores: each sentence is a 2-d vector; see the table below."""
    folder = tmp_path / "senteval/downstream/STS/STS12-en-test"
    for subset in STS12.subsets:
        write_subset(folder, subset, ["s0\tt0", "s1\tt1", "s2\tt2", "s3\tt3", "s4\tt4", "s5\tt5"],
                     ["0", "1", "2", "", "3", "5"])
    return tmp_path


# cosines of (s_i, t_i): 1, 0.6, 0.8, (unscored), 0, 0.6 → vs gold 0, 1, 2, 3, 5
TABLE = {
    "s0": [1, 0], "t0": [2, 0], "s1": [1, 0], "t1": [3, 4], "s2": [1, 0], "t2": [4, 3],
    "s3": [1, 0], "t3": [1, 0], "s4": [1, 0], "t4": [0, 1], "s5": [0, 1], "t5": [4, 3],
}


def test_hand_made_sts12_correlations_and_aggregates(tmp_path):
    root = make_sts12(tmp_path)
    evaluation = run_tasks(TableEncoder(TABLE), ["sts12"], data_dir=root, cache=False)
    metrics = {(r.subset, r.metric): r for r in evaluation.records}
    cos = np.array([1.0, 0.6, 0.8, 0.0, 0.6])
    gold = np.array([0.0, 1.0, 2.0, 3.0, 5.0])
    r = metrics[("MSRpar", "pearson")]
    assert r.value == pytest.approx(pearsonr(cos, gold)[0])
    assert r.value == pytest.approx(-1.4 / np.sqrt(0.56 * 14.8))  # by hand: -0.4863
    assert (r.ci_low, r.ci_high) == pytest.approx(fisher_ci(r.value, 5))
    assert r.n == 5
    rho = metrics[("MSRpar", "spearman")]
    assert rho.value == pytest.approx(-6.5 / np.sqrt(95))  # ranks (5, 2.5, 4, 1, 2.5) vs (1..5) by hand
    # every subset is identical, so mean = wmean = that subset's value; pooled uses all 25 pairs
    assert metrics[("all", "pearson_mean")].value == pytest.approx(r.value)
    assert metrics[("all", "pearson_wmean")].value == pytest.approx(r.value)
    assert metrics[("all", "pearson_pooled")].value == pytest.approx(r.value)
    assert metrics[("all", "pearson_pooled")].n == 25
    low, high = metrics[("all", "pearson_mean")].ci_low, metrics[("all", "pearson_mean")].ci_high
    assert low <= r.value <= high
    items = evaluation.results[0].items
    assert list(items.columns) == ["subset", "item", "sentence1", "sentence2", "gold", "score"]
    assert items[items.subset == "MSRpar"].score.tolist() == pytest.approx(cos.tolist())


def test_missing_data_names_the_dataset_and_the_fix(tmp_path):
    # SentEval's processed STS files have no verifiable download: the fix is an import
    with pytest.raises(BenchboxError, match=r"dataset sts12\).*`benchbox data import DIR`") as raised:
        run_tasks(TableEncoder(TABLE), ["sts12"], data_dir=tmp_path, cache=False)
    assert "data fetch" not in str(raised.value)
    with pytest.raises(BenchboxError, match=r"dataset mr\).*`benchbox data fetch mr`"):
        run_tasks(TableEncoder(TABLE), ["mr"], data_dir=tmp_path, cache=False)


@pytest.mark.realdata
def test_sts_equals_senteval_loop_on_real_data(data_root: DataRoot, glove):
    evaluation = run_tasks(glove, ["sts"], data_dir=data_root.root, cache=False)
    metrics = {(r.task, r.subset, r.metric): r for r in evaluation.records}
    compared = 0
    for result in evaluation.results:
        task = result.task
        year = task[-2:]
        subsets = [s for s in result.items.subset.unique()]
        folder = data_root.root / f"senteval/downstream/STS/STS{year}-en-test"
        for subset, (pearson, spearman, n) in senteval_sts(glove.encode, folder, tuple(subsets)).items():
            assert metrics[(task, subset, "pearson")].value == pytest.approx(pearson, abs=1e-6)
            assert metrics[(task, subset, "spearman")].value == pytest.approx(spearman, abs=1e-6)
            assert metrics[(task, subset, "pearson")].n == n
            compared += 1
    assert compared == 24
    counts = {(t, s): metrics[(t, s, "pearson")].n for (t, s, m) in metrics if m == "pearson" and s != "all"}
    assert sum(counts.values()) == 3108 + 1500 + 3750 + 3000 + 1186
    assert metrics[("sts13", "FNWN", "pearson")].n == 189
