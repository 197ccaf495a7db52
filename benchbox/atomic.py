"""Files and folders written whole or not at all: the one writer behind every file benchbox writes.

A file is written to a hidden temporary sibling (``.STEM.<random>.SUFFIX``: the target's suffix is kept, so
a writer that picks its format by suffix, such as pandas' compression or numpy's ``.npy``, writes there what it
would write to the target) and renamed over its target; a folder is filled under a hidden temporary name and
renamed into place. A rename is atomic on one file system (POSIX ``rename(2)``, :func:`os.replace`), so a
reader, or a run interrupted at any point, never sees half a file, and the temporary is removed when the write
fails. Files get the permissions ``open`` gives (``0o666`` less the umask). Imports only the standard library
(torch only inside :func:`torch_save`), so the fast-start modules use it too.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def temporary_sibling(target: Path) -> Path:
    """A hidden, unique name beside ``target`` with its suffix (two writers of one target never share one)."""
    return target.with_name(f".{target.stem}.{uuid.uuid4().hex}{target.suffix}")


@contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``target`` for the block to write; renamed over ``target`` when the block
    succeeds, removed when it fails."""
    target = Path(target)
    tmp = temporary_sibling(target)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_bytes(target: str | os.PathLike, data: bytes) -> None:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def write_text(target: str | os.PathLike, text: str) -> None:
    """``text`` as UTF-8."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def copy_file(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """The bytes of ``source`` (not its permissions or times, as :func:`shutil.copyfile`)."""
    with atomic_path(target) as tmp:
        shutil.copyfile(source, tmp)


def torch_save(obj: Any, target: str | os.PathLike) -> None:
    """``torch.save(obj)``, loadable with ``torch.load(weights_only=True)`` when ``obj`` holds only tensors and
    plain containers."""
    import torch  # only the writers of checkpoints and weights need it

    with atomic_path(target) as tmp:
        torch.save(obj, tmp)


@contextmanager
def atomic_folder(target: Path, temporary: Path | None = None) -> Iterator[Path]:
    """A new empty folder (``temporary``, else a hidden sibling of ``target``) for the block to fill; renamed
    to ``target`` when the block succeeds, removed with its contents when the block or the rename fails (a
    ``target`` that exists, unless empty, fails the rename)."""
    temporary = temporary or temporary_sibling(target)
    temporary.mkdir()
    try:
        yield temporary
        os.rename(temporary, target)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
