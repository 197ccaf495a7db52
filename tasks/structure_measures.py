"""Structural measures of a text space whose sentences are grouped by image (Bordes et al. 2019, "Incorporating
visual semantics into sentence representations within a grounded space", §5; docs/protocols.md#structure).

Captions come c per image (caption k of image i at row c·i + k, as every caption split of benchbox) and
cos is the cosine of two caption embeddings (a zero vector has cosine 0 with everything, as SentEval's NaN → 0):

- E_intra = mean of cos(s, s′) over ordered pairs of distinct captions of the same image (cluster homogeneity);
- E_inter = mean of cos(s, s′) over ordered pairs of captions of different images (cluster separation);
- ρ_vis = Pearson r, over all pairs of captions of different images, of cos(s, s′) and cos(v_s, v_s′), v_s
  the visual feature vector of the image of s (does the text space keep the geometry of the visual space).

All pairs, always, exactly — no sampling: every sum over pairs reduces to moments of small matrices, in
float64. With S_i = Σ_{s ∈ i} s (unit rows) and unit visual rows v_i:
Σ_{same image, s ≠ s′} cos = Σ_i (‖S_i‖² − Σ_{s∈i} ‖s‖²); Σ_{all} cos = ‖Σ_i S_i‖²; Σ_{all} cos² = ‖XᵀX‖²_F;
Σ_{all} cos(s, s′) cos(v_s, v_s′) = ‖SᵀV‖²_F; Σ_{all} cos(v_s, v_s′)ᵏ from VᵀV — each minus its same-image part.
The cost is O(n d² + N d D + N D²), far below the n × n similarity matrix.

Per-image items (for intervals and paired tests): intra_i = mean cos among image i's captions, inter_i = mean
cos of its captions with every caption of the other images; with c captions per image E_intra and E_inter
are exactly the means of these items, so a bootstrap over images resamples them. ρ_vis is not a mean of
per-image items: its bootstrap recomputes it on each resample of images from five image × image matrices of
pair sums (Σ cos, Σ cos², Σ cos_v, Σ cos_v², Σ cos·cos_v over the caption pairs of images i and j), built
block by block — the Σ cos² matrix from the caption × caption cosines, one block of images' rows at a time
(the n × n GEMM, never held whole) — and each resample's sums are quadratic forms wᵀMw of its draw counts w
with the diagonal (pairs within one image, and copies of one image) left out. Those blocks are float32 (on the
real Flickr8k test captions with GloVe-BOW, the replicate of the full sample agrees with the exact float64 ρ_vis
within 5e-6); every point estimate is float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchbox.errors import BenchboxError
from benchbox.stats.resampling import bootstrap_counts, percentile_interval

#: bytes of one block of the caption × caption cosines (float32) in the bootstrap of ρ_vis
BLOCK_BYTES = 64 * 2**20


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm in float64 (zero rows stay zero)."""
    x = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def _groups(n: int, per_image: int) -> int:
    if per_image < 2 or n % per_image or n < 2 * per_image:
        raise BenchboxError(f"structure measures need at least two images with {per_image} captions each "
                            f"(caption k of image i at row {per_image}·i + k); got {n} rows")
    return n // per_image


def per_image_means(captions: np.ndarray, per_image: int) -> tuple[np.ndarray, np.ndarray]:
    """(intra_i, inter_i) for every image: mean cosine within its captions, and with other images' captions."""
    x = unit_rows(captions)
    n_images = _groups(len(x), per_image)
    sums = x.reshape(n_images, per_image, -1).sum(axis=1)
    own = (sums * sums).sum(axis=1)
    self_pairs = (x * x).sum(axis=1).reshape(n_images, per_image).sum(axis=1)
    intra = (own - self_pairs) / (per_image * (per_image - 1))
    inter = (sums @ sums.sum(axis=0) - own) / (per_image * (len(x) - per_image))
    return intra, inter


def _frobenius_gram(a: np.ndarray) -> float:
    """‖AᵀA‖²_F = ‖AAᵀ‖²_F through the smaller of the two Gram matrices."""
    gram = a.T @ a if a.shape[1] <= a.shape[0] else a @ a.T
    return float((gram * gram).sum())


@dataclass(frozen=True)
class PairMoments:
    """Sums over the ordered caption pairs of different images: count, Σt, Σt², Σv, Σv², Σtv
    (t = caption cosine, v = cosine of the two images' features)."""

    m: float
    t: float
    t2: float
    v: float
    v2: float
    tv: float

    @property
    def pearson(self) -> float:
        m = self.m
        cov = self.tv / m - (self.t / m) * (self.v / m)
        var_t = self.t2 / m - (self.t / m) ** 2
        var_v = self.v2 / m - (self.v / m) ** 2
        return float(cov / np.sqrt(var_t * var_v)) if var_t > 0 and var_v > 0 else float("nan")


