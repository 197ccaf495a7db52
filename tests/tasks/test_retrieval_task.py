"""The retrieval tasks end to end: Flickr8k and MSCOCO splits from generated files, a small grounded encoder,
metric records with intervals, per-query items, protocol and errors."""

from __future__ import annotations

import json
import math
import types

import numpy as np
import pandas as pd
import pytest

from benchbox import run_tasks
from benchbox.encoding.protocol import ImageTextEncoder
from benchbox.errors import BenchboxError
from benchbox.data.image_features import save_features
from benchbox.stats import wilson_ci
from benchbox.tasks.retrieval_metrics import retrieval_metrics
from tests.helpers import TableEncoder, task_options

DIM = 8


def caption(i: int, k: int) -> str:
    return f"caption {k} of image {i} ."


class ToyGrounded(ImageTextEncoder):
    """Caption "caption k of image i ." ↦ a fixed noisy copy of image i's vector; images ↦ their features."""

    name = "toy-grounded"

    def __init__(self, vectors: np.ndarray, noise: float = 1.0) -> None:
        rng = np.random.default_rng(0)
        self.table = {
            caption(i, k): (v + noise * rng.standard_normal(DIM)).astype(np.float32)
            for i, v in enumerate(vectors) for k in range(5)
        }

    @property
    def dim(self) -> int:
        return DIM

    def config(self):
        return {}

    def weights_digest(self) -> str:
        return "toy"

    def _encode(self, sentences, batch_size):
        return np.stack([self.table[s] for s in sentences])

    def encode_images(self, features: np.ndarray) -> np.ndarray:
        return np.asarray(features, dtype=np.float32)


@pytest.fixture
def world(tmp_path):
    """A data root with Flickr8k (test: 20 images, listed in shuffled order) and MSCOCO (Karpathy test: 50
    images), and a features file of their image vectors."""
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((50, DIM)).astype(np.float32)
    ids = [f"img{i}.jpg" for i in range(50)]
    flickr = tmp_path / "root/flickr8k"
    flickr.mkdir(parents=True)
    (flickr / "Flickr8k.token.txt").write_text(
        "".join(f"{ids[i]}#{k}\tcaption {k} of image {i}\n" for i in range(20) for k in range(5)))
    order = rng.permutation(20)
    (flickr / "Flickr_8k.testImages.txt").write_text("".join(ids[i] + "\n" for i in order))
    coco = tmp_path / "root/coco"
    coco.mkdir()
    images = [{"filename": ids[i], "split": "test",
               "sentences": [{"tokens": f"caption {k} of image {i}".split(), "raw": "x"} for k in range(5)]}
              for i in range(50)]
    (coco / "dataset_coco.json").write_text(json.dumps({"images": images, "dataset": "coco"}))
    coco_order = rng.permutation(50)
    (coco / "karpathy_test_images.txt").write_text("".join(f"val2014/{ids[i]} {i}\n" for i in coco_order))
    features_file = tmp_path / "features.npy"  # with its sidecar features.ids.txt
    save_features(features_file, ids, vectors)
    return types.SimpleNamespace(root=tmp_path / "root", vectors=vectors, order=order, coco_order=coco_order,
                                 features=str(features_file))


def run(world, task: str, encoder=None, **options):
    return run_tasks(encoder or ToyGrounded(world.vectors), [task], data_dir=world.root, cache=False,
                     options=task_options(features=world.features, **options))


def by_key(result) -> dict:
    return {(r.subset, r.metric): r for r in result.metrics}


