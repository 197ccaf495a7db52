"""The ``manifest.json`` of a training run folder (char-RNN and InferSent alike), rewritten atomically at every
change: unlike an evaluation run's, a training run folder grows while training and its manifest says how far it
got (``"status"``: ``"running"``, then ``"complete"`` with ``"finished"``, or how it stopped). It starts with
:func:`benchbox.storage.provenance.manifest_header`. Under torchrun only rank 0 writes it (``writer``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchbox.storage.jsonio import write_json
from benchbox.storage.provenance import manifest_header, now
from benchbox.storage.runs import MANIFEST, Run

#: the per-epoch history beside the manifest (CSV, one row per finished epoch)
HISTORY_FILE = "history.csv"


class RunManifest:
    """The manifest's fields (``fields``, in file order) and their writes to ``<folder>/manifest.json``."""

    def __init__(self, folder: Path, *, writer: bool = True) -> None:
        self.path = folder / MANIFEST
        self.writer = writer
        self.fields: dict[str, Any] = {}

    def start(self, **fields: Any) -> None:
        """A new run's manifest: the common header (the folder's name is the run id), then ``fields``."""
        self.fields = {**manifest_header(self.path.parent.name), **fields}

    def reopen(self) -> None:
        """The manifest of the run being resumed, as written (read as every run is, :attr:`Run.manifest`: one line
        naming the file when it is not a JSON object); its restart time appended to ``"resumed"``."""
        self.fields = dict(Run.open(self.path.parent).manifest)
        self.fields.setdefault("resumed", []).append(now())

    def save(self, **changes: Any) -> None:
        """Set ``changes`` (new keys go last) and rewrite the file."""
        self.fields.update(changes)
        if self.writer:
            write_json(self.path, self.fields, sort_keys=True)

    def complete(self, **changes: Any) -> None:
        """The run ended normally: ``changes``, ``"status": "complete"`` and the time it finished."""
        self.save(**changes, status="complete", finished=now())
