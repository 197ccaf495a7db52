"""Run folders checked on read (issue #19): the manifest lists every table with its sha256 and row count, and
``compare``/``report`` refuse a truncated, missing, altered or added file instead of comparing fewer rows.
User strings (encoder names, paths) print literally: rich markup in them neither crashes nor disappears."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pandas as pd
import pytest
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.storage.checksums import sha256_file
from benchbox.errors import BenchboxError
from benchbox.storage.runs import Run
from tests.comparison.test_compare import make_run

runner = CliRunner()


@pytest.fixture
def runs(tmp_path):
    return (make_run(tmp_path, "good", noise_scale=0.5, rank_shift=0, accuracy=0.85),
            make_run(tmp_path, "bad", noise_scale=2.0, rank_shift=6, accuracy=0.70))


def test_manifest_lists_every_table_with_sha256_and_rows(runs):
    good, _ = runs
    files = json.loads((good / "manifest.json").read_text())["files"]
    assert set(files) == {"metrics.csv", "items/sts12.csv", "items/retrieval.csv", "items/mr.csv"}
    assert files["items/sts12.csv"] == {"sha256": sha256_file(good / "items/sts12.csv"), "rows": 350}
    assert files["metrics.csv"]["rows"] == len(pd.read_csv(good / "metrics.csv")) == 22
    assert len(Run.open(good).metrics) == 22


def _truncate(path):
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda run: _truncate(run / "metrics.csv"), r"metrics.csv was altered or truncated"),
        (lambda run: (run / "items/mr.csv").unlink(), r"items/mr.csv is missing: .*manifest.json lists it"),
        (lambda run: (run / "items/sts12.csv").write_text((run / "items/sts12.csv").read_text().replace(",1.", ",2.", 1)),
         r"items/sts12.csv was altered or truncated"),
        (lambda run: (run / "items/extra.csv").write_text("a\n1\n"), None),
    ],
)
@pytest.mark.parametrize("command", ["compare", "report"])
def test_damaged_run_is_an_error_naming_the_file(tmp_path, runs, damage, message, command):
    good, bad = runs
    damage(bad)
    if message is None:  # a file the manifest does not list is found only when a reader asks for it
        with pytest.raises(BenchboxError, match=r"items/extra.csv is not listed in"):
            Run.open(bad).items("extra")
        return
    args = ["compare", str(good), str(bad)] if command == "compare" else \
        ["report", str(good), str(bad), "--compare", "--out", str(tmp_path / "r.md")]
    result = runner.invoke(app, [*args, "--quiet"])
    assert result.exit_code != 0 and isinstance(result.exception, BenchboxError)
    assert re.search(message, str(result.exception)), result.exception
    assert not (tmp_path / "r.md").exists()


def test_runs_written_before_the_file_list_still_read(runs):
    good, _ = runs
    manifest = json.loads((good / "manifest.json").read_text())
    del manifest["files"]
    (good / "manifest.json").write_text(json.dumps(manifest))
    assert len(Run.open(good).metrics) == 22 and Run.open(good).items("nothing") is None


@pytest.mark.slow
@pytest.mark.parametrize("name", ["[/bold]", "x[red]y[/red]"])
def test_markup_in_user_strings_prints_literally(tmp_path, name):
    from benchbox import console

    a = make_run(tmp_path, name, noise_scale=0.5, rank_shift=0, accuracy=0.85)
    b = make_run(tmp_path, "plain", noise_scale=2.0, rank_shift=6, accuracy=0.70)
    result = runner.invoke(app, ["compare", str(a), str(b), "--task", "mr"])
    assert result.exit_code == 0, result.output
    assert f"A = {name}  vs" in result.output
    result = runner.invoke(app, ["report", str(a), str(b), "--compare", "--out", str(tmp_path / "r.md"), "--quiet"])
    assert result.exit_code == 0, result.output
    console.set_quiet(False)
    with console.err.capture() as captured:
        console.log(f"features must be a 2-D array [n, dim], found {name}")
    assert captured.get().strip() == f"features must be a 2-D array [n, dim], found {name}"


def test_error_messages_keep_bracketed_parts_even_with_quiet(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "benchbox", "eval", "glove-bow", "--task", "sts12", "-e", "[red]x[/red]",
                           "--runs-dir", str(tmp_path), "--quiet"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: --encoder-opt takes KEY=VALUE, got '[red]x[/red]'"
