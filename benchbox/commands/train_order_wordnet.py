"""``benchbox train order-wordnet``: order embeddings of WordNet's noun synsets for hypernym prediction
(Vendrov et al. 2016, §4.1; protocol and run folder in :mod:`benchbox.training.order_wordnet`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchbox.console import log, out, set_quiet
from benchbox.commands.options import AT_LEAST_1, NAME, NON_NEGATIVE, POSITIVE, QUIET, THREADS, out_option
from benchbox.data.wordnet import DEFAULT_WORDNET, HELD_OUT
from benchbox.threads import set_threads


def train_order_wordnet(
    wordnet: Annotated[Path, typer.Option(help="WordNet 3.0 database folder (data.noun, index.noun): Debian's wordnet-base installs it in /usr/share/wordnet.")] = DEFAULT_WORDNET,
    held_out: Annotated[int, typer.Option(help="Closure entries held out for dev and for test (the paper: 4000 each).", callback=AT_LEAST_1)] = HELD_OUT,
    split_seed: Annotated[int, typer.Option(help="Seed of the split's shuffle and its dev/test negatives (the hypernym task's split_seed).", callback=NON_NEGATIVE)] = 1,
    dim: Annotated[int, typer.Option(help="Embedding dimension (the paper: 50).", callback=AT_LEAST_1)] = 50,
    epochs: Annotated[int, typer.Option(help="Training epochs (the authors' README: 20).", callback=AT_LEAST_1)] = 20,
    batch_size: Annotated[int, typer.Option(help="Minibatch size, positives and negatives together.", callback=AT_LEAST_1)] = 1000,
    lr: Annotated[float, typer.Option(help="Adam learning rate.", callback=POSITIVE)] = 0.01,
    margin: Annotated[float, typer.Option(help="Margin α of the max-margin loss.", callback=POSITIVE)] = 1.0,
    eval_every: Annotated[int, typer.Option(help="Score dev (threshold chosen there) every N steps; the best dev accuracy's embeddings are kept.", callback=AT_LEAST_1)] = 100,
    seed: Annotated[int, typer.Option(help="Seed of the initialisation, the training negatives and the data order.", callback=NON_NEGATIVE)] = 1234,
    threads: THREADS = None,
    out_dir: out_option("the run folder (default: runs/<new id>)") = None,
    name: NAME = None,
    quiet: QUIET = False,
) -> None:
    """Train order embeddings of WordNet's noun synsets (Vendrov et al. 2016) and score hypernym prediction; prints
    the run folder (`benchbox eval RUN --task hypernym`)."""
    from benchbox.training.order_wordnet import OrderWordNetConfig, OrderWordNetTrainer

    set_quiet(quiet)
    set_threads(threads)
    config = OrderWordNetConfig(wordnet=str(wordnet), held_out=held_out, split_seed=split_seed, dim=dim,
                                epochs=epochs, batch_size=batch_size, lr=lr, margin=margin, eval_every=eval_every,
                                seed=seed)
    trainer = OrderWordNetTrainer.from_config(config, out_dir, label=name)
    run = trainer.run()
    out.print(str(run), highlight=False, soft_wrap=True)
    if trainer.stopped_by_signal is not None:
        import signal

        log(f"interrupted by {signal.Signals(trainer.stopped_by_signal).name}; {run}: the embeddings of the best dev "
            "accuracy so far are kept there (no --resume: run the command again to train further)")
        raise typer.Exit(128 + trainer.stopped_by_signal)


def register(train_app: typer.Typer) -> None:
    train_app.command("order-wordnet")(train_order_wordnet)
