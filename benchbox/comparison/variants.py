"""A run's protocol variant: the protocol switches a task recorded with a value other than its option's default,
which set runs of one encoder apart in ``benchbox runs``, ``load_runs`` and the leaderboard's rows."""

from __future__ import annotations

from typing import Any

from benchbox.errors import BenchboxError


def variant(task: str, protocol: dict[str, Any]) -> str:
    """``key=value; ...`` of the protocol switches ``task`` recorded with a value other than its option's
    default (registered tasks; empty for the standard protocol or a task the registry does not know)."""
    from benchbox.registry import TASKS

    try:
        options = TASKS.get(task).options
    except (BenchboxError, AttributeError):
        return ""
    defaults = {o.protocol_key: o.default if o.recorded_default is None else o.recorded_default
                for o in options if o.protocol_key}
    return "; ".join(f"{key}={protocol[key]}" for key in sorted(defaults)
                     if key in protocol and str(protocol[key]) != str(defaults[key]))
