"""Does a task keep benchbox's task contract? The checks :func:`benchbox.testing.check_task` runs.

The contract (docs/plugins.md, section 3; :mod:`benchbox.task_contract.protocol`) and what breaking each rule costs:

- **names valid**: the task's name is one path component (:func:`benchbox.names.check_path_name`: it names
  ``items/NAME.csv`` in every run), and its metrics, options and item keys have distinct names;
- **metadata complete**: a ``description``, a ``reference`` or ``citation``, a ``version``, an ``item_kind``, the
  ``item_keys`` that pair two runs' rows, a ``group`` and ``order`` of its own (else reports file it under
  ``other``), at least one metric, a ``main_score`` that is one of them, options that are
  :class:`~benchbox.task_contract.options.TaskOption` with valid defaults, package data files with a sha256, and metadata a
  run manifest can record (plain JSON);
- **what it returns** (the task is evaluated, with :class:`~benchbox.testing.hashing.HashingEncoder` unless an
  encoder is given): it evaluates; its per-item rows hold the columns each metric's kind of paired test declares
  (:mod:`benchbox.task_contract.paired_tests`) and pass :func:`benchbox.task_contract.item_checks.check_items`; a task with tested metrics
  returns per-item rows at all; every metric it reports is declared (an undeclared one is never tested), the main
  score among them; its protocol records each option's ``protocol_key``; the data it read is checksummed;
- **what compare and the leaderboard meet**: its item keys hold the columns its kinds select rows by
  (:attr:`~benchbox.task_contract.paired_tests.PairedKind.keys`, checked before it runs); the result compared
  with itself runs every tested metric's paired test, and its main score is resampled as the leaderboard draws it.

Each failure is one line saying what is wrong and how to fix it.
"""

from __future__ import annotations

import json
from typing import Any

from benchbox.errors import BenchboxError
from benchbox.names import check_path_name
from benchbox.task_contract.paired_tests import KINDS
from benchbox.task_contract.protocol import DataFile, MetricSpec, Task, TaskGroup, paired_key_failures, resolve_tasks
from benchbox.task_contract.options import TaskOption, TaskOptions


def task_failures(task: Any, encoder: Any = None, *, data_dir: Any = None, bootstrap: int = 200) -> list[str]:
    """Every rule of the module docstring that ``task`` (a registered name, a :class:`Task` class or object)
    breaks, one line each; empty when it conforms. A group's name checks each member (lines prefixed with it).
    ``encoder``: what to evaluate it with (anything ``load_encoder`` takes); ``bootstrap``: the resamples of its
    intervals (fewer than a run's 1000, to check quickly)."""
    if isinstance(task, str):
        from benchbox.registry import TASKS

        target = TASKS.get(task)
        if isinstance(target, TaskGroup):
            return [f"{member.name}: {line}" for member in resolve_tasks([task])
                    for line in task_failures(member, encoder, data_dir=data_dir, bootstrap=bootstrap)]
        task = resolve_tasks([task])[0]
    elif isinstance(task, type):
        task = task()
    if not isinstance(task, Task):
        return [f"{task!r} is not a benchbox Task: subclass benchbox.task_contract.protocol.Task or one of benchbox.tasks.bases"]
    failures = metadata_failures(task)
    if failures:  # evaluating it would fail on the same causes, less clearly
        return failures
    return result_failures(task, encoder, data_dir, bootstrap)


