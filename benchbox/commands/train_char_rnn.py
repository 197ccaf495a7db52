"""``benchbox train char-gru`` / ``char-lstm`` / ``char-gru-max``: train a character-level grounded encoder
(Merkx & Frank 2019; protocol in docs/protocols.md#char-rnn-encoders, loop in :mod:`benchbox.training.trainer`).
The same command runs under ``torchrun --nproc_per_node N`` with DistributedDataParallel. Its options are
:class:`~benchbox.training.config.TrainConfig`'s declared fields (:mod:`benchbox.commands.train_options`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from benchbox.console import log, out, set_quiet
from benchbox.commands.options import NAME, QUIET, out_option
from benchbox.commands.train_options import own_option, train_command
from benchbox.storage.output_targets import RUN
from benchbox.encoders.char_rnn_architectures import ARCHITECTURES
from benchbox.training.config import TrainConfig

#: the command's own options, around the configuration's last ones (``--help`` lists them in this order)
OWN = [own_option("out_dir", out_option("the run folder (default: runs/<new id>)", holds=RUN)),
       own_option("name", NAME),
       own_option("resume", Annotated[bool, typer.Option(help="Continue the run in --out from its last checkpoint.")],
                  False),
       "data_dir", "checkpoint_every", "threads",
       own_option("quiet", QUIET, False)]


def train(config: TrainConfig, out_dir: Path | None = None, *, resume: bool = False, label: str | None = None) -> None:
    """Train ``config`` into ``out_dir`` (``--resume``: continue the run there) and print the run folder; an
    interrupted run exits 128 + the signal, with the ``--resume`` command line."""
    log(f"train {config.encoder}: loading torch and the training code ...")  # seconds on a busy machine
    from benchbox.training.trainer import Trainer

    trainer = Trainer.from_config(config, out_dir, resume=resume, label=label)
    run = trainer.run()
    if trainer.dist.is_main:
        out.print(str(run), highlight=False, soft_wrap=True)
    if trainer.stopped_by_signal is not None:
        from benchbox.commands.interrupted import exit_interrupted

        exit_interrupted(trainer.stopped_by_signal, run)


def _command(encoder: str):  # noqa: ANN202 - a typer command factory
    def run(fields: dict[str, Any], out_dir: Path | None, name: str | None, resume: bool, quiet: bool) -> None:
        set_quiet(quiet)
        config = TrainConfig(encoder=encoder, **fields)  # checked first: a bad option is one line before anything loads
        train(config, out_dir, resume=resume, label=name)

    return train_command(TrainConfig, run, OWN,
                         f"Train {encoder} (Merkx & Frank 2019) on image-caption pairs; prints the run folder.")


def register(train_app: typer.Typer) -> None:
    for encoder in ARCHITECTURES:
        train_app.command(encoder)(_command(encoder))
