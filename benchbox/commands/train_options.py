"""The options of the ``train`` commands, generated from their configuration's declarations
(:mod:`benchbox.training.train_options`): one typer option per declared field, with its help, default, flag and
range (checked by the field's own :meth:`~benchbox.training.train_options.TrainOption.check`, so the command line,
a study's ``train`` table and a :class:`~benchbox.training.config.TrainConfig` built in Python refuse a value in
the same words). A field whose option several
commands share (``--seed``, ``--threads``, ``--data-dir``, ``--vectors``, ``--device``) takes the shared option
of :mod:`benchbox.commands.options`. A command adds its own options (``--out``, ``--name``, ``--quiet``) with
:func:`train_command`, which builds its signature.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import MISSING
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from benchbox.commands.options import DATA_DIR, DEVICE, THREADS, TRAIN_SEED, VECTORS
from benchbox.training.train_options import Declared, declared

#: the shared options a configuration field may take, by flag
SHARED = {"seed": TRAIN_SEED, "threads": THREADS, "data-dir": DATA_DIR, "vectors": VECTORS, "device": DEVICE}


def _annotation(item: Declared) -> Any:
    """The typer annotation of one declared field."""
    if item.option.shared:
        return SHARED[item.flag]
    kind = list[item.base] if item.repeated else (Path if item.option.path else item.base)
    optional = item.repeated or item.default is None

    def check(value: Any) -> Any:
        for one in value if isinstance(value, list) else [value]:
            item.option.check(item.flag, one)
        return value

    ranged = item.option.choices is not None or item.option.low is not None or item.option.high is not None
    declarations = [f"--{item.flag}"] if item.flag != item.name.replace("_", "-") else []
    return Annotated[Optional[kind] if optional else kind,
                     typer.Option(*declarations, help=item.option.help, metavar=item.option.metavar,
                                  callback=check if ranged else None)]


def _default(item: Declared) -> Any:
    """The option's default: the field's (a path as a ``Path``; a repeatable option none), none for a required
    field."""
    if item.default is MISSING:
        return inspect.Parameter.empty
    if item.repeated:
        return None
    return Path(item.default) if item.option.path and item.default is not None else item.default


def train_command(config: type, run: Callable[..., None], own: list[inspect.Parameter | str],
                  doc: str) -> Callable[..., None]:
    """A typer command whose options are ``config``'s declared fields, then ``own``: the command's own options
    (:func:`own_option`), among them names of fields listed there rather than first (``--help`` keeps that
    order). The command calls ``run(fields, **own_values)`` with the fields' values as the configuration takes
    them (:meth:`~benchbox.training.train_options.TrainOption.from_command_line`)."""
    fields = {item.name: item for item in declared(config).values()}
    placed = {name for name in own if isinstance(name, str)}
    parameters = {name: own_option(name, _annotation(item), _default(item)) for name, item in fields.items()}
    ordered = [parameters[name] for name in fields if name not in placed]
    ordered += [parameters[p] if isinstance(p, str) else p for p in own]

    def command(**values: Any) -> None:
        run({name: fields[name].option.from_command_line(value) for name, value in values.items() if name in fields},
            **{name: value for name, value in values.items() if name not in fields})

    command.__signature__ = inspect.Signature(ordered)
    command.__doc__ = doc
    return command


def own_option(name: str, annotation: Any, default: Any = None) -> inspect.Parameter:
    """One keyword option of a command (a command's own, or a field's), for :func:`train_command`."""
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)
