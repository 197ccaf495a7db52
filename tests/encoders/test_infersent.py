"""InferSent (Conneau et al. 2017): official state-dict layout, both versions, v1 padding, loader errors.

Expected embeddings are computed independently: a plain ``torch.nn.LSTM`` holding the same weights runs on
each sentence alone (no batching, no packing), over word vectors parsed straight from the text file, and the
max is taken over its time steps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from benchbox import load_encoder
from benchbox.encoders.infersent_net import STATE_KEYS
from benchbox.errors import BenchboxError

WORDS = ["<s>", "</s>", "<p>", "</p>", "a", "man", "plays", "the", "guitar", "dog", "runs", "in", "park", "."]
SENTENCES = ["a man plays the guitar .", "the dog runs", "a dog runs in the park .", "man", "zzz unknown"]


def official_state(hidden: int, word_dim: int = 300, seed: int = 0) -> dict[str, torch.Tensor]:
    """A state dict with the key names and shapes of infersent1.pkl (from an nn.LSTM named enc_lstm)."""
    torch.manual_seed(seed)
    lstm = torch.nn.LSTM(word_dim, hidden, 1, bidirectional=True)
    state = {f"enc_lstm.{k}": v.detach().clone() for k, v in lstm.state_dict().items()}
    assert sorted(state) == sorted(STATE_KEYS)
    return state


def write_vectors(path: Path, words: list[str], dim: int = 300, seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    table = {w: rng.normal(0, 0.5, dim).astype(np.float32) for w in words}
    path.write_text("".join(f"{w} {' '.join(f'{x:.6f}' for x in v)}\n" for w, v in table.items()), encoding="utf-8")
    return parse_text(path)


def parse_text(path: Path) -> dict[str, np.ndarray]:
    """Independent reader: 'word x1 ... xd' lines (a 'count dim' header is skipped)."""
    table = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        word, *values = line.rstrip().split(" ")
        if len(values) > 1:
            table[word] = np.array(values, dtype=np.float32)
    return table


def reference(state: dict[str, torch.Tensor], table: dict[str, np.ndarray], sentence: str, markers=("<s>", "</s>")):
    hidden = state["enc_lstm.weight_hh_l0"].shape[1]
    lstm = torch.nn.LSTM(state["enc_lstm.weight_ih_l0"].shape[1], hidden, 1, bidirectional=True)
    lstm.load_state_dict({k.removeprefix("enc_lstm."): v for k, v in state.items()})
    words = [w for w in [markers[0], *sentence.split(), markers[1]] if w in table] or [markers[1]]
    x = torch.from_numpy(np.stack([table[w] for w in words]))[:, None, :]
    with torch.no_grad():
        return lstm(x)[0][:, 0, :].max(dim=0).values.numpy()


@pytest.fixture
def vec_file(tmp_path):
    path = tmp_path / "vectors.txt"
    return path, write_vectors(path, WORDS)


@pytest.fixture
def small(tmp_path):
    state = official_state(hidden=24)
    path = tmp_path / "infersent1.pkl"
    torch.save(state, path)
    return path, state


def test_released_size_state_dict_through_public_path(tmp_path, vec_file):
    """2048 units per direction, 300-d inputs → 4096-d, equal to nn.LSTM + max on each sentence alone."""
    state = official_state(hidden=2048)
    weights = tmp_path / "infersent1.pkl"
    torch.save(state, weights)
    enc = load_encoder("infersent", weights=str(weights), vectors=str(vec_file[0]), padding="masked")
    assert enc.version == 1 and enc.dim == 4096
    out = enc.encode(SENTENCES[:3])
    assert out.shape == (3, 4096) and out.dtype == np.float32
    for i, s in enumerate(SENTENCES[:3]):
        np.testing.assert_allclose(out[i], reference(state, vec_file[1], s), atol=2e-6)


def test_v1_padding_zeros_enter_the_max_for_shorter_sentences(small, vec_file):
    weights, state = small
    enc = load_encoder("infersent", weights=weights, vectors=vec_file[0])  # version 1 → padding v1 by default
    assert enc.config()["padding"] == "v1" and enc.config()["markers"] == ["<s>", "</s>"]
    out = enc.encode(SENTENCES)
    expected = [reference(state, vec_file[1], s) for s in SENTENCES]
    longest = int(np.argmax([len(s.split()) for s in SENTENCES]))  # "a dog runs in the park ." (9 steps)
    for i, exp in enumerate(expected):
        if i == longest:
            np.testing.assert_allclose(out[i], exp, atol=1e-6)
        else:  # padded: the zeros of the padding enter the max
            np.testing.assert_allclose(out[i], np.maximum(exp, 0.0), atol=1e-6)
    assert min(e.min() for e in expected) < 0  # so the clamp above is visible
    # a sentence alone in its batch has no padding, and batches follow bsize (the official encode)
    alone = enc.encode(["the dog runs"])
    np.testing.assert_allclose(alone[0], expected[1], atol=1e-6)
    one_per_batch = load_encoder("infersent", weights=weights, vectors=vec_file[0], bsize="1").encode(SENTENCES)
    np.testing.assert_allclose(one_per_batch, np.stack(expected), atol=1e-6)


def test_masked_padding_is_batch_independent_and_changes_fingerprint(small, vec_file):
    weights, state = small
    v1 = load_encoder("infersent", weights=weights, vectors=vec_file[0])
    fixed = load_encoder("infersent", weights=weights, vectors=vec_file[0], padding="masked")
    out = fixed.encode(SENTENCES)
    for i, s in enumerate(SENTENCES):
        np.testing.assert_allclose(out[i], reference(state, vec_file[1], s), atol=1e-6)
    assert fixed.fingerprint() != v1.fingerprint()


def test_version_2_markers_and_default_padding(tmp_path, vec_file):
    state = official_state(hidden=16, seed=3)
    weights = tmp_path / "infersent2.pkl"
    torch.save(state, weights)
    enc = load_encoder("infersent", weights=weights, vectors=vec_file[0])  # version from the file name
    assert enc.version == 2 and enc.config()["padding"] == "masked" and enc.config()["markers"] == ["<p>", "</p>"]
    out = enc.encode(SENTENCES)
    for i, s in enumerate(SENTENCES):
        np.testing.assert_allclose(out[i], reference(state, vec_file[1], s, ("<p>", "</p>")), atol=1e-6)
    v1 = load_encoder("infersent", weights=weights, vectors=vec_file[0], version="1", padding="masked")
    assert not np.allclose(v1.encode(SENTENCES[:1]), out[:1])


def test_no_known_word_and_empty_sentence(tmp_path, small):
    weights, state = small
    path = tmp_path / "few.txt"
    table = write_vectors(path, ["dog", "runs"])  # no markers in the vocabulary
    enc = load_encoder("infersent", weights=weights, vectors=path, padding="masked")
    out = enc.encode(["the dog runs", "", "zzz"])
    np.testing.assert_allclose(out[0], reference(state, table, "the dog runs"), atol=1e-6)
    lstm_on_zero = reference(state, {"</s>": np.zeros(300, np.float32)}, "")  # no word at all: one zero vector
    np.testing.assert_allclose(out[1], lstm_on_zero, atol=1e-6)
    np.testing.assert_allclose(out[2], lstm_on_zero, atol=1e-6)


def test_fingerprint_follows_weights_and_vectors(tmp_path, small, vec_file):
    weights, state = small
    base = load_encoder("infersent", weights=weights, vectors=vec_file[0])
    other_weights = tmp_path / "other.pkl"
    torch.save(official_state(hidden=24, seed=9), other_weights)
    other_vectors = tmp_path / "other.txt"
    write_vectors(other_vectors, WORDS, seed=7)
    assert load_encoder("infersent", weights=other_weights, vectors=vec_file[0]).fingerprint() != base.fingerprint()
    assert load_encoder("infersent", weights=weights, vectors=other_vectors).fingerprint() != base.fingerprint()
    assert load_encoder("infersent", weights=weights, vectors=vec_file[0]).fingerprint() == base.fingerprint()


def test_real_glove_840b_excerpt(data_root, small):
    """The real GloVe 840B file format (a word2vec-style header here): vectors reach the LSTM unchanged."""
    path = data_root.root / "wordvec/glove.840B.300d_top200/glove.840B.300d.top200.txt"
    if not path.is_file():
        pytest.skip("GloVe 840B excerpt not in the data root")
    weights, state = small
    table = parse_text(path)
    sentences = ["the people said that it is good .", "I think you 're right ."]  # "I" is not in the excerpt
    enc = load_encoder("infersent", weights=weights, vectors=path, padding="masked")
    assert enc.rows(["the"])[0] == [enc.word_vectors.index["the"]]  # markers <s>, </s>: not in the excerpt
    np.testing.assert_array_equal(enc.vectors_of(enc.rows(["the ."])[0]), np.stack([table["the"], table["."]]))
    out = enc.encode(sentences)
    for i, s in enumerate(sentences):
        np.testing.assert_allclose(out[i], reference(state, table, s), atol=1e-6)


def test_nltk_line_tokenisation_per_version(tmp_path, small):
    weights, _ = small
    path = tmp_path / "v.txt"
    write_vectors(path, ["is", "n't", "isn", "'t", "here", "."])
    v1 = load_encoder("infersent", weights=weights, vectors=path, tokenize="nltk-line")
    v2 = load_encoder("infersent", weights=weights, vectors=path, tokenize="nltk-line", version=2)
    assert v1._tokenizer("He isn't here.") == ["He", "is", "n't", "here", "."]
    assert v2._tokenizer("He isn't here.") == ["He", "isn", "'t", "here", "."]  # the official ~Moses tweak
    index = v1.word_vectors.index
    assert v1.rows(["He isn't here."])[0] == [index[w] for w in ["is", "n't", "here", "."]]


def test_nltk_without_punkt_data_says_what_to_do(small, vec_file):
    import nltk

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
        pytest.skip("punkt_tab is installed here")
    except LookupError:
        pass
    with pytest.raises(BenchboxError, match="punkt_tab.*nltk-line"):
        load_encoder("infersent", weights=small[0], vectors=vec_file[0], tokenize="nltk")


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: s.pop("enc_lstm.bias_hh_l0_reverse"), "missing enc_lstm.bias_hh_l0_reverse"),
        (lambda s: s.update({"encoder.extra": torch.zeros(1)}), "unexpected encoder.extra"),
        (lambda s: s.update({"enc_lstm.bias_ih_l0": torch.zeros(95)}), r"bias_ih_l0 has shape \(95,\)"),
        (lambda s: s.update({"enc_lstm.weight_hh_l0_reverse": torch.zeros(96, 23)}), "weight_hh_l0_reverse has shape"),
        (lambda s: s.update({"enc_lstm.weight_hh_l0": torch.zeros(96, 25)}), r"expected \[4·H, H\]"),
    ],
)
def test_state_dict_key_and_shape_errors(tmp_path, vec_file, change, message):
    state = official_state(hidden=24)
    change(state)
    path = tmp_path / "bad.pkl"
    torch.save(state, path)
    with pytest.raises(BenchboxError, match=message):
        load_encoder("infersent", weights=path, vectors=vec_file[0])


def test_missing_and_unreadable_files(tmp_path, small, vec_file):
    with pytest.raises(BenchboxError, match="needs the official weights"):
        load_encoder("infersent", vectors=vec_file[0])
    with pytest.raises(BenchboxError, match="not found"):
        load_encoder("infersent", weights=tmp_path / "nope.pkl", vectors=vec_file[0])
    with pytest.raises(BenchboxError, match="needs its word vectors"):
        load_encoder("infersent", weights=small[0])
    with pytest.raises(BenchboxError, match="does not exist"):
        load_encoder("infersent", weights=small[0], vectors=tmp_path / "nope.txt")
    pickled_module = tmp_path / "model.pickle"
    torch.save(torch.nn.Linear(2, 2), pickled_module)  # a whole pickled model, as infersent.allnli.pickle
    with pytest.raises(BenchboxError, match="weights_only"):
        load_encoder("infersent", weights=pickled_module, vectors=vec_file[0])
    with pytest.raises(BenchboxError, match="padding must be"):
        load_encoder("infersent", weights=small[0], vectors=vec_file[0], padding="none")


def test_vector_dimension_must_match_weights(tmp_path, small):
    path = tmp_path / "fifty.txt"
    write_vectors(path, WORDS, dim=50)
    with pytest.raises(BenchboxError, match="50-d but the InferSent weights expect 300-d"):
        load_encoder("infersent", weights=small[0], vectors=path)
