"""Strict JSON output: the one writer of every JSON file and every ``--json`` output of benchbox.

What benchbox writes as JSON follows the output contract of ``docs/schema.md`` (version
:data:`SCHEMA_VERSION`) and is strict JSON (RFC 8259) that any parser reads:

* a missing number (NaN, and ±Infinity) is ``null``, never the ``NaN``/``Infinity`` tokens Python's
  ``json`` module writes by default (the dump runs with ``allow_nan=False`` after the conversion, so a value
  that slipped through is an error, not invalid output);
* floats keep full precision: Python's ``repr`` round-trips every double, so a p-value of 3.27e-13 reads
  back as 3.27e-13 (``DataFrame.to_json`` rounds to 10 digits and wrote it as ``0.0``);
* no colour codes: the text goes to the file or to ``sys.stdout`` as it is, never through rich, so
  ``FORCE_COLOR=1`` cannot put ANSI escapes into it;
* ``-`` as the target means standard output (``--json -``); then the command prints nothing else there.

numpy scalars and arrays, pandas missing values and timestamps, paths and dataclasses are converted to their
JSON equivalents; any other object is written as its ``str`` (as the run manifests always did).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import os
import sys
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from benchbox.storage.atomic import write_text

#: version of the output contract (docs/schema.md): bumped when a field changes meaning or disappears
SCHEMA_VERSION = 2
#: the target that means standard output
STDOUT = "-"


def to_jsonable(value: Any) -> Any:
    """``value`` as plain JSON types: NaN/±inf → None, numpy/pandas values → Python ones, tuples → lists."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return [to_jsonable(v) for v in items]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    module = type(value).__module__.split(".")[0]
    if module == "numpy":
        import numpy as np

        if isinstance(value, np.ndarray):
            return to_jsonable(value.tolist())
        if isinstance(value, np.generic):
            return to_jsonable(value.item())
    if module == "pandas":
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return None
        if isinstance(value, pd.Timestamp):
            return value.isoformat()
    return str(value)


def dumps(payload: Any, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """``payload`` as strict JSON text (module docstring), ending with a newline."""
    import json

    return json.dumps(to_jsonable(payload), indent=indent, sort_keys=sort_keys, allow_nan=False,
                      ensure_ascii=False) + "\n"


def frame_records(frame: Any) -> list[dict[str, Any]]:
    """The rows of a pandas DataFrame as JSON objects (column → value; missing values None, full precision)."""
    if frame is None:
        return []
    return to_jsonable(frame.to_dict(orient="records"))


def write_json(target: str | os.PathLike, payload: Any, *, sort_keys: bool = False) -> None:
    """Write ``payload`` as strict JSON to the file ``target`` whole or not at all
    (:func:`benchbox.storage.atomic.write_text`), or to standard output when ``target`` is ``-``."""
    text = dumps(payload, sort_keys=sort_keys)
    if os.fspath(target) == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_text(target, text)


def to_stdout(target: str | os.PathLike | None) -> bool:
    """Whether an output option's value means standard output (``-``)."""
    return target is not None and os.fspath(target) == STDOUT
