"""Files written whole or not at all: write a temporary sibling, then rename it over the target (``os.replace``
is atomic on one file system), so an interrupted run never leaves half a manifest or checkpoint."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp")


def write_json(path: str | os.PathLike, payload: dict[str, Any]) -> None:
    """``payload`` as indented, key-sorted strict JSON (:mod:`benchbox.jsonio`; non-JSON values by ``str``)."""
    from benchbox.jsonio import dumps

    path = Path(path)
    tmp = _temporary(path)
    tmp.write_text(dumps(payload, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def torch_save(obj: Any, path: str | os.PathLike) -> None:
    """``torch.save(obj)``, loadable with ``torch.load(weights_only=True)`` when ``obj`` holds only tensors and
    plain containers."""
    path = Path(path)
    tmp = _temporary(path)
    torch.save(obj, tmp)
    os.replace(tmp, path)
