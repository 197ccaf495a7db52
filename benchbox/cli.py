"""The ``benchbox`` command line (typer). Each command group lives in ``benchbox/commands/``.

Errors a user can cause (:class:`BenchboxError`, and OS errors on a named file: permission denied, missing,
disk full) print one line on stderr and exit with status 2, without a traceback; ``benchbox --debug ...`` or
``BENCHBOX_DEBUG=1`` (also ``true``, ``yes``, ``on``; ``0``, ``false``, ``no``, ``off`` or unset: off; anything
else is an error) shows the traceback instead. Environment variables are checked like options, first.
Before any command loads torch, ``OMP_WAIT_POLICY`` is set to PASSIVE unless the environment sets it
(:mod:`benchbox.threads`).
The garbage collector is set for a short-lived command (:mod:`benchbox.collector`).
"""

from __future__ import annotations

import os
import signal
import sys


def _interrupted_while_starting(signum, frame) -> None:
    """Ctrl-C while the modules below import (the first second or so): one line and status 130, not a
    traceback from the middle of an import. The process ends here (:func:`os._exit`: nothing was done, so
    nothing is left to flush or clean up): an exception raised from a handler can land in a ``__del__`` or a
    garbage-collector callback, which Python reports as "Exception ignored" and carries on, and ``timeout``
    sends its signal twice (to the command, then to its process group), so a second one would interrupt the
    first one's unwinding. The end of this module restores Python's handler."""
    os.write(2, b"error: interrupted while benchbox was starting; nothing was done\n")
    os._exit(128 + signum)


if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # a host that set its own keeps it
    signal.signal(signal.SIGINT, _interrupted_while_starting)

from benchbox.threads import prepare_environment  # noqa: E402 - after the handler: these imports are what it covers

prepare_environment()  # before any command loads torch's or scikit-learn's OpenMP runtime

import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Annotated, Optional  # noqa: E402

import typer  # noqa: E402

from benchbox.commands import cache, compare, core, data, describe, export, features, neighbours, report, runs, study, train_cell, train_char_rnn, train_infersent, train_order_wordnet  # noqa: E402
from benchbox import collector  # noqa: E402
from benchbox.commands import reproduce  # noqa: E402
from benchbox.console import error, log, named_stdout, results_to_stderr  # noqa: E402
from benchbox.errors import BenchboxError  # noqa: E402
from benchbox.include import include_file  # noqa: E402
from benchbox.limits import max_chars, max_image_bytes  # noqa: E402
from benchbox.registry import PluginDeprecationWarning, PluginWarning  # noqa: E402

app = typer.Typer(
    name="benchbox",
    help="Train, evaluate and compare visually grounded sentence encoders.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is printed literally: `[study]`, `[[encoder]]`, `benchbox[ray]` stay
)
_show_python_warning = warnings.showwarning
#: ``--debug`` / ``BENCHBOX_DEBUG=1``: user errors raise with their traceback instead of one line
DEBUG = {"on": False}


@app.callback()
def _options(
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an error (also BENCHBOX_DEBUG=1).")] = False,
    include: Annotated[Optional[list[Path]], typer.Option("--include", metavar="FILE.py", help="Import a .py file that registers encoders or tasks (docs/plugins.md); repeatable.")] = None,
) -> None:
    DEBUG["on"] = DEBUG["on"] or debug
    results_to_stderr(False)  # a command sends its results to stderr only when its JSON/CSV takes stdout
    for path in include or []:
        include_file(path)


def _show_plugin_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A :class:`PluginWarning` as one ``warning:`` line on stderr (others as Python shows them)."""
    if issubclass(category, PluginWarning):
        log(f"warning: {message}")
    else:
        _show_python_warning(message, category, filename, lineno, file, line)


train_app = typer.Typer(help="Train an encoder (one sub-command per architecture).", no_args_is_help=True)
app.add_typer(train_app, name="train")
core.register(app)
describe.register(app)
compare.register(app)
report.register(app)
export.register(app)
data.register(app)
features.register(app)
cache.register(app)
neighbours.register(app)
study.register(app)
reproduce.register(app)
runs.register(app)
train_char_rnn.register(train_app)
train_infersent.register(train_app)
train_order_wordnet.register(train_app)
train_cell.register(train_app)


def _fail(message: str) -> None:
    """One line on stderr (even under ``--quiet``, which silences progress, not errors); exit status 2."""
    error(message)
    sys.exit(2)


def os_error_message(exc: OSError) -> str:
    """An OS error on a file (permission, missing, full disk, read-only file system) as one line naming the path."""
    paths = " -> ".join(str(p) for p in (exc.filename, exc.filename2) if p is not None)
    reason = exc.strerror or exc.__class__.__name__
    hint = ""
    if isinstance(exc, PermissionError):
        hint = ": check the file's permissions, or point benchbox at a copy you can access"
    return f"{paths}: {reason}{hint}"


#: the values of ``$BENCHBOX_DEBUG``: on, and off (unset or empty is off too)
DEBUG_VALUES = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def _check_environment() -> None:
    """The environment variables benchbox reads, checked like options before any work: ``$BENCHBOX_DEBUG``
    (sets :data:`DEBUG`) and ``$BENCHBOX_MAX_CHARS`` (:mod:`benchbox.limits`); a bad value is one line."""
    raw = os.environ.get("BENCHBOX_DEBUG", "").strip().lower()
    if raw and raw not in DEBUG_VALUES:
        raise BenchboxError(f"$BENCHBOX_DEBUG must be one of {', '.join(DEBUG_VALUES)} (or unset), not "
                            f"{os.environ['BENCHBOX_DEBUG']!r}")
    DEBUG["on"] = DEBUG_VALUES.get(raw, False)
    max_chars()
    max_image_bytes()


def _interrupted() -> None:
    """Say that Ctrl-C stopped the command, and let no further Ctrl-C (``timeout`` sends two) interrupt the
    interpreter's shutdown with an "Exception ignored" traceback after that line."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    error("interrupted (Ctrl-C); what was being computed is lost, files already written are whole")


def main() -> None:
    DEBUG["on"] = False
    collector.for_one_command()
    warnings.showwarning = _show_plugin_warning
    warnings.filterwarnings("once", category=PluginDeprecationWarning)  # one line, however many uses
    try:
        with named_stdout():  # a full or closed standard output is one line naming it, not Python's exit
            _check_environment()
            app()
    except KeyboardInterrupt:  # between the imports and typer's own handling (which turns it into status 130)
        _interrupted()
        sys.exit(130)
    except SystemExit as exc:  # typer ends a Ctrl-C in a command with status 130 and no word: say it
        if exc.code == 130 and isinstance(getattr(exc.__context__, "__cause__", None), KeyboardInterrupt):
            _interrupted()
        raise
    except BenchboxError as exc:
        if DEBUG["on"]:
            raise
        _fail(str(exc))
    except OSError as exc:  # a file that cannot be read or written, from any loader or writer
        if exc.filename is None or DEBUG["on"]:
            raise
        _fail(os_error_message(exc))


if signal.getsignal(signal.SIGINT) is _interrupted_while_starting:  # imported: Python's handler again (typer
    signal.signal(signal.SIGINT, signal.default_int_handler)        # turns a later Ctrl-C into exit 130, main says so)
