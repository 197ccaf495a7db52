"""The task bases for plugin authors (benchbox.tasks.bases) and the declarative task files built on them
(benchbox.tasks.declarative, ``benchbox --include TASKS.toml``): a task is its data and metadata, and its numbers
are the protocol's, checked here against values computed by hand or by scipy/sklearn (issue #28)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as st
from sklearn.metrics import roc_auc_score

from benchbox.comparison.compare import compare
from benchbox.errors import BenchboxError
from benchbox.evaluation import run_tasks
from benchbox.include import include_file
from benchbox.registry import TASKS
from benchbox.task_contract.options import TaskOptions
from benchbox.tasks.bases import cosine, expected_ranks
from benchbox.tasks.declarative import load_task_file
from benchbox.comparison.settings import CompareSettings
from tests.helpers import LetterCounts

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [("a cat sat", "the cat sat", 4.5, 1), ("dogs run fast", "a dog runs", 3.8, 1), ("red cars", "blue sky", 0.5, 0),
         ("she sings", "a woman sings", 4.0, 1), ("rain falls", "stocks fell", 0.8, 0), ("kids swim", "the oven", 0.2, 0),
         ("big trees grow", "tall trees", 3.5, 1), ("he cooks rice", "jazz plays", 0.4, 0)]
TOML = '''
[[task]]
name = "decl-sts"
base = "pair-correlation"
data = ["pairs.tsv"]
columns = { sentence1 = "left", sentence2 = "right", gold = "score" }
description = "graded pairs"
license = "CC0-1.0"

[[task]]
name = "decl-paraphrase"
base = "pair-classification"
data = ["pairs.tsv"]
columns = { sentence1 = "left", sentence2 = "right", gold = "label" }

[[task]]
name = "decl-search"
base = "retrieval"
data = ["queries.tsv", "documents.tsv"]

[[task]]
name = "decl-topics"
base = "classification"
data = ["topics.tsv"]
'''


@pytest.fixture
def declared(tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "pairs.tsv").write_text("# graded and labelled pairs\nleft\tright\tscore\tlabel\n"
                                      + "".join(f"{a}\t{b}\t{s}\t{y}\n" for a, b, s, y in PAIRS))
    (folder / "queries.tsv").write_text("query\tsentence\trelevant\nq1\ta cat sat\td1\nq2\tdogs run\td2|d3\n"
                                        "q3\tquiet night\td4\n")
    (folder / "documents.tsv").write_text("document\tsentence\nd1\tthe cat sat down\nd2\ta dog runs\n"
                                          "d3\tdogs running\nd4\tstocks fell\nd5\tnothing here\n")
    topics = [(f"{w} {w} {w}", "animals" if w[0] in "aeiou" else "other", split)
              for split, words in (("train", "apple egg iron oak urn bat cow dog fox gnu"), ("dev", "ice ant hen yak"),
                                   ("test", "owl eel pig rat elk jay"))
              for w in words.split()]
    (folder / "topics.tsv").write_text("sentence\tlabel\tsplit\n" + "".join(f"{s}\t{y}\t{p}\n" for s, y, p in topics))
    path = folder / "tasks.toml"
    path.write_text(TOML)
    include_file(path)
    yield path
    for name in ("decl-sts", "decl-paraphrase", "decl-search", "decl-topics"):
        TASKS.unregister(name)


def _evaluate(task: str, encoder=None, bootstrap: int = 200):
    return run_tasks(encoder or LetterCounts(), [task], cache=False, options=TaskOptions(bootstrap=bootstrap)).results[0]


def test_pair_bases_score_the_cosine_against_gold(declared):
    encoder = LetterCounts()
    a, b = encoder.encode([p[0] for p in PAIRS]), encoder.encode([p[1] for p in PAIRS])
    score = cosine(a, b)
    graded = {r.metric: r for r in _evaluate("decl-sts").metrics}
    assert graded["pearson"].value == pytest.approx(st.pearsonr(score, [p[2] for p in PAIRS])[0], abs=1e-9)
    assert graded["spearman"].value == pytest.approx(st.spearmanr(score, [p[2] for p in PAIRS])[0], abs=1e-9)
    assert graded["pearson"].ci_low < graded["pearson"].value < graded["pearson"].ci_high
    labelled = _evaluate("decl-paraphrase")
    (record,) = labelled.metrics
    assert record.value == pytest.approx(roc_auc_score([p[3] for p in PAIRS], score), abs=1e-12)
    assert list(labelled.items.columns) == ["subset", "item", "gold", "score", "sentence1", "sentence2"]
    assert labelled.protocol == {"similarity": "cosine", "pairs": 8, "version": "1"}


def test_retrieval_base_ranks_the_first_relevant_document_and_ties_take_their_expected_place(declared):
    similarity = np.array([[0.9, 0.2, 0.9, 0.1], [0.1, 0.5, 0.6, 0.6]])
    # query 0: its document 0 ties with document 2 → rank 1.5; query 1: documents 1 or 3, the better (3) ties with 2
    assert expected_ranks(similarity, [[0], [1, 3]]).tolist() == [1.5, 1.5]
    # two relevant documents tied at the best score with two others: the first of them is expected at (4 + 1) / 3
    assert expected_ranks(np.array([[0.9, 0.9, 0.9, 0.9, 0.1]]), [[0, 1]]).tolist() == pytest.approx([5 / 3])
    result = _evaluate("decl-search")
    ranks = dict(zip(result.items["query"], result.items["rank"]))
    encoder = LetterCounts()
    q = encoder.encode(["a cat sat", "dogs run", "quiet night"])
    d = encoder.encode(["the cat sat down", "a dog runs", "dogs running", "stocks fell", "nothing here"])
    unit = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    assert [ranks[k] for k in ("q1", "q2", "q3")] == expected_ranks(unit(q) @ unit(d).T, [[0], [1, 2], [3]]).tolist()
    metrics = {r.metric: r.value for r in result.metrics}
    assert metrics["mrr"] == pytest.approx(np.mean([1 / ranks[k] for k in ("q1", "q2", "q3")]))
    assert metrics["r1"] == pytest.approx(100 * np.mean([ranks[k] <= 1 for k in ("q1", "q2", "q3")]))
    assert set(result.items["direction"]) == {"query-to-document"}


def test_classification_base_fits_the_senteval_probe_on_train_and_dev(declared):
    result = _evaluate("decl-topics", bootstrap=0)
    (record,) = result.metrics
    assert record.n == 6 and record.value == pytest.approx(100 * result.items["correct"].mean(), abs=0.005)  # SentEval rounds
    assert record.ci_low <= record.value <= record.ci_high


def test_compare_tests_declared_tasks_with_their_kinds(declared, tmp_path):
    comparison = compare(["tests.helpers:LetterCounts", "tests.core.test_task_metadata:Vowels"],
                         ["decl-sts", "decl-search"], runs_dir=tmp_path / "runs", settings=CompareSettings(n_boot=100),
                         options=TaskOptions(bootstrap=0))
    tests = dict(zip(zip(comparison.table["task"], comparison.table["metric"]), comparison.table["test"]))
    assert tests[("decl-sts", "pearson")] in ("williams", "jackknife (sentence groups)")
    assert tests[("decl-search", "r10")] == "mcnemar" and tests[("decl-search", "mrr")] == "bootstrap"
    assert tests[("decl-search", "medr")] == "wilcoxon"


def test_a_declared_task_file_is_checked_in_one_line(tmp_path):
    (tmp_path / "pairs.tsv").write_text("sentence1\tsentence2\tgold\na\tb\t1\n")

    def refusal(text: str) -> str:
        path = tmp_path / "bad.toml"
        path.write_text(text)
        with pytest.raises(BenchboxError) as caught:
            load_task_file(path)
        return str(caught.value)

    assert "base" in refusal('[[task]]\nname = "x"\nbase = "regression"\ndata = ["pairs.tsv"]\n')
    assert "data file nope.tsv not found" in refusal('[[task]]\nname = "x"\nbase = "pair-correlation"\ndata = ["nope.tsv"]\n')
    assert "reads 2 data file(s), data names 1" in refusal('[[task]]\nname = "x"\nbase = "retrieval"\ndata = ["pairs.tsv"]\n')
    assert "unknown key 'metric' in [[task]] 1; the keys of a [[task]] table: name, base" in refusal('[[task]]\nname = "x"\nbase = "pair-correlation"\n'
                                                        'data = ["pairs.tsv"]\nmetric = "auc"\n')


@pytest.mark.slow
def test_include_of_a_task_file_on_the_command_line(declared, tmp_path):
    done = subprocess.run([sys.executable, "-m", "benchbox", "--include", str(declared), "eval", "tests.helpers:LetterCounts",
                           "-t", "decl-paraphrase", "--no-save", "--bootstrap", "0"], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "decl-paraphrase" in done.stdout and "auc" in done.stdout
    (declared.parent / "pairs.tsv").write_text("left\tright\nx\ty\n")  # a file without a required column
    bad = subprocess.run([sys.executable, "-m", "benchbox", "--include", str(declared), "eval", "tests.helpers:LetterCounts",
                          "-t", "decl-paraphrase", "--no-save"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert bad.returncode == 2
    assert bad.stderr.strip().endswith("pairs.tsv lacks (columns: left, right): correct the name in columns or in the "
                                       "file")
    assert "error: task decl-paraphrase: columns maps gold to 'label', which " in bad.stderr
