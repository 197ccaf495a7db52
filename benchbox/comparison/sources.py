"""What compare, report and the API work on: a :class:`Source` is one model's metric records, its per-item
scores and its provenance, resolved by one function, :func:`resolve_sources`, from what a user names:

- a run folder (``runs/<run-id>``) or a folder of runs (``runs/``: its runs, sorted by name);
- a published comparator, ``paper:merkx2019/<model>`` (:mod:`benchbox.data.comparators`): numbers without items;
- an mteb results folder, ``mteb:PATH`` (:mod:`benchbox.data.mteb_results`): each model in it, numbers without
  items, labelled ``mteb:MODEL``;
- with an on-demand evaluator (compare: :class:`benchbox.comparison.on_demand.OnDemand`), anything
  :func:`benchbox.encoding.loading.load_encoder` loads — an encoder name, ``package:name``, ``module:attribute``, a
  trained-model folder (a training run) — handed to the evaluator, which reuses a matching run or evaluates it.
  An encoder whose identity is known without loading it (:meth:`benchbox.encoding.protocol.Encoder.identity_unloaded`) is
  loaded only when no run can be reused.

Each may carry a label, ``LABEL=SOURCE``. Everything is opened or loaded, and every missing data file found,
before anything is evaluated. Runs are labelled by the one rule of :mod:`benchbox.labels` (given label, stored
label, encoder name); labels that repeat are made unique.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from benchbox.data import comparators, mteb_results
from benchbox.errors import BenchboxError
from benchbox.storage.identity import describe_difference, differences, seed_free
from benchbox.labels import default_label, model_folder_label, repeated_label, split_label
from benchbox.storage.runs import MANIFEST, METRIC_COLUMNS, Run
from benchbox.task_contract.metadata import KnownTasks, TaskMetadata, task_metadata


def _no_items(task: str) -> None:
    return None


@dataclass
class Source:
    """One model as compared and reported: its label, metric records (``metrics.csv`` columns), per-item scores
    by task (None where there are none: published numbers) and, for runs, their provenance."""

    label: str
    metrics: pd.DataFrame
    #: the run folder opened (None: a published comparator)
    run: Run | None = None
    #: published comparators: where the numbers come from
    citation: str = ""
    items: Callable[[str], pd.DataFrame | None] = _no_items
    #: what named it, normalised (a run's resolved path, else the name as given): matches ``--seeds`` specs
    origin: str = ""
    #: runs only: the encoder's identity and options without seeds (:func:`model_key`: groups the seeds of a model)
    config_key: str | None = None
    fingerprint: str | None = None
    #: runs only: the encoder name (names a group of seeds)
    name: str | None = None
    #: runs only: per task, the protocol it recorded
    protocols: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: runs only: per task, the metadata it recorded (:meth:`benchbox.task_contract.protocol.Task.recorded_metadata`)
    recorded: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: runs only: per task, the sha256 of each data file it read (label → sha256)
    checksums: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def is_reference(self) -> bool:
        return self.run is None

    @property
    def path(self) -> Path | None:
        return self.run.path if self.run is not None else None

    #: (the metrics frame it indexes, (task, subset, metric) → its first row's position): :meth:`value`'s lookup
    _positions: tuple[pd.DataFrame, dict[tuple[str, str, str], int]] | None = field(
        default=None, init=False, repr=False, compare=False)

    def value(self, task: str, subset: str, metric: str) -> pd.Series | None:
        """The first metric record of (task, subset, metric), None if there is none. A dictionary of the records'
        positions, built once per metrics frame: a comparison of hundreds of published models looks up each
        model's records once per pair (issue 50: 34,700 pairs over the mteb results repository)."""
        if self._positions is None or self._positions[0] is not self.metrics:
            m = self.metrics
            positions: dict[tuple[str, str, str], int] = {}
            for i, key in enumerate(zip(m["task"], m["subset"].astype(str), m["metric"])):
                positions.setdefault(key, i)
            self._positions = (m, positions)
        found = self._positions[1].get((task, subset, metric))
        return None if found is None else self.metrics.iloc[found]


