"""Issue #40: a folder in the working directory never shadows a registered encoder silently. ``compare glove-bow
…`` beside a ``glove-bow/`` folder that holds no run ended in ``'Pending' object has no attribute 'metrics'``;
now the encoder is used, said in one line. A folder that holds a run is a real candidate: the name is refused,
saying how to name either (``./glove-bow``, ``benchbox:glove-bow``), in ``compare`` and, for a run or model
folder (a folder of runs is nothing it could load), in ``eval``."""

from __future__ import annotations

import shutil

import pytest

from benchbox import run_tasks
from benchbox.comparison.compare import compare
from benchbox.encoding.loading import load_encoder
from benchbox.errors import BenchboxError
from benchbox.task_contract.options import TaskOptions
from benchbox.comparison.settings import CompareSettings
from tests.helpers import LetterCounts

OPTIONS = TaskOptions(bootstrap=0)


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A working directory with a run of letter-counts on stsb-cosine (no data root needed)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    run = run_tasks(LetterCounts(), ["stsb-cosine"], data_dir=tmp_path / "empty", options=OPTIONS,
                    cache=False).save(tmp_path / "runs")
    return tmp_path, run


def _compare(here_path, *specs: str, log=None):
    return compare(list(specs), ["stsb-cosine"], data_dir=here_path / "empty", runs_dir=here_path / "runs",
                   settings=CompareSettings(n_boot=20), options=OPTIONS, log=(log if log is not None else []).append)


def test_a_folder_without_runs_named_like_an_encoder_is_passed_over_in_one_line(here):
    path, run = here
    (path / "glove-bow").mkdir()  # e.g. a plugin's source package, named like its encoder
    log: list[str] = []
    comparison = _compare(path, "glove-bow", str(run), log=log)
    assert comparison.models[0].startswith("glove-bow") and len(comparison.models) == 2
    assert "glove-bow: the registered encoder, evaluated or reused (the folder ./glove-bow here holds no run)" in log


@pytest.mark.parametrize("layout", ["run folder", "folder of runs"])
def test_a_folder_holding_a_run_named_like_an_encoder_is_refused_naming_both(here, layout):
    path, run = here
    shutil.copytree(run, path / "glove-bow" if layout == "run folder" else path / "glove-bow" / run.name)
    message = ("'glove-bow' names both the registered encoder benchbox:glove-bow and the folder ./glove-bow here, "
               "which holds a run: write ./glove-bow for the folder or benchbox:glove-bow for the encoder")
    with pytest.raises(BenchboxError) as caught:
        _compare(path, "glove-bow", str(run))
    assert str(caught.value) == message
    if layout == "run folder":  # eval too: a trained-model folder of that name would have been passed over
        with pytest.raises(BenchboxError) as caught:
            load_encoder("glove-bow")
        assert str(caught.value) == message
    else:  # a folder of runs is nothing eval could load: the name is the encoder
        assert load_encoder("glove-bow").name == "glove-bow"
    assert load_encoder("benchbox:glove-bow").name == "glove-bow"
    if layout == "folder of runs":  # ./glove-bow names the folder: its run, compared with a fresh glove-bow
        assert len(_compare(path, "./glove-bow", "benchbox:glove-bow").models) == 2
