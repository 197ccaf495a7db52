"""The training objective of a char-RNN run: the weighted terms of ``--loss`` on one (global) minibatch.

Bordes et al. (2019) train M(α_T, α_P, α_C) = α_T L_T + α_P L_P + α_C L_C; here the terms are those of
:mod:`benchbox.training.losses` (see :mod:`benchbox.training.config` for the ``--loss`` syntax and presets):
a ranking term toward the visual side (``hinge-sum``, ``hinge-max``, ``order``; the projection baseline P),
``cluster`` (L_C, on two captions per image) and ``perceptual`` (L_P, against the visual vectors). With
``--visual cluster`` and a single hinge name, the ranking is against a partner caption of the same image.
Each term is returned already weighted, so the terms sum to the loss that is minimised and logged.
"""

from __future__ import annotations

import torch

from benchbox.training import losses
from benchbox.training.config import TrainConfig


def weighted_terms(
    config: TrainConfig,
    captions: torch.Tensor,
    images: torch.Tensor | None,
    partners: torch.Tensor | None,
    visual: torch.Tensor | None,
) -> dict[str, torch.Tensor]:
    """{term: weight × term loss} for ``config.loss``, in summation order."""
    margin = config.resolved_margin
    out: dict[str, torch.Tensor] = {}
    for term, weight in config.loss_terms:
        if term == "cluster":
            assert partners is not None
            value = losses.cluster_loss(captions, partners, config.cluster_margin)
        elif term == "perceptual":
            assert visual is not None
            value = losses.perceptual_loss(captions, visual)
        else:
            target = partners if config.visual == "cluster" else images
            assert target is not None
            if term == "order":
                value = losses.hinge_sum(losses.order_similarity(captions, target), margin)
            else:
                scores = losses.cosine_similarity(captions, target)
                value = (losses.hinge_max if term == "hinge-max" else losses.hinge_sum)(scores, margin)
        out[term] = value if weight == 1.0 else weight * value
    return out
