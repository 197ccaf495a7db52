"""``benchbox cache status|verify|clear [ENCODER]``: see and repair the embedding cache (:mod:`benchbox.storage.cache`).

ENCODER is the name of a folder of the cache (the encoder's fingerprint, width and provider digest:
:func:`benchbox.storage.identity.cache_key`), or an encoder name / trained-model folder whose folder is computed
(``-e KEY=VALUE`` options as for ``eval``); without it, every encoder in the cache.
Several may be given. ``clear`` deletes only encoder folders of a marked cache root (:mod:`benchbox.storage.cache`,
"Ownership"): every argument is resolved and checked first, and one that is not such a folder (a model folder,
``..``, ``/``, a path outside the cache) stops the command before anything is removed.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer
from rich.table import Table

from benchbox.storage.cache import (
    QUARANTINE,
    CorruptShard,
    EmbeddingCache,
    encoder_folders,
    owned_folder,
    quarantine,
    read_shard,
    require_cache_root,
    shard_key_files,
)
from benchbox.commands.options import CACHE_DIR, ENCODER_OPTIONS, QUIET
from benchbox.console import log, out, set_quiet
from benchbox.errors import BenchboxError
from benchbox.storage.runs import MANIFEST

cache_app = typer.Typer(help="See and repair the embedding cache.", no_args_is_help=True)

EncoderArg = Annotated[Optional[list[str]], typer.Argument(help="Fingerprints, encoder names or trained-model folders (default: all).")]


def _folders(directory: Path, encoders: list[str] | None, encoder_opt: list[str] | None,
             owned: bool = False) -> list[Path]:
    """The encoder folders ENCODER... select (every one when there is none); with ``owned``, each is checked to
    be the cache's own (:func:`benchbox.storage.cache.owned_folder`) before any is returned."""
    if not encoders:
        if owned and directory.exists():
            require_cache_root(directory)  # "all" in a folder that is not a cache: refused
        return encoder_folders(directory)
    named = [(folder, given) for given in encoders for folder in _folder(directory, given, encoder_opt)]
    if owned:
        return list(dict.fromkeys(owned_folder(directory, folder, given) for folder, given in named))
    return list(dict.fromkeys(folder for folder, _ in named))


def _folder(directory: Path, given: str, encoder_opt: list[str] | None) -> list[Path]:
    """The cache folders one argument names: a plain folder name of the cache, else the folders of the encoder it
    names (:func:`benchbox.storage.identity.cache_key`, and :func:`benchbox.storage.identity.image_cache_key` when the cache
    holds its images), with those of its family that earlier library versions computed. A path is never taken as the folder itself."""
    if given not in (".", "..") and Path(given).name == given and (directory / given).is_dir():
        return [directory / given]
    if Path(given).exists() and not (Path(given) / MANIFEST).is_file():
        raise BenchboxError(f"{given} is a path, not a trained-model folder (no {MANIFEST}) nor a fingerprint of the "
                            f"cache {directory}: give a fingerprint (`benchbox cache status`), an encoder name or a "
                            "trained-model folder; nothing was removed")
    from benchbox.commands.core import parse_encoder_options
    from benchbox.evaluation import load_encoder

    from benchbox.storage.identity import cache_key, image_cache_key

    encoder = load_encoder(given, **parse_encoder_options(encoder_opt or []))
    key = cache_key(encoder)
    families = {k.rpartition("-")[0] for k in (key, image_cache_key(encoder))}  # earlier library versions too
    folders = [p for p in encoder_folders(directory) if p.name.rpartition("-")[0] in families]
    if not folders:
        raise BenchboxError(f"the cache in {directory} holds nothing for {given} (cache folder {key}): "
                            "nothing was removed")
    return folders


@cache_app.command("status")
def status(encoder: EncoderArg = None, cache_dir: CACHE_DIR = None, encoder_opt: ENCODER_OPTIONS = None) -> None:
    """Per encoder fingerprint: shards, sentences, dimension, size on disk and quarantined shards (no checking)."""
    cache = EmbeddingCache(cache_dir)
    table = Table(title=f"embedding cache {cache.directory}")
    for column in ("fingerprint", "shards", "sentences", "dim", "MB", "quarantined"):
        table.add_column(column, justify="left" if column == "fingerprint" else "right")
    for folder in _folders(cache.directory, encoder, encoder_opt):
        keys_files = shard_key_files(folder)
        rows, dim = 0, ""
        for keys_file in keys_files:
            try:
                rows += len(np.load(keys_file, mmap_mode="r"))
                dim = str(np.load(keys_file.with_name(keys_file.name.replace(".keys.npy", ".emb.npy")),
                                  mmap_mode="r").shape[1])
            except (OSError, ValueError, IndexError):
                pass  # damaged: `benchbox cache verify` reports and repairs it
        size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6
        held = folder / QUARANTINE
        n_quarantined = len(list(held.glob("*.keys.npy"))) if held.is_dir() else 0
        table.add_row(folder.name, str(len(keys_files)), str(rows), dim, f"{size:.1f}", str(n_quarantined))
    out.print(table)


@cache_app.command("verify")
def verify(encoder: EncoderArg = None, cache_dir: CACHE_DIR = None, encoder_opt: ENCODER_OPTIONS = None,
           quiet: QUIET = False) -> None:
    """Check every shard's checksum and contents; move damaged shards to quarantine (they are re-encoded on
    next use). Exits 1 if any shard was damaged."""
    set_quiet(quiet)
    cache = EmbeddingCache(cache_dir)
    checked = damaged = 0
    for folder in _folders(cache.directory, encoder, encoder_opt):
        for keys_file in shard_key_files(folder):
            checked += 1
            try:
                read_shard(keys_file)
            except CorruptShard as exc:
                damaged += 1
                log(f"{folder.name}/{keys_file.name} {exc}; moved to {quarantine(keys_file)}")
    out.print(f"{checked} shards checked, {damaged} damaged and quarantined", highlight=False)
    if damaged:
        raise typer.Exit(1)


@cache_app.command("clear")
def clear(encoder: EncoderArg = None, cache_dir: CACHE_DIR = None, encoder_opt: ENCODER_OPTIONS = None) -> None:
    """Delete the cached embeddings of each ENCODER (default: of every encoder), quarantined shards included.
    Only folders the cache wrote are deleted; any other argument stops the command before anything is."""
    cache = EmbeddingCache(cache_dir)
    folders = _folders(cache.directory, encoder, encoder_opt, owned=True)
    for folder in folders:
        shutil.rmtree(folder)
    out.print(f"removed the cached embeddings of {len(folders)} encoder(s) from {cache.directory}", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(cache_app, name="cache")
