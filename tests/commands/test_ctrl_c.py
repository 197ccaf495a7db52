"""Issue #40: Ctrl-C from the first instant of benchbox's code is one line and status 130, with nothing after it.
On the old code a Ctrl-C while ``benchbox/__init__`` read its version (``importlib.metadata``, before the
command line's handler) printed a ``KeyboardInterrupt`` traceback; the start-up handler raised ``SystemExit``,
which a ``__del__`` or garbage-collector callback reports as "Exception ignored" and then carries on; and a
second SIGINT (``timeout`` sends two: to the command, then to its process group) during the interpreter's
shutdown printed an "Exception ignored" traceback after the one line.

Each case runs the console script's own lines (``from benchbox.cli import main; main()``) in a fresh process
and delivers SIGINT at a chosen point, deterministically: when a module is first imported, from a ``__del__``,
or from an ``atexit`` callback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: the console script (pip's wrapper of ``benchbox.cli:main``), with SIGINT sent when ``argv[1]`` is first
#: imported (``--del``: from the ``__del__`` of an object collected then)
SCRIPT = textwrap.dedent("""
    import builtins, os, signal, sys
    target, in_del = sys.argv[1], sys.argv[2] == "--del"
    real_import = builtins.__import__

    class Collected:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)

    def ctrl_c(name, globals=None, locals=None, fromlist=(), level=0):
        if name == target and not getattr(ctrl_c, "sent", False):
            ctrl_c.sent = True
            if in_del:
                Collected()  # collected at once: its __del__ runs the handler
            else:
                os.kill(os.getpid(), signal.SIGINT)
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = ctrl_c
    sys.argv = ["benchbox", *sys.argv[3:]]
    from benchbox.cli import main
    sys.exit(main())
""")


def _run(target: str, *argv: str, in_del: bool = False, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-c", SCRIPT, target, "--del" if in_del else "--", *argv], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=300)


def _one_line(done: subprocess.CompletedProcess) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 128 + signal.SIGINT and len(lines) == 1 and lines[0].startswith("error: "), \
        (done.returncode, done.stderr)


@pytest.mark.parametrize("module", ["importlib.metadata", "typer", "rich", "benchbox.commands"])
def test_ctrl_c_while_benchbox_starts_is_one_line(module):
    """``importlib.metadata``: benchbox's version, read before the command line's handler on the old code."""
    _one_line(_run(module, "list", "tasks"))


def test_ctrl_c_in_a_collected_objects_del_while_starting_is_one_line():
    _one_line(_run("typer", "list", "tasks", in_del=True))


INCLUDE = textwrap.dedent("""
    import atexit, os, signal
    from benchbox.registry import ENCODERS
    from tests.helpers import LetterCounts

    class Interrupted(LetterCounts):
        name = "interrupted"

        def _encode(self, sentences, batch_size):
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the middle of the work
            return super()._encode(sentences, batch_size)

    ENCODERS.register("interrupted", Interrupted)
    atexit.register(os.kill, os.getpid(), signal.SIGINT)  # timeout's second SIGINT, while the interpreter ends
""")


def test_a_second_ctrl_c_while_the_interpreter_ends_prints_nothing_more(tmp_path):
    (tmp_path / "interrupting.py").write_text(INCLUDE)
    done = _run("no-such-module", "--include", str(tmp_path / "interrupting.py"), "eval", "interrupted", "-t",
                "stsb-cosine", "--no-cache", "--no-save", "-q")
    assert done.stderr.strip().splitlines() == [
        "error: interrupted (Ctrl-C); what was being computed is lost, files already written are whole"], done.stderr
    assert done.returncode == 128 + signal.SIGINT
