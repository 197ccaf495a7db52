"""The configuration of a char-RNN training run (defaults: docs/protocols.md#char-rnn-encoders), recorded in its manifest.

``--loss`` is one name, a preset, or a weighted combination of terms (Bordes et al. 2019's
M(α_T, α_P, α_C); :func:`benchbox.training.losses.weighted_terms` computes them):

- one name (as before): ``hinge-sum``, ``hinge-max``, ``order``; ``cluster`` = ``hinge-sum=1,cluster=1`` with a
  visual side and the cluster loss alone with ``--visual cluster``; ``perceptual`` = ``hinge-sum=1,perceptual=1``.
  With ``--visual cluster`` the single hinge names rank each caption against a partner caption of its image;
- a weighted combination ``TERM=WEIGHT,...`` of ``hinge-sum``, ``hinge-max``, ``order`` (ranking toward the
  visual side), ``cluster`` (captions of one image closer than captions of others), ``perceptual``
  (−Pearson of caption and visual cosines) and ``textual`` (L_T, QuickThought's neighbour classification on the
  ordered corpus ``--text-corpus``), e.g. ``cluster=1,perceptual=0.1,hinge-sum=1``; ``hinge-sum``, ``hinge-max``,
  ``order`` and ``perceptual`` need a visual side (``--visual features``, ``random`` or a clip model ``frame``,
  ``average``, ``attention``: :mod:`benchbox.training.clips`); ``textual`` needs ``--text-corpus``: beside a
  grounded term every step trains on a caption batch and a text batch; alone (``--loss textual=1``, Bordes et
  al.'s L_T pretraining of M^p; with ``--visual cluster``) every step is a text batch and an epoch one pass over
  the corpus (:mod:`benchbox.training.text_corpus`);
- a preset, :data:`LOSS_PRESETS`: Bordes et al.'s grounded models with the weights of their Table 2 —
  ``bordes-c`` (M_c = M(0, 0, 1), cluster), ``bordes-p`` (M_p = M(0, 1, 0), perceptual), ``bordes-b``
  (M_b = M(0, 0.1, 1), both) — and ``projection`` (their baseline P, eq. 3: each sentence ranked against the
  other videos; our ``hinge-sum`` with caption anchors only, :data:`PRESET_ANCHORS`, margin m′ = 0.5); alone, a
  preset has α_T = 0 (docs/protocols.md#bordes-models quotes the table). L_C is the mean of its hinge terms
  unless ``--cluster-reduction sum`` (:data:`CLUSTER_REDUCTIONS`). A preset may stand for its terms inside a
  combination: ``bordes-b,textual=0.5`` is M(α_T = 0.5, α_P = 0.1, α_C = 1).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from benchbox.errors import BenchboxError
from benchbox.encoders.char_rnn_architectures import ARCHITECTURES
from benchbox.options import DEFAULT_SEED, check_number
from benchbox.training.clips import ATTENTION_QUERIES, CLIP_VISUALS, FRAMES
from benchbox.training.data import VISUAL_MODES
from benchbox.data.captions import PER_IMAGE
from benchbox.data.video_captions import DATASET as VIDEO_DATASET
from benchbox.training.train_options import check_declared, train_option

#: the losses of :mod:`benchbox.training.losses` that ``--loss`` takes by their names alone
LOSSES = ("hinge-sum", "hinge-max", "order", "cluster", "perceptual")
#: the terms of a weighted combination: those losses and Bordes et al.'s textual objective L_T
TERMS = (*LOSSES, "textual")
#: the ranking terms: a caption ranked against the visual side (or, with ``--visual cluster``, a partner caption)
RANKING_TERMS = ("hinge-sum", "hinge-max", "order")
#: terms that read the visual side of a caption (not ``cluster``, which compares captions, nor ``textual``)
VISUAL_TERMS = ("hinge-sum", "hinge-max", "order", "perceptual")
#: Bordes et al. (2019)'s named models, their Table 2 and §4.2 (M_A^p(α_T, α_P, α_C)): preset → (term, weight)
LOSS_PRESETS = {
    "bordes-c": (("cluster", 1.0),),
    "bordes-p": (("perceptual", 1.0),),
    "bordes-b": (("cluster", 1.0), ("perceptual", 0.1)),
    "projection": (("hinge-sum", 1.0),),
}
#: default margins: Merkx & Frank (0.2) for the hinge losses, Vendrov et al. (0.05) for the order loss, Bordes
#: et al. (2019, §3.4: m = 0.5) for the cluster loss (``--cluster-margin``)
DEFAULT_MARGIN = {"hinge-sum": 0.2, "hinge-max": 0.2, "order": 0.05, "cluster": 0.5, "perceptual": 0.2}
#: the ranking margin of a preset that sets its own (Bordes et al. 2019, §3.4: their baseline P has m′ = 0.5)
PRESET_MARGIN = {"projection": 0.5}
#: how the cluster loss L_C gathers its 2B(B − 1) hinge terms (``--cluster-reduction``): their mean (the default,
#: so that α_C L_C and α_P L_P, one correlation, are on one scale and M_b lies between M_c and M_p as Bordes et
#: al.'s Table 2 has it) or their sum (runs recorded before the option)
CLUSTER_REDUCTIONS = ("mean", "sum")
#: the anchors of a ranking term (``--ranking-anchors``): ``both``, every caption against the other images and
#: every image against the other captions (Merkx & Frank's symmetric hinge), or ``caption``, the captions only
RANKING_ANCHORS = ("both", "caption")
#: the anchors of a preset that sets its own (Bordes et al. 2019, eq. 3: P ranks a sentence against other videos)
PRESET_ANCHORS = {"projection": "caption"}
#: lr_max per dataset (Merkx & Frank 2019; MSVD, about Flickr8k's size in captions used, takes Flickr8k's)
LR_MAX = {"flickr8k": 1e-3, "coco": 1e-4, VIDEO_DATASET: 1e-3}
#: the ``--visual`` modes that read a features file
FEATURE_VISUALS = ("features", *CLIP_VISUALS)
#: fields that may change between an interrupted run and its resumption
RESUMABLE_CHANGES = {"data_dir", "threads", "checkpoint_every", "eval_semantic"}
#: fields a resumed run keeps from its start and a resuming command does not repeat (its weights are in the
#: checkpoint; ``--init-from`` with ``--resume`` is refused)
KEPT_ON_RESUME = {"init_from"}


def semantic_tasks(values: list[str] | None) -> tuple[str, ...]:
    """``--eval-semantic``'s tasks and groups, given comma-separated, repeated, or both."""
    return tuple(t for value in values or () for t in value.split(",") if t)


