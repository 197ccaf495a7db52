"""The char-RNN encoders: vocabulary, pooling, padding invariance, ensembles and checkpoint errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from benchbox.encoders.char_rnn import CharGRU, CharGRUMax, CharLSTM, encoder_for
from benchbox.encoders.char_rnn_net import CharRNNNet, NetConfig, load_snapshot, save_snapshot
from benchbox.encoders.char_vocab import PAD, UNK, CharVocab
from benchbox.errors import BenchboxError
from benchbox.evaluation import load_encoder
from benchbox.registry import ENCODERS

VOCAB = CharVocab.build(["A dog runs on the grass.", "Two children, smiling!"])
SENTENCES = ["A dog", "", "Zürich ☃ — naïve", "Two children are smiling on the grass .", "a"]


def test_vocab_keeps_case_and_punctuation_and_maps_unknown_to_unk():
    assert {"A", "a", ".", ",", "!", " "} <= set(VOCAB.chars)
    assert VOCAB.ids("A") != VOCAB.ids("a")
    ids = VOCAB.ids("Zq☃")
    assert ids[1] == UNK and ids[2] == UNK and ids[0] == UNK  # Z, q and ☃ never seen
    assert VOCAB.ids("") == [UNK]
    chars, lengths = VOCAB.batch(["ab", "A dog"])
    assert chars.shape == (2, 5) and lengths.tolist() == [2, 5] and chars[0, 2:].eq(PAD).all()
    with pytest.raises(BenchboxError):
        CharVocab(("a", "a"))


@pytest.mark.parametrize("cls", [CharGRU, CharLSTM, CharGRUMax])
def test_encode_is_normalised_and_independent_of_batching(cls):
    enc = cls.untrained(VOCAB, hidden=8, feature_dim=6, seed=1)
    together = enc.encode(SENTENCES, batch_size=5)
    one_by_one = np.vstack([enc.encode([s], batch_size=1) for s in SENTENCES])
    assert together.shape == (5, 16) and together.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1, atol=1e-5)
    # padding is masked out of the pooling: the batch a sentence is in cannot change its embedding
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)
    assert enc.encode_images(np.stack([np.ones(6), np.linspace(-1, 1, 6)]).astype(np.float32)).shape == (2, 16)
    with pytest.raises(BenchboxError):
        enc.encode_images(np.ones((2, 5), np.float32))


def test_attention_is_per_dimension_as_in_merkx():
    net = CharRNNNet(VOCAB, NetConfig(hidden=8, feature_dim=None))
    att = net.caption.attention
    assert att.hidden.weight.shape == (128, 16) and att.out.weight.shape == (16, 128)


def test_max_pooling_is_the_max_over_valid_steps():
    torch.manual_seed(0)
    net = CharRNNNet(VOCAB, NetConfig(pooling="max", hidden=4, feature_dim=None))
    chars, lengths = VOCAB.batch(["A dog runs"])
    with torch.no_grad():
        out, _ = net.caption.rnn(net.caption.embed(chars))
        expected = torch.nn.functional.normalize(out.amax(dim=1), dim=1)
        torch.testing.assert_close(net.caption(chars, lengths), expected)


def test_registry_encoder_without_weights_says_how_to_train():
    with pytest.raises(BenchboxError, match="benchbox train char-gru"):
        ENCODERS.get("char-gru")()
    with pytest.raises(BenchboxError, match="train"):
        load_encoder("char-lstm")


def test_ensemble_averages_and_renormalises():
    a, b = (CharRNNNet(VOCAB, NetConfig(hidden=4, feature_dim=3)) for _ in range(2))
    ens = encoder_for([a, b])
    ea, eb = encoder_for([a]).encode(SENTENCES), encoder_for([b]).encode(SENTENCES)
    mean = (ea + eb) / 2
    np.testing.assert_allclose(ens.encode(SENTENCES), mean / np.linalg.norm(mean, axis=1, keepdims=True), atol=1e-5)
    assert ens.fingerprint() != encoder_for([a]).fingerprint()


def _run_folder(tmp_path, net, encoder="char-gru"):
    (tmp_path / "snapshots").mkdir()
    save_snapshot(net, tmp_path / "snapshots" / "epoch-004.pt", meta={"epoch": 4})
    manifest = {"kind": "train", "encoder": {"name": encoder}, "ensemble": ["snapshots/epoch-004.pt"]}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path


def test_load_trained_run_through_load_encoder(tmp_path):
    net = CharRNNNet(VOCAB, NetConfig(hidden=4, feature_dim=3))
    enc = load_encoder(_run_folder(tmp_path, net))
    assert isinstance(enc, CharGRU)
    np.testing.assert_allclose(enc.encode(SENTENCES), encoder_for([net]).encode(SENTENCES), atol=1e-6)
    assert load_snapshot(tmp_path / "snapshots" / "epoch-004.pt")[1] == {"epoch": 4}


def test_checkpoint_errors_are_clear(tmp_path):
    net = CharRNNNet(VOCAB, NetConfig(hidden=4, feature_dim=3))
    run = _run_folder(tmp_path, net)
    snap = run / "snapshots" / "epoch-004.pt"
    good = snap.read_bytes()
    snap.write_bytes(good[: len(good) // 2])  # truncated
    with pytest.raises(BenchboxError, match="corrupt"):
        load_encoder(run)
    snap.write_bytes(b"not a checkpoint at all")
    with pytest.raises(BenchboxError, match="corrupt"):
        load_encoder(run)
    torch.save({"format": "something else"}, snap)
    with pytest.raises(BenchboxError, match="not a char-RNN snapshot"):
        load_encoder(run)
    payload = torch.load(_save(net, tmp_path / "x.pt"), weights_only=True)
    payload["config"]["hidden"] = 5  # weights no longer fit the architecture
    torch.save(payload, snap)
    with pytest.raises(BenchboxError, match="incompatible"):
        load_encoder(run)
    (run / "snapshots" / "epoch-004.pt").unlink()
    with pytest.raises(BenchboxError, match="does not exist"):
        load_encoder(run)
    (tmp_path / "lstm").mkdir()
    lstm_run = _run_folder(tmp_path / "lstm", net, encoder="char-lstm")
    with pytest.raises(BenchboxError, match="not a char-lstm model"):
        load_encoder(lstm_run)


def _save(net, path):
    save_snapshot(net, path)
    return path


def test_a_pickled_object_is_refused(tmp_path):
    import argparse

    path = tmp_path / "evil.pt"
    torch.save({"format": "x", "obj": argparse.Namespace(a=1)}, path)  # arbitrary objects need unpickling
    with pytest.raises(BenchboxError, match="weights-only"):
        load_snapshot(path)


def _chars(lengths: list[int], width: int, vocab: int, seed: int) -> torch.Tensor:
    """Random character ids (1 … vocab − 1) within each length, PAD after it."""
    chars = torch.randint(1, vocab, (len(lengths), width), generator=torch.Generator().manual_seed(seed))
    chars[torch.arange(width)[None, :] >= torch.tensor(lengths)[:, None]] = PAD
    return chars


def _recurrent_and_grads(encoder, chars, lengths, packed):
    out = encoder.recurrent(chars, lengths, packed=packed)
    weights = out.detach().abs() + torch.linspace(0.5, 1.5, out.shape[-1])  # a loss that weighs every unit
    grads = torch.autograd.grad((out.square() * weights).sum(), list(encoder.embed.parameters()) +
                                list(encoder.rnn.parameters()))
    return out, grads


@pytest.mark.parametrize("rnn, products", [("gru", "onednn"), ("gru", "blas"), ("lstm", "blas")])
def test_cpu_training_path_equals_the_packed_layer(rnn, products, monkeypatch):
    """Training on the CPU runs the recurrent layer over the padded batch (no quadratic packed backward; a GRU
    by the scan of benchbox.encoders.gru_scan, with either kernel for its products): its outputs and the
    gradients of the embedding and recurrent weights equal the packed bidirectional layer's to float rounding,
    outputs past a caption's length are zero, and what sits in the padding never reaches a caption's outputs."""
    from benchbox.encoders import gru_scan
    from benchbox.encoders.char_rnn_net import CaptionEncoder

    if products == "onednn" and not gru_scan.onednn_available():
        pytest.skip("this PyTorch has no oneDNN linear")
    monkeypatch.setenv("BENCHBOX_GRU_PRODUCTS", products)
    torch.manual_seed(3)
    encoder = CaptionEncoder(12, NetConfig(rnn=rnn, hidden=24, char_dim=5, feature_dim=None))
    lengths = torch.tensor([7, 2, 4, 1, 7, 6])  # two captions end at each of several steps; a tie at the longest
    chars = _chars(lengths.tolist(), 9, 12, seed=0)  # two columns past the longest caption
    ours, ours_grads = _recurrent_and_grads(encoder, chars, lengths, packed=False)
    reference, reference_grads = _recurrent_and_grads(encoder, chars, lengths, packed=True)
    assert ours.shape == reference.shape == (6, 7, 48)
    torch.testing.assert_close(ours, reference, rtol=0, atol=1e-6)
    assert torch.equal(ours[1, 2:], torch.zeros(5, 48)) and torch.equal(ours[3, 1:], torch.zeros(6, 48))
    for name, mine, theirs in zip(["embed"] + [k for k, _ in encoder.rnn.named_parameters()], ours_grads,
                                  reference_grads):
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=1e-5 * float(theirs.abs().max()), msg=name)
    assert torch.equal(ours_grads[0][PAD], torch.zeros(5))  # the padding character's embedding stays zero
    garbage = chars.clone()
    garbage[1, 2:] = 5  # characters in the padding never change a caption's outputs
    torch.testing.assert_close(encoder.recurrent(garbage, lengths, packed=False)[1, :2], ours[1, :2], rtol=0,
                               atol=1e-6)


def test_onednn_and_blas_products_agree():
    """The two kernels for the scan's products give the same outputs and gradients to float rounding."""
    from benchbox.encoders import gru_scan
    from benchbox.encoders.char_rnn_net import CaptionEncoder

    if not gru_scan.onednn_available():
        pytest.skip("this PyTorch has no oneDNN linear")
    torch.manual_seed(4)
    encoder = CaptionEncoder(20, NetConfig(hidden=64, char_dim=8, feature_dim=None))
    lengths = torch.tensor([30, 28, 30, 25, 11, 29, 30, 27])
    chars = _chars(lengths.tolist(), 30, 20, seed=1)
    runs = []
    for products in ("onednn", "blas"):
        gru_scan.PRODUCTS = products
        try:
            runs.append(_recurrent_and_grads(encoder, chars, lengths, packed=False))
        finally:
            gru_scan.PRODUCTS = "auto"
    torch.testing.assert_close(runs[0][0], runs[1][0], rtol=0, atol=1e-6)
    for mine, theirs in zip(runs[0][1], runs[1][1]):
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=1e-5 * float(theirs.abs().max()))


