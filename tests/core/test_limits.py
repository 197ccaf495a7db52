"""The length limit on sentences and captions (issue #19: a 1 MB caption made training grow to 24 GB for 37
minutes): one line naming the offender, before any encoding or training; ``$BENCHBOX_MAX_CHARS`` moves it."""

from __future__ import annotations

import pytest

from benchbox import load_encoder
from benchbox.data.captions import CaptionSplit
from benchbox.errors import BenchboxError
from benchbox.limits import DEFAULT_MAX_CHARS
from benchbox.training.nli_data import read_split
from tests.helpers import TableEncoder


def test_encoder_input_over_the_limit_is_refused_before_encoding():
    long = "a" * (DEFAULT_MAX_CHARS + 1)
    enc = TableEncoder({"ok": [1.0], long: [2.0]})
    with pytest.raises(BenchboxError) as info:
        enc.encode(["ok", long])
    assert str(info.value) == ("the sentence to encode at position 1 has 10,001 characters, over the limit of 10,000 "
                               "(it starts 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'): shorten or drop it, or raise "
                               "$BENCHBOX_MAX_CHARS")
    assert enc.calls == []  # nothing was encoded
    assert enc.encode(["ok"]).tolist() == [[1.0]]


def test_limit_is_configurable(monkeypatch):
    glove = load_encoder("glove-bow")
    monkeypatch.setenv("BENCHBOX_MAX_CHARS", "5")
    with pytest.raises(BenchboxError, match="has 6 characters, over the limit of 5"):
        glove.encode(["a cat", "a dog!"])
    assert glove.encode(["a cat"]).shape == (1, 50)
    monkeypatch.setenv("BENCHBOX_MAX_CHARS", "many")
    with pytest.raises(BenchboxError, match=r"\$BENCHBOX_MAX_CHARS must be a positive whole number of characters, not 'many'"):
        glove.encode(["a cat"])


def test_caption_over_the_limit_names_image_and_index():
    captions = ["A dog ."] * 7 + ["x" * 1_000_000] + ["A cat ."] * 2
    with pytest.raises(BenchboxError, match=r"^flickr8k train caption b\.jpg#2 has 1,000,000 characters, over the limit"):
        CaptionSplit("flickr8k", "train", ["a.jpg", "b.jpg"], captions, [])


def test_nli_pair_over_the_limit_names_file_and_line(tmp_path):
    (tmp_path / "s1.train").write_text("a man .\n" + "b" * 20_000 + "\n")
    (tmp_path / "s2.train").write_text("a person .\nsomeone .\n")
    (tmp_path / "labels.train").write_text("entailment\nneutral\n")
    with pytest.raises(BenchboxError, match=rf"^{tmp_path / 's1.train'}:2 has 20,000 characters"):
        read_split(tmp_path, "train")
