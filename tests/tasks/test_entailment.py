"""SentEval's entailment transfer tasks, SICK-E and SNLI: readers, SentEval's row order and features, the
split classifier (SNLI's no-L2, 15-epoch variant included) against a SentEval-structured reference, per-item
rows and intervals, the SNLI folder option and its errors, and the transfer group."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchbox.data.root import DataRoot
from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError
from benchbox.evaluation import run_tasks
from benchbox.stats import wilson_ci
from benchbox.task_contract.protocol import EvalContext
from benchbox.task_contract.options import TaskOptions, resolve_options
from benchbox.tasks import transfer as fast
from benchbox.tasks.entailment import SICKE, SNLI
from benchbox.tasks.senteval_data import load_sick_entailment, read_snli
from benchbox.tasks.senteval_probe import nli_features, pair_features
from tests import senteval_reference as ref
from tests.helpers import CueWords

pytestmark = pytest.mark.usefixtures("one_thread")
SICK_HEAD = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment"
#: the cue word of sentence B per SICK-E label (the encoder sees it)
SICK_CUES = {"CONTRADICTION": "no", "NEUTRAL": "maybe", "ENTAILMENT": "yes"}
SNLI_CUES = {"entailment": "yes", "neutral": "maybe", "contradiction": "no"}


class CueEncoder(CueWords):
    """The entailment cue words, four times their counts (:class:`tests.helpers.CueWords`): the label is in the
    pair features, with a little overlap so that SentEval's early stopping has something to improve."""

    name = "cues"
    cues = ("yes", "maybe", "no")
    scale = 4


def _pairs(n: int, labels: list[str], cues: dict[str, str], seed: int) -> list[tuple[str, str, str]]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        label = labels[i % len(labels)]
        a = "a man " + "very " * int(rng.integers(0, 3)) + f"tall {seed}-{i} walks"
        b = "he " + "now " * int(rng.integers(0, 3)) + f"{cues[label]} walks {i}"
        out.append((a, b, label))
    return out


def write_sick(root: Path, sizes=(("train", 300), ("trial", 60), ("test_annotated", 30))) -> dict:
    folder = root / "senteval/downstream/SICK"
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for k, (split, n) in enumerate(sizes):
        rows = _pairs(n, list(SICK_CUES), SICK_CUES, k)
        lines = [SICK_HEAD] + [f"{i}\t{a}\t{b}\t3.0\t{label}" for i, (a, b, label) in enumerate(rows)]
        (folder / f"SICK_{split}.txt").write_text("\r\n".join(lines) + "\r\n")
        written[split] = rows
    return written


def write_snli(folder: Path, splits=(("train", 3000), ("dev", 60), ("test", 30))) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for k, (split, n) in enumerate(splits):
        rows = _pairs(n, list(SNLI_CUES), SNLI_CUES, 10 + k)
        for part, column in (("s1", 0), ("s2", 1), ("labels", 2)):
            (folder / f"{part}.{split}").write_text("".join(f"{r[column]} \n" if part != "labels" else f"{r[2]}\n"
                                                            for r in rows), encoding="latin-1")
        written[split] = rows
    return written


def evaluate(task, root: Path, **options):
    enc = CueEncoder()
    opts = TaskOptions(device="cpu", **options)
    resolve_options([task], opts)
    return task.evaluate(enc, EvalContext(data=DataRoot(root, use_embedded=False), embed=enc.encode, options=opts))


def reference_split(rows: list, order_key, features, ids, encoder: Encoder | None = None,
                    **fit) -> tuple[float, float, np.ndarray]:
    """SentEval's run, written out independently: each split sorted with ``order_key``, embedded (default:
    :class:`CueEncoder`), featurised, and SentEval's SplitClassifier; returns (dev, test accuracy, the test
    split's gold in sorted order)."""
    enc = encoder or CueEncoder()
    xy = []
    for split_rows in rows:
        ordered = sorted(split_rows, key=order_key)
        u, v = enc.encode([r[0] for r in ordered]), enc.encode([r[1] for r in ordered])
        xy.append((features(u, v), np.array([ids[r[2]] for r in ordered])))
    dev, test = ref.split(*xy, nclasses=3, **fit)
    return dev, test, xy[2][1]


