"""Supervised relatedness (stsb, sickr): label encoding, the regressor against SentEval's structure, and the
tasks on small generated data whose right answer is known."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import pearsonr

from benchbox.data.root import DataRoot
from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError
from benchbox.task_contract.protocol import EvalContext
from benchbox.device import resolve_device
from benchbox.tasks.relatedness import SICKR, STSB, encode_labels, fit_relatedness
from benchbox.tasks.senteval_probe import pair_features
from tests.senteval_reference import ReferenceRelatedness
from tests.helpers import logged_on_two_threads, task_options


pytestmark = pytest.mark.usefixtures("one_thread")


def senteval_encode_labels(labels, nclass=5):
    """SentEval's double loop (sick.py encode_labels), transcribed to test the vectorised version."""
    out = np.zeros((len(labels), nclass), dtype=np.float32)
    for j, y in enumerate(labels):
        for i in range(nclass):
            if i + 1 == np.floor(y) + 1:
                out[j, i] = y - np.floor(y)
            if i + 1 == np.floor(y):
                out[j, i] = np.floor(y) - y + 1
    return out


@pytest.mark.parametrize(
    "score, expected",
    [
        (0.0, [0, 0, 0, 0, 0]),  # STS-B's 0: no class gets mass (SentEval #83)
        (0.4, [0.4, 0, 0, 0, 0]),  # below 1: only y − ⌊y⌋ on class 1, the rest is lost
        (1.0, [1, 0, 0, 0, 0]),
        (3.0, [0, 0, 1, 0, 0]),
        (3.4, [0, 0, 0.6, 0.4, 0]),
        (4.6, [0, 0, 0, 0.4, 0.6]),
        (5.0, [0, 0, 0, 0, 1]),
    ],
)
def test_encode_labels_edge_cases(score, expected):
    np.testing.assert_allclose(encode_labels([score])[0], expected, atol=1e-6)


def test_encode_labels_matches_senteval_loop_and_keeps_the_mean():
    scores = np.round(np.linspace(0, 5, 101), 2)
    ours = encode_labels(scores)
    np.testing.assert_allclose(ours, senteval_encode_labels(scores), atol=1e-6)
    in_range = scores >= 1
    np.testing.assert_allclose(ours[in_range].sum(1), 1, atol=1e-6)
    np.testing.assert_allclose(ours[in_range] @ np.arange(1, 6), scores[in_range], atol=1e-5)
    with pytest.raises(BenchboxError):
        encode_labels([1.0, math.nan])


def synthetic(n: int, rng: np.random.Generator, dim: int = 8, noise: float = 0.0):
    """Pairs whose gold score is a linear function of the features' first column."""
    a = rng.normal(size=(n, dim)).astype(np.float32)
    b = rng.normal(size=(n, dim)).astype(np.float32)
    feats = pair_features(a, b)
    signal = feats[:, 0]
    scores = 1 + 4 * (signal - signal.min()) / np.ptp(signal)
    return feats, np.clip(scores + noise * rng.normal(size=n), 1, 5)


@pytest.mark.slow
def test_regressor_matches_senteval_structured_reference():
    rng = np.random.default_rng(3)
    (tx, ty), (dx, dy), (sx, sy) = (synthetic(n, rng, noise=0.3) for n in (130, 60, 60))
    fit = fit_relatedness(tx, ty, dx, dy, sx, seed=1111)
    dev_pr, dev_pred, test_pred = ReferenceRelatedness(
        {"X": tx, "y": encode_labels(ty)}, {"X": dx}, {"X": sx}, dy, dataloader=False).run()
    assert fit.dev_pearson == pytest.approx(dev_pr, abs=1e-5)
    np.testing.assert_allclose(fit.test_pred, test_pred, atol=1e-4)
    np.testing.assert_allclose(fit.dev_pred, dev_pred, atol=1e-4)
    assert fit.epochs % 50 == 0 and 50 <= fit.best_epoch <= fit.epochs <= 1050


def test_predictive_features_give_pearson_near_one_and_shuffled_labels_near_zero():
    rng = np.random.default_rng(0)
    (tx, ty), (dx, dy), (sx, sy) = (synthetic(n, rng) for n in (600, 200, 400))
    fit = fit_relatedness(tx, ty, dx, dy, sx)
    assert pearsonr(fit.test_pred, sy)[0] > 0.97
    shuffled = fit_relatedness(tx, rng.permutation(ty), dx, rng.permutation(dy), sx)
    assert abs(pearsonr(shuffled.test_pred, sy)[0]) < 0.15


def test_seed_is_used_and_results_are_deterministic():
    rng = np.random.default_rng(1)
    (tx, ty), (dx, dy), (sx, _) = (synthetic(n, rng, noise=0.5) for n in (100, 40, 40))
    first = fit_relatedness(tx, ty, dx, dy, sx, seed=1111)
    again = fit_relatedness(tx, ty, dx, dy, sx, seed=1111)
    other = fit_relatedness(tx, ty, dx, dy, sx, seed=7)
    np.testing.assert_array_equal(first.test_pred, again.test_pred)
    assert np.abs(first.test_pred - other.test_pred).max() > 1e-4


