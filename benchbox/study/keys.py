"""A study cell's key: the identity of the run the cell would produce, known from the study file alone.

A cell is what it computes, not where it stands in the file: its key holds the fields of a run's identity
(:mod:`benchbox.storage.identity`, the same fields :func:`benchbox.reuse.wanted_identity` compares) that the study
file decides before anything is built or trained:

- ``encoder``: the build of the encoder (:func:`~benchbox.storage.identity.build_of`: its source as a run records
  it, ``benchbox:glove-bow`` for ``glove-bow``; the class, its providing distribution and version, every option,
  given and defaulted by the class' signature), its seed (through its ``seed_option`` or its training) and its
  ``train`` table;
- ``flags``: the task flags of the ``[study]`` table (``text = "raw"``);
- ``benchbox``: benchbox's version (the built-in tasks and encoders are part of the package);
- ``tasks``: per task studied, its implementation (:func:`~benchbox.storage.identity.task_record`: class,
  provider and version, the task's declared ``version``) and its option values.

What only the built encoder knows (its fingerprint and width) follows from these. The data files a task read are
checked when a finished cell is reused, against the checksums its run recorded
(:func:`benchbox.reuse.data_unchanged`). The cell's folder is named after the key's digest
(:func:`cell_name`), so a cell whose key is unchanged is found again wherever its ``[[encoder]]`` table moved,
and one whose key changed gets a new folder: it is run, never served the old results. :func:`changes` says in
one line which fields changed.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from benchbox.encoding.options import typed_options
from benchbox.storage.identity import build_of, differences, task_record
from benchbox.storage.jsonio import to_jsonable
from benchbox.storage.provenance import package_versions

#: hex digits of the key's digest in a cell's folder name
DIGEST_LENGTH = 10


def cell_key(target: Any, source: str, options: dict[str, Any], *, seed: int | None, seed_option: str | None,
             train: dict[str, Any] | None, tasks: list[Any], values: dict[str, dict[str, Any]],
             flags: dict[str, Any]) -> dict[str, Any]:
    """The key of a cell (module docstring) that evaluates ``target`` (the encoder's class or object, whose runs
    record ``source``) with ``options`` (its seed option set to ``seed`` when it has one), trained first
    with the ``train`` table (None: evaluated as it is), on ``tasks`` with their option ``values``."""
    if isinstance(target, type):  # typed as the cell's encoder will type them: "false" and false are one value
        options = typed_options(target, options, source)
    given = {**options, **({seed_option: seed} if seed_option and seed is not None else {})}
    build = build_of(target, source, given)
    encoder = {"source": source, "class": build.cls,
               "provider": {"distribution": build.distribution, "version": build.version},
               # a trained model is built from its folder: its class' defaults are not its options
               "options": to_jsonable(given) if train is not None else build.options,
               "seed": seed, "training": to_jsonable(train)}
    return {"encoder": encoder, "flags": to_jsonable(flags), "benchbox": package_versions().get("benchbox"),
            "tasks": {task.name: {"implementation": task_record(task), "options": to_jsonable(values[task.name])}
                      for task in tasks}}


def key_digest(key: dict[str, Any]) -> str:
    """The sha256 of the key's canonical JSON, shortened to :data:`DIGEST_LENGTH` hex digits."""
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:DIGEST_LENGTH]


def cell_name(label: str, key: dict[str, Any]) -> str:
    """A cell's folder name: ``label`` (a safe name, e.g. ``tfidf-seed1``) and the key's digest."""
    return f"{label[:100]}-{key_digest(key)}"


def _shown(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 40 else text[:37] + "..."


def changes(old: dict[str, Any], new: dict[str, Any], limit: int = 3) -> str:
    """The fields that differ between two keys, in words: ``encoder.options.dim 256 → 128, tasks.sts12 added``."""
    found = differences(old, new)
    said = []
    for path, was, now in found[:limit]:
        if was is None:
            said.append(f"{path} added" if isinstance(now, dict) else f"{path} set to {_shown(now)}")
        elif now is None:
            said.append(f"{path} removed" if isinstance(was, dict) else f"{path} unset (was {_shown(was)})")
        else:
            said.append(f"{path} {_shown(was)} → {_shown(now)}")
    return ", ".join(said) + (f" and {len(found) - limit} more" if len(found) > limit else "")