def test_pair_features_are_senteval_columns():
    u, v = np.array([[1.0, -2.0]]), np.array([[3.0, 1.0]])
    np.testing.assert_array_equal(pair_features(u, v), [[2, 3, 3, -2]])
    np.testing.assert_array_equal(nli_features(u, v), [[1, -2, 3, 1, 3, -2, 2, 3]])


def test_sick_entailment_reader(tmp_path):
    rows = write_sick(tmp_path)
    pairs = load_sick_entailment(DataRoot(tmp_path, use_embedded=False), "test")
    ids = ("CONTRADICTION", "NEUTRAL", "ENTAILMENT")
    assert pairs.labels.tolist() == [ids.index(r[2]) for r in rows["test_annotated"]]
    assert pairs.sentences1[0] == rows["test_annotated"][0][0] and len(pairs.sentences2) == 30
    path = tmp_path / "senteval/downstream/SICK/SICK_trial.txt"
    path.write_text(SICK_HEAD + "\n1\ta b\tc d\t3.0\tNEUTRAL\n2\ta b\tc d\t3.0\tMAYBE\n")
    with pytest.raises(BenchboxError, match=r"SICK_trial.txt:3: entailment_judgment 'MAYBE'"):
        load_sick_entailment(DataRoot(tmp_path, use_embedded=False), "dev")


def test_sicke_equals_senteval_structured_run(tmp_path):
    rows = write_sick(tmp_path)
    result = evaluate(SICKE(), tmp_path)
    ids = {label: i for i, label in enumerate(("CONTRADICTION", "NEUTRAL", "ENTAILMENT"))}
    dev, test, _ = reference_split([rows[s] for s in ("train", "trial", "test_annotated")],
                                   lambda r: (len(r[0].split()), len(r[1].split()), ids[r[2]]), pair_features, ids)
    metrics = {(r.subset, r.metric): r for r in result.metrics}
    assert (metrics["dev", "accuracy"].value, metrics["test", "accuracy"].value) == (dev, test)
    assert test >= 90  # chance: 33
    items = result.items
    assert items["gold"].tolist() == [ids[r[2]] for r in rows["test_annotated"]]  # file order
    k = int(items["correct"].sum())
    assert test == round(100 * k / 30, 2)
    low, high = wilson_ci(k, 30)
    assert (metrics["test", "accuracy"].ci_low, metrics["test", "accuracy"].ci_high) == pytest.approx(
        (100 * low, 100 * high))
    assert result.protocol["features"] == "[|u-v|, u*v]" and result.protocol["l2_grid"] == list(fast.REGS)
    assert result.protocol["max_epoch"] == 200 and result.protocol["epoch_size"] == 4


def test_snli_split_classifier_variant_equals_reference():
    rng = np.random.default_rng(5)
    y = np.arange(260) % 3
    x = (rng.normal(size=(3, 6))[y] * 0.8 + rng.normal(size=(260, 6))).astype(np.float32)
    parts = [(x[:180], y[:180]), (x[180:230], y[180:230]), (x[230:], y[230:])]
    ours = fast.split(*parts, 3, regs=(0.0,), epoch_size=1, max_epoch=15)
    assert (ours.dev_accuracy, ours.accuracy) == ref.split(*parts, 3, noreg=True, epoch_size=1, max_epoch=15)
    assert ours.l2 == [0.0]
    assert (ours.dev_accuracy, ours.accuracy) != ref.split(*parts, 3)  # the variant changes the numbers


