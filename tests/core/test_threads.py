"""``--threads`` and its default (issue #27: two torch threads on a busy 2-core machine made a char-GRU step
5x slower than one): the count used is set for torch and BLAS and recorded in the run manifest."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import joblib
import pytest
import torch
from threadpoolctl import threadpool_info
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox import threads as threads_module
from benchbox.threads import default_threads, one_thread, set_threads, threads_in_use


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
    # the default on an idle machine: the CPUs this process may use (affinity and cgroup quota, through joblib)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert set_threads(None) == joblib.cpu_count() == torch.get_num_threads()
    # an OMP_NUM_THREADS set by the environment (torchrun sets 1 per process) is honoured
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert set_threads(None) == 1 == torch.get_num_threads()


@pytest.mark.parametrize("cpus, load, threads", [
    (2, 0.0, 2), (2, 0.4, 2), (2, 0.6, 1), (2, 1.0, 1), (2, 2.0, 1), (2, 13.4, 1),  # the machine
    (16, 0.2, 16), (16, 3.2, 13), (16, 15.7, 1), (1, 0.0, 1),
])
def test_the_default_is_the_free_cores(cpus, load, threads):
    """Issue #41: two threads on a 2-core machine kept busy by two other processes took 636 s where one took
    87 s; the default leaves the cores the load average says are taken."""
    assert default_threads(cpus, load) == threads


def test_the_default_counts_the_load_at_the_start(restore_threads, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(threads_module, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.3, 0.5, 0.1))
    assert set_threads(None) == 1 == torch.get_num_threads()
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.5, 2.3))  # the last minute counts
    assert set_threads(None) == 2 == torch.get_num_threads()
    assert set_threads(2) == 2  # --threads wins over the load


def test_one_thread_for_small_steps_then_the_count_before(restore_threads):
    set_threads(2)
    with one_thread():
        assert torch.get_num_threads() == 1 and all(pool["num_threads"] == 1 for pool in threadpool_info())
    assert torch.get_num_threads() == 2


def test_the_command_line_makes_waiting_threads_sleep_before_torch_loads():
    """OMP_WAIT_POLICY is read once, when torch loads its OpenMP runtime: the command line sets PASSIVE first,
    and keeps a policy the environment sets."""
    probe = "import os, sys, benchbox.cli; print(os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules)"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    run = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["PASSIVE", "False"]
    run = subprocess.run([sys.executable, "-c", probe], env={**env, "OMP_WAIT_POLICY": "ACTIVE"},
                         capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["ACTIVE", "False"]


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


@pytest.mark.parametrize("command", [
    ["eval", "glove-bow", "-t", "stsb-cosine"], ["compare", "glove-bow", "glove-bow"], ["report", "runs"],
    ["study", "study.toml"], ["neighbours", "glove-bow", "--query", "a dog"], ["features", "extract"],
    ["train", "char-gru", "--dataset", "flickr8k"], ["train", "infersent"],
])
def test_every_computing_command_takes_threads(command, tmp_path):
    """The README says every computing command takes --threads; `report` and `study` did not (issue #41)."""
    result = CliRunner().invoke(app, [*command, "--threads", "0"])
    assert str(result.exception) == "--threads must be ≥ 1, got 0", result.output


def test_a_study_shares_the_free_cores_among_its_cells(monkeypatch):
    from benchbox.study.run import cell_threads

    monkeypatch.setattr(threads_module, "cpu_count", lambda: 16)
    monkeypatch.setattr(os, "getloadavg", lambda: (3.2, 1.0, 1.0))
    assert [cell_threads(jobs) for jobs in (1, 2, 4, 13, 16)] == [13, 6, 3, 1, 1]
