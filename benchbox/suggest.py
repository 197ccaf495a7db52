"""Suggestions for a misspelt name: the known name closest to it (:mod:`difflib`'s ratio, cutoff 0.6), for the
one-line refusals of unknown keys and options (study files, declared task files, ``benchbox study`` flags)."""

from __future__ import annotations

import difflib


def close_to(key: str, known: list[str]) -> str | None:
    """The known key closest to ``key``, if one is close enough to be what was meant."""
    return next(iter(difflib.get_close_matches(key, known, n=1, cutoff=0.6)), None)


def did_you_mean(key: str, known: list[str]) -> str:
    """`` (did you mean X?)`` for the closest known key, else the list of the known ones."""
    close = close_to(key, known)
    return f" (did you mean {close!r}?)" if close is not None else f" (known keys: {', '.join(known)})"
