"""Published numbers checked like data (docs/guide.md#comparators-from-a-file): what ``paper:``, a comparators file and
``mteb:PATH`` bring in must be numbers of their metric's range, and the files they come from are read only when
they are regular files of a bounded size, so a device, a FIFO or a runaway file (``/dev/zero``) fails at once in
one line instead of filling the memory.

Ranges: a correlation is in [−1, 1] (a value in (1, 100] is the same correlation × 100, the scale papers print:
refused with the fix); an accuracy or a recall in % is in [0, 100]; a Fisher-z interval needs n ≥ 4 pairs (its
standard error is 1/√(n − 3), Fisher 1921).
"""

from __future__ import annotations

import math
import stat
from pathlib import Path

from benchbox.errors import BenchboxError
from benchbox.storage.atomic import file_kind

#: the largest published-numbers file read (a comparators TOML/CSV, an mteb task result): the largest STS result
#: in the public mteb results repository is under 10 KiB, a comparators file of a thousand rows under 1 MiB
MAX_FILE_BYTES = 16 * 1024 * 1024
#: the smallest n a Fisher-z interval is defined for
MIN_FISHER_N = 4


def read_small_text(path: Path, limit: int = MAX_FILE_BYTES) -> str:
    """The text of ``path`` if it is a regular file of at most ``limit`` bytes; one line otherwise."""
    try:
        info = path.stat()
    except OSError as exc:
        raise BenchboxError(f"{path}: cannot read it ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise BenchboxError(f"{path} is {file_kind(info.st_mode)}, not a regular file; give a file of published "
                            "numbers")
    if info.st_size > limit:
        raise BenchboxError(f"{path} is {info.st_size:,} bytes, over the {limit:,}-byte limit of a published-"
                            "numbers file; give the numbers' own file")
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise BenchboxError(f"{path} grew past the {limit:,}-byte limit while read; give a file that does not change")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BenchboxError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return float(value)


def check_correlation(value: object, what: str) -> str | None:
    """Why ``value`` is not a correlation (None: it is one); a value that looks × 100 gets the fix."""
    number = _number(value)
    if number is None:
        return f"{what} is {value!r}, not a number"
    if 1 < abs(number) <= 100:
        return f"{what} is {number:g}, not a correlation in [-1, 1]: it looks like r × 100; give {number / 100:g}"
    if not -1 <= number <= 1:
        return f"{what} is {number:g}, not a correlation in [-1, 1]"
    return None


def check_percentage(value: object, what: str) -> str | None:
    """Why ``value`` is not a percentage in [0, 100] (an accuracy, a recall; None: it is one)."""
    number = _number(value)
    if number is None:
        return f"{what} is {value!r}, not a number"
    if not 0 <= number <= 100:
        return f"{what} is {number:g}, not a percentage in [0, 100]"
    return None


def check_fisher_n(n: object, what: str) -> str | None:
    """Why ``n`` cannot carry a Fisher-z interval (None: it can)."""
    if isinstance(n, bool) or not isinstance(n, (int, float)) or n != int(n) or n < MIN_FISHER_N:
        return f"{what} has n = {n!r}; a Fisher-z interval needs a whole number of at least {MIN_FISHER_N} pairs"
    return None
