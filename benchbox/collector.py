"""The garbage collector's settings for one command (:func:`for_one_command`).

A command lives seconds to minutes, and one that evaluates imports torch, scipy and pandas: about a million
objects that Python's cyclic garbage collector tracks and that each full collection walks, though almost none of
them ever becomes garbage. On a warm ``benchbox eval glove-bow --task semantic --threads 1`` (development
machine, 2 cores; ``benchmarks/bench_semantic_speed.py`` measures the command against Python's defaults):

- **Fewer collections.** Python collects its youngest generation after 700 new container objects, the middle
  one after 10 of those and everything after 10 of those (when the objects added since the last full
  collection are a quarter of the rest): 690 young, 63 middle and 5 full collections, 0.31 s. A young
  collection after :data:`YOUNG_THRESHOLD` new objects leaves 1 full collection and about 0.15 s; the
  garbage left waiting between collections is at most that many objects.
- **The exit is left alone.** The interpreter's shutdown collects once more, walking every object (about
  0.4 s of CPU). :func:`gc.freeze` among the exit handlers would skip that, but objects kept in reference cycles
  then outlive the modules that made them, and extensions that count their objects at shutdown say so on
  stderr (triton, which torch 2.15 loads on Python 3.13, printed "nanobind: leaked 4 instances!" and some 30
  lines more after a command's last word; ``tests/core/test_collector.py`` checks that nothing is frozen at exit).
"""

from __future__ import annotations

import gc

#: new container objects between two collections of the youngest generation (Python's default: 700)
YOUNG_THRESHOLD = 10_000


def for_one_command() -> None:
    """Set the collector for a command (see the module docstring); running it again changes nothing."""
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])