def test_bad_inputs_raise_clear_errors():
    x = np.zeros((4, 2), np.float32)
    with pytest.raises(BenchboxError, match="same width"):
        fit_relatedness(x, np.ones(4), x, np.arange(4.0), np.zeros((2, 3), np.float32))
    with pytest.raises(BenchboxError, match="one shape"):
        pair_features(np.zeros((3, 2)), np.zeros((3, 4)))
    for device in ("tpu", "meta"):  # not a torch device; a torch device nothing here runs on
        with pytest.raises(BenchboxError, match="unknown device"):
            resolve_device(device)
    assert resolve_device("cpu") == torch.device("cpu")
    if not torch.cuda.is_available():
        assert resolve_device("auto") == torch.device("cpu")
        with pytest.raises(BenchboxError, match="no CUDA GPU"):
            resolve_device("cuda")


class ScoreEncoder(Encoder):
    """Sentences ``"pair <i> <a|b> <score>"``: A and B embed the gold score as a one-hot on its rounded value
    (a perfectly predictive embedding for integral scores), with a pair-specific second block."""

    name = "score"

    @property
    def dim(self) -> int:
        return 7

    def config(self):
        return {}

    def weights_digest(self) -> str:
        return "score"

    def _encode(self, sentences, batch_size):
        out = np.zeros((len(sentences), 7), np.float32)
        for row, s in enumerate(sentences):
            _, i, _, score = s.split()
            out[row, int(round(float(score)))] = 2.0
            out[row, 6] = 1.0 + int(i) % 3
        return out


def write_stsb(root, rng) -> dict[str, np.ndarray]:
    folder = root / "senteval/downstream/STS/STSBenchmark"
    folder.mkdir(parents=True)
    golds = {}
    for split, n in (("train", 300), ("dev", 60), ("test", 90)):
        gold = rng.integers(0, 6, size=n).astype(float)
        lines = [f"g\tf\t2012\t{i}\t{g:.1f}\tpair {i} a {g}\tpair {i} b {g}" for i, g in enumerate(gold)]
        (folder / f"sts-{split}.csv").write_text("\n".join(lines) + "\n")
        golds[split] = gold
    return golds


def run_task(task, root, **options):
    enc = ScoreEncoder()
    ctx = EvalContext(data=DataRoot(root, use_embedded=False), embed=enc.encode, options=task_options(**options))
    return task.evaluate(enc, ctx)


def test_stsb_task_faithful_and_fixed_labels(tmp_path):
    gold = write_stsb(tmp_path, np.random.default_rng(2))
    faithful = run_task(STSB(), tmp_path, device="cpu")
    fixed = run_task(STSB(), tmp_path, device="cpu", fix_stsb_labels=True)
    for result in (faithful, fixed):
        items = result.items
        assert list(items.columns) == ["subset", "item", "sentence1", "sentence2", "gold", "score"]
        np.testing.assert_array_equal(items["gold"], gold["test"])  # file order
        assert items["sentence1"].iloc[5].startswith("pair 5 a")
        rec = {(r.subset, r.metric): r for r in result.metrics}
        assert rec["test", "pearson"].value == pytest.approx(pearsonr(items["score"], items["gold"])[0])
        assert rec["test", "pearson"].ci_low < rec["test", "pearson"].value < rec["test", "pearson"].ci_high
        assert rec["test", "mse"].value == pytest.approx(np.mean((items["score"] - items["gold"]) ** 2))
        assert rec["test", "pearson"].n == 90 and rec["dev", "pearson"].n == 60
        assert len(result.data_checksums) == 3
    assert "SentEval #83" in faithful.protocol["labels"] and "rescaled" in fixed.protocol["labels"]
    # perfectly predictive embedding: near-perfect Pearson both ways, but only the fix can predict gold 0
    assert {r.metric: r.value for r in fixed.metrics if r.subset == "test"}["pearson"] > 0.99
    zero = gold["test"] == 0
    assert faithful.items["score"][zero].min() >= 0.99  # softmax · [1..5] ≥ 1: gold 0 is out of reach
    assert fixed.items["score"][zero].max() < 0.3
    mse = {name: next(r.value for r in res.metrics if r.metric == "mse") for name, res in
           (("faithful", faithful), ("fixed", fixed))}
    assert mse["fixed"] < 0.05 < mse["faithful"]


