"""Per-item files are joined on their keys, never by position (issue #16: reordered rows changed the
verdicts); a repeated or missing key is an error that names the run."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from benchbox.comparison.compare import compare
from benchbox.storage.checksums import sha256_file
from benchbox.errors import BenchboxError
from benchbox.comparison.settings import CompareSettings
from tests.comparison.test_compare import make_run


def _rewrite_items(run: Path, task: str, change) -> None:
    """Rewrite ``items/<task>.csv`` through ``change`` and re-list it in the manifest (as a run whose writer
    ordered its rows differently would have)."""
    path = run / "items" / f"{task}.csv"
    frame = change(pd.read_csv(path, dtype={"subset": str}))
    frame.to_csv(path, index=False)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["files"][f"items/{task}.csv"] = {"sha256": sha256_file(path), "rows": len(frame)}
    (run / "manifest.json").write_text(json.dumps(manifest))


def test_reordered_items_of_the_second_run_give_the_same_table(tmp_path):
    a, b = make_run(tmp_path, "a", 1.0, 0, 0.8), make_run(tmp_path, "b", 1.5, 2, 0.75, seed=3)
    before = compare([str(a), str(b)], ["sts12", "retrieval", "mr"], settings=CompareSettings(n_boot=200)).table
    for task in ("sts12", "retrieval", "mr"):
        _rewrite_items(b, task, lambda f: f.sample(frac=1.0, random_state=7))
    after = compare([str(a), str(b)], ["sts12", "retrieval", "mr"], settings=CompareSettings(n_boot=200)).table
    pd.testing.assert_frame_equal(before, after)
    assert (after["verdict"] != "n.s.").sum() >= 4  # the rows carry verdicts worth keeping


@pytest.mark.parametrize("change, message", [
    (lambda f: pd.concat([f, f.iloc[[3]]], ignore_index=True), "repeated key"),
    (lambda f: f.drop(index=[0, 1]), "scored different items"),
])
def test_repeated_missing_or_absent_keys_name_the_run(tmp_path, change, message):
    a, b = make_run(tmp_path, "a", 1.0, 0, 0.8), make_run(tmp_path, "b", 1.5, 2, 0.75, seed=3)
    _rewrite_items(b, "sts12", change)
    with pytest.raises(BenchboxError, match=message) as caught:
        compare([str(a), str(b)], ["sts12"], settings=CompareSettings(n_boot=50))
    assert str(b) in str(caught.value)
