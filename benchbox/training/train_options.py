"""Training options: each field of a training configuration (:class:`benchbox.training.config.TrainConfig`,
:class:`benchbox.training.nli_config.NLIConfig`, :class:`benchbox.training.order_wordnet_config.OrderWordNetConfig`)
declares, once, what its command-line option is (:class:`TrainOption`: help, choices or range, flag), beside its
default::

    hidden: int = train_option(1024, help="RNN units per direction n (embedding size 2n).", low=1)

From these declarations come the options of ``benchbox train ...`` (:mod:`benchbox.commands.train_options`), the
checks of a configuration built in Python (:func:`check_declared`), and the check of a study's ``train`` table,
value by value (:meth:`TrainOption.from_table`), with no command line in between. Adding a training option is
one field with its declaration.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchbox.errors import BenchboxError
from benchbox.options import check_number

#: the key of a dataclass field's metadata that holds its :class:`TrainOption`
OPTION = "train_option"
_TYPES = {str: "text", int: "an integer", float: "a number", bool: "true or false"}


@dataclass(frozen=True)
class TrainOption:
    """The command-line option of one configuration field (the field's own default is the option's)."""

    help: str = ""
    #: the flag without ``--`` when it is not the field's name with dashes (``word_vectors``: ``vectors``)
    flag: str | None = None
    choices: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    #: a file or folder: typed ``PATH`` on the command line, recorded as text
    path: bool = False
    #: the value's name in the help (``TASK[,TASK...]``)
    metavar: str | None = None
    #: the command-line value (text, or a list for a repeatable option) → the field's value (``--eval-semantic``
    #: splits its commas; ``--test-split ''`` is none); None: taken as it is
    parse: Callable[[Any], Any] | None = None
    #: a check of the value beyond its choices and range (``--device``: this machine has it), returning it
    check_value: Callable[[Any], Any] | None = None
    #: the option is one that several commands share (``--seed``, ``--threads``, ``--data-dir``, ``--vectors``,
    #: ``--device``): its help and range callback are :mod:`benchbox.commands.options`'s, its range here
    shared: bool = False
    #: values the Python API takes besides the range, never the command line (``checkpoint_every=0``: none)
    api_also: tuple[Any, ...] = ()

    def check(self, flag: str, value: Any, *, api: bool = False) -> Any:
        """``value`` if it is within the option's choices and range, else one line naming ``--flag``."""
        if value is None or (api and value in self.api_also):
            return value
        if self.choices is not None and value not in self.choices:
            raise BenchboxError(f"--{flag} must be one of {', '.join(map(str, self.choices))}, not {value!r}")
        if self.low is not None or self.high is not None:
            check_number(f"--{flag}", value, low=self.low, high=self.high, low_open=self.low_open,
                         high_open=self.high_open)
        return self.check_value(value) if self.check_value is not None else value

    def from_command_line(self, value: Any) -> Any:
        """The field's value of what the command line gave (a path as text, :attr:`parse` applied)."""
        if self.path and value is not None:
            value = str(value)
        return self.parse(value) if self.parse is not None else value


def train_option(default: Any = dataclasses.MISSING, **declaration: Any) -> Any:
    """A configuration field with its :class:`TrainOption` (keywords as there); without ``default`` the option
    is required."""
    return field(default=default, metadata={OPTION: TrainOption(**declaration)})


@dataclass(frozen=True)
class Declared:
    """One declared field of a configuration: its name, flag, Python type (``int``, ``str | None`` resolved),
    default (:data:`dataclasses.MISSING`: required) and :class:`TrainOption`."""

    name: str
    flag: str
    type: Any
    default: Any
    option: TrainOption

    @property
    def base(self) -> type:
        """The type of a value without None: ``int`` for ``int | None``; ``str`` for ``tuple[str, ...]``."""
        args = [a for a in typing.get_args(self.type) if a is not type(None) and a is not Ellipsis]
        return args[0] if args else self.type

    @property
    def repeated(self) -> bool:
        """Whether the field holds several values (``eval_semantic: tuple[str, ...]``)."""
        return typing.get_origin(self.type) is tuple

    def from_table(self, value: Any) -> Any:
        """The field's value of a study's ``train`` table entry (a TOML scalar), typed and checked as the command
        line would take it: a number may be written as text (``epochs = "3"``), a text option takes a number as
        its text, a repeatable option one value (its commas separate several)."""
        base = Path if self.option.path else self.base
        if base is bool:
            if not isinstance(value, bool):
                raise BenchboxError(f"--{self.flag} is true or false, got {value!r}")
        elif base in (int, float):
            try:
                if isinstance(value, bool) or (base is int and isinstance(value, float)):
                    raise ValueError
                value = base(value)
            except ValueError:
                raise BenchboxError(f"--{self.flag} must be {_TYPES[base]}, got {value!r}") from None
        elif isinstance(value, bool):
            raise BenchboxError(f"--{self.flag} must be {_TYPES[str]}, got {value!r}")
        else:
            value = str(value)
        value = self.option.from_command_line([value] if self.repeated else value)
        return self.option.check(self.flag, value)


def declared(config: type) -> dict[str, Declared]:
    """The declared fields of the configuration class ``config``, in its order, by flag."""
    hints = typing.get_type_hints(config)
    found = {}
    for item in dataclasses.fields(config):
        option = item.metadata.get(OPTION)
        if option is not None:
            flag = option.flag or item.name.replace("_", "-")
            found[flag] = Declared(item.name, flag, hints[item.name], item.default, option)
    return found


def check_declared(config: Any) -> None:
    """Every declared field of the configuration ``config`` within its choices and range (as the command line
    checks it, and what the Python API takes besides, :attr:`TrainOption.api_also`)."""
    for flag, item in declared(type(config)).items():
        item.option.check(flag, getattr(config, item.name), api=True)


def config_from_spec(config: type, values: dict[str, Any]) -> Any:
    """A configuration of the class ``config`` from its fields as JSON holds them (a tuple field as a list)."""
    hints = typing.get_type_hints(config)
    return config(**{key: tuple(value) if typing.get_origin(hints[key]) is tuple and value is not None else value
                     for key, value in values.items()})
