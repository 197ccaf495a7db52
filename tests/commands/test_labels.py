"""Model labels: ``--name`` of eval and train (stored in the manifest), ``LABEL=PATH`` for compare and report,
and the label in compare tables, JSON and reports (benchbox.labels)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.errors import BenchboxError
from benchbox.evaluation import run_tasks
from benchbox.labels import check_label, split_label
from benchbox.registry import ENCODERS
from benchbox.reports import write_report
from benchbox.storage.runs import MANIFEST
from benchbox.task_contract.options import TaskOptions
from tests.helpers import LetterCounts

ENCODERS.register("letter-counts", LetterCounts)
BOOT = ["--bootstrap", "50"]
runner = CliRunner()


def test_label_syntax(tmp_path):
    assert split_label("GloVe 50d=runs/x") == ("GloVe 50d", "runs/x")
    assert split_label("mine=paper:merkx2019/glove-bow") == ("mine", "paper:merkx2019/glove-bow")
    assert split_label("runs/x") == (None, "runs/x") and split_label("paper:merkx2019/glove-bow")[0] is None
    odd = tmp_path / "lr=0.1"
    odd.mkdir()
    assert split_label(str(odd)) == (None, str(odd))  # an existing path is a path, '=' or not
    assert check_label("  gru 512  ") == "gru 512"
    for bad, message in (("=runs/x", "empty"), ("a=", "something after '='"), ("x" * 81 + "=runs/x", "at most 80"),
                         ("tab\there=runs/x", "printable")):
        with pytest.raises(BenchboxError, match=message):
            split_label(bad)


@pytest.fixture
def runs(tmp_path):
    """An eval run of glove-bow labelled with --name, and an unlabelled letter-counts run, on stsb-cosine."""
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["eval", "glove-bow", "-t", "stsb-cosine", "--name", "GloVe 50d", *BOOT,
                                 "--data-dir", str(tmp_path / "empty"), "--runs-dir", str(tmp_path / "runs"), "-q"])
    assert result.exit_code == 0, result.output
    (glove,) = (tmp_path / "runs").iterdir()
    counts = run_tasks("letter-counts", ["stsb-cosine"], data_dir=tmp_path / "empty", cache=False,
                       options=TaskOptions(bootstrap=50)).save(tmp_path / "runs")
    return glove, counts


def test_eval_name_is_stored_and_absent_without_it(runs):
    glove, counts = runs
    assert json.loads((glove / MANIFEST).read_text())["label"] == "GloVe 50d"
    assert "label" not in json.loads((counts / MANIFEST).read_text())


def test_eval_refuses_a_bad_name(tmp_path):
    result = runner.invoke(app, ["eval", "glove-bow", "-t", "stsb-cosine", "--name", "a=b", "--runs-dir",
                                 str(tmp_path / "runs")])
    assert isinstance(result.exception, BenchboxError) and "cannot contain '='" in str(result.exception)
    assert not (tmp_path / "runs").exists()


def test_compare_tables_and_json_use_labels(runs, tmp_path):
    glove, counts = runs
    out = tmp_path / "c.json"
    result = runner.invoke(app, ["compare", str(glove), str(counts), "-t", "stsb-cosine", *BOOT, "--json", str(out),
                                 "--csv", str(tmp_path / "c.csv"), "-q"])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    assert payload["models"] == ["GloVe 50d", "letter-counts"]  # an unlabelled run: its encoder's name
    assert payload["summary"][0].startswith("GloVe 50d significantly better than letter-counts ")
    assert {(r["model_a"], r["model_b"]) for r in payload["comparisons"]} == {tuple(payload["models"])}
    assert "A = GloVe 50d" in result.output

    # LABEL=PATH overrides the stored label; LABEL=encoder-name labels the reused run
    result = runner.invoke(app, ["compare", f"glove={glove}", "counts=letter-counts", "-t", "stsb-cosine", *BOOT,
                                 "--data-dir", str(tmp_path / "empty"), "--runs-dir", str(glove.parent),
                                 "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["models"] == ["glove", "counts"]
    assert len(list(glove.parent.iterdir())) == 2  # counts=letter-counts reused the letter-counts run


def test_report_uses_stored_and_given_labels(runs, tmp_path):
    glove, counts = runs
    text = write_report([glove, f"Counts={counts}"], tmp_path / "r.md", compare=True).read_text()
    assert "2 run(s): GloVe 50d, Counts." in text
    assert "GloVe 50d vs Counts: GloVe 50d is significantly better on 0 of 1 summary rows, worse on 1" in text
    assert "letter-counts" not in text.split("## ", 1)[0]  # the intro names the models by label only
    with pytest.raises(BenchboxError, match="a label names one run"):
        write_report([f"all={glove.parent}"], tmp_path / "x.md")


@pytest.mark.parametrize("suffix", ["md", "html"])
def test_a_label_equal_to_the_default_name_leaves_the_report_byte_identical(runs, tmp_path, suffix):
    """The labels change nothing else: labelling the runs with the names the report gives them anyway (the
    encoder names) reproduces the unlabelled report byte for byte, significance tests included."""
    glove, counts = runs
    manifest = json.loads((glove / MANIFEST).read_text())
    del manifest["label"]
    (glove / MANIFEST).write_text(json.dumps(manifest))
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    plain = write_report([glove, counts], tmp_path / "a" / f"r.{suffix}", compare=True)
    named = write_report([f"glove-bow={glove}", f"letter-counts={counts}"], tmp_path / "b" / f"r.{suffix}",
                         compare=True)
    assert plain.read_bytes() == named.read_bytes()
    assert "glove-bow vs letter-counts: glove-bow is significantly better on 0 of 1 summary rows, worse on 1" in plain.read_text()


@pytest.mark.parametrize("suffix", ["md", "html"])
def test_a_repeated_label_is_the_only_name_outside_the_runs_table(runs, tmp_path, suffix):
    """Two runs stored with one label (the issue saw ``char-gru-fast (20261123-232354-char-gru-976dce)``): the
    report and compare number them (``LABEL #1``, ``LABEL #2``); run ids appear only in the runs table and the
    provenance details at the end."""
    glove, counts = runs
    result = runner.invoke(app, ["eval", "glove-bow", "-e", "lowercase=false", "-t", "stsb-cosine", "--name",
                                 "GloVe 50d", *BOOT, "--data-dir", str(tmp_path / "empty"), "--runs-dir",
                                 str(tmp_path / "runs"), "-q"])
    assert result.exit_code == 0, result.output
    (second,) = set((tmp_path / "runs").iterdir()) - {glove, counts}
    ids = [json.loads((p / MANIFEST).read_text())["run_id"] for p in (glove, second, counts)]
    out = write_report([glove, second, f"Counts={counts}"], tmp_path / f"r.{suffix}", compare=True)
    text = out.read_text()
    figures = "".join(p.read_text() for p in (tmp_path / "r_figures").glob("*.svg")) if suffix == "md" else ""
    shown = text[:text.index("Runs and provenance</h2>" if suffix == "html" else "## Runs and provenance")] + figures
    assert "GloVe 50d #1" in shown and "GloVe 50d #2" in shown and "Counts" in shown
    assert not any(i in shown for i in ids) and "glove-bow" not in shown
    assert all(i in text for i in ids)  # the runs table pairs each label with its run

    result = runner.invoke(app, ["compare", str(glove), str(second), "-t", "stsb-cosine", *BOOT, "--json",
                                 str(tmp_path / "c.json")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "c.json").read_text())["models"] == ["GloVe 50d #1", "GloVe 50d #2"]
    assert not any(i in result.output for i in ids) and second.name not in result.output


@pytest.mark.realdata("flickr8k/Flickr8k.token.txt")
def test_train_name_is_stored_inherited_by_eval_and_replaced_on_resume(tmp_path):
    (tmp_path / "empty").mkdir()
    args = ["train", "char-gru", "--dataset", "flickr8k", "--visual", "random", "--hidden", "8", "--epochs", "1",
            "--cycle-epochs", "1", "--max-captions", "320", "--threads", "1", "--quiet", "--out", str(tmp_path / "t")]
    result = runner.invoke(app, [*args, "--name", "gru tiny"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "t" / MANIFEST).read_text())["label"] == "gru tiny"

    result = runner.invoke(app, ["eval", str(tmp_path / "t"), "-t", "stsb-cosine", *BOOT, "--data-dir",
                                 str(tmp_path / "empty"), "--runs-dir", str(tmp_path / "runs"), "-q"])
    assert result.exit_code == 0, result.output
    (evaluated,) = (tmp_path / "runs").iterdir()
    assert json.loads((evaluated / MANIFEST).read_text())["label"] == "gru tiny"
    text = write_report([tmp_path / "t", evaluated], tmp_path / "r.md").read_text()
    before_runs = text[:text.index("## Runs and provenance")]
    assert "Training curves: gru tiny (training)" in before_runs  # the training run beside its evaluation
    assert "| gru tiny |" in before_runs or "gru tiny" in before_runs.split("## ", 2)[1]
    assert evaluated.name not in before_runs

    result = runner.invoke(app, [*args, "--resume", "--name", "gru tiny, resumed"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "t" / MANIFEST).read_text())["label"] == "gru tiny, resumed"
