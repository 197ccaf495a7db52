"""Losses, learning-rate schedule, epoch plans and the cluster dev score, against direct computations."""

from __future__ import annotations


import numpy as np
import pytest
import torch
from scipy.stats import pearsonr

from benchbox.errors import BenchboxError
from benchbox.training import losses
from benchbox.training.batching import epoch_plan, padding_waste
from benchbox.training.config import TrainConfig
from benchbox.training.schedule import cyclic_cosine_lr
from benchbox.training.selection import cluster_retrieval


def _unit(n, d, seed):
    x = torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return torch.nn.functional.normalize(x, dim=1)


def _loops(s, margin, reduce, *, images=True):
    n = len(s)
    total = 0.0
    for i in range(n):  # caption i as query against images j, and (``images``) image i as query against captions j
        row = [max(0.0, margin - s[i][i] + s[i][j]) for j in range(n) if j != i]
        col = [max(0.0, margin - s[i][i] + s[j][i]) for j in range(n) if j != i]
        total += reduce(row) + (reduce(col) if images else 0.0)
    return total


def test_hinge_losses_match_loops():
    c, v = _unit(6, 5, 0), _unit(6, 5, 1)
    s = (c @ v.t()).tolist()
    assert losses.hinge_sum(c @ v.t(), 0.2).item() == pytest.approx(_loops(s, 0.2, sum))
    assert losses.hinge_max(c @ v.t(), 0.2).item() == pytest.approx(_loops(s, 0.2, max))
    # the captions' direction only (Bordes et al.'s eq. 3 for the projection baseline)
    assert losses.hinge_sum(c @ v.t(), 0.2, anchors="caption").item() == pytest.approx(_loops(s, 0.2, sum, images=False))
    assert losses.hinge_max(c @ v.t(), 0.2, anchors="caption").item() == pytest.approx(_loops(s, 0.2, max, images=False))
    # a perfectly separated batch costs nothing
    eye = torch.eye(4, dtype=torch.float64)
    assert losses.hinge_sum(eye, 0.2).item() == 0.0


def test_order_similarity_is_minus_squared_violation():
    c, v = _unit(3, 4, 2).abs(), _unit(3, 4, 3).abs()
    sim = losses.order_similarity(c, v)
    for i in range(3):
        for j in range(3):
            expected = -sum(max(0.0, float(c[i, k] - v[j, k])) ** 2 for k in range(4))
            assert sim[i, j].item() == pytest.approx(expected)


