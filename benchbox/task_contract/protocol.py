"""The task contract: metadata that does the work (modelled on mteb's ``TaskMetadata``), ``evaluate``, tidy results.

A task is a :class:`Task` subclass registered under the entry-point group ``benchbox.tasks`` (or at run time with
``benchbox.registry.TASKS.register(name, TaskClass)``). Its class attributes are read by every part of benchbox,
so that adding a task touches only its module and its entry point:

- ``metrics``: one :class:`MetricSpec` per metric name it reports — direction (``higher_is_better``), ``unit``
  (``"r"``, ``"%"``, ``"rank"``, ``"mse"``, ``"value"``), how a person sees it (``scale``, ``decimals``) and
  ``kind``, the kind of paired test ``benchbox compare`` runs on its per-item rows (:mod:`benchbox.task_contract.paired_tests`:
  ``"correlation"``, ``"classification"``, ``"ranks"``, ``"mean"``, ``"bootstrap"`` with a
  ``statistic(rows) -> float``), or None (not tested: dev scores, rsum, F1). Each kind declares the per-item
  columns it reads; ``eval`` refuses items that lack them, repeat a key, hold non-finite gold, or are constant
  where a test needs them to vary (:mod:`benchbox.task_contract.item_checks`). ``summary=True`` marks the metric counted as
  one "task" in compare's summary line; summary metrics whose kind has a common scale are pooled into claims.
- ``main_score``, ``item_kind`` (what a per-item row is), ``item_keys`` (the columns that pair the items of two
  runs), ``version``, ``license``, ``citation`` (BibTeX), ``reference`` (short), ``group`` (the report section,
  e.g. ``"semantic similarity"``) and ``order`` (position in reports, then the name).
- ``data_files``: paths relative to the data root, or :class:`DataFile` (path + sha256, optionally found in the
  plugin's own package folder ``package_dir``); checked before any evaluation; read with ``ctx.file(...)``.
- ``options``: the task's own :class:`~benchbox.task_contract.options.TaskOption` (typed, with default, help and choices or
  range, and optionally the command-line ``flag`` that sets it for every task evaluated that has it), set by
  ``-t TASK:KEY=VALUE`` / ``--task-option``, ``--FLAG VALUE`` or ``TaskOptions(task_options={task: {key: value}})``,
  resolved and validated once per run before work starts (:func:`benchbox.task_contract.options.resolve_options`), read
  with ``ctx.option(self, key)`` and recorded in the run as used. ``protocol_key`` names the key of the task's
  recorded ``protocol`` that shows the option; compare refuses runs that differ in it.

Runs record each task's metadata (:meth:`Task.recorded_metadata`), so runs of tasks that are no longer
installed still compare. A minimal complete task (a runnable version is in ``tests/core/test_task_metadata.py``)::

    from sklearn.metrics import roc_auc_score

    class Paraphrase(Task):
        name = "paraphrase-auc"
        description = "cosine of the two sentences as a paraphrase detector"
        group, order = "paraphrase", 900
        main_score = "auc"
        item_kind, item_keys = "pairs", ("subset", "item")
        metrics = (MetricSpec("auc", kind="bootstrap", unit="value", summary=True,
                              statistic=lambda rows: roc_auc_score(rows["gold"], rows["score"])),)
        data_files = (DataFile("pairs.tsv", sha256="…", package_dir=Path(__file__).parent),)
        options = (TaskOption("threshold", float, 0.5, "decision threshold", low=0, high=1,
                              protocol_key="threshold"),)
        version, license, citation = "1", "CC-BY-4.0", "@misc{...}"

        def evaluate(self, encoder, ctx):
            path = ctx.file(self.data_files[0])
            ...  # embed with ctx.embed, score, build per-item rows with columns subset, item, gold, score
            return TaskResult(self.name, [MetricRecord(self.name, "test", "auc", auc, n=len(rows))], rows,
                              protocol={"threshold": ctx.option(self, "threshold")},
                              data_checksums=ctx.data.checksums([path]))

``evaluate(encoder, ctx)`` returns a :class:`TaskResult`: tidy metric records (one per task × subset × metric,
each with a confidence interval and n) plus per-item scores (per-pair similarities, per-query ranks), without
which no paired significance test is possible. A task never trains the encoder; supervised probes live inside
the task.
"""

