"""A ``clip`` model folder without its tokenizer is refused naming the missing tokenizer and the files expected
(issue #40): transformers built an empty tokenizer for a CLIP folder (every sentence the same tokens), which was
reported as "a constant encoder", and failed on a SigLIP folder with "Unrecognized configuration class"."""

from __future__ import annotations

import shutil

import pytest

from benchbox import load_encoder
from benchbox.errors import BenchboxError
from tests.vl_models import save_tiny_clip, save_tiny_siglip

SAVERS = {"clip": save_tiny_clip, "siglip": save_tiny_siglip}


@pytest.mark.parametrize("kind", sorted(SAVERS))
def test_a_folder_without_its_tokenizer_is_refused_naming_the_files_expected(tmp_path, kind):
    folder = SAVERS[kind](tmp_path / kind)
    assert load_encoder("clip", model=str(folder)).encode(["a dog", "two cats"]).shape[0] == 2
    bare = tmp_path / f"{kind}-without-tokenizer"
    bare.mkdir()
    for name in ("config.json", "model.safetensors", "preprocessor_config.json"):
        shutil.copy(folder / name, bare / name)
    with pytest.raises(BenchboxError) as caught:
        load_encoder("clip", model=str(bare)).encode(["a dog", "two cats"])
    message = str(caught.value)
    assert message.startswith(f"{bare} holds no tokenizer (none of tokenizer.json, vocab.json, spiece.model, "
                              "sentencepiece.bpe.model, tokenizer.model, vocab.txt; CLIP's is tokenizer.json or "
                              "vocab.json with merges.txt, SigLIP's spiece.model)")
    assert "save the model's tokenizer into the folder" in message and "constant" not in message
