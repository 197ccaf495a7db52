"""The MTEB correspondence (benchbox.data.mteb_tasks) is one table: docs/guide.md shows it as the code declares it,
each benchbox side names a metric its task declares, and each MTEB side is what mteb itself declares (dataset,
revision, split, its size, main score; skipped without mteb: ``pip install benchbox[mteb]``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchbox.data.mteb_tasks import MAIN_SCORE, MTEB_TASKS, markdown_table
from benchbox.registry import TASKS

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


def test_the_guide_shows_the_table_the_code_declares():
    section = GUIDE.read_text(encoding="utf-8").split("\n## mteb interoperability\n", 1)[1].split("\n## ", 1)[0]
    shown = [line for line in section.splitlines() if line.startswith("|")]
    assert shown == markdown_table().splitlines()
    assert len(shown) == len(MTEB_TASKS) + 2


@pytest.mark.parametrize("row", [r for r in MTEB_TASKS if r.corresponds], ids=lambda r: r.name)
def test_each_benchbox_side_is_a_metric_its_task_declares(row):
    task = TASKS.get(row.task)
    assert {metric for _, metric in row.metrics} <= {spec.name for spec in task.metrics}
    assert row.metrics[0][0] == MAIN_SCORE
    assert all(key in {o.protocol_key for o in task.options} for key in row.protocol)


@pytest.mark.parametrize("row", MTEB_TASKS, ids=lambda r: r.name)
def test_each_mteb_side_is_what_mteb_declares(row):
    mteb = pytest.importorskip("mteb", reason="mteb is not installed (pip install benchbox[mteb])")
    meta = mteb.get_task(row.name).metadata
    assert (meta.dataset["path"], meta.dataset["revision"]) == (row.dataset, row.revision)
    assert row.split in meta.eval_splits and meta.main_score == MAIN_SCORE
    stats = json.loads((Path(mteb.__file__).parent / "descriptive_stats" / "STS" / f"{row.name}.json").read_text())
    assert stats[row.split]["num_samples"] == row.n