from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import InitVar, asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.data.root import ALLOW_MISMATCH_ENV, DataRoot, published_sha256
from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError
from benchbox.registry import renamed
from benchbox.task_contract.options import TaskOption, TaskOptions, option_values

pd = lazy_module("pandas")  # imported at first use: the command line starts without it


#: what a metric's number is: a correlation in [-1, 1], a percentage, a rank, a squared error, anything else
UNITS = ("r", "%", "rank", "mse", "value")


@dataclass(frozen=True)
class MetricSpec:
    """One metric a task reports: how it is tested, read and shown (see the module docstring)."""

    name: str
    #: the kind of paired test on per-item rows (:data:`benchbox.task_contract.paired_tests.KINDS`), or None (not tested)
    kind: str | None = None
    higher_is_better: bool = True
    #: one of :data:`UNITS`
    unit: str = "value"
    #: how a person sees it: the value × ``scale`` (100: a correlation shown × 100) with ``decimals`` decimals
    #: (None: four significant digits, :mod:`benchbox.formatting`); machine output keeps the value as recorded
    scale: float = 1.0
    decimals: int | None = None
    #: counted as one task in compare's summary line (Merkx & Frank 2019 count Pearson per subset, R@10 per
    #: retrieval direction, accuracy per classification subset); with a kind that has a common scale, pooled
    #: into the claims
    summary: bool = False
    #: ``kind="bootstrap"``: the metric computed from per-item rows (one side's columns, unsuffixed)
    statistic: Callable[[pd.DataFrame], float] | None = field(default=None, compare=False)
    description: str = ""
    #: True for a spec read back from a run manifest (its ``statistic`` cannot be recorded)
    _recorded: bool = field(default=False, repr=False, compare=False)
    #: deprecated (until the next release): the previous release's name of ``kind`` (``"accuracy"`` is
    #: ``"classification"``), accepted with one warning (docs/plugins.md, "Compatibility")
    test: InitVar[str | None] = None

    def __post_init__(self, test: str | None) -> None:
        from benchbox.task_contract.paired_tests import KINDS

        if test is not None:
            if self.kind is not None:
                raise BenchboxError(f"metric {self.name!r}: give kind= only (test= is its deprecated name)")
            kind = RECORDED_TESTS.get(test, test)
            renamed("MetricSpec(test=...)", "MetricSpec(kind=...), where test='accuracy' is kind='classification'")
            object.__setattr__(self, "kind", kind)
        if self.kind is not None and self.kind not in KINDS and not self._recorded:
            raise BenchboxError(f"metric {self.name!r}: unknown kind {self.kind!r}; use one of {', '.join(KINDS)} "
                                "or None")
        if self.unit not in UNITS:
            raise BenchboxError(f"metric {self.name!r}: unknown unit {self.unit!r}; use one of {', '.join(UNITS)}")
        if self.kind == "bootstrap" and self.statistic is None and not self._recorded:
            raise BenchboxError(f"metric {self.name!r}: kind 'bootstrap' needs a statistic(rows) -> float")

    def plain(self) -> dict[str, Any]:
        """The fields a run manifest records (all but ``statistic`` and ``description``)."""
        return {"name": self.name, "kind": self.kind, "higher_is_better": self.higher_is_better,
                "unit": self.unit, "scale": self.scale, "decimals": self.decimals, "summary": self.summary}

    @classmethod
    def from_plain(cls, record: dict[str, Any]) -> MetricSpec:
        """A spec from :meth:`plain`'s record; a ``bootstrap`` metric has no statistic and so is not tested. A kind
        that is not installed here (a plugin's) is kept by name: its rows are shown as untested, naming it.
        Runs written before kinds and decimals were recorded name the kind ``test`` (``accuracy`` for
        ``classification``) and get the decimals of their unit (one for correlations, percentages and ranks)."""
        kind = record.get("kind", RECORDED_TESTS.get(record.get("test"), record.get("test")))
        unit = record.get("unit") if record.get("unit") in UNITS else "value"
        decimals = record.get("decimals", 1 if unit in ("r", "%", "rank") else None)
        return cls(str(record["name"]), str(kind) if kind else None, bool(record.get("higher_is_better", True)),
                   unit, float(record.get("scale", 1.0)), decimals if isinstance(decimals, int) else None,
                   bool(record.get("summary", False)), _recorded=True)


