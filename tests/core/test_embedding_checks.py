"""Issue #18: non-finite numbers stop the work; constant or NaN embeddings never score."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from benchbox import run_tasks
from benchbox.embedding_checks import check_encoder_output, check_image_output, require_informative
from benchbox.errors import BenchboxError
from benchbox.training.finite import FiniteGuard, NonFiniteTraining
from tests.helpers import TableEncoder
from tests.training.test_infersent_training import nli_folder  # noqa: F401 - the synthetic NLI fixture


# ---------------------------------------------------------------- embeddings refused by metrics
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_rows_are_counted_and_refused(bad):
    emb = np.eye(4, dtype=np.float32)
    emb[[1, 3], 0] = bad
    with pytest.raises(BenchboxError, match=r"sts12 MSRpar: 2 of 4 embeddings of encoder 'enc' are NaN or infinite"):
        require_informative(emb, "enc", "sts12 MSRpar")
    with pytest.raises(BenchboxError, match=r"returned NaN or infinite values for 2 of 4 sentences \(first: 'b'\)"):
        check_encoder_output(emb, ["a", "b", "c", "d"], "enc", 4)


def test_constant_embeddings_are_refused_and_informative_ones_pass():
    with pytest.raises(BenchboxError, match="all 3 embeddings of encoder 'enc' are identical"):
        require_informative(np.ones((3, 2), np.float32), "enc", "x")
    require_informative(np.array([[1, 1], [1, 1], [1, 0]], np.float32), "enc", "x")  # one row differs: scored
    require_informative(np.ones((1, 2), np.float32), "enc", "x")  # a single row is not "constant"


def test_constant_means_equal_up_to_rounding_on_every_cpu():
    """One vector computed per row can differ in its last bits between rows on one CPU (an AVX-512 GEMM kernel) and
    not on another (AVX2): a constant encoder is refused either way; a real difference of 1e-5 is scored."""
    row = np.linspace(-1, 1, 8, dtype=np.float32)
    ulp_apart = np.stack([row, np.nextafter(row, np.float32(2)), np.nextafter(row, np.float32(-2))])
    with pytest.raises(BenchboxError, match="all 3 embeddings of encoder 'enc' are identical"):
        require_informative(ulp_apart, "enc", "x")
    with pytest.raises(BenchboxError, match="the same vector for all 3 images"):
        check_image_output(ulp_apart, 3, "enc", 8)
    apart = np.stack([row, row + np.float32(1e-5)])
    require_informative(apart, "enc", "x")
    assert check_image_output(apart, 2, "enc", 8).shape == (2, 8)


def test_encoder_output_dtype_and_shape():
    assert check_encoder_output(np.ones((2, 3)), ["a", "b"], "enc", 3).dtype == np.float32
    with pytest.raises(BenchboxError, match="returned dtype int64"):
        check_encoder_output(np.ones((2, 3), np.int64), ["a", "b"], "enc", 3)
    with pytest.raises(BenchboxError, match=r"returned shape \(2,\) for 2 sentences, expected \(2, 3\)"):
        check_encoder_output(np.ones(2), ["a", "b"], "enc", 3)


def test_constant_encoder_is_refused_by_correlation_tasks(tmp_path):
    """Before: a constant encoder gave Pearson NaN / 0 with a ConstantInputWarning, exit 0."""

    class Constant(TableEncoder):
        def _encode(self, sentences, batch_size):
            return np.ones((len(sentences), 2), np.float32)

    with pytest.raises(BenchboxError, match=r"stsb-cosine test: all 2758 embeddings of encoder 'table' are identical"):
        run_tasks(Constant({"x": [1.0, 2.0]}), ["stsb-cosine"], data_dir=tmp_path, cache=False)


def test_constant_captions_are_refused_by_snapshot_selection():
    """Before: NaN or constant caption vectors gave dev R@1 = R@5 = R@10 = 100 (optimistic ties)."""
    from benchbox.encoders.char_rnn import CharGRU
    from benchbox.encoders.char_vocab import CharVocab
    from benchbox.training.data import SplitData
    from benchbox.training.selection import dev_scores

    enc = CharGRU.untrained(CharVocab.build(["ab"]), hidden=4, feature_dim=3)
    with torch.no_grad():
        for p in enc.members[0].parameters():
            p.zero_()  # every caption and image maps to the same vector
    captions = [f"caption {i}" for i in range(10)]
    dev = SplitData(image_ids=["a", "b"], captions=captions,
                    visual=np.random.default_rng(0).normal(size=(2, 3)).astype(np.float32), source_files={})
    with pytest.raises(BenchboxError, match="dev retrieval .snapshot selection.: all 10 embeddings of encoder "
                                            "'char-gru' are identical"):
        dev_scores(enc, dev)


# ---------------------------------------------------------------- training stops at a non-finite number
def test_guard_messages():
    guard = FiniteGuard()
    guard.check_loss(1, "hinge-sum", 0.5)
    with pytest.raises(NonFiniteTraining, match=r"step 2: the loss hinge-sum is nan \(last finite value 0.5 at step 1\)"):
        guard.check_loss(2, "hinge-sum", float("nan"))
    weights = [torch.zeros(2), torch.tensor([1.0, float("inf")])]
    with pytest.raises(NonFiniteTraining, match="step 2: the update made the weights NaN or infinite") as info:
        guard.check_weights(2, weights)
    assert not info.value.weights_ok
    guard.check_weights(3, [torch.ones(3)])


def _needs_flickr8k():
    from benchbox.data.root import DataRoot

    if not (DataRoot().root / "flickr8k" / "Flickr8k.token.txt").is_file():
        pytest.skip("needs the Flickr8k captions under the data root ($BENCHBOX_DATA)")


TINY = dict(encoder="char-gru", dataset="flickr8k", visual="random", hidden=12, epochs=2, cycle_epochs=1,
            max_captions=320, threads=1, checkpoint_every=3)


def _final_weights(run):
    return torch.load(run / "snapshots" / "epoch-002.pt", weights_only=True)["state_dict"]


@pytest.mark.usefixtures("one_thread")
def test_nan_loss_stops_at_once_and_resume_continues_as_uninterrupted(tmp_path, monkeypatch):
    from benchbox.training import trainer as trainer_mod
    from benchbox.training.config import TrainConfig
    from benchbox.training.trainer import Trainer

    _needs_flickr8k()
    config = TrainConfig(**TINY)
    full = Trainer.from_config(config, tmp_path / "full").run()
    real_terms, calls = trainer_mod.weighted_terms, []

    def nan_at_step_8(*args, **kwargs):
        calls.append(1)
        terms = real_terms(*args, **kwargs)
        return {t: v * float("nan") for t, v in terms.items()} if len(calls) == 8 else terms

    monkeypatch.setattr(trainer_mod, "weighted_terms", nan_at_step_8)
    with pytest.raises(BenchboxError, match=r"training stopped at step 8: the loss hinge-sum is nan \(last finite "
                                            r"value [0-9.]+ at step 7\); the last good checkpoint \(step 7\)"):
        Trainer.from_config(config, tmp_path / "nan").run()
    manifest = json.loads((tmp_path / "nan" / "manifest.json").read_text())
    assert manifest["status"] == "stopped" and "step 8" in manifest["error"]
    monkeypatch.setattr(trainer_mod, "weighted_terms", real_terms)
    resumed = Trainer.from_config(config, tmp_path / "nan", resume=True).run()
    a, b = _final_weights(full), _final_weights(resumed)
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.usefixtures("one_thread")
def test_non_finite_update_keeps_the_last_good_checkpoint(tmp_path):
    """A finite loss whose update blows the weights up (as --lr-max inf did): nothing non-finite is saved."""
    from benchbox.training.checkpoint import load_checkpoint
    from benchbox.training.config import TrainConfig
    from benchbox.training.trainer import Trainer

    _needs_flickr8k()
    trainer = Trainer.from_config(TrainConfig(**TINY), tmp_path / "run")
    step, real_step = [0], trainer.optimizer.step

    def blow_up_at_step_8(*args, **kwargs):
        step[0] += 1
        out = real_step(*args, **kwargs)
        if step[0] == 8:
            with torch.no_grad():
                next(trainer.net.parameters()).mul_(float("inf"))
        return out

    trainer.optimizer.step = blow_up_at_step_8
    with pytest.raises(BenchboxError, match=r"step 8: the update made the weights NaN or infinite .*the last good "
                                            r"checkpoint \(step 6\)"):
        trainer.run()
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert saved["global_step"] == 6 and all(bool(torch.isfinite(v).all()) for v in saved["model"].values())
    Trainer.from_config(TrainConfig(**TINY), tmp_path / "run", resume=True).run()
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["status"] == "complete"


@pytest.mark.usefixtures("one_thread")
def test_snapshot_that_cannot_be_scored_stops_training_and_is_never_selected(tmp_path):
    """Weights that are finite but collapsed (every caption the same vector) at a cycle end: before, the
    optimistic tie rule scored the snapshot R@10 = 100 and the ensemble picked it."""
    from benchbox.training.config import TrainConfig
    from benchbox.training.trainer import Trainer

    _needs_flickr8k()
    trainer = Trainer.from_config(TrainConfig(**TINY), tmp_path / "run")

    def collapse_at_step_10(step):
        if step == 10:  # the last step of epoch 1, just before its snapshot
            with torch.no_grad():
                for p in trainer.net.parameters():
                    p.zero_()
        return False

    trainer.step_hook = collapse_at_step_10
    with pytest.raises(BenchboxError, match=r"training stopped at epoch 1: the snapshot cannot be scored on dev \(dev "
                                            r"retrieval .snapshot selection.: all 5000 embeddings of encoder 'char-gru' "
                                            r"are identical.*last good checkpoint \(step 9\)"):
        trainer.run()
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "stopped" and manifest["snapshots"] == [] and manifest["ensemble"] == []


def test_infersent_training_stops_at_a_non_finite_update(nli_folder, tmp_path):
    """The NLI trainer shares the per-step check: an infinite learning rate (Python API; the CLI refuses it)."""
    from benchbox.training.nli import NLIConfig, NLITrainer

    folder, vectors = nli_folder
    config = NLIConfig(nli=str(folder), word_vectors=str(vectors), hidden=8, fc_dim=16, epochs=1, batch_size=16,
                       lr=float("inf"), padding="masked", device="cpu")
    with pytest.raises(BenchboxError, match=r"training stopped at step 1: the update made the weights NaN or infinite "
                                            r"\(its loss was [0-9.]+\); lower --lr"):
        NLITrainer.from_config(config, tmp_path / "run").run()
