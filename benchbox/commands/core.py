"""``benchbox list`` and ``benchbox eval``."""

from __future__ import annotations

from dataclasses import fields, replace
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from benchbox.storage.cache import EmbeddingCache
from benchbox.data.root import existing_data_dir
from benchbox.device import check_device_name
from benchbox.console import log, out, progress_bar, results_to_stderr, set_quiet
from benchbox.errors import BenchboxError
from benchbox.evaluation import Evaluation, load_encoder, run_tasks
from benchbox.labels import label_option, model_folder_label
from benchbox.storage.jsonio import SCHEMA_VERSION, json_option, to_stdout, write_json
from benchbox.storage.outdir import check_output_file, check_writable
from benchbox.options import AT_LEAST_0, AT_LEAST_1, THREADS
from benchbox.registry import ENCODERS, TASKS
from benchbox.tables import print_table, results_table
from benchbox.task import TaskGroup, TaskOptions, resolve_tasks
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


def parse_task_arguments(values: list[str], extra: list[str] | None = None) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """Task names and per-task options from ``--task`` values (``NAME`` or ``TASK:KEY=VALUE``, which also selects
    the task) and ``--task-option`` values (``TASK:KEY=VALUE`` only). A group's option goes to each member that
    has it. Values are parsed and checked against the task's :class:`~benchbox.task.TaskOption` now: a bad one
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



#: the fields of TaskOptions that every task may read without declaring them (the others are flags that the
#: tasks declaring a TaskOption with that ``legacy`` field read)
READ_BY_ALL = ("seed", "bootstrap", "device", "task_options")


def used_options(tasks: list[Any], options: TaskOptions) -> TaskOptions:
    """``options`` as the tasks use them. A flag (``--text``, ``--features``, ``--retrieval-ci`` ...) given a value
    other than its default is refused in one line when no task evaluated reads it; when every task that reads it
    has its own ``-t TASK:KEY=VALUE`` instead, it is reset to its default with a warning, so that the run
    records the values used (``--text raw -t sts12:text=senteval`` once recorded ``text = raw``)."""
    defaults, reset = TaskOptions(), {}
    for field in fields(TaskOptions):
        value = getattr(options, field.name)
        if field.name in READ_BY_ALL or value == getattr(defaults, field.name):
            continue
        flag = f"--{field.name.replace('_', '-')}"
        readers = {t.name: o.name for t in tasks for o in t.options if o.legacy == field.name}
        if not readers:
            raise BenchboxError(f"{flag} {value}: none of the tasks evaluated ({', '.join(t.name for t in tasks)}) "
                                f"reads it; drop it (`benchbox describe TASK` lists what each task reads)")
        if all(key in options.task_options.get(name, {}) for name, key in readers.items()):
            log(f"warning: {flag} {value} is overridden by -t TASK:KEY=VALUE for every task that reads it "
                f"({', '.join(readers)}): ignored, and the run records the values used")
            reset[field.name] = getattr(defaults, field.name)
    return replace(options, **reset) if reset else options


def images_option(tasks: list[Any], task_options: dict[str, dict[str, Any]], folder: Path) -> None:
    """``--images DIR``: the ``images`` option of every task that has one and was not given its own
    (``-t TASK:images=DIR``); a one-line error when no task evaluated reads image files."""
    takers = [t for t in tasks if any(o.name == "images" for o in t.options)]
    if not takers:
        raise BenchboxError(f"--images {folder}: none of the tasks evaluated ({', '.join(t.name for t in tasks)}) "
                            "reads image files; drop it (retrieval and structure tasks do)")
    for task in takers:
        task_options.setdefault(task.name, {}).setdefault("images", str(folder))


def eval_command(
    model: Annotated[str, typer.Argument(help="Encoder name (`benchbox list encoders`) or a trained-model run folder.")],
    task: Annotated[list[str], typer.Option("--task", "-t", help="Task or group name, or TASK:KEY=VALUE to set one of its options (`benchbox describe TASK`); repeatable.")],
    name: Annotated[Optional[str], typer.Option("--name", help="Label of the model in compare tables, JSON and reports (stored in the run manifest; default: the trained model's label, else the encoder name).", callback=label_option)] = None,
    data_dir: Annotated[Optional[Path], typer.Option(help="Data root (default: $BENCHBOX_DATA, else the user data dir; STS-B and SICK are embedded).", callback=existing_data_dir)] = None,
    runs_dir: Annotated[Path, typer.Option(help="Where the run folder is written.")] = Path("runs"),
    save: Annotated[bool, typer.Option(help="Write the run to --runs-dir.")] = True,
    cache_dir: Annotated[Optional[Path], typer.Option(help="Embedding cache (default: $BENCHBOX_CACHE, else the user cache dir).")] = None,
    cache: Annotated[bool, typer.Option(help="Use the embedding cache.")] = True,
    encoder_opt: Annotated[Optional[list[str]], typer.Option("--encoder-opt", "-e", help="Encoder option KEY=VALUE (e.g. vectors=PATH); repeatable.")] = None,
    text: Annotated[str, typer.Option(help="STS text: senteval (tokenised, lower-cased) or raw (original files).")] = "senteval",
    fix_stsb_labels: Annotated[bool, typer.Option(help="Rescale STS-B 0-5 to 1-5 before SentEval's relatedness encoding (SentEval #83).")] = False,
    features: Annotated[Optional[Path], typer.Option(help="Image features file for retrieval tasks (and rho_vis of the structure tasks).")] = None,
    images: Annotated[Optional[Path], typer.Option(help="Image folder for retrieval and structure tasks, for encoders that embed image files (clip); default: the dataset's folder under the data root.")] = None,
    retrieval_ci: Annotated[str, typer.Option(help="Retrieval recall intervals: wilson (share of queries) or bootstrap (resampling images).")] = "wilson",
    retrieval_medr: Annotated[str, typer.Option(help="Retrieval median rank: vsepp (floor of the median, as VSE++) or median.")] = "vsepp",
    retrieval_ties: Annotated[str, typer.Option(help="Retrieval ties with the target: expected (random tie breaking, McSherry & Najork 2008; equal to VSE++ when nothing ties), optimistic or pessimistic.")] = "expected",
    seed: Annotated[int, typer.Option(help="Seed of every random choice (SentEval: 1111).", callback=AT_LEAST_0)] = 1111,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples for intervals with no closed form (0: none, those intervals are left empty).", callback=AT_LEAST_0)] = 1000,
    device: Annotated[str, typer.Option(help="auto, cpu or cuda (for supervised probes).")] = "auto",
    task_option: Annotated[Optional[list[str]], typer.Option("--task-option", help="TASK:KEY=VALUE: one of a task's own options (as -t TASK:KEY=VALUE); repeatable.")] = None,
    batch_size: Annotated[int, typer.Option(help="Encoder batch size.", callback=AT_LEAST_1)] = 128,
    json_path: json_option("Write the metric records (the rows of metrics.csv) as JSON instead of the table:") = None,
    wide: Annotated[bool, typer.Option("--wide", help="Table with every column (interval bounds, n), even wider than the terminal.")] = False,
    threads: THREADS = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or log output.")] = False,
) -> None:
    """Evaluate an encoder on tasks: prints the metrics and writes a run (manifest, metrics, per-item scores)."""
    set_quiet(quiet)
    set_threads(threads)
    results_to_stderr(to_stdout(json_path))
    check_output_file(json_path, "--json")
    task, task_options = parse_task_arguments(task, task_option)
    if images is not None:
        images_option(resolve_tasks(task), task_options, images)
    options = TaskOptions(text=text, fix_stsb_labels=fix_stsb_labels, seed=seed, bootstrap=bootstrap,
                          device=check_device_name(device), features=str(features) if features else None,
                          retrieval_ci=retrieval_ci, retrieval_medr=retrieval_medr, retrieval_ties=retrieval_ties,
                          task_options=task_options)
    if save:  # a read-only --runs-dir fails now, not after the evaluation
        check_writable(runs_dir, "--runs-dir")
    options = used_options(resolve_tasks(task), options)
    encoder = load_encoder(model, **parse_encoder_options(encoder_opt or []))
    label = name or model_folder_label(model)
    with progress_bar(f"encoding with {encoder.name}") as update:
        evaluation = run_tasks(
            encoder, task, data_dir=data_dir, options=options,
            cache=EmbeddingCache(cache_dir) if cache else None,
            batch_size=batch_size, log=log, progress=update, label=label,
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
    """``eval --json``: the metric records (the rows of the run's metrics.csv) with the model they belong to
    and the protocol options, each record with the unit its task declares (docs/schema.md, "Records JSON")."""
    return {"schema_version": SCHEMA_VERSION, "label": name, "encoder": evaluation.encoder["name"],
            "fingerprint": evaluation.encoder["fingerprint"], "options": evaluation.options,
            "records": [{**r.to_dict(), "unit": evaluation.tasks[r.task].metric(r.metric).unit}
                        for r in evaluation.records]}


def register(app: typer.Typer) -> None:
    app.command("list")(list_plugins)
    app.command("eval")(eval_command)
