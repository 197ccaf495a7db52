"""``benchbox neighbours``: top-k corpus captions per query under several encoders, side by side."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.neighbours import neighbours, parse_corpus, top_k

runner = CliRunner()


def test_top_k_by_cosine_with_ties_in_corpus_order():
    corpus = np.array([[1, 0], [0, 1], [2, 0], [1, 1], [0, 0]], dtype=np.float32)
    index, score = top_k(np.array([[1, 0], [0, 3]], dtype=np.float32), corpus, 3)
    # query (1, 0): rows 0 and 2 tie at cosine 1 (row 0 first), then row 3 at 1/√2
    assert index.tolist() == [[0, 2, 3], [1, 3, 0]]
    np.testing.assert_allclose(score, [[1, 1, 2 ** -0.5], [1, 2 ** -0.5, 0]], atol=1e-6)
    index, _ = top_k(np.array([[1, 0]], dtype=np.float32), corpus, 10)
    assert index.shape == (1, 5) and index[0, -1] in (1, 4)  # k is capped at the corpus size


def test_neighbours_side_by_side_and_errors():
    corpus = ["a dog", "a cat", "the dog runs"]
    vectors = {"a dog": [1, 0], "a cat": [0, 1], "the dog runs": [0.9, 0.1], "dog?": [1, 0.05]}
    flipped = {k: v[::-1] for k, v in vectors.items()}
    embed = lambda table: (lambda sentences: np.array([table[s] for s in sentences], dtype=np.float32))  # noqa: E731
    found = neighbours({"A": embed(vectors), "B": embed(flipped)}, ["dog?"], corpus, k=2, corpus_name="toy")
    payload = found.to_dict()
    assert [n["sentence"] for n in payload["queries"][0]["neighbours"]["A"]] == ["a dog", "the dog runs"]
    assert [n["sentence"] for n in payload["queries"][0]["neighbours"]["B"]] == ["a dog", "the dog runs"]
    assert payload["queries"][0]["neighbours"]["A"][0]["cosine"] == pytest.approx(1 / np.hypot(1, 0.05), abs=1e-6)
    from benchbox.errors import BenchboxError

    with pytest.raises(BenchboxError, match="-k must be at least 1"):
        neighbours({"A": embed(vectors)}, ["dog?"], corpus, k=0)
    with pytest.raises(BenchboxError, match="DATASET\\[:SPLIT\\]"):
        parse_corpus("flickr30k")
    assert parse_corpus("flickr8k") == ("flickr8k", "train") and parse_corpus("coco:test") == ("coco", "test")


IDS = [f"{i:04d}_x.jpg" for i in range(4)]
CAPTIONS = [["A dog runs on grass", "A brown dog runs", "Dog running", "A dog outside", "A dog [bold]plays[/bold]"],
            ["A man rides a bike", "Cyclist on a road", "A man cycling", "A bike race", "A man on a bicycle"],
            ["Children swim in a pool", "Kids swimming", "A pool with children", "Two kids swim", "Swimming"],
            ["A dog runs on grass", "A cat sleeps", "A cat on a sofa", "Sleeping cat", "A cat naps"]]


@pytest.fixture
def root(tmp_path):
    flickr = tmp_path / "root/flickr8k"
    flickr.mkdir(parents=True)
    (flickr / "Flickr8k.token.txt").write_text(
        "".join(f"{image}#{k}\t{CAPTIONS[i][k]}\n" for i, image in enumerate(IDS) for k in range(5)))
    (flickr / "Flickr_8k.testImages.txt").write_text("".join(f"{image}\n" for image in IDS))
    return tmp_path / "root"


def test_cli_json_matches_the_encoder_and_tables_escape_markup(root, tmp_path, glove):
    queries = tmp_path / "q.txt"
    queries.write_text("a puppy plays outside\n\nsomeone on a bicycle\n")
    args = ["neighbours", "glove-bow", "--corpus", "flickr8k:test", "--data-dir", str(root),
            "--query", "kittens asleep", "--query-file", str(queries), "-k", "3"]
    result = runner.invoke(app, [*args, "--json", "-", "--quiet"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    corpus = list(dict.fromkeys(c + " ." for caps in CAPTIONS for c in caps))  # duplicates once, Merkx's full stop
    assert payload["corpus_size"] == len(corpus) == 19 and payload["k"] == 3
    assert [q["query"] for q in payload["queries"]] == ["kittens asleep", "a puppy plays outside", "someone on a bicycle"]
    assert payload["encoders"] == ["glove-bow"]
    x = glove.encode(corpus)
    q = glove.encode(["kittens asleep"])[0]
    cos = x @ q / (np.linalg.norm(x, axis=1) * np.linalg.norm(q))
    best = np.argsort(-cos, kind="stable")[:3]
    got = payload["queries"][0]["neighbours"]["glove-bow"]
    assert [n["sentence"] for n in got] == [corpus[i] for i in best]
    np.testing.assert_allclose([n["cosine"] for n in got], cos[best], atol=1e-5)
    table = runner.invoke(app, [*args[:-6], "--query", "dog [b]runs[/b]", "-k", "1"])
    assert table.exit_code == 0, table.output
    assert "“dog [b]runs[/b]”" in table.output  # data and queries are printed literally, never as markup
    assert "kittens" not in table.output and "│ 1 │" in table.output and "│ 2 │" not in table.output


def test_cli_errors_are_one_line(root):
    proc = subprocess.run([sys.executable, "-m", "benchbox", "neighbours", "glove-bow", "--corpus", "flickr30k",
                           "--query", "x", "--data-dir", str(root)], capture_output=True, text=True)
    assert proc.returncode == 2 and "DATASET[:SPLIT]" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "benchbox", "neighbours", "glove-bow", "--corpus", "flickr8k:test",
                           "--data-dir", str(root)], capture_output=True, text=True)
    assert proc.returncode == 2 and "no query" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "benchbox", "neighbours", "glove-bow", "glove-bow", "--query", "x",
                           "--corpus", "flickr8k:test", "--data-dir", str(root)], capture_output=True, text=True)
    assert proc.returncode == 2 and "glove-bow is named twice" in proc.stderr
