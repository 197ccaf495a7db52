"""Real data (``realdata``): GloVe-BOW's stsb and sickr results from the tasks agree with the
SentEval-structured reference (``tests/senteval_reference.py``; SentEval is not on PyPI and demands a GPU)
run on the same embeddings and seed: test and dev Pearson within 0.005. The transfer tasks are compared
with the reference by ``benchmarks/bench_semantic_transfer.py --agreement TASK...`` (the reference needs
minutes to hours per task on CPU); ``tests/tasks/test_transfer.py`` checks the validation schemes against it on
small data. About 3 minutes on 2 cores."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from scipy.stats import pearsonr

import benchbox
from benchbox.encoders.glove_bow import GloveBowEncoder
from benchbox.task_contract.options import TaskOptions
from benchbox.tasks.senteval_data import load_sick, load_stsb
from tests import senteval_reference as ref

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def glove_run():
    """The two tasks run once through benchbox (module scope; skips as ``data_root`` does)."""
    root = os.environ.get("BENCHBOX_DATA")
    if not root or not Path(root).is_dir():
        pytest.skip("set BENCHBOX_DATA to a complete data root (e.g. ../shared/data)")
    torch.set_num_threads(1)
    ev = benchbox.run_tasks("glove-bow", ["stsb", "sickr"], data_dir=root, cache=False,
                            options=TaskOptions(device="cpu"))
    return {(r.task, r.subset, r.metric): r.value for r in ev.records}


@pytest.mark.parametrize("task, loader", [("stsb", load_stsb), ("sickr", load_sick)])
def test_relatedness_agrees_with_senteval_reference(glove_run, data_root, task, loader):
    feats = ref.relatedness_features(GloveBowEncoder(), data_root, loader)
    dev_pr, _, test_pred = ref.run_relatedness(feats, dataloader=False)
    assert glove_run[task, "test", "pearson"] == pytest.approx(pearsonr(test_pred, feats["test"][1])[0], abs=0.005)
    assert glove_run[task, "dev", "pearson"] == pytest.approx(dev_pr, abs=0.005)
    assert 0.4 < glove_run[task, "test", "pearson"] < 0.9
