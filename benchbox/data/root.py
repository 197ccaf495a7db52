"""The data root: where task files are found, checked and recorded.

Resolution order of the root: ``--data-dir`` > ``$BENCHBOX_DATA`` > the user data dir (platformdirs).
Its layout is that of ``../shared/data`` (``senteval/downstream/...``, ``sts-raw/...``, ``flickr8k/...``).
Files missing from the root fall back to the *embedded default* shipped inside the package (STS-B and
SICK, SentEval-processed, with their licences), so evaluation works on a fresh install.
``data_manifest.json`` lists every known file with its sha256, grouped by dataset name; :data:`DOWNLOADS`
where the datasets that have an official download are published.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import platformdirs

from benchbox.errors import BenchboxError
from benchbox.storage.checksums import sha256_file

EMBEDDED_ROOT = Path(__file__).parent / "embedded"
#: how run manifests name a file read from the embedded copy: ``embedded:<path>``
EMBEDDED_PREFIX = "embedded:"
ENV_VAR = "BENCHBOX_DATA"
#: ``1``: evaluate data files whose sha256 is not the published one, as ``--allow-data-mismatch`` does
#: (:func:`benchbox.task_contract.protocol.require_task_data`; the test suite sets it: its small data roots are not the published data)
ALLOW_MISMATCH_ENV = "BENCHBOX_ALLOW_DATA_MISMATCH"

_STS_WIKI = "http://ixa2.si.ehu.es/stswiki/images"
_SENTEVAL = "https://dl.fbaipublicfiles.com/senteval/senteval_data"
#: dataset → its official downloads (URL, archive kind: "zip", "tar.gz" or "file"), at the addresses SentEval's
#: ``data/downstream/get_transfer_data.bash`` and the original releases use (fetched by :mod:`benchbox.data.download`)
DOWNLOADS: dict[str, list[tuple[str, str]]] = {
    "sts12-raw": [(f"{_STS_WIKI}/4/40/STS2012-en-test.zip", "zip")],
    "sts13-raw": [(f"{_STS_WIKI}/2/2f/STS2013-en-test.zip", "zip")],
    "sts14-raw": [(f"{_STS_WIKI}/8/8c/STS2014-en-test.zip", "zip")],
    "sts15-raw": [(f"{_STS_WIKI}/d/da/STS2015-en-test.zip", "zip")],
    "sts16-raw": [(f"{_STS_WIKI}/9/98/STS2016-en-test.zip", "zip")],
    "stsb-raw": [(f"{_STS_WIKI}/4/48/Stsbenchmark.tar.gz", "tar.gz")],
    "sick-raw": [(f"http://alt.qcri.org/semeval2014/task1/data/uploads/{name}.zip", "zip")
                 for name in ("sick_train", "sick_trial", "sick_test_annotated")],
    "mr": [(f"{_SENTEVAL}/datasmall_NB_ACL12.zip", "zip")],
    "cr": [(f"{_SENTEVAL}/datasmall_NB_ACL12.zip", "zip")],
    "subj": [(f"{_SENTEVAL}/datasmall_NB_ACL12.zip", "zip")],
    "mpqa": [(f"{_SENTEVAL}/datasmall_NB_ACL12.zip", "zip")],
    "mrpc": [(f"{_SENTEVAL}/msr_paraphrase_{split}.txt", "file") for split in ("train", "test")],
    "trec": [(f"http://cogcomp.seas.upenn.edu/Data/QA/QC/{name}", "file") for name in ("train_5500.label", "TREC_10.label")],
    "sst2": [(f"https://raw.githubusercontent.com/PrincetonML/SIF/master/data/sentiment-{split}", "file")
             for split in ("train", "dev", "test")],
    "flickr8k": [("https://github.com/jbrownlee/Datasets/releases/download/Flickr8k/Flickr8k_text.zip", "zip")],
}

FETCHABLE = frozenset(DOWNLOADS)
"""The datasets ``benchbox data fetch`` can download from an official source."""


@dataclass(frozen=True)
class KnownFile:
    dataset: str
    path: str
    sha256: str
    size: int


@cache
def known_files() -> dict[str, list[KnownFile]]:
    """Dataset name → its files, from the packaged manifest."""
    raw = json.loads((Path(__file__).parent / "data_manifest.json").read_text())
    return {name: [KnownFile(name, **entry) for entry in entries] for name, entries in raw.items()}


@cache
def published_sha256() -> dict[str, str]:
    """Path relative to the data root → the sha256 ``data_manifest.json`` publishes for it (every dataset's files;
    a path two datasets share has one digest)."""
    return {known.path: known.sha256 for entries in known_files().values() for known in entries}


def default_root() -> Path:
    return Path(platformdirs.user_data_dir("benchbox"))


def resolve_root(data_dir: str | os.PathLike | None = None) -> Path:
    """``data_dir`` if given, else ``$BENCHBOX_DATA``, else the user data dir."""
    if data_dir:
        return Path(data_dir).expanduser()
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser()
    return default_root()


def existing_data_dir(_ctx: Any, _param: Any, value: Path | None) -> Path | None:
    """Typer callback of ``--data-dir`` for commands that read data: a root that is not an existing folder is
    an error before any work starts (it was once ignored, and the embedded STS-B/SICK used silently)."""
    if value is not None and not Path(value).expanduser().is_dir():
        raise BenchboxError(f"--data-dir {value} is not an existing folder: give the data root (see "
                            "`benchbox data status`), or leave the option out to use $BENCHBOX_DATA")
    return value


class DataRoot:
    """Locates data files under a root, with the embedded default as fallback."""

    def __init__(self, root: str | os.PathLike | None = None, *, use_embedded: bool = True) -> None:
        self.root = resolve_root(root)
        self.use_embedded = use_embedded
        self._checksums: dict[Path, str] = {}

    def locate(self, relpath: str) -> Path | None:
        """The file for ``relpath`` (root first, then embedded), or None if neither has it."""
        candidate = self.root / relpath
        if candidate.is_file():
            return candidate
        if self.use_embedded and (EMBEDDED_ROOT / relpath).is_file():
            return EMBEDDED_ROOT / relpath
        return None

    def path(self, relpath: str) -> Path:
        """The file for ``relpath``; a clear error naming the dataset and how to get it if missing."""
        found = self.locate(relpath)
        if found is None:
            raise BenchboxError(missing_message(self.root, [relpath]))
        return found

    def require(self, relpaths: tuple[str, ...] | list[str]) -> None:
        missing = [p for p in relpaths if self.locate(p) is None]
        if missing:
            raise BenchboxError(missing_message(self.root, missing))

    def label(self, path: Path) -> str:
        """How a located file is named in run manifests: its path relative to the root or ``embedded:``, else
        (a task's package file) its resolved path, whatever folder the command ran in."""
        try:
            return str(path.relative_to(EMBEDDED_ROOT)).replace(os.sep, "/").join((EMBEDDED_PREFIX, ""))
        except ValueError:
            pass
        try:
            return str(path.relative_to(self.root)).replace(os.sep, "/")
        except ValueError:
            return str(path.resolve())

    def checksum(self, path: Path) -> str:
        if path not in self._checksums:
            self._checksums[path] = sha256_file(path)
        return self._checksums[path]

    def checksums(self, paths: list[Path]) -> dict[str, str]:
        """``{label: sha256}`` for the files a task read."""
        return {self.label(p): self.checksum(p) for p in paths}


def dataset_of(relpath: str) -> str | None:
    for name, files in known_files().items():
        if any(f.path == relpath for f in files):
            return name
    return None


def missing_message(root: Path, relpaths: list[str]) -> str:
    datasets = sorted({dataset_of(p) or "?" for p in relpaths})
    shown = ", ".join(relpaths[:3]) + (f" and {len(relpaths) - 3} more" if len(relpaths) > 3 else "")
    fetchable = [d for d in datasets if d in FETCHABLE]
    how = (
        f"get it with `benchbox data fetch {' '.join(fetchable)}`"
        if fetchable
        else "copy it from a SentEval data/downstream folder with `benchbox data import DIR`"
        if any(d != "?" for d in datasets)
        else "put the files there"
    )
    return (
        f"missing data under {root}: {shown} (dataset {', '.join(datasets)}). Point --data-dir or "
        f"${ENV_VAR} at a data root that has it, or {how}."
    )