def metadata_failures(task: Task) -> list[str]:
    """The rules on the task's class attributes (names valid, metadata complete)."""
    failures = []
    try:
        check_path_name(getattr(task, "name", None), "name")
    except BenchboxError as exc:
        failures.append(str(exc))
    for attribute, what in (("description", "one line for `benchbox list tasks`"), ("item_kind",
                            "what one per-item row is, e.g. 'sentence pair: gold, cosine score'"),
                            ("version", "bumped when its numbers change, e.g. '1'")):
        if not isinstance(getattr(task, attribute, None), str) or not getattr(task, attribute):
            failures.append(f"{attribute} is empty: declare it ({what})")
    if not (task.reference or task.citation):
        failures.append("neither reference nor citation is declared: name the protocol's source (reference: a short "
                        "citation; citation: BibTeX)")
    inherited = [a for a in ("group", "order") if all(a not in cls.__dict__ for cls in _below_task(task))]
    if inherited:
        failures.append(f"{' and '.join(inherited)} {'is' if len(inherited) == 1 else 'are'} Task's default "
                        f"({', '.join(repr(getattr(Task, a)) for a in inherited)}): declare the report section (group) "
                        "and the position in it (order), or start from a base of benchbox.tasks.bases")
    failures += _metric_failures(task)
    failures += _key_and_option_failures(task)
    for data_file in task.data_files:
        if isinstance(data_file, DataFile) and data_file.package_dir is not None and not data_file.sha256:
            failures.append(f"data file {data_file.path} has no sha256: declare it (DataFile(..., sha256=...)) so "
                            "that a changed file is refused, not scored")
    try:
        json.dumps(task.recorded_metadata(), allow_nan=False)
    except (TypeError, ValueError, AttributeError) as exc:
        failures.append(f"its metadata cannot be recorded in a run manifest: {exc}")
    return failures


def _below_task(task: Task) -> list[type]:
    """The classes of ``task``'s ancestry below :class:`Task` itself."""
    return [cls for cls in type(task).__mro__ if issubclass(cls, Task) and cls is not Task]


def _metric_failures(task: Task) -> list[str]:
    metrics = task.metrics
    if not metrics:
        return ["metrics is empty: declare one MetricSpec per metric the task reports (its kind of paired test, "
                "direction, unit)"]
    failures = [f"metrics holds {m!r}, not a MetricSpec: declare MetricSpec(name, kind, ...)"
                for m in metrics if not isinstance(m, MetricSpec)]
    names = [m.name for m in metrics if isinstance(m, MetricSpec)]
    failures += [f"metric {name} is declared twice: one MetricSpec per metric" for name in
                 sorted({n for n in names if names.count(n) > 1})]
    main = getattr(task, "main_score", None)
    if main is None:
        failures.append(f"main_score is not declared: name the headline metric, one of {', '.join(names)}")
    elif main not in names:
        failures.append(f"main_score {main!r} is not among its metrics ({', '.join(names)}): name one of them, or "
                        f"declare MetricSpec({main!r}, ...)")
    return failures


def _key_and_option_failures(task: Task) -> list[str]:
    failures = []
    keys = task.item_keys
    if not keys or not all(isinstance(k, str) and k for k in keys) or len(set(keys)) != len(keys):
        failures.append(f"item_keys is {keys!r}: declare the distinct columns that pair two runs' per-item rows, "
                        "e.g. ('subset', 'item')")
    failures += paired_key_failures(task)
    names = []
    for option in task.options:
        if not isinstance(option, TaskOption):
            failures.append(f"options holds {option!r}, not a TaskOption: declare TaskOption(name, type, default, help)")
            continue
        names.append(option.name)
        try:
            option.check(task.name, option.default)
        except BenchboxError as exc:
            failures.append(f"the default of option {option.name} is refused by its own declaration: {exc}")
    failures += [f"option {name} is declared twice: one TaskOption per option" for name in
                 sorted({n for n in names if names.count(n) > 1})]
    return failures


