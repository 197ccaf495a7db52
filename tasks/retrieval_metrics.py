"""Image–caption retrieval metrics: R@1/5/10, median and mean rank in both directions (docs/protocols.md#retrieval).

Definitions are those of VSE++ ``evaluation.py`` (``i2t``/``t2i``; Faghri et al. 2018), which SentEval's
ImageCaptionRetrieval shares. N images, 5N captions, caption k of image i at row 5i + k:
- image → text: image i ranks all 5N captions; its rank is the best (smallest) rank of its 5 captions;
- text → image: caption 5i + k ranks the N images; its rank is that of image i;
- R@K = 100 · share of queries with 1-based rank ≤ K; mean rank = mean of 1-based ranks; rsum = sum of the
  six recalls; with ``folds`` > 1 (MSCOCO 1k: five consecutive 1000-image folds) every metric, median rank
  included, is computed per fold and averaged (VSE++ ``evalrank(fold5=True)``).
- Median rank, ``medr="vsepp"`` (default): ⌊median of 0-based ranks⌋ + 1 = ⌊median of 1-based ranks⌋, as
  VSE++ prints it; ``medr="median"``: the plain median of 1-based ranks (x.5 when the two middle ranks differ).

Similarity: ``cosine`` (rows L2-normalised, then inner products; VSE++ takes inner products of embeddings its
model already normalised; a zero vector scores 0 with everything), ``dot`` (inner products as given), or
``order``, the order-violation score of Vendrov et al. (2016), S(i, c) = −‖max(0, c − i)‖² (captions above
images in the reversed product order; VSE++'s ``order_sim`` is −‖max(0, c − i)‖, a monotone transform with the
same ranks). ``order`` has no matrix-product form: it costs N·5N·d element operations (minutes on a CPU for
MSCOCO 5k).

Computation: a rank is 1 + the number of candidates scoring strictly higher than the target (the own item's
score; for image → text the best of the five own captions' scores). The score matrix is computed in blocks of
image rows ([B, 5N] of at most ``BLOCK_ELEMENTS``; numpy/OpenBLAS on CPU, torch on GPU); each block adds its
counts to both directions, so no query is looped over and the full matrix never exists (MSCOCO 5k, 2048-d:
1.3–1.4x the time of the bare 5000 × 25000 product, ~400 MB beyond the inputs; benchmarks/bench_retrieval.py).
Target scores are computed separately (row-wise) and the own items are excluded from the counts, so a target
never competes with itself (block and row-wise products may round differently in the last bit).
Ties: ``ties="expected"`` (default) scores each query at its expectation under random tie breaking
(McSherry & Najork, ECIR 2008): with ``a`` competitors strictly above the target, ``t`` competitors tied with it
and ``m`` own items at the target's score (image → text: own captions tied with the best one; else 1), the
target's position among the ``t + m`` tied items is the first of ``m`` places drawn without replacement, so
P(rank ≤ K) = 1 − C(t + m − (K − a), m) / C(t + m, m) for a < K ≤ a + t + 1, and the expected rank is
a + (t + m + 1) / (m + 1). R@K is the mean of P(rank ≤ K) over queries and the per-query ``ranks`` are the
expected ranks (medr and meanr are taken of them). With no ties this is exactly VSE++'s ``i2t``/``t2i``; with
many ties it is what VSE++'s ``argsort``, which leaves tied order to the sort, gives on average, never
inflated. ``ties="optimistic"`` does not count tied candidates (a constant encoder would rank every target
first: R@1 = 100; so would NaN scores, since no comparison with NaN is "greater"), ``ties="pessimistic"``
counts them (it then ranks last); both are recorded options that bound the expected value. The number of
queries whose target ties with a competitor is returned as ``tied``. NaN/infinite values raise :class:`BenchboxError` here (:func:`validate_embeddings`); an
encoder whose caption embeddings are all identical is refused before ranking by the retrieval task and by
snapshot selection (:func:`benchbox.embedding_checks.require_informative`, naming the encoder), so it never
scores; this function itself keeps the tie rule as stated (tested on constant scores).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.data.captions import PER_IMAGE
from benchbox.device import resolve_device
from benchbox.errors import BenchboxError

torch = lazy_module("torch")  # imported at first use: the command line starts without it

RECALL_KS = (1, 5, 10)
SIMILARITIES = ("cosine", "dot", "order")
MEDR_CONVENTIONS = ("vsepp", "median")
TIE_CONVENTIONS = ("expected", "optimistic", "pessimistic")
DIRECTIONS = ("i2t", "t2i")
#: score-block size in elements (float32: 64 MiB); the order similarity's [B, c, d] blocks use the same budget
BLOCK_ELEMENTS = 1 << 24
#: on CPU, inner products and counting go through numpy (OpenBLAS matmul ~1.6x, comparison + uint8 sums ~5x
#: faster than torch's on this project's AMD machines; benchmarks/bench_retrieval.py); False: torch everywhere
NUMPY_ON_CPU = True


def _as_matrix(x: Any, name: str) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        tensor = x.detach()
    else:
        array = np.asarray(x)
        if array.dtype.kind not in "fiu":
            raise BenchboxError(f"{name} must hold numbers, got dtype {array.dtype}")
        with warnings.catch_warnings():  # read-only arrays (memory maps): the tensor is never written to
            warnings.simplefilter("ignore", UserWarning)
            tensor = torch.from_numpy(array)
    if tensor.ndim != 2:
        raise BenchboxError(f"{name} must be a 2-d array [rows, dim], got shape {tuple(tensor.shape)}")
    if tensor.is_complex() or tensor.dtype == torch.bool:
        raise BenchboxError(f"{name} must hold real numbers, got dtype {tensor.dtype}")
    if tensor.dtype != torch.float64:
        tensor = tensor.to(torch.float32)
    return tensor


def validate_embeddings(image_emb: Any, caption_emb: Any, folds: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Float tensors [N, d] and [5N, d]; shapes, finiteness and fold sizes checked with clear errors."""
    images, captions = _as_matrix(image_emb, "image_emb"), _as_matrix(caption_emb, "caption_emb")
    n = images.shape[0]
    if n == 0:
        raise BenchboxError("image_emb is empty: retrieval needs at least one image")
    if captions.shape[0] != PER_IMAGE * n:
        raise BenchboxError(
            f"caption_emb has {captions.shape[0]} rows for {n} images; expected {PER_IMAGE} captions per image "
            f"({PER_IMAGE * n} rows, caption k of image i at row {PER_IMAGE}i + k)"
        )
    if images.shape[1] != captions.shape[1]:
        raise BenchboxError(
            f"image and caption embeddings differ in dimension: {images.shape[1]} vs {captions.shape[1]}"
        )
    if images.shape[1] == 0:
        raise BenchboxError("embeddings have dimension 0")
    for name, tensor in (("image_emb", images), ("caption_emb", captions)):
        # a NaN or infinity makes the sum non-finite; only then (or on overflow) is the element-wise check needed
        if not bool(torch.isfinite(tensor.sum())) and not bool(torch.isfinite(tensor).all()):
            raise BenchboxError(f"{name} contains NaN or infinite values: check the encoder's output")
    if not isinstance(folds, int) or folds < 1 or n % folds:
        raise BenchboxError(f"folds must be a positive integer dividing the number of images ({n}), got {folds!r}")
    if images.dtype != captions.dtype:
        images, captions = images.to(torch.float64), captions.to(torch.float64)
    return images, captions


