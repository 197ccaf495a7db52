"""Losses for learning a joint caption–image space. All take L2-normalised embeddings, row i of one side
matching row i of the other, and return a scalar: the ranking terms summed over the batch (as Merkx's and
VSE++'s code do), the cluster loss its mean or sum, the perceptual loss one correlation.

- ``hinge_sum``: symmetric hinge with margin α (0.2), summed over every mismatched pair of the minibatch in
  both directions (Merkx & Frank 2019; Karpathy & Fei-Fei 2015 style "sum of violations"); with
  ``anchors="caption"`` the captions' direction only, each caption ranked against the other images (Bordes et
  al. 2019's projection baseline P, their eq. 3: a sentence against the other videos).
- ``hinge_max``: the same with only the hardest negative per query (VSE++, Faghri et al. 2018).
- ``order_similarity``: −E(v, c) with the order-violation penalty E(x, y) = ‖max(0, y − x)‖² of
  Vendrov et al. (2016), the image x being below the (more general) caption y in the partial order; used as
  the similarity inside the hinge (their margin: 0.05) on non-negative embeddings.
- ``cluster_loss``: Bordes et al. (2019)'s cluster loss — captions of the same image closer (cosine) than
  captions of different images by a margin γ_C, hinged over the in-batch negatives; every caption of a pair
  serves as the anchor once, so a batch of B items has 2B(B − 1) hinge terms. Their eq. 1 leaves the
  normalisation open; by default L_C is the mean of those terms (``reduction="mean"``), on the scale of L_P (a
  correlation in [−1, 1]), so that M_b = L_C + 0.1 L_P weighs L_P as their Table 2 shows it does (M_b between
  M_c and M_p); their sum (``"sum"``, runs before) makes the gradient of L_C about 2B(B − 1) times larger, and
  M_b in effect M_c (docs/protocols.md#bordes-models).
- ``perceptual_loss``: Bordes et al. (2019)'s L_P = −Pearson correlation, over the caption pairs of the batch,
  between the cosine of the two captions and the cosine of their images' visual features.
- ``textual_loss``: Bordes et al. (2019)'s textual objective L_T, here QuickThought's (Logeswaran & Lee 2018;
  their code, lajanugen/S2V ``s2v_model.py``): in a batch of consecutive sentences of an ordered corpus
  (:mod:`benchbox.training.text_corpus`), each sentence classifies its true neighbours (previous and next
  sentence of its document) among the other sentences of the batch — a softmax over the batch of its scores
  against the others, cross-entropy against the uniform distribution on its neighbours. Differences from
  QuickThought, all because the encoder is Bordes et al.'s single sentence encoder shared with the grounded
  terms ("the sentence encoder is shared"), not QuickThought's pair f, g: the score is the cosine of the
  (L2-normalised) embeddings divided by a temperature :data:`TEXTUAL_TEMPERATURE` (cosines alone, in [−1, 1],
  give a nearly flat softmax); a sentence's own score is excluded (with f = g it is always the largest;
  QuickThought sets it to 0); and the loss is summed over the batch's sentences like the ranking terms here
  (QuickThought averages: α_T absorbs the factor B). A sentence with no neighbour in its batch (its document
  ends at the batch's edge) does not count.

The dispatch, :func:`weighted_terms`: the training objective of a char-RNN run, the weighted terms of ``--loss``
on one (global) minibatch. Bordes et al. (2019) train M(α_T, α_P, α_C) = α_T L_T + α_P L_P + α_C L_C; here the
terms are the losses above (see :mod:`benchbox.training.config` for the ``--loss`` syntax and presets): a
ranking term toward the visual side (``hinge-sum``, ``hinge-max``, ``order``; the projection baseline P),
``cluster`` (L_C, on two captions per image), ``perceptual`` (L_P, against the visual vectors) and ``textual``
(L_T, on the step's batch of consecutive corpus sentences, encoded by the same caption encoder). With
``--visual cluster`` and a single hinge name, the ranking is against a partner caption of the same image.
Each term is returned already weighted, so the terms sum to the loss that is minimised and logged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from benchbox.training.config import TrainConfig

#: τ of the textual objective: its logits are cosine / τ (see ``textual_loss``; SimCSE uses 0.05)
TEXTUAL_TEMPERATURE = 0.1


def cosine_similarity(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """[B, B] similarities of normalised rows (``a[i]`` · ``b[j]``)."""
    return a @ b.t()


def order_similarity(captions: torch.Tensor, images: torch.Tensor) -> torch.Tensor:
    """[B, B]: −‖max(0, caption_i − image_j)‖² (Vendrov et al. 2016)."""
    diff = (captions[:, None, :] - images[None, :, :]).clamp(min=0)
    return -(diff * diff).sum(dim=2)


def _violations(scores: torch.Tensor, margin: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Hinge violations with matching pairs on the diagonal: (row queries, column queries), diagonal zeroed."""
    positive = scores.diag()
    off_diagonal = ~torch.eye(scores.shape[0], dtype=torch.bool, device=scores.device)
    rows = (margin - positive[:, None] + scores).clamp(min=0) * off_diagonal
    cols = (margin - positive[None, :] + scores).clamp(min=0) * off_diagonal
    return rows, cols


