"""Bordes et al.'s M_b against M_c and M_p (issue 55), the pieces that ``tests/training/test_bordes_balance.py`` and
``benchmarks/bench_bordes_balance.py`` share: generated grounded data in Flickr8k's layout, and the measures of
where M_b = L_C + 0.1 L_P stands between M_c = L_C and M_p = L_P.

- :func:`generated_root`: items of five captions, each item a topic and six pseudo-words (four of its topic's,
  two shared by all); a caption is four of the item's words in random order; the item's visual vector is the sum
  of fixed random vectors of its six words plus noise, so items of one topic, and items sharing words, are close
  in the visual space too (what L_P transfers to the captions).
- :func:`gradient_ratio`: ‖∂L_C/∂c‖ / ‖∂(0.1 L_P)/∂c‖ at the caption embeddings c of a minibatch (M_b's weights).
- :func:`first_step_share`: of the caption encoder's parameters on which M_c's and M_p's first Adam steps go
  opposite ways, the share on which M_b's first step follows M_p. Adam's first step is lr·g/(|g| + ε), the sign
  of each parameter's gradient g; M_b's gradient is g_C + 0.1 g_P, so it follows M_p exactly where
  0.1 |g_P| > |g_C|: 0 when L_C drowns L_P (M_b is M_c), 1 when L_P drowns L_C.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

TOPICS, TOPIC_WORDS, SHARED_WORDS, DIM = 12, 8, 40, 64


def _pseudo_word(rng: np.random.Generator) -> str:
    return "".join(rng.choice(list("bcdfghklmnprstvz")) + rng.choice(list("aeiou")) for _ in range(3))


def generated_root(folder: Path, n_train: int = 300, n_dev: int = 100, seed: int = 0) -> tuple[Path, Path]:
    """A data root of generated Flickr8k-format captions (train and dev splits; test = dev) and the features
    file of its items (module docstring)."""
    from benchbox.data.image_features import save_features

    rng = np.random.default_rng(seed)
    words = list(dict.fromkeys(_pseudo_word(rng) for _ in range(10 * (TOPICS * TOPIC_WORDS + SHARED_WORDS))))
    topics = np.array(words[:TOPICS * TOPIC_WORDS]).reshape(TOPICS, TOPIC_WORDS)
    shared = words[TOPICS * TOPIC_WORDS:TOPICS * TOPIC_WORDS + SHARED_WORDS]
    vectors = {w: rng.standard_normal(DIM) for w in [*topics.ravel(), *shared]}
    lines, features, lists = [], [], {}
    for split, n in (("train", n_train), ("dev", n_dev)):
        lists[split] = [f"{split}{i}.jpg" for i in range(n)]
        for name in lists[split]:
            item = [*rng.choice(topics[rng.integers(TOPICS)], 4, replace=False), *rng.choice(shared, 2, replace=False)]
            features.append(sum(vectors[w] for w in item) + 0.5 * rng.standard_normal(DIM))
            lines += [f"{name}#{k}\ta {' '.join(rng.permutation(item)[:4])} .\n" for k in range(5)]
    flickr = folder / "flickr8k"
    flickr.mkdir(parents=True)
    (flickr / "Flickr8k.token.txt").write_text("".join(lines))
    for split, listed in (("train", "train"), ("dev", "dev"), ("test", "dev")):
        (flickr / f"Flickr_8k.{split}Images.txt").write_text("".join(f"{i}\n" for i in lists[listed]))
    save_features(folder / "features.npz", [*lists["train"], *lists["dev"]], np.stack(features).astype(np.float32))
    return folder, folder / "features.npz"


def embed(net, captions: list[str]) -> torch.Tensor:
    """The caption encoder's embeddings of ``captions`` (no gradient)."""
    with torch.no_grad():
        return net.caption(*net.vocab.batch(captions))


def caption_weights(net) -> torch.Tensor:
    """Every parameter of the caption encoder, flattened into one vector."""
    return torch.cat([p.detach().flatten() for p in net.caption.parameters()])


def _terms(trainer, batch, captions: torch.Tensor, partners: torch.Tensor) -> dict[str, torch.Tensor]:
    from benchbox.training.losses import weighted_terms

    visual = torch.from_numpy(trainer.data.train.visual[batch.images])
    return weighted_terms(trainer.config, captions, None, partners, visual)


def gradient_ratio(trainer, batch) -> float:
    """‖∂L_C/∂c‖ / ‖∂(0.1 L_P)/∂c‖ of a ``bordes-b`` trainer on ``batch``, at the caption embeddings c (anchors)
    and its current weights."""
    captions = trainer.data.train.captions
    anchors = embed(trainer.net, [captions[i] for i in batch.captions]).requires_grad_()
    terms = _terms(trainer, batch, anchors, embed(trainer.net, [captions[i] for i in batch.partners]))
    cluster, perceptual = (torch.autograd.grad(terms[t], anchors)[0].norm().item() for t in ("cluster", "perceptual"))
    return cluster / perceptual


def first_step_share(trainer, batch) -> float:
    """Of the caption encoder's parameters on which the gradients of L_C and 0.1 L_P at a ``bordes-b`` trainer's
    weights have opposite signs on ``batch``, the share on which M_b's first Adam step follows L_P's."""
    net, captions = trainer.net, trainer.data.train.captions
    params = list(net.caption.parameters())
    anchors = net.caption(*net.vocab.batch([captions[i] for i in batch.captions]))
    partners = net.caption(*net.vocab.batch([captions[i] for i in batch.partners]))
    terms = _terms(trainer, batch, anchors, partners)
    cluster = torch.cat([g.flatten() for g in torch.autograd.grad(terms["cluster"], params, retain_graph=True)])
    perceptual = torch.cat([g.flatten() for g in torch.autograd.grad(terms["perceptual"], params)])
    contested = cluster * perceptual < 0
    follows_p = perceptual.abs() > cluster.abs()
    return (follows_p & contested).sum().item() / max(1, contested.sum().item())
