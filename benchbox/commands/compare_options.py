"""The options that set how a comparison tests and corrects (``--correction``, ``--test``, ``--family``, ...), one
per field of :class:`benchbox.comparison.settings.CompareSettings`, generated from its fields (flag, help,
default, range), so that ``benchbox compare`` and ``benchbox report --compare`` take the same options and a
setting is declared once, in the settings::

    @with_compare_settings
    def my_command(runs: ..., settings: CompareSettings, quiet: QUIET = False) -> None: ...

The command's ``settings`` parameter is replaced, where it stands, by the generated options; the command is
called with the :class:`CompareSettings` they give, checked (a value out of its choices or range is one line,
exit 2, before anything is opened or evaluated).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from benchbox.commands.options import in_range
from benchbox.comparison.settings import CompareSettings, settings_fields


def _parameter(name: str, setting: Any, default: Any) -> inspect.Parameter:
    """The typer option of one field: its flag, help and default, its lower bound checked as it is read."""
    callback = in_range(setting.low) if setting.low is not None else None
    option = typer.Option(f"--{setting.flag}", help=setting.help, callback=callback)
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                             annotation=Annotated[type(default), option])


def with_compare_settings(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` with its parameter ``settings`` replaced by one option per field of :class:`CompareSettings`
    (module docstring)."""
    signature = inspect.signature(command, eval_str=True)
    parameters = list(signature.parameters.values())
    at = [p.name for p in parameters].index("settings")
    generated = [_parameter(name, setting, default) for name, setting, default in settings_fields()]
    names = [p.name for p in generated]

    @functools.wraps(command)
    def with_settings(**values: Any) -> Any:
        settings = CompareSettings(**{name: values.pop(name) for name in names})
        return command(**values, settings=settings)

    with_settings.__signature__ = signature.replace(parameters=[*parameters[:at], *generated, *parameters[at + 1:]])
    with_settings.__annotations__ = {p.name: p.annotation for p in with_settings.__signature__.parameters.values()}
    return with_settings
