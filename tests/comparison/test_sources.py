"""One resolver for compare, report and the API (benchbox.comparison.sources): ``module:attribute`` encoders and folders of
runs reach compare, a run named twice is one source, and compare_sources reads nothing but its sources. On the
embedded STS-B (stsb-cosine)."""

from __future__ import annotations

import pytest

from benchbox.comparison.compare import compare, compare_sources
from benchbox.errors import BenchboxError
from benchbox.comparison.on_demand import OnDemand
from benchbox.comparison.sources import resolve_sources
from benchbox.task_contract.options import TaskOptions
from benchbox.comparison.settings import CompareSettings

BOOT = 50


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """Two encoders on stsb-cosine, one of them named by ``module:attribute`` (not registered)."""
    root = tmp_path_factory.mktemp("sources")
    runs, empty = root / "runs", root / "empty"
    empty.mkdir()
    logged: list[str] = []
    sources = resolve_sources(["glove-bow", "tests.helpers:LetterCounts"], ["stsb-cosine"], log=logged.append,
                              on_demand=OnDemand(empty, runs, TaskOptions(bootstrap=BOOT)))
    return runs, empty, sources, logged


def test_module_attribute_is_evaluated_on_demand_and_saved(evaluated):
    runs, _, sources, logged = evaluated
    assert [s.name for s in sources] == ["glove-bow", "letter-counts"]
    assert all(s.run is not None and s.run.kind == "eval" and s.path.parent == runs for s in sources)
    assert sources[1].origin == "tests.helpers:LetterCounts"
    assert sum(line.startswith("run written to") for line in logged) == 2


def test_a_folder_of_runs_is_every_evaluation_in_it_and_a_run_named_twice_is_one_model(evaluated):
    runs, empty, sources, _ = evaluated
    again = resolve_sources([str(runs), str(sources[0].path)])
    assert sorted(s.path for s in again) == sorted(s.path for s in sources)
    log = []
    twice = resolve_sources([str(sources[0].path), str(sources[0].path)], on_demand=OnDemand(empty, runs),
                            log=log.append)
    assert [s.path for s in twice] == [sources[0].path]  # compare too: one run is one model
    assert log == [f"{sources[0].path} is named more than once: it counts once, as {twice[0].label}"]
    result = compare([str(runs)], ["stsb-cosine"], data_dir=empty, runs_dir=runs, settings=CompareSettings(n_boot=BOOT))
    assert result.models == [s.label for s in sorted(sources, key=lambda s: s.path.name)]
    assert set(result.table["metric"]) >= {"pearson", "spearman"}


def test_compare_sources_equals_compare_on_the_same_runs(evaluated):
    runs, empty, sources, _ = evaluated
    by_paths = compare([str(s.path) for s in sources], ["stsb-cosine"], data_dir=empty, runs_dir=runs, settings=CompareSettings(n_boot=BOOT))
    pure = compare_sources(sources, ["stsb-cosine"], settings=CompareSettings(n_boot=BOOT))
    assert pure.table.equals(by_paths.table)
    pearson = pure.table[pure.table["metric"] == "pearson"].iloc[0]
    assert pearson["test"] == "jackknife (sentence groups)" and 0 <= pearson["p"] <= 1  # STS-B test reuses sentences
    assert pearson["value_a"] == pytest.approx(sources[0].value("stsb-cosine", "test", "pearson")["value"])


def test_seeds_name_sources_by_what_named_them_or_by_label(evaluated):
    _, _, sources, _ = evaluated
    with pytest.raises(BenchboxError, match="--seeds m: nowhere is not among the compared models"):
        compare_sources(sources, ["stsb-cosine"], settings=CompareSettings(n_boot=BOOT), seeds={"m": ["nowhere"]})
    # both found (one by its folder, one by its label), and refused: two encoders are not seeds of one model
    with pytest.raises(BenchboxError, match=f"--seeds m: {sources[0].label} and {sources[1].label} are not seeds of "
                                            "one model: encoder.class"):
        compare_sources(sources, ["stsb-cosine"], settings=CompareSettings(n_boot=BOOT), seeds={"m": [str(sources[0].path), sources[1].label]})


def test_report_mode_refuses_an_encoder_name(evaluated):
    with pytest.raises(BenchboxError, match="glove-bow does not exist: pass run folders"):
        resolve_sources(["glove-bow"])


def test_every_record_names_its_unit_as_the_task_declares_it(evaluated):
    from benchbox import load_runs
    from benchbox.task_contract.metadata import task_metadata

    runs, _, _, _ = evaluated
    table = load_runs(runs)
    units = dict(zip(table["metric"], table["unit"]))
    assert units["pearson"] == units["spearman"] == "r"
    assert task_metadata("mr").spec("accuracy").unit == "%" and task_metadata("retrieval").spec("medr").unit == "rank"
    recorded = {"metrics": [{"name": "auc", "unit": "value"}, {"name": "hit", "unit": "%"}]}
    assert task_metadata("not-installed", recorded).spec("hit").unit == "%"
    assert task_metadata("not-installed").spec("x").unit == "value"
