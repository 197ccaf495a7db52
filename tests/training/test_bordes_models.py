"""Bordes et al. (2019)'s models as published (docs/protocols.md#bordes-models): the presets against the paper's
Table 2 as quoted there (the markdown table is parsed, so docs and code cannot drift), the margins of its §3.4,
and its video context models F (first frame) and T (attention queried by the sum of the word vectors), §2.3."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from benchbox.data.clip_features import Clips
from benchbox.encoders.frame_attention import FrameAttention
from benchbox.errors import BenchboxError
from benchbox.training.clips import caption_queries, fixed_clip_vectors, make_query_encoder
from benchbox.training.config import LOSS_PRESETS, TrainConfig
from benchbox.training.losses import weighted_terms

PROTOCOL_PAGE = Path(__file__).resolve().parents[2] / "docs" / "protocols.md"
BASE = dict(encoder="char-gru", dataset="flickr8k")
#: the table's weight columns → the ``--loss`` terms they weight
COLUMNS = {"α_T": "textual", "α_P": "perceptual", "α_C": "cluster", "projection": "hinge-sum"}


def paper_table() -> dict[str, dict[str, float]]:
    """preset → {term: weight} of the nonzero weights in the table of docs/protocols.md#bordes-models."""
    section = PROTOCOL_PAGE.read_text(encoding="utf-8").split("\n### Bordes models\n", 1)[1].split("\n### ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    table = {}
    for row in rows[2:]:
        cells = dict(zip(header, (cell.strip() for cell in row.strip("|").split("|"))))
        table[cells["preset"].strip("`")] = {term: float(cells[col]) for col, term in COLUMNS.items()
                                             if float(cells[col]) != 0}
    return table


def test_every_preset_has_the_weights_of_the_papers_table():
    table = paper_table()
    assert table["bordes-b"] == {"perceptual": 0.1, "cluster": 1.0}  # M_b = M_A^p(0, 0.1, 1)
    assert set(table) == set(LOSS_PRESETS)
    for preset, terms in LOSS_PRESETS.items():
        assert dict(terms) == table[preset], preset


def test_the_cluster_margin_is_the_papers_and_recorded():
    config = TrainConfig(**BASE, visual="cluster", loss="bordes-c")
    assert config.cluster_margin == 0.5 and config.to_dict()["resolved"]["cluster_margin"] == 0.5  # §3.4: m = 0.5
    assert TrainConfig(**BASE, visual="cluster", loss="bordes-c", cluster_margin=0.3).to_dict()["resolved"][
        "cluster_margin"] == 0.3
    assert "cluster_margin" not in TrainConfig(**BASE, visual="random", loss="bordes-p").to_dict()["resolved"]
    # the projection baseline P ranks with m′ = 0.5 unless --margin; other ranking terms keep 0.2 (0.05 order)
    assert TrainConfig(**BASE, visual="random", loss="projection").to_dict()["resolved"]["margin"] == 0.5
    assert TrainConfig(**BASE, visual="random", loss="projection,textual=1", text_corpus="c.txt").resolved_margin == 0.5
    assert TrainConfig(**BASE, visual="random", loss="projection", margin=0.1).resolved_margin == 0.1
    assert TrainConfig(**BASE, visual="random", loss="hinge-sum").resolved_margin == 0.2


def test_the_cli_sets_the_cluster_margin(tmp_path):
    from typer.testing import CliRunner

    from benchbox.cli import app

    result = CliRunner().invoke(app, ["train", "char-gru", "--dataset", "flickr8k", "--visual", "cluster", "--loss",
                                      "bordes-c", "--cluster-margin", "-1", "--data-dir", str(tmp_path)])
    assert isinstance(result.exception, BenchboxError) and "--cluster-margin must be ≥ 0" in str(result.exception)


def test_the_cluster_loss_with_the_papers_margin_by_hand():
    """The hinge terms max(0, m − cos(anchor, partner) + cos(anchor, negative)), m = 0.5, both ways, on 3 visual
    items with two captions each (row i of ``anchors`` and ``partners``: item i): 2·3·2 = 12 terms, L_C their
    mean by default and their sum with ``--cluster-reduction sum`` (recorded)."""
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    partners = torch.tensor([[0.8, 0.6], [0.6, 0.8], [1.0, 0.0]])
    cos = [[1 * 0.8, 0.6, 1.0], [0.6, 0.8, 0.0], [0.6 * 0.8 + 0.8 * 0.6, 0.6 * 0.6 + 0.8 * 0.8, 0.6]]
    m = 0.5
    expected = sum(max(0.0, m - cos[i][i] + cos[i][j]) + max(0.0, m - cos[j][j] + cos[i][j])
                   for i in range(3) for j in range(3) if i != j)
    # (i, j): anchor-side + partner-side violations: (0,1) .3+.3, (0,2) .7+.9, (1,0) .3+.3, (1,2) 0+0,
    # (2,0) .86+.66, (2,1) .9+.7
    assert expected == pytest.approx(5.92)
    for reduction, value in (("mean", 5.92 / 12), ("sum", 5.92)):
        config = TrainConfig(**BASE, visual="cluster", loss="bordes-c", cluster_reduction=reduction)
        assert config.to_dict()["cluster_reduction"] == reduction
        # float32 cosines and sums of 12 terms of order 1: within 1e-6
        assert weighted_terms(config, anchors, None, partners, None)["cluster"].item() == pytest.approx(value, abs=1e-6)


def test_bordes_b_is_L_C_plus_a_tenth_of_L_P_by_hand():
    """M_b = M(α_T = 0, α_P = 0.1, α_C = 1) on the three items above: L_C = 5.92 / 12 (m = 0.5; 5.92 summed) and L_P = −Pearson r of
    the caption cosines and the visual cosines over the pairs i < j, written out."""
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    partners = torch.tensor([[0.8, 0.6], [0.6, 0.8], [1.0, 0.0]])
    visual = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])  # cosines (0,1) 1/√2, (0,2) 0, (1,2) 1/√2
    text = [0.0, 0.6, 0.8]  # caption cosines of the pairs (0,1), (0,2), (1,2)
    seen = [1 / math.sqrt(2), 0.0, 1 / math.sqrt(2)]
    t = [x - sum(text) / 3 for x in text]
    v = [x - sum(seen) / 3 for x in seen]
    pearson = sum(a * b for a, b in zip(t, v)) / math.sqrt(sum(a * a for a in t) * sum(b * b for b in v))
    assert -pearson == pytest.approx(0.27735, abs=1e-5)
    for reduction, cluster, total in (("mean", 5.92 / 12, 0.521068), ("sum", 5.92, 5.947735)):
        config = TrainConfig(**BASE, visual="random", loss="bordes-b", cluster_reduction=reduction)
        terms = weighted_terms(config, anchors, None, partners, visual)
        assert list(terms) == ["cluster", "perceptual"]
        for term, value in {"cluster": cluster, "perceptual": 0.1 * -pearson}.items():
            assert terms[term].item() == pytest.approx(value, abs=1e-6), (reduction, term)
        assert sum(terms.values()).item() == pytest.approx(total, abs=1e-6), reduction


