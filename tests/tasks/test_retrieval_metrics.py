"""Image–caption retrieval metrics (docs/protocols.md#retrieval): hand-built score matrices with known ranks, equality with
VSE++'s per-query definitions on random embeddings, folds, intervals, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benchbox.errors import BenchboxError
from benchbox.stats import wilson_ci
from benchbox.tasks import retrieval_metrics as retrieval_module
from benchbox.tasks.retrieval import bootstrap_by_image
from benchbox.tasks.retrieval_metrics import retrieval_metrics


def from_scores(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Embeddings whose inner products are exactly ``scores`` [N, 5N]: image i = e_i, caption j = scores[:, j]."""
    scores = np.asarray(scores, dtype=np.float32)
    return np.eye(scores.shape[0], dtype=np.float32), np.ascontiguousarray(scores.T)


def metrics_of(scores, **kwargs):
    images, captions = from_scores(scores)
    return retrieval_metrics(images, captions, similarity="dot", device="cpu", **kwargs)


# Two images, ten captions (captions 0-4 belong to image 0, 5-9 to image 1); values are multiples of 1/16.
HAND = np.array([
    #  own captions of image 0        | captions of image 1
    [8, 1, 11, 3, 4,                   13, 10, 0, 0, 14],   # best own 11; 13 and 14 beat it -> i2t rank 3
    [3, 5, 15, 0, 0,                   6, 7, 9, 12, 2],     # best own 12; 15 beats it      -> i2t rank 2
]) / 16.0
#             caption:    0  1  2  3  4  5  6  7  8  9
HAND_T2I = np.array([1, 2, 2, 1, 1, 2, 2, 1, 1, 2])


def test_hand_built_ranks_best_of_five_and_caption_to_image():
    m = metrics_of(HAND)
    assert m["i2t"]["ranks"].tolist() == [3, 2]
    assert m["t2i"]["ranks"].tolist() == HAND_T2I.tolist()
    assert m["i2t"]["r1"] == 0.0 and m["i2t"]["r5"] == 100.0
    assert m["t2i"]["r1"] == 50.0 and m["t2i"]["meanr"] == 1.5
    assert m["i2t"]["meanr"] == 2.5
    assert m["i2t"]["medr"] == 2.0  # VSE++: floor(median of 0-based [2, 1] = 1.5) + 1
    assert metrics_of(HAND, medr="median")["i2t"]["medr"] == 2.5
    assert m["rsum"] == pytest.approx(0 + 100 + 100 + 50 + 100 + 100)
    assert m["i2t"]["tied"] == m["t2i"]["tied"] == 0
    assert m["i2t"]["fold"].tolist() == [0, 0] and m["t2i"]["fold"].tolist() == [0] * 10


def test_ties_with_the_target_follow_the_convention():
    scores = HAND.copy()
    scores[0, 5] = scores[0, 2]  # a competitor of image 0 ties its best own caption (11/16)
    scores[1, 0] = scores[0, 0]  # caption 0: image 1 ties image 0 (8/16)
    scores[1, 9] = scores[1, 8]  # a tie among image 1's own captions plays no role
    optimistic, pessimistic = metrics_of(scores, ties="optimistic"), metrics_of(scores, ties="pessimistic")
    assert optimistic["i2t"]["ranks"].tolist() == [2, 2]
    assert pessimistic["i2t"]["ranks"].tolist() == [3, 2]
    assert optimistic["t2i"]["ranks"][0] == 1 and pessimistic["t2i"]["ranks"][0] == 2
    assert optimistic["i2t"]["tied"] == 1 and optimistic["t2i"]["tied"] == 1
    # the default, random tie breaking: one competitor above image 0 and one tied, so rank 2 or 3 with equal
    # chances (expected 2.5; P(rank <= 1) = 0, P(rank <= 5) = 1); caption 0 is 1st or 2nd (expected 1.5)
    expected = metrics_of(scores)
    assert expected["i2t"]["ranks"].tolist() == [2.5, 2] and expected["t2i"]["ranks"][0] == 1.5
    assert expected["i2t"]["hits"][1].tolist() == [0, 0] and expected["t2i"]["hits"][1][0] == 0.5
    assert expected["t2i"]["r1"] == pytest.approx(100 * (optimistic["t2i"]["r1"] / 100 * 10 - 0.5) / 10)


