"""Small encoders for tests: deterministic functions of the text whose outputs tests can predict."""

from __future__ import annotations

import textwrap
import zlib

import numpy as np

from benchbox.encoding.protocol import Encoder
from benchbox.task_contract.options import TaskOptions


class TableEncoder(Encoder):
    """Looks each sentence up in a fixed table of vectors; counts what it was asked to encode."""

    name = "table"

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = {k: np.asarray(v, dtype=np.float32) for k, v in table.items()}
        self.calls: list[list[str]] = []

    @property
    def dim(self) -> int:
        return len(next(iter(self.table.values())))

    def config(self):
        return {"table": sorted(self.table)}

    def weights_digest(self) -> str:
        return str(sorted((k, v.tolist()) for k, v in self.table.items()))

    def _encode(self, sentences, batch_size):
        self.calls.append(list(sentences))
        return np.stack([self.table[s] for s in sentences])


class LetterCounts(Encoder):
    """Counts of the letters a-z: a deterministic encoder with no weights file."""

    name = "letter-counts"

    @property
    def dim(self) -> int:
        return 26

    def config(self):
        return {"alphabet": "a-z"}

    def weights_digest(self) -> str:
        return "none"

    def _encode(self, sentences, batch_size):
        out = np.zeros((len(sentences), 26), np.float32)
        for i, sentence in enumerate(sentences):
            for ch in sentence.lower():
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += 1
        return out + 1e-3


class CountedLetters(LetterCounts):
    """:class:`LetterCounts` whose identity is known without building it (``identity_unloaded``), counting how often
    it is built (``builds``): a compare that only reuses runs must build none."""

    name = "counted-letters"
    builds = 0

    def __init__(self, alphabet: str = "a-z") -> None:
        type(self).builds += 1
        self.alphabet = alphabet

    def config(self):
        return {"alphabet": self.alphabet}

    @classmethod
    def identity_unloaded(cls, alphabet: str = "a-z"):
        return {"dim": 26, "config": {"alphabet": alphabet}, "weights_digest": "none"}


class CueWords(Encoder):
    """``scale`` × the counts of the ``cues`` words plus unit Gaussian noise seeded by the sentence (deterministic):
    a predictive embedding whose classes overlap a little, so that dev accuracy improves gradually, as SentEval's
    early stopping needs (on perfectly discrete features its first check is often final). Subclasses set ``name``,
    ``cues`` and ``scale``."""

    cues: tuple[str, ...] = ()
    scale: float = 1.0

    @property
    def dim(self) -> int:
        return len(self.cues)

    def config(self):
        return {}

    def weights_digest(self) -> str:
        return self.name

    def _encode(self, sentences, batch_size):
        rows = [self.scale * np.array([s.split().count(c) for c in self.cues])
                + np.random.default_rng(zlib.crc32(s.encode())).normal(size=len(self.cues)) for s in sentences]
        return np.array(rows, np.float32)


def task_options(**given) -> TaskOptions:
    """TaskOptions from keywords: the shared settings (``seed``, ``bootstrap``, ``device``) by name, any other keyword
    a task flag (``fix_stsb_labels=True`` is ``--fix-stsb-labels``)."""
    shared = {key: given.pop(key) for key in ("seed", "bootstrap", "device") if key in given}
    return TaskOptions(**shared, flags={key.replace("_", "-"): value for key, value in given.items()})


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """``benchbox ARGS`` in this process through ``main`` (its one-line errors and exit codes): exit code, standard
    output, standard error."""
    import sys

    from benchbox.cli import main

    old, sys.argv = sys.argv, ["benchbox", *args]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    finally:
        sys.argv = old
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def logged_on_two_threads(fit):
    """``fit(log=..., clock=...)`` run with torch at two threads and a fake clock that advances 4 s a reading;
    returns what ``fit`` returned, the lines it logged and torch's thread count as each was logged. Asserts that
    ``fit`` gave torch back its two threads."""
    import torch

    now, lines, threads = [0.0], [], []

    def clock() -> float:
        now[0] += 4.0
        return now[0]

    def log(line: str) -> None:
        lines.append(line)
        threads.append(torch.get_num_threads())

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        result = fit(log=log, clock=clock)
        assert torch.get_num_threads() == 2  # restored afterwards
    finally:
        torch.set_num_threads(before)
    return result, lines, threads


#: uid and gid of the unprivileged user the permission tests run commands as
NOBODY = 65534

#: Python for ``python -c AS_NOBODY ARGS...``: the benchbox command line with ARGS, run as ``nobody`` (root ignores
#: permission bits). Neither the interpreter's files nor this checkout need be readable by nobody (CI's clone and
#: virtual environment are not), so the child first imports, as root, every module of benchbox, its tasks and its
#: reports (of the encoders, GloVe-BOW's) and the libraries that commands import inside functions, and reads
#: the package's data manifest.
AS_NOBODY = textwrap.dedent(f"""
    import importlib, os, pkgutil, sys
    import benchbox, benchbox.reports, benchbox.tasks
    for package in (benchbox, benchbox.tasks, benchbox.reports):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not info.name.startswith(("benchbox.__main__", "benchbox.encoders")):
                importlib.import_module(info.name)
    # and what benchbox imports at first use (benchbox.lazy, functions' own imports): joblib's loky needs
    # multiprocessing.synchronize, which this sandbox's nobody cannot load
    for module in ("benchbox.encoders.glove_bow", "scipy.stats", "torch", "gensim.models", "h5py",
                   "matplotlib.pyplot", "encodings.latin_1", "encodings.utf_8_sig", "encodings.ascii", "pandas",
                   "joblib", "threadpoolctl", "sklearn.linear_model"):
        importlib.import_module(module)
    from benchbox.data.root import known_files
    known_files()  # the package's data manifest, read once and kept
    os.setgid({NOBODY})
    os.setuid({NOBODY})
    from benchbox.cli import main
    sys.argv = ["benchbox", *sys.argv[1:]]
    main()
""")


def markdown_table(doc: str, heading: str) -> list[list[str]]:
    """The cells of the first markdown table in ``doc`` from the line that starts with ``heading`` on (that line
    may be the table's own header row)."""
    lines = doc[doc.index(heading):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows
