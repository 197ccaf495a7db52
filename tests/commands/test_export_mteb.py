"""``benchbox export mteb RUN --out DIR`` on the command line: the files on standard output, the skipped tasks on
standard error, the output rule (never inside a run folder) and bad input as one line, exit 2; what it wrote comes
back through ``compare``'s ``mteb:PATH``."""

from __future__ import annotations

import json

import pytest

from benchbox.evaluation import run_tasks
from benchbox.task_contract.options import TaskOptions
from tests.helpers import cli


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return run_tasks("glove-bow", ["stsb-cosine", "sickr-cosine"], options=TaskOptions(bootstrap=0),
                     cache=False).save(tmp_path_factory.mktemp("runs"))


def test_export_prints_the_files_and_names_what_it_skips(capsys, run, tmp_path):
    code, out, err = cli(capsys, "export", "mteb", str(run), "--out", str(tmp_path / "out"), "--model-name", "me/bow")
    assert code == 0
    [revision] = (tmp_path / "out" / "me__bow").iterdir()
    path = revision / "STSBenchmark.json"
    assert out.splitlines() == [str(path)]
    assert [line.split(":")[0] for line in err.splitlines()] == ["stsb-cosine", "sickr-cosine"]
    code, out, err = cli(capsys, "export", "mteb", str(run), "--out", str(tmp_path / "out"), "--quiet")
    assert (code, err) == (0, "")
    code, out, _ = cli(capsys, "compare", str(run), f"mteb:{tmp_path / 'out'}", "--task", "stsb-cosine", "--json", "-")
    assert code == 0 and json.loads(out)["models"] == ["glove-bow", "mteb:benchbox/glove-bow", "mteb:me/bow"]


@pytest.mark.parametrize("args, message", [
    (["--out", "{run}/mteb"], "error: --out {run}/mteb lies inside the run folder {run}: benchbox never writes into "
                              "the results of another command; pass a path outside it"),
    (["--model-name", "bow"], "error: --model-name 'bow': give mteb's form ORG/NAME"),
])
def test_bad_input_is_one_line_and_nothing_is_written(capsys, run, tmp_path, args, message):
    args = [a.format(run=run) for a in args]
    out_args = [] if "--out" in args else ["--out", str(tmp_path / "out")]
    code, out, err = cli(capsys, "export", "mteb", str(run), *args, *out_args)
    assert (code, out) == (2, "") and len(err.splitlines()) == 1
    assert err.startswith(message.format(run=run))
    assert not (run / "mteb").exists() and not (tmp_path / "out").exists()


def test_report_takes_an_mteb_folder_as_a_reference(capsys, run, tmp_path):
    assert cli(capsys, "export", "mteb", str(run), "--out", str(tmp_path / "mteb"), "--quiet")[0] == 0
    code, out, _ = cli(capsys, "report", str(run), "--reference", f"mteb:{tmp_path / 'mteb'}", "--out",
                       str(tmp_path / "report.md"), "--quiet")
    assert code == 0
    text = (tmp_path / "report.md").read_text()
    assert "| mteb:benchbox/glove-bow |" in text and "(model benchbox/glove-bow, revision " in text