def test_constant_scores_rank_first_when_optimistic_and_last_when_pessimistic():
    n = 4
    flat = np.zeros((n, 5 * n))
    optimistic, pessimistic = metrics_of(flat, ties="optimistic"), metrics_of(flat, ties="pessimistic")
    assert (optimistic["i2t"]["ranks"] == 1).all() and (optimistic["t2i"]["ranks"] == 1).all()
    assert (pessimistic["i2t"]["ranks"] == 5 * n - 5 + 1).all() and (pessimistic["t2i"]["ranks"] == n).all()
    assert optimistic["i2t"]["tied"] == n and optimistic["t2i"]["tied"] == 5 * n
    # random tie breaking: an image's 5 captions among 20 tied ones, the first of them at (20 + 1)/(5 + 1);
    # a caption's image 1st of 4 with chance 1/4, at (3 + 2)/2 on average
    expected = metrics_of(flat)
    assert (expected["i2t"]["ranks"] == 3.5).all() and (expected["t2i"]["ranks"] == 2.5).all()
    assert expected["i2t"]["r1"] == pytest.approx(100 * 5 / 20) and expected["t2i"]["r1"] == pytest.approx(25.0)


def test_folds_are_consecutive_independent_problems_and_metrics_are_averaged():
    rng = np.random.default_rng(3)
    n = 6
    scores = rng.permutation(n * 5 * n).reshape(n, 5 * n).astype(float) / 256  # distinct, exact
    scores[:3, 15:] = scores[3:, :15] = 1000.0  # cross-fold scores are huge but must not count
    folded = metrics_of(scores, folds=2)
    parts = [metrics_of(scores[:3, :15]), metrics_of(scores[3:, 15:])]
    for direction in ("i2t", "t2i"):
        assert folded[direction]["ranks"].tolist() == np.concatenate([p[direction]["ranks"] for p in parts]).tolist()
        assert folded[direction]["fold"].tolist() == [0] * (len(folded[direction]["ranks"]) // 2) + [1] * (
            len(folded[direction]["ranks"]) // 2
        )
        for key in ("r1", "r5", "r10", "medr", "meanr"):
            assert folded[direction][key] == pytest.approx(np.mean([p[direction][key] for p in parts]))
    assert folded["rsum"] == pytest.approx(np.mean([p["rsum"] for p in parts]))


def test_fold_average_of_median_ranks_is_not_the_pooled_median():
    # fold 1: image ranks 1, 1; fold 2: image ranks 3, 3 (two captions of the other image beat the best own)
    scores = np.zeros((4, 20))
    for i in range(4):
        scores[i, 5 * i : 5 * i + 5] = 0.5
    scores[2, 15:17] = scores[3, 10:12] = 0.75
    m = metrics_of(scores, folds=2)
    assert m["i2t"]["ranks"].tolist() == [1, 1, 3, 3]
    assert m["i2t"]["medr"] == 2.0 and m["i2t"]["r1"] == 50.0


def vsepp_i2t(images: np.ndarray, captions: np.ndarray, sim) -> np.ndarray:
    """VSE++ evaluation.py ``i2t`` per query: 0-based best rank of the 5 own captions in argsort order."""
    ranks = np.zeros(len(images))
    for index in range(len(images)):
        inds = np.argsort(sim(images[index : index + 1], captions)[0])[::-1]
        ranks[index] = min(np.where(inds == i)[0][0] for i in range(5 * index, 5 * index + 5))
    return ranks


