"""``benchbox list`` and ``benchbox eval``."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table
from rich.text import Text

from benchbox.storage.cache import EmbeddingCache
from benchbox.device import check_device_name
from benchbox.console import log, out, progress_bar, results_to_stderr, set_quiet
from benchbox.errors import BenchboxError
from benchbox.evaluation import Evaluation, load_encoder, run_tasks
from benchbox.labels import model_folder_label
from benchbox.storage.jsonio import SCHEMA_VERSION, to_stdout, write_json
from benchbox.storage.outdir import check_output_file, check_writable
from benchbox.commands.options import (ALLOW_DATA_MISMATCH, BATCH_SIZE, BOOTSTRAP, CACHE, CACHE_DIR, DATA_DIR, DEVICE,
                                       ENCODER_OPTIONS, NAME, QUIET, RUNS_DIR, SEED, THREADS, json_option)
from benchbox.options import DEFAULT_RESAMPLES, DEFAULT_SEED
from benchbox.registry import ENCODERS, TASKS
from benchbox.tables import print_table, results_table
from benchbox.commands.task_flags import TaskFlagsCommand, given_flags
from benchbox.task_contract.protocol import TaskGroup, parse_task_arguments, resolve_tasks
from benchbox.task_contract.options import TaskOptions, resolve_options
from benchbox.threads import set_threads


class Kind(str, Enum):
    encoders = "encoders"
    tasks = "tasks"


def list_plugins(
    kind: Annotated[Kind, typer.Argument(help="encoders or tasks")],
    json_path: json_option("Write the list (name, kind, description or members, error) as JSON:") = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Tasks: every task's metrics, options, data files, licence and citation (as `benchbox describe`).")] = False,
) -> None:
    """List the registered encoders or tasks with the package that provides each (built-in and third-party
    plugins). A name provided twice shows every provider; the entries a plain name does not select are shown by
    their qualified name PACKAGE:NAME. A plugin that fails to load is shown with its error."""
    registry = ENCODERS if kind is Kind.encoders else TASKS
    if verbose and kind is Kind.tasks:
        from benchbox.commands.describe import describe_lines

        for name in registry.names():
            try:
                lines = describe_lines(name)
            except BenchboxError as exc:
                lines = [f"{name}: {exc}"]
            out.print("\n".join(lines) + "\n", highlight=False, markup=False, soft_wrap=True)
        return
    if json_path is not None:
        check_output_file(json_path, "--json")
        write_json(json_path, {"schema_version": SCHEMA_VERSION, "kind": kind.value,
                               "plugins": [plugin_entry(registry, name) for name in registry.names()]})
        return
    table = Table(title=f"benchbox {kind.value}")
    table.add_column("name", no_wrap=True)
    table.add_column("package", no_wrap=True)
    table.add_column("description")
    for entry in registry.entries():
        plain = registry.entries_named(entry.name)
        selected = plain[0] is entry and (entry.builtin or len(plain) == 1)
        shown = entry.name if selected else entry.qualified
        try:
            obj = registry.load(entry)
        except BenchboxError as exc:
            table.add_row(shown, entry.source, Text(str(exc), style="red"))
            continue
        if isinstance(obj, TaskGroup):
            description = f"group: {', '.join(obj.members)}"
        else:
            description = str(getattr(obj, "description", "") or "")
        if not selected:
            description = (f"[{'shadowed by the built-in' if plain[0].builtin else 'ambiguous'} {entry.name!r}: "
                           f"use {entry.qualified}] {description}").strip()
        table.add_row(shown, entry.source, description)
    out.print(table)


def plugin_entry(registry, name: str) -> dict[str, object]:
    """One registered plugin as JSON: its name, ``kind`` (encoder, task or group), description (a group: its
    members) and, when it cannot be loaded, the error (then ``kind`` is null)."""
    try:
        obj = registry.get(name)
    except BenchboxError as exc:
        return {"name": name, "kind": None, "description": None, "error": str(exc)}
    if isinstance(obj, TaskGroup):
        return {"name": name, "kind": "group", "members": list(obj.members), "error": None}
    return {"name": name, "kind": "encoder" if registry is ENCODERS else "task",
            "description": getattr(obj, "description", ""), "error": None}


def parse_encoder_options(pairs: list[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise BenchboxError(f"--encoder-opt takes KEY=VALUE, got {pair!r}")
        options[key.replace("-", "_")] = value
    return options


def eval_command(
    ctx: typer.Context,
    model: Annotated[str, typer.Argument(help="Encoder name (`benchbox list encoders`) or a trained-model run folder.")],
    task: Annotated[list[str], typer.Option("--task", "-t", metavar="TASK", help="Task or group name, or TASK:KEY=VALUE to set one of its options (`benchbox describe TASK`); repeatable.")],
    name: NAME = None,
    data_dir: DATA_DIR = None,
    runs_dir: RUNS_DIR = Path("runs"),
    save: Annotated[bool, typer.Option(help="Write the run to --runs-dir.")] = True,
    cache_dir: CACHE_DIR = None,
    cache: CACHE = True,
    encoder_opt: ENCODER_OPTIONS = None,
    seed: SEED = DEFAULT_SEED,
    bootstrap: BOOTSTRAP = DEFAULT_RESAMPLES,
    device: DEVICE = "auto",
    task_option: Annotated[Optional[list[str]], typer.Option("--task-option", metavar="TASK:KEY=VALUE", help="TASK:KEY=VALUE: one of a task's own options (as -t TASK:KEY=VALUE); repeatable.")] = None,
    batch_size: BATCH_SIZE = 128,
    json_path: json_option("Write the metric records (the rows of metrics.csv) as JSON instead of the table:") = None,
    wide: Annotated[bool, typer.Option("--wide", help="Table with every column (interval bounds, n), even wider than the terminal.")] = False,
    threads: THREADS = None,
    allow_data_mismatch: ALLOW_DATA_MISMATCH = False,
    quiet: QUIET = False,
) -> None:
    """Evaluate an encoder on tasks: prints the metrics and writes a run (manifest, metrics, per-item scores).
    Each task option with a flag is an option here too (--text, --kfold, --features, ...: `benchbox describe
    TASK`); it sets that option of every task evaluated that has it."""
    set_quiet(quiet)
    set_threads(threads)
    results_to_stderr(to_stdout(json_path))
    check_output_file(json_path, "--json")
    task, task_options = parse_task_arguments(task, task_option)
    options = TaskOptions(seed=seed, bootstrap=bootstrap, device=check_device_name(device),
                          task_options=task_options, flags=given_flags(ctx))
    resolve_options(resolve_tasks(task), options)  # bad option values fail before anything is loaded
    if save:  # a read-only --runs-dir fails now, not after the evaluation
        check_writable(runs_dir, "--runs-dir")
    encoder = load_encoder(model, **parse_encoder_options(encoder_opt or []))
    label = name or model_folder_label(model)
    with progress_bar(f"encoding with {encoder.name}") as update:
        evaluation = run_tasks(
            encoder, task, data_dir=data_dir, options=options,
            cache=EmbeddingCache(cache_dir) if cache else None,
            batch_size=batch_size, log=log, progress=update, label=label, allow_data_mismatch=allow_data_mismatch,
        )
    if evaluation.cache_stats:
        log(f"embedding cache: {evaluation.cache_stats['hits']} hits, {evaluation.cache_stats['misses']} encoded")
    if json_path is not None:
        write_json(json_path, records_json(label or encoder.name, evaluation))
        if not to_stdout(json_path):
            log(f"metric records written to {json_path}")
    else:
        print_table(out, results_table(label or encoder.name, evaluation, wide), wide)
    if save:  # after printing: a failed save loses nothing
        try:
            path = evaluation.save(runs_dir)
        except OSError as exc:
            raise BenchboxError(f"the results above could not be saved under {runs_dir}: {exc}") from None
        log(f"run written to {path}")


def records_json(name: str, evaluation: Evaluation) -> dict[str, object]:
    """``eval --json``: the metric records (the rows of the run's metrics.csv) with the model they belong to, the
    shared options and each task's option values, each record with the unit its task declares (docs/schema.md,
    "Records JSON")."""
    return {"schema_version": SCHEMA_VERSION, "label": name, "encoder": evaluation.encoder["name"],
            "fingerprint": evaluation.encoder["fingerprint"], "options": evaluation.options.recorded(),
            "task_options": evaluation.values,
            "records": [{**r.to_dict(), "unit": evaluation.tasks[r.task].metric(r.metric).unit}
                        for r in evaluation.records]}


def register(app: typer.Typer) -> None:
    app.command("list")(list_plugins)
    app.command("eval", cls=TaskFlagsCommand)(eval_command)
