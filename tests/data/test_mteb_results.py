"""An mteb results folder as comparators, ``mteb:PATH`` (benchbox.data.mteb_results): a small folder written by
hand as mteb 2.x writes one, read without mteb; what has no counterpart is skipped with a line, what is broken
stops with one."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from benchbox.comparison.sources import resolve_sources
from benchbox.data.mteb_results import read_results
from benchbox.data.mteb_tasks import BY_NAME
from benchbox.errors import BenchboxError
from benchbox.storage.runs import Run, write_run
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
        "mteb: 1 model(s) read (0 file(s) converted from mteb's format before 1.11); 1 model(s) skipped with no "
        "usable result; 3 file(s) skipped:",
        "mteb:   2 × SICK-R: " + BY_NAME["SICK-R"].departure + " (e.g. org/model-a)",
        "mteb:   1 × STS17: no benchbox counterpart (e.g. org/model-a)",
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
    assert lines[1:] == [f"mteb:   1 × STS12: dataset revision {'0' * 40!r}, not the correspondence's "
                         f"{BY_NAME['STS12'].revision[:8]} (e.g. m/x)",
                         "mteb:   1 × STS13: its test cosine_spearman is 72.15, not a correlation in [-1, 1]: it "
                         "looks like r × 100; give 0.7215 (e.g. m/x)"]


def one_line(caught: pytest.ExceptionInfo) -> str:
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_a_missing_folder_or_an_empty_one_is_one_line(tmp_path):
    with pytest.raises(BenchboxError) as caught:
        read_results(f"mteb:{tmp_path / 'nope'}")
    assert one_line(caught).startswith(f"mteb:{tmp_path / 'nope'}: no such folder; give an mteb results folder")
    with pytest.raises(BenchboxError) as caught:
        read_results(f"mteb:{tmp_path}")
    assert one_line(caught) == f"mteb:{tmp_path}: {tmp_path} holds no mteb results (MODEL/REVISION/TASK.json)"


def test_a_broken_file_is_skipped_with_a_line_naming_it_and_the_rest_is_read(tmp_path):
    bad = write(tmp_path / "m__x" / "r1", "STS12", '{"task_name": "STS12", "scores": ')
    write(tmp_path / "m__x" / "r1", "STS13", {"task_name": "STS13", "scores": []})  # neither format
    write(tmp_path / "m__y" / "r1", "STS14", task_json("STS14", 0.4, 0.3))
    lines = []
    [model] = read_results(f"mteb:{tmp_path}", lines.append)
    assert model.name == "m/y"
    assert lines[0].endswith("1 model(s) skipped with no usable result; 2 file(s) skipped:")
    assert any(line.startswith(f"mteb:   1 × {bad} is not valid JSON (Expecting value: line 1") for line in lines)
    assert "mteb:   1 × STS13: not an mteb task result (neither mteb >= 1.11's task_name and scores nor the format " \
           "before 1.11) (e.g. m/x)" in lines


def test_a_folder_with_nothing_that_corresponds_stops_in_one_line(tmp_path):
    write(tmp_path / "m__x" / "r1", "SICK-R", task_json("SICK-R", 0.7, 0.7))
    lines = []
    with pytest.raises(BenchboxError) as caught:
        read_results(f"mteb:{tmp_path}", lines.append)
    assert one_line(caught).startswith(f"mteb:{tmp_path}: no result of a task with a benchbox counterpart (STS12,")
    assert lines == ["mteb: 0 model(s) read (0 file(s) converted from mteb's format before 1.11); 1 model(s) "
                     "skipped with no usable result; 1 file(s) skipped:",
                     f"mteb:   1 × SICK-R: {BY_NAME['SICK-R'].departure} (e.g. m/x)"]


def old_json(name: str, spearman: float, pearson: float, version: str | None = "1.2.0") -> dict:
    """A task result as mteb wrote it before 1.11 (the repository's ``no_revision_available`` files)."""
    found = {"dataset_revision": BY_NAME[name].revision, "mteb_dataset_name": name,
             "test": {"cos_sim": {"pearson": pearson, "spearman": spearman},
                      "euclidean": {"pearson": 0.1, "spearman": 0.1}, "evaluation_time": 2.3}}
    return found | ({"mteb_version": version} if version else {})


def test_every_revision_folder_is_read_and_each_task_taken_where_mtebs_leaderboard_takes_it(tmp_path):
    """mteb's join_revisions: a parseable mteb_version first, then a hashed folder over external /
    no_revision_available, then the newest version."""
    model = tmp_path / "org__m"
    write(model / "external", "STS12", task_json("STS12", 0.61, 0.6))
    write(model / "abc", "STS12", {**task_json("STS12", 0.62, 0.6), "mteb_version": None})  # no version: last
    write(model / "external", "STS13", task_json("STS13", 0.71, 0.7))
    write(model / "abc", "STS13", task_json("STS13", 0.72, 0.7))  # hashed over external
    write(model / "no_revision_available", "STS14", old_json("STS14", 0.81, 0.8))
    write(model / "abc", "STS14", {**task_json("STS14", 0.82, 0.8), "mteb_version": "1.12.0"})
    write(model / "external", "STS14", {**task_json("STS14", 0.83, 0.8), "mteb_version": "1.38.0"})  # not hashed
    write(model / "def", "STS14", {**task_json("STS14", 0.84, 0.8), "mteb_version": "1.20.1"})  # newest hashed
    write(model / "no_revision_available", "STS15", old_json("STS15", 0.91, 0.9, version=None))  # only here
    lines = []
    [found] = read_results(f"mteb:{tmp_path}", lines.append)
    spearman = found.metrics[found.metrics["metric"] == "spearman_pooled"].set_index("task")["value"]
    assert spearman.to_dict() == {"sts12": 0.61, "sts13": 0.72, "sts14": 0.84, "sts15": 0.91}
    assert found.revision == "abc+def+external+no_revision_available"
    assert lines[0] == ("mteb: 1 model(s) read (1 file(s) converted from mteb's format before 1.11); 0 model(s) "
                        "skipped with no usable result; 0 file(s) skipped:")


SAMPLE = Path(__file__).parent / "mteb_results_sample"


def test_the_public_repositorys_sample_is_read_as_it_is():
    """Five models of embeddings-benchmark/results (README there): both formats, an external folder, a file with
    the main score only; nothing stops the reading."""
    lines = []
    models = {m.name: m for m in read_results(f"mteb:{SAMPLE}", lines.append)}
    assert sorted(models) == ["Alibaba-NLP/gte-Qwen1.5-7B-instruct", "BAAI/bge-en-icl", "intfloat/e5-large-v2",
                              "sentence-transformers/all-MiniLM-L6-v2"]
    assert lines[0] == ("mteb: 4 model(s) read (6 file(s) converted from mteb's format before 1.11); 1 model(s) "
                        "skipped with no usable result; 11 file(s) skipped:")
    e5 = models["intfloat/e5-large-v2"]
    assert e5.revision == "b322e09026e4ea05f42beadf4d661fb4e101d311+external"
    assert set(e5.metrics["task"]) == {"sts12", "sts13", "sts14", "sts15", "sts16", "stsb-cosine"}
    old = models["Alibaba-NLP/gte-Qwen1.5-7B-instruct"].metrics.set_index(["task", "metric"])["value"]
    assert old[("stsb-cosine", "spearman")] == 0.8735031011815017  # the file's cos_sim.spearman, as it is
    assert old[("stsb-cosine", "pearson")] == 0.8691024857159385
    icl = models["BAAI/bge-en-icl"].metrics
    assert set(icl["metric"]) == {"spearman", "spearman_pooled"}  # no cosine_pearson published


def test_the_samples_old_files_give_what_mtebs_own_loader_gives():
    """The pre-1.11 conversion against mteb's ``TaskResult.from_disk`` (mteb converts on load)."""
    task_result = pytest.importorskip("mteb.results.task_result", reason="pip install benchbox[mteb]")
    from benchbox.data.mteb_results import read_result

    old = sorted((SAMPLE / "results" / "Alibaba-NLP__gte-Qwen1.5-7B-instruct" / "no_revision_available").glob("STS*.json"))
    assert len(old) == 6
    for path in old:
        ours = read_result(path)
        theirs = next(e for e in task_result.TaskResult.from_disk(path).scores["test"] if e["hf_subset"] == "default")
        assert ours.converted and {k: ours.entry[k] for k in ("cosine_spearman", "cosine_pearson")} == {
            k: theirs[k] for k in ("cosine_spearman", "cosine_pearson")}


def test_a_model_of_a_results_folder_without_the_task_is_skipped_not_fatal(tmp_path):
    """Issue 50: one model (or revision) without the task stopped the comparison of all."""
    write(tmp_path / "org__only-sts16" / "external", "STS16", task_json("STS16", 0.8, 0.8))
    write(tmp_path / "org__b" / "r1", "STSBenchmark", task_json("STSBenchmark", 0.8, 0.8))
    lines = []
    found = resolve_sources([f"mteb:{tmp_path}"], ["stsb-cosine"], log=lines.append)
    assert [s.label for s in found] == ["mteb:org/b"]
    assert lines[-1] == f"mteb:{tmp_path}: 1 model(s) skipped: none of the tasks stsb-cosine"


def test_a_runs_sts12_compares_with_its_own_mteb_export(tmp_path, capsys):
    """Issue 55: `compare RUN mteb:PATH --task sts12` printed nothing and exited 0: STS12's MTEB scores are
    benchbox's pooled correlations, and the worst-case Steiger test of published numbers took `pearson` only."""
    from tests.comparison.test_compare import make_run
    from tests.helpers import cli

    run = make_run(tmp_path, "mine", noise_scale=0.3, rank_shift=0, accuracy=0.85)
    pooled = {m: float(v) for m, v in pd.read_csv(run / "metrics.csv").query("task == 'sts12' and subset == 'all'")
              .set_index("metric")["value"].items()}
    entry = task_json("STS12", pooled["spearman_pooled"] - 0.05, pooled["pearson_pooled"] - 0.05)
    write(tmp_path / "mteb" / "them__m" / "r1", "STS12", entry)
    code, out, err = cli(capsys, "compare", str(run), f"mteb:{tmp_path / 'mteb'}", "--task", "sts12", "--json", "-")
    assert code == 2 and out == ""  # the run's n (350 pairs) is not MTEB's 3,108: nothing is testable, and it says so
    assert err.startswith("error: nothing to compare on sts12: the models share no testable row; mteb:them/m "
                          "publish(es) numbers without per-item scores")
    opened = Run.open(run)
    metrics = opened.metrics.copy()
    metrics.loc[(metrics["task"] == "sts12") & (metrics["subset"] == "all"), "n"] = 3108  # as a real STS12 run
    real = write_run(tmp_path / "real", "mine", json.loads((run / "manifest.json").read_text()), metrics,
                     {task: opened.items(task) for task in ("sts12", "retrieval", "mr")})
    code, out, err = cli(capsys, "compare", str(real), f"mteb:{tmp_path / 'mteb'}", "--task", "sts12", "--json", "-")
    assert code == 0, err
    [row] = json.loads(out)["comparisons"]
    assert (row["subset"], row["metric"], row["approximate"]) == ("all", "pearson_pooled", True)
