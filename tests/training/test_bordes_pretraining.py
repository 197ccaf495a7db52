"""Bordes et al. (2019) as published, the training side (docs/protocols.md#bordes-models): every description of
an MSVD clip (a cap recorded), the textual objective L_T alone, and M^p in two commands (L_T, then the grounded
terms from its weights with ``--init-from``), on tiny generated MSVD-format data."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.errors import BenchboxError
from benchbox.training.config import TrainConfig
from benchbox.training.init_from import weights_sha256
from benchbox.training.losses import TEXTUAL_TEMPERATURE
from benchbox.training.text_corpus import neighbour_mask
from benchbox.training.trainer import Trainer
from tests.encoders.test_video_clips import _msvd_clips

TINY = dict(encoder="char-gru", dataset="msvd", hidden=4, epochs=1, cycle_epochs=1, batch_size=8,
            checkpoint_every=0, threads=1)


def _with_more_descriptions(folder: Path) -> np.ndarray:
    """Give training clip i of ``folder`` i descriptions beyond its five; returns the clips' description counts."""
    clips = (folder / "train.txt").read_text().split()
    extra = [f"{clip} another view number {j}" for i, clip in enumerate(clips) for j in range(i)]
    path = folder / "AllVideoDescriptions.txt"
    path.write_text(path.read_text() + "\n".join(extra) + "\n")
    return 5 + np.arange(len(clips))


