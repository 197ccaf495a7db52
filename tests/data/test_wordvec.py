"""Word-vector text files that used to change the numbers silently (issue #19): wrong widths, non-finite values,
duplicate words, a byte-order mark, and a converted-vectors cache that was altered or partly deleted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchbox.errors import BenchboxError
from benchbox.data.wordvec import cache_dir, load_word_vectors

ROWS = ["the 1 0 0", "cat 0 2 0", "sat 0 0 4", "on 1 1 0", "mat 0 1 1"]


def write(tmp_path, lines, name="v.txt", prefix=""):
    path = tmp_path / name
    path.write_text(prefix + "\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        # a short first line no longer sets the dimension: the majority of the first lines does
        (["the 1 0", *ROWS[1:]], r"v.txt:1: expected a word and 3 numbers, found 2 values"),
        # one extra value on a later line was read as the word "on 1"
        ([*ROWS[:3], "on 1 1 0 9", *ROWS[4:]], r"v.txt:4: expected a word and 3 numbers, found more values"),
        # a header whose dimension is one short turned every word into "word <first value>"
        (["5 2", *ROWS], r"v.txt:2: expected a word and 2 numbers, found more values"),
        (["6 3", *ROWS], r"header announces 6 words but the file holds 5"),
        ([*ROWS[:2], "sat 0 nan 4", *ROWS[3:]], r"v.txt:3: the vector of 'sat' holds a non-finite value"),
        ([*ROWS[:2], "sat 0 inf 4", *ROWS[3:]], r"v.txt:3: .*non-finite"),
        ([*ROWS[:2], "sat 0 1e39 4", *ROWS[3:]], r"v.txt:3: .*beyond float32 range"),
        ([*ROWS, "cat 9 9 9"], r"v.txt:6: the word 'cat' is listed again \(first at line 2\)"),
    ],
)
def test_bad_vector_lines_name_file_and_line(tmp_path, lines, message):
    with pytest.raises(BenchboxError, match=message):
        load_word_vectors(write(tmp_path, lines))


def test_byte_order_mark_keeps_the_first_word(tmp_path):
    vectors = load_word_vectors(write(tmp_path, ROWS, prefix="\ufeff"))
    assert vectors.words[0] == "the" and vectors.index["the"] == 0 and vectors.dim == 3


def test_words_with_spaces_and_numeric_words_still_load(tmp_path):
    vectors = load_word_vectors(write(tmp_path, [*ROWS, "New York 1 1 1", "1 0 0 1"]))
    assert vectors.words[-2:] == ["New York", "1"] and vectors.vectors[-1].tolist() == [0, 0, 1]


def _conversion(path):
    load_word_vectors(path)
    (folder,) = [p for p in cache_dir().iterdir() if not p.name.startswith(".")]
    return folder


@pytest.mark.parametrize("damage", ["alter", "truncate", "delete-words", "delete-checksum"])
def test_damaged_conversion_is_rebuilt(tmp_path, damage):
    path = write(tmp_path, ROWS)
    folder = _conversion(path)
    checksum = json.loads((folder / "checksum.json").read_text())
    assert set(checksum) == {"vectors.npy", "words.txt"}
    if damage == "alter":  # same shape, other values: once the numbers silently changed
        np.save(folder / "vectors.npy", np.full((5, 3), 7, np.float32))
    elif damage == "truncate":  # once failed on every run and was never rebuilt
        data = (folder / "vectors.npy").read_bytes()
        (folder / "vectors.npy").write_bytes(data[: len(data) - 8])
    elif damage == "delete-words":
        (folder / "words.txt").unlink()
    else:
        (folder / "checksum.json").unlink()
    vectors = load_word_vectors(path)
    assert vectors.words == ["the", "cat", "sat", "on", "mat"]
    assert np.asarray(vectors.vectors).tolist() == [[1, 0, 0], [0, 2, 0], [0, 0, 4], [1, 1, 0], [0, 1, 1]]
    assert json.loads((folder / "checksum.json").read_text()) == checksum


@pytest.mark.parametrize(("given", "kind"), [("folder", "a folder"), ("/dev/null", "a device")])
def test_a_folder_or_device_given_as_vectors_is_named_as_what_it_is(tmp_path, capsys, given, kind):
    """Bug (issue 55): ``-e vectors=/etc`` and ``-e vectors=/dev/null`` were reported as "does not exist"."""
    from tests.helpers import cli

    path = tmp_path if given == "folder" else given
    code, _, err = cli(capsys, "eval", "glove-bow", "-e", f"vectors={path}", "--task", "sickr-cosine",
                       "--runs-dir", str(tmp_path / "runs"), "--no-cache")
    assert code == 2
    assert f"word vector file {path} is {kind}, not a regular file" in err
    assert "does not exist" not in err
    with pytest.raises(BenchboxError, match="does not exist"):  # a missing file is still named as missing
        load_word_vectors(tmp_path / "missing.txt")
