"""Embedding cache (a second identical evaluation encodes nothing) and the run store."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchbox import run_tasks
from benchbox.storage.cache import EmbeddingCache
from benchbox.errors import BenchboxError
from benchbox.storage.runs import Run
from tests.helpers import TableEncoder


def test_cache_serves_repeats_and_persists(tmp_path):
    enc = TableEncoder({"a": [1, 0], "b": [0, 1], "c": [1, 1]})
    cache = EmbeddingCache(tmp_path)
    out = cache.embed("fp", ["a", "b", "a"], enc.encode)
    assert out.tolist() == [[1, 0], [0, 1], [1, 0]]
    assert enc.calls == [["a", "b"]]  # each distinct text encoded once
    again = EmbeddingCache(tmp_path)  # a new process: read from disk
    assert again.embed("fp", ["b", "c"], enc.encode).tolist() == [[0, 1], [1, 1]]
    assert enc.calls[-1] == ["c"] and (again.hits, again.misses) == (1, 1)
    other = EmbeddingCache(tmp_path).embed("other-fingerprint", ["a"], enc.encode)
    assert other.tolist() == [[1, 0]] and enc.calls[-1] == ["a"]


def test_keys_ending_in_zero_bytes_round_trip(tmp_path, monkeypatch):
    import benchbox.storage.cache as cache_mod

    monkeypatch.setattr(cache_mod, "text_key", lambda text: text.encode().ljust(16, b"\0"))
    enc = TableEncoder({"a": [1.0], "b": [2.0]})
    EmbeddingCache(tmp_path).embed("fp", ["a", "b"], enc.encode)
    assert EmbeddingCache(tmp_path).embed("fp", ["b", "a"], enc.encode).tolist() == [[2.0], [1.0]]
    assert len(enc.calls) == 1


def test_corrupt_cache_shard_is_reported_and_rebuilt(tmp_path):
    enc = TableEncoder({"a": [1.0]})
    EmbeddingCache(tmp_path).embed("fp", ["a"], enc.encode)
    next((tmp_path / "fp").glob("*.emb.npy")).write_bytes(b"garbage")
    lines = []
    cache = EmbeddingCache(tmp_path, log=lines.append)
    assert cache.embed("fp", ["a"], enc.encode).tolist() == [[1.0]]
    assert len(lines) == 1 and "fails its checksum" in lines[0] and cache.quarantined == 1
    assert len(enc.calls) == 2 and len(list((tmp_path / "fp" / "quarantine").iterdir())) == 3


def test_second_identical_evaluation_does_no_encoding(tmp_path, glove):
    cache = EmbeddingCache(tmp_path / "cache")
    calls = []
    original = glove._encode
    glove._encode = lambda sentences, batch_size: calls.append(len(sentences)) or original(sentences, batch_size)
    try:
        first = run_tasks(glove, ["stsb-cosine"], data_dir=tmp_path / "no-root", cache=cache)
        encoded = sum(calls)
        second = run_tasks(glove, ["stsb-cosine"], data_dir=tmp_path / "no-root", cache=cache)
    finally:
        del glove._encode
    assert encoded > 0 and sum(calls) == encoded  # nothing encoded the second time
    assert [r.value for r in first.records] == [r.value for r in second.records]
    assert second.cache_stats["misses"] == encoded


def test_run_folder_contents(tmp_path, glove):
    evaluation = run_tasks(glove, ["stsb-cosine"], data_dir=tmp_path / "no-root", cache=False)
    path = evaluation.save(tmp_path / "runs")
    run = Run.open(path)
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["encoder"]["name"] == "glove-bow" and "numpy" in manifest["packages"]
    checksums = manifest["tasks"]["stsb-cosine"]["data_checksums"]
    assert checksums == {"embedded:senteval/downstream/STS/STSBenchmark/sts-test.csv":
                         "4cde2a19c9b7232c" + checksums["embedded:senteval/downstream/STS/STSBenchmark/sts-test.csv"][16:]}
    assert run.metrics.metric.tolist() == ["pearson", "spearman"]
    items = run.items("stsb-cosine")
    assert len(items) == 1379 and np.allclose(items.score, evaluation.results[0].items.score)
    assert not list((tmp_path / "runs").glob(".tmp-*"))


def test_open_run_errors(tmp_path):
    with pytest.raises(BenchboxError, match="not a benchbox run"):
        Run.open(tmp_path)
    (tmp_path / "manifest.json").write_text("{broken")
    with pytest.raises(BenchboxError, match="unreadable run manifest"):
        Run.open(tmp_path).manifest