@pytest.mark.slow
def test_gru_scan_gradients_are_exact():
    """The hand-written backward of the bidirectional GRU scan (both directions, captions of different lengths,
    rows dropping out as their captions end) against finite differences, in double precision."""
    from benchbox.encoders.gru_scan import bidirectional_gru

    generator = torch.Generator().manual_seed(0)
    chars = _chars([3, 5, 1, 3, 4], 6, 6, seed=2)
    lengths = torch.tensor([3, 5, 1, 3, 4])

    def parameter(*shape):
        return (0.5 * torch.randn(*shape, dtype=torch.float64, generator=generator)).requires_grad_(True)

    embedding = parameter(6, 2)
    weights = [parameter(*shape) for _ in range(2) for shape in ((9, 2), (9, 3), (9,), (9,))]
    assert torch.autograd.gradcheck(lambda e, *w: bidirectional_gru(chars, lengths, e, list(w)), (embedding, *weights))


def test_gru_scan_refuses_lengths_outside_the_batch():
    from benchbox.encoders.gru_scan import bidirectional_gru

    gru = torch.nn.GRU(2, 3, batch_first=True, bidirectional=True)
    weights = [p for p in gru.parameters()]
    for lengths in ([2, 0], [2, 4]):
        with pytest.raises(ValueError, match="length between 1 and"):
            bidirectional_gru(torch.ones(2, 3, dtype=torch.long), torch.tensor(lengths), torch.randn(4, 2), weights)