@dataclass(frozen=True)
class TrainConfig:
    """The options of ``benchbox train ENCODER`` (a char-RNN), each declared once with its command-line option
    (:mod:`benchbox.training.train_options`), in the order ``--help`` lists them."""

    encoder: str
    dataset: str = train_option(help="flickr8k, coco, or msvd (video clips; needs --video-captions).",
                                choices=tuple(LR_MAX))
    features: str | None = train_option(None, path=True, help="Image features file (.npy/.npz/.h5 keyed by image id), for --visual features; or clip features (.npz/.h5, [clips, frames, dim]) for --visual frame, average or attention.")
    visual: str = train_option("features", choices=VISUAL_MODES, help="features (image features), cluster (captions of an image are positives; no images), random (a fixed random vector per image or clip: Bordes et al.'s R); for clips of frames (--features): frame (F, the first frame; --frame middle), average (A, the mean of the frames) or attention (T, softmax attention over the frames driven by the sum of the caption's GloVe vectors through a learned projection).")
    #: the folder of an MSVD-format video caption dataset (``--dataset msvd``)
    video_captions: str | None = train_option(None, path=True, help="Folder of an MSVD-format video caption dataset, for --dataset msvd: AllVideoDescriptions.txt ('<video_id> <description>' lines) and the split lists train.txt, dev.txt.")
    #: the descriptions a training clip keeps (``--dataset msvd``): None, all of them as Bordes et al. (2019)
    #: train on; N, its first N (at least five)
    max_descriptions: int | None = train_option(None, low=1, help="--dataset msvd: keep the first N descriptions of each training clip (at least 5; default all, as Bordes et al. 2019 train on; dev clips keep 5).")
    #: the fixed word vectors of ``--visual attention`` (None: the packaged GloVe 6B 50-d)
    word_vectors: str | None = train_option(None, flag="vectors", shared=True)
    #: F's frame (``--visual frame``): Bordes et al.'s first, or the middle one (:data:`FRAMES`)
    frame: str = train_option(FRAMES[0], choices=FRAMES, help="--visual frame's frame: first (Bordes et al.'s F, v = i_1) or middle.")
    #: T's query (``--visual attention``): Bordes et al.'s sum of word vectors, or their mean (:data:`ATTENTION_QUERIES`)
    attention_query: str = train_option(ATTENTION_QUERIES[0], choices=ATTENTION_QUERIES, help="--visual attention's query of a caption: sum (Bordes et al.'s Σ_w u_w) or mean of its known words' vectors.")
    hidden: int = train_option(1024, low=1, help="RNN units per direction n (embedding size 2n); the paper: 512, 1024, 2048.")
    epochs: int = train_option(32, low=1, help="Training epochs.")
    cycle_epochs: int = train_option(4, low=1, help="Epochs per cyclic learning-rate cycle; a snapshot at the end of each.")
    batch_size: int = train_option(32, low=1, help="Minibatch size (global, over all processes).")
    loss: str = train_option("hinge-sum", help="hinge-sum (default), hinge-max (VSE++), order (Vendrov), cluster or perceptual (Bordes et al.); a preset bordes-c, bordes-p, bordes-b (Bordes et al. 2019, Table 2: cluster=1; perceptual=1; cluster=1,perceptual=0.1) or projection (= hinge-sum with caption anchors only, margin 0.5); or weighted terms, e.g. cluster=1,perceptual=0.1,hinge-sum=1, with presets for their terms and Bordes et al.'s textual term (QuickThought on --text-corpus), e.g. bordes-c,textual=0.5.")
    #: the ordered corpus of the ``textual`` term (one sentence per line, a blank line between documents)
    text_corpus: str | None = train_option(None, path=True, help="Ordered text corpus of the textual term (--loss ...,textual=W): UTF-8, one sentence per line, a blank line between documents.")
    #: hinge margin; None: the loss's default (0.2; 0.05 for ``order``)
    margin: float | None = train_option(None, low=0, help="Margin of the ranking term (default 0.2; 0.05 for --loss order; 0.5 for the projection preset, Bordes et al.'s m').")
    #: the margin m of the cluster loss L_C (Bordes et al. 2019, §3.4: 0.5)
    cluster_margin: float = train_option(DEFAULT_MARGIN["cluster"], low=0, help="Margin m of the cluster loss (Bordes et al. 2019: 0.5).")
    #: how L_C gathers its hinge terms (:data:`CLUSTER_REDUCTIONS`)
    cluster_reduction: str = train_option(CLUSTER_REDUCTIONS[0], choices=CLUSTER_REDUCTIONS, help="How the cluster loss gathers its hinge terms: mean (default; α_C L_C and α_P L_P on one scale, as Bordes et al.'s Table 2 weighs them) or sum (runs before this option).")
    #: the anchors of the ranking term (:data:`RANKING_ANCHORS`); None: the preset's own, else both
    ranking_anchors: str | None = train_option(None, choices=RANKING_ANCHORS, help="Anchors of the ranking term: both (captions against other images and images against other captions; default) or caption (captions only; the default of the projection preset, Bordes et al.'s eq. 3).")
    lr_max: float | None = train_option(None, low=0, low_open=True, help="Peak learning rate (default 1e-3 flickr8k, 1e-4 coco).")
    lr_min: float = train_option(1e-6, low=0, help="Lowest learning rate (at most --lr-max).")
    seed: int = train_option(DEFAULT_SEED, low=0, shared=True)
    #: a finished run whose sentence encoder this run starts from (``--init-from RUN``, :mod:`.init_from`)
    init_from: str | None = train_option(None, path=True, metavar="RUN", help="Start the sentence encoder from the weights of the finished run RUN (same encoder, --hidden and captions); fresh optimiser and schedule. Bordes et al.'s M^p: --loss textual=1 first, then the grounded loss with --init-from.")
    max_captions: int | None = train_option(None, low=1, help="Train on the first training images whose captions number at most N in all (N//5 images of five; a subset).")
    eval_semantic: tuple[str, ...] = train_option((), metavar="TASK[,TASK...]", parse=semantic_tasks, help="Tasks or groups (comma-separated or repeated) to evaluate at every snapshot (the paper's Figure 4).")
    data_dir: str | None = train_option(None, path=True, shared=True)
    #: 0 (the Python API only): no periodic checkpoints
    checkpoint_every: int = train_option(200, low=1, api_also=(0,), help="Write the resumable checkpoint every N steps (and at every epoch end).")
    threads: int | None = train_option(None, low=1, shared=True)
    #: Bordes et al.'s grounding terms added to the hinge loss (``--loss cluster`` / ``perceptual``; Python API only)
    cluster_weight: float = 1.0
    perceptual_weight: float = 1.0

    def __post_init__(self) -> None:
        if self.encoder not in ARCHITECTURES:
            raise BenchboxError(f"unknown architecture {self.encoder!r}; one of {', '.join(ARCHITECTURES)}")
        check_declared(self)  # choices and ranges, as the command line checks them
        terms = self.loss_terms  # parses --loss: a clear error on a bad spec
        if self.visual == "cluster" and self.loss in ("order", "perceptual"):
            raise BenchboxError(f"--loss {self.loss} needs a visual side; it cannot be used with --visual cluster")
        if self.visual == "cluster" and self.loss not in LOSSES:
            visual_terms = [t for t, _ in terms if t in VISUAL_TERMS]
            if visual_terms:
                raise BenchboxError(
                    f"--loss {self.loss} has {', '.join(visual_terms)}, which need{'s' if len(visual_terms) == 1 else ''} "
                    "a visual side: pass --visual features --features FILE (or --visual random), or use only the "
                    "cluster term (e.g. --loss bordes-c) with --visual cluster")
        if self.visual in FEATURE_VISUALS and not self.features:
            raise BenchboxError(f"--visual {self.visual} needs --features FILE (or train with --visual cluster or "
                                "random)")
        if self.visual not in FEATURE_VISUALS and self.features:
            raise BenchboxError(f"--features is only used with --visual {', '.join(FEATURE_VISUALS)}, not --visual "
                                f"{self.visual}")
        self._check_video(terms)
        self._check_textual(terms)
        self._check_term_options(terms)
        self._check_ranges()
        if self.batch_size < 3 and any(t == "perceptual" for t, _ in terms):
            raise BenchboxError("the perceptual loss needs a batch size of at least 3")

    def _check_video(self, terms: tuple[tuple[str, float], ...]) -> None:
        """``--video-captions`` exactly with ``--dataset msvd``; ``--vectors`` only with ``--visual attention``,
        whose projection is learnt through a term that reads the visual side."""
        if self.dataset == VIDEO_DATASET and not self.video_captions:
            raise BenchboxError(f"--dataset {VIDEO_DATASET} needs --video-captions DIR (AllVideoDescriptions.txt and "
                                "the split lists train.txt, dev.txt)")
        for flag, value in (("--video-captions", self.video_captions), ("--max-descriptions", self.max_descriptions)):
            if value is not None and self.dataset != VIDEO_DATASET:
                raise BenchboxError(f"{flag} is only read with --dataset {VIDEO_DATASET}, not --dataset {self.dataset}")
        if self.max_descriptions is not None and self.max_descriptions < PER_IMAGE:
            raise BenchboxError(f"--max-descriptions must be at least {PER_IMAGE} (every clip keeps five or more), "
                                f"not {self.max_descriptions}")
        if self.word_vectors and self.visual != "attention":
            raise BenchboxError(f"--vectors drives --visual attention only, not --visual {self.visual}")
        for flag, value, choices, visual in (("--frame", self.frame, FRAMES, "frame"),
                                             ("--attention-query", self.attention_query, ATTENTION_QUERIES, "attention")):
            if value != choices[0] and self.visual != visual:
                raise BenchboxError(f"{flag} {value} is only read with --visual {visual}, not --visual {self.visual}")
        if self.visual == "attention" and not any(t in VISUAL_TERMS for t, _ in terms):
            raise BenchboxError(f"--visual attention learns its projection through a term that reads the visual side "
                                f"({', '.join(VISUAL_TERMS)}); --loss {self.loss} has none")

    def _check_textual(self, terms: tuple[tuple[str, float], ...]) -> None:
        """``--text-corpus`` given exactly when the ``textual`` term is, on batches of ≥ 2; alone, with ``--visual
        cluster`` (no visual side is trained; snapshots are selected on the dev captions alone)."""
        if self.needs_text and not self.text_corpus:
            raise BenchboxError("the textual term needs --text-corpus FILE (one sentence per line, a blank line "
                                "between documents)")
        if self.text_corpus and not self.needs_text:
            raise BenchboxError(f"--text-corpus is only used by the textual term; --loss {self.loss} has none "
                                "(add it with a weight, e.g. --loss bordes-c,textual=0.5)")
        if self.text_only and self.visual != "cluster":
            raise BenchboxError(f"--loss {self.loss} trains the sentence encoder on --text-corpus alone, with no "
                                f"visual side: pass --visual cluster, not --visual {self.visual}")
        if self.needs_text and self.batch_size < 2:
            raise BenchboxError("the textual term needs a batch size of at least 2 (a sentence's neighbours are "
                                "found among the others of its batch)")

    def _check_term_options(self, terms: tuple[tuple[str, float], ...]) -> None:
        """``--cluster-reduction`` and ``--ranking-anchors`` only with the term they change."""
        if self.cluster_reduction != CLUSTER_REDUCTIONS[0] and not any(t == "cluster" for t, _ in terms):
            raise BenchboxError(f"--cluster-reduction {self.cluster_reduction} is only read with a cluster term; "
                                f"--loss {self.loss} has none")
        if self.ranking_anchors is not None and not any(t in RANKING_TERMS for t, _ in terms):
            raise BenchboxError(f"--ranking-anchors is only read with a ranking term ({', '.join(RANKING_TERMS)}); "
                                f"--loss {self.loss} has none")

    def _check_ranges(self) -> None:
        """The weights of the API's grounding terms finite and ≥ 0 (the declared options are checked by
        :func:`check_declared`), and ``lr_min`` ≤ the resolved ``lr_max``: a learning rate of inf or NaN trains
        to NaN weights."""
        for key in ("cluster_weight", "perceptual_weight"):
            check_number(f"--{key.replace('_', '-')}", getattr(self, key), low=0)
        if self.lr_min > self.resolved_lr_max:
            raise BenchboxError(f"--lr-min ({self.lr_min:g}) must not exceed --lr-max ({self.resolved_lr_max:g})")

    @property
    def architecture(self) -> tuple[str, str]:
        return ARCHITECTURES[self.encoder]

    @property
    def loss_terms(self) -> tuple[tuple[str, float], ...]:
        """``--loss`` as (term, weight) pairs, in the order they are summed (see the module docstring)."""
        return parse_loss(self.loss, self.visual, cluster_weight=self.cluster_weight,
                          perceptual_weight=self.perceptual_weight)

    @property
    def resolved_margin(self) -> float:
        """The margin of the ranking term(s): ``--margin``, else a named preset's own (:data:`PRESET_MARGIN`:
        0.5 for ``projection``), else 0.05 for ``order`` and 0.2 otherwise."""
        if self.margin is not None:
            return self.margin
        named = named_parts(self.loss)
        preset = [PRESET_MARGIN[p] for p in PRESET_MARGIN if p in named]
        if preset:
            return preset[0]
        return DEFAULT_MARGIN["order"] if any(t == "order" for t, _ in self.loss_terms) else DEFAULT_MARGIN["hinge-sum"]

    @property
    def resolved_ranking_anchors(self) -> str:
        """The anchors of the ranking term: ``--ranking-anchors``, else a named preset's own
        (:data:`PRESET_ANCHORS`: ``caption`` for ``projection``), else ``both``."""
        if self.ranking_anchors is not None:
            return self.ranking_anchors
        named = named_parts(self.loss)
        return next((PRESET_ANCHORS[p] for p in PRESET_ANCHORS if p in named), RANKING_ANCHORS[0])

    @property
    def resolved_lr_max(self) -> float:
        return LR_MAX[self.dataset] if self.lr_max is None else self.lr_max

    @property
    def needs_partner(self) -> bool:
        """Whether each minibatch row needs a second caption of its image."""
        if self.text_only:
            return False
        return self.visual == "cluster" or any(t == "cluster" for t, _ in self.loss_terms)

    @property
    def text_only(self) -> bool:
        """Whether the objective is the textual term alone: every step is a text batch, none a caption batch."""
        return all(t == "textual" for t, _ in self.loss_terms)

    @property
    def needs_text(self) -> bool:
        """Whether the objective has the textual term (each step then also trains on a text batch)."""
        return any(t == "textual" for t, _ in self.loss_terms)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["eval_semantic"] = list(self.eval_semantic)
        out["resolved"] = {"margin": self.resolved_margin, "lr_max": self.resolved_lr_max,
                           "loss_terms": {t: w for t, w in self.loss_terms}}
        if any(t == "cluster" for t, _ in self.loss_terms):
            out["resolved"]["cluster_margin"] = self.cluster_margin
        if any(t in RANKING_TERMS for t, _ in self.loss_terms):
            out["resolved"]["ranking_anchors"] = self.resolved_ranking_anchors
        if self.needs_text:
            from benchbox.training.losses import TEXTUAL_TEMPERATURE  # torch: not imported with the CLI

            out["resolved"]["textual_temperature"] = TEXTUAL_TEMPERATURE
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> TrainConfig:
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in raw.items() if k in names}
        values["eval_semantic"] = tuple(values.get("eval_semantic") or ())
        # runs recorded before --frame and --attention-query existed took the middle frame and the mean query, and
        # before --max-descriptions a clip's first five descriptions
        values.setdefault("max_descriptions", PER_IMAGE if values.get("dataset") == VIDEO_DATASET else None)
        values.setdefault("frame", "middle" if values.get("visual") == "frame" else FRAMES[0])
        values.setdefault("attention_query", "mean" if values.get("visual") == "attention" else ATTENTION_QUERIES[0])
        # and before --cluster-reduction and --ranking-anchors, a summed cluster loss and a two-sided projection
        loss = values.get("loss", "hinge-sum")
        terms = dict(parse_loss(loss, values.get("visual", "features")))
        values.setdefault("cluster_reduction", "sum" if "cluster" in terms else CLUSTER_REDUCTIONS[0])
        values.setdefault("ranking_anchors", "both" if named_parts(loss) & set(PRESET_ANCHORS) else None)
        return cls(**values)

    def check_resume(self, stored: TrainConfig) -> TrainConfig:
        """The stored configuration with the allowed changes; an error naming any other difference."""
        differ = [f.name for f in fields(self) if f.name not in RESUMABLE_CHANGES | KEPT_ON_RESUME
                  and getattr(self, f.name) != getattr(stored, f.name)]
        if differ:
            detail = ", ".join(f"{k}: run has {getattr(stored, k)!r}, command gives {getattr(self, k)!r}" for k in differ)
            raise BenchboxError(f"--resume needs the same training options as the interrupted run ({detail})")
        return replace(stored, **{k: getattr(self, k) for k in RESUMABLE_CHANGES})