#: the kinds runs written before kinds existed recorded under another name (``test``)
RECORDED_TESTS = {"accuracy": "classification"}


@dataclass(frozen=True)
class DataFile:
    """A file a task reads: ``path`` relative to the data root (or to ``package_dir``, a plugin's own package
    folder), and its sha256 (checked before evaluation when given)."""

    path: str
    sha256: str = ""
    package_dir: Path | None = None


@dataclass(frozen=True)
class MetricRecord:
    """One number: ``value`` with its 95% interval [ci_low, ci_high] over ``n`` items (NaN if none)."""

    task: str
    subset: str
    metric: str
    value: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    n: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TaskResult:
    """What one task returns: metrics, per-item scores and the protocol variant that produced them."""

    task: str
    metrics: list[MetricRecord]
    #: per-item scores, one row per item (e.g. columns subset, item, gold, score); may be empty
    items: pd.DataFrame = field(default_factory=lambda: pd.DataFrame())
    #: the protocol variant and options used (recorded in the run manifest)
    protocol: dict[str, Any] = field(default_factory=dict)
    #: sha256 of every data file read, by path relative to the data root (or ``embedded:`` path)
    data_checksums: dict[str, str] = field(default_factory=dict)


@dataclass
class EvalContext:
    """What a task gets besides the encoder: data, cached encoding, options, progress reporting."""

    data: DataRoot
    #: ``embed(sentences) -> float32 [n, d]``: the encoder behind the embedding cache and progress bar
    embed: Callable[[list[str]], np.ndarray]
    options: TaskOptions = field(default_factory=TaskOptions)
    #: ``log(message)``: progress lines to stderr (silenced by ``--quiet``)
    log: Callable[[str], None] = lambda message: None
    #: ``embed_images(ImageSet) -> float32 [n, d]``: the image side of a vision–language encoder behind the
    #: embedding cache (:func:`benchbox.data.image_files.image_embedder`); None when the encoder has none
    embed_images: Callable[[Any], np.ndarray] | None = None
    #: per task, the values of its options, resolved once for the run (:func:`resolve_options`)
    values: dict[str, dict[str, Any]] = field(default_factory=dict)

    def option(self, task: Task, name: str) -> Any:
        """The value of ``task``'s option ``name``, as resolved for the run."""
        return self.values_for(task)[name]

    def values_for(self, task: Task) -> dict[str, Any]:
        """Every option value of ``task``, as resolved for the run (:func:`option_values` when the context was
        built without resolving)."""
        if task.name not in self.values:
            self.values[task.name] = option_values(task, self.options)
        return self.values[task.name]

    def log_for(self, task: Task) -> Callable[[str], None]:
        """:attr:`log` with each line starting with the task's name (a probe's progress lines)."""
        return lambda message: self.log(f"{task.name}: {message}")

    def file(self, data_file: DataFile | str) -> Path:
        """Where a declared data file is (its package folder, else the data root), its sha256 checked."""
        return locate_file(self.data, data_file)


