"""Published reference results as comparators: ``paper:merkx2019/<model>`` and ``paper:conneau2017/<model>``.

The ``merkx2019`` numbers are Merkx & Frank (2019, *Natural Language Engineering* 25(4), Figure 3; supplement
``supplement_NLE.pdf``), shipped in ``benchbox/published/`` (see its README.md): Pearson r with 95% Fisher-z
intervals on the 24 STS12–16 subsets, STS-B test and SICK-R test. They are mapped onto benchbox task and
subset names; the STS-B/SICK rows are SentEval's *supervised* ``stsb``/``sickr`` tasks (subset ``test``).
The paper gives r × 100; benchbox stores raw r. Published numbers come without per-pair scores, so any
comparison with them is approximate (:func:`benchbox.stats.unknown_r_ab_test`).

The ``conneau2017`` numbers are rows of Conneau et al. (2017), Table 4, evaluated with SentEval
(``published/infersent_table4.csv``, already in benchbox's task, subset and metric names and units): the
SICK-E test accuracy of GloVe BOW (GloVe 840B 300-d vectors), published without an interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

import pandas as pd

from benchbox.errors import BenchboxError
from benchbox.store import METRIC_COLUMNS

PREFIX = "paper:"
CITATION = ("Merkx & Frank (2019), Learning semantic sentence representations from visually grounded language "
            "without lexical knowledge, Natural Language Engineering 25(4), Figure 3 / supplement")
#: comparator name → model column of the supplement
COMPARATORS = {
    "paper:merkx2019/glove-bow": "BOW_GloVe",
    "paper:merkx2019/infersent": "InferSent",
    "paper:merkx2019/char-gru-flickr8k": "charGRU_Flickr8k",
    "paper:merkx2019/char-gru-coco": "charGRU_MSCOCO",
}
#: (supplement task, dataset) → (benchbox task, subset)
SUBSETS = {
    ("STS12", "MSRpar"): ("sts12", "MSRpar"),
    ("STS12", "MSRvid"): ("sts12", "MSRvid"),
    ("STS12", "SMTeuroparl"): ("sts12", "SMTeuroparl"),
    ("STS12", "OnWN"): ("sts12", "surprise.OnWN"),
    ("STS12", "SMTnews"): ("sts12", "surprise.SMTnews"),
    ("STS13", "FNWN"): ("sts13", "FNWN"),
    ("STS13", "HDL"): ("sts13", "headlines"),
    ("STS13", "OnWN"): ("sts13", "OnWN"),
    ("STS14", "Deft-forum"): ("sts14", "deft-forum"),
    ("STS14", "Deft-news"): ("sts14", "deft-news"),
    ("STS14", "HDL"): ("sts14", "headlines"),
    ("STS14", "Images"): ("sts14", "images"),
    ("STS14", "OnWN"): ("sts14", "OnWN"),
    ("STS14", "Tweet-news"): ("sts14", "tweet-news"),
    ("STS15", "Answers forum"): ("sts15", "answers-forums"),
    ("STS15", "Answers student"): ("sts15", "answers-students"),
    ("STS15", "belief"): ("sts15", "belief"),
    ("STS15", "HDL"): ("sts15", "headlines"),
    ("STS15", "Images"): ("sts15", "images"),
    ("STS16", "Answer-Answer"): ("sts16", "answer-answer"),
    ("STS16", "HDL"): ("sts16", "headlines"),
    ("STS16", "Plagiarism"): ("sts16", "plagiarism"),
    ("STS16", "Postediting"): ("sts16", "postediting"),
    ("STS16", "Question-Question"): ("sts16", "question-question"),
    ("STS-B", "STS 12-16 (test)"): ("stsb", "test"),
    ("SICK", "Relatedness (test)"): ("sickr", "test"),
}

INFERSENT_CITATION = ("Conneau, Kiela, Schwenk, Barrault & Bordes (2017), Supervised learning of universal sentence "
                      "representations from natural language inference data, EMNLP 2017, Table 4 (SentEval)")
#: comparator name → model row of ``published/infersent_table4.csv``
TABLE4_COMPARATORS = {"paper:conneau2017/glove-bow": "GloVe BOW"}


@cache
def supplement() -> pd.DataFrame:
    """The supplement table as shipped (26 rows × 4 models; r and bounds × 100)."""
    with resources.files("benchbox").joinpath("published/merkx_supplement.csv").open() as handle:
        return pd.read_csv(handle)


@dataclass(frozen=True)
class PaperResult:
    """A published model: metric rows in benchbox's schema, no per-item scores."""

    name: str
    model: str
    citation: str = CITATION

    @property
    def metrics(self) -> pd.DataFrame:
        table = supplement()
        rows = table[table["model"] == self.model]
        mapped = [SUBSETS[(t, d)] for t, d in zip(rows["task"], rows["dataset"])]
        return pd.DataFrame({
            "task": [m[0] for m in mapped],
            "subset": [m[1] for m in mapped],
            "metric": "pearson",
            "value": rows["pearson_r_x100"].to_numpy() / 100,
            "ci_low": rows["ci_low_x100"].to_numpy() / 100,
            "ci_high": rows["ci_high_x100"].to_numpy() / 100,
            "n": rows["n_pairs_assumed"].to_numpy(),
        }, columns=METRIC_COLUMNS)


@dataclass(frozen=True)
class Table4Result:
    """A model row of Conneau et al. (2017), Table 4: metric rows in benchbox's schema, no intervals, no items."""

    name: str
    model: str
    citation: str = INFERSENT_CITATION

    @property
    def metrics(self) -> pd.DataFrame:
        with resources.files("benchbox").joinpath("published/infersent_table4.csv").open() as handle:
            table = pd.read_csv(handle)
        return table[table["model"] == self.model].reindex(columns=METRIC_COLUMNS).reset_index(drop=True)


def is_paper(name: str) -> bool:
    return name.startswith(PREFIX)


def paper_result(name: str) -> PaperResult | Table4Result:
    """The comparator ``name`` (``paper:merkx2019/...``, ``paper:conneau2017/...``); unknown names list the
    available ones."""
    if name in TABLE4_COMPARATORS:
        return Table4Result(name, TABLE4_COMPARATORS[name])
    if name not in COMPARATORS:
        raise BenchboxError(f"unknown published comparator {name!r}; available: "
                            f"{', '.join([*COMPARATORS, *TABLE4_COMPARATORS])}")
    return PaperResult(name, COMPARATORS[name])
