"""The task flags of ``eval`` and ``compare``: one command-line option per :attr:`benchbox.task_contract.options.TaskOption.flag`
that a registered task declares (``--text``, ``--kfold``, ``--features``, ...), generated from the tasks when the
command runs or shows its help, so that a task option with a flag is declared once, in its task.

A flag's value goes to every task evaluated that has an option with that flag and is not given its own
``-t TASK:KEY=VALUE`` (:func:`benchbox.task_contract.options.option_values`); its type and choices are those of the first option
declaring it, its range is checked by each task's option. The tasks are loaded for their flags only by the
commands that take flags, and only when a command line names an option the command does not have itself (or asks
for help): ``benchbox --help``, the other commands and a command line without task flags load none.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Annotated, Any, Optional

import typer
import typer.main
from typer.core import TyperCommand

from benchbox.registry import PluginWarning
from benchbox.task_contract.options import TaskOption, task_flags

#: the prefix of a flag's parameter name, apart from the command's own parameters
PARAMETER = "task_flag__"


def _annotation(flag: str, option: TaskOption, tasks: tuple[str, ...]) -> Any:
    """The typer annotation of one flag: the option's type (its choices shown as the value's name; each task's
    option checks them, in one line), no default (each task's own default applies), its help with the tasks that
    read it."""
    default = f"; default: {option.default}" if option.default is not None else ""
    help_text = f"{option.help} (tasks: {', '.join(tasks)}; -t TASK:{option.name}=VALUE for one task{default})"
    metavar = "|".join(map(str, option.choices)) if option.choices else None
    declared = f"--{flag}/--no-{flag}" if option.type is bool else f"--{flag}"
    return Annotated[Optional[option.type], typer.Option(declared, help=help_text, show_default=False,
                                                         metavar=metavar)]


def flag_parameters(flags: dict[str, tuple[TaskOption, tuple[str, ...]]]) -> list[Any]:
    """The parameters of ``flags``, built by typer (its click) from a signature of one keyword per flag."""

    def flags_only(**values: Any) -> None:  # pragma: no cover - never called: only its signature is read
        return None

    flags_only.__signature__ = inspect.Signature([
        inspect.Parameter(PARAMETER + flag.replace("-", "_"), inspect.Parameter.KEYWORD_ONLY, default=None,
                          annotation=_annotation(flag, option, tasks))
        for flag, (option, tasks) in flags.items()])
    app = typer.Typer(add_completion=False)
    app.command()(flags_only)
    return typer.main.get_command(app).params


class TaskFlagsCommand(TyperCommand):
    """A command that also takes the registered tasks' flags; their values are in :func:`given_flags`. The tasks
    are loaded for their flags only when the command line names an option the command does not have itself (or
    asks for help): a command line without task flags starts as fast as before there were any."""

    _task_flags: list[Any] | None = None
    _flags_wanted = True

    def _own_options(self) -> set[str]:
        """The command's own option names, as typed (``--out``, ``-q``, ``--no-cache``)."""
        return {opt for param in self.params for opt in (*param.opts, *param.secondary_opts)}

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        own = self._own_options()
        self._flags_wanted = not args or any(arg.startswith("--") and arg.split("=", 1)[0] not in own for arg in args)
        return super().parse_args(ctx, args)

    def task_options(self) -> list[Any]:
        """The flags' parameters, generated once (a flag that is already an option of the command is refused
        with a warning: the task's option is then set with ``-t``)."""
        if self._task_flags is None:
            own = {opt.lstrip("-") for opt in self._own_options()}
            flags = {}
            for flag, (option, tasks) in task_flags().items():
                if flag in own:
                    warnings.warn(f"the flag --{flag} of {', '.join(tasks)} is an option of `benchbox {self.name}` "
                                  f"already: set it with -t TASK:{option.name}=VALUE", PluginWarning, stacklevel=2)
                else:
                    flags[flag] = (option, tasks)
            self._task_flags = flag_parameters(flags) if flags else []
        return self._task_flags

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        if not self._flags_wanted:
            return params
        end = len(params) - 1 if params and params[-1].name == "help" else len(params)  # --help stays last
        return [*params[:end], *self.task_options(), *params[end:]]

    def invoke(self, ctx: Any) -> Any:
        flags = {param.name: param.opts[0].removeprefix("--") for param in self._task_flags or ()}
        given = {flags[name]: ctx.params.pop(name) for name in list(ctx.params) if name in flags}
        ctx.meta["task_flags"] = {flag: value for flag, value in given.items() if value is not None}
        return super().invoke(ctx)


def given_flags(ctx: typer.Context) -> dict[str, Any]:
    """The task flags given to the command of ``ctx`` (flag → value)."""
    return dict(ctx.meta.get("task_flags", {}))
