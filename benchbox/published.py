"""Published reference results as comparators: ``paper:merkx2019/<model>``, ``paper:radford2021/<model>``.

The numbers are Merkx & Frank (2019, *Natural Language Engineering* 25(4), Figure 3; supplement
``supplement_NLE.pdf``), shipped in ``benchbox/published/`` (see its README.md): Pearson r with 95% Fisher-z
intervals on the 24 STS12–16 subsets, STS-B test and SICK-R test. They are mapped onto benchbox task and
subset names; the STS-B/SICK rows are SentEval's *supervised* ``stsb``/``sickr`` tasks (subset ``test``).
The paper gives r × 100; benchbox stores raw r. Published numbers come without per-pair scores, so any
comparison with them is approximate (:func:`benchbox.stats.unknown_r_ab_test`).

``paper:radford2021/clip-vit-l14-336px``: zero-shot CLIP (Radford et al. 2021, Table 13; the paper's best model,
ViT-L/14 at 336 px) on the MSCOCO 5k test set, benchbox's ``retrieval-coco-5k``: R@1/5/10 in percent for
image → text (``i2t``, the paper's "text retrieval") and text → image (``t2i``, "image retrieval"), with the
Wilson intervals benchbox gives its own recalls (on 5000 and 25000 queries). Protocol differences in
docs/vision-language.md#published-comparators.
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


RADFORD_CITATION = ("Radford et al. (2021), Learning Transferable Visual Models From Natural Language Supervision, "
                    "ICML 2021 (PMLR 139), Table 13: zero-shot CLIP retrieval, MSCOCO 5k test")
#: comparator name → model column of ``radford2021_clip.csv``
RETRIEVAL_COMPARATORS = {"paper:radford2021/clip-vit-l14-336px": "ViT-L/14@336px"}


@cache
def _table(name: str) -> pd.DataFrame:
    with resources.files("benchbox").joinpath(f"published/{name}").open() as handle:
        return pd.read_csv(handle)


def retrieval_rows(model: str) -> pd.DataFrame:
    """The recalls of ``model`` in ``radford2021_clip.csv`` as metric rows, with Wilson 95% intervals."""
    from benchbox.stats import wilson_ci

    rows = _table("radford2021_clip.csv").query("model == @model")
    n = rows["n_queries"].to_numpy()
    low, high = wilson_ci(rows["value_pct"].to_numpy() / 100 * n, n)
    return pd.DataFrame({"task": rows["task"].to_numpy(), "subset": rows["subset"].to_numpy(),
                         "metric": rows["metric"].to_numpy(), "value": rows["value_pct"].to_numpy(),
                         "ci_low": 100 * low, "ci_high": 100 * high, "n": n}, columns=METRIC_COLUMNS)


@cache
def supplement() -> pd.DataFrame:
    """The supplement table as shipped (26 rows × 4 models; r and bounds × 100)."""
    return _table("merkx_supplement.csv")


@dataclass(frozen=True)
class PaperResult:
    """A published model: metric rows in benchbox's schema, no per-item scores."""

    name: str
    model: str
    citation: str = CITATION

    @property
    def metrics(self) -> pd.DataFrame:
        if self.name in RETRIEVAL_COMPARATORS:
            return retrieval_rows(self.model)
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


def is_paper(name: str) -> bool:
    return name.startswith(PREFIX)


def paper_result(name: str) -> PaperResult:
    """The comparator ``name`` (``paper:merkx2019/...``, ``paper:radford2021/...``); unknown names list the
    available ones."""
    if name in RETRIEVAL_COMPARATORS:
        return PaperResult(name, RETRIEVAL_COMPARATORS[name], RADFORD_CITATION)
    if name not in COMPARATORS:
        raise BenchboxError(f"unknown published comparator {name!r}; available: "
                            f"{', '.join([*COMPARATORS, *RETRIEVAL_COMPARATORS])}")
    return PaperResult(name, COMPARATORS[name])
