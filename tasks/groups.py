"""Task groups spanning several modules: ``semantic`` (the paper's 26 semantic rows: STS12–16 subsets and
their aggregates, supervised STS-B and SICK-R) and ``transfer`` (SentEval's classification set, SICK-E
included as in SentEval's transfer table; SNLI is not: its 550k training pairs rarely sit in a data root)."""

from __future__ import annotations

from benchbox.task_contract.protocol import TaskGroup

SEMANTIC = TaskGroup(
    "semantic",
    ("sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sickr"),
    "STS12–16 (unsupervised) + STS-B and SICK-R (supervised, SentEval)",
)
TRANSFER = TaskGroup(
    "transfer",
    ("mr", "cr", "subj", "mpqa", "trec", "mrpc", "sst2", "sicke"),
    "SentEval classification transfer: MR, CR, SUBJ, MPQA, TREC, MRPC, SST-2, SICK-E",
)
