"""Task options: a task's own protocol switches (:class:`TaskOption`, declared by the task, with the command-line
flag that sets them), the settings every task shares and the values given (:class:`TaskOptions`), and their
resolution, once per run, into each task's option values (:func:`resolve_options`).

A value given for one task (``-t TASK:KEY=VALUE``) wins over its flag's value (``--KEY VALUE``), which wins over
the option's default; each is checked against the option's type, choices and range before any work starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchbox.errors import BenchboxError
from benchbox.options import DEFAULT_RESAMPLES, DEFAULT_SEED, check_number


_TYPES = {str: "text", int: "integer", float: "number", bool: "true/false"}


@dataclass(frozen=True)
class TaskOption:
    """A task's own protocol switch: ``-t TASK:NAME=VALUE`` on the command line, and, when it declares a
    ``flag``, ``--FLAG VALUE`` for every task evaluated that has an option with that flag (``eval``, ``compare``,
    a study's ``[study]`` table; generated from the registered tasks, :func:`task_flags`)."""

    name: str
    type: type = str
    default: Any = None
    help: str = ""
    choices: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    #: the command-line flag (without ``--``) that sets this option for every task evaluated that declares it
    #: (``text``: ``--text raw``); None: ``-t TASK:NAME=VALUE`` only
    flag: str | None = None
    #: the key of the task's recorded protocol that shows this option; runs that differ in it are not compared
    #: (None: the option changes no score, e.g. how an interval is computed)
    protocol_key: str | None = None
    #: what the task records under ``protocol_key`` for the default value, where it records a description rather
    #: than the value itself (None: the default as given); a run that recorded it follows the standard protocol
    recorded_default: Any = None

    def parse(self, task: str, text: str) -> Any:
        """The value of ``text`` (as typed on the command line), checked."""
        if self.type is bool:
            lowered = text.strip().lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no"):
                raise BenchboxError(f"task option {task}:{self.name} is true or false, got {text!r}")
            return self.check(task, lowered in ("true", "1", "yes"))
        if self.type in (int, float):
            try:
                value = self.type(text)
            except ValueError:
                raise BenchboxError(f"task option {task}:{self.name} must be {_TYPES[self.type]}, "
                                    f"got {text!r}") from None
            return self.check(task, value)
        return self.check(task, text)

    def check(self, task: str, value: Any) -> Any:
        """``value`` if it is of the option's type and within its choices or range, else a one-line error."""
        name = f"task option {task}:{self.name}"
        if value is None and self.default is None:
            return value
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, self.type) or (self.type is int and isinstance(value, bool)):
            raise BenchboxError(f"{name} must be {_TYPES.get(self.type, self.type.__name__)}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise BenchboxError(f"{name} must be one of {', '.join(map(str, self.choices))}, got {value!r}")
        if self.type in (int, float):
            check_number(name, value, low=self.low, high=self.high)
        return value

    def describe(self) -> str:
        """``type, default D, one of … / range``: for ``benchbox describe``."""
        parts = [_TYPES.get(self.type, self.type.__name__), f"default {self.default!r}"]
        if self.choices is not None:
            parts.append("one of " + ", ".join(map(str, self.choices)))
        if self.low is not None or self.high is not None:
            parts.append(f"range [{'' if self.low is None else f'{self.low:g}'}, "
                         f"{'' if self.high is None else f'{self.high:g}'}]")
        if self.flag:
            parts.append(f"flag --{self.flag}")
        return "; ".join(parts)


@dataclass(frozen=True)
class TaskOptions:
    """What tasks read besides their data: the settings every task shares, and the values given for the tasks' own
    options (:class:`TaskOption`), resolved once per run by :func:`resolve_options`."""

    #: seed of every random choice a task makes (SentEval's default)
    seed: int = DEFAULT_SEED
    #: bootstrap resamples for intervals that have no closed form (0: skip them, NaN intervals)
    bootstrap: int = DEFAULT_RESAMPLES
    #: ``"auto"``, ``"cpu"`` or ``"cuda"`` for tasks with a trained probe
    device: str = "auto"
    #: per task, the values of its own options given by ``-t TASK:KEY=VALUE``
    task_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: by flag (:attr:`TaskOption.flag`), the value of every option with that flag of the tasks evaluated, where
    #: ``task_options`` gives none (``{"text": "raw"}`` is ``--text raw``)
    flags: dict[str, Any] = field(default_factory=dict)

    def recorded(self) -> dict[str, Any]:
        """The shared settings as a run manifest records them (each task's option values are recorded with the
        task, :func:`resolve_options`)."""
        return {"seed": self.seed, "bootstrap": self.bootstrap, "device": self.device}


def option_values(task: Any, options: TaskOptions) -> dict[str, Any]:
    """Every option of ``task`` (a task class or object): the value given for it (``options.task_options``), else its
    flag's value (``options.flags``), else its default; each checked."""
    given = options.task_options.get(task.name, {})
    values = {}
    for option in task.options:
        if option.name in given:
            value = given[option.name]
        elif option.flag is not None and option.flag in options.flags:
            value = options.flags[option.flag]
        else:
            value = option.default
        values[option.name] = option.check(task.name, value)
    return values


def resolve_options(tasks: list[Any], options: TaskOptions,
                    log: Callable[[str], None] = lambda message: None) -> dict[str, dict[str, Any]]:
    """The option values of every task, resolved once for a run (:func:`option_values`), before any work starts.
    A one-line error for an option given to a task that is not evaluated, or that the task lacks, a bad value,
    or a flag that no task evaluated has; a flag overridden by ``-t TASK:KEY=VALUE`` for every task that has it is
    said in one ``log`` line (the run records the values used)."""
    by_name = {t.name: t for t in tasks}
    for name, values in options.task_options.items():
        if name not in by_name:
            raise BenchboxError(f"task option for {name}, which is not among the tasks evaluated "
                                f"({', '.join(by_name)})")
        declared = {o.name for o in by_name[name].options}
        for key in values:
            if key not in declared:
                raise BenchboxError(f"task {name} has no option {key!r}; its options: "
                                    f"{', '.join(sorted(declared)) or '(none)'} (`benchbox describe {name}`)")
    for flag, value in options.flags.items():
        readers = {t.name: o.name for t in tasks for o in t.options if o.flag == flag}
        if not readers:
            having = task_flags().get(flag, (None, ()))[1]
            raise BenchboxError(f"--{flag} {value}: none of the tasks evaluated ({', '.join(by_name)}) reads it"
                                + (f" ({', '.join(having)} do)" if having else "")
                                + "; drop it (`benchbox describe TASK` lists what each task reads)")
        if all(key in options.task_options.get(name, {}) for name, key in readers.items()):
            log(f"warning: --{flag} {value} is overridden by -t TASK:KEY=VALUE for every task that reads it "
                f"({', '.join(readers)}): ignored, and the run records the values used")
    return {task.name: option_values(task, options) for task in tasks}


def task_flags(*, builtin_only: bool = False) -> dict[str, tuple[TaskOption, tuple[str, ...]]]:
    """Every flag the registered tasks declare (:attr:`TaskOption.flag`), sorted: the first option that declares it
    (its type, choices and help) and the tasks that have it. Tasks that fail to load are left out (``benchbox
    list tasks`` names them); ``builtin_only``: benchbox's own tasks only (the generated docs)."""
    from benchbox.registry import TASKS

    found: dict[str, tuple[TaskOption, list[str]]] = {}
    for entry in TASKS.entries():
        if builtin_only and not entry.builtin:
            continue
        try:
            task = TASKS.load(entry)
        except BenchboxError:
            continue
        for option in getattr(task, "options", ()):  # a task class (a group has none)
            if option.flag:
                found.setdefault(option.flag, (option, []))[1].append(entry.name)
    return {flag: (option, tuple(names)) for flag, (option, names) in sorted(found.items())}
