"""Task metadata does the work: a task defined here, with its own metric (an AUC tested by a paired bootstrap of
its own statistic), its own option and its own data file, registered at run time, goes through eval, compare
and report without any other change to benchbox."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st
from sklearn.metrics import roc_auc_score

from benchbox.comparison.compare import compare
from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError
from benchbox.evaluation import run_tasks
from benchbox.registry import TASKS
from benchbox.reports import write_report
from benchbox.storage.runs import Run
from benchbox.task_contract.protocol import DataFile, MetricRecord, MetricSpec, Task, TaskResult
from benchbox.task_contract.options import TaskOption, TaskOptions
from benchbox.comparison.settings import CompareSettings
from tests.helpers import LetterCounts

NAME = "paraphrase-auc-test"
PAIRS = [
    ("a cat sat on the mat", "the cat sat on a mat", 1), ("dogs run in the park", "a dog runs in a park", 1),
    ("he plays the piano", "a man plays piano", 1), ("rain falls on the roof", "the roof is wet with rain", 1),
    ("she reads a book", "a woman is reading", 1), ("kids swim in a lake", "children swimming in the lake", 1),
    ("a red car drives fast", "a fast red car", 1), ("birds fly over water", "birds flying above the sea", 1),
    ("a cat sat on the mat", "stock prices fell sharply", 0), ("dogs run in the park", "the oven is hot", 0),
    ("he plays the piano", "quantum fields vibrate", 0), ("rain falls on the roof", "a yellow taxi waits", 0),
    ("she reads a book", "volcanoes erupt lava", 0), ("kids swim in a lake", "my phone battery died", 0),
    ("a red car drives fast", "tax forms are due", 0), ("birds fly over water", "jazz musicians improvise", 0),
    ("a man cooks pasta", "someone is cooking noodles", 1), ("a man cooks pasta", "the glacier melts slowly", 0),
    ("two boys kick a ball", "boys playing football", 1), ("two boys kick a ball", "a bank opens at nine", 0),
]


def auc(rows: pd.DataFrame) -> float:
    """The task's own statistic: ROC AUC of the cosine score against the paraphrase label."""
    return float(roc_auc_score(rows["gold"].to_numpy(int), rows["score"].to_numpy(float)))


def make_task(folder: Path, sha256: str) -> type[Task]:
    class ParaphraseAUC(Task):
        name = NAME
        description = "paraphrase detection by the cosine of the two sentences: ROC AUC and accuracy at a threshold"
        group, order = "paraphrase detection", 900
        main_score = "auc"
        item_kind = "sentence pair: gold label, cosine score, correct at the threshold"
        metrics = (MetricSpec("auc", "bootstrap", unit="value", statistic=auc, description="ROC AUC"),
                   MetricSpec("accuracy", "classification", unit="%", summary=True))
        options = (TaskOption("threshold", float, 0.5, "cosine above which a pair is a paraphrase", low=-1, high=1,
                              protocol_key="threshold"),)
        data_files = (DataFile("pairs.tsv", sha256=sha256, package_dir=folder),)
        version, license = "1", "CC0-1.0"
        citation = "@misc{paraphrase-test, title = {A test task}, year = {2026}}"

        def evaluate(self, encoder: Encoder, ctx) -> TaskResult:
            path = ctx.file(self.data_files[0])
            rows = [line.split("\t") for line in path.read_text().splitlines()]
            a, b = ctx.embed([r[0] for r in rows]), ctx.embed([r[1] for r in rows])
            score = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
            gold = np.array([int(r[2]) for r in rows])
            threshold = ctx.option(self, "threshold")
            items = pd.DataFrame({"subset": "test", "item": np.arange(len(rows)), "gold": gold, "score": score,
                                  "correct": ((score > threshold) == (gold == 1)).astype(int)})
            n = len(items)
            return TaskResult(self.name, [MetricRecord(self.name, "test", "auc", auc(items), n=n),
                                          MetricRecord(self.name, "test", "accuracy", 100 * items["correct"].mean(), n=n)],
                              items, protocol={"threshold": threshold}, data_checksums=ctx.data.checksums([path]))

    return ParaphraseAUC


class Vowels(LetterCounts):
    """A second deterministic encoder: counts of the vowels only."""

    name = "vowel-counts"

    def _encode(self, sentences, batch_size):
        return super()._encode(sentences, batch_size)[:, [0, 4, 8, 14, 20]]

    @property
    def dim(self) -> int:
        return 5


def uninstall() -> None:
    TASKS.unregister(NAME)


@pytest.fixture
def task(tmp_path):
    folder = tmp_path / "plugin_data"
    folder.mkdir()
    data = "".join(f"{a}\t{b}\t{label}\n" for a, b, label in PAIRS)
    (folder / "pairs.tsv").write_text(data)
    cls = make_task(folder, hashlib.sha256(data.encode()).hexdigest())
    TASKS.register(NAME, cls)  # for this test only
    yield cls
    uninstall()


def evaluate(encoder: Encoder, runs: Path, **task_options) -> Path:
    options = TaskOptions(task_options={NAME: task_options} if task_options else {})
    return run_tasks(encoder, [NAME], options=options, cache=False).save(runs)


def test_eval_records_the_option_and_the_metadata(task, tmp_path):
    run = Run.open(evaluate(LetterCounts(), tmp_path / "runs", threshold=0.8))
    record = run.manifest["tasks"][NAME]
    assert record["options"] == {"threshold": 0.8}
    assert record["protocol"]["threshold"] == 0.8
    assert run.manifest["options"] == {"seed": 1111, "bootstrap": 1000, "device": "auto"}
    assert record["metadata"]["group"] == "paraphrase detection"
    assert record["metadata"]["metrics"][0] == {"name": "auc", "kind": "bootstrap", "higher_is_better": True,
                                                "unit": "value", "scale": 1.0, "decimals": None, "summary": False}
    items = run.items(NAME)
    accuracy = run.metrics.set_index("metric").loc["accuracy", "value"]
    assert accuracy == pytest.approx(100 * np.mean((items["score"] > 0.8) == (items["gold"] == 1)))
    default = Run.open(evaluate(LetterCounts(), tmp_path / "runs2"))
    assert default.manifest["tasks"][NAME]["options"] == {"threshold": 0.5}
    assert "task_options" not in default.manifest["options"]  # as runs written before task options record


@pytest.mark.parametrize("values, message", [
    ({"threshold": 2.0}, r"task option paraphrase-auc-test:threshold must be .*≤ 1"),
    ({"threshold": "high"}, r"threshold must be number"),
    ({"margin": 1.0}, r"task paraphrase-auc-test has no option 'margin'"),
])
def test_bad_task_options_fail_before_evaluating(task, tmp_path, values, message):
    encoder = LetterCounts()
    with pytest.raises(BenchboxError, match=message):
        run_tasks(encoder, [NAME], options=TaskOptions(task_options={NAME: values}), cache=False)
    with pytest.raises(BenchboxError, match="not among the tasks evaluated"):
        run_tasks(encoder, [NAME], options=TaskOptions(task_options={"sts12": {"text": "raw"}}), cache=False)


def test_a_changed_data_file_is_refused(task, tmp_path):
    (task.data_files[0].package_dir / "pairs.tsv").write_text("x\ty\t1\n")
    with pytest.raises(BenchboxError, match="pairs.tsv has sha256 .* not the .* its task declares"):
        run_tasks(LetterCounts(), [NAME], cache=False)


