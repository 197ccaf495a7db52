"""The command line's garbage-collector settings (:mod:`benchbox.collector`): the young threshold, and an exit
left to collect as Python does. Which settings hold is checked, not the time they save
(``benchmarks/bench_semantic_speed.py`` measures that)."""

from __future__ import annotations

import subprocess
import sys

from benchbox.collector import YOUNG_THRESHOLD

#: registers an exit handler before the command line runs (exit handlers run last in, first out, so it runs
#: after any the command line registers), runs ``benchbox --help`` twice in-process, and prints what it sees
PROBE = """
import atexit, gc, sys
atexit.register(lambda: print("exit:", gc.get_freeze_count(), gc.get_threshold(), flush=True))
from benchbox.cli import main
for _ in range(2):
    sys.argv = ["benchbox", "--help"]
    try:
        main()
    except SystemExit:
        pass
"""


def test_a_command_collects_less_often_and_leaves_the_exit_to_collect_everything():
    # a frozen exit (gc.freeze among the exit handlers) kept objects in cycles alive past their modules: triton's
    # nanobind bindings then printed "nanobind: leaked 4 instances!" and 30 lines more after the command's error
    default_middle, default_old = 10, 10  # Python's thresholds for the two older generations, kept
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Usage: benchbox" in proc.stdout
    assert proc.stdout.splitlines()[-1] == f"exit: 0 ({YOUNG_THRESHOLD}, {default_middle}, {default_old})"
