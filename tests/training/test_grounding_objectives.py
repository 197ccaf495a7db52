"""Weighted training objectives (Bordes et al. 2019's M(α_T, α_P, α_C)), their presets and per-term logging."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from benchbox.data.root import DataRoot
from benchbox.errors import BenchboxError
from benchbox.training import losses
from benchbox.training.config import LOSS_PRESETS, TrainConfig, parse_loss
from benchbox.training.losses import weighted_terms

BASE = dict(encoder="char-gru", dataset="flickr8k")


@pytest.mark.parametrize("spec, visual, terms", [
    ("hinge-sum", "random", (("hinge-sum", 1.0),)),
    ("cluster", "random", (("hinge-sum", 1.0), ("cluster", 1.0))),  # the single name keeps its meaning
    ("cluster", "cluster", (("cluster", 1.0),)),
    ("perceptual", "random", (("hinge-sum", 1.0), ("perceptual", 1.0))),
    ("bordes-c", "cluster", (("cluster", 1.0),)),
    ("bordes-b", "random", (("cluster", 1.0), ("perceptual", 0.1))),
    ("projection", "random", (("hinge-sum", 1.0),)),
    ("cluster=1,perceptual=0.1,hinge-sum=1", "random", (("cluster", 1.0), ("perceptual", 0.1), ("hinge-sum", 1.0))),
    (" cluster = 2 ", "cluster", (("cluster", 2.0),)),
])
def test_loss_specs_parse_to_weighted_terms(spec, visual, terms):
    assert parse_loss(spec, visual) == terms
    config = TrainConfig(**BASE, visual=visual, loss=spec)
    assert config.loss_terms == terms
    assert config.to_dict()["resolved"]["loss_terms"] == dict(terms)
    assert TrainConfig.from_dict(config.to_dict()) == config


@pytest.mark.parametrize("spec, visual, message", [
    ("bordes-b", "cluster", "perceptual, which needs a visual side.*--visual random"),
    ("projection", "cluster", "hinge-sum, which needs a visual side"),
    ("cluster=1,perceptual=1", "cluster", "perceptual, which needs"),
    ("cluster=1,banana=2", "random", "'banana=2' is not TERM=WEIGHT"),
    ("cluster=0", "random", "positive number"),
    ("cluster=x", "random", "not a number"),
    ("cluster=nan", "random", "positive number"),
    ("cluster=1,cluster=2", "random", "twice"),
    ("hinge-sum=1,order=1", "random", "one ranking term"),
    ("triplet", "random", "a preset \\(bordes-c"),
])
def test_bad_loss_specs_fail_early_with_one_clear_line(spec, visual, message):
    with pytest.raises(BenchboxError, match=message):
        TrainConfig(**BASE, visual=visual, loss=spec)


def test_every_preset_works_with_random_anchors():
    for preset in LOSS_PRESETS:
        assert TrainConfig(**BASE, visual="random", loss=preset).loss_terms == LOSS_PRESETS[preset]


def test_margins_and_the_order_term():
    assert TrainConfig(**BASE, visual="random", loss="order=1,cluster=1").resolved_margin == 0.05
    assert TrainConfig(**BASE, visual="random", loss="bordes-b").resolved_margin == 0.2
    assert TrainConfig(**BASE, visual="random", loss="bordes-c").needs_partner
    assert not TrainConfig(**BASE, visual="random", loss="bordes-p").needs_partner


def test_weighted_terms_are_the_weighted_losses_and_keep_the_single_names_identical():
    g = torch.Generator().manual_seed(0)
    unit = lambda *shape: torch.nn.functional.normalize(torch.randn(*shape, generator=g), dim=1)  # noqa: E731
    captions, images, partners, visual = unit(8, 6), unit(8, 6), unit(8, 6), torch.randn(8, 10, generator=g)
    config = TrainConfig(**BASE, visual="random", loss="cluster=1,perceptual=0.1,hinge-sum=2")
    terms = weighted_terms(config, captions, images, partners, visual)
    assert list(terms) == ["cluster", "perceptual", "hinge-sum"]
    assert terms["cluster"] == losses.cluster_loss(captions, partners, 0.5)
    assert torch.allclose(terms["perceptual"], 0.1 * losses.perceptual_loss(captions, visual))
    assert torch.allclose(terms["hinge-sum"], 2 * losses.hinge_sum(captions @ images.t(), 0.2))
    # the former single names: hinge + cluster toward the visual side; under --visual cluster, hinge on partners
    legacy = weighted_terms(TrainConfig(**BASE, visual="random", loss="cluster"), captions, images, partners, None)
    assert sum(legacy.values()) == losses.hinge_sum(captions @ images.t(), 0.2) + losses.cluster_loss(captions, partners, 0.5)
    on_partners = weighted_terms(TrainConfig(**BASE, visual="cluster"), captions, None, partners, None)
    assert on_partners["hinge-sum"] == losses.hinge_sum(captions @ partners.t(), 0.2)


# ---------------------------------------------------------------- training on the real Flickr8k captions

ROOT = DataRoot()
needs_flickr = pytest.mark.realdata("flickr8k/Flickr8k.token.txt")
TINY = dict(encoder="char-gru", dataset="flickr8k", hidden=16, epochs=2, cycle_epochs=1, max_captions=320,
            threads=1, checkpoint_every=0)


@needs_flickr
def test_weighted_run_logs_terms_that_sum_to_the_total(tmp_path):
    from benchbox.training.trainer import Trainer

    config = TrainConfig(**TINY, visual="random", loss="cluster=1,perceptual=0.1,hinge-sum=1")
    history = pd.read_csv(Trainer.from_config(config, tmp_path / "run").run() / "history.csv")
    terms = ["loss_cluster", "loss_perceptual", "loss_hinge-sum"]
    assert set(terms) <= set(history.columns) and len(history) == 2
    # the total is summed in float32 on the device, the logged means in float64: equal to float32 precision
    pd.testing.assert_series_equal(history[terms].sum(axis=1), history["loss"], check_names=False, rtol=1e-6)
    assert (history["loss_perceptual"].abs() <= 0.1).all()  # 0.1 × (−Pearson r), |r| ≤ 1
    assert (history["loss_cluster"] > 0).all() and (history["loss_hinge-sum"] > 0).all()


@needs_flickr
def test_cluster_objective_raises_intra_minus_inter_over_the_untrained_model(tmp_path):
    """Bordes et al.'s cluster hypothesis, measured on held-out captions (Flickr8k dev, 200 images): the same
    network (same seed, same initial weights) after training with bordes-c separates images' captions better."""
    import copy

    from benchbox.data.captions import load_flickr8k
    from benchbox.encoders.char_rnn import encoder_for
    from benchbox.evaluation import load_encoder
    from benchbox.tasks.structure_measures import per_image_means
    from benchbox.training.trainer import Trainer

    captions = load_flickr8k(ROOT, "dev").captions[: 5 * 200]
    config = TrainConfig(**{**TINY, "max_captions": 1000}, visual="cluster", loss="bordes-c")
    trainer = Trainer.from_config(config, tmp_path / "run")
    untrained = encoder_for([copy.deepcopy(trainer.net).eval()])
    trained = load_encoder(trainer.run())

    def gap(encoder) -> float:
        intra, inter = per_image_means(encoder.encode(captions), 5)
        return float((intra - inter).mean())

    before, after = gap(untrained), gap(trained)
    assert after > before + 0.05, (before, after)