class Task(ABC):
    """Base class for evaluation tasks. Subclasses set the metadata and implement :meth:`evaluate`."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    #: every metric the task reports (see the module docstring); a metric not listed is shown but never tested
    metrics: ClassVar[tuple[MetricSpec, ...]] = ()
    #: metric name of the headline score (e.g. ``"pearson"``)
    main_score: ClassVar[str]
    #: what one per-item row is (e.g. ``"sentence pair"``, ``"query"``) and the columns that pair two runs' rows
    item_kind: ClassVar[str] = ""
    item_keys: ClassVar[tuple[str, ...]] = ("subset", "item")
    #: data files relative to the data root (or :class:`DataFile`); checked before evaluation
    data_files: ClassVar[tuple[str | DataFile, ...]] = ()
    #: evaluation splits used
    splits: ClassVar[tuple[str, ...]] = ("test",)
    #: the task's own options (``-t TASK:KEY=VALUE``)
    options: ClassVar[tuple[TaskOption, ...]] = ()
    #: report section (tasks of one group share it) and position (then by name)
    group: ClassVar[str] = "other"
    order: ClassVar[int] = 1000
    #: bump when a change of the implementation changes numbers
    version: ClassVar[str] = "1"
    license: ClassVar[str] = ""
    #: BibTeX of the protocol's source; ``reference``: a short citation
    citation: ClassVar[str] = ""
    reference: ClassVar[str] = ""

    def required_files(self, values: dict[str, Any]) -> tuple[str, ...]:
        """The data-root files this task will read with its option ``values`` (:func:`option_values`; default:
        the declared ``data_files`` that are not in a package folder)."""
        return tuple(f if isinstance(f, str) else f.path for f in self.data_files
                     if isinstance(f, str) or f.package_dir is None)

    @classmethod
    def metric(cls, name: str) -> MetricSpec:
        """The spec of metric ``name``; a metric the task does not declare gets the default spec (unit
        ``value``, four significant digits, never tested)."""
        return next((m for m in cls.metrics if m.name == name), None) or MetricSpec(name)

    @classmethod
    def recorded_metadata(cls) -> dict[str, Any]:
        """What a run manifest records of the task, so that its runs compare and report without it."""
        return {"version": cls.version, "group": cls.group, "order": cls.order, "main_score": cls.main_score,
                "item_keys": list(cls.item_keys), "metrics": [m.plain() for m in cls.metrics],
                "protocol_switches": protocol_switches(cls)}

    @abstractmethod
    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        """Run the protocol and return the result."""


def protocol_switches(task: type[Task] | Task) -> list[str]:
    """The keys of ``task``'s recorded protocol that show options changing its scores."""
    return [o.protocol_key for o in task.options if o.protocol_key]


def parse_task_arguments(values: list[str],
                         extra: list[str] | None = None) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """Task names and per-task options from ``--task`` values (``NAME`` or ``TASK:KEY=VALUE``, which also selects
    the task) and ``--task-option`` values (``TASK:KEY=VALUE`` only). A group's option goes to each member that
    has it. Values are parsed and checked against the task's :class:`~benchbox.task_contract.protocol.TaskOption` now: a bad one
    is a one-line error before anything is loaded."""
    names: list[str] = []
    options: dict[str, dict[str, Any]] = {}
    for value, only_option in [(v, False) for v in values] + [(v, True) for v in extra or []]:
        head, equals, text = value.partition("=")
        task, colon, key = head.rpartition(":")  # the task may be qualified: PACKAGE:NAME:KEY=VALUE
        if not equals:
            if only_option:
                raise BenchboxError(f"--task-option takes TASK:KEY=VALUE, got {value!r}")
            names.append(value)
            continue
        if not (task and colon and key):
            raise BenchboxError(f"task option {value!r}: write TASK:KEY=VALUE (e.g. sts12:text=raw)")
        if task not in names:
            names.append(task)
        members = resolve_tasks([task])
        takers = [t for t in members if any(o.name == key for o in t.options)]
        if not takers:
            declared = sorted({o.name for t in members for o in t.options})
            raise BenchboxError(f"task {task} has no option {key!r}; its options: {', '.join(declared) or '(none)'} "
                                f"(`benchbox describe {members[0].name}`)")
        for member in takers:
            option = next(o for o in member.options if o.name == key)
            options.setdefault(member.name, {})[key] = option.parse(member.name, text)
    return names, options


def locate_file(data: DataRoot, data_file: DataFile | str) -> Path:
    """The file of a declared data file: in its package folder, else the data root (embedded copy included);
    a declared sha256 that does not match is an error naming the file."""
    if isinstance(data_file, str):
        return data.path(data_file)
    if data_file.package_dir is not None:
        path = Path(data_file.package_dir) / data_file.path
        if not path.is_file():
            raise BenchboxError(f"missing task data {path}: reinstall the package that provides it")
    else:
        path = data.path(data_file.path)
    if data_file.sha256 and data.checksum(path) != data_file.sha256:
        raise BenchboxError(f"{path} has sha256 {data.checksum(path)[:12]}…, not the {data_file.sha256[:12]}… its "
                            "task declares: restore the file")
    return path


