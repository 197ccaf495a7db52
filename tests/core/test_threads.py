"""``--threads`` and its default (issue #27: two torch threads on a busy 2-core machine made a char-GRU step
5x slower than one): the count used is set for torch and BLAS and recorded in the run manifest."""

from __future__ import annotations

import json

import joblib
import pytest
import torch
from threadpoolctl import threadpool_info
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.threads import set_threads, threads_in_use


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    set_threads(before)


def test_set_threads_sets_torch_and_blas(restore_threads, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert set_threads(1) == 1
    assert torch.get_num_threads() == 1 and threads_in_use() == 1
    assert all(pool["num_threads"] == 1 for pool in threadpool_info())
    # the default: the CPUs this process may use (affinity and cgroup quota, through joblib)
    assert set_threads(None) == joblib.cpu_count() == torch.get_num_threads()
    # an OMP_NUM_THREADS set by the environment (torchrun sets 1 per process) is honoured
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert set_threads(None) == 1 == torch.get_num_threads()


@pytest.mark.parametrize("given", ["0", "two"])
def test_bad_thread_counts_are_one_line(given, tmp_path):
    result = CliRunner().invoke(app, ["eval", "glove-bow", "-t", "stsb-cosine", "--threads", given,
                                      "--runs-dir", str(tmp_path / "runs")])
    assert result.exit_code != 0 and not (tmp_path / "runs").exists()


def test_eval_records_the_threads_it_used(restore_threads, tmp_path):
    runs = tmp_path / "runs"
    result = CliRunner().invoke(app, ["eval", "glove-bow", "-t", "stsb-cosine", "--threads", "1", "--runs-dir",
                                      str(runs), "--cache-dir", str(tmp_path / "cache"), "--quiet"])
    assert result.exit_code == 0, result.output
    (manifest,) = runs.glob("*/manifest.json")
    cpu = json.loads(manifest.read_text())["provenance"]["cpu"]
    assert cpu["threads"] == 1 and cpu["available"] == joblib.cpu_count()