def named_parts(spec: str) -> set[str]:
    """The names in a ``--loss`` value, weighted or not (a single name, presets, terms)."""
    return {part.partition("=")[0].strip() for part in spec.split(",")}


def parse_loss(
    spec: str, visual: str, *, cluster_weight: float = 1.0, perceptual_weight: float = 1.0
) -> tuple[tuple[str, float], ...]:
    """(term, weight) pairs of a ``--loss`` value: a single name, a preset or ``TERM=WEIGHT,...``."""
    if spec in LOSS_PRESETS:
        return LOSS_PRESETS[spec]
    if spec == "cluster":
        return (("cluster", 1.0),) if visual == "cluster" else (("hinge-sum", 1.0), ("cluster", cluster_weight))
    if spec == "perceptual":
        return (("hinge-sum", 1.0), ("perceptual", perceptual_weight))
    if spec in LOSSES:
        return ((spec, 1.0),)
    usage = (f"--loss takes one of {', '.join(LOSSES)}, a preset ({', '.join(LOSS_PRESETS)}) or weighted terms "
             f"TERM=WEIGHT,... (e.g. cluster=1,perceptual=0.1,hinge-sum=1, or bordes-c,textual=0.5)")
    if "=" not in spec:
        raise BenchboxError(f"{usage}; not {spec!r}")
    terms: dict[str, float] = {}
    for part in spec.split(","):
        name, sep, raw = (x.strip() for x in part.partition("="))
        if not sep and name in LOSS_PRESETS:
            pairs = LOSS_PRESETS[name]
        elif sep and name in TERMS:
            pairs = ((name, _weight(name, raw)),)
        else:
            raise BenchboxError(f"{usage}; {part.strip()!r} is not TERM=WEIGHT with TERM in {', '.join(TERMS)}, "
                                "nor a preset")
        for term, weight in pairs:
            if term in terms:
                raise BenchboxError(f"--loss names {term!r} twice")
            terms[term] = weight
    ranking = [t for t in terms if t in RANKING_TERMS]
    if len(ranking) > 1:
        raise BenchboxError(f"--loss combines {' and '.join(ranking)}: use one ranking term")
    return tuple(terms.items())


def _weight(name: str, raw: str) -> float:
    """The weight of ``TERM=WEIGHT``: a positive finite number."""
    try:
        weight = float(raw)
    except ValueError:
        raise BenchboxError(f"--loss {name}: the weight {raw!r} is not a number") from None
    if not math.isfinite(weight) or weight <= 0:
        raise BenchboxError(f"--loss {name}: the weight must be a positive number, not {raw!r}")
    return weight