def require_task_data(data: DataRoot, tasks: list[Task], values: dict[str, dict[str, Any]], *,
                      allow_data_mismatch: bool | None = None) -> dict[str, dict[str, str]]:
    """Fail, before any work, where a task's data is missing or is not the data its numbers are published on: the
    data-root files each task reads with its option ``values`` (:func:`benchbox.task_contract.options.resolve_options`), each
    with the sha256 ``data_manifest.json`` publishes for it (:func:`benchbox.data.root.published_sha256`; a
    truncated SICK test file scored its 99 pairs), and its declared data files (:func:`locate_file`: package
    folder, checksum). ``run_tasks`` runs it, ``benchbox study`` before its first cell, ``train`` for its
    ``--eval-semantic`` tasks. A file whose digest differs is one line naming it, the published and the found
    digest; with ``allow_data_mismatch`` (None: ``$BENCHBOX_ALLOW_DATA_MISMATCH`` is ``1``) it is returned instead
    (label → ``{"expected", "found"}``, for the run manifest). The digests are those the tasks record (:meth:`DataRoot.checksum`), computed once per data root."""
    if allow_data_mismatch is None:
        allow_data_mismatch = os.environ.get(ALLOW_MISMATCH_ENV) == "1"
    published = published_sha256()
    mismatches: dict[str, dict[str, str]] = {}
    for task in tasks:
        files = task.required_files(values[task.name])
        data.require(files)
        for relpath in files:
            path = data.path(relpath)
            expected, found = published.get(relpath), data.checksum(path)
            if expected is None or found == expected:
                continue
            if not allow_data_mismatch:
                raise BenchboxError(f"{path} has sha256 {found}, not the {expected} published for {relpath} (task "
                                    f"{task.name}): restore the file (`benchbox data status`), or evaluate this "
                                    "copy with --allow-data-mismatch (recorded in the run)")
            mismatches[data.label(path)] = {"expected": expected, "found": found}
        for data_file in task.data_files:
            if isinstance(data_file, DataFile):
                locate_file(data, data_file)
    return mismatches


def task_class(name: str) -> type[Task] | None:
    """The installed task called ``name`` (its class), or None (not installed, or a group)."""
    from benchbox.registry import TASKS

    if name not in TASKS:
        return None
    try:
        target = TASKS.get(name)
    except BenchboxError:
        return None
    if isinstance(target, type) and issubclass(target, Task):
        return target
    return type(target) if isinstance(target, Task) else None


@dataclass(frozen=True)
class TaskGroup:
    """A named list of task names (e.g. ``sts`` = STS12–16), expanded by :func:`resolve_tasks`."""

    name: str
    members: tuple[str, ...]
    description: str = ""


def paired_key_failures(task: type[Task] | Task) -> list[str]:
    """One line when a metric's kind of paired test needs a column among ``item_keys`` that the task lacks
    (:attr:`benchbox.task_contract.paired_tests.PairedKind.keys`): two runs' rows are joined on the item keys and
    every other column is suffixed, so the test could not select its rows."""
    from benchbox.task_contract.paired_tests import KINDS

    missing: dict[str, list[str]] = {}  # key → the metrics whose kinds need it
    kinds: dict[str, None] = {}
    for spec in task.metrics:
        kind = KINDS.get(getattr(spec, "kind", None))
        for key in kind.missing_keys(task.item_keys) if kind is not None else []:
            missing.setdefault(key, []).append(spec.name)
            kinds[kind.name] = None
    if not missing:
        return []
    metrics = list(dict.fromkeys(m for names in missing.values() for m in names))
    return [f"item_keys ({', '.join(task.item_keys) or 'none'}) lack {' and '.join(missing)}, which the "
            f"{', '.join(repr(k) for k in kinds)} test{'s' if len(kinds) > 1 else ''} of metric"
            f"{'s' if len(metrics) > 1 else ''} {', '.join(metrics)} select rows by: add "
            f"{' and '.join(missing)} to item_keys (compare pairs two runs' rows on them)"]


def resolve_tasks(names: list[str]) -> list[Task]:
    """Instantiate the tasks named (groups expanded, duplicates dropped, order kept); a task whose item keys lack
    a column its kinds of paired test need (:func:`paired_key_failures`) is refused, before any run."""
    from benchbox.registry import TASKS

    seen: dict[str, Task] = {}

    def add(name: str) -> None:
        target = TASKS.get(name)
        if isinstance(target, TaskGroup):
            for member in target.members:
                add(member)
        elif name not in seen:
            failures = paired_key_failures(target) if isinstance(target, type) and issubclass(target, Task) else []
            if failures:
                raise BenchboxError(f"task {name}: {failures[0]}")
            seen[name] = target()

    for name in names:
        add(name)
    return list(seen.values())