def hinge_sum(scores: torch.Tensor, margin: float = 0.2, *, anchors: str = "both") -> torch.Tensor:
    """Sum of all hinge violations (``scores[i, j]``: caption i vs image j), both directions, or with
    ``anchors="caption"`` the captions' only (row i: caption i against the images j ≠ i)."""
    rows, cols = _violations(scores, margin)
    return rows.sum() if anchors == "caption" else rows.sum() + cols.sum()


def hinge_max(scores: torch.Tensor, margin: float = 0.2, *, anchors: str = "both") -> torch.Tensor:
    """VSE++: the violation of the hardest negative of every query, summed; both directions, or with
    ``anchors="caption"`` the captions' only."""
    rows, cols = _violations(scores, margin)
    caption_side = rows.max(dim=1).values.sum()
    return caption_side if anchors == "caption" else caption_side + cols.max(dim=0).values.sum()


def cluster_loss(anchors: torch.Tensor, partners: torch.Tensor, margin: float = 0.2, *,
                 reduction: str = "mean") -> torch.Tensor:
    """Bordes et al.'s cluster loss on two captions per image (row i of both from image i): the mean (or with
    ``reduction="sum"`` the sum) of its 2B(B − 1) hinge terms, both captions of a pair serving as anchor."""
    total = hinge_sum(cosine_similarity(anchors, partners), margin)
    if reduction == "sum":
        return total
    n = anchors.shape[0]
    return total / max(1, 2 * n * (n - 1))


def perceptual_loss(captions: torch.Tensor, visual: torch.Tensor) -> torch.Tensor:
    """−Pearson r between caption cosines and visual-feature cosines over the pairs i < j of the batch."""
    if captions.shape[0] < 3:
        raise ValueError("the perceptual loss needs at least 3 items per batch")
    v = torch.nn.functional.normalize(visual, p=2, dim=1)
    upper = torch.triu_indices(captions.shape[0], captions.shape[0], offset=1, device=captions.device)
    text_sim = cosine_similarity(captions, captions)[upper[0], upper[1]]
    visual_sim = cosine_similarity(v, v)[upper[0], upper[1]]
    t = text_sim - text_sim.mean()
    s = visual_sim - visual_sim.mean()
    return -(t * s).sum() / (t.norm() * s.norm()).clamp(min=1e-12)


def textual_loss(sentences: torch.Tensor, neighbours: torch.Tensor) -> torch.Tensor:
    """QuickThought's neighbour classification (module docstring): ``sentences`` [B, D] normalised embeddings of
    consecutive sentences, ``neighbours`` [B, B] bool (row i: the true neighbours of sentence i in the batch)."""
    logits = cosine_similarity(sentences, sentences) / TEXTUAL_TEMPERATURE
    self_pairs = torch.eye(sentences.shape[0], dtype=torch.bool, device=sentences.device)
    log_p = torch.log_softmax(logits.masked_fill(self_pairs, float("-inf")), dim=1)
    counts = neighbours.sum(dim=1)
    has = counts > 0
    targets = neighbours[has].to(log_p.dtype) / counts[has, None]
    return -(targets * log_p[has].masked_fill(self_pairs[has], 0.0)).sum()


def needs_visual_vectors(config: TrainConfig) -> bool:
    """Whether the objective reads the raw visual vectors of the batch (the perceptual term does)."""
    return any(t == "perceptual" for t, _ in config.loss_terms)


def needs_nonnegative_embeddings(config: TrainConfig) -> bool:
    """Whether the embeddings must be non-negative (the order term's partial order, Vendrov et al. 2016)."""
    return any(t == "order" for t, _ in config.loss_terms)


def weighted_terms(
    config: TrainConfig,
    captions: torch.Tensor,
    images: torch.Tensor | None,
    partners: torch.Tensor | None,
    visual: torch.Tensor | None,
    *,
    text: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> dict[str, torch.Tensor]:
    """{term: weight × term loss} for ``config.loss``, in summation order (the module docstring); ``text``: the
    embeddings of the text batch and its neighbour mask, for the ``textual`` term."""
    margin, anchors = config.resolved_margin, config.resolved_ranking_anchors
    out: dict[str, torch.Tensor] = {}
    for term, weight in config.loss_terms:
        if term == "cluster":
            assert partners is not None
            value = cluster_loss(captions, partners, config.cluster_margin, reduction=config.cluster_reduction)
        elif term == "perceptual":
            assert visual is not None
            value = perceptual_loss(captions, visual)
        elif term == "textual":
            assert text is not None
            value = textual_loss(*text)
        else:
            target = partners if config.visual == "cluster" else images
            assert target is not None
            if term == "order":
                value = hinge_sum(order_similarity(captions, target), margin, anchors=anchors)
            else:
                scores = cosine_similarity(captions, target)
                value = (hinge_max if term == "hinge-max" else hinge_sum)(scores, margin, anchors=anchors)
        out[term] = value if weight == 1.0 else weight * value
    return out
