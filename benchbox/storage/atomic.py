"""Files and folders written whole or not at all: the one writer behind every file benchbox writes.

A file is written to a hidden temporary sibling (``.STEM.<random>.SUFFIX``: the target's suffix is kept, so
a writer that picks its format by suffix, such as pandas' compression or numpy's ``.npy``, writes there what it
would write to the target) and renamed over its target; a folder is filled under a hidden temporary name and
renamed into place. A rename is atomic on one file system (POSIX ``rename(2)``, :func:`os.replace`), so a
reader, or a run interrupted at any point, never sees half a file, and the temporary is removed when the write
fails. Files get the permissions ``open`` gives (``0o666`` less the umask). Imports only the standard library
(torch only inside :func:`torch_save`), so the fast-start modules use it too.

One rule for every target (:func:`atomic_path`), so that a write never replaces what it should write into:

* a regular file, or a path that does not exist yet: written atomically, as above;
* a symbolic link: followed to the file it names (however many links deep, :func:`os.path.realpath`), which is
  written atomically; the link stays a link;
* a character or block device, a FIFO or a socket (``/dev/null``, ``/dev/stdout``, a named pipe): written
  directly, in place, never replaced by a regular file;
* a folder: refused (:class:`IsADirectoryError` naming it).

Any OS error of a write (``ENOSPC``, ``EDQUOT``, ``EROFS``, ``EFBIG``, ``EIO``, permissions ...) is raised as an
:class:`OSError` whose ``filename`` is the target, never the temporary, so the command line prints one line
naming the file the user gave; the temporary is gone by then and the target untouched.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def temporary_sibling(target: Path) -> Path:
    """A hidden, unique name beside ``target`` with its suffix (two writers of one target never share one)."""
    return target.with_name(f".{target.stem}.{uuid.uuid4().hex}{target.suffix}")


#: the OS errors of a failed write into a folder being filled (the file inside it does not matter to a user)
WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EIO})


def written_in_place(target: Path) -> bool:
    """Whether ``target`` (links followed) is a device, FIFO or socket: written directly, never replaced. A
    folder is refused with :class:`IsADirectoryError`."""
    try:
        mode = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file: give a file name", os.fspath(target))
    return not stat.S_ISREG(mode)


def file_kind(mode: int) -> str:
    """What a path that is not a regular file is, in words (from its ``st_mode``), for an error naming it."""
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return kind
    return "a special file"


def _naming(exc: OSError, target: Path, temporary: Path | None = None) -> OSError:
    """``exc`` as the same OS error naming ``target`` when it names no file or the temporary (which means nothing
    to a user); an error on another file (a source being copied) is left as it is."""
    if exc.errno is None or exc.filename not in (None, os.fspath(temporary or target)):
        return exc
    return OSError(exc.errno, exc.strerror or os.strerror(exc.errno), os.fspath(target))


@contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """A path for the block to write that ends as ``target``, by the rule of the module docstring: a temporary
    beside the file ``target`` names (links followed), renamed over it when the block succeeds and removed
    when it fails; ``target`` itself when it is a device, FIFO or socket."""
    target = Path(target)
    try:
        if written_in_place(target):
            yield target
            return
        final = Path(os.path.realpath(target)) if target.is_symlink() else target
        tmp = temporary_sibling(final)
    except OSError as exc:
        raise _naming(exc, target) from exc
    try:
        yield tmp
        os.replace(tmp, final)
    except OSError as exc:
        raise _naming(exc, target, tmp) from exc
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
    try:
        temporary.mkdir()
    except OSError as exc:
        raise _naming(exc, target) from exc
    try:
        yield temporary
        os.rename(temporary, target)
    except BaseException as exc:
        shutil.rmtree(temporary, ignore_errors=True)
        if isinstance(exc, OSError) and exc.errno in WRITE_ERRORS:
            raise _naming(exc, target) from exc
        raise