def test_flickr8k_retrieval_records_items_and_protocol(world):
    evaluation = run(world, "retrieval", bootstrap=300)
    result = evaluation.results[0]
    encoder = ToyGrounded(world.vectors)
    captions = [caption(i, k) for i in world.order for k in range(5)]  # split-list order
    expected = retrieval_metrics(world.vectors[world.order], encoder.encode(captions), device="cpu")
    records = by_key(result)
    for direction in ("i2t", "t2i"):
        ranks = expected[direction]["ranks"]
        for metric in ("r1", "r5", "r10", "medr", "meanr"):
            assert records[(direction, metric)].value == pytest.approx(expected[direction][metric])
            assert records[(direction, metric)].n == len(ranks)
        r5 = records[(direction, "r5")]
        low, high = wilson_ci(int((ranks <= 5).sum()), len(ranks))
        assert (r5.ci_low, r5.ci_high) == pytest.approx((100 * low, 100 * high))
        medr = records[(direction, "medr")]
        assert medr.ci_low <= medr.value <= medr.ci_high  # image bootstrap
    assert records[("all", "rsum")].value == pytest.approx(expected["rsum"])
    assert 0 < expected["t2i"]["r1"] < 100
    items = result.items
    assert list(items.columns) == ["subset", "direction", "query", "rank", "image_id"]
    t2i = items[items.direction == "t2i"]
    assert t2i["rank"].tolist() == expected["t2i"]["ranks"].tolist() and len(t2i) == 100
    assert t2i.image_id.iloc[7] == f"img{world.order[1]}.jpg" and set(items.subset) == {"all"}
    protocol = result.protocol
    assert protocol["images"] == 20 and protocol["folds"] == 1 and protocol["medr"] == "vsepp"
    assert protocol["similarity"] == "cosine" and protocol["ties"] == "expected"
    assert set(result.data_checksums) == {"flickr8k/Flickr8k.token.txt", "flickr8k/Flickr_8k.testImages.txt",
                                          world.features, world.features.replace(".npy", ".ids.txt")}
    saved = pd.read_csv(evaluation.save(world.root.parent / "runs") / "items" / "retrieval.csv")
    assert saved["rank"].tolist() == items["rank"].tolist()


def test_bootstrap_option_gives_recall_intervals_from_images_and_zero_resamples_none(world):
    boot = by_key(run(world, "retrieval", retrieval_ci="bootstrap", bootstrap=300).results[0])
    wilson = by_key(run(world, "retrieval", bootstrap=300).results[0])
    assert boot[("t2i", "r5")].value == wilson[("t2i", "r5")].value
    assert (boot[("t2i", "r5")].ci_low, boot[("t2i", "r5")].ci_high) != (
        wilson[("t2i", "r5")].ci_low, wilson[("t2i", "r5")].ci_high)
    assert boot[("t2i", "r5")].ci_low <= boot[("t2i", "r5")].value <= boot[("t2i", "r5")].ci_high
    none = by_key(run(world, "retrieval", bootstrap=0).results[0])
    assert math.isnan(none[("i2t", "medr")].ci_low) and math.isnan(none[("all", "rsum")].ci_high)
    assert not math.isnan(none[("i2t", "r1")].ci_low)  # Wilson needs no resampling


def test_coco_1k_and_5k_follow_the_karpathy_list_order_and_folds(world):
    coco_1k, coco_5k = (run(world, name, bootstrap=0).results[0] for name in ("retrieval-coco-1k", "retrieval-coco-5k"))
    encoder = ToyGrounded(world.vectors)
    captions = encoder.encode([caption(i, k) for i in world.coco_order for k in range(5)])
    for result, folds in ((coco_1k, 5), (coco_5k, 1)):
        expected = retrieval_metrics(world.vectors[world.coco_order], captions, folds=folds, device="cpu")
        records = by_key(result)
        for direction in ("i2t", "t2i"):
            for metric in ("r1", "r5", "r10", "medr", "meanr"):
                assert records[(direction, metric)].value == pytest.approx(expected[direction][metric])
        assert result.protocol["folds"] == folds
    assert set(coco_1k.items.subset) == {f"fold{f}" for f in range(1, 6)}
    first = coco_1k.items[(coco_1k.items.direction == "i2t") & (coco_1k.items.subset == "fold2")]
    assert first["query"].tolist() == list(range(10, 20))
    assert "coco/karpathy_test_images.txt" in coco_1k.data_checksums


def test_coco_captions_must_cover_the_listed_images(world):
    listed = (world.root / "coco/karpathy_test_images.txt").read_text().splitlines()
    (world.root / "coco/karpathy_test_images.txt").write_text("\n".join(listed[:-1] + ["val2014/other.jpg 9"]))
    with pytest.raises(BenchboxError, match="1 listed without captions"):
        run(world, "retrieval-coco-5k")


def test_text_only_encoder_and_missing_features_give_clear_errors(world):
    text_only = TableEncoder({caption(0, 0): [1.0, 0.0]})
    with pytest.raises(BenchboxError, match="needs an encoder with an image branch.*'table' only encodes text"):
        run(world, "retrieval", encoder=text_only)
    with pytest.raises(BenchboxError, match="pass --features FILE"):
        run_tasks(ToyGrounded(world.vectors), ["retrieval"], data_dir=world.root, cache=False)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"retrieval_ci": "exact"}, "retrieval_ci must be one of wilson, bootstrap"),
        ({"retrieval_medr": "mean"}, "retrieval_medr must be one of vsepp, median"),
        ({"retrieval_ties": "random"}, "retrieval_ties must be one of expected, optimistic, pessimistic"),
        ({"retrieval_ci": "bootstrap", "bootstrap": 0}, "set --bootstrap to a positive number"),
    ],
)
def test_bad_options_give_clear_errors(world, options, message):
    with pytest.raises(BenchboxError, match=message):
        run(world, "retrieval", **options)


