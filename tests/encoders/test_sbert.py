"""``sbert``: the packaged all-MiniLM-L6-v2, offline (Reimers & Gurevych 2019)."""

from __future__ import annotations

import numpy as np
import pytest

from benchbox import load_encoder
from benchbox.encoding.loading import record_without_loading
from benchbox.encoders.sbert import SBertEncoder, digest_folder
from benchbox.storage.identity import encoder_record
from benchbox.errors import BenchboxError


@pytest.fixture(scope="module")
def sbert():
    return load_encoder("sbert")


def test_encodes_offline_paraphrases_closer_than_unrelated(sbert):
    out = sbert.encode(["A man is playing a guitar.", "A person plays the guitar.", "The stock market fell sharply.", ""])
    assert out.shape == (4, 384) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out[:3], axis=1), 1.0, atol=1e-5)  # the model's Normalize module
    cos = out[:3] @ out[:3].T
    assert cos[0, 1] > 0.7 and cos[0, 2] < 0.2 and cos[1, 2] < 0.2


def test_batching_does_not_change_embeddings(sbert):
    sentences = ["two dogs run on the beach", "a child eats an apple", "the sky is blue"]
    np.testing.assert_allclose(sbert.encode(sentences, batch_size=1), sbert.encode(sentences, batch_size=3), atol=1e-5)


def test_description_and_fingerprint(sbert, tmp_path):
    assert "SNLI" in sbert.description and "Flickr30k" in sbert.description and "SICK" in sbert.description
    assert sbert.config()["model"] == "all-MiniLM-L6-v2" and sbert.dim == 384
    (tmp_path / "a.txt").write_text("x")
    before = digest_folder(tmp_path)
    (tmp_path / "a.txt").write_text("y")
    assert digest_folder(tmp_path) != before  # a changed model file changes the fingerprint


def test_named_model_not_available_offline():
    with pytest.raises(BenchboxError, match="not available offline"):
        load_encoder("sbert", model="sentence-transformers/surely-not-a-cached-model-xyz")


def test_folder_that_is_not_a_model(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"\0" * 10)
    with pytest.raises(BenchboxError, match="is a file"):
        load_encoder("sbert", model=tmp_path / "weights.bin")


def test_its_identity_is_read_from_the_model_folder_without_loading_it(sbert, tmp_path):
    """What compare looks up a reusable run with (issue 41: it loaded the model only to reuse a run)."""
    assert record_without_loading("sbert") == encoder_record(sbert)
    (tmp_path / "modules.json").write_text('[{"path": "", "type": "sentence_transformers.models.Transformer"}, '
                                           '{"path": "2_Dense", "type": "sentence_transformers.models.Dense"}]')
    assert SBertEncoder.identity_unloaded(model=str(tmp_path)) is None  # a layout it cannot read: loaded instead
