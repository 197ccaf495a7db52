"""The embedding-cache key covers the computation (issue #39): the versions of the libraries an encoder declares in
``computed_by`` (and of its provider) join the key, so an upgraded library re-embeds, said in one line, instead of
serving the vectors the old version computed. The "library" here is a real installed distribution (a
``.dist-info`` folder on ``sys.path``, found by ``importlib.metadata``) whose version the test upgrades."""

from __future__ import annotations

import importlib
import json
import shutil
from importlib import metadata

import numpy as np

from benchbox.encoder_loading import load_encoder
from benchbox.evaluation import run_tasks
from benchbox.registry import ENCODERS
from benchbox.storage.cache import COMPUTED_BY, EmbeddingCache, encoder_folders
from benchbox.storage.identity import cache_key, computation, installed_version
from tests.storage.test_run_identity import OPTIONS, Hashed

LIBRARY = "benchbox-fakelib"


class Computed(Hashed):
    """A plugin encoder whose vectors a library computes (it declares it)."""

    name = "computed"
    computed_by = ("numpy", LIBRARY)


ENCODERS.register("computed", Computed)


def _install(site, version: str) -> None:
    """Install (or upgrade to) ``version`` of the library: its distribution metadata, as pip writes it."""
    for old in site.glob("*.dist-info"):
        shutil.rmtree(old)
    info = site / f"{LIBRARY.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {LIBRARY}\nVersion: {version}\n")
    importlib.invalidate_caches()
    installed_version.cache_clear()  # a new process would look again


def _evaluate(tmp_path) -> tuple[EmbeddingCache, list[str]]:
    lines: list[str] = []
    cache = EmbeddingCache(tmp_path / "cache", log=lines.append)
    run_tasks("computed", ["stsb-cosine"], data_dir=tmp_path / "empty", options=OPTIONS, cache=cache)
    return cache, lines


def test_a_library_upgrade_re_embeds_and_says_so_in_one_line(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    _install(site, "1.0")
    assert computation(load_encoder("computed"))[LIBRARY] == "1.0"
    first, lines = _evaluate(tmp_path)
    assert first.misses > 0 and lines == []  # (hits: sentences that occur twice)
    again, lines = _evaluate(tmp_path)
    assert again.misses == 0 and again.hits > 0 and lines == []

    _install(site, "1.1")
    upgraded, lines = _evaluate(tmp_path)
    assert (upgraded.misses, upgraded.hits) == (first.misses, first.hits)  # every sentence encoded again
    assert lines == [f"embedding cache: {LIBRARY} 1.0 -> 1.1 since these vectors were cached; re-embedding"]
    (old, new) = sorted(encoder_folders(tmp_path / "cache"), key=lambda p: p.stat().st_mtime_ns)
    assert new.name == cache_key(load_encoder("computed")) and old.name.rpartition("-")[0] == new.name.rpartition("-")[0]
    assert json.loads((new / COMPUTED_BY).read_text())[LIBRARY] == "1.1"
    assert json.loads((old / COMPUTED_BY).read_text())[LIBRARY] == "1.0"


def test_each_encoder_declares_what_computes_its_vectors():
    glove = computation(load_encoder("glove-bow"))
    assert glove == {"benchbox": metadata.version("benchbox"), "numpy": np.__version__}
    assert set(computation(load_encoder("hashed"))) == {"numpy", "torch"}  # a plugin that declares none: the default
    from benchbox.encoders.clip import CLIPEncoder

    assert {"transformers", "Pillow", "torchvision", "torch"} <= set(CLIPEncoder.computed_by)
