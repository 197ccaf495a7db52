"""The configuration of an InferSent training run on NLI (:mod:`benchbox.training.nli`): the options of
``benchbox train infersent``, each declared once with its command-line option
(:mod:`benchbox.training.train_options`); defaults: ``train_nli.py`` of facebookresearch/InferSent."""

from __future__ import annotations

from dataclasses import dataclass

from benchbox.device import check_device
from benchbox.options import DEFAULT_SEED
from benchbox.training.train_options import train_option


def none_if_empty(split: str | None) -> str | None:
    """``--test-split ''``: no split scored at the end."""
    return split or None


@dataclass
class NLIConfig:
    """Options of ``benchbox train infersent`` (defaults: ``train_nli.py``); the command line and a study's
    ``train`` table check them, the Python API takes any value (``lr=inf`` reaches the trainer's finite guard)."""

    nli: str = train_option(path=True, help="SentEval-style NLI folder (s1.train, s2.train, labels.train, ... dev, test): SNLI or MultiNLI.")
    word_vectors: str | None = train_option(None, flag="vectors", shared=True)
    hidden: int = train_option(2048, low=1, help="LSTM units per direction (embedding 2x); the paper: 2048.")
    fc_dim: int = train_option(512, low=1, help="Classifier hidden size.")
    nonlinear_fc: bool = train_option(False, help="Tanh classifier with dropout (train_nli.py's default is linear layers).")
    dropout_fc: float = train_option(0.0, low=0, high=1, high_open=True, help="Classifier dropout (with --nonlinear-fc).")
    padding: str = train_option("v1", help="v1 (padding zeros enter the max, as infersent1) or masked.")
    epochs: int = train_option(20, low=1, help="Most epochs (training also stops when lr < --min-lr).")
    batch_size: int = train_option(64, low=1, help="Minibatch size.")
    lr: float = train_option(0.1, low=0, low_open=True, help="SGD learning rate.")
    decay: float = train_option(0.99, low=0, high=1, low_open=True, help="Learning-rate factor per epoch (0 < decay ≤ 1).")
    lr_shrink: float = train_option(5.0, low=1, help="Divide lr by this when dev accuracy does not improve (≥ 1).")
    min_lr: float = train_option(1e-5, low=0, help="Stop when lr falls below this.")
    max_norm: float = train_option(5.0, low=0, low_open=True, help="Gradient norm clipping.")
    seed: int = train_option(DEFAULT_SEED, low=0, shared=True)
    train_split: str = train_option("train", help="Split trained on (files s1.<split> ...).")
    dev_split: str = train_option("dev", help="Split for model selection and the lr schedule.")
    test_split: str | None = train_option("test", parse=none_if_empty, help="Split scored at the end ('' for none).")
    max_train: int | None = train_option(None, low=1, help="Use only the first N training pairs.")
    max_dev: int | None = train_option(None, low=1, help="Use only the first N dev pairs.")
    device: str = train_option("auto", shared=True, check_value=check_device)
