"""``benchbox data status|verify|import|fetch``: what the data root holds, checksums, import, download."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table
from rich.text import Text

from benchbox.data import download
from benchbox.storage.atomic import copy_file
from benchbox.console import log, out
from benchbox.data.root import EMBEDDED_ROOT, DataRoot, known_files
from benchbox.storage.checksums import sha256_file
from benchbox.errors import BenchboxError
from benchbox.storage.outdir import output_lock

DataDir = Annotated[Optional[Path], typer.Option("--data-dir", help="Data root (default: $BENCHBOX_DATA, else the user data dir).")]
SENTEVAL_PREFIX = "senteval/downstream/"

data_app = typer.Typer(help="Inspect, verify, import and download datasets.", no_args_is_help=True)


@data_app.command("status")
def status(data_dir: DataDir = None) -> None:
    """Per dataset: how many of its files are present, and where (data root or embedded default). A dataset
    whose root copy lacks files that the embedded default has says so: tasks read those from the embedded copy."""
    root = DataRoot(data_dir)
    table = Table(title=f"data root: {root.root}",
                  caption="fallback: files missing from the data root are read from the embedded copy")
    for column in ("dataset", "files", "state", "location"):
        table.add_column(column)
    for name, files in known_files().items():
        located = [root.locate(f.path) for f in files]
        present = [p for p in located if p is not None]
        embedded = [p for p in present if _is_embedded(p)]
        state = "present" if len(present) == len(files) else ("partial" if present else "missing")
        if embedded and len(embedded) < len(present):
            state, where = "fallback", f"root; {len(embedded)} from embedded"
        else:
            where = "embedded" if embedded else ("root" if present else "-")
        style = {"present": "green", "partial": "yellow", "missing": "red", "fallback": "yellow"}[state]
        table.add_row(name, f"{len(present)}/{len(files)}", Text(state, style=style), where)
    out.print(table)


def _is_embedded(path: Path) -> bool:
    return EMBEDDED_ROOT in path.parents


@data_app.command("verify")
def verify(data_dir: DataDir = None) -> None:
    """Check the sha256 of every present file against the packaged manifest; exit 1 on any mismatch. Files
    served by the embedded copy are counted, and named where the data root holds the rest of their dataset."""
    root = DataRoot(data_dir)
    bad = checked = fallback = 0
    for files in known_files().values():
        root_has = any((root.root / f.path).is_file() for f in files)
        for f in files:
            path = root.locate(f.path)
            if path is None:
                continue
            checked += 1
            fallback += _is_embedded(path)
            if root_has and _is_embedded(path):  # the root holds the dataset but not this file
                out.print(Text.assemble(("FALLBACK", "yellow"), f" {f.path} is missing from {root.root}: "
                                        "tasks read the embedded copy"), soft_wrap=True)
            if sha256_file(path) != f.sha256:
                bad += 1
                out.print(Text.assemble(("MISMATCH", "red"), f" {root.label(path)}"))
    out.print(f"{checked} files checked, {bad} mismatched, {fallback} of them the embedded copy (not in the data root)",
              soft_wrap=True)
    if bad:
        raise typer.Exit(1)


@data_app.command("import")
def import_senteval(
    source: Annotated[Path, typer.Argument(help="An existing SentEval data/downstream folder.")],
    data_dir: DataDir = None,
    force: Annotated[bool, typer.Option(help="Replace files in the data root that differ.")] = False,
) -> None:
    """Copy the known files of a SentEval ``data/downstream`` folder into the data root (verified)."""
    if not source.is_dir():
        raise BenchboxError(f"{source} is not a folder: give the path of SentEval's data/downstream")
    root = DataRoot(data_dir).root
    with output_lock(root, "--data-dir"):
        copied, same, mismatched, conflicts = _import_known_files(source, root, force)
    out.print(f"imported {copied} files into {root} ({same} already there)")
    for path in mismatched:
        log(f"skipped {path}: its checksum differs from the release benchbox knows")
    if conflicts:
        raise BenchboxError(
            f"{len(conflicts)} files in the data root differ from the verified ones (e.g. {conflicts[0]}); "
            "nothing was overwritten: re-run with --force to replace them"
        )
    if copied + same == 0:
        raise BenchboxError(f"no known SentEval file found under {source}: is it SentEval's data/downstream?")


def _import_known_files(source: Path, root: Path, force: bool) -> tuple[int, int, list[str], list[str]]:
    """Copy the verified known files of ``source`` into ``root``: (copied, already there, mismatched, conflicts)."""
    copied = same = 0
    mismatched, conflicts = [], []
    for files in known_files().values():
        for f in files:
            if not f.path.startswith(SENTEVAL_PREFIX):
                continue
            src = source / f.path[len(SENTEVAL_PREFIX):]
            if not src.is_file():
                continue
            if sha256_file(src) != f.sha256:
                mismatched.append(str(src))
                continue
            dest = root / f.path
            if dest.is_file():
                if sha256_file(dest) == f.sha256:
                    same += 1
                    continue
                if not force:
                    conflicts.append(str(dest))
                    continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            copy_file(src, dest)
            copied += 1
    return copied, same, mismatched, conflicts


@data_app.command("fetch")
def fetch(
    names: Annotated[list[str], typer.Argument(help="Dataset names (see `benchbox data status`).")],
    data_dir: DataDir = None,
    mirror: Annotated[Optional[str], typer.Option(help="Base URL replacing the official host and path.")] = None,
) -> None:
    """Download datasets from their official sources; every file is verified before it lands."""
    root = DataRoot(data_dir).root
    with output_lock(root, "--data-dir"):
        for name in names:
            for remote in download.remote_files(name):
                written = download.fetch(remote, root, mirror=mirror, log=log)
                out.print(f"{name}: {len(written)} files written to {root}")


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")
