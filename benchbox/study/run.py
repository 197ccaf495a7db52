"""``benchbox study STUDY.toml``: train what is missing, evaluate, compare and report, in parallel, safe to stop
and resume.

A study file declares the tasks, the encoders and the comparison (the reference of every key: docs/study.md,
generated from :mod:`benchbox.study.schema`)::

    [study]
    tasks = ["semantic"]          # task names or groups
    baseline = "glove-bow"        # optional: compare every other model with it (else every pair)
    jobs = 2                      # optional: cells at once (default: CPU count)

    [[encoder]]
    name = "glove-bow"            # a registered encoder, evaluated as it is

    [[encoder]]
    name = "char-gru"             # a trained encoder: one cell per seed, trained with it (`benchbox train <name>`)
    seeds = [1, 2, 3]
    train = { dataset = "flickr8k", visual = "cluster", hidden = 64, epochs = 1, cycle-epochs = 1 }

    [[encoder]]
    run = "runs/some-eval-run"    # an existing evaluation run (relative to the study file)

The whole file is checked before anything starts (:mod:`benchbox.study.schema`); ``seeds`` reach the encoder
through its training (``--seed``) or its declared seed option (``-e OPTION=SEED``), never as copies of one run.

Every encoder × seed is a *cell*, run as ``benchbox`` subprocesses (train, then eval) in the cell's folder
``<out>/cells/<cell>/`` (its training from the JSON spec ``train.json`` written there, :mod:`benchbox.study.train`)
with its log in ``log.txt`` and its state in markers (:mod:`benchbox.study.cells`). A
cell is its identity (:mod:`benchbox.study.keys`): its folder is named after its key, so an edited study reuses
exactly the cells whose key is unchanged and runs the others, saying what changed (:mod:`benchbox.study.plan`).
A cell that finished writes ``done.json`` last (atomically) and is not redone while its key and its data are
unchanged; any other cell is wiped and restarted from the beginning when the study runs again. A failed cell is
reported with the tail of its log and does not stop the others; the comparison and the report use the cells
that finished, and the study exits non-zero if any failed. One study at a time holds the study folder's lock.
Ctrl-C or SIGTERM stops the study: queued cells are not started, running ones are stopped with their child
processes, and the command exits with 130 or 143; running it again redoes only the unfinished cells. Progress: a live table of the cells on a
terminal, else a plain line at the steady interval of :class:`benchbox.console.Heartbeat`
(:mod:`benchbox.study.progress`); ``benchbox study FILE --status`` shows the table from another shell.

Cells run on a local pool of ``jobs`` worker threads, each driving one subprocess, or, with ``ray_address``
(``benchbox study --ray ADDRESS``; the optional extra ``benchbox[ray]``), as Ray tasks (one CPU each, retried
:data:`RAY_RETRIES` times when their worker dies) on an existing Ray cluster, whose nodes must see the study
folder at the same path (a shared file system) and have benchbox installed. The outputs:
``<out>/comparison.json``, ``comparison.csv`` (+ ``.claims.csv``) and ``report.md``.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchbox.comparison.settings import CompareSettings
from benchbox.console import Heartbeat
from benchbox.errors import BenchboxError
from benchbox.include import INCLUDED
from benchbox.options import DEFAULT_SEED
from benchbox.storage.jsonio import write_json
from benchbox.storage.outdir import output_lock
from benchbox.storage.output_targets import STUDY, check_outside_results
from benchbox.storage.runs import MANIFEST
from benchbox.study.cells import (DONE, LOG, CellFailed, CellStopped, Processes, cell_folder, mark_failed, mark_stage,
                                  run_command, safe_name, wipe, STUDY_LOCK)
from benchbox.study.progress import Progress, live_table, running_seconds
from benchbox.study.keys import cell_key, cell_name
from benchbox.study.opens import build_encoders
from benchbox.study.plan import plan
from benchbox.comparison.comparator_file import read_comparators
from benchbox.study.schema import Scalar, beside, check_meaning, read_study_file, study_data_dir
from benchbox.study.train import TRAIN_SPEC, TrainSpec, train_spec
from benchbox.study.warmup import Warmup

#: times Ray runs a cell again when the worker running it dies (a lost node, a killed process)
RAY_RETRIES = 2
#: the longest wait between two looks at a stop request on the Ray path
RAY_POLL_SECONDS = 0.5


@dataclass(frozen=True)
class Cell:
    """One encoder × seed: its folder name, the train command (if any) and the encoder to evaluate."""

    name: str
    encoder: str
    seed: int | None = None
    train: dict[str, Scalar] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    run: str | None = None
    #: the model this cell is a seed of, when its [[encoder]] has several seeds
    group: str | None = None
    #: the encoder option that takes the seed (an encoder evaluated as it is); None: the seed goes to training
    seed_option: str | None = None
    #: the position of its ``[[encoder]]`` table in the study file (1 for the first)
    entry: int = 0
    #: the identity of the run it produces (:mod:`benchbox.study.keys`); its folder is named after it
    key: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Study:
    path: Path
    out: Path
    tasks: list[str]
    cells: list[Cell]
    baseline: str | None
    jobs: int
    data_dir: str | None
    #: the task flags of the [study] table (``text = "raw"``: ``benchbox eval --text raw`` in every cell)
    flags: dict[str, Scalar] = field(default_factory=dict)
    #: whether ``out`` is the default folder (neither ``--out`` nor ``[study] out``): it is kept out of git
    default_out: bool = False
    #: how the study compares its cells' runs (the comparison settings of the [study] table)
    settings: CompareSettings = field(default_factory=CompareSettings)
    #: published numbers of ``[study] comparators`` (:mod:`benchbox.comparison.comparator_file`), compared as unpaired rows
    comparators: dict[str, Any] = field(default_factory=dict)


def _option_text(value: Scalar) -> str:
    """A TOML value as ``-e KEY=VALUE`` text (booleans as ``true``/``false``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def load_study(path: str | os.PathLike, out: str | os.PathLike | None = None, *,
               check_train: Callable[[str, dict[str, Scalar], str | None], None] | None = None,
               build: bool = False, min_cells: int = 2) -> Study:
    """Read and check a study file (module docstring); nothing is created. ``check_train(encoder, options,
    data_dir)`` checks a ``train`` table and the data its training reads (the command line gives
    :func:`benchbox.study.train.check_train`); ``build``: also build every encoder evaluated as it is (``--check``,
    :func:`benchbox.study.opens.build_encoders`); ``min_cells``: the fewest cells the study may have (a
    comparison needs two; ``benchbox reproduce`` runs each of a paper's models as a study of its own)."""
    from benchbox.threads import cpu_count

    path = Path(path)
    spec, flags, settings = read_study_file(path)
    checked = check_meaning(path, spec, flags)
    if build:
        build_encoders(path, spec, checked.seed_options)
    root = study_data_dir(path, spec.study)
    data_dir = str(root) if root is not None else None  # as the cells get it (--data-dir)
    cells: list[Cell] = []
    for i, (entry, seed_option, target, source) in enumerate(zip(spec.encoder, checked.seed_options,
                                                                 checked.targets, checked.sources), 1):
        if entry.run is not None:
            run = beside(path, entry.run).resolve()
            cells.append(Cell(safe_name(f"run-{i}-{run.name}"), run.name, run=str(run), entry=i))
            continue
        if entry.train is not None and check_train is not None:
            try:
                check_train(entry.name, entry.train, data_dir)
            except BenchboxError as exc:
                raise BenchboxError(f"{path}: [[encoder]] {i} train: {exc}") from None
        options = {k: _option_text(v) for k, v in entry.options.items()}
        seeds = entry.seeds or ([DEFAULT_SEED] if entry.train is not None else [None])
        group = f"{entry.name} ({len(seeds)} seeds)" if len(seeds) > 1 else None
        if group and any(c.group == group for c in cells):
            group = f"{group} #{i}"
        for seed in seeds:
            key = cell_key(target, source, {k.replace("-", "_"): v for k, v in entry.options.items()}, seed=seed,
                           seed_option=seed_option, train=entry.train, tasks=checked.tasks, values=checked.values,
                           flags=flags)
            name = cell_name(safe_name(entry.name + (f"-seed{seed}" if seed is not None else "")), key)
            same = next((c for c in cells if c.key == key), None)
            if same is not None:
                raise BenchboxError(f"{path}: [[encoder]] {i} is the same model as [[encoder]] {same.entry} (same "
                                    "encoder, options, seed and training): drop one")
            cells.append(Cell(name, entry.name, seed, dict(entry.train or {}), options, group=group,
                              seed_option=seed_option if seed is not None else None, entry=i, key=key))
    if len(cells) < min_cells:
        raise BenchboxError(f"{path}: declare at least two encoders ([[encoder]] tables) to compare")
    head = spec.study
    out_dir = Path(out) if out else beside(path, head.out or path.stem)
    if not out:  # a given --out is checked as the option is read
        check_outside_results(out_dir, f"{path}: [study] out" if head.out else "the study folder", folder=True,
                              holds=STUDY)
    published = read_comparators(beside(path, head.comparators), f"{path}: [study] comparators") if head.comparators else {}
    return Study(path, out_dir, head.tasks, cells, head.baseline, head.jobs or cpu_count(), data_dir, flags,
                 default_out=not (out or head.out), settings=settings,
                 comparators=published)


def cell_commands(cell: Cell, study: Study, folder: Path) -> list[tuple[str, list[str]]]:
    """The stages of one cell and their ``benchbox`` command lines: training (if it trains: from the spec
    :func:`cell_train_spec` in the cell's folder), then evaluating."""
    base = [sys.executable, "-m", "benchbox", *(x for path in INCLUDED for x in ("--include", str(path)))]
    data = ["--data-dir", study.data_dir] if study.data_dir else []
    commands = []
    target = cell.encoder
    if cell.train:  # its progress lines go to the log: the table's ETA
        commands.append(("training", [*base, "train", "cell", str(folder / TRAIN_SPEC)]))
        target = str(folder / "train")
    options = dict(cell.options)
    if cell.seed_option is not None:
        options[cell.seed_option] = str(cell.seed)
    encoder_options = [x for k, v in options.items() for x in ("-e", f"{k}={v}")]
    tasks = [x for t in study.tasks for x in ("--task", t)]
    flags = [x for k, v in study.flags.items() for x in flag_arguments(k, v)]
    commands.append(("evaluating", [*base, "eval", target, *tasks, *flags, *encoder_options, *data,
                                    "--runs-dir", str(folder / "runs"), "-q"]))
    return commands


def cell_train_spec(cell: Cell, study: Study, folder: Path) -> TrainSpec | None:
    """What the cell trains (None: nothing): its ``train`` table with its seed and the study's data root, into
    ``<folder>/train`` (:class:`benchbox.study.train.TrainSpec`, written as ``<folder>/train.json``)."""
    if not cell.train:
        return None
    return train_spec(cell.encoder, cell.train, seed=cell.seed, data_dir=study.data_dir, out=str(folder / "train"))


def flag_arguments(key: str, value: Scalar) -> list[str]:
    """A task flag of the ``[study]`` table as command-line options: a boolean is the flag ``--key`` or
    ``--no-key``."""
    if isinstance(value, bool):
        return [f"--{key}" if value else f"--no-{key}"]
    return [f"--{key}", str(value)]


def cell_threads(jobs: int) -> int:
    """The CPU threads of each cell on the local pool: this machine's free cores (:func:`benchbox.threads.free_cores`)
    shared among the ``jobs`` cells that run at once, at least 1. Without it each cell's torch and BLAS take every
    core, and ``jobs`` cells oversubscribe the machine. ``benchbox study`` counts it once, at the start (later the
    cells' own load would count); ``--threads``, an ``OMP_NUM_THREADS`` set by the user, or a train table's
    ``threads``, wins; on Ray each task's one CPU is Ray's to set."""
    from benchbox.threads import free_cores

    return max(1, free_cores() // jobs)


def run_cell(cell: Cell, study: Study, processes: Processes | None = None) -> dict[str, Any]:
    """Run one cell to completion in a clean folder; returns its ``done.json`` record, with the seconds it took
    and its seed. Raises :class:`CellFailed` (after writing ``failed.json``) or :class:`CellStopped`."""
    if cell.run is not None:
        return {"cell": cell.name, "run": cell.run}
    if processes is not None and processes.stopped.is_set():  # a queued cell after a stop: never started
        raise CellStopped(cell.name)
    folder = cell_folder(study.out, cell.name)
    env = None if processes is None or "OMP_NUM_THREADS" in os.environ else \
        {**os.environ, "OMP_NUM_THREADS": str(cell_threads(study.jobs))}
    started = time.time()
    wipe(folder)  # an interrupted cell restarts from the beginning (a Ray retry too)
    folder.mkdir(parents=True)
    train = cell_train_spec(cell, study, folder)
    if train is not None:
        train.write(folder / TRAIN_SPEC)
    with open(folder / LOG, "w", encoding="utf-8") as log:
        for stage, command in cell_commands(cell, study, folder):
            mark_stage(folder, stage, started)
            log.write("$ " + shlex.join(command) + "\n")
            log.flush()
            code = run_command(command, log, processes, env)
            if processes is not None and processes.stopped.is_set():
                raise CellStopped(cell.name)
            if code != 0:
                mark_failed(folder, f"exit status {code}", started)
                raise CellFailed(f"exit status {code}")
    runs = sorted(p for p in (folder / "runs").iterdir() if (p / MANIFEST).is_file())
    if len(runs) != 1:
        reason = f"expected one evaluation run in {folder / 'runs'}, found {len(runs)}"
        mark_failed(folder, reason, started)
        raise CellFailed(reason)
    record = {"cell": cell.name, "run": runs[0].relative_to(study.out).as_posix(), "entry": cell.entry,
              "encoder": cell.encoder, "seconds": round(time.time() - started, 1), "seed": cell.seed, "key": cell.key}
    write_json(folder / DONE, record, sort_keys=True)
    return {**record, "run": str(runs[0])}


def _log_tail(cell: Cell, study: Study, lines: int = 15) -> str:
    path = study.out / "cells" / cell.name / LOG
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.is_file() else "(no log)"


#: what a pool yields: (the cell that finished, its result getter, cells running, cells queued); (None, None,
#: running, queued) when ``wait_seconds`` passed without one finishing
Event = tuple[Cell | None, Callable[[], dict[str, Any]] | None, int, int]


def _local_pool(cells: list[Cell], study: Study, wait_seconds: float, processes: Processes) -> Iterator[Event]:
    """Events (:data:`Event`) as cells finish on a pool of ``study.jobs`` threads, waiting at most
    ``wait_seconds`` at a time (a blocking wait, no polling). After a stop, queued cells end at once as stopped."""
    with ThreadPoolExecutor(max_workers=study.jobs) as pool:
        futures = {pool.submit(run_cell, cell, study, processes): cell for cell in cells}
        pending = set(futures)

        def counts() -> tuple[int, int]:
            running = sum(f.running() for f in pending)
            return running, len(pending) - running

        while pending:
            done, pending = wait(pending, timeout=wait_seconds, return_when=FIRST_COMPLETED)
            if not done:
                yield None, None, *counts()
            for future in done:
                yield futures[future], future.result, *counts()


def connect_ray(address: str) -> Any:
    """The ``ray`` module, connected to the cluster at ``address``; one line when Ray is missing or the cluster
    cannot be reached."""
    try:
        import ray
    except ImportError:
        raise BenchboxError("--ray needs Ray: pip install 'benchbox[ray]'") from None
    _reachable(address)
    try:
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError, its own ...
        reason = " ".join(str(exc).split())[:300]
        raise BenchboxError(f"cannot connect to the Ray cluster at {address}: {reason} (is `ray start --head` "
                            "running there, and is the address host:port of its GCS?)") from None
    return ray


def check_ray_address(address: str | None) -> str | None:
    """``address`` if it is ``auto`` (the cluster started on this machine) or ``[ray://]HOST:PORT`` (a port from 1
    to 65535), else one line: an empty ``--ray ''`` once ran the study on the local pool without a word, and a
    malformed one was left to Ray's own errors. None (no ``--ray``) passes."""
    if address is None or address == "auto":
        return address
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not (colon and host.strip("[]") and not any(c.isspace() for c in host) and port.isdigit()
            and 1 <= int(port) <= 65535):
        raise BenchboxError(f"--ray {address!r} is not the address of a Ray cluster: give HOST:PORT of its head "
                            "(or ray://HOST:PORT, or auto for the cluster started on this machine)")
    return address


#: seconds to wait for the Ray cluster's port to answer (Ray itself retries for minutes)
RAY_CONNECT_SECONDS = 10.0


def _reachable(address: str) -> None:
    """Refuse, in one line and within :data:`RAY_CONNECT_SECONDS`, a ``HOST:PORT`` (or ``ray://HOST:PORT``)
    that accepts no connection; other forms (``auto``) are left to Ray."""
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not (colon and host and port.isdigit()):
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=RAY_CONNECT_SECONDS).close()
    except OSError as exc:
        raise BenchboxError(f"cannot connect to the Ray cluster at {address}: {exc.strerror or exc} (is `ray start "
                            "--head` running there, and is the address host:port of its GCS?)") from None


def _ray_tasks(cells: list[Cell], study: Study, ray: Any, wait_seconds: float,
               processes: Processes) -> Iterator[Event]:
    """The same on a Ray cluster: one task (one CPU) per cell, retried :data:`RAY_RETRIES` times if its worker
    dies (Ray's queue is not seen here: every unfinished cell counts as running). After a stop
    (``processes.stopped``), every task is cancelled (a running cell gets KeyboardInterrupt and stops its
    processes) and reported as stopped."""
    remote = ray.remote(num_cpus=1, max_retries=RAY_RETRIES, retry_exceptions=False)(run_cell)
    refs = {remote.remote(cell, study): cell for cell in cells}
    if refs:
        processes.mark_started()
    stopped = processes.stopped
    pending = list(refs)
    waited = 0.0
    while pending:
        if stopped.is_set():
            for ref in pending:
                ray.cancel(ref)
            for ref in pending:
                yield refs[ref], _stopped(ray, ref), len(pending), 0
            return
        done, pending = ray.wait(pending, num_returns=1, timeout=min(wait_seconds, RAY_POLL_SECONDS))
        if done:
            waited = 0.0
            yield refs[done[0]], lambda ref=done[0]: ray.get(ref), len(pending), 0
            continue
        waited += min(wait_seconds, RAY_POLL_SECONDS)
        if waited >= wait_seconds:
            waited = 0.0
            yield None, None, len(pending), 0


def _stopped(ray: Any, ref: Any) -> Callable[[], dict[str, Any]]:
    """A result getter for a cancelled Ray task: waits until it has ended (its processes stopped), then raises
    :class:`CellStopped` (or returns the record, when the cell finished before the cancel reached it)."""

    def result() -> dict[str, Any]:
        try:
            return ray.get(ref)
        except Exception as exc:  # noqa: BLE001 - TaskCancelledError, or the KeyboardInterrupt inside the task
            raise CellStopped(str(exc)) from None

    return result


@contextmanager
def _stop_on_signals(processes: Processes, received: list[int]) -> Iterator[None]:
    """While the study runs, SIGINT and SIGTERM stop it (:meth:`Processes.stop`) instead of killing it; the
    signal is appended to ``received``. Python's handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if not received:
            received.append(signum)
            processes.stop()

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def run_study(study: Study, *, log: Callable[[str], None] = lambda message: None,
              ray_address: str | None = None, heartbeat: Heartbeat | None = None,
              live: bool = False) -> dict[str, Any]:
    """Run the missing cells on the local pool (or Ray), then compare and report, holding the study folder's
    lock. Returns a summary with the finished runs, the failed cells (with their log tails), the cells skipped as
    already done, the cells stopped, the signal that stopped the study (``interrupted``, else None) and the paths
    written. ``heartbeat``: when a plain progress line is due (default: every
    :data:`benchbox.console.LOG_SECONDS`); ``live``: a live table of the cells instead (a terminal)."""
    ray = connect_ray(ray_address) if ray_address else None
    study.out.mkdir(parents=True, exist_ok=True)
    if study.default_out and not (study.out / ".gitignore").exists():
        (study.out / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    with output_lock(study.out, "--out", name=STUDY_LOCK):
        return _run_locked(study, log, ray, heartbeat or Heartbeat(), live, rerun_command(study, ray_address))


#: what the default study folder holds (beside the study file, often in a repository): git ignores it all
GITIGNORE = "# written by benchbox study: a study folder is output, kept out of git (delete this file to commit it)\n*\n"


def rerun_command(study: Study, ray_address: str | None = None) -> str:
    """The command that runs this study again (resumes it), complete and copyable: the files included
    (``--include``), the study folder (``--out``) and the Ray cluster, as given to this one."""
    include = [x for path in INCLUDED for x in ("--include", str(path))]
    ray = ["--ray", ray_address] if ray_address else []
    return shlex.join(["benchbox", *include, "study", str(study.path), "--out", str(study.out), *ray])


def _run_locked(study: Study, log: Callable[[str], None], ray: Any, heartbeat: Heartbeat,
                live: bool, command: str) -> dict[str, Any]:
    progress = Progress(study.jobs, heartbeat, log, running=lambda: running_seconds(study))
    failed, stopped = {}, []
    finished, skipped, todo = plan(study, log, progress)
    heartbeat.due()  # the first line is this one; the next is due an interval later
    log(f"cells: {len(finished)} done, {len(todo)} to run, 0 failed")
    # the comparison's and the report's imports, done while the cells run (benchbox.study.warmup); left, the
    # with waits for them, so nothing imports after the study compared or returned
    warmup = Warmup(seeds=any(cell.group for cell in study.cells))
    processes, received = Processes(on_start=warmup.start), []
    with _stop_on_signals(processes, received), warmup, (live_table(study, progress) if live else nullcontext()):
        executor = _ray_tasks(todo, study, ray, heartbeat.seconds, processes) if ray else \
            _local_pool(todo, study, heartbeat.seconds, processes)
        for cell, result, running, queued in executor:
            if cell is not None and result is not None:
                try:
                    record = result()
                    finished[cell.name] = record["run"]
                    progress.finished(record.get("seconds"))
                except Exception as exc:  # a failed cell is reported and does not stop the others
                    if received or isinstance(exc, CellStopped):
                        stopped.append(cell.name)
                        continue
                    reason = getattr(exc, "cause", None) or exc  # Ray wraps the cell's exception
                    failed[cell.name] = f"{reason}\n{_log_tail(cell, study)}"
                    log(f"cell {cell.name} failed ({reason}); its log: {study.out / 'cells' / cell.name / LOG}")
            if not live:
                progress.update(len(finished), running, len(failed), queued, finished=cell is not None)
    summary = {"failed": failed, "skipped": skipped, "stopped": stopped,
               "interrupted": received[0] if received else None}
    if received:
        log(_interrupted_line(study, received[0], finished, stopped, command))
        return {**summary, "runs": [], "outputs": {}}
    cells = [c for c in study.cells if c.name in finished]
    runs = [finished[c.name] for c in cells]
    outputs: dict[str, str] = {}
    if len(runs) >= 2:
        outputs = _compare_and_report(study, cells, runs, log)
    log(_final_line(study, finished, failed, outputs, command))
    return {**summary, "runs": runs, "outputs": outputs}


def _interrupted_line(study: Study, signum: int, finished: dict[str, str], stopped: list[str], command: str) -> str:
    return (f"study {study.path} interrupted by {signal.Signals(signum).name}: {len(finished)} cells done and kept, "
            f"{len(stopped)} stopped or not started; resume with `{command}` (only the unfinished cells run)")


def _final_line(study: Study, finished: dict[str, str], failed: dict[str, str], outputs: dict[str, str],
                command: str) -> str:
    """What was written and what to run next (``command``: :func:`rerun_command`)."""
    head = f"study {study.path}: {len(finished)} cells done, {len(failed)} failed; "
    if outputs:
        head += (f"wrote {outputs['comparison']}, {outputs['csv']} and {outputs['report']}; ")
    elif len(study.cells) > 1:
        head += "fewer than two cells finished, so no comparison or report was written; "
    if failed or (not outputs and len(study.cells) > 1):
        return head + (f"next: fix the failed cells (their logs: {study.out / 'cells'}/<cell>/{LOG}) and run "
                       f"`{command}` again (finished cells are not redone)")
    if not outputs:  # a study of one cell (benchbox reproduce): nothing to compare
        return head + f"its run is in {study.out / 'cells'}"
    return head + (f"next: read {outputs['report']}; after editing {study.path}, `{command}` runs only the cells "
                   "whose identity changed")


def cell_labels(cells: list[Cell]) -> list[str]:
    """How the comparison and the report name each cell's model, the same in every run of the study: the
    encoder's name (with ``seed N`` for a seed), else, when that repeats, its table's position and the encoder's
    name (``02-glove-bow``)."""
    names = [cell.encoder + (f" seed {cell.seed}" if cell.seed is not None else "") for cell in cells]
    return [name if names.count(name) == 1 else
            safe_name(f"{cell.entry:02d}-{cell.encoder}" + (f"-seed{cell.seed}" if cell.seed is not None else ""))
            for name, cell in zip(names, cells)]


def _compare_and_report(study: Study, cells: list[Cell], runs: list[str], log: Callable[[str], None]) -> dict[str, str]:
    """One comparison of the finished cells' runs (labelled as the report labels them), written as
    ``comparison.json``/``.csv`` and rendered as it is in ``report.md``: the two always agree."""
    from benchbox.comparison import output
    from benchbox.comparison.compare import compare_sources
    from benchbox.reports import write_report
    from benchbox.comparison.sources import comparator_sources, resolve_sources
    from benchbox.task_contract.protocol import resolve_tasks

    baseline = study.baseline
    matches = [run for cell, run in zip(cells, runs) if cell.encoder == baseline and not cell.options]
    if len(matches) == 1:  # one cell of that name: name its run (other entries may share the encoder name)
        baseline = matches[0]
    groups: dict[str, list[str]] = {}
    for cell, run in zip(cells, runs):
        if cell.group:
            groups.setdefault(cell.group, []).append(run)
    seeds = {g: members for g, members in groups.items() if len(members) > 1}
    specs = [f"{label}={run}" for label, run in zip(cell_labels(cells), runs)]
    sources = resolve_sources(specs, log=log) + comparator_sources(study.comparators)
    tasks = [task.name for task in resolve_tasks(study.tasks)]
    comparison = compare_sources(sources, tasks, settings=study.settings, baseline=baseline, seeds=seeds)
    output.write_json(comparison, study.out / "comparison.json")
    output.write_csv(comparison, study.out / "comparison.csv")
    report = write_report(specs, study.out / "report.md", log=log, comparison=comparison)
    return {"comparison": str(study.out / "comparison.json"), "csv": str(study.out / "comparison.csv"),
            "report": str(report), "headlines": "\n".join(comparison.headlines())}
