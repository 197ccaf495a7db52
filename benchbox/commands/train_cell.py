"""``benchbox train cell SPEC``: the training of a study cell, from the JSON spec the study wrote in the cell's
folder (:class:`benchbox.study.train.TrainSpec`, checked when the study was loaded and built again here); hidden,
``benchbox study`` runs it. The training is the one ``benchbox train ENCODER`` runs."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from benchbox.commands import train_char_rnn, train_infersent, train_order_wordnet


def train_cell(spec_file: Annotated[Path, typer.Argument(help="A cell's training spec (train.json).")]) -> None:
    """Train a study cell from its spec; prints the run folder."""
    from benchbox.study.train import TrainSpec  # with pydantic, which no other command needs to start
    from benchbox.training.config import TrainConfig
    from benchbox.training.order_wordnet_config import OrderWordNetConfig

    spec = TrainSpec.read(spec_file)
    out = Path(spec.out) if spec.out else None
    if isinstance(spec.config, TrainConfig):
        train_char_rnn.train(spec.config, out, label=spec.label)
    elif isinstance(spec.config, OrderWordNetConfig):
        train_order_wordnet.train(asdict(spec.config), spec.threads, out, spec.label, False)
    else:
        train_infersent.train(spec.config, out, label=spec.label, threads=spec.threads)


def register(train_app: typer.Typer) -> None:
    train_app.command("cell", hidden=True)(train_cell)
