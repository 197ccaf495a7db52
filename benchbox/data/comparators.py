"""Published reference results as comparators, ``paper:<paper>/<model>``: one table per paper in
``benchbox/data/published/`` (see its README.md), one :class:`Comparator` per model row, read into benchbox's metric
rows (task, subset, metric names and units). Published numbers come without per-item scores, so a comparison
with them is approximate where a test exists for that (:func:`benchbox.stats.unknown_r_ab_test`) and absent
otherwise.

- ``paper:merkx2019/...``: Merkx & Frank (2019, *Natural Language Engineering* 25(4), Figure 3; supplement
  ``supplement_NLE.pdf``): Pearson r with 95% Fisher-z intervals on the 24 STS12–16 subsets, STS-B test and
  SICK-R test, mapped onto benchbox's names; the STS-B/SICK rows are SentEval's *supervised* ``stsb``/``sickr``
  tasks (subset ``test``). The paper gives r × 100; benchbox stores raw r.
- ``paper:conneau2017/glove-bow``: Conneau et al. (2017), Table 4, evaluated with SentEval: the SICK-E test
  accuracy of GloVe BOW (GloVe 840B 300-d vectors), published without an interval.
- ``paper:radford2021/clip-vit-l14-336px``: zero-shot CLIP (Radford et al. 2021, Table 13; the paper's best
  model, ViT-L/14 at 336 px) on the MSCOCO 5k test set, benchbox's ``retrieval-coco-5k``: R@1/5/10 in percent
  for image → text (``i2t``, the paper's "text retrieval") and text → image (``t2i``, "image retrieval"), with
  the Wilson intervals benchbox gives its own recalls. Protocol differences in
  docs/vision-language.md#published-comparators.
- ``paper:vendrov2016/{order-embeddings,transitive-closure,word2gauss}``: Vendrov et al. (2016), Table 1, hypernym
  prediction on WordNet (benchbox's ``hypernym``): test accuracy in percent over the 4000 held-out positives and
  their 4000 negatives, with the Wilson intervals benchbox gives its own accuracies. The transitive-closure row
  is the paper's no-learning baseline, which the ``hypernym`` task also reports for its own split as
  ``closure-accuracy`` (docs/protocols.md#hypernym-prediction).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

import pandas as pd

from benchbox.errors import BenchboxError
from benchbox.storage.runs import METRIC_COLUMNS

PREFIX = "paper:"
MERKX_CITATION = ("Merkx & Frank (2019), Learning semantic sentence representations from visually grounded "
                  "language without lexical knowledge, Natural Language Engineering 25(4), Figure 3 / supplement")
CONNEAU_CITATION = ("Conneau, Kiela, Schwenk, Barrault & Bordes (2017), Supervised learning of universal sentence "
                    "representations from natural language inference data, EMNLP 2017, Table 4 (SentEval)")
VENDROV_CITATION = ("Vendrov, Kiros, Fidler & Urtasun (2016), Order-Embeddings of Images and Language, ICLR 2016, "
                    "Table 1: hypernym prediction on WordNet, test accuracy")
RADFORD_CITATION = ("Radford et al. (2021), Learning Transferable Visual Models From Natural Language Supervision, "
                    "ICML 2021 (PMLR 139), Table 13: zero-shot CLIP retrieval, MSCOCO 5k test")
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



@cache
def table(name: str) -> pd.DataFrame:
    """A table of ``benchbox/data/published/`` as shipped."""
    with resources.files("benchbox.data").joinpath(f"published/{name}").open() as handle:
        return pd.read_csv(handle)


def supplement() -> pd.DataFrame:
    """Merkx & Frank's supplement table as shipped (26 rows × 4 models; r and bounds × 100)."""
    return table("merkx_supplement.csv")


def merkx_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Supplement rows (r × 100 with Fisher-z bounds) as Pearson metric rows."""
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


def metric_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows already in benchbox's names and units, published without intervals."""
    return rows.reindex(columns=METRIC_COLUMNS).reset_index(drop=True)


