"""The command line's garbage-collector settings (:mod:`benchbox.collector`): the young threshold, and
:func:`gc.freeze` among the exit handlers, once however often ``main`` runs. Which settings hold is checked,
not the time they save (``benchmarks/bench_semantic_speed.py`` measures that)."""

from __future__ import annotations

import subprocess
import sys

from benchbox.collector import YOUNG_THRESHOLD

#: registers an exit handler before the command line does (exit handlers run last in, first out, so it runs
#: after the command line's), runs ``benchbox --help`` twice in-process, and prints what the handler sees
PROBE = """
import atexit, gc, sys
atexit.register(lambda: print("exit:", gc.get_freeze_count() > 0, gc.get_threshold(), flush=True))
from benchbox.cli import main
for _ in range(2):
    sys.argv = ["benchbox", "--help"]
    try:
        main()
    except SystemExit:
        pass
print("frozen before exit:", gc.get_freeze_count() > 0, flush=True)
"""


def test_a_command_collects_less_often_and_freezes_everything_at_exit():
    default_middle, default_old = 10, 10  # Python's thresholds for the two older generations, kept
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "Usage: benchbox" in proc.stdout  # the output of both commands arrives whole
    assert lines[-2:] == ["frozen before exit: False",
                          f"exit: True ({YOUNG_THRESHOLD}, {default_middle}, {default_old})"]


def test_the_exit_handler_is_registered_once_however_often_main_runs():
    code = """
import atexit, gc, types
from benchbox import collector
calls = []
atexit.register(lambda: print(len(calls)))
collector.gc = types.SimpleNamespace(freeze=lambda: calls.append(1), set_threshold=gc.set_threshold,
                                     get_threshold=gc.get_threshold)
for _ in range(3):
    collector.for_one_command()
"""
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "1"
