"""Declared checksums are enforced (issue #39): a data file whose sha256 is not the one ``data_manifest.json``
publishes is refused before any work, in one line naming the file and both digests (a SICK test file truncated to
99 pairs was scored on its 99 pairs, exit 0); ``--allow-data-mismatch`` evaluates it, says so, records the
expected and found digests in the run manifest, and the report shows them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchbox.comparison.sources import resolve_sources
from benchbox.data.root import EMBEDDED_ROOT, known_files
from benchbox.storage.checksums import sha256_file
from benchbox.reports.provenance import options_table
from benchbox.storage.runs import MANIFEST

SICK_TEST = "senteval/downstream/SICK/SICK_test_annotated.txt"
#: its sha256 as benchbox/data/data_manifest.json publishes it (`benchbox describe sicke`)
PUBLISHED = next(known.sha256 for known in known_files()["sick"] if known.path == SICK_TEST)


@pytest.fixture(autouse=True)
def _published_checksums_enforced(monkeypatch):
    """As for a user: the suite's allowance for its synthetic data roots (tests/conftest.py) removed."""
    monkeypatch.delenv("BENCHBOX_ALLOW_DATA_MISMATCH")


@pytest.fixture
def truncated(tmp_path) -> Path:
    """A data root whose SICK test file holds its header and the first 99 pairs (the rest falls back to the
    embedded copy)."""
    root = tmp_path / "root"
    (root / SICK_TEST).parent.mkdir(parents=True)
    lines = (EMBEDDED_ROOT / SICK_TEST).read_text(encoding="utf-8").splitlines(keepends=True)
    (root / SICK_TEST).write_text("".join(lines[:100]), encoding="utf-8")
    return root


def _benchbox(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchbox", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def test_a_truncated_sick_test_file_is_refused_in_one_line(truncated, tmp_path):
    done = _benchbox("eval", "glove-bow", "-t", "sicke", "--data-dir", str(truncated), "--runs-dir", "runs",
                     cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stderr.count("error:") == 1
    line = done.stderr.strip().splitlines()[-1]
    found = sha256_file(truncated / SICK_TEST)
    assert line == (f"error: {truncated / SICK_TEST} has sha256 {found}, not the {PUBLISHED} "
                    f"published for {SICK_TEST} (task sicke): restore the file (`benchbox data status`), or evaluate "
                    "this copy with --allow-data-mismatch (recorded in the run)")
    assert not any((tmp_path / "runs").glob("*"))  # no run written


def test_an_allowed_mismatch_is_evaluated_said_recorded_and_reported(truncated, tmp_path):
    done = _benchbox("eval", "glove-bow", "-t", "sickr-cosine", "--data-dir", str(truncated), "--runs-dir", "runs",
                     "--bootstrap", "0", "--allow-data-mismatch", "--json", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert {r["n"] for r in json.loads(done.stdout)["records"]} == {99}
    found = sha256_file(truncated / SICK_TEST)
    assert (f"--allow-data-mismatch: evaluating 1 data file(s) that differ from the published ones ({SICK_TEST}: "
            f"sha256 {found[:12]}…, published {PUBLISHED[:12]}…)") in done.stderr
    (run,) = (tmp_path / "runs").iterdir()
    manifest = json.loads((run / MANIFEST).read_text())
    assert manifest["data_mismatch"] == {SICK_TEST: {"expected": PUBLISHED, "found": found}}
    rows = {row[0]: row[1] for row in options_table(resolve_sources([str(run)])).rows}
    assert rows[f"data_mismatch.{SICK_TEST}.found"] == found


def test_the_published_copies_pass_and_record_nothing(tmp_path):
    (tmp_path / "empty").mkdir()
    done = _benchbox("eval", "glove-bow", "-t", "sickr-cosine", "--data-dir", "empty", "--runs-dir", "runs",
                     "--bootstrap", "0", "--allow-data-mismatch", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (run,) = (tmp_path / "runs").iterdir()
    assert "data_mismatch" not in json.loads((run / MANIFEST).read_text())
