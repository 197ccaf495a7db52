"""The command line: quick-start job on the embedded data, JSON records, errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from benchbox.cli import app

runner = CliRunner()


def test_quick_start_job_on_embedded_data(tmp_path):
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["eval", "glove-bow", "--task", "stsb-cosine", "--task", "sickr-cosine",
                                 "--data-dir", str(tmp_path / "empty"), "--runs-dir", str(tmp_path / "runs"),
                                 "--json", "-", "--quiet"])
    assert result.exit_code == 0, result.output
    records = json.loads(result.output)["records"]
    assert {(r["task"], r["metric"]) for r in records} == {
        ("stsb-cosine", "pearson"), ("stsb-cosine", "spearman"), ("sickr-cosine", "pearson"), ("sickr-cosine", "spearman")}
    assert set(records[0]) == {"task", "subset", "metric", "value", "ci_low", "ci_high", "n", "unit"}
    assert {r["unit"] for r in records} == {"r"}
    sick = next(r for r in records if r["task"] == "sickr-cosine" and r["metric"] == "pearson")
    assert sick["n"] == 4927 and sick["ci_low"] < sick["value"] < sick["ci_high"]
    assert len(list((tmp_path / "runs").iterdir())) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["eval", "no-such-encoder", "--task", "sts12"], "unknown encoder 'no-such-encoder'"),
        (["eval", "glove-bow", "--task", "sts99"], "unknown task 'sts99'"),
        (["eval", "glove-bow", "--task", "sts12", "--data-dir", "/nonexistent"], "--data-dir /nonexistent is not an existing folder"),
        (["eval", "glove-bow", "--task", "sts12", "--data-dir", "/proc/self/fdinfo"], "missing data under /proc/self/fdinfo"),
        (["eval", "glove-bow", "--task", "sts12", "-e", "oops"], "--encoder-opt takes KEY=VALUE"),
        (["eval", "glove-bow", "--task", "stsb-cosine", "-e", "vectors=/no/file.txt"], "does not exist"),
    ],
)
def test_user_errors_print_one_line_and_exit_2(tmp_path, args, message):
    proc = subprocess.run([sys.executable, "-m", "benchbox", *args, "--runs-dir", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("error:") == 1


def test_list_shows_registered_plugins():
    result = runner.invoke(app, ["list", "tasks"])
    assert result.exit_code == 0 and "sts12" in result.output and "group: sts12, sts13" in result.output
    assert "glove-bow" in runner.invoke(app, ["list", "encoders"]).output