def recall_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Recalls in percent with the Wilson 95% intervals benchbox gives its own (on the queries' count)."""
    return wilson_rows(rows, "n_queries")


def accuracy_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Accuracies in percent with the Wilson 95% intervals benchbox gives its own (on the pairs' count)."""
    return wilson_rows(rows, "n_pairs")


def wilson_rows(rows: pd.DataFrame, count: str) -> pd.DataFrame:
    """Proportions in percent (``value_pct``) over the column ``count`` of items, with Wilson 95% intervals."""
    from benchbox.stats import wilson_ci

    n = rows[count].to_numpy()
    low, high = wilson_ci(rows["value_pct"].to_numpy() / 100 * n, n)
    return pd.DataFrame({"task": rows["task"].to_numpy(), "subset": rows["subset"].to_numpy(),
                         "metric": rows["metric"].to_numpy(), "value": rows["value_pct"].to_numpy(),
                         "ci_low": 100 * low, "ci_high": 100 * high, "n": n}, columns=METRIC_COLUMNS)


@dataclass(frozen=True)
class Comparator:
    """Where a published model's numbers are (a table of ``published/``, or ``frame``: the rows read from a
    user's file, :mod:`benchbox.comparison.comparator_file`; and its model row) and how its rows become metric rows."""

    table: str
    model: str
    citation: str
    rows: Callable[[pd.DataFrame], pd.DataFrame]
    frame: pd.DataFrame | None = field(default=None, compare=False, repr=False)

    def metrics(self) -> pd.DataFrame:
        """The model's metric rows in benchbox's schema."""
        rows = table(self.table) if self.frame is None else self.frame
        return self.rows(rows[rows["model"] == self.model])


#: comparator name → its table, model row, citation and reader
COMPARATORS = {
    "paper:merkx2019/glove-bow": Comparator("merkx_supplement.csv", "BOW_GloVe", MERKX_CITATION, merkx_rows),
    "paper:merkx2019/infersent": Comparator("merkx_supplement.csv", "InferSent", MERKX_CITATION, merkx_rows),
    "paper:merkx2019/char-gru-flickr8k": Comparator("merkx_supplement.csv", "charGRU_Flickr8k", MERKX_CITATION,
                                                    merkx_rows),
    "paper:merkx2019/char-gru-coco": Comparator("merkx_supplement.csv", "charGRU_MSCOCO", MERKX_CITATION, merkx_rows),
    "paper:conneau2017/glove-bow": Comparator("infersent_table4.csv", "GloVe BOW", CONNEAU_CITATION, metric_rows),
    "paper:radford2021/clip-vit-l14-336px": Comparator("radford2021_clip.csv", "ViT-L/14@336px", RADFORD_CITATION,
                                                       recall_rows),
    "paper:vendrov2016/order-embeddings": Comparator("vendrov2016_table1.csv", "order-embeddings", VENDROV_CITATION,
                                                     accuracy_rows),
    "paper:vendrov2016/transitive-closure": Comparator("vendrov2016_table1.csv", "transitive closure",
                                                       VENDROV_CITATION, accuracy_rows),
    "paper:vendrov2016/word2gauss": Comparator("vendrov2016_table1.csv", "word2gauss", VENDROV_CITATION,
                                               accuracy_rows),
}


@dataclass(frozen=True)
class PaperResult:
    """A published model: metric rows in benchbox's schema, no per-item scores."""

    name: str
    comparator: Comparator

    @property
    def citation(self) -> str:
        return self.comparator.citation

    @property
    def metrics(self) -> pd.DataFrame:
        return self.comparator.metrics()


def is_paper(name: str) -> bool:
    return name.startswith(PREFIX)


def paper_result(name: str) -> PaperResult:
    """The comparator ``name`` (:data:`COMPARATORS`); unknown names list the available ones."""
    if name not in COMPARATORS:
        raise BenchboxError(f"unknown published comparator {name!r}; available: {', '.join(COMPARATORS)}")
    return PaperResult(name, COMPARATORS[name])
