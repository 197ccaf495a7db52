"""Hostile inputs, one table (issue #16, "no traceback on any bad input"): every loader a user can point at a
file (image features, caption files, word vectors, char-RNN checkpoints and vocabularies, InferSent weights
and NLI data, STS / STS-B / SICK / transfer / Flickr8k data, run folders) and plugin encoders that return
the wrong thing. Each case runs the command line in process (``benchbox.cli.main``, the code path of the
``benchbox`` script) and must end with exit status 2, one ``error:`` line (the last line of stderr) naming
the file or encoder, no traceback, and no file written or changed under the case's folder.

Rows are keyed ``loader/case`` so that ``pytest -rA`` lists them by loader, and
``benchmarks/hostile_inputs_count.py`` counts cases, one-line errors, tracebacks and partial writes per loader.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import traceback
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

from benchbox.encoding.protocol import Encoder, ImageTextEncoder
from benchbox.data.image_features import save_features

SHARED_DATA = Path(os.environ.get("BENCHBOX_DATA") or "/work/shared/data")
N_IMAGES, DIM = 6, 4
IDS = [f"img{i}.jpg" for i in range(N_IMAGES)]


# --- the world a case spoils ---------------------------------------------------------------------------------

def caption(i: int, k: int) -> str:
    return f"a picture number {i} variant {k} ."


class ToyGrounded(ImageTextEncoder):
    """A grounded encoder with an image branch: captions and images map to fixed random vectors."""

    name = "hostile-toy"

    @property
    def dim(self) -> int:
        return DIM

    def config(self):
        return {}

    def weights_digest(self) -> str:
        return "toy"

    def _encode(self, sentences, batch_size):
        return np.stack([np.random.default_rng(abs(hash(s)) % 2**32).standard_normal(DIM) for s in sentences])

    def encode_images(self, features):
        return np.asarray(features, dtype=np.float32)[:, :DIM]


def _plugin(name: str, returns: Callable[[list[str]], object], dim: int = DIM) -> type[Encoder]:
    """A text encoder class named ``name`` whose ``_encode`` returns ``returns(sentences)``."""

    class Plugin(Encoder):
        @property
        def dim(self) -> int:
            return dim

        def config(self):
            return {}

        def weights_digest(self) -> str:
            return name

        def _encode(self, sentences, batch_size):
            return returns(sentences)

    Plugin.name = name
    return Plugin


def make_root(tmp: Path) -> Path:
    """A data root with Flickr8k (test split: N_IMAGES images) and MSCOCO Karpathy files (test: N_IMAGES)."""
    root = tmp / "root"
    flickr = root / "flickr8k"
    flickr.mkdir(parents=True)
    (flickr / "Flickr8k.token.txt").write_text(
        "".join(f"{IDS[i]}#{k}\t{caption(i, k)}\n" for i in range(N_IMAGES) for k in range(5)))
    (flickr / "Flickr_8k.testImages.txt").write_text("".join(f"{i}\n" for i in IDS))
    coco = root / "coco"
    coco.mkdir()
    images = [{"filename": IDS[i], "split": "test",
               "sentences": [{"tokens": caption(i, k).split(), "raw": caption(i, k)} for k in range(5)]}
              for i in range(N_IMAGES)]
    (coco / "dataset_coco.json").write_text(json.dumps({"images": images, "dataset": "coco"}))
    (coco / "karpathy_test_images.txt").write_text("".join(f"val2014/{IDS[i]} {i}\n" for i in range(N_IMAGES)))
    return root


def features_file(tmp: Path, suffix: str = ".npz") -> Path:
    path = tmp / f"features{suffix}"
    save_features(path, IDS, np.random.default_rng(0).standard_normal((N_IMAGES, DIM)))
    return path


def copy_data(tmp: Path, *relative: str) -> Path:
    """A data root holding copies of ``relative`` files of the shared data root."""
    root = tmp / "root"
    for rel in relative:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHARED_DATA / rel, root / rel)
    return root


# --- running a case ------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    code: int | None
    stderr: str
    traceback: str

    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith("error: ")]


def run_cli(argv: list[str], cwd: Path, capture, *, stdout: str | None = None, env: dict[str, str] | None = None,
            file_limit: int | None = None, deletable: Path | None = None) -> Outcome:
    """``benchbox ARGV`` in process from ``cwd``: its exit status, stderr and any escaped traceback. ``stdout``:
    a file standard output goes to (``/dev/full``); ``env``: environment variables set meanwhile;
    ``file_limit``: the largest file the command may write (RLIMIT_FSIZE: a write past it fails with EFBIG, as
    on a full disk); ``deletable``: the only folder ``shutil.rmtree`` may delete in (default: ``cwd``'s parent),
    so that a regression in ``cache clear`` can never reach ``/``."""
    import resource
    import signal

    from benchbox import cli
    from benchbox.console import err

    old_argv, old_cwd, old_stdout, old_env = sys.argv, os.getcwd(), sys.stdout, dict(os.environ)
    old_limit, old_xfsz = resource.getrlimit(resource.RLIMIT_FSIZE), signal.getsignal(signal.SIGXFSZ)
    real_rmtree, allowed = shutil.rmtree, (deletable or Path(cwd).parent).resolve()

    def guarded_rmtree(path, *args, **kwargs):
        if not Path(path).resolve().is_relative_to(allowed):
            raise RuntimeError(f"test guard: refusing to delete {path} outside {allowed}")
        return real_rmtree(path, *args, **kwargs)

    sys.argv = ["benchbox", *argv]
    os.chdir(cwd)
    os.environ.update(env or {})
    shutil.rmtree = guarded_rmtree
    code, escaped = None, ""
    try:
        if stdout is not None:
            sys.stdout = open(stdout, "w")  # noqa: SIM115 - closed below
        if file_limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, old_limit[1]))
        cli.main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - what a user would have seen as a traceback
        escaped = traceback.format_exc()
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_xfsz)
        if sys.stdout is not old_stdout:
            try:
                sys.stdout.close()
            except OSError:
                pass
        sys.stdout = old_stdout
        shutil.rmtree = real_rmtree
        os.environ.clear()
        os.environ.update(old_env)
        sys.argv = old_argv
        os.chdir(old_cwd)
        err.quiet = False
    return Outcome(code, capture(), escaped)


def files_under(folder: Path) -> dict[str, int]:
    """Every file under ``folder`` with its modification time, but output locks (empty ``.NAME.lock``)."""
    return {str(p): p.stat().st_mtime_ns for p in folder.rglob("*")
            if p.is_file() and not (p.name.startswith(".") and p.name.endswith(".lock"))}


def listing(folder: Path) -> tuple[set[str], set[str]]:
    """(every file, link or device under ``folder`` with its modification time and type, every folder), output
    locks excepted: what "nothing touched" compares before and after a command."""
    entries = [p for p in folder.rglob("*") if not (p.name.startswith(".") and p.name.endswith(".lock"))]
    files = {f"{p}@{p.lstat().st_mtime_ns}:{p.lstat().st_mode}" for p in entries if p.is_symlink() or not p.is_dir()}
    return files, {str(p) for p in entries if p.is_dir() and not p.is_symlink()}


def touched(before: tuple[set[str], set[str]], after: tuple[set[str], set[str]]) -> set[str]:
    """Files created, changed (content time or type) or removed, and folders removed, between two listings;
    a new empty folder (an output folder made before the command stopped) is not counted."""
    return (before[0] ^ after[0]) | (before[1] - after[1])


@dataclass
class Verdict:
    one_line: bool
    traceback: bool
    partial_write: bool
    detail: str
    #: paths touched under the case folder (:func:`touched`)
    touched: int = 0


@contextmanager
def registered_meanwhile() -> Iterator[None]:
    """Encoders and tasks registered in the block are unregistered at its end (other tests list the registry)."""
    from benchbox.registry import ENCODERS, TASKS

    before = {registry: set(registry.names()) for registry in (ENCODERS, TASKS)}
    try:
        yield
    finally:
        for registry, names in before.items():
            for name in set(registry.names()) - names:
                registry.unregister(name)


def judge(case: Case, tmp: Path, capture) -> Verdict:
    """Build ``case`` in ``tmp``, run it, and say whether it failed as issue #16 asks."""
    with registered_meanwhile():
        return _judge(case, tmp, capture)


def _judge(case: Case, tmp: Path, capture) -> Verdict:
    argv, named = case.build(tmp)
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    before, listed = files_under(tmp), listing(tmp)
    outcome = run_cli(argv, work, capture, stdout=case.stdout, env=case.env, file_limit=case.file_limit)
    after, changed = files_under(tmp), touched(listed, listing(tmp))
    errors = outcome.error_lines()
    lines = outcome.stderr.splitlines()
    tb = bool(outcome.traceback) or "Traceback" in outcome.stderr
    one_line = (outcome.code == 2 and len(errors) == 1 and lines[-1] == errors[0] and not tb
                and str(named) in errors[0])
    detail = outcome.traceback.strip().splitlines()[-1] if outcome.traceback else outcome.stderr.strip()
    return Verdict(one_line, tb, after != before, f"exit {outcome.code}: {detail[-600:]}", len(changed))


# --- the table -----------------------------------------------------------------------------------------------

@dataclass
class Case:
    loader: str
    name: str
    #: writes the hostile input under the case folder; returns the command line and what the error must name
    build: Callable[[Path], tuple[list[str], str]]
    #: why this case still fails (in a module owned elsewhere); the test expects the failure
    known: str = ""
    #: run with standard output sent to this file (``/dev/full``), these environment variables, this file size limit
    stdout: str | None = None
    env: dict[str, str] | None = None
    file_limit: int | None = None

    @property
    def id(self) -> str:
        return f"{self.loader}/{self.name}"


CASES: list[Case] = []


def case(loader: str, name: str, known: str = "", **run: object):
    def add(build):
        CASES.append(Case(loader, name, build, known, **run))
        return build
    return add


# image features through retrieval: eval hostile-toy --task retrieval --features F

def _retrieval(tmp: Path, features: Path) -> list[str]:
    return ["eval", "hostile-toy", "--task", "retrieval", "--features", str(features),
            "--data-dir", str(make_root(tmp)), "--runs-dir", str(tmp / "runs"), "--no-cache"]


def _features_case(name: str, suffix: str, spoil: Callable[[Path], None], named: Callable[[Path], Path] = lambda p: p):
    @case("image-features", name)
    def build(tmp: Path):
        path = features_file(tmp, suffix)
        spoil(path)
        return _retrieval(tmp, path), str(named(path))


def _npz(**arrays) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)
    return write