def origin(spec: str | os.PathLike) -> str:
    """A source spec normalised so that two ways of writing one run folder compare equal (labels removed)."""
    target = split_label(spec)[1]
    return str(Path(target).resolve()) if Path(target).exists() else target


def run_folders(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    """The run folders named by ``paths``: each a run folder (it has a manifest) or a folder of runs (its
    non-hidden sub-folders with a manifest, sorted by name). A path that is neither is an error."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    folders = []
    for raw in paths:
        path = Path(raw)
        if (path / MANIFEST).is_file():
            folders.append(path)
        elif path.is_dir():
            folders.extend(_children(path))
        else:
            raise BenchboxError(f"{path} is neither a benchbox run folder nor a folder of runs: give a run folder "
                                "(with manifest.json) or the --runs-dir that holds runs")
    return list(dict.fromkeys(folders))


def is_run_collection(spec: str | os.PathLike) -> bool:
    """Whether ``spec`` names a folder of runs (a folder without a manifest of its own)."""
    path = Path(split_label(spec)[1])
    return path.is_dir() and not (path / MANIFEST).is_file()


def _children(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if not p.name.startswith(".") and (p / MANIFEST).is_file())


def open_run(path: Path) -> Run:
    """The run at ``path`` with its manifest and metrics read and checked now, so that an unreadable run fails
    before anything is evaluated or rendered."""
    run = Run.open(path)
    if not isinstance(run.manifest, dict):
        raise BenchboxError(f"unreadable run manifest {path / MANIFEST}: not a JSON object")
    require_encoder(run)
    try:
        columns = set(run.metrics.columns)
    except (OSError, ValueError) as exc:
        raise BenchboxError(f"unreadable metrics in run {path}: {exc}") from exc
    if not set(METRIC_COLUMNS) <= columns:
        raise BenchboxError(f"{path / 'metrics.csv'} lacks the columns {', '.join(sorted(set(METRIC_COLUMNS) - columns))}")
    return run


def require_encoder(run: Run) -> None:
    """An evaluation run's manifest names the encoder it evaluated: one that names none is some other JSON written
    over the manifest (e.g. ``leaderboard --json RUN/manifest.json``), whose rows would be read without a model."""
    if run.kind == "eval" and not run.record.encoder.name:
        keys = ", ".join(sorted(map(str, run.manifest))[:6]) or "none"
        raise BenchboxError(f"{run.path / MANIFEST} is not a benchbox run manifest: it names no encoder (its keys: "
                            f"{keys}); restore it or re-run the evaluation")


def _without_seeds(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_seeds(v) for k, v in value.items() if "seed" not in k.lower()}
    return value


def model_key(run: Run) -> str:
    """What runs that are seeds of one model share: the encoder's identity without what a seed changes
    (:func:`benchbox.storage.identity.seed_free`) and the evaluation options without seeds."""
    record = run.record
    return json.dumps({"encoder": seed_free(record.encoder.record), "options": _without_seeds(record.options)},
                      sort_keys=True, default=str)


def run_source(run: Run, label: str | None = None, *, spec: str | None = None) -> Source:
    """A run as a source, labelled ``label``, else by the label stored in it, else by its encoder's name
    (:mod:`benchbox.labels`)."""
    record = run.record
    return Source(
        label=label or record.label or default_label(run),
        metrics=run.metrics,
        items=run.items,
        run=run,
        origin=spec if spec is not None else str(run.path.resolve()),
        config_key=model_key(run),
        fingerprint=record.encoder.fingerprint,
        name=record.encoder.name or run.run_id,
        protocols={task: entry.protocol for task, entry in record.tasks.items()},
        recorded={task: entry.metadata for task, entry in record.tasks.items() if entry.metadata is not None},
        checksums={task: entry.data_checksums for task, entry in record.tasks.items()},
    )


def paper_source(name: str, label: str | None = None) -> Source:
    """A published comparator (``paper:merkx2019/<model>``): its numbers and citation, no per-item scores."""
    result = comparators.paper_result(name)
    return Source(label or result.name, result.metrics, citation=result.citation, origin=name)


def mteb_sources(spec: str, label: str | None = None,
                 log: Callable[[str], None] = lambda message: None) -> list[Source]:
    """The models of an mteb results folder (``mteb:PATH``), one per model folder (its revisions joined as mteb's
    leaderboard joins them, :mod:`benchbox.data.mteb_results`), labelled ``mteb:MODEL`` (``mteb:MODEL@REVISION``
    where two folders name one model); ``label`` names the folder's one model."""
    models = mteb_results.read_results(spec, log)
    if label is not None and len(models) > 1:
        raise BenchboxError(f"{spec}: a label names one model, and the folder holds {len(models)} "
                            f"({', '.join(m.name for m in models)}); leave the label out")
    names = Counter(m.name for m in models)
    return [Source(label or f"{mteb_results.PREFIX}{m.name}" + (f"@{m.revision}" if names[m.name] > 1 else ""),
                   m.metrics, citation=m.citation, origin=f"{mteb_results.PREFIX}{m.folder}") for m in models]


def reference_sources(spec: str, label: str | None = None,
                      log: Callable[[str], None] = lambda message: None) -> list[Source]:
    """What a published-numbers spec names: ``paper:...`` (one comparator) or ``mteb:PATH`` (its models)."""
    if mteb_results.is_mteb(spec):
        return mteb_sources(spec, label, log)
    return [paper_source(spec, label)]


def is_reference(spec: str) -> bool:
    """Whether ``spec`` names published numbers (``paper:...``, ``mteb:PATH``) rather than a run or an encoder."""
    return comparators.is_paper(spec) or mteb_results.is_mteb(spec)


def comparator_sources(found: dict[str, comparators.Comparator]) -> list[Source]:
    """Published comparators not built in (a comparators file, :mod:`benchbox.comparison.comparator_file`; an mteb
    results folder) as sources, by name: numbers without per-item scores, so unpaired rows of compare tables and
    leaderboards, each labelled by its name."""
    return [Source(name, comparator.metrics(), citation=comparator.citation, origin=name)
            for name, comparator in found.items()]


@dataclass
class Pending:
    """A model argument that names an encoder, to be evaluated (or found evaluated) on demand: loaded
    (``encoder``), or, where its identity is known without loading it, that identity (``record``,
    :func:`benchbox.encoding.loading.record_without_loading`) until it must be evaluated."""

    spec: str
    encoder: Any
    label: str | None
    record: dict[str, Any] | None = None

    def load(self) -> Any:
        """The encoder, loaded now if it was not."""
        if self.encoder is None:
            from benchbox.encoding.loading import load_encoder

            self.encoder = load_encoder(self.spec)
        return self.encoder


class OnDemandEvaluator(Protocol):
    """What evaluates the encoders named among the sources (:class:`benchbox.comparison.on_demand.OnDemand`)."""

    def evaluate(self, found: list[Source | Pending], tasks: list[str] | None,
                 log: Callable[[str], None]) -> list[Source]: ...


def _unknown(spec: str, evaluate: bool) -> BenchboxError:
    if not evaluate:
        return BenchboxError(f"{spec} does not exist: pass run folders written by `benchbox eval` or `benchbox train`"
                             " (or paper:merkx2019/<model>, mteb:PATH)")
    return BenchboxError(f"{spec} does not exist: give a run folder, a trained-model folder, an encoder name "
                         "(`benchbox list encoders`), module:attribute, paper:merkx2019/<model> or mteb:PATH")


def _model(spec: str, label: str | None, evaluate: bool, log: Callable[[str], None]) -> list[Source | Pending]:
    """What one argument names, opened or loaded now: sources, or one encoder to evaluate."""
    if is_reference(spec):
        return reference_sources(spec, label, log)
    path = Path(spec)
    if evaluate:
        from benchbox.encoding.loading import refuse_shadowing, shadowed_folder

        refuse_shadowing(spec, runs_too=True)
        if shadowed_folder(spec) is not None:
            log(f"{spec}: the registered encoder, evaluated or reused (the folder ./{spec} here holds no run)")
            return [_pending(spec, path, label)]
    if (path / MANIFEST).is_file():
        run = open_run(path)
        if not evaluate or run.kind == "eval":
            return [run_source(run, label)]
    elif path.is_dir() and (children := _children(path)):
        if label is not None:
            raise BenchboxError(f"{spec}: a label names one run, and {path} is a folder of {len(children)} runs; "
                                "label its runs one by one (LABEL=FOLDER/RUN)")
        runs = [open_run(child) for child in children]
        if evaluate:
            for run in runs:
                if run.kind != "eval":
                    log(f"skipping {run.path}: a {run.kind} run, not an evaluation (name it on its own to evaluate it)")
            runs = [run for run in runs if run.kind == "eval"]
        return [run_source(run) for run in runs]
    elif path.is_dir() and not evaluate:
        raise BenchboxError(f"{path} is neither a benchbox run (no {MANIFEST}) nor a folder of runs")
    if not evaluate:
        raise _unknown(spec, evaluate)
    return [_pending(spec, path, label)]


def _pending(spec: str, path: Path, label: str | None) -> Pending:
    """The encoder ``spec`` names, to evaluate: its record when it is known without loading the encoder
    (:func:`benchbox.encoding.loading.record_without_loading`: loaded only if it must be evaluated), else the
    encoder loaded now; its errors say what else an argument may be."""
    from benchbox.encoding.loading import load_encoder, record_without_loading

    try:
        record = record_without_loading(spec)
        encoder = load_encoder(spec) if record is None else None
    except BenchboxError as exc:
        if path.exists():
            raise
        if any(sep in spec for sep in ("/", os.sep)) or spec.startswith("."):
            raise _unknown(spec, True) from exc
        raise BenchboxError(f"{exc} Or give a run folder, paper:merkx2019/<model> or mteb:PATH.") from exc
    return Pending(spec, encoder, label or model_folder_label(spec), record)


def resolve_sources(
    specs: list[str | os.PathLike],
    tasks: list[str] | None = None,
    *,
    on_demand: OnDemandEvaluator | None = None,
    labels: list[str | None] | None = None,
    log: Callable[[str], None] = lambda message: None,
) -> list[Source]:
    """The sources ``specs`` name, in order (see the module docstring). ``labels``: one per spec (None: as the
    spec says). With ``on_demand`` (compare), an encoder named is evaluated on ``tasks`` (default: the tasks of
    the other sources) by it, a training run is taken as its model, and a folder of runs gives its evaluation runs;
    without (reports), only runs and published numbers are sources. A run named twice, or a copy of its folder, is
    one source. Repeated labels are made unique (:func:`_unique_labels`)."""
    evaluate = on_demand is not None
    found: list[Source | Pending] = []
    for spec, given in zip(specs, labels or [None] * len(specs), strict=True):
        label, target = split_label(spec)
        named = _model(target, given or label, evaluate, log)
        if tasks and mteb_results.is_mteb(target):  # of a results folder, the models with any of the tasks
            kept = [s for s in named if not isinstance(s, Source) or _has_any(s, tasks)]
            if len(kept) < len(named):
                log(f"{target}: {len(named) - len(kept)} model(s) skipped: none of the tasks {', '.join(tasks)}")
            if not kept:
                raise BenchboxError(f"{target}: no model has any of the tasks {', '.join(tasks)}")
            named = kept
        if tasks and is_run_collection(target):  # of a folder of runs, those with any of the tasks
            for s in named:
                if isinstance(s, Source) and not _has_any(s, tasks):
                    log(f"skipping {s.path}: none of the tasks {', '.join(tasks)}")
            named = [s for s in named if not isinstance(s, Source) or _has_any(s, tasks)]
        found += named
    for s in found:  # a model without any of the tasks would fail every pair: say so before evaluating
        if isinstance(s, Source) and tasks and not _has_any(s, tasks):
            raise BenchboxError(f"{s.label} has none of the tasks {', '.join(tasks)}; it has "
                                f"{', '.join(dict.fromkeys(s.metrics['task'])) or 'no metrics'}")
    if on_demand is not None and any(isinstance(s, Pending) for s in found):
        found = on_demand.evaluate(found, tasks, log)
    return _unique_labels(_once(found, log))


def _has_any(source: Source, tasks: list[str]) -> bool:
    return bool(set(tasks) & set(source.metrics["task"]))


def _once(found: list[Source], log: Callable[[str], None]) -> list[Source]:
    """Each run once, at its first place: a run named twice, a copy of its folder (one run id: the id is written
    once, when the run is, and copied with it) or a run an encoder name reused that is also named is one model
    (said in one line)."""
    first: dict[str, Source] = {}
    for s in found:
        if s.run is not None and first.setdefault(s.run.run_id, s) is not s:
            kept = first[s.run.run_id]
            same = s.path.resolve() == kept.path.resolve()
            what = "is named more than once" if same else f"is a copy of {kept.path} (run {s.run.run_id})"
            log(f"{s.path} {what}: it counts once, as {kept.label}")
    return [s for s in found if s.run is None or first[s.run.run_id] is s]


def _given_label(source: Source) -> bool:
    """Whether the source's label is one a user gave (``--name``, ``LABEL=``), not the name it gets without one."""
    if source.run is None:
        return source.label != source.origin
    return source.label != default_label(source.run)


def _unique_labels(sources: list[Source]) -> list[Source]:
    """Labels made unique. Unlabelled runs that share a name get their run ids
    (:func:`benchbox.labels.repeated_label`); a user's label stays the only name: a training run beside evaluation runs of that
    label (a trained model's evaluations inherit its label) is ``LABEL (training)``, and the runs of one kind
    that still share it are ``LABEL #1``, ``LABEL #2``, ... in order (the runs table pairs them with run ids)."""
    counts = Counter(s.label for s in sources)
    for label in [label for label, n in counts.items() if n > 1]:
        same = [s for s in sources if s.label == label]
        if not _given_label(same[0]):
            for s in same:
                s.label = repeated_label(s.label, s.run)
            continue
        trains = [s for s in same if s.run is not None and s.run.kind == "train"]
        others = [s for s in same if not (s.run is not None and s.run.kind == "train")]
        for group, name in (((trains, f"{label} (training)"), (others, label)) if trains and others
                            else ((same, label),)):
            for i, s in enumerate(group, 1):
                s.label = f"{name} #{i}" if len(group) > 1 else name
    return sources


def seed_groups(sources: list[Source]) -> dict[str, list[Source]]:
    """The runs of each model (identities equal but for the seed, :func:`model_key`) that has at least two
    distinct fingerprints, by group name ``"<encoder> (<k> seeds)"``."""
    groups: dict[str, list[Source]] = {}
    for s in sources:
        if s.config_key is not None:
            groups.setdefault(s.config_key, []).append(s)
    named: dict[str, list[Source]] = {}
    for members in groups.values():
        if len({m.fingerprint for m in members}) >= 2:
            name = f"{members[0].name} ({len(members)} seeds)"
            named[name if name not in named else f"{name} #{len(named) + 1}"] = members
    return named


def not_seeds(sources: list[Source]) -> list[str]:
    """One line for each pair of runs of one encoder name that are not seeds of one model, naming the fields
    of their identities that differ besides the seed (e.g. an ``-e`` option)."""
    lines, seen = [], {}
    for s in sources:
        if s.config_key is None:
            continue
        earlier = seen.setdefault(s.name, [])
        if earlier and all(other.config_key != s.config_key for other in earlier):
            found = differences(json.loads(earlier[0].config_key), json.loads(s.config_key))
            lines.append(f"{earlier[0].label} and {s.label} are not seeds of one model: "
                         f"{describe_difference(found)} differ(s)")
        earlier.append(s)
    return lines


def known_tasks(sources: list[Source]) -> KnownTasks:
    """What is known of every task the sources hold (:func:`benchbox.task_contract.metadata.task_metadata`): the installed
    task, else what the first run that recorded it recorded, else the conventions of a run's per-item rows
    (items that match none: nothing is known)."""
    known = KnownTasks()
    for task in dict.fromkeys(t for s in sources for t in s.metrics["task"]):
        recorded = next((s.recorded[task] for s in sources if task in s.recorded), None)
        holders = [s for s in sources if s.run is not None and task in set(s.metrics["task"])]

        def items(holders: list[Source] = holders, task: str = task) -> pd.DataFrame | None:
            return next((found for s in holders if (found := s.items(task)) is not None and not found.empty), None)

        try:
            known[task] = task_metadata(task, recorded, items)
        except BenchboxError:
            known[task] = TaskMetadata(task)
    return known