def test_the_projection_baseline_ranks_sentence_anchors_only_by_hand():
    """P (their eq. 3): each sentence ranked against the other videos, margin m′ = 0.5; the symmetric form, which
    also ranks each video against the other sentences, is ``--ranking-anchors both`` (recorded). Three captions
    and three visual vectors, cosines s[i][j] (caption i, video j) written out."""
    captions = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    videos = torch.tensor([[0.8, 0.6], [0.6, 0.8], [1.0, 0.0]])
    s = [[0.8, 0.6, 1.0], [0.6, 0.8, 0.0], [0.96, 1.0, 0.6]]
    sentence_side = sum(max(0.0, 0.5 - s[i][i] + s[i][j]) for i in range(3) for j in range(3) if j != i)
    video_side = sum(max(0.0, 0.5 - s[j][j] + s[i][j]) for i in range(3) for j in range(3) if j != i)
    # sentence anchors: (0,1) .3, (0,2) .7, (1,0) .3, (1,2) 0, (2,0) .86, (2,1) .9; video anchors: the transposes
    assert (sentence_side, video_side) == (pytest.approx(3.06), pytest.approx(2.86))
    config = TrainConfig(**BASE, visual="random", loss="projection")
    assert config.to_dict()["resolved"]["ranking_anchors"] == "caption"
    assert weighted_terms(config, captions, videos, None, None)["hinge-sum"].item() == pytest.approx(3.06, abs=1e-6)
    both = TrainConfig(**BASE, visual="random", loss="projection", ranking_anchors="both")
    assert both.to_dict()["resolved"]["ranking_anchors"] == "both"
    assert weighted_terms(both, captions, videos, None, None)["hinge-sum"].item() == pytest.approx(5.92, abs=1e-6)
    # Merkx & Frank's hinge keeps both sides; a run recorded before the option read back as it ran
    assert TrainConfig(**BASE, visual="random", loss="hinge-sum").resolved_ranking_anchors == "both"
    legacy = {k: v for k, v in config.to_dict().items() if k != "ranking_anchors"}
    assert TrainConfig.from_dict(legacy).resolved_ranking_anchors == "both"
    assert TrainConfig.from_dict(config.to_dict()).resolved_ranking_anchors == "caption"