_GOOD = np.random.default_rng(0).standard_normal((N_IMAGES, DIM)).astype(np.float32)
_features_case("npz truncated", ".npz", lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]))
_features_case("npz empty file", ".npz", lambda p: p.write_bytes(b""))
_features_case("npz not a zip", ".npz", lambda p: p.write_text("ids,features\n"))
_features_case("npz zip without arrays", ".npz", lambda p: zipfile.ZipFile(p, "w").close())
_features_case("npz ids not UTF-8", ".npz", _npz(ids=np.array([b"img\xe9%d" % i for i in range(N_IMAGES)]), features=_GOOD))
_features_case("npz metadata not UTF-8", ".npz", _npz(ids=np.array(IDS), features=_GOOD, metadata=np.array(b'{"a": "\xe9"}')))
_features_case("npz metadata nested 100000 deep", ".npz", _npz(ids=np.array(IDS), features=_GOOD, metadata=np.array("[" * 100000 + "]" * 100000)))
_features_case("npz object ids", ".npz", _npz(ids=np.array(IDS, dtype=object), features=_GOOD))
_features_case("npz object features", ".npz", _npz(ids=np.array(IDS), features=_GOOD.astype(object)))
_features_case("npz no features array", ".npz", _npz(ids=np.array(IDS)))
_features_case("npz features 1-D", ".npz", _npz(ids=np.array(IDS), features=_GOOD[:, 0]))
_features_case("npz features 3-D", ".npz", _npz(ids=np.array(IDS), features=_GOOD[:, :, None]))
_features_case("npz features int", ".npz", _npz(ids=np.array(IDS), features=np.ones((N_IMAGES, DIM), np.int64)))
_features_case("npz features strings", ".npz", _npz(ids=np.array(IDS), features=np.full((N_IMAGES, DIM), "x")))
_features_case("npz features width 0", ".npz", _npz(ids=np.array(IDS), features=np.zeros((N_IMAGES, 0), np.float32)))
_features_case("npz no rows", ".npz", _npz(ids=np.array([], dtype=str), features=np.zeros((0, DIM), np.float32)))
_features_case("npz ids 2-D", ".npz", _npz(ids=np.array(IDS).reshape(2, -1), features=_GOOD))
_features_case("npz ids numbers", ".npz", _npz(ids=np.arange(N_IMAGES), features=_GOOD))
_features_case("npz fewer ids than rows", ".npz", _npz(ids=np.array(IDS[:-1]), features=_GOOD))
_features_case("npz NaN row", ".npz", _npz(ids=np.array(IDS), features=np.where(np.eye(N_IMAGES, DIM) > 0, np.nan, _GOOD)))
_features_case("npy empty file", ".npy", lambda p: p.write_bytes(b""))
_features_case("npy truncated", ".npy", lambda p: p.write_bytes(p.read_bytes()[:-7]))
_features_case("npy header only", ".npy", lambda p: p.write_bytes(p.read_bytes()[:128]))
_features_case("npy not numpy", ".npy", lambda p: p.write_text("0.1 0.2\n"))
_features_case("npy object array", ".npy", lambda p: np.save(p, _GOOD.astype(object), allow_pickle=True))
_features_case("npy int", ".npy", lambda p: np.save(p, np.ones((N_IMAGES, DIM), np.int32)))
_features_case("npy 1-D", ".npy", lambda p: np.save(p, _GOOD[:, 0]))
_features_case("npy ids not UTF-8", ".npy", lambda p: p.with_suffix(".ids.txt").write_bytes(
    b"".join(b"img\xe9%d\n" % i for i in range(N_IMAGES))), lambda p: p.with_suffix(".ids.txt"))