def test_sickr_ignores_the_stsb_fix_and_reports_missing_files(tmp_path):
    with pytest.raises(BenchboxError, match="missing data"):
        run_task(SICKR(), tmp_path)
    folder = tmp_path / "senteval/downstream/SICK"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(4)
    for name, n in (("SICK_train.txt", 300), ("SICK_trial.txt", 60), ("SICK_test_annotated.txt", 90)):
        gold = rng.integers(1, 6, size=n)
        rows = [f"{i}\tpair {i} a {g}\tpair {i} b {g}\t{g:.1f}\tNEUTRAL" for i, g in enumerate(gold)]
        (folder / name).write_text("pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\r\n"
                                   + "\r\n".join(rows) + "\r\n")
    plain = run_task(SICKR(), tmp_path, device="cpu")
    flagged = run_task(SICKR(), tmp_path, device="cpu", fix_stsb_labels=True)
    assert plain.protocol["labels"] == flagged.protocol["labels"] == "1-5 as given"
    np.testing.assert_array_equal(plain.items["score"], flagged.items["score"])
    assert {r.metric: r.value for r in plain.metrics if r.subset == "test"}["pearson"] > 0.99


def test_the_regressor_reports_its_progress_on_one_thread():
    """Issue #41: a cold `eval --task semantic` sat 43 minutes silent after "training SentEval's relatedness
    regressor". A line after the first chunk of 50 epochs, then after a chunk every 10 s, and one when it
    stops (a fake clock, 4 s a reading: a line every other chunk); all while torch computes on one thread (a
    mini-batch of 64 rows a step: a busy machine's second thread only slows it)."""
    rng = np.random.default_rng(1)
    (tx, ty), (dx, dy), (sx, _) = (synthetic(n, rng, noise=0.5) for n in (100, 40, 40))
    fit, lines, threads = logged_on_two_threads(lambda **clocked: fit_relatedness(tx, ty, dx, dy, sx, **clocked))
    assert lines[0].startswith("regressor: epoch 50 of at most 1050, dev Pearson ")
    assert lines[-1].startswith(f"regressor: done after {fit.epochs} epochs") and f"kept epoch {fit.best_epoch}" in lines[-1]
    epochs = [int(line.split()[2]) for line in lines[:-1]]
    assert fit.epochs >= 200 and len(epochs) >= 2 and epochs[-1] >= fit.epochs - 100
    assert epochs == list(range(50, epochs[-1] + 1, 100))  # every other chunk: one line per 10 s
    assert set(threads) == {1}


def test_the_stsb_task_logs_the_regressors_progress(tmp_path):
    """The task hands the regressor its log, each line named by the task (`eval ... 2> log` shows them)."""
    write_stsb(tmp_path, np.random.default_rng(2))
    lines = []
    enc = ScoreEncoder()
    ctx = EvalContext(data=DataRoot(tmp_path, use_embedded=False), embed=enc.encode,
                      options=task_options(device="cpu"), log=lines.append)
    STSB().evaluate(enc, ctx)
    assert lines[0].startswith("stsb: training SentEval's relatedness regressor on 300 pairs (cpu): chunks of 50 epochs")
    assert lines[1].startswith("stsb: regressor: epoch 50 of at most 1050, dev Pearson ")
    assert lines[-1].startswith("stsb: regressor: done after ")


def test_the_compiled_epoch_loop_gives_the_eager_loops_numbers_bit_for_bit(monkeypatch):
    # TorchScript runs train_epoch's ATen calls in the same order as eager torch: not one bit may differ
    from benchbox.tasks import relatedness

    rng = np.random.default_rng(5)
    (tx, ty), (dx, dy), (sx, _) = (synthetic(n, rng, noise=0.4) for n in (150, 50, 50))
    compiled = fit_relatedness(tx, ty, dx, dy, sx)
    monkeypatch.setattr(relatedness, "_compiled_epoch", lambda: relatedness.train_epoch)
    eager = fit_relatedness(tx, ty, dx, dy, sx)
    np.testing.assert_array_equal(compiled.test_pred, eager.test_pred)
    np.testing.assert_array_equal(compiled.dev_pred, eager.dev_pred)
    assert (compiled.dev_pearson, compiled.epochs, compiled.best_epoch) == (eager.dev_pearson, eager.epochs,
                                                                           eager.best_epoch)


@pytest.mark.parametrize("shape", [(5, 101), (3, 5, 21)])
def test_adam_step_is_torch_adams_update_bit_for_bit(shape):
    # adam_step_ writes out torch.optim.Adam's single-tensor update (the path SentEval's CPU runs take), with the
    # numbers it multiplies, divides and adds as 0-dim float32 tensors (AdamScalars): not one bit may differ
    from benchbox.tasks.senteval_probe import adam_scalars, adam_step_

    gen = torch.Generator().manual_seed(3)
    w = torch.randn(shape, generator=gen)
    param = torch.nn.Parameter(w.clone())
    optimiser = torch.optim.Adam([param], foreach=False)
    m, v, adam = torch.zeros_like(w), torch.zeros_like(w), adam_scalars()
    for step in range(1, 400):
        grad = torch.randn(shape, generator=gen) * 10.0 ** float(torch.randint(-6, 1, (), generator=gen))
        param.grad = grad.clone()
        optimiser.step()
        adam_step_(w, grad, m, v, step, adam)
        assert torch.equal(w, param.detach()), f"step {step}"