def test_the_cluster_reduction_and_the_ranking_anchors_are_recorded_and_checked():
    config = TrainConfig(**BASE, visual="cluster", loss="bordes-c")
    assert config.to_dict()["cluster_reduction"] == "mean"
    legacy = {k: v for k, v in config.to_dict().items() if k != "cluster_reduction"}  # recorded before the option
    assert TrainConfig.from_dict(legacy).cluster_reduction == "sum"
    assert TrainConfig.from_dict({**legacy, "visual": "random", "loss": "projection"}).cluster_reduction == "mean"
    with pytest.raises(BenchboxError, match="--cluster-reduction must be one of mean, sum, not 'max'"):
        TrainConfig(**BASE, visual="cluster", loss="bordes-c", cluster_reduction="max")
    with pytest.raises(BenchboxError, match="--cluster-reduction sum is only read with a cluster term; --loss "
                                            "projection has none"):
        TrainConfig(**BASE, visual="random", loss="projection", cluster_reduction="sum")
    with pytest.raises(BenchboxError, match="--ranking-anchors is only read with a ranking term"):
        TrainConfig(**BASE, visual="cluster", loss="bordes-c", ranking_anchors="both")
    # a run recorded before the options resumes under the same command when its objective is unchanged (Merkx &
    # Frank's two-sided hinge); a summed L_C is named as the difference
    merkx = TrainConfig(**BASE, visual="random")
    old = {k: v for k, v in merkx.to_dict().items() if k not in ("cluster_reduction", "ranking_anchors")}
    assert merkx.check_resume(TrainConfig.from_dict(old)) == merkx
    with pytest.raises(BenchboxError, match="cluster_reduction: run has 'sum', command gives 'mean'"):
        config.check_resume(TrainConfig.from_dict(legacy))


# ---------------------------------------------------------------- the video context: F and T (§2.3)
def test_F_is_the_first_frame_and_the_middle_one_a_recorded_choice():
    frames = np.array([[[1, 1], [2, 2], [3, 3]], [[4, 4], [5, 5], [9, 9]]], np.float32)  # clip 1: 2 frames + padding
    clips = Clips(frames, np.array([3, 2]))
    np.testing.assert_array_equal(fixed_clip_vectors("frame", clips), [[1, 1], [4, 4]])  # v = i_1
    np.testing.assert_array_equal(fixed_clip_vectors("frame", clips, "middle"), [[2, 2], [4, 4]])  # ⌊(n − 1)/2⌋
    clip_run = dict(BASE, dataset="msvd", video_captions="v", features="clips.npz", visual="frame")
    assert TrainConfig(**clip_run).to_dict()["frame"] == "first"
    stored = TrainConfig(**clip_run, frame="middle").to_dict()
    assert stored["frame"] == "middle" and TrainConfig.from_dict(stored).frame == "middle"
    legacy = {k: v for k, v in stored.items() if k != "frame"}  # a run recorded before --frame took the middle
    assert TrainConfig.from_dict(legacy).frame == "middle"
    with pytest.raises(BenchboxError, match="--frame must be one of first, middle, not 'last'"):
        TrainConfig(**clip_run, frame="last")
    with pytest.raises(BenchboxError, match="--frame middle is only read with --visual frame, not --visual average"):
        TrainConfig(**{**clip_run, "visual": "average"}, frame="middle")


def test_T_attends_with_the_sum_of_the_word_vectors_by_hand(tmp_path):
    """β_k = softmax_k(⟨Σ_w u_w, N·i_k⟩) on "A dog runs fast ." (three known words; "a" and "." unknown)."""
    words = tmp_path / "words.txt"
    words.write_text("dog 1 0\nruns 0 2\nfast 1 1\n")
    encoder = make_query_encoder(str(words))
    query = caption_queries(["A dog runs fast ."], encoder)
    np.testing.assert_allclose(query, [[2, 3]])  # (1, 0) + (0, 2) + (1, 1)
    np.testing.assert_allclose(caption_queries(["A dog runs fast ."], encoder, "mean"), [[2 / 3, 1]], rtol=1e-6)
    attention = FrameAttention(2, 2)
    with torch.no_grad():
        attention.project.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 0.5]]))  # N·q = (2, 1.5)
    frames = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])  # i_1, i_2, i_3
    scores = [2.0, 1.5, 3.5]  # ⟨N q, i_k⟩
    expected = [math.exp(s) / sum(math.exp(t) for t in scores) for s in scores]
    beta = attention.weights(frames, torch.tensor([3]), torch.from_numpy(query))
    np.testing.assert_allclose(beta[0].detach().numpy(), expected, rtol=1e-6)
    assert expected[2] == pytest.approx(0.7361, abs=1e-4)


def test_the_attention_query_is_recorded_and_checked():
    clip_run = dict(BASE, dataset="msvd", video_captions="v", features="clips.npz", visual="attention",
                    loss="projection")
    assert TrainConfig(**clip_run).to_dict()["attention_query"] == "sum"
    stored = TrainConfig(**clip_run, attention_query="mean").to_dict()
    assert TrainConfig.from_dict(stored).attention_query == "mean"
    assert TrainConfig.from_dict({k: v for k, v in stored.items() if k != "attention_query"}).attention_query == "mean"
    with pytest.raises(BenchboxError, match="--attention-query mean is only read with --visual attention"):
        TrainConfig(**{**clip_run, "visual": "frame"}, attention_query="mean")
