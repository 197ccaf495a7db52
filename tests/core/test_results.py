"""A task's per-item rows are checked when the run is written (issue #24, "Task output validated when the run is
written"): broken inputs that were scored with exit 0, or first failed at compare time, are refused by ``eval``
in one line naming the task, the subset or file and the item (benchbox/task_contract/item_checks.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchbox.data.root import ALLOW_MISMATCH_ENV, DataRoot
from benchbox.errors import BenchboxError
from benchbox.evaluation import run_tasks
from benchbox.results import load_runs
from benchbox.task_contract.paired_tests import KINDS
from benchbox.task_contract.protocol import MetricRecord, MetricSpec, Task, TaskResult
from benchbox.tasks.senteval_data import read_sick
from tests.helpers import LetterCounts
from tests.core.test_hostile_inputs import STS12

SICK_TEST = Path(__file__).resolve().parents[2] / "benchbox/data/embedded/senteval/downstream/SICK/SICK_test_annotated.txt"


def one_line(caught: pytest.ExceptionInfo) -> str:
    message = str(caught.value)
    assert "\n" not in message
    return message


def sts12_root(tmp_path: Path, data_root: DataRoot, constant_gold: str | None = None) -> Path:
    """A data root with a copy of the real STS12 (of the real data root ``data_root``); ``constant_gold``: every
    score of MSRpar set to it."""
    folder = tmp_path / "root" / STS12
    shutil.copytree(data_root.root / STS12, folder)
    if constant_gold is not None:
        gold = folder / "STS.gs.MSRpar.txt"
        gold.write_text("".join(f"{constant_gold}\n" if line.strip() else "\n"
                                for line in gold.read_text().splitlines()))
    return tmp_path / "root"


def test_sts_gold_file_with_all_scores_equal_is_refused_naming_task_and_file(tmp_path, data_root, monkeypatch):
    monkeypatch.setenv(ALLOW_MISMATCH_ENV, "1")  # the spoiled copy is not the published file
    # before: pearson "—" for MSRpar, a finite pearson_mean interval and MSRpar pooled in, exit 0
    with pytest.raises(BenchboxError) as caught:
        run_tasks(LetterCounts(), ["sts12"], data_dir=sts12_root(tmp_path, data_root, "3.000"), cache=False)
    message = one_line(caught)
    assert message.startswith("task sts12, subset MSRpar (data file STS.gs.MSRpar.txt, STS.input.MSRpar.txt)")
    assert "all 750 items have gold 3.0" in message and "fix the data file" in message


def test_real_sts12_with_ties_in_gold_is_scored(tmp_path, data_root):
    evaluation = run_tasks(LetterCounts(), ["sts12"], data_dir=sts12_root(tmp_path, data_root), cache=False)
    assert {r.subset for r in evaluation.records} >= {"MSRpar", "SMTeuroparl", "all"}


def test_a_repeated_sick_test_line_is_refused_naming_the_file_and_the_pair(tmp_path):
    # before: the pair was scored twice (n = 4928 of 4927)
    lines = SICK_TEST.read_bytes().splitlines(keepends=True)
    path = tmp_path / "SICK_test_annotated.txt"
    path.write_bytes(b"".join([*lines, lines[5]]))
    pair_id = lines[5].split(b"\t")[0].decode()
    with pytest.raises(BenchboxError) as caught:
        read_sick(path)
    assert one_line(caught) == (f"{path}:{len(lines) + 1}: pair {pair_id} repeats line 6, so it would be scored "
                                "twice: delete the repeated line")
    assert len(read_sick(SICK_TEST)) == 4927


class Plugin(Task):
    """An out-of-tree task whose per-item rows are whatever the test gives it (:func:`plugin`)."""

    name = "items-plugin"
    main_score = "pearson"
    metrics = (MetricSpec("pearson", "correlation", unit="r", summary=True),)
    items: pd.DataFrame

    def evaluate(self, encoder, ctx) -> TaskResult:
        return TaskResult(self.name, [MetricRecord(self.name, "test", self.main_score, 0.5, n=len(self.items))],
                          self.items, data_checksums={"plugin/pairs_test.tsv": "0" * 64})


def plugin(items: pd.DataFrame, metrics: tuple[MetricSpec, ...] = Plugin.metrics,
           keys: tuple[str, ...] = ("subset", "item"), version: str = "1") -> Task:
    return type("Plugin", (Plugin,), {"items": items, "metrics": metrics, "item_keys": keys, "version": version})()


def pairs(n: int = 6, **columns) -> pd.DataFrame:
    frame = pd.DataFrame({"subset": "test", "item": np.arange(n), "gold": np.arange(n, dtype=float),
                          "score": np.linspace(0, 1, n)})
    return frame.assign(**columns)


def refusal(task: Task, tmp_path: Path) -> str:
    with pytest.raises(BenchboxError) as caught:
        run_tasks(LetterCounts(), [task], data_dir=tmp_path, cache=False)
    return one_line(caught)


def test_nan_gold_of_a_plugin_task_is_one_line_at_eval(tmp_path):
    # before: eval wrote the run; compare then said "different gold scores for the same items"
    message = refusal(plugin(pairs(gold=[0.0, 1.0, np.nan, 3.0, 4.0, 5.0])), tmp_path)
    assert message == ("task items-plugin: 1 items have no finite gold, e.g. (subset=test, item=2) (data file "
                       "pairs_test.tsv) has gold nan: fix the data file or the task's evaluate")


def test_a_ranks_test_without_direction_is_one_line_at_eval_naming_the_column(tmp_path):
    # before: eval wrote the run; compare ended in KeyError: 'direction'
    items = pd.DataFrame({"subset": "all", "query": np.arange(5), "rank": [1.0, 2, 1, 3, 7]})
    ranks = (MetricSpec("r1", "ranks", unit="%", summary=True),)
    message = refusal(plugin(items, ranks, keys=("subset", "query")), tmp_path)
    assert message.startswith("task items-plugin: its per-item rows lack the column(s) direction (read by the "
                              "'ranks' test of metric r1; columns given: subset, query, rank)")


def test_a_repeated_item_key_is_refused_naming_the_item(tmp_path):
    items = pairs(item=[0, 1, 2, 3, 3, 5])
    message = refusal(plugin(items), tmp_path)
    assert message.startswith("task items-plugin: 2 per-item rows share a key, e.g. (subset=test, item=3) "
                              "(data file pairs_test.tsv)")


def test_constant_predictions_are_refused_but_a_constant_accuracy_is_not(tmp_path):
    assert "all 6 items have score 0.5" in refusal(plugin(pairs(score=0.5)), tmp_path)
    accuracy = (MetricSpec("accuracy", "classification", unit="%", summary=True),)
    run_tasks(LetterCounts(), [plugin(pairs(correct=1), accuracy)], data_dir=tmp_path, cache=False)


def test_compare_reads_the_columns_the_test_kinds_declare():
    import benchbox.comparison.compare as compare

    assert not hasattr(compare, "TEST_COLUMNS") and compare.KINDS is KINDS
    assert KINDS["ranks"].columns == ("direction", "rank")


def test_load_runs_shows_the_task_version(tmp_path):
    # before: task_version None for every task
    run = run_tasks(LetterCounts(), [plugin(pairs(), version="2.1")], data_dir=tmp_path, cache=False).save(
        tmp_path / "runs")
    assert load_runs(run)["task_version"].tolist() == ["2.1"]
