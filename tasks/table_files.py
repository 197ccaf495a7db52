"""The data files of the task bases (:mod:`benchbox.tasks.bases`): tables with a header line, read under the base's
column names. Every refusal is one line naming the task and the file.

- Delimiter: the task's ``delimiter`` (:data:`DELIMITERS`: ``tab`` or ``comma``), else detected from the header
  line: ``tab`` where it holds a tab, ``comma`` where it holds a comma and no tab. A tab-separated file has no
  quoting (a ``"`` is text); a comma-separated one is CSV as RFC 4180 writes it (a field holding a comma is quoted).
- A line that starts with ``#`` is a comment, a blank line is skipped; a ``#`` inside a line is text.
- ``columns`` maps the base's column names to the file's (``{"gold": "label"}``: the file's ``label`` is the
  gold). Of the base columns a table reads, each one mapped must be in the header (else a typo falls back, without
  a word, on a column that happens to have the base's name), its base name must not be another column of the header
  (two columns would answer to one name), and no two may map to one column. A key that names none of the base's
  columns (:func:`check_column_names`) is refused too, as are a header that names a column twice, a missing
  required column and a file without rows.
- :func:`first_repeat` finds a repeated item (a pair, a document id), which the bases refuse as SentEval's SICK and
  STS-B readers do (:mod:`benchbox.tasks.senteval_data`): it would be scored, and counted in n, twice.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.errors import BenchboxError
from benchbox.suggest import close_to

pd = lazy_module("pandas")  # imported at first use: the command line starts without it

#: the delimiters a table may use, by the name a task declares (``delimiter = "comma"``)
DELIMITERS = {"tab": "\t", "comma": ","}


def detect_delimiter(header: str) -> str:
    """The name of the delimiter of a header line (module docstring)."""
    return "comma" if "\t" not in header and "," in header else "tab"


def check_column_names(columns: Mapping[str, str], known: tuple[str, ...], task: str) -> None:
    """Every key of ``columns`` is one of the base's column names ``known``."""
    for base in columns:
        if base not in known:
            close = close_to(base, list(known))
            raise BenchboxError(f"task {task}: columns maps {base!r}, which is not a column of its base"
                                f"{f' (did you mean {close!r}?)' if close else ''}; its columns: {', '.join(known)}")


def read_table(path: Path, columns: Mapping[str, str], required: tuple[str, ...], task: str,
               optional: tuple[str, ...] = (), delimiter: str | None = None) -> pd.DataFrame:
    """The file's rows as strings under the base's column names (``columns``: base name → file name; the base
    reads ``required`` and, where present, ``optional``), by the rules of the module docstring."""
    try:  # split on newlines only: str.splitlines would split a sentence at U+2028 and the like
        lines = [line for line in path.read_text(encoding="utf-8-sig").split("\n") if not line.startswith("#")]
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchboxError(f"task {task}: cannot read {path} as UTF-8 text: {exc}") from None
    first = next((line for line in lines if line.strip()), None)
    if first is None:
        raise BenchboxError(f"task {task}: {path} has no header line (and no rows)")
    name = delimiter or detect_delimiter(first)
    try:
        frame = pd.read_csv(io.StringIO("\n".join(lines)), sep=DELIMITERS[name], header=None, dtype=str,
                            keep_default_na=False, quoting=csv.QUOTE_NONE if name == "tab" else csv.QUOTE_MINIMAL)
    except ValueError as exc:  # pandas' ParserError and EmptyDataError are ValueErrors
        raise BenchboxError(f"task {task}: {path} is not a {name}-separated table with a header: "
                            f"{' '.join(str(exc).split())}") from None
    header = [str(column) for column in frame.iloc[0]]
    frame = frame.iloc[1:].reset_index(drop=True).set_axis(header, axis=1)
    twice = next((column for column in header if header.count(column) > 1), None)
    if twice is not None:
        raise BenchboxError(f"task {task}: the header of {path} names the column {twice!r} twice: rename one")
    mapping = {base: file for base, file in columns.items() if base in (*required, *optional)}
    _check_mapping(mapping, header, path, task)
    frame = frame.rename(columns={file: base for base, file in mapping.items()})
    missing = [c for c in required if c not in frame.columns]
    if missing:
        other = next((o for o in DELIMITERS if o != name and DELIMITERS[o] in first), None)
        hint = (f"; its header holds no {name} but {other}s: declare delimiter = \"{other}\""
                if len(header) == 1 and other else "")
        raise BenchboxError(f"task {task}: {path} lacks the column(s) {', '.join(missing)} (columns: "
                            f"{', '.join(header)}){hint}; name them in the file or map them with columns")
    if frame.empty:
        raise BenchboxError(f"task {task}: {path} has no rows")
    return frame


def _check_mapping(mapping: dict[str, str], header: list[str], path: Path, task: str) -> None:
    """The mapped columns a table reads are in its header, once each, and shadow none of its other columns."""
    for base, file in mapping.items():
        if file not in header:
            raise BenchboxError(f"task {task}: columns maps {base} to {file!r}, which {path} lacks (columns: "
                                f"{', '.join(header)}): correct the name in columns or in the file")
        if base != file and base in header:
            raise BenchboxError(f"task {task}: columns maps {base} to {file!r}, but {path} has a column {base} too: "
                                f"rename one of them in the file, or drop {base} from columns")
    for base, file in mapping.items():
        shared = [other for other, name in mapping.items() if name == file and other != base]
        if shared:
            raise BenchboxError(f"task {task}: columns maps both {base} and {shared[0]} to {file!r}: each column of "
                                "the base reads a column of its own")


def first_repeat(frame: pd.DataFrame, keys: list[str]) -> tuple[int, int] | None:
    """The 1-based rows ``(first, again)`` of the first row whose ``keys`` repeat an earlier row's; None when no
    row repeats one."""
    again = frame.duplicated(keys)
    if not again.any():
        return None
    row = int(np.flatnonzero(again.to_numpy())[0])
    same = (frame[keys] == frame[keys].iloc[row]).all(axis=1).to_numpy()
    return int(np.flatnonzero(same)[0]) + 1, row + 1
