"""``benchbox compare`` checks every model argument before evaluating anything, and reuses a matching run
(benchbox.reuse) instead of writing a duplicate; on the embedded STS-B (stsb-cosine) with GloVe-BOW and a
character-count encoder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.comparison.compare import compare
from benchbox.errors import BenchboxError
from benchbox.registry import ENCODERS
from benchbox.storage.runs import MANIFEST
from benchbox.task_contract.options import TaskOptions
from benchbox.comparison.settings import CompareSettings
from tests.helpers import CountedLetters, LetterCounts

STSB_TEST = "senteval/downstream/STS/STSBenchmark/sts-test.csv"
BOOT = 50
ENCODERS.register("letter-counts", LetterCounts)


@pytest.fixture
def setup(tmp_path):
    (tmp_path / "empty").mkdir()
    return tmp_path / "runs", tmp_path / "empty"


def _compare(runs: Path, data: Path, *models: str, tasks=("stsb-cosine",), rerun: bool = False, log=None, **kwargs):
    return compare(list(models), list(tasks), data_dir=data, runs_dir=runs, settings=CompareSettings(n_boot=BOOT),
                   options=TaskOptions(bootstrap=BOOT), log=log or (lambda message: None), rerun=rerun, **kwargs)


def _folders(runs: Path) -> set[str]:
    return {p.name for p in runs.iterdir()} if runs.is_dir() else set()


@pytest.mark.parametrize(("models", "message"), [
    (["glove-bow", "runs/does-not-exist"], "runs/does-not-exist does not exist: give a run folder"),
    (["glove-bow", "glove-bwo"], "unknown encoder 'glove-bwo'. Did you mean glove-bow?"),
    (["glove-bow", "paper:merkx2019/nothing"], "unknown published comparator 'paper:merkx2019/nothing'"),
    (["glove-bow", "letter-counts", "--task", "sts99"], "unknown task 'sts99'"),
    (["glove-bow", "paper:merkx2019/glove-bow"], "paper:merkx2019/glove-bow has none of the tasks stsb-cosine"),
    (["glove-bow", "=glove-bow"], "the label is empty"),
])
def test_a_bad_model_argument_fails_before_any_evaluation(setup, models, message):
    runs, data = setup
    proc = subprocess.run([sys.executable, "-m", "benchbox", "compare", *models, "--task", "stsb-cosine",
                           "--runs-dir", str(runs), "--data-dir", str(data)], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and proc.stderr.count("error:") == 1 and "Traceback" not in proc.stderr
    assert "evaluating" not in proc.stderr
    assert not runs.exists()  # no run written, not even the folder


def test_a_run_folder_that_is_not_a_run_fails_before_any_evaluation(setup, tmp_path):
    runs, data = setup
    (tmp_path / "notes").mkdir()
    result = CliRunner().invoke(app, ["compare", "glove-bow", str(tmp_path / "notes"), "-t", "stsb-cosine",
                                      "--runs-dir", str(runs), "--data-dir", str(data), "-q"])
    assert isinstance(result.exception, BenchboxError) and "is not a benchbox model folder" in str(result.exception)
    assert not runs.exists()


def test_second_compare_by_name_reuses_the_runs_and_rerun_writes_new_ones(setup):
    runs, data = setup
    first_log, second_log, third_log = [], [], []
    first = _compare(runs, data, "glove-bow", "letter-counts", log=first_log.append)
    written = _folders(runs)
    assert len(written) == 2 and not any(line.startswith("reusing") for line in first_log)

    second = _compare(runs, data, "glove-bow", "letter-counts", log=second_log.append)
    assert _folders(runs) == written  # no new folder
    reused = [line for line in second_log if line.startswith("reusing run ")]
    assert len(reused) == 2 and reused[0].endswith(" for glove-bow") and reused[1].endswith(" for letter-counts")
    assert {Path(line.split()[2]).name for line in reused} == written
    pd.testing.assert_frame_equal(first.table, second.table)  # identical numbers
    assert first.models == second.models == ["glove-bow", "letter-counts"]  # the one labelling rule: encoder names

    third = _compare(runs, data, "glove-bow", "letter-counts", rerun=True, log=third_log.append)
    assert len(_folders(runs)) == 4 and not any(line.startswith("reusing") for line in third_log)
    pd.testing.assert_frame_equal(first.table, third.table)  # a fresh evaluation, the same numbers


def test_a_run_covering_more_tasks_is_reused_one_missing_a_task_is_not(setup):
    runs, data = setup
    _compare(runs, data, "glove-bow", "letter-counts", tasks=("stsb-cosine", "sickr-cosine"))
    before = _folders(runs)
    log = []
    narrow = _compare(runs, data, "glove-bow", "letter-counts", tasks=("sickr-cosine",), log=log.append)
    assert _folders(runs) == before and sum(line.startswith("reusing") for line in log) == 2
    assert set(narrow.table["task"]) == {"sickr-cosine"}

    runs2 = runs.parent / "runs2"
    _compare(runs2, data, "glove-bow", "letter-counts", tasks=("stsb-cosine",))
    log = []
    _compare(runs2, data, "glove-bow", "letter-counts", tasks=("stsb-cosine", "sickr-cosine"), log=log.append)
    assert len(_folders(runs2)) == 4 and not any(line.startswith("reusing") for line in log)


@pytest.mark.parametrize("option", [["--seed", "7"], []])
def test_an_eval_run_is_reused_only_with_the_same_options(setup, option):
    """A run from ``benchbox eval`` with default options serves compare; one with another seed does not.
    (``--text raw`` and ``--fix-stsb-labels`` are refused for stsb-cosine, which reads neither: issue #26,
    tests/core/test_environment.py.)"""
    runs, data = setup
    result = CliRunner().invoke(app, ["eval", "glove-bow", "-t", "stsb-cosine", "--bootstrap", str(BOOT),
                                      "--runs-dir", str(runs), "--data-dir", str(data), "-q", *option])
    assert result.exit_code == 0, result.output
    (made,) = _folders(runs)
    log = []
    comparison = _compare(runs, data, "glove-bow", "letter-counts", log=log.append)
    reused = [line for line in log if line.startswith("reusing")]
    if option:
        assert not reused and len(_folders(runs)) == 3
    else:
        assert reused == [f"reusing run {runs / made} for glove-bow"] and len(_folders(runs)) == 2
        values = pd.read_csv(runs / made / "metrics.csv")
        pearson = values[values["metric"] == "pearson"]["value"].iloc[0]
        assert comparison.table.query("metric == 'pearson'")["value_a"].iloc[0] == pytest.approx(pearson, abs=0)


def test_changed_data_altered_tables_or_another_benchbox_version_are_not_reused(setup, tmp_path, monkeypatch):
    monkeypatch.delenv("BENCHBOX_ALLOW_DATA_MISMATCH")  # a changed published file is refused unless allowed
    runs, data = setup
    _compare(runs, data, "glove-bow", "letter-counts")
    glove = next(p for p in runs.iterdir() if "glove-bow" in p.name)

    # the same file with one gold score changed, now under the data root: other data, so a new run
    from benchbox.data.root import EMBEDDED_ROOT

    changed = tmp_path / "changed"
    target = changed / STSB_TEST
    target.parent.mkdir(parents=True)
    lines = (EMBEDDED_ROOT / STSB_TEST).read_text(encoding="utf-8").splitlines(keepends=True)
    fields = lines[0].split("\t")
    fields[4] = "0.000" if fields[4] != "0.000" else "5.000"
    target.write_text("".join(["\t".join(fields), *lines[1:]]), encoding="utf-8")
    with pytest.raises(BenchboxError, match="not the .* published for"):  # not the published file: refused
        _compare(runs, changed, "glove-bow", "letter-counts")
    log = []
    _compare(runs, changed, "glove-bow", "letter-counts", log=log.append, allow_data_mismatch=True)
    assert not any(line.startswith("reusing") for line in log) and len(_folders(runs)) == 4

    # the identical file under a data root is the same data: reused
    target.write_text("".join(lines), encoding="utf-8")
    log = []
    _compare(runs, changed, "glove-bow", "letter-counts", log=log.append)
    assert sum(line.startswith("reusing") for line in log) == 2 and len(_folders(runs)) == 4

    # every glove-bow run altered: metrics.csv of one truncated, the other from another benchbox version
    for path in runs.iterdir():
        if "glove-bow" in path.name and path != glove:
            manifest = json.loads((path / MANIFEST).read_text())
            manifest["packages"]["benchbox"] = "0.0.1"
            (path / MANIFEST).write_text(json.dumps(manifest))
    (glove / "metrics.csv").write_text("task,subset,metric,value,ci_low,ci_high,n\n")
    log = []
    _compare(runs, data, "glove-bow", "letter-counts", log=log.append)
    assert [line.split()[-1] for line in log if line.startswith("reusing")] == ["letter-counts"]
    assert len(_folders(runs)) == 5


def test_a_compare_that_reuses_a_run_builds_no_encoder(setup):
    """Issue 41: compare built every encoder (sbert: 137 s of loading) only to find its run; an encoder whose
    identity is known without building it (Encoder.identity_unloaded) is built only to be evaluated."""
    runs, data = setup
    counted = "tests.helpers:CountedLetters"
    builds = CountedLetters.builds
    _compare(runs, data, "glove-bow", counted)
    assert CountedLetters.builds == builds + 1  # evaluated: built once
    logged = []
    _compare(runs, data, "glove-bow", counted, log=logged.append)
    assert CountedLetters.builds == builds + 1  # reused: not built
    assert sum(line.startswith("reusing run ") and line.endswith(f" for {counted}") for line in logged) == 1
    _compare(runs, data, "glove-bow", counted, rerun=True)
    assert CountedLetters.builds == builds + 2  # --rerun evaluates it again
