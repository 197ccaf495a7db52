"""Model labels: the names models are shown by in compare's output, its JSON, reports and studies — one rule
for all of them:

1. the label given on the command line (``LABEL=PATH`` for ``compare`` and ``report``), else
2. the label stored in the run (``benchbox eval --name``, ``benchbox train char-gru --name``; the run manifest's
   ``"label"``), else
3. the encoder's name (:func:`default_label`; the run id when it has none);

and an unlabelled name shared by several runs gets each run's id, ``glove-bow (<run-id>)``
(:func:`repeated_label`), so that every model keeps a name of its own.

A label is given at creation (``benchbox eval --name``, ``benchbox train char-gru --name``; stored in the run
manifest as ``"label"``) or when a model is named on the command line (``LABEL=PATH`` for ``compare`` and
``report``, which overrides the stored one). A label is one line of printable text without ``=`` (the
separator of ``LABEL=PATH``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchbox.errors import BenchboxError

if TYPE_CHECKING:
    from benchbox.storage.runs import Run

MAX_LENGTH = 80


def check_label(value: str, where: str = "--name") -> str:
    """``value`` stripped if it is a usable label, else a one-line error naming ``where``."""
    label = value.strip()
    if not label:
        raise BenchboxError(f"{where}: the label is empty; give a short name such as gru-512")
    if "=" in label:
        raise BenchboxError(f"{where} {value!r}: a label cannot contain '=' (it separates LABEL=PATH)")
    if len(label) > MAX_LENGTH or not label.isprintable():
        raise BenchboxError(f"{where} {value!r}: a label is one line of at most {MAX_LENGTH} printable characters")
    return label


def label_option(_ctx: Any, _param: Any, value: str | None) -> str | None:
    """Typer callback of ``--name``: checked before any work starts."""
    return None if value is None else check_label(value)


def split_label(spec: str | os.PathLike) -> tuple[str | None, str]:
    """``LABEL=TARGET`` → ``(LABEL, TARGET)``; anything else (an existing path with ``=`` in its name included)
    → ``(None, spec)``. The label is checked (:func:`check_label`)."""
    text = os.fspath(spec)
    if "=" not in text or Path(text).exists():
        return None, text
    label, _, target = text.partition("=")
    if not target:
        raise BenchboxError(f"{text!r}: write LABEL=PATH (or LABEL=encoder name), with something after '='")
    return check_label(label, where=f"{text!r}"), target


def default_label(run: Run) -> str:
    """The label of a run nobody labelled: its encoder's name, else its run id."""
    return run.record.encoder.name or run.run_id


def repeated_label(label: str, run: Run | None) -> str:
    """An unlabelled ``label`` that several runs share, told apart by ``run``'s id."""
    return f"{label} ({run.run_id if run is not None else ''})"


def model_folder_label(spec: str | os.PathLike) -> str | None:
    """The label stored in a trained-model folder named by ``spec`` (its evaluation runs inherit it), if any."""
    from benchbox.registry import ENCODERS
    from benchbox.storage.runs import MANIFEST, Run

    path = Path(spec)
    if os.fspath(spec) in ENCODERS or not (path / MANIFEST).is_file():  # a registered name wins, as in load_encoder
        return None
    return Run.open(path).record.label