def test_compare_tests_the_tasks_own_statistic(task, tmp_path):
    a, b = evaluate(LetterCounts(), tmp_path / "runs"), evaluate(Vowels(), tmp_path / "runs")
    table = compare([str(a), str(b)], settings=CompareSettings(n_boot=300, test_seed=7)).table.set_index("metric")
    ia, ib = Run.open(a).items(NAME), Run.open(b).items(NAME)
    row = table.loc["auc"]
    assert row["test"] == "bootstrap" and not row["summary"]
    assert row["diff"] == pytest.approx(auc(ia) - auc(ib))
    assert row["diff_ci_low"] < row["diff"] < row["diff_ci_high"]
    assert row["p"] == pytest.approx(2 * st.norm.sf(abs(row["statistic"])))  # Wald p of diff / bootstrap SE
    assert 0 < row["p"] < 1
    again = compare([str(a), str(b)], settings=CompareSettings(n_boot=300, test_seed=8)).table.set_index("metric").loc["auc"]
    assert again["diff"] == row["diff"] and again["diff_ci_low"] != row["diff_ci_low"]  # resampled with the seed
    accuracy = table.loc["accuracy"]
    assert accuracy["test"] == "mcnemar" and accuracy["summary"]
    discordant = (ia["correct"] != ib["correct"]).sum()
    assert accuracy["statistic"] <= discordant / 2
    # the task uninstalled: the recorded metadata still pairs the items and tests accuracy; the AUC's statistic is
    # not recorded, so that row is left out rather than guessed
    uninstall()
    table = compare([str(a), str(b)], settings=CompareSettings(n_boot=300, test_seed=7)).table
    assert list(table["metric"]) == ["accuracy"]
    assert table.iloc[0]["p"] == pytest.approx(accuracy["p"])


def test_compare_refuses_runs_with_another_value_of_a_protocol_option(task, tmp_path):
    a = evaluate(LetterCounts(), tmp_path / "runs", threshold=0.8)
    b = evaluate(Vowels(), tmp_path / "runs", threshold=0.9)
    with pytest.raises(BenchboxError, match=r"different protocols: paraphrase-auc-test: .* threshold \(0.8 vs 0.9\)"):
        compare([str(a), str(b)], settings=CompareSettings(n_boot=50))
    comparison = compare([str(a), str(b)], settings=CompareSettings(n_boot=50), allow_protocol_mismatch=True)
    assert comparison.protocol_mismatches


def test_lower_is_better_comes_from_the_spec(task, tmp_path, monkeypatch):
    a, b = evaluate(LetterCounts(), tmp_path / "runs"), evaluate(Vowels(), tmp_path / "runs")
    higher = compare([str(a), str(b)], settings=CompareSettings(n_boot=300)).table.set_index("metric").loc["auc"]
    flipped = MetricSpec("auc", "bootstrap", higher_is_better=False, statistic=auc)
    monkeypatch.setattr(task, "metrics", (flipped, task.metrics[1]))
    lower = compare([str(a), str(b)], settings=CompareSettings(n_boot=300)).table.set_index("metric").loc["auc"]
    if higher["verdict"] != "no significant difference":
        assert {higher["verdict"], lower["verdict"]} == {"better", "worse"}
    else:
        assert lower["verdict"] == "no significant difference"


def test_report_gives_the_task_its_own_section(task, tmp_path):
    a, b = evaluate(LetterCounts(), tmp_path / "runs"), evaluate(Vowels(), tmp_path / "runs")
    out = write_report([str(a), str(b)], tmp_path / "report.md")
    text = Path(out).read_text()
    assert "Paraphrase detection" in text
    section = text[text.index("Paraphrase detection"):]
    assert "paraphrase-auc-test" in section and "auc" in section
    auc_a = auc(Run.open(a).items(NAME))
    assert f"{auc_a:.4g}" in section


def test_specs_are_validated():
    with pytest.raises(BenchboxError, match="unknown kind 'ttest'"):
        MetricSpec("x", "ttest")
    with pytest.raises(BenchboxError, match="needs a statistic"):
        MetricSpec("x", "bootstrap")
    plain = MetricSpec("medr", "ranks", higher_is_better=False, unit="rank").plain()
    assert MetricSpec.from_plain(json.loads(json.dumps(plain))).plain() == plain
    assert not math.isnan(MetricSpec.from_plain(plain).scale)


