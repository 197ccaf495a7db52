"""A study cell's training is a JSON spec (issue 44): the ``train`` table checked against the configuration's
declarations, with the cell's seed and the study's data root, written as ``train.json`` in the cell's folder and
read by the cell's process (``benchbox train cell FILE``), which trains what ``benchbox train ENCODER`` trains."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchbox.errors import BenchboxError
from benchbox.study.run import cell_commands, cell_train_spec, load_study
from benchbox.study.train import TRAIN_SPEC, TrainSpec, check_train, train_spec
from benchbox.training.config import TrainConfig
from benchbox.training.nli_config import NLIConfig


def _caption_root(root: Path, images: int = 8) -> Path:
    """A data root with Flickr8k's caption files only (tokens, train and dev lists) for ``images`` images."""
    flickr = root / "flickr8k"
    flickr.mkdir(parents=True)
    ids = [f"{i}.jpg" for i in range(images)]
    words = "a dog cat runs on the grass man woman red ball".split()
    (flickr / "Flickr8k.token.txt").write_text("".join(
        f"{image}#{k}\t{' '.join(words[(i + k + j) % len(words)] for j in range(5))}\n"
        for i, image in enumerate(ids) for k in range(5)))
    (flickr / "Flickr_8k.trainImages.txt").write_text("\n".join(ids[: images - 2]) + "\n")
    (flickr / "Flickr_8k.devImages.txt").write_text("\n".join(ids[images - 2:]) + "\n")
    return root


def test_a_train_table_becomes_the_configuration_it_declares():
    """Values typed as the command line types them (a number written as text, a comma list), the command's own
    ``name`` and ``threads`` beside the configuration, the study's seed and data root in it."""
    spec = train_spec("char-gru", {"dataset": "flickr8k", "visual": "cluster", "epochs": "3", "lr-max": 0.01,
                                   "eval-semantic": "sts12,sts13", "name": " small ", "threads": 2},
                      seed=7, data_dir="/data", out="/cell/train")
    assert spec.config == TrainConfig(encoder="char-gru", dataset="flickr8k", visual="cluster", epochs=3, lr_max=0.01,
                                      eval_semantic=("sts12", "sts13"), seed=7, data_dir="/data", threads=2)
    assert (spec.label, spec.threads, spec.out) == ("small", None, "/cell/train")  # a char-RNN's threads: config
    nli = train_spec("infersent", {"nli": "snli", "test-split": "", "nonlinear-fc": True, "threads": 2}, seed=3,
                     data_dir="/data")
    assert nli.config == NLIConfig(nli="snli", test_split=None, nonlinear_fc=True, seed=3) and nli.threads == 2
    with pytest.raises(BenchboxError, match=r"^Missing option '--dataset'\.$"):
        train_spec("char-gru", {"visual": "cluster"})
    with pytest.raises(BenchboxError, match=r"unknown option 'cycle_epochs' .*\(did you mean 'cycle-epochs'\?\)"):
        check_train("char-gru", {"dataset": "flickr8k", "visual": "cluster", "cycle_epochs": 2})


def test_a_cell_writes_its_spec_and_its_training_reads_it(tmp_path):
    """The training stage names the spec; the spec read back is the configuration the table declared."""
    root = _caption_root(tmp_path / "data")
    path = tmp_path / "s.toml"
    path.write_text('[study]\ntasks = ["stsb-cosine"]\ndata-dir = "data"\n[[encoder]]\nname = "glove-bow"\n'
                    '[[encoder]]\nname = "char-gru"\nseeds = [4]\ntrain = { dataset = "flickr8k", '
                    'visual = "random", hidden = 4 }\n')
    study = load_study(path, check_train=check_train)
    cell = study.cells[1]
    folder = tmp_path / "cell"
    (stage, command), _ = cell_commands(cell, study, folder)
    assert stage == "training" and command[-3:] == ["train", "cell", str(folder / TRAIN_SPEC)]
    folder.mkdir()
    cell_train_spec(cell, study, folder).write(folder / TRAIN_SPEC)
    spec = TrainSpec.read(folder / TRAIN_SPEC)
    assert spec.config == TrainConfig(encoder="char-gru", dataset="flickr8k", visual="random", hidden=4, seed=4,
                                      data_dir=str(root.resolve()))
    assert spec.out == str(folder / "train")
    (folder / TRAIN_SPEC).write_text("{}")
    with pytest.raises(BenchboxError, match="not a training spec"):
        TrainSpec.read(folder / TRAIN_SPEC)


@pytest.mark.slow
def test_the_cells_process_trains_what_the_command_line_trains(tmp_path):
    """``benchbox train cell SPEC`` and ``benchbox train char-gru`` with the same options: the same recorded
    configuration and the same weights."""
    import torch

    root = _caption_root(tmp_path / "data")
    table = {"dataset": "flickr8k", "visual": "random", "hidden": 4, "epochs": 1, "cycle-epochs": 1,
             "batch-size": 4, "threads": 1}
    spec = train_spec("char-gru", table, seed=5, data_dir=str(root), out=str(tmp_path / "cell"))
    spec.write(tmp_path / TRAIN_SPEC)
    base = [sys.executable, "-m", "benchbox", "train"]
    argv = [x for key, value in table.items() for x in (f"--{key}", str(value))]
    for command in ([*base, "cell", str(tmp_path / TRAIN_SPEC)],
                    [*base, "char-gru", *argv, "--seed", "5", "--data-dir", str(root), "--out", str(tmp_path / "cli")]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    configs = [json.loads((tmp_path / run / "manifest.json").read_text())["config"] for run in ("cell", "cli")]
    assert configs[0] == configs[1] and configs[0]["seed"] == 5
    weights = [torch.load(tmp_path / run / "snapshots" / "epoch-001.pt", weights_only=True)["state_dict"]
               for run in ("cell", "cli")]
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][key], weights[1][key]) for key in weights[0])