def test_snli_from_a_folder_equals_senteval_structured_run(tmp_path):
    rows = write_snli(tmp_path / "my-snli")
    result = evaluate(SNLI(), tmp_path, task_options={"snli": {"path": str(tmp_path / "my-snli")}})
    ids = {"entailment": 0, "neutral": 1, "contradiction": 2}
    dev, test, _ = reference_split([rows[s] for s in ("train", "dev", "test")],
                                   lambda r: (len(r[1].split()), len(r[0].split()), r[2]), nli_features, ids,
                                   noreg=True, epoch_size=1, max_epoch=15)
    metrics = {(r.subset, r.metric): r.value for r in result.metrics}
    assert (metrics["dev", "accuracy"], metrics["test", "accuracy"]) == (dev, test) and test >= 90
    assert result.items["gold"].tolist() == [ids[r[2]] for r in rows["test"]]
    assert result.protocol["features"] == "[u, v, u*v, |u-v|]" and result.protocol["l2_grid"] == [0.0]
    assert (result.protocol["epoch_size"], result.protocol["max_epoch"]) == (1, 15)
    assert len(result.data_checksums) == 9
    assert read_snli(tmp_path / "my-snli", "dev").sentences1[0] == rows["dev"][0][0]  # trailing space dropped


def test_snli_missing_files_say_where_they_go(tmp_path):
    write_snli(tmp_path / "partial", splits=(("dev", 9), ("test", 9)))
    with pytest.raises(BenchboxError, match=r"snli:path=.*partial lacks s1.train, s2.train, labels.train: put "
                                            r"SNLI there as s1/s2/labels.\{train,dev,test\}"):
        resolve_options([SNLI()], TaskOptions(task_options={"snli": {"path": str(tmp_path / "partial")}}))
    write_snli(tmp_path / "senteval/downstream/SNLI", splits=(("dev", 9), ("test", 9)))  # as the shared data root
    with pytest.raises(BenchboxError, match=r"missing data under .*: senteval/downstream/SNLI/s1.train, senteval/"
                                            r"downstream/SNLI/s2.train, senteval/downstream/SNLI/labels.train"):
        run_tasks(CueEncoder(), ["snli"], data_dir=tmp_path, cache=False)
    (tmp_path / "partial/labels.dev").write_text("entailment\n" * 8 + "unknown\n")
    with pytest.raises(BenchboxError, match=r"labels.dev:9: label 'unknown'"):
        read_snli(tmp_path / "partial", "dev")
    (tmp_path / "partial/labels.dev").write_text("entailment\n")
    with pytest.raises(BenchboxError, match="have 9, 9, 1 lines"):
        read_snli(tmp_path / "partial", "dev")



def test_published_sicke_comparator():
    from benchbox.data import comparators

    row = comparators.paper_result("paper:conneau2017/glove-bow").metrics.iloc[0]
    assert (row["task"], row["subset"], row["metric"], row["value"], row["n"]) == ("sicke", "test", "accuracy",
                                                                                  78.6, 4927)
    assert np.isnan(row["ci_low"]) and "Table 4" in comparators.paper_result("paper:conneau2017/glove-bow").citation
    with pytest.raises(BenchboxError, match="paper:conneau2017/glove-bow"):
        comparators.paper_result("paper:conneau2017/nope")


@pytest.mark.realdata
def test_sicke_agrees_with_senteval_reference_on_real_data(data_root, glove):
    """GloVe-BOW on the real SICK files: the task's dev and test accuracy equal SentEval's loop written out
    (measured: 74.8 and 72.86)."""
    result = SICKE().evaluate(glove, EvalContext(data=data_root, embed=glove.encode, options=TaskOptions(device="cpu")))
    rows = {}
    for split in ("train", "dev", "test"):
        pairs = load_sick_entailment(data_root, split)
        rows[split] = list(zip(pairs.sentences1, pairs.sentences2, pairs.labels.tolist()))
    ids = {i: i for i in range(3)}
    expected = reference_split([rows[s] for s in ("train", "dev", "test")],
                               lambda r: (len(r[0].split()), len(r[1].split()), r[2]), pair_features, ids,
                               encoder=glove)
    assert tuple(r.value for r in result.metrics) == expected[1::-1]