def test_perceptual_loss_is_minus_pearson_over_pairs():
    c, v = _unit(7, 5, 4), torch.randn(7, 9, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    vn = torch.nn.functional.normalize(v, dim=1)
    iu = np.triu_indices(7, 1)
    expected = -pearsonr((c @ c.t()).numpy()[iu], (vn @ vn.t()).numpy()[iu])[0]
    assert losses.perceptual_loss(c, v).item() == pytest.approx(expected)


def test_cluster_loss_uses_caption_pairs():
    """Its 2·5·4 = 40 hinge terms (both captions of a pair as anchor): their mean by default, or their sum."""
    a, p = _unit(5, 4, 6), _unit(5, 4, 7)
    total = _loops((a @ p.t()).tolist(), 0.5, sum)
    assert losses.cluster_loss(a, p, 0.5).item() == pytest.approx(total / 40)
    assert losses.cluster_loss(a, p, 0.5, reduction="sum").item() == pytest.approx(total)


def test_cyclic_cosine_follows_merkx():
    lr = lambda t: cyclic_cosine_lr(t, 100, 1e-3, 1e-6)  # noqa: E731
    assert lr(0) == pytest.approx(1e-6)
    assert lr(50) == pytest.approx(1e-3)
    assert lr(25) == pytest.approx(1e-6 + (1e-3 - 1e-6) / 2)
    assert lr(100) == pytest.approx(1e-6) and lr(137) == pytest.approx(lr(37))


def test_epoch_plan_properties():
    rng = np.random.default_rng(0)
    lengths = rng.integers(20, 150, size=5 * 203)
    plan = epoch_plan(lengths, batch_size=16, seed=3, epoch=1)
    assert len(plan) == 5 * (203 // 16)
    rows = np.concatenate([b.captions for b in plan])
    assert len(set(rows.tolist())) == len(rows)  # every caption at most once
    for b in plan:
        assert len(set(b.images.tolist())) == len(b.images)  # no two captions of one image in a batch
        assert (b.captions // 5 == b.images).all() and (b.partners // 5 == b.images).all()
        assert (b.partners != b.captions).all()
    again = epoch_plan(lengths, batch_size=16, seed=3, epoch=1)
    assert all((x.captions == y.captions).all() for x, y in zip(plan, again))
    other = epoch_plan(lengths, batch_size=16, seed=3, epoch=2)
    assert any((x.captions != y.captions).any() for x, y in zip(plan, other))
    bucketed = padding_waste([lengths[b.captions] for b in plan])
    unbucketed = padding_waste([lengths[b.captions] for b in epoch_plan(lengths, batch_size=16, seed=3, epoch=1,
                                                                        bucket_batches=1)])
    assert bucketed < 0.10 < unbucketed


def _plan_before_variable_counts(lengths, *, batch_size, seed, epoch, bucket_batches=50):
    """epoch_plan as it was at commit 88a3f56, five captions per image only (the reference for Flickr8k/COCO)."""
    n_images = len(lengths) // 5
    rng = np.random.default_rng([seed, epoch])
    chunk = batch_size * bucket_batches
    batches = []
    for k in range(5):
        images = rng.permutation(n_images)
        partners = 5 * images + (k + 1 + rng.integers(0, 4, n_images)) % 5
        rows = 5 * images + k
        usable = (n_images // batch_size) * batch_size
        for start in range(0, usable, chunk):
            stop = min(start + chunk, usable)
            sort = start + np.argsort(lengths[rows[start:stop]], kind="stable")
            for b in range(0, stop - start, batch_size):
                sel = sort[b: b + batch_size]
                batches.append((images[sel], rows[sel], partners[sel]))
    order = rng.permutation(len(batches))
    return [batches[i] for i in order]


@pytest.mark.parametrize("seed, epoch, batch_size", [(0, 0, 16), (3, 1, 32), (7, 5, 5)])
def test_epoch_plan_of_five_captions_per_image_is_unchanged_by_variable_counts(seed, epoch, batch_size):
    lengths = np.random.default_rng(seed).integers(20, 150, size=5 * 203)
    reference = _plan_before_variable_counts(lengths, batch_size=batch_size, seed=seed, epoch=epoch)
    for counts in (None, np.full(203, 5)):
        plan = epoch_plan(lengths, batch_size=batch_size, seed=seed, epoch=epoch, counts=counts)
        assert len(plan) == len(reference)
        for batch, (images, rows, partners) in zip(plan, reference):
            for got, want in ((batch.images, images), (batch.captions, rows), (batch.partners, partners)):
                np.testing.assert_array_equal(got, want)
                assert got.dtype == want.dtype


def test_epoch_plan_with_a_different_number_of_captions_per_item():
    """All of a clip's descriptions (MSVD): pass k holds the items with a caption k; every caption once."""
    counts = np.array([5, 41, 7, 12, 5, 30, 9, 6] * 10)
    starts = np.cumsum(counts) - counts
    owner = np.repeat(np.arange(len(counts)), counts)
    lengths = np.random.default_rng(2).integers(10, 90, size=counts.sum())
    plan = epoch_plan(lengths, batch_size=4, seed=1, epoch=0, counts=counts)
    rows = np.concatenate([b.captions for b in plan])
    assert len(set(rows.tolist())) == len(rows)
    expected = sum((np.count_nonzero(counts > k) // 4) * 4 for k in range(counts.max()))
    assert len(rows) == expected and expected > 0.9 * counts.sum()
    for b in plan:
        assert len(set(b.images.tolist())) == len(b.images)
        assert (owner[b.captions] == b.images).all() and (owner[b.partners] == b.images).all()
        assert (b.partners != b.captions).all()
        k = b.captions - starts[b.images]
        assert (k == k[0]).all()  # one pass: the k-th caption of each item
    partners = np.concatenate([b.partners - starts[b.images] for b in plan])
    assert partners.max() == counts.max() - 1  # the partner is any other caption, not one of the first five
    with pytest.raises(ValueError, match="at least 2 captions per image"):
        epoch_plan(lengths[:6], batch_size=2, seed=0, epoch=0, counts=[5, 1])


def test_cluster_retrieval_perfect_and_chance():
    centers = np.eye(20)
    perfect = np.repeat(centers, 5, axis=0) + 0.01 * np.random.default_rng(0).standard_normal((100, 20))
    assert cluster_retrieval(perfect)["c2c_r1"] == 100.0
    noise = np.random.default_rng(1).standard_normal((5 * 200, 16))
    assert cluster_retrieval(noise)["c2c_r10"] < 15  # chance is 5%


def test_config_validation():
    with pytest.raises(BenchboxError, match="--features"):
        TrainConfig(encoder="char-gru", dataset="flickr8k")
    with pytest.raises(BenchboxError, match="visual side"):
        TrainConfig(encoder="char-gru", dataset="flickr8k", visual="cluster", loss="order")
    with pytest.raises(BenchboxError, match="--dataset"):
        TrainConfig(encoder="char-gru", dataset="mnist", visual="cluster")
    c = TrainConfig(encoder="char-gru", dataset="coco", visual="random", loss="order")
    assert c.resolved_lr_max == 1e-4 and c.resolved_margin == 0.05
    assert TrainConfig.from_dict(c.to_dict()) == c
    with pytest.raises(BenchboxError, match="hidden"):
        TrainConfig(encoder="char-gru", dataset="coco", visual="random", loss="order", hidden=8).check_resume(c)


@pytest.fixture
def log_file_console(monkeypatch):
    """stderr as in ``... > log 2>&1``: not a terminal, not silenced (an earlier --quiet command may have been)."""
    from benchbox.console import err

    monkeypatch.setattr(err, "quiet", False)
    monkeypatch.setattr(type(err), "is_terminal", property(lambda self: False))


def test_progress_lines_in_a_log_file_come_after_the_first_step_then_at_a_steady_interval(capsys, log_file_console):
    """With stderr not a terminal, a slow run still logs at once (issue #27: `train ... > log` wrote nothing for
    7 minutes, one line every 50 steps); a fake clock stands in for time, 20 s a step."""
    from benchbox.console import LOG_SECONDS
    from benchbox.training.progress import TrainingProgress

    now = [0.0]
    progress = TrainingProgress("train", total=10, done=0, batch_size=32, main=True, clock=lambda: now[0])
    with progress:
        for step in range(1, 11):
            now[0] += 20.0
            progress.update(step, 0, loss=1.5, lr=2e-4)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("step ")]
    assert LOG_SECONDS == 30.0
    # step 1 at once, then every 30 s of a 20 s step: steps 3, 5, 7, 9
    assert [line.split()[1] for line in lines] == ["1/10", "3/10", "5/10", "7/10", "9/10"]
    assert lines[0].endswith("first step in 20.0 s (the time left from the next line on)")
    assert lines[1].endswith("1.6 captions/s eta 2.3 min")  # 2 steps in 40 s since the first; 7 steps left


def test_the_first_step_predicts_no_time_left_and_the_time_left_counts_down(capsys, log_file_console):
    """Issue #41: a first step of 3 minutes (loading, allocation) gave "eta 4074 min" for a run of hours. The
    first line says what the first step took; later lines count the rate from the first step's end, so at a
    steady 2 s a step the time left falls line by line to the truth."""
    from benchbox.training.progress import TrainingProgress

    now = [0.0]
    progress = TrainingProgress("train", total=200, done=0, batch_size=32, main=True, clock=lambda: now[0])
    with progress:
        for step in range(1, 201):
            now[0] += 200.0 if step == 1 else 2.0
            progress.update(step, 0, loss=1.5, lr=2e-4)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("step ")]
    assert "eta" not in lines[0] and "first step in 200.0 s" in lines[0]
    etas = [float(line.split(" eta ")[1].removesuffix(" min")) for line in lines[1:]]
    left = [(200 - int(line.split()[1].split("/")[0])) * 2 / 60 for line in lines[1:]]
    assert len(etas) > 5 and all(a > b for a, b in zip(etas, etas[1:]))
    assert etas == pytest.approx(left, abs=0.05)


def test_evaluation_progress_in_a_log_file_is_plain_lines(capsys, log_file_console):
    """``eval ... > log 2>&1`` (stderr not a terminal): a line at the first update, then every 30 s, and at the
    end; a fake clock stands in for time, 20 s an update."""
    from benchbox.console import progress_bar

    now = [0.0]

    def clock():
        return now[0]

    with progress_bar("encoding with glove-bow", clock=clock) as update:
        for done in range(100, 600, 100):
            now[0] += 20.0
            update(done, 500)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["encoding with glove-bow: 100/500 in 20 s, about 80 s left",
                     "encoding with glove-bow: 300/500 in 60 s, about 40 s left",
                     "encoding with glove-bow: 500/500 in 100 s"]


def test_adam_is_fused_where_available_and_equals_the_default_to_rounding():
    """The training's Adam (benchbox.training.optimizer): PyTorch's fused implementation on the CPU where it
    exists; its updates equal the default implementation's to float rounding, with the learning rate set before
    every step as the trainer does; its state dict loads into either implementation."""
    from benchbox.training.optimizer import adam

    generator = torch.Generator().manual_seed(0)
    shapes = [(30, 20), (30,), (7, 5, 3)]
    start = [torch.randn(s, generator=generator) for s in shapes]
    runs = []
    for make in (lambda p: adam(p, lr=1e-2), lambda p: torch.optim.Adam(p, lr=1e-2)):
        params = [torch.nn.Parameter(s.clone()) for s in start]
        optimizer = make(params)
        grads = torch.Generator().manual_seed(1)
        for step in range(5):
            for group in optimizer.param_groups:
                group["lr"] = 1e-2 * (step + 1)
            for p in params:
                p.grad = torch.randn(p.shape, generator=grads)
            optimizer.step()
        runs.append((params, optimizer))
    (fused, fused_optimizer), (default, _) = runs
    if torch.__version__ >= (2, 4):  # a TorchVersion: compared as a version
        assert fused_optimizer.defaults["fused"] is True
    for a, b, s in zip(fused, default, start):
        assert not torch.equal(a, s)
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)
    plain = torch.optim.Adam([torch.nn.Parameter(s.clone()) for s in start], lr=1.0)
    plain.load_state_dict(fused_optimizer.state_dict())
    assert plain.state_dict()["state"][0]["exp_avg"].equal(fused_optimizer.state_dict()["state"][0]["exp_avg"])
