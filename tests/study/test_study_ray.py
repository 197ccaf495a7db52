"""A study on a real multi-node Ray cluster started here (ray.cluster_utils: a head and a second node, one CPU
each; issue #25): a worker killed mid-cell is retried and the study gives the local pool's numbers; Ctrl-C
cancels the Ray tasks and their processes; an unreachable address is one line. The gated encoder
(tests/gated_encoder.py) holds a cell mid-evaluation, so nothing depends on timing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.study_helpers import GATED, comparison, env, evaluating, processes, stopped_at_the_end, study, wait_for

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    return tmp_path_factory.mktemp("gate") / "open"


@pytest.fixture(scope="module")
def cluster(gate):
    """Two Ray nodes; their workers get the gate and PYTHONPATH of the cells (they inherit this environment)."""
    from ray.cluster_utils import Cluster

    saved = dict(os.environ)
    os.environ.update({k: v for k, v in env(gate).items() if k in ("BENCHBOX_TEST_GATE", "PYTHONPATH")})
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        yield cluster.address
    finally:
        cluster.shutdown()
        os.environ.clear()
        os.environ.update(saved)


def test_an_unreachable_ray_address_is_one_line(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[study]\ntasks = ["stsb-cosine"]\n[[encoder]]\nname = "glove-bow"\n[[encoder]]\nname = "glove-bow"\n'
                    'options = { lowercase = false }\n')
    result = subprocess.run([sys.executable, "-m", "benchbox", "study", str(path), "--ray", "127.0.0.1:9"],
                            capture_output=True, text=True, timeout=120)
    errors = [line for line in result.stderr.splitlines() if not line.startswith("warning:")]
    assert result.returncode == 2 and len(errors) == 1, result.stderr
    assert errors[0].startswith("error: cannot connect to the Ray cluster at 127.0.0.1:9: ")
    assert not (tmp_path / "s").exists()


@pytest.mark.slow
def test_a_worker_killed_mid_cell_is_retried_and_the_study_gives_the_local_numbers(tmp_path, cluster, gate):
    gate.touch()
    local = study(tmp_path, "local", gate)
    output, _ = local.communicate(timeout=400)
    assert local.returncode == 0, output
    gate.unlink()
    process = study(tmp_path, "onray", gate, "--ray", cluster)
    with stopped_at_the_end(process):
        cell = tmp_path / "onray" / "cells" / GATED
        wait_for(lambda: evaluating(cell), process, "the gated cell's evaluation on Ray")
        worker = json.loads((cell / "stage.json").read_text())["pid"]
        children = processes(cell)
        os.kill(worker, signal.SIGKILL)  # the Ray worker running the cell dies; its `benchbox eval` goes with it
        deadline = time.monotonic() + 60
        while any(os.path.exists(f"/proc/{pid}") for pid in children):
            assert time.monotonic() < deadline, "the killed worker's benchbox eval outlived it"
            time.sleep(0.1)
        wait_for(lambda: evaluating(cell) and json.loads((cell / "stage.json").read_text())["pid"] != worker, process,
                 "Ray's retry of the cell")
        gate.touch()
        output, _ = process.communicate(timeout=400)
        assert process.returncode == 0, output
        assert comparison(tmp_path / "onray") == comparison(tmp_path / "local")


@pytest.mark.slow
def test_ctrl_c_cancels_the_ray_tasks_and_their_processes(tmp_path, cluster, gate):
    if gate.exists():
        gate.unlink()
    process = study(tmp_path, "s", gate, "--ray", cluster)
    with stopped_at_the_end(process):
        cell = tmp_path / "s" / "cells" / GATED
        wait_for(lambda: evaluating(cell), process, "the gated cell's evaluation on Ray")
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 130, output
        assert "interrupted by SIGINT" in output and "Traceback" not in output
        assert not processes(cell)
        assert not (tmp_path / "s" / "comparison.json").exists()
        gate.touch()
