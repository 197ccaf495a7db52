"""Issue #40: no output option writes into a run folder, a study folder or the embedding cache, unless it is the
command's own output (:mod:`benchbox.storage.output_targets`). On the old code ``compare --json RUN/manifest.json``,
``compare --csv RUN/metrics.csv``, ``eval --json OLDRUN/metrics.csv`` and ``leaderboard --json RUN/manifest.json``
each replaced a run's own file, with exit 0."""

from __future__ import annotations

import pytest

from benchbox.errors import BenchboxError
from benchbox.study.cells import STUDY_LOCK
from tests.core.test_hostile_inputs import files_under, run_cli


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    from benchbox import run_tasks
    from tests.helpers import CueWords, LetterCounts

    runs = tmp_path_factory.mktemp("results") / "runs"
    cues = type("Cues", (CueWords,), {"name": "cues", "cues": ("a", "the", "man", "is")})
    return [run_tasks(encoder, ["stsb-cosine"], cache=False).save(runs) for encoder in (LetterCounts(), cues())]


def _refused(capsys, cwd, argv, names):
    outcome = run_cli(argv, cwd, lambda: capsys.readouterr().err)
    assert outcome.code == 2 and not outcome.traceback, outcome
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and names in lines[0], outcome.stderr
    return lines[0]


@pytest.mark.parametrize("argv", [
    ["compare", "{a}", "{b}", "--json", "{a}/manifest.json"],
    ["compare", "{a}", "{b}", "--csv", "{a}/metrics.csv"],
    ["eval", "tests.helpers:LetterCounts", "-t", "stsb-cosine", "--no-cache", "--no-save", "--json", "{a}/metrics.csv"],
    ["leaderboard", "{runs}", "--json", "{a}/manifest.json"],
    ["runs", "{runs}", "--csv", "{a}/items/new.csv"],
    ["report", "{a}", "--out", "{a}/report.md"],
    ["eval", "tests.helpers:LetterCounts", "-t", "stsb-cosine", "--no-cache", "--runs-dir", "{a}"],
    ["train", "char-gru", "--dataset", "flickr8k", "--visual", "cluster", "--out", "{a}/model"],
], ids=["compare-json-manifest", "compare-csv-metrics", "eval-json-metrics", "leaderboard-json-manifest",
        "runs-csv-items", "report-out", "eval-runs-dir-a-run", "train-out-in-a-run"])
def test_a_target_inside_a_run_is_refused_and_the_run_kept(argv, two_runs, tmp_path, capsys):
    a, b = two_runs
    before = files_under(a.parent)
    argv = [x.format(a=a, b=b, runs=a.parent) for x in argv]
    line = _refused(capsys, tmp_path, argv, f"the run folder {a}")
    assert "pass a path outside it" in line
    assert files_under(a.parent) == before
    assert run_cli(["leaderboard", str(a.parent)], tmp_path, lambda: capsys.readouterr().err).code == 0


def test_a_link_into_a_run_is_followed_and_refused(two_runs, tmp_path, capsys):
    a, b = two_runs
    (tmp_path / "out.json").symlink_to(a / "manifest.json")
    before = files_under(a.parent)
    line = _refused(capsys, tmp_path, ["leaderboard", str(a.parent), "--json", "out.json"], "a link to")
    assert str(a / "manifest.json") in line and files_under(a.parent) == before


def test_targets_in_a_study_folder_or_the_cache_are_refused(tmp_path, capsys):
    study = tmp_path / "study"
    (study / "cells" / "01-x").mkdir(parents=True)
    (study / STUDY_LOCK).write_text("")
    (study / "comparison.json").write_text("{}")
    _refused(capsys, tmp_path, ["list", "tasks", "--json", str(study / "comparison.json")], f"the study folder {study}")
    _refused(capsys, tmp_path, ["list", "tasks", "--json", str(study / "cells" / "01-x" / "done.json")], "study folder")
    assert (study / "comparison.json").read_text() == "{}" and not (study / "cells" / "01-x" / "done.json").exists()
    cache = tmp_path / "cache"
    argv = ["eval", "tests.helpers:LetterCounts", "-t", "stsb-cosine", "--cache-dir", str(cache), "--no-save", "-q"]
    assert run_cli(argv, tmp_path, lambda: capsys.readouterr().err).code == 0  # marks the cache
    cached = files_under(cache)
    _refused(capsys, tmp_path, ["list", "tasks", "--json", str(cache / "tasks.json")], f"the embedding cache {cache}")
    _refused(capsys, tmp_path, ["eval", "tests.helpers:LetterCounts", "-t", "stsb-cosine", "--no-cache",
                                "--runs-dir", str(cache / "runs")], "the embedding cache")
    assert files_under(cache) == cached


def test_the_commands_own_output_passes(two_runs, tmp_path):
    from benchbox.storage.output_targets import RUN, STUDY, check_outside_results

    a, _ = two_runs
    check_outside_results(a, "--out", folder=True, holds=RUN)  # train --out RUN --resume
    study = tmp_path / "study"
    study.mkdir()
    (study / STUDY_LOCK).write_text("")
    check_outside_results(study, "--out", folder=True, holds=STUDY)
    for own in ("runs", "train"):  # what a study's cell commands write (benchbox.study.run.cell_commands)
        check_outside_results(study / "cells" / "01-glove-bow" / own, "--runs-dir", folder=True)
    with pytest.raises(BenchboxError, match="is the run folder"):
        check_outside_results(a, "--out", folder=True, holds=STUDY)
    with pytest.raises(BenchboxError, match="lies inside the study folder"):
        check_outside_results(study / "cells" / "01-glove-bow" / "log.txt", "--json")
    check_outside_results(a.parent / "leaderboard.json", "--json")  # beside the runs, not in one
