"""``benchbox train infersent``: NLI data, the train_nli.py schedule, the run folder and loading it back."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from benchbox import load_encoder
from benchbox.encoders.infersent_net import STATE_KEYS
from benchbox.errors import BenchboxError
from benchbox.training.nli import NLIConfig, NLITrainer
from benchbox.training.nli_data import read_split

CUES = {"entailment": "yes", "neutral": "maybe", "contradiction": "no"}
FILLER = ["a", "man", "dog", "runs", "sits", "in", "the", "park", "."]


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture
def nli_folder(tmp_path):
    """A synthetic NLI set whose label is given by one word of the hypothesis; 8-d word vectors."""
    rng = np.random.default_rng(0)
    folder = tmp_path / "nli"
    folder.mkdir()
    labels = list(CUES)
    for split, n in (("train", 480), ("dev", 90), ("test", 90)):
        rows = []
        for i in range(n):
            label = labels[i % 3]
            premise = " ".join(rng.choice(FILLER, 5))
            hypothesis = " ".join([*rng.choice(FILLER, 2), CUES[label], *rng.choice(FILLER, 2)])
            rows.append((premise, hypothesis, label))
        for k, name in enumerate(("s1", "s2", "labels")):
            (folder / f"{name}.{split}").write_text("".join(f"{r[k]}\n" for r in rows), encoding="utf-8")
    words = ["<s>", "</s>", *FILLER, *CUES.values()]
    vectors = tmp_path / "vec.txt"
    vectors.write_text("".join(f"{w} {' '.join(f'{x:.5f}' for x in rng.normal(0, 1, 8))}\n" for w in words))
    return folder, vectors


def test_read_split_and_its_errors(nli_folder, tmp_path):
    folder, _ = nli_folder
    split = read_split(folder, "dev", limit=10)
    assert len(split.s1) == len(split.s2) == 10 and split.labels.tolist()[:3] == [0, 1, 2]
    with pytest.raises(BenchboxError, match="s1.nope not found"):
        read_split(folder, "nope")
    (folder / "labels.dev").write_text("entailment\n" * 89 + "maybe\n")
    with pytest.raises(BenchboxError, match="unknown labels"):
        read_split(folder, "dev")
    (folder / "labels.dev").write_text("entailment\n")
    with pytest.raises(BenchboxError, match="have 90, 90, 1 lines"):
        read_split(folder, "dev")


def test_learns_writes_an_official_state_dict_and_loads_back(nli_folder, tmp_path):
    folder, vectors = nli_folder
    config = NLIConfig(nli=str(folder), word_vectors=str(vectors), hidden=8, fc_dim=16, epochs=4, batch_size=16, lr=0.3,
                       padding="masked", device="cpu")
    trainer = NLITrainer.from_config(config, tmp_path / "run")
    run = trainer.run()
    losses = [h["loss"] for h in trainer.history]
    assert losses[-1] < losses[0] - 0.3, losses
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["kind"] == "train" and manifest["status"] == "complete"
    assert manifest["encoder"]["name"] == "infersent" and manifest["encoder"]["config"]["padding"] == "masked"
    assert manifest["best"]["dev_accuracy"] > 90 and manifest["best"]["test_accuracy"] > 90  # chance: 33.3
    state = torch.load(run / "encoder.pkl", weights_only=True)
    assert sorted(state) == sorted(STATE_KEYS) and tuple(state["enc_lstm.weight_ih_l0"].shape) == (32, 8)
    encoder = load_encoder(run)  # the path `benchbox eval <run>` takes
    sentences = ["a man runs in the park .", "the dog sits no"]
    words, lengths = trainer._batch(trainer._rows(sentences))
    with torch.no_grad():
        expected = trainer.net.encoder(words, lengths).numpy()
    np.testing.assert_allclose(encoder.encode(sentences), expected, atol=1e-6)
    assert encoder.dim == 16 and encoder.config()["vectors"] == str(vectors)


def test_learning_rate_schedule_of_train_nli(nli_folder, tmp_path, monkeypatch):
    """×0.99 per epoch after the first, ÷5 when dev accuracy does not beat the best, stop below min_lr."""
    folder, vectors = nli_folder
    config = NLIConfig(nli=str(folder), word_vectors=str(vectors), hidden=4, fc_dim=4, epochs=20, lr=0.1,
                       min_lr=1e-3, device="cpu")
    trainer = NLITrainer.from_config(config, tmp_path / "run")
    dev_scores = iter([40.0, 50.0, 45.0, 50.0, 60.0, 55.0, 70.0, 71.0])
    monkeypatch.setattr(trainer, "_epoch", lambda data, optimizer: (1.0, 50.0))
    monkeypatch.setattr(trainer, "accuracy", lambda data: next(dev_scores))
    trainer.run()
    lrs = [h["lr"] for h in trainer.history]
    # epoch 3 (45) and epoch 4 (50, not above 50) shrink; epoch 6 (55 ≤ 60) shrinks to 7.6e-4 < 1e-3: stop
    expected = [0.1, 0.099, 0.09801, 0.09801 / 5 * 0.99, 0.09801 / 25 * 0.99**2, 0.09801 / 25 * 0.99**3]
    np.testing.assert_allclose(lrs, expected, rtol=1e-12)


def test_refuses_an_existing_run_and_bad_padding(nli_folder, tmp_path):
    folder, vectors = nli_folder
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text("{}")
    with pytest.raises(BenchboxError, match="already holds a run"):
        NLITrainer.from_config(NLIConfig(nli=str(folder), word_vectors=str(vectors), hidden=4), tmp_path / "run")
    with pytest.raises(BenchboxError, match="--padding"):
        NLITrainer.from_config(NLIConfig(nli=str(folder), word_vectors=str(vectors), padding="zero"), tmp_path / "other")


@pytest.mark.realdata
def test_smoke_training_on_snli_dev_slice(data_root, tmp_path):
    """Real SNLI pairs (only dev/test exist here): 3000 dev pairs, 64 units, the paper's schedule, 6 epochs;
    the first 1000 test pairs select the model. Chance is 33.3%."""
    config = NLIConfig(nli=str(data_root.root / "senteval/downstream/SNLI"), hidden=64, epochs=6,
                       train_split="dev", max_train=3000, dev_split="test", max_dev=1000, test_split=None,
                       device="cpu")
    trainer = NLITrainer.from_config(config, tmp_path / "run")
    trainer.run()
    history = trainer.history
    assert history[-1]["loss"] < history[0]["loss"] - 0.008
    assert max(h["train_acc"] for h in history[3:]) > 38.0
    assert max(h["dev_acc"] for h in history) > 40.0


@pytest.mark.slow
def test_cli_trains_then_evaluates_the_run_folder(nli_folder, tmp_path):
    """`benchbox train infersent` writes a run folder that `benchbox eval <run>` takes as the model."""
    from typer.testing import CliRunner

    from benchbox.cli import app

    folder, vectors = nli_folder
    runner = CliRunner()
    result = runner.invoke(app, ["train", "infersent", "--nli", str(folder), "--vectors", str(vectors),
                                 "--hidden", "4", "--fc-dim", "8", "--epochs", "1", "--out", str(tmp_path / "run"),
                                 "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("run")
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["eval", str(tmp_path / "run"), "--task", "stsb-cosine", "--data-dir",
                                 str(tmp_path / "empty"), "--runs-dir", str(tmp_path / "runs"), "--json", "-", "--quiet",
                                 "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    records = json.loads(result.output)["records"]
    assert {r["metric"] for r in records} == {"pearson", "spearman"} and records[0]["n"] == 1379


@pytest.mark.slow
def test_name_labels_the_model_and_its_evaluations_record_the_training_seed(nli_folder, tmp_path):
    """``train infersent --name`` stores the label (as ``train char-gru --name`` does); an evaluation of the
    trained model inherits it and records the training seed and configuration in its identity."""
    from typer.testing import CliRunner

    from benchbox.cli import app
    from benchbox.evaluation import run_tasks

    folder, vectors = nli_folder
    result = CliRunner().invoke(app, ["train", "infersent", "--nli", str(folder), "--vectors", str(vectors),
                                      "--hidden", "4", "--fc-dim", "8", "--epochs", "1", "--seed", "7",
                                      "--device", "cpu", "--out", str(tmp_path / "run"), "--name", "nli-small",
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["label"] == "nli-small"
    evaluation = run_tasks(str(tmp_path / "run"), ["stsb-cosine"], data_dir=tmp_path / "no-root", cache=False,
                           label="nli-small")
    encoder = evaluation.encoder
    assert encoder["seed"] == 7 and encoder["training"]["hidden"] == 4 and encoder["source"] == str(tmp_path / "run")
