"""The output contract (docs/schema.md): strict JSON from every command with --json (also under FORCE_COLOR=1),
``--json -`` on stdout alone, full-precision p-values, output paths checked before any work, errors shown under
--quiet, results loaded back with benchbox.load_runs, the leaderboard, and the provenance of run manifests."""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import benchbox
from benchbox.cli import app
from benchbox.errors import BenchboxError
from benchbox.evaluation import run_tasks
from benchbox.registry import TASKS as TASK_REGISTRY
from benchbox.storage.jsonio import SCHEMA_VERSION, dumps, write_json
from benchbox.comparison.leaderboard import Settings, build, load_sources
from benchbox.results import RUN_COLUMNS, load_runs
from benchbox.storage.runs import MANIFEST
from benchbox.task_contract.protocol import task_class
from benchbox.task_contract.options import TaskOptions
from tests.helpers import LetterCounts

runner = CliRunner()
TASKS = ["stsb-cosine", "sickr-cosine"]
REPO = Path(__file__).resolve().parents[2]


class ShiftedCounts(LetterCounts):
    """Letter counts plus a constant: another fast deterministic encoder with its own fingerprint."""

    name = "shifted-counts"

    def config(self):
        return {"alphabet": "a-z", "shift": 1}

    def _encode(self, sentences, batch_size):
        return super()._encode(sentences, batch_size) + 1.0


class TiltedCounts(LetterCounts):
    """Letter counts plus ``tilt`` × (0, 1, ..., 25), the tilt outside the fingerprint: two runs of one model
    (label and fingerprint) with different scores, as a retrained model of an unchanged configuration."""

    def __init__(self, tilt: float) -> None:
        self.tilt = tilt

    def _encode(self, sentences, batch_size):
        return super()._encode(sentences, batch_size) + self.tilt * np.arange(26, dtype=np.float32)


def reject(token: str):
    raise AssertionError(f"non-standard JSON constant {token}")


