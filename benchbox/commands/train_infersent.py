"""``benchbox train infersent``: train the InferSent BiLSTM-max encoder on NLI (Conneau et al. 2017;
protocol and run folder in :mod:`benchbox.training.nli`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from benchbox.console import out, set_quiet
from benchbox.commands.options import (AT_LEAST_1, DEVICE, DROPOUT, NAME, NON_NEGATIVE, POSITIVE, QUIET, THREADS, TRAIN_SEED,
                                       VECTORS, in_range, out_option)
from benchbox.storage.output_targets import RUN
from benchbox.options import DEFAULT_SEED
from benchbox.threads import set_threads


def train_infersent(
    nli: Annotated[Path, typer.Option(help="SentEval-style NLI folder (s1.train, s2.train, labels.train, ... dev, test): SNLI or MultiNLI.")],
    vectors: VECTORS = None,
    hidden: Annotated[int, typer.Option(help="LSTM units per direction (embedding 2x); the paper: 2048.", callback=AT_LEAST_1)] = 2048,
    fc_dim: Annotated[int, typer.Option(help="Classifier hidden size.", callback=AT_LEAST_1)] = 512,
    nonlinear_fc: Annotated[bool, typer.Option(help="Tanh classifier with dropout (train_nli.py's default is linear layers).")] = False,
    dropout_fc: Annotated[float, typer.Option(help="Classifier dropout (with --nonlinear-fc).", callback=DROPOUT)] = 0.0,
    padding: Annotated[str, typer.Option(help="v1 (padding zeros enter the max, as infersent1) or masked.")] = "v1",
    epochs: Annotated[int, typer.Option(help="Most epochs (training also stops when lr < --min-lr).", callback=AT_LEAST_1)] = 20,
    batch_size: Annotated[int, typer.Option(help="Minibatch size.", callback=AT_LEAST_1)] = 64,
    lr: Annotated[float, typer.Option(help="SGD learning rate.", callback=POSITIVE)] = 0.1,
    decay: Annotated[float, typer.Option(help="Learning-rate factor per epoch (0 < decay ≤ 1).", callback=in_range(0, 1, low_open=True))] = 0.99,
    lr_shrink: Annotated[float, typer.Option(help="Divide lr by this when dev accuracy does not improve (≥ 1).", callback=in_range(1))] = 5.0,
    min_lr: Annotated[float, typer.Option(help="Stop when lr falls below this.", callback=NON_NEGATIVE)] = 1e-5,
    max_norm: Annotated[float, typer.Option(help="Gradient norm clipping.", callback=POSITIVE)] = 5.0,
    seed: TRAIN_SEED = DEFAULT_SEED,
    train_split: Annotated[str, typer.Option(help="Split trained on (files s1.<split> ...).")] = "train",
    dev_split: Annotated[str, typer.Option(help="Split for model selection and the lr schedule.")] = "dev",
    test_split: Annotated[Optional[str], typer.Option(help="Split scored at the end ('' for none).")] = "test",
    max_train: Annotated[Optional[int], typer.Option(help="Use only the first N training pairs.", callback=AT_LEAST_1)] = None,
    max_dev: Annotated[Optional[int], typer.Option(help="Use only the first N dev pairs.", callback=AT_LEAST_1)] = None,
    device: DEVICE = "auto",
    threads: THREADS = None,
    out_dir: out_option("the run folder (default: runs/<new id>)", holds=RUN) = None,
    name: NAME = None,
    quiet: QUIET = False,
) -> None:
    """Train InferSent (Conneau et al. 2017) on NLI; prints the run folder (`benchbox eval RUN --task ...`)."""
    from benchbox.training.nli import NLIConfig, NLITrainer

    set_quiet(quiet)
    set_threads(threads)
    config = NLIConfig(
        nli=str(nli), word_vectors=vectors, hidden=hidden, fc_dim=fc_dim, nonlinear_fc=nonlinear_fc,
        dropout_fc=dropout_fc, padding=padding, epochs=epochs, batch_size=batch_size, lr=lr, decay=decay,
        lr_shrink=lr_shrink, min_lr=min_lr, max_norm=max_norm, seed=seed, train_split=train_split,
        dev_split=dev_split, test_split=test_split or None, max_train=max_train, max_dev=max_dev, device=device,
    )
    trainer = NLITrainer.from_config(config, out_dir, label=name)
    run = trainer.run()
    out.print(str(run), highlight=False, soft_wrap=True)
    if trainer.stopped_by_signal is not None:
        import signal

        from benchbox.console import log

        best = "the best model so far is kept there" if trainer.history else "no epoch had finished, no model was saved"
        log(f"interrupted by {signal.Signals(trainer.stopped_by_signal).name}; {run}: {best} (InferSent training has "
            "no --resume: run the command again to train further)")
        raise typer.Exit(128 + trainer.stopped_by_signal)


def register(train_app: typer.Typer) -> None:
    train_app.command("infersent")(train_infersent)
