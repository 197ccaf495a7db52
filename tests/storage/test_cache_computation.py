"""The embedding-cache key covers the computation (issue #39): the versions of the libraries an encoder declares in
``computed_by`` (and of its provider) join the key, so an upgraded library re-embeds, said in one line, instead of
serving the vectors the old version computed. The "library" here is a real installed distribution (a
``.dist-info`` folder on ``sys.path``, found by ``importlib.metadata``) whose version the test upgrades."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np

from benchbox.encoding.loading import load_encoder
from benchbox.registry import ENCODERS
from benchbox.storage.cache import encoder_folders
from tests.storage.test_run_identity import Hashed

ROOT = Path(__file__).resolve().parents[2]

LIBRARY = "benchbox-fakelib"


class Computed(Hashed):
    """A plugin encoder whose vectors a library computes (it declares it)."""

    name = "computed"
    computed_by = ("numpy", LIBRARY)


ENCODERS.register("computed", Computed)


def _install(site: Path, version: str) -> None:
    """Install (or upgrade to) ``version`` of the library: its distribution metadata, as pip writes it."""
    for old in site.glob("*.dist-info"):
        shutil.rmtree(old)
    info = site / f"{LIBRARY.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {LIBRARY}\nVersion: {version}\n")


def _evaluate(tmp_path: Path) -> tuple[tuple[int, int], list[str]]:
    """``benchbox eval`` of the encoder, with the library on its path: (cache hits, sentences encoded) and the
    cache's lines."""
    (tmp_path / "empty").mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)])}
    done = subprocess.run([sys.executable, "-m", "benchbox", "eval", "tests.storage.test_cache_computation:Computed",
                           "-t", "stsb-cosine", "--data-dir", "empty", "--cache-dir", "cache", "--no-save",
                           "--bootstrap", "0"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("embedding cache:")]
    counts = re.fullmatch(r"embedding cache: (\d+) hits, (\d+) encoded", lines.pop())
    return (int(counts[1]), int(counts[2])), lines


def test_a_library_upgrade_re_embeds_and_says_so_in_one_line(tmp_path):
    _install(tmp_path / "site", "1.0")
    (hits, encoded), lines = _evaluate(tmp_path)
    assert encoded > 0 and lines == []
    again, lines = _evaluate(tmp_path)
    assert again[0] > hits and again[1] == 0 and lines == []  # all served by the cache

    _install(tmp_path / "site", "1.1")
    upgraded, lines = _evaluate(tmp_path)
    assert upgraded == (hits, encoded)  # every sentence encoded again
    assert lines == [f"embedding cache: {LIBRARY} 1.0 -> 1.1 since these vectors were cached; re-embedding"]
    from benchbox.storage.cache import COMPUTED_BY

    old, new = sorted(encoder_folders(tmp_path / "cache"), key=lambda p: p.stat().st_mtime_ns)
    assert old.name.rpartition("-")[0] == new.name.rpartition("-")[0]  # one encoder, two computations
    assert json.loads((new / COMPUTED_BY).read_text())[LIBRARY] == "1.1"
    assert json.loads((old / COMPUTED_BY).read_text())[LIBRARY] == "1.0"


def test_each_encoder_declares_what_computes_its_vectors():
    from benchbox.storage.identity import computation

    glove = computation(load_encoder("glove-bow"))
    assert glove == {"benchbox": metadata.version("benchbox"), "numpy": np.__version__}
    assert set(computation(load_encoder("hashed"))) == {"numpy", "torch"}  # a plugin that declares none: the default
    from benchbox.encoders.clip import CLIPEncoder

    assert {"transformers", "Pillow", "torchvision", "torch"} <= set(CLIPEncoder.computed_by)