def vsepp_t2i(images: np.ndarray, captions: np.ndarray, sim) -> np.ndarray:
    """VSE++ ``t2i`` per query: 0-based rank of the own image among all images."""
    ranks = np.zeros(len(captions))
    for j in range(len(captions)):
        inds = np.argsort(sim(images, captions[j : j + 1])[:, 0])[::-1]
        ranks[j] = np.where(inds == j // 5)[0][0]
    return ranks


def test_four_distinct_embeddings_score_as_vsepp_does_on_average_not_as_a_perfect_encoder():
    """Issue #24: 1000 images whose embeddings take 4 distinct values (captions equal to their image): VSE++'s
    own i2t/t2i give R@1 0.4 / 0.4, counting no ties gave 50.6 / 73.7. Random tie breaking, by hand: a caption's
    image is one of 250 tied images (P(rank <= K) = K/250); an image's 5 captions are among 1250 tied ones
    (P(first of them <= K) = 1 - C(1250 - K, 5)/C(1250, 5))."""
    from math import comb

    n = 1000
    basis = np.eye(4, 8, dtype=np.float32) + 0.1
    images = basis[np.arange(n) % 4]
    captions = np.repeat(images, 5, axis=0)
    got = retrieval_metrics(images, captions, device="cpu")
    for k in (1, 5, 10):
        assert got["t2i"][f"r{k}"] == pytest.approx(100 * k / 250)
        assert got["i2t"][f"r{k}"] == pytest.approx(100 * (1 - comb(1250 - k, 5) / comb(1250, 5)))
    assert got["t2i"]["ranks"][0] == pytest.approx((249 + 2) / 2) and got["i2t"]["ranks"][0] == pytest.approx((1245 + 5 + 1) / 6)
    cos = lambda a, b: (a / np.linalg.norm(a, axis=1, keepdims=True)) @ (b / np.linalg.norm(b, axis=1, keepdims=True)).T
    vsepp = {"i2t": vsepp_metrics(vsepp_i2t(images, captions, cos)), "t2i": vsepp_metrics(vsepp_t2i(images, captions, cos))}
    for direction in ("i2t", "t2i"):
        assert abs(got[direction]["r1"] - vsepp[direction]["r1"]) <= 0.5, (direction, got[direction]["r1"], vsepp[direction])
    assert retrieval_metrics(images, captions, device="cpu", ties="optimistic")["t2i"]["r1"] == 100.0


def vsepp_metrics(ranks0: np.ndarray) -> dict[str, float]:
    return {
        "r1": 100.0 * len(np.where(ranks0 < 1)[0]) / len(ranks0),
        "r5": 100.0 * len(np.where(ranks0 < 5)[0]) / len(ranks0),
        "r10": 100.0 * len(np.where(ranks0 < 10)[0]) / len(ranks0),
        "medr": np.floor(np.median(ranks0)) + 1,
        "meanr": ranks0.mean() + 1,
    }


def dot_sim(images, captions):
    return images @ captions.T


def vsepp_order_sim(images, captions):
    """VSE++ model.py ``order_sim``: −‖max(0, c − i)‖ for every (image, caption)."""
    diff = captions[None, :, :] - images[:, None, :]
    return -np.sqrt((np.clip(diff, 0, None) ** 2).sum(axis=2))


def random_problem(n: int, d: int, seed: int, noise: float = 1.2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((n, d)).astype(np.float32)
    captions = (np.repeat(images, 5, axis=0) + noise * rng.standard_normal((5 * n, d))).astype(np.float32)
    return images, captions


@pytest.mark.parametrize("block_rows", [None, 7])
def test_equals_vsepp_on_random_cosine_embeddings(block_rows):
    images, captions = random_problem(120, 24, seed=1)
    ours = retrieval_metrics(images, captions, device="cpu", block_rows=block_rows)
    im = images / np.linalg.norm(images, axis=1, keepdims=True)
    cap = captions / np.linalg.norm(captions, axis=1, keepdims=True)
    for direction, ref in (("i2t", vsepp_i2t(im, cap, dot_sim)), ("t2i", vsepp_t2i(im, cap, dot_sim))):
        assert ours[direction]["ranks"].tolist() == (ref + 1).astype(int).tolist()
        for key, value in vsepp_metrics(ref).items():
            assert ours[direction][key] == pytest.approx(value)
    assert 0 < ours["i2t"]["r1"] < 100 and 0 < ours["t2i"]["r1"] < 100  # a non-trivial problem


def test_equals_vsepp_five_fold_on_random_embeddings():
    images, captions = random_problem(50, 16, seed=2, noise=0.9)
    ours = retrieval_metrics(images, captions, folds=5, similarity="dot", device="cpu")
    per_fold = []
    for f in range(5):
        im, cap = images[10 * f : 10 * (f + 1)], captions[50 * f : 50 * (f + 1)]
        per_fold.append({d: vsepp_metrics(r(im, cap, dot_sim)) for d, r in (("i2t", vsepp_i2t), ("t2i", vsepp_t2i))})
    for direction in ("i2t", "t2i"):
        for key in ("r1", "r5", "r10", "medr", "meanr"):
            assert ours[direction][key] == pytest.approx(np.mean([p[direction][key] for p in per_fold]))


def test_order_violation_equals_vsepp_order_sim():
    images, captions = random_problem(40, 12, seed=4)
    images, captions = np.abs(images), np.abs(captions)  # order embeddings live in the positive orthant
    ours = retrieval_metrics(images, captions, similarity="order", device="cpu", block_rows=9)
    assert ours["i2t"]["ranks"].tolist() == (vsepp_i2t(images, captions, vsepp_order_sim) + 1).astype(int).tolist()
    assert ours["t2i"]["ranks"].tolist() == (vsepp_t2i(images, captions, vsepp_order_sim) + 1).astype(int).tolist()


def test_order_violation_direction_penalises_captions_above_images():
    # S(i, c) = -||max(0, c - i)||^2: a caption below (<=) its image scores 0, one sticking out above scores < 0
    images = np.array([[1.0, 1.0], [0.0, 0.0]], dtype=np.float32)
    captions = np.repeat(np.array([[0.5, 0.5], [2.0, 2.0]], dtype=np.float32), 5, axis=0)
    m = retrieval_metrics(images, captions, similarity="order", device="cpu")
    # caption (0.5, 0.5): image 0 scores 0, image 1 scores -0.5 -> rank 1; caption (2, 2): image 1 -8 vs image 0 -2
    assert m["t2i"]["ranks"].tolist() == [1] * 5 + [2] * 5


def test_cosine_ignores_scale_and_dot_does_not():
    images, captions = random_problem(30, 8, seed=5)
    scaled = captions * np.linspace(0.1, 10, len(captions), dtype=np.float32)[:, None]
    assert (
        retrieval_metrics(images, scaled, device="cpu")["t2i"]["ranks"].tolist()
        == retrieval_metrics(images, captions, device="cpu")["t2i"]["ranks"].tolist()
    )
    assert (
        retrieval_metrics(images, scaled, similarity="dot", device="cpu")["i2t"]["ranks"].tolist()
        != retrieval_metrics(images, captions, similarity="dot", device="cpu")["i2t"]["ranks"].tolist()
    )


def test_torch_input_and_float64_give_the_same_ranks():
    images, captions = random_problem(25, 8, seed=6)
    a = retrieval_metrics(images, captions, device="cpu")
    b = retrieval_metrics(torch.from_numpy(images.astype(np.float64)), torch.from_numpy(captions), device="cpu")
    assert a["i2t"]["ranks"].tolist() == b["i2t"]["ranks"].tolist()
    assert a["t2i"]["ranks"].tolist() == b["t2i"]["ranks"].tolist()


def test_torch_kernels_used_on_gpu_agree_with_the_numpy_cpu_kernels(monkeypatch):
    images, captions = random_problem(60, 16, seed=9)
    scores = HAND.copy()
    scores[0, 5] = scores[0, 2]
    expected = [retrieval_metrics(images, captions, device="cpu", block_rows=7, folds=3),
                metrics_of(scores, ties="pessimistic")]
    monkeypatch.setattr(retrieval_module, "NUMPY_ON_CPU", False)
    got = [retrieval_metrics(images, captions, device="cpu", block_rows=7, folds=3),
           metrics_of(scores, ties="pessimistic")]
    for a, b in zip(expected, got):
        for direction in ("i2t", "t2i"):
            assert a[direction]["ranks"].tolist() == b[direction]["ranks"].tolist()
            assert a[direction]["tied"] == b[direction]["tied"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_equals_cpu():
    images, captions = random_problem(200, 32, seed=7)
    cpu, gpu = (retrieval_metrics(images, captions, device=d, folds=2) for d in ("cpu", "cuda"))
    assert cpu["i2t"]["ranks"].tolist() == gpu["i2t"]["ranks"].tolist()
    assert cpu["t2i"]["ranks"].tolist() == gpu["t2i"]["ranks"].tolist()


@pytest.mark.parametrize(
    ("images", "captions", "kwargs", "message"),
    [
        (np.ones((3, 4)), np.ones((14, 4)), {}, "14 rows for 3 images; expected 5"),
        (np.ones((3, 4)), np.ones((15, 5)), {}, "differ in dimension: 4 vs 5"),
        (np.zeros((0, 4)), np.zeros((0, 4)), {}, "empty"),
        (np.ones(3), np.ones((15, 4)), {}, "2-d array"),
        (np.full((3, 4), np.nan), np.ones((15, 4)), {}, "NaN"),
        (np.ones((3, 4)), np.full((15, 4), np.inf), {}, "NaN or infinite"),
        (np.ones((3, 4)), np.ones((15, 4)), {"folds": 2}, "folds must be a positive integer dividing"),
        (np.ones((3, 4)), np.ones((15, 4)), {"similarity": "euclid"}, "unknown similarity"),
        (np.ones((3, 4)), np.ones((15, 4)), {"medr": "mean"}, "median-rank convention"),
        (np.ones((3, 4)), np.ones((15, 4)), {"ties": "random"}, "tie convention"),
        (np.array([["a"] * 4] * 3), np.ones((15, 4)), {}, "must hold numbers"),
    ],
)
def test_bad_input_gives_clear_errors(images, captions, kwargs, message):
    with pytest.raises(BenchboxError, match=message):
        retrieval_metrics(images, captions, device="cpu", **kwargs)


def _untied(ranks: np.ndarray) -> dict[str, np.ndarray]:
    """Per-query input of :func:`bootstrap_by_image` for ranks without ties: hits at K are 0 or 1."""
    return {"ranks": ranks, **{f"r{k}": (ranks <= k).astype(float) for k in (1, 5, 10)}}


def test_image_bootstrap_is_wider_than_wilson_when_captions_of_an_image_agree():
    rng = np.random.default_rng(8)
    hit = rng.random(400) < 0.4  # per image: all five captions hit or all miss
    t2i = np.where(hit, 1, 50)[:, None].repeat(5, axis=1)[None]
    i2t = np.where(hit, 1, 50)[None]
    ci = bootstrap_by_image(_untied(i2t), _untied(t2i), n_boot=2000, seed=1, medr="vsepp")
    boot_width = ci[("t2i", "r1")][1] - ci[("t2i", "r1")][0]
    low, high = wilson_ci(int(hit.sum()) * 5, 2000)
    assert 1.8 < boot_width / (100 * (high - low)) < 2.8  # about sqrt(5): 400 independent units, not 2000
    value = 100 * hit.mean()
    for key, (lo, hi) in ci.items():
        assert lo <= hi
    assert ci[("i2t", "r1")][0] < value < ci[("i2t", "r1")][1]
    assert ci == bootstrap_by_image(_untied(i2t), _untied(t2i), n_boot=2000, seed=1, medr="vsepp")


def test_image_bootstrap_resamples_within_folds():
    i2t = np.array([[1] * 50, [20] * 50])  # fold 1 all hits, fold 2 all misses
    t2i = i2t[..., None].repeat(5, axis=2)
    ci = bootstrap_by_image(_untied(i2t), _untied(t2i), n_boot=200, seed=0, medr="median")
    assert ci[("i2t", "r1")] == (50.0, 50.0) and ci[("t2i", "medr")] == (10.5, 10.5)
    assert ci[("all", "rsum")] == (300.0, 300.0)


def test_huge_finite_values_are_not_mistaken_for_nan():
    images, captions = random_problem(4, 3, seed=10)
    images[:, 0] = 3e38  # the column sum overflows to inf, yet every value is finite
    assert retrieval_metrics(images, captions, device="cpu")["i2t"]["ranks"].shape == (4,)
