"""The command-line options that several commands share, each declared once: one name, one meaning, one help
text, and one default (given where a command declares the option, from :mod:`benchbox.options`)::

    def my_command(seed: SEED = DEFAULT_SEED, quiet: QUIET = False, threads: THREADS = None) -> None: ...

Numeric options declare their range with a callback from here (``AT_LEAST_1``, ``POSITIVE``, ``in_range(0, 1)``
...), built on :func:`benchbox.options.check_number`, so that a value out of range is one line and exit 2 before
anything is loaded or trained. Every option that names where a command writes (``--json``, ``--csv``, ``--out``,
``--runs-dir``, ``--cache-dir``) declares its target with :func:`output_target`, so that one rule
(:mod:`benchbox.storage.output_targets`: never inside a run folder, a study folder or the cache, unless it is
the command's own) holds for every command.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from benchbox.data.root import existing_data_dir
from benchbox.device import check_device
from benchbox.labels import label_option
from benchbox.options import check_number
from benchbox.storage.output_targets import CACHE, check_outside_results


def in_range(
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Callable[..., Any]:
    """A typer option callback that checks its value with :func:`check_number` (the option's name as typed)."""

    def callback(param: typer.CallbackParam, value: Any) -> Any:
        name = max(param.opts, key=len) if param.opts else f"--{param.name}"
        for item in value if isinstance(value, (list, tuple)) else [value]:
            check_number(name, item, low=low, high=high, low_open=low_open, high_open=high_open)
        return value

    return callback


def output_target(*, folder: bool = False, holds: str | None = None) -> Callable[..., Any]:
    """A typer option callback that refuses a target inside a run folder, a study folder or the cache
    (:func:`~benchbox.storage.output_targets.check_outside_results`; ``folder``, ``holds``: as there); ``-``
    (standard output) and an option not given pass."""

    def callback(param: typer.CallbackParam, value: Any) -> Any:
        if value is not None and str(value) != "-":
            name = max(param.opts, key=len) if param.opts else f"--{param.name}"
            check_outside_results(value, name, folder=folder, holds=holds)
        return value

    return callback


#: integers ≥ 1: sizes, counts, epochs, threads, steps
AT_LEAST_1 = in_range(1)
#: reals > 0: learning rates, norms, durations
POSITIVE = in_range(0, low_open=True)
#: numbers ≥ 0: seeds, worker counts, resample counts where 0 means "none", margins, lowest learning rates
NON_NEGATIVE = in_range(0)
#: probabilities of dropping a unit: 0 ≤ p < 1
DROPOUT = in_range(0, 1, high_open=True)


#: no progress or log lines
QUIET = Annotated[bool, typer.Option("--quiet", "-q",
                                     help="No progress or log lines (errors, and the results asked for, still print).")]
#: CPU threads of the tensor and BLAS work (applied by :func:`benchbox.threads.set_threads`)
THREADS = Annotated[Optional[int], typer.Option(
    "--threads", help="CPU threads for tensor and BLAS work (default: $OMP_NUM_THREADS, else the cores free at the "
    "start: the CPUs this process may use, cgroup quota and affinity included, less the 1-minute load average, at "
    "least 1); recorded in the run manifest of a command that writes one.", callback=AT_LEAST_1)]
#: the seed of every random choice of an evaluation (default :data:`benchbox.options.DEFAULT_SEED`, SentEval's; the
#: help's ``[default: ...]`` shows its value)
SEED = Annotated[int, typer.Option(help="Seed of every random choice of the evaluation: SentEval's probes and folds, "
                                        "bootstrap draws (the default is SentEval's).", callback=NON_NEGATIVE)]
#: the seed of a training run (default :data:`benchbox.options.DEFAULT_SEED`)
TRAIN_SEED = Annotated[int, typer.Option("--seed", help="Seed of every random choice of the training: weight "
                                                        "initialisation and data order; recorded as the model's seed.", callback=NON_NEGATIVE)]
#: bootstrap resamples of the intervals without a closed form (default :data:`benchbox.options.DEFAULT_RESAMPLES`)
BOOTSTRAP = Annotated[int, typer.Option(help="Bootstrap resamples of the intervals that have no closed form (0: none, "
                                             "those intervals are left empty).", callback=NON_NEGATIVE)]
#: where tensors are computed
DEVICE = Annotated[str, typer.Option(help="auto (CUDA when torch sees a GPU, else the CPU), cpu, cuda or cuda:N (checked "
                                          "against this machine).", callback=check_device)]
#: the data root of a command that reads data
DATA_DIR = Annotated[Optional[Path], typer.Option(
    help="Data root (default: $BENCHBOX_DATA, else the user data dir; STS-B and SICK are embedded).",
    callback=existing_data_dir)]
#: evaluate data files whose sha256 is not the one data_manifest.json publishes (benchbox.task_contract.protocol.require_task_data)
ALLOW_DATA_MISMATCH = Annotated[bool, typer.Option(
    "--allow-data-mismatch", envvar="BENCHBOX_ALLOW_DATA_MISMATCH", help="Evaluate data files whose sha256 differs from the published one (a damaged or "
    "edited copy) instead of refusing them; the run records each file's expected and found sha256.")]
#: where evaluation runs are written
RUNS_DIR = Annotated[Path, typer.Option(help="Where evaluation runs are written (compare reuses a matching run there "
                                             "instead of evaluating again).", callback=output_target(folder=True))]
#: the embedding cache
CACHE_DIR = Annotated[Optional[Path], typer.Option(
    help="Embedding cache (default: $BENCHBOX_CACHE, else the user cache dir).",
    callback=output_target(folder=True, holds=CACHE))]
CACHE = Annotated[bool, typer.Option(help="Use the embedding cache.")]
#: an encoder's own options
ENCODER_OPTIONS = Annotated[Optional[list[str]], typer.Option(
    "--encoder-opt", "-e", metavar="KEY=VALUE", help="Encoder option KEY=VALUE (e.g. vectors=PATH); repeatable.")]
#: how many sentences an encoder embeds at once
BATCH_SIZE = Annotated[int, typer.Option(help="Encoder batch size.", callback=AT_LEAST_1)]
#: the model's label, stored in its run manifest
NAME = Annotated[Optional[str], typer.Option(
    "--name", help="The model's label in compare tables, JSON and reports, stored in its run manifest (default: a "
    "trained model's label, else the encoder name).", callback=label_option)]
#: word vectors, named as the encoders' option ``-e vectors=`` names them
VECTORS = Annotated[Optional[str], typer.Option(
    "--vectors", help="Word vectors: a GloVe or word2vec text file, .npy with its vocabulary, or word2vec .bin "
    "(default: the packaged GloVe 6B 50-d); the same as an encoder's -e vectors=PATH.")]


def out_option(what: str, *, required: bool = False, holds: str | None = None, folder: bool = False) -> Any:
    """``--out PATH``: where the command writes what it makes (``what`` says which: a file, a folder, a run
    folder, and the default when it is not ``required``); ``holds``: the command writes a folder, a
    :data:`~benchbox.storage.output_targets.RUN` or ``STUDY``; ``folder``: a folder of files of its own; else a file."""
    return Annotated[Path if required else Optional[Path],
                     typer.Option("--out", help=f"Where this command writes: {what}.",
                                  callback=output_target(folder=folder or holds is not None, holds=holds))]


def json_option(help_text: str) -> Any:
    """The ``--json PATH|-`` option of a command: a file, or ``-`` for standard output."""
    return Annotated[Optional[str], typer.Option(
        "--json", help=f"{help_text} PATH, or - for standard output (then nothing else goes there); strict "
                       "JSON, docs/schema.md.", metavar="PATH|-", callback=output_target())]


def csv_option(help_text: str) -> Any:
    """The ``--csv PATH|-`` option of a command: a file, or ``-`` for standard output."""
    return Annotated[Optional[str], typer.Option("--csv", metavar="PATH|-", help=f"{help_text}; - for standard "
                                                                                "output.", callback=output_target())]


def html_option(help_text: str) -> Any:
    """The ``--html PATH`` option of a command: a self-contained HTML page written to a file."""
    return Annotated[Optional[str], typer.Option("--html", metavar="PATH", help=f"{help_text} (self-contained: no "
                                                                               "network resources).", callback=output_target())]
