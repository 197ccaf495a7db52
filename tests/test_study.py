"""``benchbox study``: a real two-cell study (GloVe-BOW cased vs uncased lookup on the embedded STS-B and SICK),
interrupted by SIGKILL and resumed without redoing the finished cell; failures and bad files."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchbox.errors import BenchboxError
from benchbox.study import load_study

STUDY = """
[study]
tasks = ["stsb-cosine", "sickr-cosine"]
baseline = "glove-bow"
jobs = 1

[[encoder]]
name = "glove-bow"

[[encoder]]
name = "glove-bow"
options = {{ lowercase = "false" }}
{extra}
"""


def _study(tmp_path: Path, name: str, extra: str = "") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(STUDY.format(extra=extra))
    return path


def _run(path: Path, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "benchbox", "study", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True, **kwargs)


def _without_run_ids(text: str) -> str:
    """A report without what differs between two executions: run ids, creation times, temporary paths."""
    text = re.sub(r"\d{8}-\d{6}-[\w-]+?-[0-9a-f]{6}", "<run>", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00", "<time>", text)
    return re.sub(r"/tmp\S*", "<path>", text)


def test_study_killed_and_resumed_gives_the_uninterrupted_result(tmp_path):
    whole = _study(tmp_path, "whole")
    assert _run(whole).wait(timeout=300) == 0
    killed = _study(tmp_path, "killed")
    process = _run(killed)
    first = tmp_path / "killed" / "cells" / "01-glove-bow"
    deadline = time.time() + 240
    while not (first / "done.json").is_file():
        assert process.poll() is None and time.time() < deadline, "the first cell never finished"
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)  # the whole process group: the study and its running cell
    process.wait()
    assert not (tmp_path / "killed" / "comparison.json").exists()
    stamp = (first / "done.json").stat().st_mtime_ns, (first / "log.txt").stat().st_mtime_ns
    resumed = _run(killed)
    output, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, output
    assert "cells: 1 done, 1 to run" in output
    assert ((first / "done.json").stat().st_mtime_ns, (first / "log.txt").stat().st_mtime_ns) == stamp  # not redone
    one, two = (json.loads((tmp_path / n / "comparison.json").read_text()) for n in ("whole", "killed"))
    assert one["comparisons"] == two["comparisons"] and one["models"] == two["models"]
    reports = [_without_run_ids((tmp_path / n / "report.md").read_text()) for n in ("whole", "killed")]
    assert reports[0] == reports[1]


def test_a_failed_cell_is_reported_and_does_not_stop_the_others(tmp_path):
    path = _study(tmp_path, "failing", extra='\n[[encoder]]\nname = "glove-bow"\noptions = { vectors = "/nonexistent.txt" }\n')
    result = subprocess.run([sys.executable, "-m", "benchbox", "study", str(path)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 1
    assert "cell 03-glove-bow failed: exit status 2" in result.stdout and "nonexistent" in result.stdout
    assert (tmp_path / "failing" / "comparison.json").is_file()  # the two good cells were compared
    assert "cells: 2 done, 0 running, 1 failed" in result.stderr


def test_bad_study_files(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[study]\ntasks = []\n")
    with pytest.raises(BenchboxError, match="name the tasks"):
        load_study(bad)
    bad.write_text('[study]\ntasks = ["sts"]\n[[encoder]]\nname = "glove-bow"\nseed = 1\n')
    with pytest.raises(BenchboxError, match="unknown keys seed"):
        load_study(bad)
    bad.write_text('[study]\ntasks = ["sts"]\n[[encoder]]\nname = "char-gru"\ntrain = { epoch = 1 }\n')
    with pytest.raises(BenchboxError, match="unknown train options epoch"):
        load_study(bad)
    bad.write_text("[study\n")
    with pytest.raises(BenchboxError, match="not valid TOML"):
        load_study(bad)
    bad.write_text('[study]\ntasks = ["sts"]\n[[encoder]]\nname = "glove-bow"\n')
    with pytest.raises(BenchboxError, match="at least two encoders"):
        load_study(bad)


def test_study_on_a_local_ray_instance_gives_the_local_pool_numbers(tmp_path):
    """A Ray cluster started here (2 CPUs), the study sent to it with --ray ADDRESS from another process."""
    ray = pytest.importorskip("ray")
    local = _study(tmp_path, "local")
    assert _run(local).wait(timeout=300) == 0
    context = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        path = _study(tmp_path, "onray")
        result = subprocess.run([sys.executable, "-m", "benchbox", "study", str(path), "--ray",
                                 context.address_info["address"]], capture_output=True, text=True, timeout=400)
    finally:
        ray.shutdown()
    assert result.returncode == 0, result.stdout + result.stderr
    one, two = (json.loads((tmp_path / n / "comparison.json").read_text()) for n in ("local", "onray"))
    assert one["comparisons"] == two["comparisons"] and one["claims"] == two["claims"]
    assert {p.name for p in (tmp_path / "onray" / "cells").iterdir()} == {"01-glove-bow", "02-glove-bow"}
