"""Issue #40: a run folder whose ``manifest.json`` is some other JSON (another command's output written over it,
e.g. ``leaderboard --json RUN/manifest.json``) is one line naming the file in ``leaderboard``, ``runs``-reading
commands and ``compare``, or with ``--skip-bad`` left out with one line; before, ``leaderboard`` ended in
``KeyError: (nan, nan, 'standard')`` and compare compared it as a model with no name."""

from __future__ import annotations

import shutil

import pytest

from benchbox.comparison.compare import compare
from benchbox.errors import BenchboxError
from benchbox.comparison.settings import CompareSettings
from tests.comparison.test_compare import make_run
from tests.comparison.test_seeds_copies_versions import cli


@pytest.fixture
def spoiled(tmp_path, capsys):
    """A folder of two runs: a good one, and a copy whose manifest is the leaderboard's JSON of the first."""
    good = make_run(tmp_path, "good", 1.0, 0, 0.8)
    folder = tmp_path / "folder"
    folder.mkdir()
    shutil.copytree(good, folder / good.name)
    shutil.copytree(good, folder / "spoiled")
    code, out, _ = cli(capsys, "leaderboard", str(good), "--json", "-")
    assert code == 0
    (folder / "spoiled" / "manifest.json").write_text(out)
    return folder, good


def test_leaderboard_over_a_foreign_manifest_is_one_line(spoiled, capsys):
    folder, _ = spoiled
    for target in (folder, folder / "spoiled"):
        code, _, err = cli(capsys, "leaderboard", str(target))
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert code == 2 and "Traceback" not in err and len(errors) == 1, err
        assert errors[0] == (f"error: cannot load the run {folder / 'spoiled'}: {folder / 'spoiled' / 'manifest.json'} "
                             "is not a benchbox run manifest: it names no encoder (its keys: all_runs, columns, method, rows, "
                             "schema_version); restore it or re-run the evaluation")
    code, out, err = cli(capsys, "leaderboard", str(folder), "--skip-bad")
    assert code == 0 and f"skipped the run {folder / 'spoiled'}: " in err and "| good |" in out


def test_compare_refuses_a_foreign_manifest(spoiled):
    folder, good = spoiled
    with pytest.raises(BenchboxError, match="is not a benchbox run manifest: it names no encoder"):
        compare([str(folder / "spoiled"), str(good)], ["sts12"], settings=CompareSettings(n_boot=20))
