"""Vendrov et al.'s order-violation entailment: the penalty and the dev threshold by hand, a hand-built order
encoder whose test accuracy is known (SICK layout and an SNLI folder), the refusal of other encoders, the paired
test in compare, and a tiny char-GRU trained with the order term."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchbox.data.root import DataRoot
from benchbox.encoding.protocol import Encoder, ImageTextEncoder
from benchbox.errors import BenchboxError
from benchbox.evaluation import load_encoder, run_tasks
from benchbox.stats import wilson_ci
from benchbox.task_contract.protocol import EvalContext
from benchbox.task_contract.options import TaskOptions, resolve_options
from benchbox.tasks.order_entailment import OrderEntailment, best_threshold, order_penalty

HEAD = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment"
#: dev: entailment iff every word of B is in A, so the threshold falls between penalties 0 and 1
DEV = [("a man runs fast", "a man runs", "ENTAILMENT"), ("a dog sleeps", "a dog", "ENTAILMENT"),
       ("a man runs", "a man runs fast", "NEUTRAL"), ("a cat sits", "a dog sits", "CONTRADICTION"),
       ("a man", "a woman sings", "NEUTRAL")]
#: test: 8 pairs the word order gets right, then two it cannot (a hypernym, a negation): accuracy 8/10
TEST = [("a man plays guitar", "a man plays", "ENTAILMENT"), ("two dogs run in a park", "two dogs run", "ENTAILMENT"),
        ("a woman cuts an onion", "a woman cuts", "ENTAILMENT"), ("a boy jumps", "a boy jumps high", "NEUTRAL"),
        ("a girl sings", "a boy sings", "CONTRADICTION"), ("a cat", "a dog barks", "NEUTRAL"),
        ("people dance", "nobody dances", "CONTRADICTION"), ("a man is cooking food", "a man is cooking", "ENTAILMENT"),
        ("a man rides a horse", "a person rides an animal", "ENTAILMENT"),
        ("a man is not sleeping", "a man is sleeping", "CONTRADICTION")]
VOCAB = sorted({w for a, b, _ in DEV + TEST for w in (a + " " + b).split()})


class WordSets(ImageTextEncoder):
    """Word-indicator vectors in the order similarity: E(p, h) counts the words of h missing from p."""

    name = "word-sets"
    similarity = "order"

    @property
    def dim(self) -> int:
        return len(VOCAB)

    def config(self):
        return {}

    def weights_digest(self) -> str:
        return self.name

    def _encode(self, sentences, batch_size):
        return np.array([[float(w in s.split()) for w in VOCAB] for s in sentences], np.float32)

    def encode_images(self, features):
        return np.asarray(features, np.float32)


class ShortWords(WordSets):
    """Indicators of the words of at most 3 letters only: misses what tells some test pairs apart."""

    name = "short-words"

    def _encode(self, sentences, batch_size):
        return np.array([[float(w in s.split() and len(w) <= 3) for w in VOCAB] for s in sentences], np.float32)


class CosineWords(WordSets):
    name = "cosine-words"
    similarity = "cosine"


def write_sick(root: Path) -> None:
    folder = root / "senteval/downstream/SICK"
    folder.mkdir(parents=True)
    for name, rows in (("SICK_trial.txt", DEV), ("SICK_test_annotated.txt", TEST)):
        lines = [HEAD] + [f"{i}\t{a}\t{b}\t3.0\t{label}" for i, (a, b, label) in enumerate(rows)]
        (folder / name).write_text("\n".join(lines) + "\n")


def evaluate(encoder: Encoder, root: Path, **task_options):
    options = TaskOptions(task_options={"order-entailment": task_options} if task_options else {})
    task = OrderEntailment()
    values = resolve_options([task], options)
    task.required_files(values[task.name])
    ctx = EvalContext(data=DataRoot(root, use_embedded=False), embed=encoder.encode, options=options)
    return task.evaluate(encoder, ctx)


def test_penalty_and_threshold_by_hand():
    p = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]])
    h = np.array([[0.5, 1.0, 4.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(order_penalty(p, h), [1 + 4, 0])  # only coordinates where h exceeds p count
    # candidates -1, 0.5, 1.5, 2.5, 4 score 1, 2, 3, 2, 3 correct: the smallest best is 1.5
    assert best_threshold(np.array([0.0, 1.0, 2.0, 3.0]), np.array([True, True, False, True])) == (1.5, 0.75)
    assert best_threshold(np.array([2.0, 2.0]), np.array([False, False])) == (1.0, 1.0)  # nothing is entailment


def test_known_accuracy_interval_and_items(tmp_path):
    write_sick(tmp_path)
    result = evaluate(WordSets(), tmp_path)
    metrics = {(r.subset, r.metric): r for r in result.metrics}
    test = metrics["test", "accuracy"]
    low, high = wilson_ci(8, 10)
    assert (test.value, test.ci_low, test.ci_high, test.n) == pytest.approx((80.0, 100 * low, 100 * high, 10))
    assert metrics["dev", "accuracy"].value == 100.0
    assert result.protocol["threshold"] == 0.5 and result.protocol["dataset"] == "sick"
    items = result.items
    assert items["gold"].tolist() == [1, 1, 1, 0, 0, 0, 0, 1, 1, 0]
    assert items["penalty"].tolist() == [0, 0, 0, 1, 1, 2, 2, 0, 3, 0]
    assert items["correct"].tolist() == [1] * 8 + [0, 0]
    assert set(result.data_checksums) == {"senteval/downstream/SICK/SICK_trial.txt",
                                          "senteval/downstream/SICK/SICK_test_annotated.txt"}


def test_snli_folder_dev_and_test_only(tmp_path):
    folder = tmp_path / "nli"
    folder.mkdir()
    labels = {"ENTAILMENT": "entailment", "NEUTRAL": "neutral", "CONTRADICTION": "contradiction"}
    for split, rows in (("dev", DEV), ("test", TEST)):
        for part, column in (("s1", 0), ("s2", 1)):
            (folder / f"{part}.{split}").write_text("".join(f"{r[column]}\n" for r in rows))
        (folder / f"labels.{split}").write_text("".join(f"{labels[r[2]]}\n" for r in rows))
    result = evaluate(WordSets(), tmp_path, dataset="snli", path=str(folder))
    assert next(r.value for r in result.metrics if r.subset == "test") == 80.0
    assert result.protocol["dataset"] == "snli" and len(result.data_checksums) == 6
    with pytest.raises(BenchboxError, match="read only with dataset=snli"):
        evaluate(WordSets(), tmp_path, path=str(folder))
    (folder / "s2.test").unlink()
    with pytest.raises(BenchboxError, match=r"lacks s2.test: put SNLI there as s1/s2/labels.\{dev,test\}"):
        evaluate(WordSets(), tmp_path, dataset="snli", path=str(folder))


def test_other_similarities_are_refused_in_one_line(tmp_path):
    write_sick(tmp_path)
    with pytest.raises(BenchboxError, match=r"^order-entailment needs an encoder trained with the order term "
                                            r"\(similarity 'order'.*'cosine-words' uses 'cosine'$"):
        evaluate(CosineWords(), tmp_path)


def test_runs_compare_by_mcnemar(tmp_path):
    from benchbox.comparison.compare import compare

    write_sick(tmp_path)
    runs = [run_tasks(enc, ["order-entailment"], data_dir=tmp_path, cache=False).save(tmp_path / "runs")
            for enc in (WordSets(), ShortWords())]
    table = compare([str(r) for r in runs], ["order-entailment"]).table
    row = table[(table["metric"] == "accuracy") & (table["subset"] == "test")].iloc[0]
    assert row["test"] == "mcnemar" and row["value_a"] == 80.0 and row["value_b"] < 80.0


def test_tiny_order_trained_char_gru(tmp_path):
    root = DataRoot()
    if not (root.root / "flickr8k" / "Flickr8k.token.txt").is_file():
        pytest.skip("needs the Flickr8k captions under the data root ($BENCHBOX_DATA)")
    from benchbox.training.config import TrainConfig
    from benchbox.training.trainer import Trainer

    config = TrainConfig(encoder="char-gru", dataset="flickr8k", visual="random", loss="order", hidden=12,
                         epochs=1, cycle_epochs=1, max_captions=320, threads=1)
    encoder = load_encoder(Trainer.from_config(config, tmp_path / "run").run())
    assert encoder.similarity == "order"
    write_sick(tmp_path / "data")
    result = evaluate(encoder, tmp_path / "data")
    dev = order_penalty(encoder.encode([r[0] for r in DEV]), encoder.encode([r[1] for r in DEV]))
    threshold, dev_accuracy = best_threshold(dev, np.array([r[2] == "ENTAILMENT" for r in DEV]))
    assert result.protocol["threshold"] == threshold and result.protocol["similarity"] == "order"
    penalty = order_penalty(encoder.encode([r[0] for r in TEST]), encoder.encode([r[1] for r in TEST]))
    np.testing.assert_allclose(result.items["penalty"], penalty)
    np.testing.assert_array_equal(result.items["pred"], penalty <= threshold)
    assert next(r.value for r in result.metrics if r.subset == "dev") == 100 * dev_accuracy
