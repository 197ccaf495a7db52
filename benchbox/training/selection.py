"""Dev scores of snapshots, for choosing the ensemble (Merkx & Frank 2019: the two snapshots with the best
dev retrieval, mean R@10 of image→caption and caption→image).

With image or random-anchor vectors the score is that retrieval (``benchbox.tasks.retrieval_metrics``'
``retrieval_metrics``). A model trained with ``--visual cluster`` has no image branch; its dev score is
caption→cluster retrieval: every dev caption ranks the N dev images, each represented by the normalised mean
of its captions' embeddings, leaving the query caption out of its own image's mean; R@10 of that.
"""

from __future__ import annotations

import numpy as np

from benchbox.embedding_checks import require_informative
from benchbox.encoding.protocol import ImageTextEncoder
from benchbox.training.data import SplitData


def dev_scores(encoder: ImageTextEncoder, dev: SplitData, batch_size: int = 128) -> dict[str, float]:
    """Metrics for ``dev`` (``score`` is the selection criterion, higher is better)."""
    captions = encoder.encode(dev.captions, batch_size=batch_size)
    require_informative(captions, encoder.name, "dev retrieval (snapshot selection)")
    if dev.visual is None:
        return cluster_retrieval(captions)
    from benchbox.tasks.retrieval_metrics import retrieval_metrics

    images = encoder.encode_images(dev.visual)
    metrics = retrieval_metrics(images, captions, similarity=encoder.similarity)
    out = {f"{d}_{k}": float(metrics[d][k]) for d in ("i2t", "t2i") for k in ("r1", "r5", "r10", "medr")}
    out["score"] = (out["i2t_r10"] + out["t2i_r10"]) / 2
    return out


def cluster_retrieval(captions: np.ndarray, per_image: int = 5) -> dict[str, float]:
    """Caption → image-cluster retrieval with leave-one-out centroids (cosine); recalls in %."""
    n = len(captions) // per_image
    emb = captions / np.maximum(np.linalg.norm(captions, axis=1, keepdims=True), 1e-12)
    sums = emb.reshape(n, per_image, -1).sum(axis=1)
    centroids = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    scores = emb @ centroids.T
    own = np.repeat(np.arange(n), per_image)
    loo = sums[own] - emb
    scores[np.arange(len(emb)), own] = np.einsum("ij,ij->i", emb, loo) / np.maximum(
        np.linalg.norm(loo, axis=1), 1e-12
    )
    ranks = 1 + (scores > scores[np.arange(len(emb)), own][:, None]).sum(axis=1)
    out = {f"c2c_r{k}": float(100 * np.mean(ranks <= k)) for k in (1, 5, 10)}
    out["c2c_medr"] = float(np.median(ranks))
    out["score"] = out["c2c_r10"]
    return out
