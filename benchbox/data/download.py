"""Downloading datasets from their official sources, verified against the packaged checksums.

Each :class:`RemoteFile` names a URL (:data:`benchbox.data.root.DOWNLOADS`), how to unpack it, and which files it
provides; every provided file is checked against the sha256 of ``data_manifest.json`` before it is moved into
the data root, so a changed or truncated download never lands. A mirror (``--mirror URL``) replaces everything
before the file name. The SentEval-processed STS files are made by SentEval's script (Moses tokeniser) and
cannot be fetched directly: fetch the ``-raw`` datasets, or import SentEval's folder with ``benchbox data import``.

Hand-written rather than ``pooch``: pooch checks one hash per downloaded file and unpacks archives into place
unchecked, while the manifest pins each member's sha256 and nothing may land until every member verifies.
"""

from __future__ import annotations

import hashlib
import shutil
import socket
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from benchbox.storage.atomic import copy_file
from benchbox.data.root import DOWNLOADS, FETCHABLE, known_files
from benchbox.storage.checksums import sha256_file
from benchbox.errors import BenchboxError

TIMEOUT_S = 30


@dataclass(frozen=True)
class RemoteFile:
    """One download: ``url`` unpacked as ``archive`` ("zip", "tar.gz" or "file"), providing ``targets``:
    data-root relative path → expected sha256. Archive members are matched to targets by file name."""

    dataset: str
    url: str
    archive: str
    targets: dict[str, str]


def remote_files(dataset: str) -> list[RemoteFile]:
    """The downloads that provide ``dataset``; a clear error for datasets with no official download."""
    files = known_files()
    if dataset not in files:
        raise BenchboxError(f"unknown dataset {dataset!r}; known: {', '.join(sorted(files))}")
    if dataset not in DOWNLOADS:
        fetchable = ", ".join(sorted(FETCHABLE))
        raise BenchboxError(
            f"dataset {dataset!r} has no official download benchbox can verify (SentEval-processed STS files "
            f"come from SentEval's get_transfer_data.bash; SNLI needs conversion; published numbers ship in "
            f"the package). Use `benchbox data import DIR`. Fetchable: {fetchable}"
        )
    wanted = {f.path: f.sha256 for f in files[dataset]}
    out = []
    for url, archive in DOWNLOADS[dataset]:
        if archive == "file":
            name = PurePosixPath(url).name
            targets = {p: h for p, h in wanted.items() if PurePosixPath(p).name == name}
        else:
            targets = wanted
        out.append(RemoteFile(dataset, url, archive, targets))
    return out


def _download(url: str, dest: Path) -> None:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response, open(dest, "wb") as fh:
            shutil.copyfileobj(response, fh, 1 << 20)
    except urllib.error.HTTPError as exc:
        raise BenchboxError(f"download of {url} failed: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, socket.timeout, ConnectionError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise BenchboxError(
            f"could not download {url} ({reason}): this machine looks offline or the host is unreachable. "
            "Download the file elsewhere and use `benchbox data import DIR`, or pass --mirror URL."
        ) from None


def _members(archive_path: Path, kind: str) -> dict[str, Callable[[], bytes]]:
    """File name → reader of that member (the last member of a name wins; directories skipped)."""
    members: dict[str, Callable[[], bytes]] = {}
    try:
        if kind == "zip":
            zf = zipfile.ZipFile(archive_path)
            for info in zf.infolist():
                if not info.is_dir():
                    members[PurePosixPath(info.filename).name] = lambda info=info: zf.read(info)
        elif kind == "tar.gz":
            tf = tarfile.open(archive_path, "r:gz")
            for info in tf.getmembers():
                if info.isfile():
                    members[PurePosixPath(info.name).name] = lambda info=info: tf.extractfile(info).read()
        else:
            members[archive_path.name] = archive_path.read_bytes
    except (zipfile.BadZipFile, tarfile.TarError, EOFError) as exc:
        raise BenchboxError(f"downloaded archive {archive_path.name} is corrupt: {exc}") from None
    return members


def fetch(remote: RemoteFile, root: Path, *, mirror: str | None = None, log: Callable[[str], None] = print) -> list[Path]:
    """Download ``remote`` into ``root``; every file is verified before it is moved into place. Files
    already present with the right checksum are left alone; nothing is written unless all files verify."""
    todo = {p: h for p, h in remote.targets.items() if not ((root / p).is_file() and sha256_file(root / p) == h)}
    if not todo:
        log(f"{remote.dataset}: already present and verified")
        return []
    url = remote.url if not mirror else mirror.rstrip("/") + "/" + PurePosixPath(remote.url).name
    with tempfile.TemporaryDirectory(prefix="benchbox-fetch-") as tmp:
        download = Path(tmp) / PurePosixPath(url).name
        log(f"downloading {url}")
        _download(url, download)
        members = _members(download, remote.archive)
        staged: dict[Path, Path] = {}
        for relpath, expected in todo.items():
            name = PurePosixPath(relpath).name
            if name not in members:
                raise BenchboxError(f"{url} does not contain {name}; nothing was written")
            data = members[name]()
            digest = hashlib.sha256(data).hexdigest()
            if digest != expected:
                raise BenchboxError(
                    f"{name} from {url} has sha256 {digest[:16]}…, expected {expected[:16]}…: the download "
                    "differs from the release benchbox knows; nothing was written"
                )
            stage = Path(tmp) / f"stage-{len(staged)}"
            stage.write_bytes(data)
            staged[root / relpath] = stage
        for dest, stage in staged.items():
            dest.parent.mkdir(parents=True, exist_ok=True)
            copy_file(stage, dest)
    return list(staged)
