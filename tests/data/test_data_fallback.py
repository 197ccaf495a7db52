"""``data status`` and ``data verify`` say when a task will read the embedded STS-B/SICK copy because the data
root lacks a file (issue #19: they said "present" and "0 mismatched" while the fallback happened silently)."""

from __future__ import annotations

from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.data.root import EMBEDDED_ROOT, DataRoot

runner = CliRunner()
STSB = "senteval/downstream/STS/STSBenchmark"


def _root_without_dev(tmp_path):
    root = tmp_path / "root"
    (root / STSB).mkdir(parents=True)
    for name in ("sts-train.csv", "sts-test.csv"):
        (root / STSB / name).write_bytes((EMBEDDED_ROOT / STSB / name).read_bytes())
    return root


def test_status_names_the_fallback(tmp_path):
    root = _root_without_dev(tmp_path)
    assert DataRoot(root).locate(f"{STSB}/sts-dev.csv") == EMBEDDED_ROOT / STSB / "sts-dev.csv"
    result = runner.invoke(app, ["data", "status", "--data-dir", str(root)])
    assert result.exit_code == 0
    rows = {line.split("│")[1].strip(): line for line in result.output.splitlines() if line.count("│") > 3}
    assert [cell.strip() for cell in rows["stsb"].split("│")[1:-1]] == ["stsb", "3/3", "fallback", "root; 1 from embedded"]
    assert [cell.strip() for cell in rows["sick"].split("│")[1:-1]] == ["sick", "3/3", "present", "embedded"]


def test_verify_names_the_fallback(tmp_path):
    root = _root_without_dev(tmp_path)
    result = runner.invoke(app, ["data", "verify", "--data-dir", str(root)])
    assert result.exit_code == 0, result.output
    fallback = [line for line in result.output.splitlines() if line.startswith("FALLBACK")]
    assert fallback == [f"FALLBACK {STSB}/sts-dev.csv is missing from {root}: tasks read the embedded copy"]
    # the 3 SICK files and sts-dev.csv come from the embedded copy; sts-train/test from the root
    assert result.output.strip().splitlines()[-1] == "6 files checked, 0 mismatched, 4 of them the embedded copy (not in the data root)"
