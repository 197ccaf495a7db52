"""The garbage collector's settings for one command (:func:`for_one_command`).

A command lives seconds to minutes, and one that evaluates imports torch, scipy and pandas: about a million
objects that Python's cyclic garbage collector tracks and that each full collection walks, though almost none of
them ever becomes garbage. On a warm ``benchbox eval glove-bow --task semantic --threads 1`` (development
machine, 2 cores; ``benchmarks/bench_semantic_speed.py`` measures both figures):

- **Fewer collections.** Python collects its youngest generation after 700 new container objects, the middle
  one after 10 of those and everything after 10 of those (when the objects added since the last full
  collection are a quarter of the rest): 690 young, 63 middle and 5 full collections, 0.31 s. A young
  collection after :data:`YOUNG_THRESHOLD` new objects leaves 1 full collection and about 0.15 s; the
  garbage left waiting between collections is at most that many objects.
- **No collection at exit.** The interpreter's shutdown collects again, walking every object for nothing, as
  the process is ending (about 0.4 s of CPU). :func:`gc.freeze` among the exit handlers moves every object out
  of the collector's reach first (Python's documentation: "Freeze all the objects tracked by gc"); the rest of
  a normal exit still happens: the other exit handlers run, objects are freed as their references go, files
  are closed by their writers. Instagram's engineering blog ("Dismissing Python Garbage Collection at
  Instagram", 2017) measured the same cost at exit.
"""

from __future__ import annotations

import atexit
import gc

#: new container objects between two collections of the youngest generation (Python's default: 700)
YOUNG_THRESHOLD = 10_000


def for_one_command() -> None:
    """Set the collector for a command (see the module docstring); running it again changes nothing."""
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    atexit.unregister(_freeze)
    atexit.register(_freeze)


def _freeze() -> None:
    """:func:`gc.freeze`, as a function of this module: ``atexit.unregister`` finds it (not a builtin)."""
    gc.freeze()