# ---------------------------------------------------------------- all descriptions of a clip
@pytest.mark.usefixtures("one_thread")
def test_a_clip_trains_on_all_its_descriptions_unless_capped(tmp_path):
    folder, clips_file, _, _ = _msvd_clips(tmp_path)
    counts = _with_more_descriptions(folder)  # 5 … 20 descriptions, 200 in all
    common = dict(TINY, video_captions=str(folder), data_dir=str(tmp_path), visual="frame", features=str(clips_file),
                  loss="bordes-b")
    every = Trainer.from_config(TrainConfig(**common), tmp_path / "all")
    train = every.data.train
    assert len(train.captions) == counts.sum() == 200 and train.per_image.tolist() == counts.tolist()
    # the rows of a clip are consecutive: clip 1's sixth description is row 10, clip 15's last the last row
    assert train.captions[10] == "another view number 0 ." and train.captions[-1] == "another view number 14 ."
    assert every.data.dev.per_image.tolist() == [5] * 8  # dev keeps the layout of retrieval
    assert every.steps_per_epoch == sum(np.count_nonzero(counts > k) // 8 for k in range(counts.max())) == 18
    manifest = json.loads((every.run() / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["data"]["train_captions"] == 200
    assert manifest["config"]["max_descriptions"] is None
    capped = Trainer.from_config(TrainConfig(**common, max_descriptions=5), tmp_path / "five")
    assert len(capped.data.train.captions) == 80 and capped.steps_per_epoch == 10
    assert capped.data.train.captions == [c for i, c in enumerate(train.captions)
                                          if i - np.repeat(np.cumsum(counts) - counts, counts)[i] < 5]
    limited = Trainer.from_config(TrainConfig(**{**common, "batch_size": 2, "loss": "bordes-c"}, max_captions=12), tmp_path / "subset")
    assert limited.data.train.image_ids == train.image_ids[:2] and len(limited.data.train.captions) == 11
    capped.run()
    assert json.loads((tmp_path / "five" / "manifest.json").read_text())["config"]["max_descriptions"] == 5


def test_the_description_cap_is_checked_and_read_back():
    clip_run = dict(encoder="char-gru", dataset="msvd", video_captions="v", visual="cluster", loss="bordes-c")
    with pytest.raises(BenchboxError, match="--max-descriptions must be at least 5"):
        TrainConfig(**clip_run, max_descriptions=3)
    with pytest.raises(BenchboxError, match="--max-descriptions is only read with --dataset msvd, not --dataset flickr8k"):
        TrainConfig(encoder="char-gru", dataset="flickr8k", visual="cluster", loss="bordes-c", max_descriptions=10)
    stored = TrainConfig(**clip_run).to_dict()
    assert TrainConfig.from_dict(stored).max_descriptions is None
    legacy = {k: v for k, v in stored.items() if k != "max_descriptions"}  # recorded before the option: five
    assert TrainConfig.from_dict(legacy).max_descriptions == 5
    assert TrainConfig.from_dict({**legacy, "dataset": "flickr8k", "video_captions": None}).max_descriptions is None


# ---------------------------------------------------------------- L_T alone
def _corpus(path: Path, sentences: int = 8) -> Path:
    """Two documents of ``sentences`` // 2 short sentences."""
    half = sentences // 2
    path.write_text("\n".join(f"a dog runs number {i} ." for i in range(half)) + "\n\n"
                    + "\n".join(f"the guitar plays tune {i} ." for i in range(sentences - half)) + "\n")
    return path


def test_textual_alone_needs_no_visual_side():
    base = dict(encoder="char-gru", dataset="msvd", video_captions="v", loss="textual=1", text_corpus="c.txt")
    config = TrainConfig(**base, visual="cluster")
    assert config.text_only and not config.needs_partner and config.loss_terms == (("textual", 1.0),)
    with pytest.raises(BenchboxError, match="--loss textual=1 trains the sentence encoder on --text-corpus alone.*"
                                            "pass --visual cluster, not --visual random"):
        TrainConfig(**base, visual="random")
    assert not TrainConfig(**{**base, "loss": "bordes-c,textual=1"}, visual="cluster").text_only


@pytest.mark.usefixtures("one_thread")
def test_textual_alone_steps_are_text_batches_whose_loss_is_the_formula_by_hand(tmp_path):
    """A corpus of exactly one batch (8 sentences, two documents): every step is that batch, an epoch one step.
    Epoch 1's loss is L_T of the initial encoder, computed here by hand: Σ_i −(1/|N_i|) Σ_{j∈N_i} log softmax_j
    over k ≠ i of cos(s_i, s_k)/τ; later epochs descend."""
    folder, _, _, _ = _msvd_clips(tmp_path)
    corpus = _corpus(tmp_path / "corpus.txt")
    config = TrainConfig(**{**TINY, "epochs": 6, "cycle_epochs": 6, "hidden": 8}, video_captions=str(folder),
                         data_dir=str(tmp_path), visual="cluster", loss="textual=1", text_corpus=str(corpus),
                         lr_max=0.02)
    trainer = Trainer.from_config(config, tmp_path / "lt")
    assert trainer.steps_per_epoch == 1
    sentences = trainer.data.text.sentences
    with torch.no_grad():
        chars, lengths = trainer.net.vocab.batch(sentences)
        s = trainer.net.caption(chars, lengths).double().numpy()
    neighbours = neighbour_mask(np.arange(8), trainer.data.text.documents)
    expected = 0.0
    for i in range(8):
        others = [k for k in range(8) if k != i]
        logits = {k: float(s[i] @ s[k]) / TEXTUAL_TEMPERATURE for k in others}
        log_z = math.log(sum(math.exp(v) for v in logits.values()))
        mine = [j for j in others if neighbours[i, j]]
        expected -= sum(logits[j] - log_z for j in mine) / len(mine)
    history = pd.read_csv(trainer.run() / "history.csv")
    assert history["loss"][0] == pytest.approx(expected, rel=1e-5)
    assert history["loss_textual"].tolist() == history["loss"].tolist()
    assert history["loss"].iloc[-1] < history["loss"][0] - 0.5  # 6 steps on the one batch
    manifest = json.loads((tmp_path / "lt" / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["steps_per_epoch"] == 1
    assert manifest["config"]["resolved"]["loss_terms"] == {"textual": 1.0}


# ---------------------------------------------------------------- M^p: L_T, then the grounded terms from its weights
def _encoder_weights(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k.removeprefix("caption."): v for k, v in state.items() if k.startswith("caption.")}


@pytest.mark.usefixtures("one_thread")
def test_m_p_is_two_commands_and_the_second_starts_from_the_first(tmp_path):
    """docs/protocols.md#bordes-models' two commands on generated clips: the grounded run's step-0 sentence encoder
    is the pretrained one, bit for bit, and its manifest names it with the weights' checksum."""
    folder, clips_file, _, _ = _msvd_clips(tmp_path)
    corpus = _corpus(tmp_path / "corpus.txt", 24)
    common = ["--dataset", "msvd", "--video-captions", str(folder), "--hidden", "8", "--batch-size", "8",
              "--epochs", "2", "--cycle-epochs", "1", "--threads", "1", "--data-dir", str(tmp_path), "--quiet"]
    runner = CliRunner()
    first = runner.invoke(app, ["train", "char-gru", *common, "--visual", "cluster", "--loss", "textual=1",
                                "--text-corpus", str(corpus), "--out", str(tmp_path / "lt")])
    assert first.exit_code == 0, first.output
    second = runner.invoke(app, ["train", "char-gru", *common, "--visual", "average", "--features", str(clips_file),
                                 "--loss", "bordes-b", "--init-from", str(tmp_path / "lt"),
                                 "--out", str(tmp_path / "mp")])
    assert second.exit_code == 0, second.output
    pretrained = _encoder_weights(torch.load(tmp_path / "lt" / "checkpoint.pt", weights_only=True)["model"])
    manifest = json.loads((tmp_path / "mp" / "manifest.json").read_text())
    assert manifest["init_from"] == {"run": "lt", "folder": str(tmp_path / "lt"), "global_step": 2 * 2,
                                     "weights_sha256": weights_sha256(pretrained)}
    assert manifest["config"]["init_from"] == str(tmp_path / "lt") and manifest["status"] == "complete"
    # step 0 of the grounded run: the same options rebuild its start (same seed, data and --init-from)
    config = TrainConfig.from_dict(manifest["config"])
    start = Trainer.from_config(config, tmp_path / "again")
    assert start.init_from == manifest["init_from"]
    for name, tensor in _encoder_weights(start.net.state_dict()).items():
        assert torch.equal(tensor, pretrained[name]), name
    fresh = Trainer.from_config(TrainConfig.from_dict({**manifest["config"], "init_from": None}), tmp_path / "fresh")
    assert not torch.equal(fresh.net.caption.rnn.weight_hh_l0, pretrained["rnn.weight_hh_l0"])
    assert torch.equal(fresh.net.image.linear.weight, start.net.image.linear.weight)  # the rest: from the seed
    after = _encoder_weights(torch.load(tmp_path / "mp" / "checkpoint.pt", weights_only=True)["model"])
    assert not torch.equal(after["rnn.weight_hh_l0"], pretrained["rnn.weight_hh_l0"])  # then trained on


@pytest.mark.usefixtures("one_thread")
def test_init_from_refusals_are_one_line(tmp_path):
    folder, _, _, _ = _msvd_clips(tmp_path)
    corpus = _corpus(tmp_path / "corpus.txt")
    pretrain = TrainConfig(**TINY, video_captions=str(folder), data_dir=str(tmp_path), visual="cluster",
                           loss="textual=1", text_corpus=str(corpus))
    source = Trainer.from_config(pretrain, tmp_path / "lt").run()
    grounded = dict(TINY, video_captions=str(folder), data_dir=str(tmp_path), visual="cluster", loss="bordes-c")

    def refused(message: str, out: str = "new", resume: bool = False, **changes) -> None:
        with pytest.raises(BenchboxError, match=message) as error:
            Trainer.from_config(TrainConfig(**{**grounded, "init_from": str(source), **changes}), tmp_path / out,
                                resume=resume)
        assert "\n" not in str(error.value)

    refused("another architecture: hidden 4 \\(this run: 6\\)", hidden=6)
    refused("another architecture: rnn 'gru' \\(this run: 'lstm'\\)", encoder="char-lstm")
    refused("not a training run folder", init_from=str(tmp_path))
    refused("--init-from starts a new run; --resume continues", resume=True)
    stopped = Trainer.from_config(pretrain, tmp_path / "stopped", step_hook=lambda step: True).run()
    refused("has not finished \\(status 'stopped'\\)", init_from=str(stopped))
    other = folder.parent / "other"
    other.mkdir()
    for name in ("train.txt", "dev.txt"):
        (other / name).write_text((folder / name).read_text())
    lines = (folder / "AllVideoDescriptions.txt").read_text().splitlines()
    (other / "AllVideoDescriptions.txt").write_text("".join(f"{clip} {text.upper()}\n" for clip, text in
                                                            (line.split(" ", 1) for line in lines)))
    refused("another character vocabulary", video_captions=str(other))
    assert not (tmp_path / "new").exists() or not (tmp_path / "new" / "checkpoint.pt").exists()
    # a run started from RUN resumes without --init-from (its checkpoint holds its weights) and keeps the record
    started = Trainer.from_config(TrainConfig(**grounded, init_from=str(source)), tmp_path / "mp",
                                  step_hook=lambda step: step == 1).run()
    record = json.loads((started / "manifest.json").read_text())["init_from"]
    assert record["run"] == "lt" and record["weights_sha256"]
    resumed = Trainer.from_config(TrainConfig(**grounded), started, resume=True)
    assert resumed.position.global_step == 1 and resumed.config.init_from == str(source)
    resumed.run()
    manifest = json.loads((started / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["init_from"] == record
    assert manifest["config"]["init_from"] == str(source)
