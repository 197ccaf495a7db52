"""An mteb results folder as comparators, ``mteb:PATH`` (benchbox.data.mteb_results): a small folder written by
hand as mteb 2.x writes one, read without mteb; what has no counterpart is skipped with a line, what is broken
stops with one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchbox.comparison.sources import resolve_sources
from benchbox.data.mteb_results import read_results
from benchbox.data.mteb_tasks import BY_NAME
from benchbox.errors import BenchboxError
from benchbox.stats import fisher_ci


def task_json(name: str, spearman: float, pearson: float, *, revision: str | None = None, **extra) -> dict:
    """A task result as mteb's ``TaskResult.to_disk`` writes it for an STS task (mteb 2.26)."""
    row = BY_NAME[name]
    entry = {"pearson": pearson, "spearman": spearman, "cosine_pearson": pearson, "cosine_spearman": spearman,
             "manhattan_pearson": 0.1, "manhattan_spearman": 0.1, "euclidean_pearson": 0.1,
             "euclidean_spearman": 0.1, "main_score": spearman, "hf_subset": "default", "languages": ["eng-Latn"],
             "mteb_version": "2.26.24", **extra}
    return {"dataset_revision": revision or row.revision, "task_name": name, "mteb_version": "2.26.24",
            "scores": {row.split: [entry]}, "evaluation_time": 1.5, "kg_co2_emissions": None, "date": 1795806992.0}


def write(folder: Path, name: str, payload) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
    return path


@pytest.fixture
def results(tmp_path) -> Path:
    """Two models: one with STS12, STSBenchmark, SICK-R (no counterpart), STS17 (none either) and a
    ``model_meta.json``; one with SICK-R only."""
    root = tmp_path / "results"
    a = root / "org__model-a" / "abc123"
    write(a, "STS12", task_json("STS12", 0.7215, 0.6834))
    write(a, "STSBenchmark", task_json("STSBenchmark", 0.8123, 0.8001))
    write(a, "SICK-R", task_json("SICK-R", 0.79, 0.81))
    write(a, "STS17", {**task_json("STS12", 0.5, 0.5), "task_name": "STS17"})
    write(a, "model_meta", {"name": "org/model-a", "revision": "abc123"})
    write(root / "other__b" / "no_revision_available", "SICK-R", task_json("SICK-R", 0.7, 0.7))
    return root


def test_a_results_folder_is_one_comparator_per_model_with_what_corresponds(results):
    lines = []
    [model] = read_results(f"mteb:{results}", lines.append)
    assert (model.name, model.revision, model.versions) == ("org/model-a", "abc123", ("2.26.24",))
    rows = model.metrics.set_index(["task", "subset", "metric"])
    assert sorted(rows.index) == [("sts12", "all", "pearson_pooled"), ("sts12", "all", "spearman_pooled"),
                                  ("stsb-cosine", "test", "pearson"), ("stsb-cosine", "test", "spearman")]
    spearman = rows.loc[("sts12", "all", "spearman_pooled")]
    assert spearman["value"] == 0.7215 and spearman["n"] == 3108
    assert (spearman["ci_low"], spearman["ci_high"]) == pytest.approx(fisher_ci(0.7215, 3108, spearman=True))
    assert tuple(rows.loc[("stsb-cosine", "test", "pearson"), ["ci_low", "ci_high"]]) == pytest.approx(
        fisher_ci(0.8001, 1379))
    assert lines == [
        "mteb: org/model-a: SICK-R skipped: " + BY_NAME["SICK-R"].departure,
        "mteb: org/model-a: STS17 skipped: no benchbox counterpart",
        "mteb: other/b: SICK-R skipped: " + BY_NAME["SICK-R"].departure,
        f"mteb: other/b: no task with a benchbox counterpart in {results / 'other__b' / 'no_revision_available'}; "
        "skipped",
    ]


def test_mteb_path_is_a_source_where_paper_names_are(results, tmp_path):
    (tmp_path / "cache").mkdir()
    (tmp_path / "results").rename(tmp_path / "cache" / "results")  # an mteb cache: its results/ folder is read
    [source] = resolve_sources([f"mteb:{tmp_path / 'cache'}"])
    assert source.label == "mteb:org/model-a" and source.is_reference and source.run is None
    assert source.items("sts12") is None and "mteb results" in source.citation and "abc123" in source.citation
    [named] = resolve_sources([f"theirs=mteb:{tmp_path / 'cache'}"])
    assert named.label == "theirs"


def test_a_result_on_another_revision_or_scale_is_skipped_with_a_line(tmp_path):
    folder = tmp_path / "m__x" / "r1"
    write(folder, "STS12", task_json("STS12", 0.5, 0.5, revision="0" * 40))
    write(folder, "STS13", task_json("STS13", 72.15, 68.3))  # r × 100 is not mteb's scale
    write(folder, "STS14", task_json("STS14", 0.4, 0.3))
    lines = []
    [model] = read_results(f"mteb:{tmp_path}", lines.append)
    assert set(model.metrics["task"]) == {"sts14"}
    assert lines == [f"mteb: m/x: STS12.json skipped: dataset revision {'0' * 40}, the correspondence's is "
                     f"{BY_NAME['STS12'].revision}",
                     "mteb: m/x: STS13.json skipped: its test cosine_spearman is 72.15, not a correlation in [-1, 1]"]


def one_line(caught: pytest.ExceptionInfo) -> str:
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_a_missing_folder_or_a_broken_file_is_one_line(tmp_path):
    with pytest.raises(BenchboxError) as caught:
        read_results(f"mteb:{tmp_path / 'nope'}")
    assert one_line(caught).startswith(f"mteb:{tmp_path / 'nope'}: no such folder; give an mteb results folder")
    with pytest.raises(BenchboxError) as caught:
        read_results(f"mteb:{tmp_path}")
    assert one_line(caught) == f"mteb:{tmp_path}: {tmp_path} holds no mteb results (MODEL/REVISION/TASK.json)"
    bad = write(tmp_path / "m__x" / "r1", "STS12", '{"task_name": "STS12", "scores": ')
    with pytest.raises(BenchboxError) as caught:
        read_results(f"mteb:{tmp_path}")
    assert one_line(caught).startswith(f"{bad} is not valid JSON (Expecting value: line 1")
    write(tmp_path / "m__x" / "r1", "STS12", {"mteb_dataset_name": "STS12", "test": {"cos_sim": {"spearman": 0.5}}})
    with pytest.raises(BenchboxError) as caught:
        read_results(f"mteb:{tmp_path}")
    assert one_line(caught).startswith(f"{bad} is not an mteb task result (mteb >= 1.11: an object with task_name")


def test_a_folder_with_nothing_that_corresponds_stops_in_one_line(tmp_path):
    write(tmp_path / "m__x" / "r1", "SICK-R", task_json("SICK-R", 0.7, 0.7))
    lines = []
    with pytest.raises(BenchboxError) as caught:
        read_results(f"mteb:{tmp_path}", lines.append)
    assert one_line(caught).startswith(f"mteb:{tmp_path}: no result of a task with a benchbox counterpart (STS12,")
    assert len(lines) == 2 and all(line.startswith("mteb: m/x: ") for line in lines)
