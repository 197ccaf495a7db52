"""The command-line options that several commands share, each declared once: one name, one meaning, one help
text, and one default (given where a command declares the option, from :mod:`benchbox.options`)::

    def my_command(seed: SEED = DEFAULT_SEED, quiet: QUIET = False, threads: THREADS = None) -> None: ...

Numeric options declare their range with a callback from here (``AT_LEAST_1``, ``POSITIVE``, ``in_range(0, 1)``
...), built on :func:`benchbox.options.check_number`, so that a value out of range is one line and exit 2 before
anything is loaded or trained.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from benchbox.data.root import existing_data_dir
from benchbox.labels import label_option
from benchbox.options import DEFAULT_SEED, check_number


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
#: the seed of every random choice of the command (default :data:`benchbox.options.DEFAULT_SEED`)
SEED = Annotated[int, typer.Option(help="Seed of every random choice: SentEval's probes and folds, bootstrap draws, "
                                        f"initialisation and data order (default: {DEFAULT_SEED}, SentEval's).",
                                   callback=NON_NEGATIVE)]
#: bootstrap resamples of the intervals without a closed form (default :data:`benchbox.options.DEFAULT_RESAMPLES`)
BOOTSTRAP = Annotated[int, typer.Option(help="Bootstrap resamples of the intervals that have no closed form (0: none, "
                                             "those intervals are left empty).", callback=NON_NEGATIVE)]
#: where tensors are computed
DEVICE = Annotated[str, typer.Option(help="auto (CUDA when torch sees a GPU, else the CPU), cpu, cuda or cuda:N.")]
#: the data root of a command that reads data
DATA_DIR = Annotated[Optional[Path], typer.Option(
    help="Data root (default: $BENCHBOX_DATA, else the user data dir; STS-B and SICK are embedded).",
    callback=existing_data_dir)]
#: where evaluation runs are written
RUNS_DIR = Annotated[Path, typer.Option(help="Where evaluation runs are written (compare reuses a matching run there "
                                             "instead of evaluating again).")]
#: the embedding cache
CACHE_DIR = Annotated[Optional[Path], typer.Option(
    help="Embedding cache (default: $BENCHBOX_CACHE, else the user cache dir).")]
CACHE = Annotated[bool, typer.Option(help="Use the embedding cache.")]
#: an encoder's own options
ENCODER_OPTIONS = Annotated[Optional[list[str]], typer.Option(
    "--encoder-opt", "-e", help="Encoder option KEY=VALUE (e.g. vectors=PATH); repeatable.")]
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


def out_option(what: str, *, required: bool = False) -> Any:
    """``--out PATH``: where the command writes what it makes (``what`` says which: a file, a folder, a run
    folder, and the default when it is not ``required``)."""
    return Annotated[Path if required else Optional[Path],
                     typer.Option("--out", help=f"Where this command writes: {what}.")]


def json_option(help_text: str) -> Any:
    """The ``--json PATH|-`` option of a command: a file, or ``-`` for standard output."""
    return Annotated[Optional[str], typer.Option(
        "--json", help=f"{help_text} PATH, or - for standard output (then nothing else goes there); strict "
                       "JSON, docs/schema.md.", metavar="PATH|-")]


def csv_option(help_text: str) -> Any:
    """The ``--csv PATH|-`` option of a command: a file, or ``-`` for standard output."""
    return Annotated[Optional[str], typer.Option("--csv", metavar="PATH|-", help=f"{help_text}; - for standard "
                                                                                "output.")]