_features_case("npy ids missing", ".npy", lambda p: p.with_suffix(".ids.txt").unlink())
_features_case("npy ids one short", ".npy", lambda p: p.with_suffix(".ids.txt").write_text("\n".join(IDS[:-1])))
_features_case("npy metadata not UTF-8", ".npy", lambda p: p.with_suffix(".meta.json").write_bytes(b'{"a": "\xe9"}'),
               lambda p: p.with_suffix(".meta.json"))
_features_case("npy metadata malformed", ".npy", lambda p: p.with_suffix(".meta.json").write_text('{"a": '),
               lambda p: p.with_suffix(".meta.json"))
_features_case("npy metadata nested 100000 deep", ".npy", lambda p: p.with_suffix(".meta.json").write_text(
    "[" * 100000 + "]" * 100000), lambda p: p.with_suffix(".meta.json"))
_features_case("h5 empty file", ".h5", lambda p: p.write_bytes(b""))
_features_case("h5 truncated", ".h5", lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]))


@case("image-features", "unknown suffix")
def _csv(tmp: Path):
    path = features_file(tmp).rename(tmp / "features.csv")
    return _retrieval(tmp, path), str(path)


_features_case("missing file", ".npz", lambda p: p.unlink())
_features_case("a folder", ".npz", lambda p: (p.unlink(), p.mkdir()))


@case("image-features", "h5 metadata not UTF-8")
def _h5_meta(tmp: Path):
    import h5py

    path = features_file(tmp, ".h5")
    with h5py.File(path, "a") as h5:
        h5.attrs["benchbox_metadata"] = np.void(b'{"a": "\xe9"}')
    return _retrieval(tmp, path), str(path)


@case("image-features", "h5 ids not UTF-8")
def _h5_ids(tmp: Path):
    import h5py

    path = tmp / "features.h5"
    with h5py.File(path, "w") as h5:
        h5.create_dataset("ids", data=np.array([b"img\xe9%d" % i for i in range(N_IMAGES)]))
        h5.create_dataset("features", data=_GOOD)
    return _retrieval(tmp, path), str(path)


@case("image-features", "features narrower than the encoder's images")
def _narrow(tmp: Path):
    path = tmp / "features.npz"
    save_features(path, IDS, _GOOD[:, :2])
    return _retrieval(tmp, path), "hostile-toy"


# features extract (benchbox features extract)

def _extract(tmp: Path, *extra: str) -> list[str]:
    return ["features", "extract", "--weights", "random", *extra]


@case("features-extract", "image folder missing")
def _no_images(tmp: Path):
    return _extract(tmp, "--images", str(tmp / "nope"), "--out", str(tmp / "f.npz")), str(tmp / "nope")


@case("features-extract", "image folder without images")
def _no_jpgs(tmp: Path):
    (tmp / "imgs").mkdir()
    (tmp / "imgs" / "notes.txt").write_text("x")
    return _extract(tmp, "--images", str(tmp / "imgs"), "--out", str(tmp / "f.npz")), str(tmp / "imgs")


@case("features-extract", "weights file truncated")
def _bad_weights(tmp: Path):
    (tmp / "imgs").mkdir()
    (tmp / "w.pt").write_bytes(b"PK\x03\x04 truncated")
    return (["features", "extract", "--weights", str(tmp / "w.pt"), "--images", str(tmp / "imgs"),
             "--out", str(tmp / "f.npz")], str(tmp / "w.pt"))


@case("features-extract", "resume a truncated output")
def _bad_resume(tmp: Path):
    from PIL import Image

    (tmp / "imgs").mkdir()
    Image.new("RGB", (40, 40)).save(tmp / "imgs" / "a.jpg")
    out = features_file(tmp, ".npz")
    out.write_bytes(out.read_bytes()[:100])
    return _extract(tmp, "--images", str(tmp / "imgs"), "--out", str(out), "--resume"), str(out)


@case("features-extract", "unknown output format")
def _bad_out(tmp: Path):
    from PIL import Image

    (tmp / "imgs").mkdir()
    Image.new("RGB", (40, 40)).save(tmp / "imgs" / "a.jpg")
    return _extract(tmp, "--images", str(tmp / "imgs"), "--out", str(tmp / "f.csv")), str(tmp / "f.csv")


# captions: Karpathy JSON (MSCOCO retrieval) and the Flickr8k files

