"""Run tasks on an encoder: the Python API behind ``benchbox eval``.

``load_encoder(spec)`` (:mod:`benchbox.encoding.loading`) gives an encoder from a registry name, a trained-model
run folder, ``module:attribute`` or any object with ``encode`` (or a plain callable);
``evaluate(encoder, tasks=[...])`` returns the metric records; ``run_tasks`` returns the full
:class:`Evaluation` (metrics, per-item scores, provenance) that ``save`` writes as a run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.storage.cache import EmbeddingCache
from benchbox.data.root import EMBEDDED_PREFIX, EMBEDDED_ROOT, DataRoot
from benchbox.embedding_checks import check_encoder_output
from benchbox.encoding.protocol import Encoder, VisionLanguageEncoder
from benchbox.encoding.loading import load_encoder
from benchbox.errors import BenchboxError
from benchbox.storage.identity import cache_key, computation, encoder_record, task_record
from benchbox.data.image_files import image_embedder
from benchbox.task_contract.item_checks import check_items
from benchbox.options import check_number
from benchbox.storage.runs import METRIC_COLUMNS, write_run
from benchbox.task_contract.protocol import EvalContext, MetricRecord, Task, TaskResult, require_task_data, resolve_tasks
from benchbox.task_contract.options import TaskOptions, resolve_options

pd = lazy_module("pandas")  # imported at first use: the command line starts without it


@dataclass
class Evaluation:
    """Results of several tasks on one encoder, with what is needed to reproduce them."""

    encoder: dict[str, Any]
    results: list[TaskResult]
    options: TaskOptions
    data_root: str
    cache_stats: dict[str, int] = field(default_factory=dict)
    #: the user's name for the model (:mod:`benchbox.labels`), recorded in the manifest when given
    label: str | None = None
    #: seconds per task (``run_tasks``)
    elapsed_s: dict[str, float] = field(default_factory=dict)
    #: the Task objects evaluated, by name: their metadata is recorded with each result
    tasks: dict[str, Task] = field(default_factory=dict)
    #: per task, its option values as resolved for the run and used (:func:`benchbox.task_contract.options.resolve_options`)
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: what the encoder observed while encoding (:meth:`Encoder.run_notes`, e.g. truncated sentences); recorded
    #: beside the encoder, not in its identity (it depends on what the cache already held)
    encoder_notes: dict[str, Any] = field(default_factory=dict)
    #: the data files evaluated although their sha256 is not the published one (``--allow-data-mismatch``):
    #: label → ``{"expected", "found"}`` (:func:`benchbox.task_contract.protocol.require_task_data`)
    data_mismatch: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def records(self) -> list[MetricRecord]:
        return [record for result in self.results for record in result.metrics]

    def metrics_frame(self) -> pd.DataFrame:
        return pd.DataFrame([r.to_dict() for r in self.records], columns=METRIC_COLUMNS)

    def save(self, runs_dir: str | os.PathLike) -> Path:
        manifest = {
            "kind": "eval",
            **({"label": self.label} if self.label else {}),
            "encoder": self.encoder,
            **({"encoder_notes": self.encoder_notes} if self.encoder_notes else {}),
            "options": self.options.recorded(),
            "data_root": self.data_root,
            **({"data_mismatch": self.data_mismatch} if self.data_mismatch else {}),
            "tasks": {r.task: self._task_record(r) for r in self.results},
            **({"elapsed_s": round(sum(self.elapsed_s.values()), 3)} if self.elapsed_s else {}),
        }
        items = {r.task: r.items for r in self.results if not r.items.empty}
        return write_run(runs_dir, self.encoder["name"], manifest, self.metrics_frame(), items)

    def _task_record(self, result: TaskResult) -> dict[str, Any]:
        """What the manifest keeps of one task: protocol, data checksums and, for a known task, its option
        values and metadata (:meth:`Task.recorded_metadata`: compare and report read it when the task is not
        installed)."""
        record: dict[str, Any] = {"protocol": result.protocol, "data_checksums": result.data_checksums}
        if result.task in self.elapsed_s:
            record["elapsed_s"] = self.elapsed_s[result.task]
        task = self.tasks.get(result.task)
        if task is not None:
            record["implementation"] = task_record(task)
            record["options"] = self.values[result.task]
            record["metadata"] = task.recorded_metadata()
        return record


def make_embedder(
    encoder: Encoder,
    cache: EmbeddingCache | None,
    *,
    batch_size: int = 128,
    progress: Callable[[int, int], None] | None = None,
) -> Callable[[list[str]], np.ndarray]:
    """``embed(sentences)``: the encoder behind the cache, encoding in chunks and reporting progress. Every
    chunk the encoder returns is checked (:func:`check_encoder_output`) before the cache or a task sees it."""
    check_number("batch size", batch_size, low=1)
    chunk = max(batch_size * 32, 1024)

    def encode(sentences: list[str]) -> np.ndarray:
        parts = []
        for start in range(0, len(sentences), chunk):
            part = sentences[start : start + chunk]
            parts.append(check_encoder_output(encoder.encode(part, batch_size=batch_size), part, encoder.name,
                                              encoder.dim))
            if progress:
                progress(min(start + chunk, len(sentences)), len(sentences))
        return np.concatenate(parts) if parts else np.zeros((0, encoder.dim), np.float32)

    if cache is None or not encoder.cacheable:  # an adapted encoder without a fingerprint is never cached
        return encode
    key, computed_by = cache_key(encoder), computation(encoder)
    return lambda sentences: cache.embed(key, sentences, encode, computed_by)


def _say_fallback(data: DataRoot, tasks: list[Task], values: dict[str, dict[str, Any]],
                  log: Callable[[str], None]) -> None:
    """One log line when files missing from the data root are read from the embedded STS-B/SICK copy (the run
    manifest records each as ``embedded:<path>`` among the task's data checksums)."""
    fallback = sorted({p for task in tasks for p in task.required_files(values[task.name])
                       if (found := data.locate(p)) is not None and found.is_relative_to(EMBEDDED_ROOT)})
    if fallback:
        folders = sorted({p.rsplit("/", 1)[0] for p in fallback})
        log(f"{len(fallback)} data files are not under {data.root}: reading the embedded copy shipped with "
            f"benchbox ({', '.join(folders)}); the run manifest records them as {EMBEDDED_PREFIX}<path>")


def run_tasks(
    encoder: Any,
    tasks: list[str] | list[Task],
    *,
    data_dir: str | os.PathLike | None = None,
    options: TaskOptions | None = None,
    cache: EmbeddingCache | None | bool = True,
    batch_size: int = 128,
    log: Callable[[str], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    label: str | None = None,
    allow_data_mismatch: bool | None = None,
) -> Evaluation:
    """Evaluate ``encoder`` (anything :func:`load_encoder` takes) on ``tasks`` (names, groups or Task objects). ``cache=True`` uses the default
    embedding cache, ``False``/``None`` none, or pass an :class:`EmbeddingCache`. ``label``: the model's
    label (:mod:`benchbox.labels`), recorded in the run. ``allow_data_mismatch``: evaluate data files whose sha256
    is not the published one (:func:`require_task_data`; None: ``$BENCHBOX_ALLOW_DATA_MISMATCH``), said in one line
    and recorded in the run."""
    encoder = load_encoder(encoder)
    options = options or TaskOptions()
    task_objs = [t for t in tasks if isinstance(t, Task)] + resolve_tasks([t for t in tasks if isinstance(t, str)])
    if not task_objs:
        raise BenchboxError("no task given: name at least one (`benchbox list tasks`)")
    values = resolve_options(task_objs, options, log or (lambda message: None))
    data = DataRoot(data_dir)
    mismatch = require_task_data(data, task_objs, values, allow_data_mismatch=allow_data_mismatch)
    if mismatch:
        (log or (lambda message: None))(
            f"--allow-data-mismatch: evaluating {len(mismatch)} data file(s) that differ from the published ones ("
            + "; ".join(f"{label}: sha256 {d['found'][:12]}…, published {d['expected'][:12]}…"
                        for label, d in mismatch.items()) + "); the run records them under data_mismatch")
    _say_fallback(data, task_objs, values, log or (lambda message: None))
    if cache is True:
        cache = EmbeddingCache()
    cache_obj = (cache or None) if encoder.cacheable else None  # no fingerprint, no cache (encoding.adapter)
    ctx = EvalContext(
        data=data,
        embed=make_embedder(encoder, cache_obj, batch_size=batch_size, progress=progress),
        options=options,
        log=log or (lambda message: None),
        embed_images=image_embedder(encoder, data, cache_obj, batch_size=batch_size, progress=progress)
        if isinstance(encoder, VisionLanguageEncoder) else None,
        values=values,
    )
    results, elapsed = [], {}
    for task in task_objs:
        ctx.log(f"evaluating {encoder.name} on {task.name}")
        started = time.perf_counter()
        results.append(task.evaluate(encoder, ctx))
        check_items(task, results[-1])
        elapsed[task.name] = round(time.perf_counter() - started, 3)
    stats = {"hits": cache_obj.hits, "misses": cache_obj.misses} if cache_obj else {}
    return Evaluation(
        encoder=encoder_record(encoder),
        encoder_notes=encoder.run_notes(),
        results=results,
        options=options,
        data_root=str(data.root),
        cache_stats=stats,
        label=label,
        elapsed_s=elapsed,
        tasks={task.name: task for task in task_objs},
        values=values,
        data_mismatch=mismatch,
    )


def evaluate(encoder: Any, tasks: list[str], **kwargs: Any) -> list[MetricRecord]:
    """Evaluate and return the metric records (see :func:`run_tasks` for the keyword arguments)."""
    return run_tasks(encoder, tasks, **kwargs).records
