"""The configuration of a char-RNN training run (PROTOCOLS.md §7 defaults), recorded in its manifest."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from benchbox.errors import BenchboxError
from benchbox.options import check_number
from benchbox.training.data import VISUAL_MODES

#: the losses of :mod:`benchbox.training.losses`, by their ``--loss`` names
LOSSES = ("hinge-sum", "hinge-max", "order", "cluster", "perceptual")
#: default margins: Merkx & Frank (0.2) for the hinge losses, Vendrov et al. (0.05) for the order loss
DEFAULT_MARGIN = {"hinge-sum": 0.2, "hinge-max": 0.2, "order": 0.05, "cluster": 0.2, "perceptual": 0.2}
#: encoder name → (rnn, pooling)
ARCHITECTURES = {"char-gru": ("gru", "attention"), "char-lstm": ("lstm", "attention"), "char-gru-max": ("gru", "max")}
#: lr_max per dataset (Merkx & Frank 2019)
LR_MAX = {"flickr8k": 1e-3, "coco": 1e-4}
#: fields that may change between an interrupted run and its resumption
RESUMABLE_CHANGES = {"data_dir", "threads", "checkpoint_every", "eval_semantic"}


@dataclass(frozen=True)
class TrainConfig:
    encoder: str
    dataset: str
    visual: str = "features"
    features: str | None = None
    hidden: int = 1024
    epochs: int = 32
    cycle_epochs: int = 4
    batch_size: int = 32
    loss: str = "hinge-sum"
    #: hinge margin; None: the loss's default (0.2; 0.05 for ``order``)
    margin: float | None = None
    lr_max: float | None = None
    lr_min: float = 1e-6
    #: Bordes et al.'s grounding terms added to the hinge loss (``--loss cluster`` / ``perceptual``)
    cluster_weight: float = 1.0
    cluster_margin: float = 0.2
    perceptual_weight: float = 1.0
    seed: int = 0
    max_captions: int | None = None
    eval_semantic: tuple[str, ...] = ()
    data_dir: str | None = None
    checkpoint_every: int = 200
    threads: int | None = None

    def __post_init__(self) -> None:
        if self.encoder not in ARCHITECTURES:
            raise BenchboxError(f"unknown architecture {self.encoder!r}; one of {', '.join(ARCHITECTURES)}")
        if self.dataset not in LR_MAX:
            raise BenchboxError(f"--dataset must be one of {', '.join(LR_MAX)}, not {self.dataset!r}")
        if self.visual not in VISUAL_MODES:
            raise BenchboxError(f"--visual must be one of {', '.join(VISUAL_MODES)}, not {self.visual!r}")
        if self.loss not in LOSSES:
            raise BenchboxError(f"--loss must be one of {', '.join(LOSSES)}, not {self.loss!r}")
        if self.visual == "cluster" and self.loss in ("order", "perceptual"):
            raise BenchboxError(f"--loss {self.loss} needs a visual side; it cannot be used with --visual cluster")
        if self.visual == "features" and not self.features:
            raise BenchboxError("--visual features needs --features FILE (or train with --visual cluster or random)")
        if self.visual != "features" and self.features:
            raise BenchboxError(f"--features is only used with --visual features, not --visual {self.visual}")
        for key in ("hidden", "epochs", "cycle_epochs", "batch_size"):
            if getattr(self, key) < 1:
                raise BenchboxError(f"--{key.replace('_', '-')} must be positive")
        self._check_ranges()
        if self.batch_size < 3 and self.loss == "perceptual":
            raise BenchboxError("the perceptual loss needs a batch size of at least 3")

    def _check_ranges(self) -> None:
        """Every number finite and in range (the same rules as the CLI's option callbacks), and
        ``lr_min`` ≤ the resolved ``lr_max``: a learning rate of inf or NaN trains to NaN weights."""
        for key in ("margin", "cluster_margin", "cluster_weight", "perceptual_weight", "lr_min"):
            check_number(f"--{key.replace('_', '-')}", getattr(self, key), low=0)
        check_number("--lr-max", self.lr_max, low=0, low_open=True)
        for key in ("seed", "checkpoint_every"):  # checkpoint_every 0 (API only): no periodic checkpoints
            check_number(f"--{key.replace('_', '-')}", getattr(self, key), low=0)
        for key in ("max_captions", "threads"):
            check_number(f"--{key.replace('_', '-')}", getattr(self, key), low=1)
        if self.lr_min > self.resolved_lr_max:
            raise BenchboxError(f"--lr-min ({self.lr_min:g}) must not exceed --lr-max ({self.resolved_lr_max:g})")

    @property
    def architecture(self) -> tuple[str, str]:
        return ARCHITECTURES[self.encoder]

    @property
    def resolved_margin(self) -> float:
        return DEFAULT_MARGIN[self.loss] if self.margin is None else self.margin

    @property
    def resolved_lr_max(self) -> float:
        return LR_MAX[self.dataset] if self.lr_max is None else self.lr_max

    @property
    def needs_partner(self) -> bool:
        """Whether each minibatch row needs a second caption of its image."""
        return self.visual == "cluster" or self.loss == "cluster"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["eval_semantic"] = list(self.eval_semantic)
        out["resolved"] = {"margin": self.resolved_margin, "lr_max": self.resolved_lr_max}
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> TrainConfig:
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in raw.items() if k in names}
        values["eval_semantic"] = tuple(values.get("eval_semantic") or ())
        return cls(**values)

    def check_resume(self, stored: TrainConfig) -> TrainConfig:
        """The stored configuration with the allowed changes; an error naming any other difference."""
        differ = [f.name for f in fields(self) if f.name not in RESUMABLE_CHANGES
                  and getattr(self, f.name) != getattr(stored, f.name)]
        if differ:
            detail = ", ".join(f"{k}: run has {getattr(stored, k)!r}, command gives {getattr(self, k)!r}" for k in differ)
            raise BenchboxError(f"--resume needs the same training options as the interrupted run ({detail})")
        return replace(stored, **{k: getattr(self, k) for k in RESUMABLE_CHANGES})
