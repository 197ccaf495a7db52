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
    assert enc.encode_images(np.ones((2, 6), np.float32)).shape == (2, 16)
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


@pytest.mark.parametrize("rnn", ["gru", "lstm"])
def test_cpu_training_path_equals_the_packed_layer(rnn):
    """Training on the CPU runs each direction over the padded batch (no quadratic packed backward): its
    outputs and gradients equal the packed bidirectional layer's to float rounding, and padded steps never
    reach a caption's outputs."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    from benchbox.encoders.char_rnn_net import bidirectional_padded

    torch.manual_seed(3)
    module = torch.nn.GRU(5, 8, batch_first=True, bidirectional=True) if rnn == "gru" else \
        torch.nn.LSTM(5, 8, batch_first=True, bidirectional=True)
    lengths = torch.tensor([6, 2, 4, 1])
    x = torch.randn(4, 6, 5)
    padded_x = x.clone().requires_grad_(True)
    ours = bidirectional_padded(module, padded_x, lengths)
    (ours.square().sum()).backward()
    ours_grads = [p.grad.clone() for p in module.parameters()]
    module.zero_grad()
    packed_x = x.clone().requires_grad_(True)
    reference = pad_packed_sequence(module(pack_padded_sequence(packed_x, lengths, batch_first=True,
                                                                enforce_sorted=False))[0], batch_first=True)[0]
    (reference.square().sum()).backward()
    assert torch.allclose(ours, reference, atol=1e-6) and torch.equal(ours[1, 2:], torch.zeros(4, 16))
    for mine, theirs in zip(ours_grads, (p.grad for p in module.parameters())):
        assert torch.allclose(mine, theirs, atol=1e-5)
    assert torch.allclose(padded_x.grad, packed_x.grad, atol=1e-6)
    garbage = x.clone()
    garbage[1, 2:] = 100.0  # what sits in the padding never changes a caption's outputs
    assert torch.allclose(bidirectional_padded(module, garbage, lengths)[1, :2], ours[1, :2], atol=1e-6)


def test_gru_scan_gradients_are_exact():
    """The hand-written backward of the GRU scan against finite differences (double precision)."""
    from benchbox.encoders.gru_scan import gru_scan

    torch.manual_seed(0)
    x = torch.randn(3, 4, 2, dtype=torch.float64, requires_grad=True)
    weights = [torch.randn(shape, dtype=torch.float64, requires_grad=True) * 0.5 for shape in ((9, 2), (9, 3), (9,), (9,))]
    weights = [w.detach().requires_grad_(True) for w in weights]
    assert torch.autograd.gradcheck(gru_scan, (x, *weights))
