"""Helpers of the study tests that run real ``benchbox study`` subprocesses: a study whose second cell is gated
(tests/gated_encoder.py: it waits mid-evaluation until a gate file exists), and what the tests look for (the
cells' processes in /proc, a comparison without run ids)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUDY = """
[study]
tasks = ["stsb-cosine", "sickr-cosine"]
baseline = "glove-bow"
jobs = 1

[[encoder]]
name = "glove-bow"

[[encoder]]
name = "tests.gated_encoder:GatedBow"
options = { lowercase = "false" }

[[encoder]]
name = "glove-bow"
options = { lowercase = "false", vectors = "glove-6b-50d" }
"""


def cell_names(text: str) -> list[str]:
    """The cell folder names of the study ``text`` (each its encoder and the digest of its identity)."""
    from benchbox.study.run import load_study

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.toml"
        path.write_text(text)
        return [cell.name for cell in load_study(path).cells]


FIRST, GATED, THIRD = cell_names(STUDY)


def env(gate: Path) -> dict[str, str]:
    return {**os.environ, "BENCHBOX_TEST_GATE": str(gate),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def study(tmp_path: Path, name: str, gate: Path, *args: str) -> subprocess.Popen:
    path = tmp_path / f"{name}.toml"
    path.write_text(STUDY)
    return subprocess.Popen([sys.executable, "-m", "benchbox", "study", str(path), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env(gate), cwd=ROOT)


def wait_for(predicate, process: subprocess.Popen, what: str, seconds: float = 240) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert process.poll() is None, f"the study ended before {what}: {process.communicate()[0]}"
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.1)


def evaluating(folder: Path) -> bool:
    """Whether the gated cell's `benchbox eval` has started (its stage marker says so and its process runs)."""
    try:
        return json.loads((folder / "stage.json").read_text())["stage"] == "evaluating" and bool(processes(folder))
    except (OSError, ValueError):
        return False


def processes(folder: Path) -> list[int]:
    """Live processes whose command line names ``folder`` (a cell's `benchbox eval`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if str(folder) in cmdline and state != "Z":
                found.append(int(entry.name))
    return found


def comparison(folder: Path) -> dict:
    """The comparisons and models of a study, run ids masked (two models of one fingerprint are told apart by
    their run ids, which differ between two executions)."""
    data = json.loads((folder / "comparison.json").read_text())
    text = json.dumps({"comparisons": data["comparisons"], "models": data["models"]})
    return json.loads(re.sub(r"/\d{8}-\d{6}-[\w-]+?-[0-9a-f]{6}", "/<run>", text))


@contextmanager
def stopped_at_the_end(process: subprocess.Popen) -> Iterator[subprocess.Popen]:
    """``process`` (a study), sent SIGTERM and waited for if it still runs when the block ends (a failed
    assertion must not leave a gated study waiting forever)."""
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=120)


#: a small real plugin of the study tests (tests/study/test_study_identity.py, test_study_check.py): the module of
#: its encoder `toyhash:HashBow`, installed with its distribution `toyhash` by :func:`install_plugin`
PLUGIN = '''
"""A hashed bag of words: each lower-cased word adds a fixed random vector of ``dim`` values (seeded by the
word's sha256), averaged."""
import hashlib
import numpy as np


class HashBow:
    name = "hashbow"

    def __init__(self, dim: int = 32) -> None:
        if not 1 <= int(dim) <= 4096:
            raise ValueError(f"hashbow: dim must be between 1 and 4096, got {dim}")
        self.dim = int(dim)

    def _word(self, word):
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        return np.random.default_rng(seed).standard_normal(self.dim)

    def encode(self, sentences):
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        for i, sentence in enumerate(sentences):
            words = sentence.lower().split()
            if words:
                out[i] = np.mean([self._word(w) for w in words], axis=0)
        return out

    def fingerprint(self):
        return f"hashbow-{self.dim}"
'''


def install_plugin(site: Path, version: str) -> None:
    """The plugin's module and its distribution ``toyhash`` at ``version`` (any other version removed)."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "toyhash.py").write_text(PLUGIN)
    for old in site.glob("toyhash-*.dist-info"):
        shutil.rmtree(old)
    info = site / f"toyhash-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: toyhash\nVersion: {version}\n")
    (info / "top_level.txt").write_text("toyhash\n")
    (info / "RECORD").write_text("toyhash.py,,\n")


def environment(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), str(ROOT),
                                                                      os.environ.get("PYTHONPATH")]))}
