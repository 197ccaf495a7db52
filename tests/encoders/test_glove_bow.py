"""GloVe bag-of-words and the word-vector loaders."""

from __future__ import annotations

import numpy as np
import pytest

from benchbox import load_encoder
from benchbox.encoders.glove_bow import GloveBowEncoder
from benchbox.errors import BenchboxError
from benchbox.data.wordvec import load_word_vectors

GLOVE_TEXT = "the 1 0 0\ncat 0 2 0\nsat 0 0 4\nNew York 1 1 1\n"


@pytest.fixture
def glove_file(tmp_path):
    path = tmp_path / "tiny.glove.txt"
    path.write_text(GLOVE_TEXT, encoding="utf-8")
    return path


def test_mean_of_known_words_oov_skipped_zero_and_empty(glove_file):
    enc = GloveBowEncoder(vectors=glove_file)
    out = enc.encode(["the cat", "the dog cat", "dog", "", "sat sat the"])
    assert out.dtype == np.float32 and out.shape == (5, 3)
    assert out[0].tolist() == [0.5, 1.0, 0.0]
    assert out[1].tolist() == [0.5, 1.0, 0.0]  # "dog" is out of vocabulary: skipped
    assert out[2].tolist() == [0.0, 0.0, 0.0]  # no known word: the zero vector
    assert out[3].tolist() == [0.0, 0.0, 0.0]  # empty → "." (SentEval), unknown here → zero
    assert out[4].tolist() == pytest.approx([1 / 3, 0.0, 8 / 3])


def test_tokens_with_spaces_and_word2vec_header(tmp_path, glove_file):
    vectors = load_word_vectors(glove_file)
    assert vectors.index["New York"] == 3 and vectors.dim == 3
    w2v = tmp_path / "w2v.txt"
    w2v.write_text("2 3\nred 1 2 3\nblue 4 5 6\n", encoding="utf-8")
    loaded = load_word_vectors(w2v)
    assert loaded.words == ["red", "blue"]
    assert loaded.vectors[1].tolist() == [4, 5, 6]


def test_text_file_is_converted_once(glove_file, monkeypatch):
    import benchbox.data.wordvec as wordvec

    load_word_vectors(glove_file)
    monkeypatch.setattr(wordvec, "parse_text_vectors", lambda path: pytest.fail("parsed the text again"))
    assert load_word_vectors(glove_file).words[:3] == ["the", "cat", "sat"]


def test_npy_with_vocab(tmp_path):
    np.save(tmp_path / "v.npy", np.eye(2, dtype=np.float32))
    (tmp_path / "v.vocab.txt").write_text("a\nb\n")
    enc = GloveBowEncoder(vectors=tmp_path / "v.npy", lowercase=False)
    assert enc.encode(["a b", "B"]).tolist() == [[0.5, 0.5], [0.0, 0.0]]
    (tmp_path / "v.vocab.txt").write_text("a\n")
    with pytest.raises(BenchboxError, match="must match"):
        GloveBowEncoder(vectors=tmp_path / "v.npy")


@pytest.mark.parametrize(
    ("content", "message"),
    [("a 1 2\nb 1\n", "expected a word and 2 numbers"), ("a 1 x\n", "non-numeric"), ("", "no word vectors")],
)
def test_malformed_vector_files(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    with pytest.raises(BenchboxError, match=message):
        load_word_vectors(path)


def test_missing_vector_file_is_a_clear_error(tmp_path):
    with pytest.raises(BenchboxError, match="does not exist"):
        load_word_vectors(tmp_path / "nope.txt")


def test_real_glove_840b_excerpt(data_root):
    path = data_root.root / "wordvec/glove.840B.300d_top200/glove.840B.300d.top200.txt"
    vectors = load_word_vectors(path)
    assert len(vectors.words) == 200 and vectors.dim == 300
    assert vectors.words[0] == ","
    assert vectors.vectors[0, 0] == pytest.approx(-0.082752)
    enc = GloveBowEncoder(vectors=path)  # cased vectors: no lower-casing
    assert enc.lowercase is False


def test_packaged_glove_6b(glove):
    assert glove.dim == 50 and len(glove.word_vectors.words) == 400_000 and glove.lowercase
    wv = glove.word_vectors
    expected = (wv.vectors[wv.index["the"]] + wv.vectors[wv.index["cat"]]) / 2
    assert glove.encode(["The CAT"])[0] == pytest.approx(expected, abs=1e-6)


def test_fingerprint_follows_configuration(glove_file):
    a, b = GloveBowEncoder(vectors=glove_file), GloveBowEncoder(vectors=glove_file, lowercase=True)
    assert a.fingerprint() == GloveBowEncoder(vectors=glove_file).fingerprint()
    assert a.fingerprint() != b.fingerprint()


def test_registry_names_and_bad_input():
    assert isinstance(load_encoder("glove-bow"), GloveBowEncoder)
    with pytest.raises(BenchboxError, match="Did you mean glove-bow"):
        load_encoder("glove-bwo")
    with pytest.raises(BenchboxError, match="not a single string"):
        load_encoder("glove-bow").encode("a sentence")
    with pytest.raises(BenchboxError, match="sentence 1 is NoneType"):
        load_encoder("glove-bow").encode(["ok", None])
    out = load_encoder("glove-bow").encode(["naïve café ☃ \u200b", "\x00"])
    assert np.isfinite(out).all()
