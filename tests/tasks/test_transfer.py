"""Classification transfer: the batched logistic regression and SentEval's validation schemes against a
SentEval-structured reference, the readers, the tasks on tiny generated data, and the groups."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benchbox.data.root import DataRoot
from benchbox.errors import BenchboxError
from benchbox.stats import wilson_ci
from benchbox.task_contract.protocol import EvalContext, resolve_tasks
from benchbox.tasks import transfer as fast
from benchbox.tasks.senteval_data import load_trec
from benchbox.tasks.senteval_probe import FitSpec, augment, fit_logregs, split_validation
from benchbox.tasks.transfer import CR, MRPC, SST2, TREC
from tests import senteval_reference as ref
from tests.helpers import CueWords, logged_on_two_threads, task_options


pytestmark = pytest.mark.usefixtures("one_thread")


def blobs(n: int, rng: np.random.Generator, nclasses: int = 2, dim: int = 6, spread: float = 1.5):
    y = np.arange(n) % nclasses
    centres = rng.normal(size=(nclasses, dim)) * spread
    return (centres[y] + rng.normal(size=(n, dim))).astype(np.float32), y


def reference_weights(model) -> torch.Tensor:
    layer = model.model[0]
    return torch.cat([layer.weight, layer.bias[:, None]], dim=1).detach()


def test_batched_fits_equal_senteval_structured_fits():
    rng = np.random.default_rng(0)
    x, y = blobs(240, rng, nclasses=3, spread=0.6)
    tr, va = np.arange(180), np.arange(180, 240)
    s_tr, s_va = split_validation(180, 1111)
    specs = [FitSpec(tr, va, 1e-5), FitSpec(tr, va, 1e-2), FitSpec(s_tr, s_va, 1e-3, prefix=180)]
    fits = fit_logregs(augment(x, torch.device("cpu")), y, 3, specs)
    for spec, fit in zip(specs[:2], fits[:2]):
        clf = ref.ReferenceLogReg(6, 3, spec.l2)
        assert clf.fit(x[tr], y[tr], validation_data=(x[va], y[va])) == fit.dev_accuracy
        torch.testing.assert_close(fit.weights, reference_weights(clf), atol=1e-5, rtol=0)
    clf = ref.ReferenceLogReg(6, 3, 1e-3)
    assert clf.fit(x[:180], y[:180], validation_split=0.05) == fits[2].dev_accuracy
    torch.testing.assert_close(fits[2].weights, reference_weights(clf), atol=1e-5, rtol=0)
    assert not torch.allclose(fits[0].weights, fits[1].weights, atol=1e-3)  # the L2 is applied


def test_the_probes_report_their_progress_on_one_thread():
    """Issue #41: every step longer than a few seconds says how it is going. A line after the first dev check,
    then after a check every 10 s (a fake clock, 4 s a reading: every other check), counting the fits
    trained; torch on one thread meanwhile, its count restored after."""
    rng = np.random.default_rng(0)
    x, y = blobs(240, rng, nclasses=3, spread=0.6)
    specs = [FitSpec(np.arange(180), np.arange(180, 240), reg) for reg in (1e-5, 1e-2)]
    specs.append(FitSpec(np.arange(100), np.arange(100, 240), 1e-3))  # another train size: a second group
    _, lines, threads = logged_on_two_threads(
        lambda **clocked: fit_logregs(augment(x, torch.device("cpu")), y, 3, specs, **clocked))
    assert lines[0].startswith("probes: 0 of 3 logistic regressions trained, 2 at epoch 4 (of at most 204), ")
    assert lines[-1].startswith("probes: 2 of 3 logistic regressions trained, 1 at epoch ")
    first_group = [int(line.split(" at epoch ")[1].split()[0]) for line in lines if line.startswith("probes: 0 of")]
    assert first_group == list(range(4, first_group[-1] + 1, 8))  # every other check of 4 epochs
    assert set(threads) == {1}


def test_validation_schemes_equal_the_reference():
    rng = np.random.default_rng(1)
    x, y = blobs(72, rng, spread=0.5)
    ours = fast.inner_kfold(x, y, 2, k=3)
    dev, test = ref.inner_kfold(x, y, 2, k=3)
    assert (ours.dev_accuracy, ours.accuracy) == (dev, test)
    assert len(ours.l2) == 3 and len(ours.pred) == 72
    assert ours.accuracy == pytest.approx(100 * np.mean(ours.pred == y), abs=0.6)  # folds of 24

    tx, ty = blobs(90, rng, nclasses=3, spread=0.7)
    sx, sy = blobs(30, rng, nclasses=3, spread=0.7)
    ours = fast.kfold(tx, ty, sx, sy, 3, k=3, seed=5)
    dev, test, pred = ref.kfold(tx, ty, sx, sy, 3, seed=5, k=3)
    assert (ours.dev_accuracy, ours.accuracy) == (dev, test)
    np.testing.assert_array_equal(ours.pred, pred)

    dx, dy = blobs(30, rng, nclasses=3, spread=0.7)
    ours = fast.split((tx, ty), (dx, dy), (sx, sy), 3)
    assert (ours.dev_accuracy, ours.accuracy) == ref.split((tx, ty), (dx, dy), (sx, sy), 3)


def test_separable_data_is_learnt_and_random_labels_are_not():
    rng = np.random.default_rng(2)
    x, y = blobs(600, rng, spread=6.0)
    # not 100: SentEval's early stopping keeps the first model reaching 100% on the 5% dev split
    assert fast.inner_kfold(x, y, 2, k=3).accuracy >= 90
    noise = fast.inner_kfold(x, rng.permutation(y), 2, k=3)
    assert 25 <= noise.accuracy <= 75


def test_kfold_needs_enough_examples_per_class():
    x = np.zeros((10, 2), np.float32)
    with pytest.raises(BenchboxError, match="at least k examples"):
        fast.inner_kfold(x, np.array([0] * 8 + [1] * 2), 2, k=3)


class WordEncoder(CueWords):
    """Sentiment, question and paraphrase cues, twice their counts (:class:`tests.helpers.CueWords`)."""

    name = "words"
    cues = ("good", "bad", "who", "where", "same")
    scale = 2


def run_task(task, root, **options):
    enc = WordEncoder()
    ctx = EvalContext(data=DataRoot(root, use_embedded=False), embed=enc.encode, options=task_options(**options))
    return task.evaluate(enc, ctx)


def test_binary_task_out_of_fold_items_and_wilson_interval(tmp_path):
    folder = tmp_path / "senteval/downstream/CR"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(3)
    pos = [f"it is good {'very ' * int(k)}." for k in rng.integers(0, 4, 300)]
    neg = [f"it is bad {'so ' * int(k)}." for k in rng.integers(0, 4, 300)]
    (folder / "custrev.pos").write_text("\n".join(pos) + "\n", encoding="latin-1")
    (folder / "custrev.neg").write_text("\n".join(neg) + "\n", encoding="latin-1")
    result = run_task(CR(), tmp_path, kfold=3, device="cpu")
    items = result.items
    assert list(items.columns) == ["subset", "item", "gold", "pred", "correct"]
    np.testing.assert_array_equal(items["gold"], [1] * 300 + [0] * 300)  # file order: pos then neg
    np.testing.assert_array_equal(items["correct"], items["gold"] == items["pred"])
    k = int(items["correct"].sum())
    acc = next(r for r in result.metrics if r.subset == "test" and r.metric == "accuracy")
    low, high = wilson_ci(k, 600)
    assert (acc.ci_low, acc.ci_high, acc.n) == pytest.approx((100 * low, 100 * high, 600))
    assert acc.value == pytest.approx(100 * k / 600, abs=0.5) and acc.value > 65  # chance: 50
    assert result.protocol["kfold"] == 3 and result.protocol["seed"] == 1111 and len(result.protocol["l2_chosen"]) == 3


def test_trec_reader_and_task(tmp_path):
    folder = tmp_path / "senteval/downstream/TREC"
    folder.mkdir(parents=True)
    train = [f"HUM:ind who is {w} ?" for w in range(200)] + [f"LOC:city where is {w} ?" for w in range(200)]
    (folder / "train_5500.label").write_text("\n".join(train) + "\n", encoding="latin-1")
    test = ["LOC:other where is x ?", "HUM:desc who is  y ?"] * 10
    (folder / "TREC_10.label").write_text("\n".join(test) + "\n", encoding="latin-1")
    data = load_trec(DataRoot(tmp_path, use_embedded=False), "test")
    assert data.sentences[:2] == ["where is x ?", "who is y ?"] and data.labels.tolist()[:2] == [4, 3]
    result = run_task(TREC(), tmp_path, kfold=3)
    assert result.items["gold"].tolist() == [4, 3] * 10
    acc = next(r for r in result.metrics if r.subset == "test" and r.metric == "accuracy")
    assert acc.value == 100 * result.items["correct"].mean() and acc.n == 20
    (folder / "TREC_10.label").write_text("XYZ:foo what ?\n")
    with pytest.raises(BenchboxError, match="TREC_10.label:1"):
        run_task(TREC(), tmp_path, kfold=3)


def test_mrpc_task_pair_features_and_f1(tmp_path):
    folder = tmp_path / "senteval/downstream/MRPC"
    folder.mkdir(parents=True)
    head = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String"
    train = [f"1\t{i}\t{i}\tsame thing {i}\tsame thing {i}" for i in range(200)]
    train += [f"0\t{i}\t{i}\tgood thing {i}\tbad thing {i}" for i in range(200)]
    (folder / "msr_paraphrase_train.txt").write_text("\n".join([head, *train]) + "\n")
    test = [head, "1\t1\t2\tsame a\tsame b", "0\t3\t4\tgood a\tbad b", "1\t5\t6\tsame c\tsame d"]
    (folder / "msr_paraphrase_test.txt").write_text("\n".join(test) + "\n")
    result = run_task(MRPC(), tmp_path, kfold=3)
    metrics = {(r.subset, r.metric): r.value for r in result.metrics}
    assert metrics["test", "accuracy"] == pytest.approx(100 * result.items["correct"].mean(), abs=0.01)
    pred, gold = result.items["pred"], result.items["gold"]
    assert metrics["test", "f1"] == pytest.approx(100 * 2 * ((pred == 1) & (gold == 1)).sum()
                                                  / ((pred == 1).sum() + (gold == 1).sum()), abs=0.01)
    assert result.protocol["features"] == "[|u-v|, u*v]"
    (folder / "msr_paraphrase_test.txt").write_text(head + "\nyes\t1\t2\ta\tb\n")
    with pytest.raises(BenchboxError, match="msr_paraphrase_test.txt:2"):
        run_task(MRPC(), tmp_path, kfold=3)


def test_sst2_task_uses_dev_for_selection(tmp_path):
    folder = tmp_path / "senteval/downstream/SST/binary"
    folder.mkdir(parents=True)
    for split, n in (("train", 600), ("dev", 40), ("test", 10)):
        lines = [f"{'good' if i % 2 else 'bad'} film {i} \t{i % 2}" for i in range(n)]
        (folder / f"sentiment-{split}").write_text("\n".join(lines) + "\n")
    result = run_task(SST2(), tmp_path)
    assert {(r.subset, r.metric): r.value for r in result.metrics}["test", "accuracy"] >= 90
    assert result.items["gold"].tolist() == [i % 2 for i in range(10)]
    (folder / "sentiment-dev").write_text("no label here\n")
    with pytest.raises(BenchboxError, match="sentiment-dev:1"):
        run_task(SST2(), tmp_path)


def test_groups_expand_to_the_papers_tasks():
    assert [t.name for t in resolve_tasks(["semantic"])] == ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb",
                                                             "sickr"]
    assert [t.name for t in resolve_tasks(["transfer"])] == ["mr", "cr", "subj", "mpqa", "trec", "mrpc", "sst2",
                                                             "sicke"]


class BlindEncoder(WordEncoder):
    """Sees only the question cues, not the sentiment ones: chance on CR (every sentence has its own noise)."""

    name = "blind"
    cues = ("who", "where", "same")


def test_transfer_runs_flow_into_compare_and_report(tmp_path):
    """A transfer run's accuracy reaches ``benchbox compare`` (McNemar on the per-item hits) and the report's
    transfer table under the metric name both expect."""
    from benchbox.comparison.compare import compare
    from benchbox.evaluation import run_tasks
    from benchbox.reports import write_report

    folder = tmp_path / "senteval/downstream/CR"
    folder.mkdir(parents=True)
    (folder / "custrev.pos").write_text("".join(f"item {k} is good {'very ' * (k % 3)}.\n" for k in range(300)))
    (folder / "custrev.neg").write_text("".join(f"item {k} is bad {'so ' * (k % 3)}.\n" for k in range(300)))
    runs = []
    for enc in (WordEncoder(), BlindEncoder()):
        ev = run_tasks(enc, ["cr"], data_dir=tmp_path, cache=False, options=task_options(kfold=3, device="cpu"))
        runs.append(ev.save(tmp_path / "runs"))
    table = compare([str(r) for r in runs], ["cr"]).table
    assert set(table["subset"]) == {"test"}  # the dev accuracy has no per-item predictions: no paired test
    row = table[(table["task"] == "cr") & (table["metric"] == "accuracy")].iloc[0]
    assert row["test"] == "mcnemar" and row["verdict"] == "better"
    assert row["value_a"] > 65 and abs(row["value_b"] - 50) < 8  # chance: 50
    report = write_report(runs, tmp_path / "report.md").read_text()
    transfer = report[report.index("## Transfer tasks"):report.index("## ", report.index("## Transfer tasks") + 3)]
    assert f"{row['value_a']:.1f}" in transfer and f"{row['value_b']:.1f}" in transfer
