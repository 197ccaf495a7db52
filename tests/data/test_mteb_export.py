"""``benchbox export mteb`` (benchbox.data.mteb_export): a run's scores as mteb result files, read back by
``mteb:PATH`` with the same scores (no mteb needed) and by mteb's own loaders (skipped without mteb:
``pip install benchbox[mteb]``); a task evaluated otherwise than MTEB does is skipped, a file is never
overwritten. On the embedded STS-B and SICK test sets, and on a made-up STS12."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchbox.data.mteb_results import read_results
from benchbox.data.mteb_tasks import BY_NAME, MTEB_VERSION
from benchbox.errors import BenchboxError
from benchbox.evaluation import run_tasks
from benchbox.data.mteb_export import export_run
from benchbox.storage.runs import Run
from benchbox.task_contract.options import TaskOptions
from benchbox.tasks.sts import STS12
from tests.helpers import LetterCounts

MTEB_REASON = "mteb is not installed (pip install benchbox[mteb])"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    """GloVe-BOW on stsb-cosine and sickr-cosine (the embedded, published test sets)."""
    runs = tmp_path_factory.mktemp("runs")
    return Run.open(run_tasks("glove-bow", ["stsb-cosine", "sickr-cosine"], options=TaskOptions(bootstrap=0),
                              cache=False).save(runs))


def value(run: Run, task: str, subset: str, metric: str) -> float:
    m = run.metrics
    rows = m[(m["task"] == task) & (m["subset"].astype(str) == subset) & (m["metric"] == metric)]
    return float(rows["value"].iloc[0])


def test_export_writes_mtebs_file_for_the_tasks_that_correspond(run, tmp_path):
    lines = []
    [path] = export_run(run, tmp_path, log=lines.append)
    assert path == tmp_path / "benchbox__glove-bow" / run.record.encoder.fingerprint / "STSBenchmark.json"
    written = json.loads(path.read_text())
    spearman, pearson = value(run, "stsb-cosine", "test", "spearman"), value(run, "stsb-cosine", "test", "pearson")
    assert written["scores"] == {"test": [{
        "cosine_spearman": spearman, "cosine_pearson": pearson, "spearman": spearman, "pearson": pearson,
        "main_score": spearman, "hf_subset": "default", "languages": ["eng-Latn"]}]}
    assert (written["task_name"], written["dataset_revision"], written["mteb_version"]) == (
        "STSBenchmark", BY_NAME["STSBenchmark"].revision, MTEB_VERSION)
    assert lines == [f"stsb-cosine: not exported as MTEB's STSBenchmark.v2: {BY_NAME['STSBenchmark.v2'].departure}",
                     f"sickr-cosine: not exported as MTEB's SICK-R: {BY_NAME['SICK-R'].departure}"]


def test_exported_files_read_back_as_the_same_scores(run, tmp_path):
    export_run(run, tmp_path, "me/glove")
    [model] = read_results(f"mteb:{tmp_path}")
    assert (model.name, model.revision) == ("me/glove", run.record.encoder.fingerprint)
    for _, row in model.metrics.iterrows():
        assert row["value"] == value(run, row["task"], row["subset"], row["metric"])
    assert len(model.metrics) == 2


def test_a_file_with_other_scores_is_never_overwritten(run, tmp_path):
    [path] = export_run(run, tmp_path)
    assert export_run(run, tmp_path) == [path]  # the same scores again: nothing changes
    path.write_text(path.read_text().replace('"main_score": 0.', '"main_score": 0.9'))
    before = path.read_text()
    with pytest.raises(BenchboxError) as caught:
        export_run(run, tmp_path)
    assert str(caught.value) == f"{path} exists with other scores: remove it or pass another --out"
    assert path.read_text() == before
    with pytest.raises(BenchboxError, match="give mteb's form ORG/NAME"):
        export_run(run, tmp_path, "glove-bow")


def made_up_sts12(root: Path, *, raw: bool = False) -> Path:
    """Six scored pairs per STS12 subset at its published paths (SentEval's, or with ``raw`` the release's)."""
    folder = root / ("sts-raw/STS" if raw else "senteval/downstream/STS") / "STS12-en-test"
    folder.mkdir(parents=True)
    words = ["a cat sat", "the dog ran", "birds fly high", "rain falls down", "sun is hot", "snow is cold"]
    for subset in STS12.subsets:
        (folder / f"STS.input.{subset}.txt").write_text("".join(f"{w}\t{w} again\n" for w in words))
        (folder / f"STS.gs.{subset}.txt").write_text("".join(f"{i * 0.8:.1f}\n" for i in range(len(words))))
    return root


@pytest.mark.parametrize("raw", [False, True], ids=["other-data", "raw-text"])
def test_a_task_evaluated_otherwise_than_mteb_is_skipped_with_a_line(tmp_path, raw):
    data = made_up_sts12(tmp_path / "root", raw=raw)
    options = TaskOptions(bootstrap=0, flags={"text": "raw"} if raw else {})
    sts12 = Run.open(run_tasks(LetterCounts(), ["sts12", "stsb-cosine"], data_dir=data, options=options,
                               cache=False, allow_data_mismatch=True).save(tmp_path / "runs"))
    lines = []
    [path] = export_run(sts12, tmp_path / "out", log=lines.append)
    assert path.name == "STSBenchmark.json"
    why = ("evaluated with text=raw, MTEB's items are text=senteval" if raw else
           "evaluated on data files that are not the published ones "
           "(senteval/downstream/STS/STS12-en-test/STS.gs.MSRpar.txt")
    assert lines[0].startswith(f"sts12: not exported as MTEB's STS12: {why}")


def test_a_run_with_nothing_to_export_is_one_line(tmp_path):
    sick = Run.open(run_tasks(LetterCounts(), ["sickr-cosine"], options=TaskOptions(bootstrap=0),
                              cache=False).save(tmp_path / "runs"))
    with pytest.raises(BenchboxError) as caught:
        export_run(sick, tmp_path / "out")
    assert str(caught.value) == (f"{sick.path}: no task to export as an MTEB task; the tasks with an MTEB counterpart "
                                 "are sts12, sts13, sts14, sts15, sts16, stsb-cosine "
                                 "(docs/guide.md#mteb-interoperability)")
    assert not (tmp_path / "out").exists()


def test_mtebs_own_loaders_read_the_exported_files_with_equal_scores(run, tmp_path):
    mteb = pytest.importorskip("mteb", reason=MTEB_REASON)
    [path] = export_run(run, tmp_path / "cache" / "results")
    result = mteb.TaskResult.from_disk(path).validate_and_filter_scores()
    assert result.get_score() == value(run, "stsb-cosine", "test", "spearman")
    assert result.scores["test"][0]["cosine_pearson"] == value(run, "stsb-cosine", "test", "pearson")
    loaded = mteb.ResultCache(tmp_path / "cache").load_results(require_model_meta=False, include_remote=False,
                                                               validate_and_filter=True)
    [model] = loaded.model_results
    assert (model.model_name, model.model_revision) == ("benchbox/glove-bow", run.record.encoder.fingerprint)
    assert [(t.task_name, t.get_score()) for t in model.task_results] == [
        ("STSBenchmark", value(run, "stsb-cosine", "test", "spearman"))]


@pytest.mark.realdata("senteval/downstream/STS/STS16-en-test/STS.input.headlines.txt")
def test_a_run_on_sts12_16_exports_the_pooled_correlations_mteb_reads(tmp_path):
    """On the real data: the years' pooled correlations are MTEB's STS12-16 scores, read back by mteb:PATH and by
    mteb's loader (where installed) unchanged."""
    years = Run.open(run_tasks("glove-bow", ["sts"], options=TaskOptions(bootstrap=0), cache=False)
                     .save(tmp_path / "runs"))
    paths = export_run(years, tmp_path / "results")
    assert [p.stem for p in paths] == ["STS12", "STS13", "STS14", "STS15", "STS16"]
    [model] = read_results(f"mteb:{tmp_path / 'results'}")
    for _, row in model.metrics.iterrows():
        assert row["subset"] == "all" and row["value"] == value(years, row["task"], "all", row["metric"])
    mteb = pytest.importorskip("mteb", reason=MTEB_REASON)
    for path in paths:
        result = mteb.TaskResult.from_disk(path).validate_and_filter_scores()
        assert result.get_score() == value(years, path.stem.lower(), "all", "spearman_pooled")
