"""The configuration of an order-embedding training run on WordNet (:mod:`benchbox.training.order_wordnet`): the
options of ``benchbox train order-wordnet``, each declared once with its command-line option
(:mod:`benchbox.training.train_options`); defaults: the authors' ``main.lua`` and README."""

from __future__ import annotations

from dataclasses import dataclass

from benchbox.data.wordnet import DEFAULT_WORDNET, HELD_OUT
from benchbox.training.train_options import train_option


@dataclass
class OrderWordNetConfig:
    """Options of ``benchbox train order-wordnet`` (defaults: the authors' ``main.lua`` and README)."""

    wordnet: str = train_option(str(DEFAULT_WORDNET), path=True, help="WordNet 3.0 database folder (data.noun, index.noun): Debian's wordnet-base installs it in /usr/share/wordnet.")
    held_out: int = train_option(HELD_OUT, low=1, help="Closure entries held out for dev and for test (the paper: 4000 each).")
    split_seed: int = train_option(1, low=0, help="Seed of the split's shuffle and its dev/test negatives (the hypernym task's split_seed).")
    dim: int = train_option(50, low=1, help="Embedding dimension (the paper: 50).")
    epochs: int = train_option(20, low=1, help="Training epochs (the authors' README: 20).")
    batch_size: int = train_option(1000, low=1, help="Minibatch size, positives and negatives together.")
    lr: float = train_option(0.01, low=0, low_open=True, help="Adam learning rate.")
    margin: float = train_option(1.0, low=0, low_open=True, help="Margin α of the max-margin loss.")
    eval_every: int = train_option(100, low=1, help="Score dev (threshold chosen there) every N steps; the best dev accuracy's embeddings are kept.")
    seed: int = train_option(1234, low=0, help="Seed of the initialisation, the training negatives and the data order.")
