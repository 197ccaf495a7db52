"""The study's last step made ready while its cells run: the imports of the comparison and the report.

After its cells, a study compares their runs and writes the report once (:func:`benchbox.study.run.
_compare_and_report`). In a fresh ``benchbox study`` process most of that step's time is importing what it
needs, not computing: scipy.stats and the statistics, the comparison, matplotlib and its SVG backend, jinja2
and the report modules (and, for seed groups, deepsig with torch), about 2 s of CPU against about 1 s for the
comparison and the report themselves on the four-cell study of ``benchmarks/bench_study.py``. None of it
depends on the cells' results, so a :class:`Warmup` does these imports in a background thread of the study
process while the cells run, and the last step finds them done.

What it changes and what it does not:

- It starts only once the first cell's process has started (:class:`benchbox.study.cells.Processes` calls
  :meth:`Warmup.start`; on Ray, once the tasks are submitted), so it never delays a cell; a study whose cells
  are all done already (a resume with nothing to run) never starts it.
- It only imports modules. It reads no run, resolves no task or encoder (no plugin warning moves), writes
  nothing and sets no state of its own; the comparison and the report are computed after the cells exactly as
  before, from the same runs, so ``comparison.json``, ``comparison.csv`` and ``report.md`` are byte-identical
  (tests/study/test_study_warmup.py).
- An import that fails here is ignored: the same import fails again where the study needs it, with the error it
  always gave. The study waits for the thread (:meth:`Warmup.wait`) before comparing, and before it returns
  after an interruption, so no import is left running while the interpreter exits.

The CPU time is the same; it moves from after the cells, where the study has nothing else to do, to while they
run. With one cell at a time (``--jobs 1``) on a machine with a second core it is nearly free; when the cells
already take every core (``--jobs`` = the CPU count), it takes its share from them and saves about half of it
(docs/study.md, "Speed").
"""

from __future__ import annotations

import threading


def warm(seeds: bool) -> None:
    """Import what the study's comparison and report import, lazily or not (``seeds``: the comparison will have
    seed groups, so the ASO test's deepsig (with torch) too). Each import is attempted on its own; failures
    are left to the study's own import of the module."""
    for load in (_comparison, _report, _lazy_statistics, _svg_backend, *((_seed_tests,) if seeds else ())):
        try:
            load()
        except Exception:  # noqa: BLE001 - ImportError or whatever a module raises: the study's import says it
            continue


def _comparison() -> None:
    import benchbox.comparison.claims  # noqa: F401
    import benchbox.comparison.compare  # noqa: F401 - the statistics
    import benchbox.comparison.output  # noqa: F401 - comparison.json and .csv
    import benchbox.comparison.sources  # noqa: F401


def _report() -> None:
    import benchbox.reports.build  # noqa: F401 - matplotlib, the report sections
    import benchbox.reports.html  # noqa: F401 - write_report imports both renderers
    import benchbox.reports.markdown  # noqa: F401 - jinja2
    import benchbox.reports.significance  # noqa: F401
    import benchbox.storage.outdir  # noqa: F401


def _lazy_statistics() -> None:
    """Modules the statistics import inside their functions (:mod:`benchbox.stats`: tests, intervals, sentence
    groups, pooling of claims)."""
    import scipy.sparse.csgraph  # noqa: F401 - benchbox.stats.jackknife.sentence_groups
    import scipy.stats  # noqa: F401 - every test's distribution
    import statsmodels.stats.contingency_tables  # noqa: F401 - benchbox.stats.paired_outcomes.mcnemar_test
    import statsmodels.stats.meta_analysis  # noqa: F401 - benchbox.stats.pooling.pool_effects
    import statsmodels.stats.multitest  # noqa: F401 - benchbox.stats.corrections.adjust_pvalues
    import statsmodels.stats.proportion  # noqa: F401 - benchbox.stats.intervals.wilson_ci


def _svg_backend() -> None:
    import matplotlib.backends.backend_svg  # noqa: F401 - what savefig(format="svg") loads on first use


def _seed_tests() -> None:
    import deepsig  # noqa: F401 - benchbox.stats.seeds.aso; imports torch (seconds)


class Warmup:
    """:func:`warm` in a daemon thread, started at most once (:meth:`start`, from any thread) and waited for
    (:meth:`wait`, or leaving ``with warmup:``) before the study compares or returns."""

    def __init__(self, seeds: bool = False) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.seeds = seeds

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=warm, args=(self.seeds,), name="benchbox-study-warmup",
                                            daemon=True)
            self._thread.start()

    def wait(self) -> None:
        """Until the imports are done (at once when they never started)."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join()

    def __enter__(self) -> Warmup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.wait()
