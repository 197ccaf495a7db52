"""``benchbox train infersent``: train the InferSent BiLSTM-max encoder on NLI (Conneau et al. 2017;
protocol and run folder in :mod:`benchbox.training.nli`). Its options are
:class:`~benchbox.training.nli_config.NLIConfig`'s declared fields (:mod:`benchbox.commands.train_options`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from benchbox.console import out, set_quiet
from benchbox.commands.options import NAME, QUIET, THREADS, out_option
from benchbox.commands.train_options import own_option, train_command
from benchbox.storage.output_targets import RUN
from benchbox.threads import set_threads
from benchbox.training.nli_config import NLIConfig

#: the command's own options, after the configuration's
OWN = [own_option("threads", THREADS),
       own_option("out_dir", out_option("the run folder (default: runs/<new id>)", holds=RUN)),
       own_option("name", NAME),
       own_option("quiet", QUIET, False)]


def train(config: NLIConfig, out_dir: Path | None = None, *, label: str | None = None,
          threads: int | None = None) -> None:
    """Train ``config`` into ``out_dir`` on ``threads`` CPU threads and print the run folder; an interrupted run
    exits 128 + the signal."""
    from benchbox.training.nli import NLITrainer

    set_threads(threads)
    trainer = NLITrainer.from_config(config, out_dir, label=label)
    run = trainer.run()
    out.print(str(run), highlight=False, soft_wrap=True)
    if trainer.stopped_by_signal is not None:
        import signal

        from benchbox.console import log

        best = "the best model so far is kept there" if trainer.history else "no epoch had finished, no model was saved"
        log(f"interrupted by {signal.Signals(trainer.stopped_by_signal).name}; {run}: {best} (InferSent training has "
            "no --resume: run the command again to train further)")
        raise typer.Exit(128 + trainer.stopped_by_signal)


def _run(fields: dict[str, Any], threads: int | None, out_dir: Path | None, name: str | None, quiet: bool) -> None:
    set_quiet(quiet)
    train(NLIConfig(**fields), out_dir, label=name, threads=threads)


train_infersent = train_command(
    NLIConfig, _run, OWN,
    "Train InferSent (Conneau et al. 2017) on NLI; prints the run folder (`benchbox eval RUN --task ...`).")


def register(train_app: typer.Typer) -> None:
    train_app.command("infersent")(train_infersent)
