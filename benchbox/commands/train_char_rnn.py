"""``benchbox train char-gru|char-lstm|char-gru-max``: train a character-level grounded encoder
(Merkx & Frank 2019; protocol in docs/protocols.md#char-rnn-encoders, loop in :mod:`benchbox.training.trainer`).
The same command runs under ``torchrun --nproc_per_node N`` with DistributedDataParallel."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from benchbox.console import log, out, set_quiet
from benchbox.commands.options import (AT_LEAST_1, DATA_DIR, NAME, NON_NEGATIVE, POSITIVE, QUIET, THREADS, TRAIN_SEED, VECTORS,
                                       out_option)
from benchbox.storage.output_targets import RUN
from benchbox.options import DEFAULT_SEED
from benchbox.encoders.char_rnn_architectures import ARCHITECTURES
from benchbox.training.clips import ATTENTION_QUERIES, FRAMES
from benchbox.training.config import DEFAULT_MARGIN, TrainConfig


def semantic_tasks(values: list[str] | None) -> tuple[str, ...]:
    """``--eval-semantic``'s tasks and groups, given comma-separated, repeated, or both."""
    return tuple(t for value in values or () for t in value.split(",") if t)


def _command(encoder: str):  # noqa: ANN202 - a typer command factory
    def train(
        dataset: Annotated[str, typer.Option(help="flickr8k, coco, or msvd (video clips; needs --video-captions).")],
        features: Annotated[Optional[Path], typer.Option(help="Image features file (.npy/.npz/.h5 keyed by image id), for --visual features; or clip features (.npz/.h5, [clips, frames, dim]) for --visual frame, average or attention.")] = None,
        visual: Annotated[str, typer.Option(help="features (image features), cluster (captions of an image are positives; no images), random (a fixed random vector per image or clip: Bordes et al.'s R); for clips of frames (--features): frame (F, the first frame; --frame middle), average (A, the mean of the frames) or attention (T, softmax attention over the frames driven by the sum of the caption's GloVe vectors through a learned projection).")] = "features",
        video_captions: Annotated[Optional[Path], typer.Option(help="Folder of an MSVD-format video caption dataset, for --dataset msvd: AllVideoDescriptions.txt ('<video_id> <description>' lines) and the split lists train.txt, dev.txt.")] = None,
        max_descriptions: Annotated[Optional[int], typer.Option(help="--dataset msvd: keep the first N descriptions of each training clip (at least 5; default all, as Bordes et al. 2019 train on; dev clips keep 5).", callback=AT_LEAST_1)] = None,
        vectors: VECTORS = None,
        frame: Annotated[str, typer.Option(help="--visual frame's frame: first (Bordes et al.'s F, v = i_1) or middle.")] = FRAMES[0],
        attention_query: Annotated[str, typer.Option(help="--visual attention's query of a caption: sum (Bordes et al.'s Σ_w u_w) or mean of its known words' vectors.")] = ATTENTION_QUERIES[0],
        hidden: Annotated[int, typer.Option(help="RNN units per direction n (embedding size 2n); the paper: 512, 1024, 2048.", callback=AT_LEAST_1)] = 1024,
        epochs: Annotated[int, typer.Option(help="Training epochs.", callback=AT_LEAST_1)] = 32,
        cycle_epochs: Annotated[int, typer.Option(help="Epochs per cyclic learning-rate cycle; a snapshot at the end of each.", callback=AT_LEAST_1)] = 4,
        batch_size: Annotated[int, typer.Option(help="Minibatch size (global, over all processes).", callback=AT_LEAST_1)] = 32,
        loss: Annotated[str, typer.Option(help="hinge-sum (default), hinge-max (VSE++), order (Vendrov), cluster or perceptual (Bordes et al.); a preset bordes-c, bordes-p, bordes-b (Bordes et al. 2019, Table 2: cluster=1; perceptual=1; cluster=1,perceptual=0.1) or projection (= hinge-sum, margin 0.5); or weighted terms, e.g. cluster=1,perceptual=0.1,hinge-sum=1, with presets for their terms and Bordes et al.'s textual term (QuickThought on --text-corpus), e.g. bordes-c,textual=0.5.")] = "hinge-sum",
        text_corpus: Annotated[Optional[Path], typer.Option(help="Ordered text corpus of the textual term (--loss ...,textual=W): UTF-8, one sentence per line, a blank line between documents.")] = None,
        margin: Annotated[Optional[float], typer.Option(help="Margin of the ranking term (default 0.2; 0.05 for --loss order; 0.5 for the projection preset, Bordes et al.'s m').", callback=NON_NEGATIVE)] = None,
        cluster_margin: Annotated[float, typer.Option(help="Margin m of the cluster loss (Bordes et al. 2019: 0.5).", callback=NON_NEGATIVE)] = DEFAULT_MARGIN["cluster"],
        lr_max: Annotated[Optional[float], typer.Option(help="Peak learning rate (default 1e-3 flickr8k, 1e-4 coco).", callback=POSITIVE)] = None,
        lr_min: Annotated[float, typer.Option(help="Lowest learning rate (at most --lr-max).", callback=NON_NEGATIVE)] = 1e-6,
        seed: TRAIN_SEED = DEFAULT_SEED,
        init_from: Annotated[Optional[Path], typer.Option("--init-from", metavar="RUN", help="Start the sentence encoder from the weights of the finished run RUN (same encoder, --hidden and captions); fresh optimiser and schedule. Bordes et al.'s M^p: --loss textual=1 first, then the grounded loss with --init-from.")] = None,
        max_captions: Annotated[Optional[int], typer.Option(help="Train on the first training images whose captions number at most N in all (N//5 images of five; a subset).", callback=AT_LEAST_1)] = None,
        eval_semantic: Annotated[Optional[list[str]], typer.Option(metavar="TASK[,TASK...]", help="Tasks or groups (comma-separated or repeated) to evaluate at every snapshot (the paper's Figure 4).")] = None,
        out_dir: out_option("the run folder (default: runs/<new id>)", holds=RUN) = None,
        name: NAME = None,
        resume: Annotated[bool, typer.Option(help="Continue the run in --out from its last checkpoint.")] = False,
        data_dir: DATA_DIR = None,
        checkpoint_every: Annotated[int, typer.Option(help="Write the resumable checkpoint every N steps (and at every epoch end).", callback=AT_LEAST_1)] = 200,
        threads: THREADS = None,
        quiet: QUIET = False,
    ) -> None:
        set_quiet(quiet)
        config = TrainConfig(
            encoder=encoder, dataset=dataset, visual=visual, features=str(features) if features else None,
            video_captions=str(video_captions) if video_captions else None, max_descriptions=max_descriptions,
            word_vectors=vectors,
            frame=frame, attention_query=attention_query,
            hidden=hidden, epochs=epochs, cycle_epochs=cycle_epochs, batch_size=batch_size, loss=loss, margin=margin,
            cluster_margin=cluster_margin,
            text_corpus=str(text_corpus) if text_corpus else None,
            lr_max=lr_max, lr_min=lr_min, seed=seed, init_from=str(init_from) if init_from else None,
            max_captions=max_captions,
            eval_semantic=semantic_tasks(eval_semantic), data_dir=str(data_dir) if data_dir else None,
            checkpoint_every=checkpoint_every, threads=threads,
        )  # checked first: a bad option is one line before anything loads
        log(f"train {encoder}: loading torch and the training code ...")  # seconds on a busy machine
        from benchbox.training.trainer import Trainer

        trainer = Trainer.from_config(config, out_dir, resume=resume, label=name)
        run = trainer.run()
        if trainer.dist.is_main:
            out.print(str(run), highlight=False, soft_wrap=True)
        if trainer.stopped_by_signal is not None:
            from benchbox.commands.interrupted import exit_interrupted

            exit_interrupted(trainer.stopped_by_signal, run)

    train.__doc__ = f"Train {encoder} (Merkx & Frank 2019) on image-caption pairs; prints the run folder."
    return train


def register(train_app: typer.Typer) -> None:
    for encoder in ARCHITECTURES:
        train_app.command(encoder)(_command(encoder))
