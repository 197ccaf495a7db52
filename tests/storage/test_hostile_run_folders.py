"""Hostile run folders read by ``compare`` and ``report`` (issue #16: a JSON-list manifest, a non-UTF-8
manifest and empty tables ended in tracebacks): each is one line naming the file, exit 2, nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.comparison.test_compare import make_run


def _unlisted(run: Path, name: str) -> None:
    """An older run (no file list in its manifest) whose ``name`` is empty."""
    manifest = json.loads((run / "manifest.json").read_text())
    del manifest["files"]
    (run / "manifest.json").write_text(json.dumps(manifest))
    (run / name).write_text("")


def _files(folder: Path) -> list[Path]:
    """Every path under ``folder`` but output locks (``.NAME.lock``, empty, left by :mod:`benchbox.storage.outdir`)."""
    return sorted(p for p in folder.rglob("*") if not (p.name.startswith(".") and p.name.endswith(".lock")))


CASES = {  # name: (how the run is spoiled, the file the message names)
    "manifest a JSON list": (lambda r: (r / "manifest.json").write_text("[1, 2]"), "manifest.json"),
    "manifest not UTF-8": (lambda r: (r / "manifest.json").write_bytes(
        (r / "manifest.json").read_bytes().replace(b'"name"', b'"n\xe9me"', 1)), "manifest.json"),
    "empty metrics": (lambda r: (r / "metrics.csv").write_text(""), "metrics.csv"),
    "empty per-item file": (lambda r: (r / "items" / "sts12.csv").write_text(""), "items/sts12.csv"),
    "empty metrics, unlisted": (lambda r: _unlisted(r, "metrics.csv"), "metrics.csv"),
    "empty per-item file, unlisted": (lambda r: _unlisted(r, "items/sts12.csv"), "items/sts12.csv"),
}
COMMANDS = {
    "compare": lambda a, b, out: ["compare", str(a), str(b), "--task", "sts12", "--json", str(out / "c.json")],
    "report": lambda a, b, out: ["report", str(a), str(b), "--compare", "--out", str(out / "r.html")],
}


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", CASES)
def test_hostile_run_folder_is_one_line_and_writes_nothing(tmp_path, case, command):
    spoil, name = CASES[case]
    a, b = make_run(tmp_path, "a", 1.0, 0, 0.8), make_run(tmp_path, "b", 1.5, 2, 0.75, seed=3)
    spoil(b)
    out = tmp_path / "out"
    out.mkdir()
    before = _files(tmp_path)
    done = subprocess.run([sys.executable, "-m", "benchbox", *COMMANDS[command](a, b, out)], capture_output=True,
                          text=True, cwd=out, timeout=120)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and done.stderr.splitlines()[-1] == errors[0] and "Traceback" not in done.stderr
    assert str(b / name) in errors[0]
    assert _files(tmp_path) == before
