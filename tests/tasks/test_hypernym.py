"""Vendrov et al.'s hypernym prediction on a hand-written WordNet database (nine synsets, an instance pointer,
two paths to one ancestor, a lemma with two senses): the parse, the closure listed once per path, the split, the
corruptions, the closure baseline, the penalty and the loss gradient by hand; ``benchbox train order-wordnet``
then ``benchbox eval RUN --task hypernym`` end to end; one-line refusals. The real WordNet 3.0 counts are a slow
test (it needs Debian's wordnet-base)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.data.wordnet import (DEFAULT_WORDNET, closure_baseline, closure_paths, corrupt, read_nouns,
                                   split_closure)
from benchbox.errors import BenchboxError
from benchbox.tasks.hypernym import HypernymData, closure_predictions, penalties, score_embeddings
from benchbox.training.order_wordnet import max_margin_gradient

runner = CliRunner()
HEADER = "  1 This software and database is being provided to you, the LICENSEE, by  \n"
#: (offset, lemma, pointers): row i of the concepts is line i; puppy reaches animal and entity by two paths
SYNSETS = [
    (100, "entity", ["~ 00000200 n 0000"]),
    (200, "animal", ["@ 00000100 n 0000", "~ 00000400 n 0000"]),
    (300, "plant", ["@ 00000100 n 0000"]),
    (400, "dog", ["@ 00000200 n 0000", "+ 00001234 v 0101"]),
    (500, "pet", ["@ 00000200 n 0000"]),
    (600, "puppy", ["@ 00000400 n 0000", "@ 00000500 n 0000"]),
    (700, "Rex", ["@i 00000600 n 0000"]),
    (800, "tree", ["@ 00000300 n 0000"]),
    (900, "dog", ["@ 00000100 n 0000"]),
]
ENTITY, ANIMAL, PLANT, DOG, PET, PUPPY, REX, TREE, FRUMP = range(9)
#: the authors' depth-first closure: (u, a) once per path, parents in pointer order
CLOSURE = [(ANIMAL, ENTITY), (PLANT, ENTITY), (DOG, ANIMAL), (DOG, ENTITY), (PET, ANIMAL), (PET, ENTITY),
           (PUPPY, DOG), (PUPPY, ANIMAL), (PUPPY, ENTITY), (PUPPY, PET), (PUPPY, ANIMAL), (PUPPY, ENTITY),
           (REX, PUPPY), (REX, DOG), (REX, ANIMAL), (REX, ENTITY), (REX, PET), (REX, ANIMAL), (REX, ENTITY),
           (TREE, PLANT), (TREE, ENTITY), (FRUMP, ENTITY)]


def write_wordnet(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [HEADER]
    for offset, lemma, pointers in SYNSETS:
        lines.append(f"{offset:08d} 05 n 01 {lemma} 0 {len(pointers):03d} {' '.join(pointers)} | a gloss  \n")
    (folder / "data.noun").write_text("".join(lines))
    senses = {}
    for offset, lemma, _ in SYNSETS:
        senses.setdefault(lemma.lower(), []).append(offset)
    senses["dog"] = [900, 400]  # index.noun lists the senses in frequency order: synset 900 is dog.n.01
    index = [HEADER] + [f"{lemma} n {len(o)} 1 @ {len(o)} 0 {' '.join(f'{x:08d}' for x in o)}  \n"
                        for lemma, o in sorted(senses.items())]
    (folder / "index.noun").write_text("".join(index))
    return folder


@pytest.fixture
def wordnet(tmp_path: Path) -> Path:
    return write_wordnet(tmp_path / "wordnet")


def test_nouns_names_and_edges_as_nltk_reads_them(wordnet):
    nouns = read_nouns(wordnet)
    assert nouns.names == ["entity.n.01", "animal.n.01", "plant.n.01", "dog.n.02", "pet.n.01", "puppy.n.01",
                           "rex.n.01", "tree.n.01", "dog.n.01"]
    assert nouns.offsets.tolist() == [o for o, _, _ in SYNSETS]
    # @ and @i only: the hyponym (~) and verb (+) pointers are not edges
    assert nouns.edges.tolist() == [[ANIMAL, ENTITY], [PLANT, ENTITY], [DOG, ANIMAL], [PET, ANIMAL], [PUPPY, DOG],
                                    [PUPPY, PET], [REX, PUPPY], [TREE, PLANT], [FRUMP, ENTITY]]


def test_closure_lists_each_path(wordnet):
    nouns = read_nouns(wordnet)
    closure = closure_paths(nouns.edges, len(nouns))
    assert [tuple(p) for p in closure.tolist()] == CLOSURE
    assert len(np.unique(closure, axis=0)) == 18  # puppy and Rex reach animal and entity twice


def test_split_partitions_the_shuffled_closure(wordnet):
    nouns = read_nouns(wordnet)
    closure = closure_paths(nouns.edges, len(nouns))
    split = split_closure(closure, len(nouns), held_out=3, seed=5)
    assert (len(split.test), len(split.dev), len(split.train)) == (3, 3, 16)
    rows = np.concatenate([split.test, split.dev, split.train])
    assert sorted(map(tuple, rows.tolist())) == sorted(CLOSURE)
    order = np.random.RandomState(5).permutation(len(closure))
    assert split.test.tolist() == closure[order[:3]].tolist()
    assert split.digest() == split_closure(closure, len(nouns), held_out=3, seed=5).digest()
    assert split.digest() != split_closure(closure, len(nouns), held_out=3, seed=6).digest()
    with pytest.raises(BenchboxError, match="cannot hold out 11"):
        split_closure(closure, len(nouns), held_out=11)


def test_corruption_replaces_one_member_with_a_random_concept():
    pairs = np.tile([[3, 7]], (2000, 1))
    negatives = corrupt(pairs, 50, np.random.RandomState(0))
    kept_hypo, kept_hyper = negatives[:, 0] == 3, negatives[:, 1] == 7
    assert (kept_hypo | kept_hyper).all()  # never both replaced
    assert 0.45 < (~kept_hyper).mean() + (kept_hyper & kept_hypo).mean() / 2 < 0.55  # each side half the time
    assert set(negatives[~kept_hypo, 0]) | set(negatives[~kept_hyper, 1]) <= set(range(50))
    assert len(set(negatives[:, 0])) > 40  # uniform over the 50 concepts


def test_closure_baseline_follows_known_edges_only():
    known = np.array([[PUPPY, DOG], [DOG, ANIMAL], [PET, ANIMAL]])
    pairs = np.array([[PUPPY, ANIMAL], [PUPPY, DOG], [ANIMAL, PUPPY], [PUPPY, ENTITY], [PUPPY, PET]])
    assert closure_baseline(known, pairs, 9).tolist() == [True, True, False, False, False]


def test_penalty_and_decision_by_hand(wordnet):
    embeddings = np.zeros((9, 2))
    embeddings[PUPPY], embeddings[DOG], embeddings[TREE] = [2.0, 1.0], [1.0, 3.0], [0.5, 0.5]
    pairs = np.array([[PUPPY, DOG], [DOG, PUPPY], [PUPPY, TREE]])
    # max(0, f(a) - f(u)): (0, 2) -> 4; (1, 0) -> 1; (0, 0) -> 0
    assert penalties(embeddings, pairs).tolist() == [4.0, 1.0, 0.0]


def test_gradient_by_hand_equals_autograd():
    weight = torch.tensor([[2.0, 1.0], [1.0, 3.0], [0.0, 0.5]])
    weight.grad = torch.zeros_like(weight)
    hypo, hyper, positive = torch.tensor([0, 2]), torch.tensor([1, 0]), torch.tensor([True, False])
    loss = max_margin_gradient(weight, hypo, hyper, positive, 1.0)
    # pair 0 (positive): E = 4; pair 1 (negative): violation (2, 0.5), E = 4.25 > margin: no loss, no gradient
    assert loss == pytest.approx(2.0)
    # dE/df(a) = 2 violation = 2 (0, 2), over the batch of 2: +(0, 2) on the hypernym (row 1), -(0, 2) on the hyponym
    assert weight.grad.tolist() == [[0.0, -2.0], [0.0, 2.0], [0.0, 0.0]]
    torch.manual_seed(0)
    weight = torch.rand(30, 4)
    weight.grad = torch.zeros_like(weight)
    hypo, hyper, positive = torch.randint(0, 30, (40,)), torch.randint(0, 30, (40,)), torch.rand(40) < 0.5
    loss = max_margin_gradient(weight, hypo, hyper, positive, 0.3)
    reference = weight.clone().requires_grad_()
    penalty = torch.relu(reference[hyper] - reference[hypo]).square().sum(1)
    torch.where(positive, penalty, torch.relu(0.3 - penalty)).mean().backward()
    assert loss == pytest.approx(torch.where(positive, penalty, torch.relu(0.3 - penalty)).mean().item())
    assert torch.allclose(weight.grad, reference.grad)


def test_train_then_eval_end_to_end(wordnet, tmp_path):
    run = tmp_path / "run"
    done = runner.invoke(app, ["train", "order-wordnet", "--wordnet", str(wordnet), "--held-out", "2", "--dim", "4",
                               "--epochs", "40", "--batch-size", "6", "--eval-every", "2", "--threads", "1",
                               "--out", str(run), "--quiet"])
    assert done.exit_code == 0, done.output
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["encoder"]["name"] == "order-wordnet"
    assert manifest["training"]["pairs"] == {"train": 18, "dev": 2, "test": 2}
    embeddings = np.load(run / "embeddings.npy")
    assert embeddings.shape == (9, 4) and (embeddings >= 0).all()
    # the recorded evaluation is the task's scoring of the saved embeddings
    data = HypernymData.build(wordnet, held_out=2, split_seed=1)
    scores = score_embeddings(data, embeddings)
    closure = closure_predictions(data)
    evaluation = manifest["evaluation"]
    assert evaluation["accuracy"]["value"] == pytest.approx(100 * scores.correct / 4)
    assert evaluation["closure_accuracy"]["value"] == pytest.approx(100 * (closure == scores.gold).mean())
    assert evaluation["dev_accuracy"] == pytest.approx(100 * scores.dev_accuracy)
    done = runner.invoke(app, ["eval", str(run), "--task", "hypernym", "-t", f"hypernym:wordnet={wordnet}",
                               "-t", "hypernym:held_out=2", "--runs-dir", str(tmp_path / "evals"), "--no-cache",
                               "--json", "-", "--quiet"])
    assert done.exit_code == 0, done.output
    metrics = {(m["subset"], m["metric"]): m["value"] for m in json.loads(done.output)["records"]}
    assert metrics[("test", "accuracy")] == pytest.approx(evaluation["accuracy"]["value"])
    assert metrics[("test", "closure-accuracy")] == pytest.approx(evaluation["closure_accuracy"]["value"])
    # another split would put training pairs in test: refused in one line
    done = runner.invoke(app, ["eval", str(run), "--task", "hypernym", "-t", f"hypernym:wordnet={wordnet}",
                               "-t", "hypernym:held_out=2", "-t", "hypernym:split_seed=2", "--no-save",
                               "--no-cache", "--quiet"])
    assert isinstance(done.exception, BenchboxError) and "trained on another split" in str(done.exception)


def test_missing_wordnet_is_one_line(tmp_path):
    done = runner.invoke(app, ["train", "order-wordnet", "--wordnet", str(tmp_path), "--out", str(tmp_path / "r")])
    assert isinstance(done.exception, BenchboxError)
    assert "has no data.noun or index.noun" in str(done.exception) and "wordnet-base" in str(done.exception)
    assert not (tmp_path / "r" / "manifest.json").exists()


def test_other_encoders_are_refused(wordnet, tmp_path):
    done = runner.invoke(app, ["eval", "glove-bow", "--task", "hypernym", "-t", f"hypernym:wordnet={wordnet}",
                               "-t", "hypernym:held_out=2", "--no-save", "--no-cache", "--quiet"])
    assert isinstance(done.exception, BenchboxError) and "order similarity" in str(done.exception)


@pytest.mark.slow
@pytest.mark.skipif(not (DEFAULT_WORDNET / "data.noun").is_file(),
                    reason="needs WordNet 3.0 in /usr/share/wordnet: apt-get install wordnet-base")
def test_real_wordnet_counts_and_closure_baseline():
    data = HypernymData.build()
    nouns = data.nouns
    assert (len(nouns), len(nouns.edges)) == (82115, 84427)
    assert nouns.offsets[nouns.names.index("dog.n.01")] == 2084071
    closure = closure_paths(nouns.edges, len(nouns))
    assert (len(closure), len(np.unique(closure, axis=0))) == (837888, 743241)
    assert len(data.split.train) == 837888 - 8000
    gold = data.pairs("test")[1]
    # deterministic given the split: the paper reports 88.2 for its own split
    assert 100 * (closure_predictions(data) == gold).mean() == pytest.approx(88.4125)


def test_published_table1_rows_with_wilson_intervals():
    from benchbox.data.comparators import paper_result
    from benchbox.stats import wilson_ci

    for name, value in (("order-embeddings", 90.6), ("transitive-closure", 88.2), ("word2gauss", 86.6)):
        rows = paper_result(f"paper:vendrov2016/{name}").metrics
        assert rows[["task", "subset", "metric", "value", "n"]].values.tolist() == [
            ["hypernym", "test", "accuracy", value, 8000]]
        low, high = wilson_ci(value / 100 * 8000, 8000)
        assert rows[["ci_low", "ci_high"]].values.tolist() == [[pytest.approx(100 * low), pytest.approx(100 * high)]]