def test_cli_task_options_describe_and_verbose_list(task, tmp_path):
    from typer.testing import CliRunner

    from benchbox.cli import app
    from benchbox.task_contract.protocol import parse_task_arguments

    assert parse_task_arguments(["sts12", f"{NAME}:threshold=0.7"], ["sts:text=raw"]) == (
        ["sts12", NAME, "sts"],
        {NAME: {"threshold": 0.7}, **{f"sts1{i}": {"text": "raw"} for i in range(2, 7)}})
    runner = CliRunner()
    # a BenchboxError is one line and exit 2 in benchbox.cli's main (test_options checks that path)
    runs = tmp_path / "runs"
    bad = runner.invoke(app, ["eval", "letter-counts", "-t", f"{NAME}:threshold=2", "--runs-dir", str(runs)])
    assert isinstance(bad.exception, BenchboxError) and not runs.exists()
    assert str(bad.exception) == "task option paraphrase-auc-test:threshold must be ≥ -1 and ≤ 1, got 2"
    bad = runner.invoke(app, ["eval", "letter-counts", "--task-option", "sts12", "-t", "sts12"])
    assert isinstance(bad.exception, BenchboxError) and "--task-option takes TASK:KEY=VALUE" in str(bad.exception)
    described = runner.invoke(app, ["describe", NAME])
    assert described.exit_code == 0, described.output
    for text in ("auc: value, higher is better, paired test: bootstrap",
                 "accuracy: %, higher is better, paired test: classification, summary unit",
                 "threshold: number; default 0.5; range [-1, 1]", "pairs.tsv (in ", "license: CC0-1.0",
                 "@misc{paraphrase-test"):
        assert text in described.output
    listed = runner.invoke(app, ["list", "tasks", "--verbose"])
    assert listed.exit_code == 0 and f"{NAME}: paraphrase detection" in listed.output
    assert "retrieval_medr: text; default 'vsepp'; one of vsepp, median; flag --retrieval-medr" in listed.output


def test_runs_without_metadata_of_uninstalled_tasks_keep_the_old_conventions():
    from benchbox.task_contract.metadata import conventions

    def frame(*columns):
        return pd.DataFrame([[0] * len(columns)], columns=list(columns))

    def legacy_tests(items):
        return conventions("uninstalled", pd.DataFrame() if items is None else items)

    ranks = legacy_tests(frame("subset", "direction", "query", "rank"))
    assert ranks.item_keys == ("subset", "direction", "query")
    assert {m: (s.kind, s.higher_is_better, s.summary) for m, s in ranks.metrics.items()} == {
        "r1": ("ranks", True, False), "r5": ("ranks", True, False), "r10": ("ranks", True, True),
        "medr": ("ranks", False, False), "meanr": ("ranks", False, False)}
    pairs = legacy_tests(frame("subset", "item", "gold", "score", "correct"))
    assert pairs.metrics["pearson"].summary and pairs.metrics["pearson_wmean"].kind == "correlation"
    assert pairs.metrics["mse"].statistic(pd.DataFrame({"gold": [1.0, 2.0], "score": [2.0, 2.0]})) == 0.5
    assert "accuracy" not in pairs.metrics  # gold + score took precedence over correct, as before
    assert legacy_tests(frame("subset", "item", "correct")).metrics["accuracy"].summary
    means = legacy_tests(pd.DataFrame({"subset": ["t", "t"], "metric": ["e_intra", "e_inter"], "item": [0, 0],
                                       "value": [0.5, 0.1]}))
    assert means.item_keys == ("subset", "metric", "item")
    assert not means.metrics["e_inter"].higher_is_better and means.metrics["e_intra"].higher_is_better
    assert set(legacy_tests(None).metrics) == {"pearson"}
    with pytest.raises(BenchboxError, match="match no known convention"):
        legacy_tests(frame("subset", "x"))


def test_describe_names_each_data_file_with_its_expected_sha256():
    """The README promises data files with sha256 (issue #27: only declared package files had one)."""
    from typer.testing import CliRunner

    from benchbox.cli import app
    from benchbox.data.root import known_files

    described = CliRunner().invoke(app, ["describe", "sts12"])
    assert described.exit_code == 0, described.output
    expected = {k.path: k.sha256 for k in known_files()["sts12"]}
    msrpar = "senteval/downstream/STS/STS12-en-test/STS.input.MSRpar.txt"
    assert f"    {msrpar} sha256 {expected[msrpar]}" in described.output.splitlines()
    assert expected[msrpar] == "093b36d9cc1cd26364885c0f5d5be7ed024f475bceb552384f7fd489174b3c4f"
    listed = [line for line in described.output.splitlines() if line.startswith("    senteval/")]
    assert len(listed) == 10 and all(" sha256 " in line for line in listed)
