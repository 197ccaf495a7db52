"""An outside plugin whose task is tested by its own kind of paired test compares, reports, ranks and studies like
a built-in one, and its runs stay honest where it is not installed (issue #54).

``tests/plugin_rank`` (benchbox-rankplugin) is installed here into a folder of its own, put on ``PYTHONPATH`` for
the commands that have the plugin and left off for those that stand where it is not installed. Its
``paraphrase-rank`` task tests MRR by the plugin's kind (a sign-flip test of per-query reciprocal ranks) and R@1
and mean rank by benchbox's ``ranks``; ``paraphrase-sts`` is declared in TOML and ships through the entry point
group. Every command is a real ``benchbox`` process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from benchbox.errors import BenchboxError

PLUGIN = Path(__file__).resolve().parents[1] / "plugin_rank"
TASKS = ("paraphrase-rank", "paraphrase-sts")


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    """The folder the plugin is installed in (built from a copy: the checkout gets no build/ folder)."""
    target = tmp_path_factory.mktemp("rankplugin")
    source = shutil.copytree(PLUGIN, target / "src")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                           "--no-build-isolation", "--target", str(target / "site"), str(source)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(target / "site"))
    from benchbox.registry import TASKS as REGISTRY
    from benchbox.tasks.declarative import packaged_task
    from benchbox_rankplugin.task import ParaphraseRank

    # this process read the entry points before the plugin was installed: its tasks are registered as a notebook
    # would (the commands below, new processes, find them through the entry points)
    added = [name for name in (ParaphraseRank.name, "paraphrase-sts") if name not in REGISTRY]
    for name in added:
        REGISTRY.register(name, ParaphraseRank if name == ParaphraseRank.name
                          else packaged_task("benchbox_rankplugin", "tasks.toml", name))
    yield target / "site"
    for name in added:
        REGISTRY.unregister(name)
    from benchbox.registry import ENCODERS

    for registry in (ENCODERS, REGISTRY):  # entry points read while it was on the path: it is uninstalled again
        for entry in registry.entries():
            if entry.provider == "benchbox-rankplugin":
                registry.unregister(entry.name, provider=entry.provider)
    sys.path.remove(str(target / "site"))
    from benchbox.task_contract.paired_tests import KINDS

    KINDS.pop("signflip-rr", None)  # importing the plugin's task registered its kind in this process


def benchbox(folder: Path, *args: str, plugin: Path | None) -> subprocess.CompletedProcess:
    """``benchbox ARGS`` in ``folder``, with the plugin installed (``plugin``: its folder) or not (None)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(plugin) if plugin else None,
                                                                      os.environ.get("PYTHONPATH")]))}
    env.pop("BENCHBOX_DATA", None)
    done = subprocess.run([sys.executable, "-m", "benchbox", *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, f"benchbox {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def runs(plugin, tmp_path_factory) -> Path:
    """Two seeds of the plugin's encoder and a narrower variant, each evaluated on both plugin tasks."""
    folder = tmp_path_factory.mktemp("plugin-runs")
    tasks = [a for task in TASKS for a in ("-t", task)]
    for options in (["-e", "seed=1"], ["-e", "seed=2"], ["-e", "dim=16"]):
        benchbox(folder, "eval", "-q", "trigram-projection", *options, *tasks, "--runs-dir", "runs",
                 "--bootstrap", "50", plugin=plugin)
    return folder


def test_check_task_names_the_missing_item_key_in_one_line_before_any_run(plugin):
    """compare crashed with a KeyError on 'direction' (joined rows suffix every non-key column) after eval and
    check_task had both accepted the task; now check_task says so, and the task is refused where it is loaded."""
    from benchbox.registry import TASKS as REGISTRY
    from benchbox.task_contract.protocol import resolve_tasks
    from benchbox.testing import task_failures
    from benchbox_rankplugin.encoder import TrigramProjection
    from benchbox_rankplugin.task import ParaphraseRank

    class WithoutDirection(ParaphraseRank):
        name = "paraphrase-rank-keys"
        item_keys = ("subset", "item")

    found = task_failures(WithoutDirection, TrigramProjection())
    assert found == ["item_keys (subset, item) lack direction, which the 'signflip-rr', 'ranks' tests of metrics mrr, "
                     "r1, meanr select rows by: add direction to item_keys (compare pairs two runs' rows on them)"]
    REGISTRY.register(WithoutDirection.name, WithoutDirection)
    try:
        with pytest.raises(BenchboxError, match=r"^task paraphrase-rank-keys: item_keys \(subset, item\) lack direction"):
            resolve_tasks([WithoutDirection.name])
    finally:
        REGISTRY.unregister(WithoutDirection.name)
    assert task_failures(ParaphraseRank, TrigramProjection()) == []
    assert task_failures("paraphrase-sts", TrigramProjection()) == []  # the TOML task, through its entry point


def test_a_kind_whose_test_raises_is_one_line_naming_kind_and_task(plugin, runs, monkeypatch):
    from benchbox.comparison.compare import compare
    from benchbox.comparison.settings import CompareSettings
    from benchbox.task_contract.paired_tests import KINDS

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(KINDS["signflip-rr"], "test", broken)
    folders = sorted(str(p) for p in (runs / "runs").iterdir())
    with pytest.raises(BenchboxError) as caught:
        compare(folders[:2], ["paraphrase-rank"], settings=CompareSettings(n_boot=20))
    assert str(caught.value) == ("paraphrase-rank: the 'signflip-rr' test of metric mrr on subset first-to-second "
                                 "failed: ZeroDivisionError: division by zero; fix the kind, or report it to its "
                                 "provider")


def test_the_plugin_task_compares_reports_and_ranks_every_model(plugin, runs):
    folders = sorted(str(p) for p in (runs / "runs").iterdir())
    benchbox(runs, "compare", *folders, "--test-resamples", "200", "--json", "compare.json", plugin=plugin)
    table = pd.DataFrame(json.loads((runs / "compare.json").read_text())["comparisons"])
    tested = table[table["task"] == "paraphrase-rank"].groupby("metric")["test"].agg(set).to_dict()
    assert tested == {"mrr": {"sign-flip"}, "r1": {"mcnemar"}, "meanr": {"wilcoxon"}}
    assert set(table[table["task"] == "paraphrase-sts"]["metric"]) == {"pearson", "spearman"}

    benchbox(runs, "report", *folders, "--compare", "--out", "report.md", plugin=plugin)
    assert "paraphrase-rank" in (runs / "report.md").read_text()

    benchbox(runs, "leaderboard", "runs", "--csv", "board.csv", plugin=plugin)
    board = pd.read_csv(runs / "board.csv")
    assert len(board) == 2  # the two seeds are one model
    assert board[["paraphrase-rank_low", "overall_low", "rank", "rank_low", "borda", "borda_rank"]].notna().all().all()
    # every model in a group (no claim here: each kind's rows lie on one item set, a claim pools two or more)
    assert list(board["group"]) == ["best", "no claim"]


def test_a_two_seed_study_of_the_plugin_runs(plugin, tmp_path):
    (tmp_path / "s.toml").write_text('[study]\ntasks = ["paraphrase-rank", "paraphrase-sts"]\n\n'
                                     '[[encoder]]\nname = "trigram-projection"\nseeds = [1, 2]\n\n'
                                     '[[encoder]]\nname = "trigram-projection"\noptions = { dim = 16 }\n')
    benchbox(tmp_path, "study", "s.toml", "--out", "study", plugin=plugin)
    comparison = json.loads((tmp_path / "study" / "comparison.json").read_text())
    assert {"mrr", "r1", "pearson"} <= set(pd.DataFrame(comparison["comparisons"])["metric"])


def test_where_the_plugin_is_not_installed_its_rows_are_listed_as_untested(plugin, runs):
    """MetricSpec.from_plain mapped the unknown kind to None and compare dropped the main-score rows silently."""
    folders = sorted(str(p) for p in (runs / "runs").iterdir())
    done = benchbox(runs, "compare", *folders, "--test-resamples", "200", "--json", "bare.json", plugin=None)
    found = json.loads((runs / "bare.json").read_text())
    untested = ("paraphrase-rank mrr (first-to-second, second-to-first): not tested, its kind of paired test "
                "'signflip-rr' is not installed here; install the plugin that declares it")
    assert found["claim_notes"].count(untested) == 1 and untested in done.stdout
    table = pd.DataFrame(found["comparisons"])
    assert set(table[table["task"] == "paraphrase-rank"]["metric"]) == {"r1", "meanr"}  # the ranks rows still test
