"""``benchbox train order-wordnet``: order embeddings of WordNet's noun synsets for hypernym prediction
(Vendrov et al. 2016, §4.1; protocol and run folder in :mod:`benchbox.training.order_wordnet`). Its options are
:class:`~benchbox.training.order_wordnet_config.OrderWordNetConfig`'s declared fields
(:mod:`benchbox.commands.train_options`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from benchbox.console import log, out, set_quiet
from benchbox.commands.options import NAME, QUIET, THREADS, out_option
from benchbox.commands.train_options import own_option, train_command
from benchbox.threads import set_threads
from benchbox.training.order_wordnet_config import OrderWordNetConfig

#: the command's own options, after the configuration's
OWN = [own_option("threads", THREADS),
       own_option("out_dir", out_option("the run folder (default: runs/<new id>)")),
       own_option("name", NAME),
       own_option("quiet", QUIET, False)]


def train(fields: dict[str, Any], threads: int | None, out_dir: Path | None, name: str | None, quiet: bool) -> None:
    from benchbox.training.order_wordnet import OrderWordNetTrainer

    set_quiet(quiet)
    set_threads(threads)
    trainer = OrderWordNetTrainer.from_config(OrderWordNetConfig(**fields), out_dir, label=name)
    run = trainer.run()
    out.print(str(run), highlight=False, soft_wrap=True)
    if trainer.stopped_by_signal is not None:
        import signal

        log(f"interrupted by {signal.Signals(trainer.stopped_by_signal).name}; {run}: the embeddings of the best dev "
            "accuracy so far are kept there (no --resume: run the command again to train further)")
        raise typer.Exit(128 + trainer.stopped_by_signal)


train_order_wordnet = train_command(
    OrderWordNetConfig, train, OWN,
    "Train order embeddings of WordNet's noun synsets (Vendrov et al. 2016) and score hypernym prediction; prints "
    "the run folder (`benchbox eval RUN --task hypernym`).")


def register(train_app: typer.Typer) -> None:
    train_app.command("order-wordnet")(train_order_wordnet)