def pair_moments(captions: np.ndarray, visual: np.ndarray, per_image: int) -> PairMoments:
    """Exact float64 moments over all caption pairs of different images (see the module docstring)."""
    x = unit_rows(captions)
    c = per_image
    n_images = _groups(len(x), c)
    v = unit_rows(visual)
    if v.shape[0] != n_images:
        raise BenchboxError(f"{v.shape[0]} visual vectors for {n_images} images")
    grouped = x.reshape(n_images, c, -1)
    sums = grouped.sum(axis=1)
    own = (sums * sums).sum(axis=1)
    within = np.einsum("ncd,nkd->nck", grouped, grouped)
    v_norm2 = (v * v).sum(axis=1)
    v_total = v.sum(axis=0)
    cross = sums.T @ v
    return PairMoments(
        m=float(len(x)) ** 2 - n_images * c * c,
        t=float(sums.sum(axis=0) @ sums.sum(axis=0) - own.sum()),
        t2=_frobenius_gram(x) - float((within * within).sum()),
        v=c * c * float(v_total @ v_total - v_norm2.sum()),
        v2=c * c * (_frobenius_gram(v) - float((v_norm2 * v_norm2).sum())),
        tv=float((cross * cross).sum() - (own * v_norm2).sum()),
    )


def rho_vis(captions: np.ndarray, visual: np.ndarray, per_image: int) -> float:
    """ρ_vis over all caption pairs of different images (exact)."""
    return pair_moments(captions, visual, per_image).pearson


def rho_vis_bootstrap(
    captions: np.ndarray, visual: np.ndarray, per_image: int, counts: np.ndarray, *, block_bytes: int = BLOCK_BYTES
) -> np.ndarray:
    """ρ_vis of every resample of images given by draw counts ``counts`` [B, N] (module docstring)."""
    x = unit_rows(captions).astype(np.float32)
    c = per_image
    n_images = _groups(len(x), c)
    v = unit_rows(visual).astype(np.float32)
    sums = x.reshape(n_images, c, -1).sum(axis=1)
    w = np.asarray(counts, dtype=np.float32)
    w64 = w.astype(np.float64)

    def off_diagonal_sum(vectors: np.ndarray) -> np.ndarray:
        """Σ_{i≠j} w_i w_j (u_i · u_j) = ‖Σ w_i u_i‖² − Σ w_i² ‖u_i‖², per resample."""
        total = w64 @ vectors.astype(np.float64)
        return (total * total).sum(axis=1) - (w64 * w64) @ (vectors.astype(np.float64) ** 2).sum(axis=1)

    sum_t, sum_v = off_diagonal_sum(sums), c * c * off_diagonal_sum(v)
    # Σ cos², Σ cos_v², Σ cos·cos_v need the image × image matrices: one block of images' rows at a time
    acc = np.zeros((3, w.shape[0]))
    ones = np.ones(c, dtype=np.float32)
    step = max(1, block_bytes // (4 * c * len(x)))
    for start in range(0, n_images, step):
        rows = np.arange(start, min(start + step, n_images))
        cos = x[c * start : c * rows[-1] + c] @ x.T
        cos *= cos
        vv = v[rows] @ v.T
        t2 = (cos.reshape(-1, n_images, c) @ ones).reshape(len(rows), c, n_images).sum(axis=1)  # Σ over both images
        blocks = np.stack([t2, c * c * vv * vv,
                           (sums[rows] @ sums.T) * vv])
        blocks[:, np.arange(len(rows)), rows] = 0.0  # pairs within one image (and copies of it) are left out
        products = (w @ blocks.reshape(-1, n_images).T).reshape(w.shape[0], 3, len(rows))
        acc += np.einsum("bkr,br->kb", products, w[:, rows], dtype=np.float64)
    m = c * c * (w64.sum(axis=1) ** 2 - (w64 * w64).sum(axis=1))
    return np.array([PairMoments(m[b], sum_t[b], acc[0, b], sum_v[b], acc[1, b], acc[2, b]).pearson
                     for b in range(w.shape[0])])


@dataclass(frozen=True)
class StructureResult:
    """The measures, their 95% percentile intervals over images (NaN without a bootstrap) and the items."""

    intra: np.ndarray
    inter: np.ndarray
    values: dict[str, float]
    intervals: dict[str, tuple[float, float]]


def structure(
    captions: np.ndarray,
    per_image: int,
    visual: np.ndarray | dict[str, np.ndarray] | None = None,
    *,
    n_boot: int = 1000,
    seed: int = 1111,
    level: float = 0.95,
) -> StructureResult:
    """E_intra, E_inter, E_intra − E_inter and (with ``visual``) ρ_vis, with bootstrap intervals over images.
    ``visual``: one vector per image (→ ``rho_vis``), or several sets by metric name (one ρ_vis each)."""
    intra, inter = per_image_means(captions, per_image)
    diff = intra - inter
    values = {"e_intra": float(intra.mean()), "e_inter": float(inter.mean()), "e_intra_minus_inter": float(diff.mean())}
    visual_sets = {"rho_vis": visual} if isinstance(visual, np.ndarray) else dict(visual or {})
    for name, vectors in visual_sets.items():
        values[name] = rho_vis(captions, vectors, per_image)
    intervals = {name: (float("nan"), float("nan")) for name in values}
    if n_boot > 0:
        counts = bootstrap_counts(np.random.default_rng(seed), len(intra), n_boot)
        draws = {name: counts @ items / counts.sum(axis=1)
                 for name, items in (("e_intra", intra), ("e_inter", inter), ("e_intra_minus_inter", diff))}
        for name, vectors in visual_sets.items():
            draws[name] = rho_vis_bootstrap(captions, vectors, per_image, counts)
        for name, boot in draws.items():
            intervals[name] = percentile_interval(boot, level)
    return StructureResult(intra, inter, values, intervals)
