"""An empty evaluation split is an error before any fitting (issue #19: an empty TREC or SST-2 test file gave
exit 0, accuracy NaN, n = 0 and a normal-looking saved run)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.errors import BenchboxError
from benchbox.tasks.senteval_data import SST2_FILES, TREC_FILES

runner = CliRunner()
TREC_LINE = "{label}:other what is question {i} ?"
CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")


def _write(root, relpath, lines):
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


@pytest.mark.parametrize("task", ["trec", "sst2"])
def test_empty_test_file_is_an_error_and_writes_no_run(tmp_path, task):
    root = tmp_path / "data"
    if task == "trec":
        _write(root, TREC_FILES["train"], [TREC_LINE.format(label=CLASSES[i % 6], i=i) for i in range(60)])
        _write(root, TREC_FILES["test"], [])
        empty = TREC_FILES["test"]
    else:
        for split in ("train", "dev"):
            _write(root, SST2_FILES[split], [f"good film {i}\t{i % 2}" for i in range(20)])
        _write(root, SST2_FILES["test"], [])
        empty = SST2_FILES["test"]
    result = runner.invoke(app, ["eval", "glove-bow", "--task", task, "--data-dir", str(root),
                                 "--runs-dir", str(tmp_path / "runs"), "--quiet"])
    assert result.exit_code != 0 and isinstance(result.exception, BenchboxError)
    assert str(result.exception) == f"{root / empty} holds no labelled sentences: restore the file (`benchbox data verify`)"
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