def test_options_reach_the_metrics(world):
    result = run(world, "retrieval", retrieval_medr="median", retrieval_ties="pessimistic", bootstrap=0).results[0]
    assert result.protocol["medr"] == "median" and result.protocol["ties"] == "pessimistic"
    ranks = result.items[result.items.direction == "t2i"]["rank"].to_numpy()
    assert by_key(result)[("t2i", "medr")].value == pytest.approx(float(np.median(ranks)))
    assert isinstance(result.items, pd.DataFrame)


class HashedWords(ImageTextEncoder):
    """Bag of hashed lower-cased words (64-d); images are given as vectors in the same space."""

    name = "hashed-words"

    @property
    def dim(self) -> int:
        return 64

    def config(self):
        return {}

    def weights_digest(self) -> str:
        return "hashed"

    def _encode(self, sentences, batch_size):
        out = np.zeros((len(sentences), 64), dtype=np.float32)
        for row, sentence in enumerate(sentences):
            for word in sentence.lower().split():
                out[row, sum(map(ord, word)) * 2654435761 % 64] += 1.0
        return out

    def encode_images(self, features: np.ndarray) -> np.ndarray:
        return np.asarray(features, dtype=np.float32)


def test_real_flickr8k_test_split_end_to_end(data_root, tmp_path):
    from benchbox.data.captions import load_flickr8k

    encoder = HashedWords()
    test = load_flickr8k(data_root, "test")
    # an image's "features": the mean of its captions' vectors (a grounded space in which retrieval is easy)
    vectors = encoder.encode(test.captions).reshape(1000, 5, 64).mean(axis=1)
    features = tmp_path / "features.h5"
    save_features(features, [i.removesuffix(".jpg") for i in test.image_ids[::-1]], vectors[::-1])
    result = run_tasks(encoder, ["retrieval"], data_dir=data_root.root, cache=False,
                       options=task_options(features=str(features), bootstrap=100)).results[0]
    records = by_key(result)
    assert records[("i2t", "r1")].n == 1000 and records[("t2i", "r1")].n == 5000
    assert records[("t2i", "r10")].value > 50 and records[("i2t", "r10")].value > 80  # chance: 1% and 5%
    assert len(result.items) == 6000 and result.protocol["images"] == 1000


def test_features_missing_an_image_give_a_clear_error(world, tmp_path):
    partial = tmp_path / "partial.npz"
    save_features(partial, [f"img{i}.jpg" for i in range(19)], world.vectors[:19])
    with pytest.raises(BenchboxError, match="1 of the 20 requested images have no features"):
        run_tasks(ToyGrounded(world.vectors), ["retrieval"], data_dir=world.root, cache=False,
                  options=task_options(features=str(partial)))


class SeenCaptions(ToyGrounded):
    """ToyGrounded that keeps the captions it was asked to encode, with or without Merkx's `` .``."""

    def _encode(self, sentences, batch_size):
        self.seen = list(sentences)
        return np.stack([self.table[s if s.endswith(" .") else s + " ."] for s in sentences])


@pytest.mark.parametrize("task", ["retrieval", "retrieval-coco-5k"])
def test_captions_raw_keeps_the_files_text_and_is_a_recorded_protocol_switch(world, task):
    """Merkx's `` .`` by default (the Merkx & Frank comparators); ``--captions raw`` scores the files' own text,
    as CLIP_benchmark does, and the run records which."""
    from benchbox.comparison.variants import variant

    merkx, raw = SeenCaptions(world.vectors), SeenCaptions(world.vectors)
    default = run(world, task, merkx, bootstrap=0).results[0]
    plain = run(world, task, raw, bootstrap=0, captions="raw").results[0]
    assert all(s.endswith(" of image " + s.split()[-2] + " .") for s in merkx.seen)
    assert not any(s.endswith(".") for s in raw.seen) and {s + " ." for s in raw.seen} == set(merkx.seen)
    assert default.protocol["caption_text"] == "merkx" and plain.protocol["caption_text"] == "raw"
    assert "caption_text=raw" in variant(task, plain.protocol) and "caption_text" not in variant(task, default.protocol)