def _coco(tmp: Path, spoil: Callable[[Path], None]) -> tuple[list[str], str]:
    argv = _retrieval(tmp, features_file(tmp))
    argv[3] = "retrieval-coco-5k"
    path = tmp / "root" / "coco" / "dataset_coco.json"
    spoil(path)
    return argv, str(path)


def _json_case(name: str, spoil: Callable[[Path], None]):
    case("captions", name)(lambda tmp: _coco(tmp, spoil))


def _edit_json(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def spoil(path: Path) -> None:
        content = json.loads(path.read_text())
        change(content)
        path.write_text(json.dumps(content))
    return spoil


_json_case("karpathy nested 100000 deep", lambda p: p.write_text('{"images": ' + "[" * 100000 + "]" * 100000 + "}"))
_json_case("karpathy truncated", lambda p: p.write_bytes(p.read_bytes()[:200]))
_json_case("karpathy empty", lambda p: p.write_bytes(b""))
_json_case("karpathy not UTF-8", lambda p: p.write_bytes(p.read_bytes().replace(b"picture", b"pictur\xe9", 1)))
_json_case("karpathy a list", lambda p: p.write_text("[]"))
_json_case("karpathy images an object", _edit_json(lambda c: c.update(images={})))
_json_case("karpathy image without sentences", _edit_json(lambda c: c["images"][0].pop("sentences")))
_json_case("karpathy sentence a string", _edit_json(lambda c: c["images"][1]["sentences"].__setitem__(0, "x")))
_json_case("karpathy tokens a string", _edit_json(lambda c: c["images"][1]["sentences"][0].update(tokens="a b")))
_json_case("karpathy four captions", _edit_json(lambda c: c["images"][2]["sentences"].pop()))
_json_case("karpathy empty caption", _edit_json(lambda c: c["images"][2]["sentences"][3].update(tokens=[])))
_json_case("karpathy filename twice", _edit_json(lambda c: c["images"][3].update(filename=IDS[0])))
_json_case("karpathy filename a number", _edit_json(lambda c: c["images"][3].update(filename=[1])))
_json_case("karpathy of flickr8k", _edit_json(lambda c: c.update(dataset="flickr8k")))


def _flickr(tmp: Path, name: str, data: bytes) -> tuple[list[str], str]:
    argv = _retrieval(tmp, features_file(tmp))
    path = tmp / "root" / "flickr8k" / name
    path.write_bytes(data)
    return argv, str(path)


for _name, _file, _data in [
    ("flickr8k token line without tab", "Flickr8k.token.txt", b"img0.jpg#0 a caption\n"),
    ("flickr8k tokens not UTF-8", "Flickr8k.token.txt", b"img0.jpg#0\ta caf\xe9\n"),
    ("flickr8k tokens empty", "Flickr8k.token.txt", b""),
    ("flickr8k caption #7", "Flickr8k.token.txt", b"img0.jpg#7\ta caption\n"),
    ("flickr8k split list empty", "Flickr_8k.testImages.txt", b"\n"),
    ("flickr8k split list not UTF-8", "Flickr_8k.testImages.txt", b"img\xe90.jpg\n"),
    ("flickr8k split list repeats an image", "Flickr_8k.testImages.txt", b"img0.jpg\nimg0.jpg\n"),
]:
    case("flickr8k", _name)(lambda tmp, f=_file, d=_data: _flickr(tmp, f, d))


# word vectors: glove-bow -e vectors=FILE (and an .npy matrix with its vocabulary)

def _glove(tmp: Path, path: Path, *extra: str) -> list[str]:
    return ["eval", "glove-bow", "-e", f"vectors={path}", *extra, "--task", "sickr-cosine",
            "--runs-dir", str(tmp / "runs"), "--no-cache"]


def _vectors_case(name: str, data: bytes, suffix: str = ".txt"):
    @case("word-vectors", name)
    def build(tmp: Path):
        path = tmp / f"vectors{suffix}"
        path.write_bytes(data)
        return _glove(tmp, path), str(path)


_vectors_case("text empty", b"")
_vectors_case("text blank lines only", b"\n\n  \n")
_vectors_case("text header only", b"3 2\n")
_vectors_case("text header count wrong", b"3 2\na 0.1 0.2\nb 0.3 0.4\n")
_vectors_case("text not UTF-8", b"caf\xe9 0.1 0.2\nthe 0.3 0.4\n")
_vectors_case("text ragged line", b"the 0.1 0.2\na 0.3\nof 0.5 0.6\n")
_vectors_case("text not numbers", b"the 0.1 0.2\na x y\n")
_vectors_case("text NaN", b"the 0.1 nan\na 0.3 0.4\n")
_vectors_case("text word twice", b"the 0.1 0.2\nthe 0.3 0.4\n")
_vectors_case("text a word only", b"the\n")
_vectors_case("binary garbage", b"\x00\x01garbage", ".bin")
_vectors_case("binary empty", b"", ".bin")
_vectors_case("missing file", b"", ".txt")
CASES[-1].build = lambda tmp: (_glove(tmp, tmp / "nope.txt"), str(tmp / "nope.txt"))


def _npy_vectors_case(name: str, matrix_bytes: Callable[[Path], None], vocab: bytes, named: str = "npy"):
    @case("word-vectors", name)
    def build(tmp: Path):
        path = tmp / "vectors.npy"
        matrix_bytes(path)
        path.with_suffix(".vocab.txt").write_bytes(vocab)
        return _glove(tmp, path), {"npy": str(path), "vocab": str(path.with_suffix(".vocab.txt"))}.get(named, named)


_two = lambda p: np.save(p, np.ones((2, 3), np.float32))  # noqa: E731
_npy_vectors_case("npy vocabulary latin-1", _two, b"caf\xe9\nthe\n", "vocab")
_npy_vectors_case("npy empty file", lambda p: p.write_bytes(b""), b"a\nb\n")
_npy_vectors_case("npy truncated", lambda p: (_two(p), p.write_bytes(p.read_bytes()[:-5])), b"a\nb\n")
_npy_vectors_case("npy object array", lambda p: np.save(p, np.ones((2, 3)).astype(object), allow_pickle=True), b"a\nb\n")
_npy_vectors_case("npy int matrix", lambda p: np.save(p, np.ones((2, 3), np.int64)), b"a\nb\n")
_npy_vectors_case("npy 1-D", lambda p: np.save(p, np.ones(2, np.float32)), b"a\nb\n")
_npy_vectors_case("npy vocabulary one short", _two, b"a\n")
_npy_vectors_case("npy no rows", lambda p: np.save(p, np.ones((0, 3), np.float32)), b"")
_npy_vectors_case("npy NaN", lambda p: np.save(p, np.full((2, 3), np.nan, np.float32)), b"a\nb\n", "glove-bow")


@case("word-vectors", "npy vocabulary missing")
def _no_vocab(tmp: Path):
    path = tmp / "vectors.npy"
    _two(path)
    return _glove(tmp, path), str(path)


# char-RNN checkpoints and their character vocabulary: eval RUN_FOLDER

def _char_run(tmp: Path, change: Callable[[dict], None] | None = None, raw: bytes | None = None,
              feature_dim: int | None = DIM) -> tuple[Path, Path]:
    from benchbox.encoders.char_rnn_net import CharRNNNet, NetConfig, save_snapshot
    from benchbox.encoders.char_vocab import CharVocab

    run = tmp / "model"
    (run / "snapshots").mkdir(parents=True)
    snap = run / "snapshots" / "epoch-004.pt"
    torch.manual_seed(0)
    save_snapshot(CharRNNNet(CharVocab.build(["a dog runs ."]), NetConfig(hidden=3, feature_dim=feature_dim)), snap)
    if change is not None:
        payload = torch.load(snap, weights_only=True)
        change(payload)
        torch.save(payload, snap)
    if raw is not None:
        snap.write_bytes(raw)
    manifest = {"kind": "train", "encoder": {"name": "char-gru"}, "ensemble": ["snapshots/epoch-004.pt"]}
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run, snap


def _char_case(name: str, change=None, raw: Callable[[bytes], bytes] | None = None, named: str | None = None):
    @case("char-checkpoint", name)
    def build(tmp: Path):
        run, snap = _char_run(tmp, change)
        if raw is not None:
            snap.write_bytes(raw(snap.read_bytes()))
        return (["eval", str(run), "--task", "sickr-cosine", "--runs-dir", str(tmp / "runs"), "--no-cache"],
                named or str(snap))


_char_case("vocabulary latin-1 bytes", lambda p: p.update(vocab=[c.encode("latin-1") for c in "é" + "abc"]))
_char_case("vocabulary words not characters", lambda p: p.update(vocab=["dog", "runs"]))
_char_case("vocabulary repeats a character", lambda p: p.update(vocab=["a", "a", "b"]))
_char_case("vocabulary a number", lambda p: p.update(vocab=7))
_char_case("vocabulary missing", lambda p: p.pop("vocab"))
_char_case("vocabulary shorter than the embedding", lambda p: p.update(vocab=p["vocab"][:-2]))
_char_case("config unknown rnn", lambda p: p["config"].update(rnn="transformer"))
_char_case("config a list", lambda p: p.update(config=[1, 2]))
_char_case("config hidden a string", lambda p: p["config"].update(hidden="big"))
_char_case("state dict a list", lambda p: p.update(state_dict=[1]))
_char_case("weights NaN", lambda p: [t.fill_(float("nan")) for t in p["state_dict"].values() if t.is_floating_point()],
           named="char-gru")
_char_case("truncated", raw=lambda b: b[: len(b) // 2])
_char_case("empty", raw=lambda b: b"")
_char_case("a pickled object", raw=lambda b: b"\x80\x04\x95" + b"cos\nsystem\n")


@case("char-checkpoint", "manifest names no snapshot file")
def _no_snapshot(tmp: Path):
    run, snap = _char_run(tmp)
    snap.unlink()
    return ["eval", str(run), "--task", "sickr-cosine", "--runs-dir", str(tmp / "runs")], str(snap)


# plugin encoders registered at run time

def _plugin_case(name: str, returns, dim: int = DIM):
    @case("plugin-encoder", name)
    def build(tmp: Path):
        from benchbox.registry import ENCODERS

        encoder = f"hostile-{name.replace(' ', '-')}"
        ENCODERS.register(encoder, _plugin(encoder, returns, dim))
        return ["eval", encoder, "--task", "sickr-cosine", "--runs-dir", str(tmp / "runs"), "--no-cache"], encoder


_plugin_case("wrong width", lambda s: np.ones((len(s), DIM + 1)))
_plugin_case("one row short", lambda s: np.ones((len(s) - 1, DIM)))
_plugin_case("one vector for all", lambda s: np.ones(DIM))
_plugin_case("ragged rows", lambda s: [np.ones(DIM)] + [np.ones(DIM + 1)] * (len(s) - 1))
_plugin_case("strings", lambda s: [["x"] * DIM for _ in s])
_plugin_case("None", lambda s: None)
_plugin_case("NaN", lambda s: np.full((len(s), DIM), np.nan))
_plugin_case("complex", lambda s: np.ones((len(s), DIM), np.complex64))
_plugin_case("dim zero", lambda s: np.ones((len(s), 0)), dim=0)


# data files of the text tasks, copied from the shared data root and spoiled

#: loaders whose cases copy files of the shared data root
DATA_LOADERS = ("sts", "sick", "stsb", "transfer")
STS12 = "senteval/downstream/STS/STS12-en-test"
SICK = "senteval/downstream/SICK"
STSB = "senteval/downstream/STS/STSBenchmark"
MR = "senteval/downstream/MR"


def _data_case(loader: str, name: str, task: str, files: tuple[str, ...], target: str, spoil: Callable[[bytes], bytes],
               known: str = ""):
    @case(loader, name, known)
    def build(tmp: Path):
        root = copy_data(tmp, *files)
        path = root / target
        path.write_bytes(spoil(path.read_bytes()))
        return ["eval", "glove-bow", "--task", task, "--data-dir", str(root), "--runs-dir", str(tmp / "runs"),
                "--no-cache"], str(path)


_sts12 = tuple(f"{STS12}/STS.{kind}.{s}.txt" for s in ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN",
                                                      "surprise.SMTnews") for kind in ("input", "gs"))
_data_case("sts", "input not UTF-8", "sts12", _sts12, f"{STS12}/STS.input.MSRpar.txt", lambda b: b"caf\xe9" + b)
_data_case("sts", "gold not a number", "sts12", _sts12, f"{STS12}/STS.gs.MSRvid.txt", lambda b: b"high\n" + b[b.index(b"\n") + 1:])
_data_case("sts", "input one column", "sts12", _sts12, f"{STS12}/STS.input.MSRvid.txt", lambda b: b"just one sentence\n" + b)
_data_case("sts", "input empty", "sts12", _sts12, f"{STS12}/STS.input.MSRvid.txt", lambda b: b"")


@case("sts", "gold all equal")
def _sts_constant_gold(tmp: Path):
    root = copy_data(tmp, *_sts12)
    gold = root / STS12 / "STS.gs.MSRpar.txt"
    gold.write_bytes(b"".join(b"3.0\n" if line.strip() else b"\n" for line in gold.read_bytes().splitlines()))
    return ["eval", "glove-bow", "--task", "sts12", "--data-dir", str(root), "--runs-dir", str(tmp / "runs"),
            "--no-cache"], "task sts12, subset MSRpar (data file STS.gs.MSRpar.txt"


_sick = tuple(f"{SICK}/{f}" for f in ("SICK_train.txt", "SICK_trial.txt", "SICK_test_annotated.txt"))
_data_case("sick", "test not UTF-8", "sickr-cosine", _sick, f"{SICK}/SICK_test_annotated.txt", lambda b: b.replace(b"man", b"m\xe9n", 1))
_data_case("sick", "test header only", "sickr-cosine", _sick, f"{SICK}/SICK_test_annotated.txt", lambda b: b[: b.index(b"\n") + 1])
_data_case("sick", "score not a number", "sickr-cosine", _sick, f"{SICK}/SICK_test_annotated.txt",
           lambda b: b.replace(b"\t4.5\t", b"\tfour\t", 1))
_data_case("sick", "test line repeated", "sickr-cosine", _sick, f"{SICK}/SICK_test_annotated.txt",
           lambda b: b + b.splitlines(keepends=True)[1])
_stsb = tuple(f"{STSB}/sts-{s}.csv" for s in ("train", "dev", "test"))
_data_case("stsb", "test not UTF-8", "stsb-cosine", _stsb, f"{STSB}/sts-test.csv", lambda b: b"\xe9" + b)
_data_case("stsb", "test empty", "stsb-cosine", _stsb, f"{STSB}/sts-test.csv", lambda b: b"")
_data_case("stsb", "test line repeated", "stsb-cosine", _stsb, f"{STSB}/sts-test.csv",
           lambda b: b + b.splitlines(keepends=True)[0])
_data_case("stsb", "test too few columns", "stsb-cosine", _stsb, f"{STSB}/sts-test.csv", lambda b: b"a\tb\n" + b)
_mr = (f"{MR}/rt-polarity.pos", f"{MR}/rt-polarity.neg")
_data_case("transfer", "mr positives empty", "mr", _mr, f"{MR}/rt-polarity.pos", lambda b: b"\n")
_data_case("transfer", "mr empty", "mr", _mr, f"{MR}/rt-polarity.neg", lambda b: b"")


# run folders (the cases of tests/storage/test_hostile_run_folders.py, through compare)

def _run_folder_case(name: str):
    @case("run-folder", name)
    def build(tmp: Path):
        from tests.comparison.test_compare import make_run
        from tests.storage.test_hostile_run_folders import CASES as RUN_CASES

        spoil, named = RUN_CASES[name]
        a, b = make_run(tmp, "a", 1.0, 0, 0.8), make_run(tmp, "b", 1.5, 2, 0.75, seed=3)
        spoil(b)
        return ["compare", str(a), str(b), "--task", "sts12", "--json", str(tmp / "c.json")], str(b / named)


for _name in ("manifest a JSON list", "manifest not UTF-8", "empty metrics", "empty per-item file"):
    _run_folder_case(_name)


# train infersent: the SentEval-style NLI folder and the word vectors

def _nli(tmp: Path, spoil: Callable[[Path], Path], *extra: str) -> tuple[list[str], str]:
    nli = tmp / "nli"
    nli.mkdir()
    for split in ("train", "dev", "test"):
        (nli / f"s1.{split}").write_text("a dog runs .\na cat sits .\n")
        (nli / f"s2.{split}").write_text("an animal moves .\na dog sleeps .\n")
        (nli / f"labels.{split}").write_text("entailment\ncontradiction\n")
    named = spoil(nli)
    return (["train", "infersent", "--nli", str(nli), "--hidden", "2", "--epochs", "1", *extra,
             "--out", str(tmp / "run")], str(named))


def _nli_case(name: str, spoil: Callable[[Path], Path], *extra: str):
    case("nli-training", name)(lambda tmp: _nli(tmp, spoil, *extra))


def _write(name: str, data: bytes) -> Callable[[Path], Path]:
    def spoil(nli: Path) -> Path:
        (nli / name).write_bytes(data)
        return nli / name
    return spoil


_nli_case("s1 not UTF-8", _write("s1.train", b"caf\xe9 .\na cat .\n"))
_nli_case("labels unknown", _write("labels.dev", b"entailment\nmaybe\n"))
_nli_case("s2 one line short", _write("s2.train", b"one line .\n"))
_nli_case("train split empty", lambda nli: [_write(f"{n}.train", b"")(nli) for n in ("s1", "s2", "labels")][0])
_nli_case("dev split missing", lambda nli: ((nli / "s2.dev").unlink(), nli / "s2.dev")[1])


@case("nli-training", "word vectors empty")
def _nli_vectors(tmp: Path):
    (tmp / "v.txt").write_bytes(b"")
    return _nli(tmp, lambda nli: tmp / "v.txt", "--vectors", str(tmp / "v.txt"))


# issue #26: cache clear, output targets, encoder calls, the image branch, nested JSON, environment, options

def device(tmp: Path, name: str) -> Path:
    """``/dev/<name>`` (``null`` or ``full``) as a target no regression can replace: as root (who may rename over
    ``/dev``) a device node of our own with the same numbers, else the system's (``/dev`` is not writable then).
    Running the output-target tests as root on the old code replaced the system's /dev/null and /dev/full."""
    import stat

    system = Path("/dev") / name
    if os.geteuid() != 0:
        return system
    own = tmp / f"dev-{name}"
    if not own.exists():
        os.mknod(own, 0o666 | stat.S_IFCHR, os.stat(system).st_rdev)
    return own


def _cache_with_one_encoder(tmp: Path) -> Path:
    from benchbox.storage.cache import EmbeddingCache

    cache = tmp / "parent" / "cache"
    EmbeddingCache(cache).embed("a" * 20, ["one", "two"], lambda s: np.ones((len(s), 2), np.float32))
    (tmp / "parent" / "precious.txt").write_text("not the cache's")
    return cache


def _clear_case(name: str, argument: Callable[[Path, Path], str], named: str | None = None):
    @case("cache-clear", name)
    def build(tmp: Path):
        cache = _cache_with_one_encoder(tmp)
        given = argument(tmp, cache)
        return ["cache", "clear", "a" * 20, given, "--cache-dir", str(cache)], named or given


_clear_case("a trained model folder", lambda tmp, cache: str(_char_run(tmp)[0]))
_clear_case("..", lambda tmp, cache: "..")
_clear_case("/", lambda tmp, cache: "/")
_clear_case("the cache's parent by path", lambda tmp, cache: str(cache.parent))
_clear_case("an encoder folder by path", lambda tmp, cache: str(cache / ("a" * 20)))


@case("cache-clear", "a folder holding other files")
def _foreign_folder(tmp: Path):
    cache = _cache_with_one_encoder(tmp)
    (cache / "photos").mkdir()
    (cache / "photos" / "cat.jpg").write_bytes(b"jpg")
    return ["cache", "clear", "photos", "--cache-dir", str(cache)], "photos"


@case("cache-clear", "all, in a folder that is not a cache")
def _unmarked(tmp: Path):
    home = tmp / "home"
    (home / "project").mkdir(parents=True)
    (home / "project" / "notes.txt").write_text("mine")
    return ["cache", "clear", "--cache-dir", str(home)], str(home)


@case("output-target", "--json a folder")
def _json_folder(tmp: Path):
    (tmp / "out").mkdir()
    return ["list", "tasks", "--json", str(tmp / "out")], str(tmp / "out")


@case("output-target", "--json a full device")
def _json_full(tmp: Path):
    return ["list", "tasks", "--json", str(device(tmp, "full"))], "No space left on device"


@case("output-target", "--json - to a full standard output", stdout="/dev/full")
def _json_stdout_full(tmp: Path):
    return ["list", "tasks", "--json", "-"], "standard output: No space left on device"


@case("output-target", "a table to a full standard output", stdout="/dev/full")
def _table_stdout_full(tmp: Path):
    return ["list", "encoders"], "standard output: No space left on device"


@case("output-target", "--csv - to a full standard output", stdout="/dev/full")
def _csv_stdout_full(tmp: Path):
    (tmp / "runs").mkdir()
    return ["runs", str(tmp / "runs"), "--csv", "-"], "standard output: No space left on device"


@case("output-target", "--json past the file size limit", file_limit=1000)
def _json_too_large(tmp: Path):
    (tmp / "tasks.json").write_text("old")
    return ["list", "tasks", "--json", str(tmp / "tasks.json")], f"{tmp / 'tasks.json'}: File too large"


@case("output-target", "the cache past the file size limit", file_limit=20_000)
def _cache_too_large(tmp: Path):
    return (["eval", "tests.helpers:LetterCounts", "-t", "stsb-cosine", "--cache-dir", str(tmp / "cache"),
             "--no-save"], "File too large")


class _Raising(Encoder):
    """A text encoder whose call ``fails`` raises ``exc``."""

    fails, exc = "", RuntimeError("boom")

    def __init__(self) -> None:
        if self.fails == "construction":
            raise self.exc

    @property
    def dim(self) -> int:
        if self.fails == "dim":
            raise self.exc
        return DIM

    def config(self):
        return {}

    def weights_digest(self) -> str:
        if self.fails == "fingerprint":
            raise self.exc
        return "raising"

    def _encode(self, sentences, batch_size):
        if self.fails == "encode":
            raise self.exc
        return ToyGrounded._encode(self, sentences, batch_size)  # informative: the call, not the output, fails


def _call_case(call: str, exc: BaseException):
    what = "sys.exit(0)" if isinstance(exc, SystemExit) else "raises"

    @case("encoder-call", f"{call} {what}")
    def build(tmp: Path):
        from benchbox.registry import ENCODERS

        encoder = f"hostile-{call}-{what}".replace("(0)", "").replace(".", "-")
        ENCODERS.register(encoder, type("R", (_Raising,), {"name": encoder, "fails": call, "exc": exc}))
        return ["eval", encoder, "--task", "sickr-cosine", "--runs-dir", str(tmp / "runs"), "--no-cache"], encoder


for _call in ("construction", "dim", "fingerprint", "encode"):
    _call_case(_call, RuntimeError("boom"))
    _call_case(_call, SystemExit(0))


@case("encoder-call", "duck-typed fingerprint() raises")
def _duck_fingerprint(tmp: Path):
    from benchbox.registry import ENCODERS

    def broken(self):
        raise ValueError("no fingerprint today")

    ENCODERS.register("hostile-duck", type("Duck", (), {"encode": lambda self, s: np.ones((len(s), DIM)),
                                                        "fingerprint": broken})())
    return ["eval", "hostile-duck", "--task", "sickr-cosine", "--runs-dir", str(tmp / "runs")], "hostile-duck"


@case("encoder-call", "sys.exit(0) in the encoder's module")
def _module_exit(tmp: Path):
    (tmp / "hostile_exiting_module.py").write_text("import sys\nsys.exit(0)\n")
    sys.path.insert(0, str(tmp))
    return ["eval", "hostile_exiting_module:Model", "--task", "sickr-cosine", "--runs-dir", str(tmp / "runs")], \
        "hostile_exiting_module"


@case("encoder-call", "sys.exit(0) in an --include file")
def _include_exit(tmp: Path):
    (tmp / "hostile_exiting_include.py").write_text("import sys\nsys.exit(0)\n")
    return ["--include", str(tmp / "hostile_exiting_include.py"), "list", "encoders"], "hostile_exiting_include.py"


_plugin_case("a tuple (embeddings, extra)", lambda s: (np.ones((len(s), DIM)), {"extra": 1}))


def _branch_case(name: str, returns, constant_features: bool = False):
    @case("image-branch", name)
    def build(tmp: Path):
        from benchbox.registry import ENCODERS

        encoder = f"hostile-branch-{name.replace(' ', '-')}"
        ENCODERS.register(encoder, type("B", (ToyGrounded,), {
            "name": encoder, "encode_images": lambda self, f: returns(np.asarray(f, np.float32)[:, :DIM])}))
        path = features_file(tmp)
        if constant_features:
            save_features(path, IDS, np.ones((N_IMAGES, DIM)))
        argv = _retrieval(tmp, path)
        argv[1] = encoder
        return argv, encoder


_branch_case("a list", lambda f: [1.0, 2.0])
_branch_case("one row short", lambda f: f[:-1])
_branch_case("NaN", lambda f: np.full_like(f, np.nan))
_branch_case("zeros", lambda f: np.zeros_like(f))
_branch_case("raises", lambda f: 1 / 0)
_branch_case("constant image features", lambda f: f, constant_features=True)

_NESTED = "[" * 100_000 + "]" * 100_000


@case("nested-json", "run manifest")
def _nested_manifest(tmp: Path):
    run = tmp / "runs" / "r1"
    run.mkdir(parents=True)
    (run / "manifest.json").write_text(_NESTED)
    return ["leaderboard", str(tmp / "runs")], str(run / "manifest.json")


@case("nested-json", "neighbours file")
def _nested_neighbours(tmp: Path):
    from benchbox import run_tasks
    from tests.helpers import LetterCounts

    run = run_tasks(LetterCounts(), ["stsb-cosine"], cache=False).save(tmp / "runs")
    (tmp / "n.json").write_text(_NESTED)
    return ["report", str(run), "--neighbours", str(tmp / "n.json"), "--out", str(tmp / "r.md")], str(tmp / "n.json")


@case("environment", "BENCHBOX_DEBUG=maybe", env={"BENCHBOX_DEBUG": "maybe"})
def _debug_maybe(tmp: Path):
    return ["list", "tasks"], "$BENCHBOX_DEBUG"


@case("environment", "BENCHBOX_MAX_CHARS=lots", env={"BENCHBOX_MAX_CHARS": "lots"})
def _max_chars_lots(tmp: Path):
    return ["list", "tasks"], "$BENCHBOX_MAX_CHARS"


@case("environment", "BENCHBOX_DEBUG=no keeps one line", env={"BENCHBOX_DEBUG": "no"})
def _debug_no(tmp: Path):
    return ["eval", "no-such-encoder", "--task", "sickr-cosine", "--no-save"], "no-such-encoder"


def _ignored_case(flag: str, value: str, named: str):
    @case("ignored-option", f"{flag} {value} with sickr-cosine")
    def build(tmp: Path):
        return ["eval", "tests.helpers:LetterCounts", "-t", "sickr-cosine", "--runs-dir", str(tmp / "runs"), flag,
                value], named


_ignored_case("--device", "tpu", "unknown device 'tpu'")
_ignored_case("--retrieval-ci", "bogus", "--retrieval-ci bogus")
_ignored_case("--features", "f.npz", "--features f.npz")


@case("neighbours", "a constant encoder")
def _constant_neighbours(tmp: Path):
    from benchbox.registry import ENCODERS

    ENCODERS.register("hostile-constant", _plugin("hostile-constant", lambda s: np.ones((len(s), DIM))))
    return ["neighbours", "hostile-constant", "--query", "a dog", "--corpus", "flickr8k:test", "--data-dir",
            str(make_root(tmp)), "--no-cache"], "hostile-constant"


# --- the test ------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("hostile", CASES, ids=[c.id for c in CASES])
def test_hostile_input_is_one_line_and_writes_nothing(hostile, tmp_path, capsys):
    from benchbox.registry import ENCODERS

    if hostile.loader in DATA_LOADERS and not SHARED_DATA.is_dir():
        pytest.skip(f"set BENCHBOX_DATA to the shared data root: {hostile.loader} cases spoil copies of its files")
    ENCODERS.register(ToyGrounded.name, ToyGrounded)
    verdict = judge(hostile, tmp_path, lambda: capsys.readouterr().err)
    if hostile.known:
        assert not verdict.one_line, f"fixed now: drop the known reason ({hostile.known})"
        pytest.xfail(hostile.known)
    assert verdict.one_line and not verdict.traceback and not verdict.partial_write and not verdict.touched, \
        verdict.detail


def test_table_is_large_and_labelled_by_loader():
    assert len(CASES) >= 60 and len({c.id for c in CASES}) == len(CASES)


def test_untrained_char_model_hint_names_both_ways_to_train(tmp_path, capsys):
    outcome = run_cli(["eval", "char-gru", "--task", "sickr-cosine", "--runs-dir", str(tmp_path / "runs")], tmp_path,
                      lambda: capsys.readouterr().err)
    assert outcome.code == 2 and "--features FILE` with image features" in outcome.stderr
    assert "--visual cluster` with captions alone" in outcome.stderr


def test_caption_only_model_on_retrieval_says_features_cannot_help(tmp_path, capsys):
    from benchbox.registry import ENCODERS

    ENCODERS.register(ToyGrounded.name, ToyGrounded)
    run, _ = _char_run(tmp_path, feature_dim=None)
    argv = _retrieval(tmp_path, features_file(tmp_path))
    argv[1] = str(run)
    outcome = run_cli(argv, tmp_path, lambda: capsys.readouterr().err)
    assert outcome.code == 2 and "trained without images (--visual cluster): no --features can help" in outcome.stderr
    without = [a for i, a in enumerate(argv) if a != "--features" and argv[i - 1] != "--features"]
    outcome = run_cli(without, tmp_path, lambda: capsys.readouterr().err)
    assert outcome.code == 2 and "no --features can help" in outcome.stderr and "pass --features" not in outcome.stderr
    assert not (tmp_path / "runs").exists() or not files_under(tmp_path / "runs")

