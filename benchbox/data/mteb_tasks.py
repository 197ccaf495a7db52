"""Which MTEB tasks (Muennighoff et al. 2023; the ``mteb`` package, ``mteb.get_task(NAME).metadata``) are benchbox
tasks: one table, :data:`MTEB_TASKS`, read by ``benchbox export mteb`` (:mod:`benchbox.data.mteb_export`), by
the ``mteb:PATH`` comparators (:mod:`benchbox.data.mteb_results`) and rendered into docs/guide.md#mteb-interoperability
(:func:`markdown_table`; a test checks the page against it, another checks each row against mteb's own metadata).

A row corresponds when the items (the pairs of one split and their gold scores), the similarity (cosine) and the
metric are MTEB's; each benchbox metric is then MTEB's score of the same name on the raw scale (r, not r × 100).
MTEB scores every STS task with ``cosine_spearman`` (main score) and ``cosine_pearson`` over the whole test split:
for STS12–16 that is one correlation over the pairs of all the year's subsets pooled, benchbox's ``spearman_pooled``
/ ``pearson_pooled`` on subset ``all`` (not SentEval's per-subset ``mean``/``wmean``, nor the per-subset rows).
Checked against mteb 2.26.24's descriptive statistics (``mteb/descriptive_stats/STS/NAME.json``): STS12–16 hold
SentEval's lower-cased, tokenised pairs (the same pair counts, unique-sentence counts, shortest and longest sentence
and mean gold score as benchbox's ``--text senteval`` files, which ``--text raw`` does not match); STSBenchmark the
same 1,379 test pairs and mean gold as SentEval's copy, in untokenised text; SICK-R all 9,927 pairs of SICK as its
``test`` split. A row without a benchbox task has no counterpart: its ``departure`` says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: the mteb release whose task definitions (dataset, revision, split, size, main score) the table was checked
#: against; ``benchbox export mteb`` writes it as the files' ``mteb_version``
MTEB_VERSION = "2.26.24"
#: MTEB's scores from the model's own similarity function: benchbox's similarity is the cosine, so they are the
#: cosine scores (as mteb writes them for a model that declares no similarity function, ``AbsTaskSTS``)
MODEL_SIMILARITY = {"spearman": "cosine_spearman", "pearson": "cosine_pearson"}
#: the hf_subset and languages of an English single-subset MTEB task's score entry
HF_SUBSET, LANGUAGES = "default", ("eng-Latn",)
#: the main score of every MTEB STS task
MAIN_SCORE = "cosine_spearman"
#: how benchbox's cosine (:func:`benchbox.tasks.sts.cosine_rows`) departs from MTEB's (``AnySTSEvaluator``)
COSINE = ("benchbox's cosine is SentEval's (u·v / ‖u‖‖v‖ in float32, a zero embedding scores 0), MTEB's "
          "1 − sklearn's paired_cosine_distances (a zero embedding scores 0.5): near-ties may order differently")


@dataclass(frozen=True)
class MtebTask:
    """One MTEB task and the benchbox task, subset and metrics it corresponds to (``task`` None: none)."""

    name: str
    dataset: str
    revision: str
    split: str
    #: pairs in ``split`` (mteb's descriptive statistics)
    n: int
    task: str | None = None
    subset: str | None = None
    #: MTEB score → benchbox metric, the main score first
    metrics: tuple[tuple[str, str], ...] = ()
    #: what the benchbox run must have recorded of the task's protocol (``manifest.json`` ``tasks.T.protocol``)
    protocol: dict[str, Any] = field(default_factory=dict)
    #: how benchbox's evaluation departs from MTEB's (or, without ``task``, why nothing corresponds)
    departure: str = ""
    #: without ``task``: the benchbox task it resembles, whose export then says why it is not this task
    resembles: str | None = None

    @property
    def corresponds(self) -> bool:
        return self.task is not None


def _sts_year(year: int, revision: str, n: int) -> MtebTask:
    return MtebTask(
        f"STS{year}", f"mteb/sts{year}-sts", revision, "test", n, f"sts{year}", "all",
        (("cosine_spearman", "spearman_pooled"), ("cosine_pearson", "pearson_pooled")), {"text": "senteval"},
        f"{COSINE}; a run with `--text raw` is not exported (MTEB's pairs are SentEval's tokenised text, within "
        "0.2 % of its characters)")


#: the correspondence, one row per MTEB task (module docstring)
MTEB_TASKS: tuple[MtebTask, ...] = (
    _sts_year(12, "a0d554a64d88156834ff5ae9920b964011b16384", 3108),
    _sts_year(13, "7e90230a92c190f1bf69ae9002b8cea547a64cca", 1500),
    _sts_year(14, "6031580fec1f6af667f0bd2da0a551cf4f0b2375", 3750),
    _sts_year(15, "ae752c7c21bf194d8b67fd573edf7ae58183cbe3", 3000),
    _sts_year(16, "4d8694f8f0e0100860b497b999b3dbed754a0513", 1186),
    MtebTask("STSBenchmark", "mteb/stsbenchmark-sts", "b0fddb56ed78048fa8b90373c8a3cfc37b684831", "test", 1379,
             "stsb-cosine", "test", (("cosine_spearman", "spearman"), ("cosine_pearson", "pearson")),
             departure=f"{COSINE}; benchbox reads SentEval's lower-cased, tokenised copy of the same pairs, MTEB "
                       "the untokenised text"),
    MtebTask("STSBenchmark.v2", "mteb/STSBenchmarkv2", "93b628c3969a75e76727db2b7ee252e53e96268d", "test", 1362,
             departure="its test split has 1,362 pairs, not STS-B's 1,379", resembles="stsb-cosine"),
    MtebTask("SICK-R", "mteb/sickr-sts", "20a6d6f312dd54037fe07a32d58e5e168867909d", "test", 9927,
             departure="its test split is all 9,927 pairs of SICK; benchbox's sickr-cosine scores the "
                       "4,927 of SICK's test split", resembles="sickr-cosine"),
)
BY_NAME = {row.name: row for row in MTEB_TASKS}
BY_TASK = {row.task: row for row in MTEB_TASKS if row.task is not None}
#: benchbox task → the MTEB tasks it resembles without corresponding
RESEMBLED = {task: [row for row in MTEB_TASKS if row.resembles == task] for task in
             dict.fromkeys(row.resembles for row in MTEB_TASKS if row.resembles is not None)}


def markdown_table() -> str:
    """:data:`MTEB_TASKS` as the markdown table of docs/guide.md#mteb-interoperability."""
    lines = ["| MTEB task | split (pairs) | dataset @ revision | benchbox task, subset | MTEB score ← benchbox "
             "metric | the run must have | departure |", "|---|---|---|---|---|---|---|"]
    for row in MTEB_TASKS:
        target = (f"`{row.task}`, `{row.subset}`" if row.corresponds
                  else f"— (not `{row.resembles}`)" if row.resembles else "—")
        metrics = ", ".join(f"`{m}` ← `{b}`" for m, b in row.metrics) or "—"
        protocol = ", ".join(f"`{k}={v}`" for k, v in row.protocol.items()) or "—"
        lines.append(f"| {row.name} | {row.split} ({row.n:,}) | `{row.dataset}` @ `{row.revision[:8]}` | {target} | "
                     f"{metrics} | {protocol} | {row.departure} |")
    return "\n".join(lines)