def result_failures(task: Task, encoder: Any, data_dir: Any, bootstrap: int) -> list[str]:
    """The rules on what the task returns when evaluated."""
    from benchbox.evaluation import run_tasks
    from benchbox.testing.hashing import HashingEncoder

    try:
        result = run_tasks(encoder or HashingEncoder(), [task], data_dir=data_dir, cache=False,
                           options=TaskOptions(bootstrap=bootstrap)).results[0]
    except BenchboxError as exc:
        return [f"evaluating it failed: {exc}"]
    failures = []
    declared = {m.name: m for m in task.metrics}
    reported = list(dict.fromkeys(r.metric for r in result.metrics))
    failures += [f"it reports metric {name}, which metrics does not declare, so compare never tests it: declare "
                 f"MetricSpec({name!r}, kind=...)" for name in reported if name not in declared]
    if task.main_score not in reported:
        failures.append(f"its main score {task.main_score} is not among the metrics it reported "
                        f"({', '.join(reported) or 'none'}): report it, or name a reported metric as main_score")
    failures += [f"it returned records of task {name!r}: every MetricRecord's task is its own name, {task.name!r}"
                 for name in sorted({r.task for r in result.metrics} - {task.name})]
    tested = sorted({m.kind for m in task.metrics if m.kind is not None})
    if tested and result.items.empty:
        columns = sorted({c for kind in tested for c in (*task.item_keys, *KINDS[kind].columns)})
        failures.append(f"it returned no per-item rows, so compare cannot test its {', '.join(tested)} metrics: "
                        f"return one row per item with the columns {', '.join(columns)}")
    failures += [f"its protocol does not record option {o.name} under its protocol_key {o.protocol_key!r}: add "
                 f"it to TaskResult.protocol, or compare cannot tell runs with different values apart"
                 for o in task.options if o.protocol_key and o.protocol_key not in result.protocol]
    if task.data_files and not result.data_checksums:
        failures.append("it declares data files but its result records no data_checksums: return "
                        "data_checksums=ctx.data.checksums([path, ...]) of the files it read")
    try:
        json.dumps(result.protocol, allow_nan=False)
    except (TypeError, ValueError) as exc:
        failures.append(f"its protocol cannot be recorded in a run manifest: {exc}")
    if not failures and tested:
        failures += self_comparison_failures(task, result, bootstrap)
    return failures


def self_comparison_failures(task: Task, result: Any, bootstrap: int) -> list[str]:
    """What ``compare`` and the leaderboard meet: the result compared with itself (every tested metric's paired
    test on the rows joined on the item keys) and its main score resampled as the leaderboard draws it."""
    import numpy as np
    import pandas as pd

    from benchbox.comparison.compare import compare_pair
    from benchbox.comparison.leaderboard import headline
    from benchbox.comparison.resampled_scores import resampled_score, strata_and_clusters
    from benchbox.comparison.settings import CompareSettings
    from benchbox.comparison.sources import Source
    from benchbox.stats import ranking
    from benchbox.task_contract.metadata import TaskMetadata

    metrics = pd.DataFrame([record.to_dict() for record in result.metrics])
    known = {task.name: TaskMetadata(task.name, {m.name: m for m in task.metrics}, tuple(task.item_keys),
                                     main_score=task.main_score)}
    a, b = (Source(label, metrics, items=lambda name: result.items) for label in ("a", "b"))
    try:
        compare_pair(a, b, [task.name], known, CompareSettings(n_boot=max(bootstrap, 2)).pair())
    except Exception as exc:  # the kit reports what compare would meet, whatever it raises
        return [f"comparing a run with itself failed (benchbox compare would): {type(exc).__name__}: {exc}"]
    spec = task.metric(task.main_score)
    found = headline(metrics, task.name, task.main_score)
    if spec.kind is None or found is None:
        return []
    try:
        strata, clusters = strata_and_clusters(task.name, spec.kind, result.items)
        weights = ranking.cluster_weights(strata, clusters, max(bootstrap, 2), np.random.default_rng(0))
        draws = resampled_score(spec, found[0], result.items, weights)
    except Exception as exc:
        return [f"resampling its main score {task.main_score} as the leaderboard does failed: "
                f"{type(exc).__name__}: {exc}"]
    if draws is None:
        return [f"its main score {task.main_score} has no resampled statistic under kind {spec.kind!r}, so the "
                "leaderboard gives it no interval, rank or group: implement the kind's resampled_subset, or name "
                "another main_score"]
    if np.shape(draws) != (weights.shape[0],):
        return [f"kind {spec.kind!r} resampled main score {task.main_score} into shape {np.shape(draws)}: "
                f"resampled_subset returns one score per row of the weights ({weights.shape[0]})"]
    return []
