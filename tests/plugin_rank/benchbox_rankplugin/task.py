"""``paraphrase-rank``: each sentence of a pair ranks every second sentence (and back) by cosine; the rank of its
own paraphrase is the item. MRR is tested by the plugin's kind, R@1 and mean rank by benchbox's ``ranks``."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from benchbox.task_contract.protocol import DataFile, MetricRecord, MetricSpec, Task, TaskResult, locate_file
from benchbox.tasks.bases import bootstrap_interval

import benchbox_rankplugin.kind  # noqa: F401  (registers the plugin's kind)

DATA = Path(__file__).parent / "data" / "pairs.tsv"
DIRECTIONS = {"first-to-second": ("sentence1", "sentence2"), "second-to-first": ("sentence2", "sentence1")}
STATISTICS = {"mrr": lambda r: float((1.0 / r["rank"]).mean()), "r1": lambda r: float(100.0 * (r["rank"] <= 1).mean()),
              "meanr": lambda r: float(r["rank"].mean())}


class ParaphraseRank(Task):
    name = "paraphrase-rank"
    description = "each sentence ranks the paraphrases of benchbox-rankplugin's 40 pairs by cosine, both ways"
    reference = "benchbox-rankplugin test data (CC0)"
    group, order, version, license = "rank plugin", 1, "1", "CC0-1.0"
    item_kind = "query: the rank of its paraphrase"
    item_keys = ("subset", "direction", "item")
    data_files = (DataFile(DATA.name, sha256=hashlib.sha256(DATA.read_bytes()).hexdigest(), package_dir=DATA.parent),)
    metrics = (MetricSpec("mrr", "signflip-rr", summary=True, decimals=3),
               MetricSpec("r1", "ranks", unit="%", summary=True),
               MetricSpec("meanr", "ranks", higher_is_better=False, unit="rank", decimals=1))
    main_score = "mrr"

    def evaluate(self, encoder, ctx) -> TaskResult:
        path = locate_file(ctx.data, self.data_files[0])
        pairs = pd.read_csv(path, sep="\t")
        frames = []
        for direction, (query, document) in DIRECTIONS.items():
            q, d = (self._unit(ctx.embed(pairs[c].tolist())) for c in (query, document))
            similarity = q @ d.T
            own = np.diag(similarity)
            rank = 1 + (similarity > own[:, None]).sum(axis=1) + 0.5 * ((similarity == own[:, None]).sum(axis=1) - 1)
            frames.append(pd.DataFrame({"subset": "test", "direction": direction, "item": pairs["id"],
                                        "rank": rank.astype(float)}))
        items = pd.concat(frames, ignore_index=True)
        records = []
        for direction, part in items.groupby("direction", sort=False):
            for metric, statistic in STATISTICS.items():
                low, high = bootstrap_interval(part, statistic, ctx)
                records.append(MetricRecord(self.name, str(direction), metric, statistic(part), low, high, len(part)))
        return TaskResult(self.name, records, items, data_checksums=ctx.data.checksums([path]))

    @staticmethod
    def _unit(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, float)
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        return x / np.where(norms == 0, 1, norms)