def strict(text: str):
    """Parse ``text`` as strict JSON: NaN/Infinity tokens and ANSI escapes fail the test."""
    assert "\x1b[" not in text
    return json.loads(text, parse_constant=reject)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Eval runs of glove-bow, letter-counts and shifted-counts on STS-B and SICK-R (embedded data)."""
    root = tmp_path_factory.mktemp("contract")
    (root / "empty").mkdir()
    options = TaskOptions(bootstrap=20)
    folders = {name: run_tasks(encoder, TASKS, data_dir=root / "empty", cache=False, options=options,
                               label=label).save(root / "runs")
               for name, encoder, label in (("glove", "glove-bow", None), ("counts", LetterCounts(), None),
                                            ("shifted", ShiftedCounts(), "Shifted counts"))}
    return root, folders


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "FORCE_COLOR": "1", "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "benchbox", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


# ------------------------------------------------------------------ the writer


def test_writer_is_strict_and_keeps_full_precision(tmp_path, capsys):
    payload = {"nan": math.nan, "inf": -math.inf, "p": 3.27e-13, "np": np.float32(0.5), "i": np.int64(7),
               "arr": np.array([1.0, np.nan]), "na": pd.NA, "path": tmp_path, "tuple": (1, 2)}
    back = strict(dumps(payload))
    assert back == {"nan": None, "inf": None, "p": 3.27e-13, "np": 0.5, "i": 7, "arr": [1.0, None], "na": None,
                    "path": str(tmp_path), "tuple": [1, 2]}
    write_json(tmp_path / "x.json", payload)
    assert strict((tmp_path / "x.json").read_text())["p"] == 3.27e-13
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]  # no temporary left behind
    write_json("-", {"a": 1.0000000000000002})
    assert strict(capsys.readouterr().out) == {"a": 1.0000000000000002}
    assert not Path("-").exists()


# ------------------------------------------------------------------ strict JSON from every command


@pytest.mark.slow
def test_eval_and_list_json_are_strict_under_force_color(tmp_path):
    (tmp_path / "empty").mkdir()
    proc = _cli("eval", "glove-bow", "-t", "stsb-cosine", "--bootstrap", "0", "--data-dir", str(tmp_path / "empty"),
                "--runs-dir", str(tmp_path / "runs"), "--json", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    payload = strict(proc.stdout)
    assert payload["schema_version"] == SCHEMA_VERSION and payload["encoder"] == "glove-bow"
    (run,) = (tmp_path / "runs").iterdir()
    metrics = pd.read_csv(run / "metrics.csv")
    assert [r["value"] for r in payload["records"]] == metrics["value"].tolist()
    assert [r["ci_low"] for r in payload["records"]] == metrics["ci_low"].tolist()
    assert not (tmp_path / "-").exists()
    for kind in ("tasks", "encoders"):
        proc = _cli("list", kind, "--json", "-", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        listed = strict(proc.stdout)
        assert listed["schema_version"] == SCHEMA_VERSION and listed["kind"] == kind
        names = {p["name"]: p for p in listed["plugins"]}
        assert ("stsb-cosine" if kind == "tasks" else "glove-bow") in names
    assert names["glove-bow"]["kind"] == "encoder"


def test_compare_json_is_strict_and_keeps_tiny_p_values(runs, tmp_path):
    _, folders = runs
    # Williams' t on SICK-R (independent items assumed) gives the tiny p this test needs
    proc = _cli("compare", str(folders["glove"]), str(folders["counts"]), "--test-resamples", "50", "--json", "-",
                "--csv", str(tmp_path / "c.csv"), "--item-dependence", "independent", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    payload = strict(proc.stdout)  # the tables and headlines went to stderr
    assert payload["schema_version"] == SCHEMA_VERSION and "A = " in proc.stderr
    p_json = [row["p"] for row in payload["comparisons"]]
    with open(tmp_path / "c.csv", newline="") as handle:  # Python's float(): exact on repr (pandas' parser varies)
        p_csv = [float(row["p"]) for row in csv.DictReader(handle)]
    assert p_json == p_csv  # repr round trip: equal to the last bit
    assert min(p_json) < 1e-12 and min(p_json) > 0  # SICK-R Pearson by Williams: ~2.6e-14, once written as 0.0
    assert not (tmp_path / "-").exists()


def test_runs_and_leaderboard_json_are_strict(runs, tmp_path):
    root, folders = runs
    proc = _cli("runs", str(root / "runs"), "--json", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    listed = strict(proc.stdout)["runs"]
    assert {r["path"] for r in listed} == {str(p) for p in folders.values()}
    assert all(r["tasks"] == sorted(TASKS) and r["kind"] == "eval" for r in listed)  # manifests sort their keys
    proc = _cli("leaderboard", str(root / "runs"), "--json", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    board = strict(proc.stdout)
    assert [c["task"] for c in board["columns"]] == TASKS
    assert [c["metric"] for c in board["columns"]] == [TASK_REGISTRY.get(t).main_score for t in TASKS]
    assert {r["label"] for r in board["rows"]} == {"glove-bow", "letter-counts", "Shifted counts"}


# ------------------------------------------------------------------ stdout, paths, quiet


def test_json_dash_gives_only_json_on_stdout_and_no_file(runs, tmp_path, monkeypatch):
    root, _ = runs
    monkeypatch.chdir(tmp_path)
    for args in (["runs", str(root / "runs")], ["leaderboard", str(root / "runs")], ["list", "tasks"]):
        result = runner.invoke(app, [*args, "--json", "-"])
        assert result.exit_code == 0, result.output
        assert strict(result.stdout)["schema_version"] == SCHEMA_VERSION
    result = runner.invoke(app, ["leaderboard", str(root / "runs"), "--csv", "-"])
    assert result.exit_code == 0 and result.stdout.splitlines()[0].startswith("label,fingerprint,protocol,paired,seeds,runs,citation,stsb-cosine,")
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("bad", ["no/such/dir/x.json", "folder"])
def test_bad_output_paths_fail_before_evaluating(tmp_path, monkeypatch, bad):
    (tmp_path / "folder").mkdir()
    import benchbox.commands.core as core
    import benchbox.comparison.compare as compare

    def never(*args, **kwargs):
        raise AssertionError("evaluated before checking the output path")

    monkeypatch.setattr(core, "run_tasks", never)
    monkeypatch.setattr(compare, "compare", never)
    target = str(tmp_path / bad)
    for args in (["eval", "glove-bow", "-t", "stsb-cosine", "--runs-dir", str(tmp_path / "runs"), "--json", target],
                 ["compare", "glove-bow", "letter-counts", "--runs-dir", str(tmp_path / "runs"), "--json", target],
                 ["compare", "glove-bow", "letter-counts", "--runs-dir", str(tmp_path / "runs"), "--csv", target],
                 ["leaderboard", str(tmp_path), "--csv", target]):
        result = runner.invoke(app, args)
        assert isinstance(result.exception, BenchboxError), (args, result.output)
        assert target in str(result.exception)
        assert ("does not exist" if "no/such" in bad else "is a folder") in str(result.exception)
    assert not (tmp_path / "runs").exists() and not (tmp_path / "no").exists()


def test_quiet_still_prints_errors(tmp_path):
    for args in (["eval", "glove-bow", "-t", "sts99", "-q"], ["leaderboard", str(tmp_path / "none"), "-q"],
                 ["compare", "glove-bow", "letter-counts", "--json", "/no/such/dir/x", "-q"]):
        proc = _cli(*args, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("error:") == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stdout == ""


# ------------------------------------------------------------------ load_runs and the leaderboard


def test_load_runs_of_three_encoders_equals_their_metrics(runs):
    root, folders = runs
    table = benchbox.load_runs(root / "runs")
    options = sorted(c for c in table.columns if c.startswith("option."))
    encoder_options = sorted(c for c in table.columns if c.startswith("encoder_option."))
    assert list(table.columns) == RUN_COLUMNS + options + encoder_options and "option.seed" in options
    assert "encoder_option.lowercase" in encoder_options  # glove-bow's options, defaulted ones included
    glove = table[table["encoder"] == "glove-bow"]
    assert set(glove["encoder_provider"]) == {"benchbox"} and set(glove["encoder_version"]) == {benchbox.__version__}
    # the task's declared version (was None for every task before runs recorded their implementation)
    assert {t: set(g) for t, g in table.groupby("task")["task_version"]} == {
        t: {task_class(t).version} for t in set(table["task"])}
    metrics = {name: pd.read_csv(path / "metrics.csv") for name, path in folders.items()}
    assert len(table) == sum(len(m) for m in metrics.values()) == 12
    for name, path in folders.items():
        manifest = json.loads((path / MANIFEST).read_text())
        rows = table[table["path"] == str(path)].reset_index(drop=True)
        expected = metrics[name]
        for column in ("task", "subset", "metric", "value", "ci_low", "ci_high", "n"):
            assert rows[column].tolist() == expected[column].tolist(), column
        assert set(rows["fingerprint"]) == {manifest["encoder"]["fingerprint"]}
        assert set(rows["run_id"]) == {path.name} and set(rows["created"]) == {manifest["created"]}
        assert set(rows["benchbox_version"]) == {benchbox.__version__}
        assert set(rows["option.seed"]) == {1111} and set(rows["option.bootstrap"]) == {20}
    assert set(table["label"]) == {"glove-bow", "letter-counts", "Shifted counts"}
    assert set(table["encoder"]) == {"glove-bow", "letter-counts", "shifted-counts"}
    explicit = load_runs([folders["shifted"], folders["glove"]])  # run folders named one by one: in that order
    assert explicit["path"].drop_duplicates().tolist() == [str(folders["shifted"]), str(folders["glove"])]


def test_load_runs_errors_name_the_bad_folder_or_skip_it(runs, tmp_path):
    root, folders = runs
    bad = tmp_path / "runs" / "broken"
    bad.mkdir(parents=True)
    (bad / MANIFEST).write_text("{not json")
    with pytest.raises(BenchboxError, match=f"cannot load the run {bad}"):
        load_runs([root / "runs", tmp_path / "runs"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = load_runs([root / "runs", tmp_path / "runs"], errors="skip")
    assert len(table) == 12 and any(str(bad) in str(w.message) for w in caught)
    with pytest.raises(BenchboxError, match="neither a benchbox run folder nor a folder of runs"):
        load_runs(tmp_path / "missing")
    result = runner.invoke(app, ["leaderboard", str(root / "runs"), str(tmp_path / "runs"), "--skip-bad", "--csv", "-"])
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 4


def _set_created(path: Path, created: str) -> None:
    manifest = json.loads((path / MANIFEST).read_text())
    manifest["created"] = created
    (path / MANIFEST).write_text(json.dumps(manifest))


def test_leaderboard_keeps_the_newest_run_of_a_model(tmp_path):
    (tmp_path / "empty").mkdir()
    older, newer = (run_tasks(TiltedCounts(tilt), ["stsb-cosine"], data_dir=tmp_path / "empty", cache=False,
                              options=TaskOptions(bootstrap=0)).save(tmp_path / "runs")
                    for tilt in (0.0, 0.5))
    spearman = {p: pd.read_csv(p / "metrics.csv").set_index("metric")["value"]["spearman"] for p in (older, newer)}
    assert spearman[older] != spearman[newer]
    for first, second in ((older, newer), (newer, older)):
        _set_created(first, "2026-01-01T00:00:00+00:00")
        _set_created(second, "2026-02-01T00:00:00+00:00")
        board = build(load_sources([tmp_path / "runs"]), settings=Settings(n_boot=20), groups=False).frame
        assert len(board) == 1 and board["stsb-cosine"].iloc[0] == spearman[second]
        assert board["runs"].iloc[0] == second.name and board["seeds"].iloc[0] == 1  # a re-run is no seed
    every = build(load_sources([tmp_path / "runs"]), settings=Settings(n_boot=20), all_runs=True, groups=False).frame
    assert sorted(every["runs"]) == sorted([newer.name, older.name])
    assert sorted(every["stsb-cosine"]) == sorted(spearman.values())


# ------------------------------------------------------------------ provenance


def test_run_manifest_records_provenance(runs):
    _, folders = runs
    manifest = json.loads((folders["counts"] / MANIFEST).read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["packages"]["numpy"] == np.__version__ and manifest["packages"]["pandas"] == pd.__version__
    encoder = manifest["encoder"]
    assert encoder["class"] == "tests.helpers.LetterCounts"
    assert encoder["provider"] == {"distribution": None, "version": None}
    for task in TASKS:
        implementation = manifest["tasks"][task]["implementation"]
        assert implementation["provider"] == {"distribution": "benchbox", "version": benchbox.__version__}
        assert implementation["version"] == task_class(task).version
        assert 0 < manifest["tasks"][task]["elapsed_s"] < 600
    assert manifest["elapsed_s"] == pytest.approx(sum(manifest["tasks"][t]["elapsed_s"] for t in TASKS))
    provenance = manifest["provenance"]
    assert provenance["cpu"]["count"] == os.cpu_count() and provenance["python"]["version"] == sys.version.split()[0]
    assert isinstance(provenance["gpu"], list)
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0 and Path(benchbox.__file__).resolve().parent.parent == REPO:
        assert provenance["benchbox_git"]["revision"] == head.stdout.strip()
        assert isinstance(provenance["benchbox_git"]["dirty"], bool)


def test_a_builtin_provider_is_found_without_scanning_every_distribution(monkeypatch):
    """benchbox's own classes find their distribution by its name, the same one the scan of every installed
    distribution's files (``importlib.metadata.packages_distributions``, about 0.5 s of each eval) gives; the
    scan is left to other packages (a plugin's class, a test's)."""
    from importlib import metadata

    from benchbox.storage import provenance

    scanned = metadata.packages_distributions()["benchbox"][0]
    provenance._distributions_of.cache_clear()
    provenance._distributions_by_package.cache_clear()

    def scan():
        raise AssertionError("every installed distribution scanned for a built-in class")

    monkeypatch.setattr(metadata, "packages_distributions", scan)
    found = provenance.component(task_class("stsb-cosine"))
    assert found["distribution"] == scanned == "benchbox" and found["version"] == benchbox.__version__
    with pytest.raises(AssertionError, match="scanned"):
        provenance.component(LetterCounts)  # a test's class: the scan, which finds no distribution for it
    monkeypatch.undo()
    provenance._distributions_of.cache_clear()
    assert provenance.component(LetterCounts)["distribution"] is None


def test_training_header_and_gpu_names(monkeypatch):
    from types import SimpleNamespace

    from benchbox.storage.provenance import gpus, manifest_header

    header = manifest_header("some-run")
    assert header["schema_version"] == SCHEMA_VERSION and header["run_id"] == "some-run"
    assert header["command"] == sys.argv
    cuda = SimpleNamespace(is_available=lambda: True, device_count=lambda: 2,
                           get_device_name=lambda i: f"NVIDIA H100 #{i}")
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=cuda))
    assert gpus() == ["NVIDIA H100 #0", "NVIDIA H100 #1"]
    monkeypatch.delitem(sys.modules, "torch")
    assert gpus() == []
