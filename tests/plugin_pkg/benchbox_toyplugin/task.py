"""``toy-paraphrase``: paraphrase detection scored by ROC AUC of the cosine similarity of the two sentences, on the
pair-classification base (:class:`benchbox.tasks.bases.PairClassificationTask`: cosine of the pair, the AUC by the
Mann–Whitney statistic with a percentile bootstrap interval over pairs, paired tests by a bootstrap of the AUC).
The task is its data file, its metadata and the ``pairs`` option (evaluate the first N pairs)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from benchbox.errors import BenchboxError
from benchbox.task_contract.protocol import DataFile
from benchbox.task_contract.options import TaskOption
from benchbox.tasks.bases import PairClassificationTask

DATA = Path(__file__).parent / "data" / "paraphrase.tsv"


class ToyParaphrase(PairClassificationTask):
    name = "toy-paraphrase"
    description = "Toy paraphrase detection (200 pairs bundled with benchbox-toyplugin), ROC AUC of the cosine."
    reference = "benchbox-toyplugin test data (CC0); AUC: Hanley & McNeil 1982"
    group, order, version, license = "paraphrase detection", 900, "1.0", "CC0-1.0"
    citation = "@misc{benchbox_toyplugin, title = {Toy paraphrase pairs written for the benchbox test suite}, year = {2026}}"
    data_files = (DataFile(DATA.name, sha256=hashlib.sha256(DATA.read_bytes()).hexdigest(), package_dir=DATA.parent),)
    columns = {"item": "id", "gold": "label"}
    options = (TaskOption("pairs", int, 0, "evaluate the first N pairs of the file (0: all 200)", low=0,
                          protocol_key="pairs"),)

    def select(self, rows, ctx):
        pairs = ctx.option(self, "pairs")
        if pairs == 1:
            raise BenchboxError("task option toy-paraphrase:pairs must be 0 (all) or at least 2 (an AUC needs both classes)")
        return rows.head(pairs) if pairs else rows
