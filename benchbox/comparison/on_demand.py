"""Encoders named to ``benchbox compare`` evaluated on demand: each gets a run on the compared tasks, either one
already under the runs folder that holds exactly what the evaluation would compute (:mod:`benchbox.reuse`) or a
new evaluation saved there. An encoder whose identity is known without loading it is loaded only when no run
can be reused. Every data file is checked, every encoder to evaluate loaded, and the runs folder found
writable, before anything is evaluated."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from benchbox.comparison.sources import Pending, Source, origin, run_source
from benchbox.data.root import DataRoot
from benchbox.errors import BenchboxError
from benchbox.evaluation import run_tasks
from benchbox.labels import default_label
from benchbox.reuse import find_reusable_run
from benchbox.storage.identity import encoder_record
from benchbox.storage.outdir import check_writable
from benchbox.storage.runs import Run
from benchbox.task_contract.protocol import require_task_data, resolve_tasks
from benchbox.task_contract.options import TaskOptions, resolve_options


@dataclass(frozen=True)
class OnDemand:
    """How encoders among the sources are evaluated: the data root, the runs folder they are looked up in and
    written to, the task options, the embedding cache, ``rerun`` (evaluate afresh even when a matching run
    exists) and ``allow_data_mismatch`` (evaluate data files that are not the published ones,
    :func:`benchbox.task_contract.protocol.require_task_data`)."""

    data_dir: str | os.PathLike | None = None
    runs_dir: str | os.PathLike = "runs"
    options: TaskOptions = field(default_factory=TaskOptions)
    cache: bool = True
    rerun: bool = False
    allow_data_mismatch: bool | None = None

    def evaluate(self, found: list[Source | Pending], tasks: list[str] | None,
                 log: Callable[[str], None]) -> list[Source]:
        """``found`` with each pending encoder replaced by its run on ``tasks`` (default: the tasks of the other
        sources): reused, or evaluated now."""
        pending = [s for s in found if isinstance(s, Pending)]
        names = tasks or sorted({t for s in found if isinstance(s, Source) for t in s.metrics["task"]})
        if not names:
            raise BenchboxError(f"name the tasks to evaluate {', '.join(p.spec for p in pending)} on (--task)")
        data = DataRoot(self.data_dir)
        task_objs = resolve_tasks(names)
        values = resolve_options(task_objs, self.options)  # run_tasks says what a flag overrides
        # missing data, or not the published data, fails before any evaluation (and before a run is reused)
        require_task_data(data, task_objs, values, allow_data_mismatch=self.allow_data_mismatch)

        def reusable(record: dict, said: Callable[[str], None] = log) -> Run | None:
            return None if self.rerun else find_reusable_run(self.runs_dir, encoder=record, tasks=task_objs,
                                                             options=self.options, data=data, log=said)

        reused = {}
        for s in pending:
            run = reusable(s.record, lambda message: None) if s.encoder is None else None
            if run is None:  # to be evaluated: loaded now, before any evaluation; its identity as loaded is
                run = reusable(encoder_record(s.load()))  # looked up too (the one told without loading may miss)
            reused[id(s)] = run
        if any(run is None for run in reused.values()):
            check_writable(self.runs_dir, "--runs-dir")  # before the evaluations, not after them
        out: list[Source] = []
        for s in found:
            if isinstance(s, Source):
                out.append(s)
                continue
            run = reused[id(s)]
            if run is not None:
                log(f"reusing run {run.path} for {s.spec}")
            else:
                path = run_tasks(s.encoder, names, data_dir=self.data_dir, options=self.options, cache=self.cache,
                                 log=log, label=s.label,
                                 allow_data_mismatch=self.allow_data_mismatch).save(self.runs_dir)
                log(f"run written to {path}")
                run = Run.open(path)
            out.append(run_source(run, s.label or default_label(run), spec=origin(s.spec)))
        return out