def _scores(images: torch.Tensor, captions: torch.Tensor, similarity: str, out: torch.Tensor) -> None:
    """Write the [B, C] scores of a block of images against captions into ``out`` (cosine: inputs normalised)."""
    if similarity != "order":
        if NUMPY_ON_CPU and out.device.type == "cpu":
            np.matmul(images.numpy(), captions.numpy().T, out=out.numpy())
        else:
            torch.mm(images, captions.T, out=out)
        return
    step = max(1, BLOCK_ELEMENTS // max(1, images.shape[0] * images.shape[1]))
    for start in range(0, captions.shape[0], step):
        violation = (captions[None, start : start + step] - images[:, None]).clamp_(min=0)
        out[:, start : start + step] = -violation.square_().sum(dim=2)


def _count_above(
    block: torch.Tensor, threshold: torch.Tensor, dim: int, strict: bool, mask: torch.Tensor
) -> torch.Tensor:
    """How many entries along ``dim`` exceed (``strict``) or reach ``threshold``; ``mask`` is a bool scratch
    buffer of the block's shape."""
    if NUMPY_ON_CPU and block.device.type == "cpu":
        compare = np.greater if strict else np.greater_equal
        compare(block.numpy(), threshold.numpy(), out=mask.numpy())
        return torch.from_numpy(mask.numpy().view(np.uint8).sum(axis=dim, dtype=np.int64))
    compare = torch.gt if strict else torch.ge
    return compare(block, threshold, out=mask).sum(dim=dim)


def _own_scores(images: torch.Tensor, captions: torch.Tensor, similarity: str) -> torch.Tensor:
    """[5N] score of every caption with its own image (row-wise, in the embeddings' dtype)."""
    n, d = images.shape
    out = torch.empty(n, PER_IMAGE, dtype=images.dtype, device=images.device)
    step = max(1, BLOCK_ELEMENTS // (PER_IMAGE * d))
    for start in range(0, n, step):
        ims = images[start : start + step]
        caps = captions[PER_IMAGE * start : PER_IMAGE * (start + len(ims))].view(-1, PER_IMAGE, d)
        if similarity == "order":
            out[start : start + len(ims)] = -(caps - ims[:, None]).clamp_(min=0).square_().sum(dim=2)
        else:
            out[start : start + len(ims)] = torch.bmm(caps, ims[:, :, None])[..., 0]
    return out.view(-1)


class QueryCounts:
    """Per query of one direction: competitors strictly above the target (``above``), competitors tied with it
    (``tied``) and own items at the target's score (``own``; 1 but for image → text)."""

    def __init__(self, above: np.ndarray, tied: np.ndarray, own: np.ndarray) -> None:
        self.above, self.tied, self.own = above, tied, own

    def ranks(self, ties: str) -> np.ndarray:
        """1-based ranks under the tie convention: int64, except where an expected rank is fractional (float)."""
        if ties == "optimistic":
            return self.above + 1
        if ties == "pessimistic":
            return self.above + self.tied + 1
        expected = self.above + (self.tied + self.own + 1) / (self.own + 1)
        return expected.astype(np.int64) if np.all(expected == np.floor(expected)) else expected

    def hit_probability(self, k: int, ties: str) -> np.ndarray:
        """P(rank ≤ k) per query: 0 or 1 under ``optimistic``/``pessimistic``, the module docstring's formula
        under ``expected``."""
        if ties != "expected":
            return (self.ranks(ties) <= k).astype(np.float64)
        places = (k - self.above).astype(np.float64)  # tied places the target may take and still be within k
        total = (self.tied + self.own).astype(np.float64)
        miss = np.ones_like(places)
        for i in range(int(self.own.max(initial=1))):  # C(total − places, own) / C(total, own), factor by factor
            factor = np.clip(total - places - i, 0, None) / np.maximum(total - i, 1)
            miss *= np.where(i < self.own, factor, 1.0)
        return np.where(places <= 0, 0.0, np.where(places > self.tied, 1.0, 1.0 - miss))


def query_ranks(
    images: torch.Tensor, captions: torch.Tensor, *, similarity: str, block_rows: int | None = None
) -> dict[str, QueryCounts]:
    """The counts behind the ranks of one retrieval problem: ``{"i2t": [N] queries, "t2i": [5N] queries}``."""
    n, n_caps = images.shape[0], captions.shape[0]
    device = images.device
    own = _own_scores(images, captions, similarity)
    best_own = own.view(n, PER_IMAGE).amax(dim=1)
    counts = {
        d: {rel: torch.zeros(size, dtype=torch.int64, device=device) for rel in ("gt", "ge")}
        for d, size in (("i2t", n), ("t2i", n_caps))
    }
    rows = min(n, block_rows or max(1, BLOCK_ELEMENTS // n_caps))
    buffer = torch.empty(rows, n_caps, dtype=images.dtype, device=device)
    scratch = torch.empty(rows, n_caps, dtype=torch.bool, device=device)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        block, mask = buffer[: stop - start], scratch[: stop - start]
        _scores(images[start:stop], captions, similarity, block)
        local = torch.arange(stop - start, device=device).repeat_interleave(PER_IMAGE)
        block[local, torch.arange(PER_IMAGE * start, PER_IMAGE * stop, device=device)] = -math.inf
        for direction, threshold, dim, index in (
            ("i2t", best_own[start:stop, None], 1, slice(start, stop)),
            ("t2i", own[None, :], 0, slice(None)),
        ):
            for relation, strict in (("gt", True), ("ge", False)):
                counts[direction][relation][index] += _count_above(block, threshold, dim, strict, mask).to(device)
    own_at_best = (own.view(n, PER_IMAGE) == best_own[:, None]).sum(dim=1)
    own_tied = {"i2t": own_at_best.cpu().numpy(), "t2i": np.ones(n_caps, dtype=np.int64)}
    return {direction: QueryCounts(c["gt"].cpu().numpy(), (c["ge"] - c["gt"]).cpu().numpy(), own_tied[direction])
            for direction, c in counts.items()}


def median_rank(ranks: np.ndarray, convention: str) -> float:
    """Median of 1-based ranks: ``vsepp`` ⌊median⌋ (VSE++'s ⌊median of 0-based⌋ + 1) or the plain ``median``."""
    median = float(np.median(ranks))
    return float(math.floor(median)) if convention == "vsepp" else median


def summarise(ranks: np.ndarray, hits: dict[int, np.ndarray], medr: str) -> dict[str, float]:
    """R@1/5/10 (percent: the mean of the queries' ``hits`` probabilities), medr and meanr of one direction of
    one fold."""
    out = {f"r{k}": 100.0 * float(np.mean(hits[k])) for k in RECALL_KS}
    out["medr"] = median_rank(ranks, medr)
    out["meanr"] = float(np.mean(ranks))
    return out


def retrieval_metrics(
    image_emb: Any,
    caption_emb: Any,
    *,
    folds: int = 1,
    similarity: str = "cosine",
    medr: str = "vsepp",
    ties: str = "expected",
    device: str | torch.device | None = "auto",
    block_rows: int | None = None,
) -> dict[str, Any]:
    """Retrieval metrics of image embeddings [N, d] against caption embeddings [5N, d] (numpy or torch).

    Returns ``{"i2t": {...}, "t2i": {...}, "rsum": float}``; each direction holds ``r1``, ``r5``, ``r10``
    (percent), ``medr``, ``meanr`` (means over folds), ``ranks`` (the 1-based rank of every query under the tie
    convention, float, in query order: image i, caption row j), ``hits`` (``{k: P(rank ≤ k)}`` per query),
    ``fold`` (fold index of every query) and ``tied`` (queries whose target ties with a competitor). ``folds`` splits images (and their captions) into that many consecutive folds;
    ``device``: ``"auto"`` (CUDA when available), ``"cpu"`` or ``"cuda"``; ``block_rows``: image rows per score
    block (default: as many as fit in ``BLOCK_ELEMENTS``).
    """
    if similarity not in SIMILARITIES:
        raise BenchboxError(f"unknown similarity {similarity!r}: use one of {', '.join(SIMILARITIES)}")
    if medr not in MEDR_CONVENTIONS:
        raise BenchboxError(f"unknown median-rank convention {medr!r}: use one of {', '.join(MEDR_CONVENTIONS)}")
    if ties not in TIE_CONVENTIONS:
        raise BenchboxError(f"unknown tie convention {ties!r}: use one of {', '.join(TIE_CONVENTIONS)}")
    images, captions = validate_embeddings(image_emb, caption_emb, folds)
    target = resolve_device(device)
    images, captions = images.to(target), captions.to(target)
    if similarity == "cosine":
        images = torch.nn.functional.normalize(images, dim=1)
        captions = torch.nn.functional.normalize(captions, dim=1)
    size = images.shape[0] // folds
    per_fold: dict[str, list[QueryCounts]] = {d: [] for d in DIRECTIONS}
    with torch.no_grad():
        for f in range(folds):
            fold_counts = query_ranks(
                images[f * size : (f + 1) * size],
                captions[PER_IMAGE * f * size : PER_IMAGE * (f + 1) * size],
                similarity=similarity, block_rows=block_rows,
            )
            for direction, counts in fold_counts.items():
                per_fold[direction].append(counts)
    result: dict[str, Any] = {}
    for direction in DIRECTIONS:
        ranks = [c.ranks(ties) for c in per_fold[direction]]
        hits = [{k: c.hit_probability(k, ties) for k in RECALL_KS} for c in per_fold[direction]]
        fold_metrics = [summarise(r, h, medr) for r, h in zip(ranks, hits)]
        entry: dict[str, Any] = {key: float(np.mean([m[key] for m in fold_metrics])) for key in fold_metrics[0]}
        entry["ranks"] = np.concatenate(ranks)
        entry["hits"] = {k: np.concatenate([h[k] for h in hits]) for k in RECALL_KS}
        entry["fold"] = np.repeat(np.arange(folds), [len(r) for r in ranks])
        entry["tied"] = int(sum((c.tied > 0).sum() for c in per_fold[direction]))
        result[direction] = entry
    result["rsum"] = sum(result[d][f"r{k}"] for d in DIRECTIONS for k in RECALL_KS)
    return result
