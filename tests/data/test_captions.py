"""Caption datasets (docs/protocols.md#captions): real Flickr8k counts and layout, Karpathy JSON files, malformed input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchbox.data.captions import (
    CaptionSplit,
    load_caption_dataset,
    load_flickr8k,
    load_karpathy_json,
    merkx_full_stop,
    read_image_list,
)
from benchbox.data.root import DataRoot
from benchbox.errors import BenchboxError


def test_real_flickr8k_splits_counts_and_layout(data_root):
    splits = {split: load_flickr8k(data_root, split) for split in ("train", "dev", "test")}
    assert {s: len(c.image_ids) for s, c in splits.items()} == {"train": 6000, "dev": 1000, "test": 1000}
    assert all(len(c.captions) == 5 * len(c.image_ids) for c in splits.values())
    ids = [i for c in splits.values() for i in c.image_ids]
    assert len(set(ids)) == 8000  # disjoint splits
    token_lines = data_root.path("flickr8k/Flickr8k.token.txt").read_text(encoding="utf-8").splitlines()
    assert len(token_lines) == 40460
    raw = dict(line.split("\t") for line in token_lines)
    test = splits["test"]
    assert test.image_ids[0] == "3385593926_d3e9c21170.jpg"  # first line of Flickr_8k.testImages.txt
    for i in (0, 517, 999):  # caption k of image i at row 5i + k, with Merkx's final full stop
        for k in range(5):
            assert test.captions[5 * i + k] == merkx_full_stop(raw[f"{test.image_ids[i]}#{k}"])
    changed = sum(c != raw_c for s in splits.values() for c, raw_c in zip(
        s.captions, (raw[f"{i}#{k}"] for i in s.image_ids for k in range(5))))
    assert changed == 3846  # of the 3,896 captions without a final full stop, those of split images
    assert all(c.endswith(".") for s in splits.values() for c in s.captions)
    assert [p.name for p in test.source_files] == ["Flickr8k.token.txt", "Flickr_8k.testImages.txt"]
    assert load_caption_dataset(data_root, "flickr8k", "dev").captions == splits["dev"].captions


def test_real_karpathy_coco_test_list(data_root):
    ids = read_image_list(data_root.path("coco/karpathy_test_images.txt"))
    assert len(ids) == 5000 and ids[0] == "COCO_val2014_000000253964.jpg"


def test_full_stop_rule():
    assert merkx_full_stop("A dog runs") == "A dog runs ."
    assert merkx_full_stop("A dog runs .") == "A dog runs ."
    assert merkx_full_stop("A dog runs.") == "A dog runs."


def write_flickr8k(root: Path, token_lines: list[str], test_ids: list[str]) -> DataRoot:
    folder = root / "flickr8k"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Flickr8k.token.txt").write_text("".join(line + "\n" for line in token_lines), encoding="utf-8")
    (folder / "Flickr_8k.testImages.txt").write_text("".join(i + "\n" for i in test_ids), encoding="utf-8")
    return DataRoot(root, use_embedded=False)


def five(image: str, order=range(5)) -> list[str]:
    return [f"{image}#{k}\tcaption {k} of {image}" for k in order]


def test_flickr8k_orders_captions_by_index_and_images_by_split_list(tmp_path):
    data = write_flickr8k(tmp_path, five("a.jpg", [3, 1, 4, 0, 2]) + five("b.jpg") + five("c.jpg"), ["c.jpg", "a.jpg"])
    split = load_flickr8k(data, "test", full_stop=False)
    assert split.image_ids == ["c.jpg", "a.jpg"]
    assert split.captions[5:] == [f"caption {k} of a.jpg" for k in range(5)]
    assert load_flickr8k(data, "test").captions[0] == "caption 0 of c.jpg ."


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (five("a.jpg")[:4] + ["a.jpg#4 no tab here"], r"Flickr8k.token.txt:5: expected '<image>#<k><TAB><caption>'"),
        (five("a.jpg") + ["a.jpg\tno index"], r":6: expected '<image>#<k>"),
        (five("a.jpg") + ["a.jpg#5\tsixth"], "caption index #5 of a.jpg"),
        (five("a.jpg") + ["a.jpg#2\tagain"], r"second caption a.jpg#2"),
        (five("a.jpg")[:4] + ["a.jpg#4\t  "], "empty caption for a.jpg#4"),
        (five("a.jpg")[:3], r"image a.jpg of Flickr_8k.testImages.txt has captions #\[0, 1, 2\]"),
    ],
)
def test_malformed_flickr8k_token_files_give_clear_errors(tmp_path, lines, message):
    data = write_flickr8k(tmp_path, lines, ["a.jpg"])
    with pytest.raises(BenchboxError, match=message):
        load_flickr8k(data, "test")


def test_split_names_and_missing_files(tmp_path):
    data = write_flickr8k(tmp_path, five("a.jpg"), ["a.jpg"])
    with pytest.raises(BenchboxError, match="'val' is benchbox's 'dev'"):
        load_flickr8k(data, "val")
    with pytest.raises(BenchboxError, match="missing data .*Flickr_8k.devImages.txt"):
        load_flickr8k(data, "dev")
    (tmp_path / "flickr8k/Flickr_8k.testImages.txt").write_text("a.jpg\na.jpg\n")
    with pytest.raises(BenchboxError, match="listed more than once"):
        load_flickr8k(data, "test")
    with pytest.raises(BenchboxError, match="unknown caption dataset 'f30k'"):
        load_caption_dataset(data, "f30k", "test")


def karpathy_image(filename: str, split: str, n: int = 5, tokens: bool = True) -> dict:
    sentences = [
        {"raw": f"A Raw caption {k} of {filename}", "tokens": ["a", "raw", "caption", str(k)] if tokens else None}
        for k in range(n)
    ]
    return {"filename": filename, "split": split, "sentences": sentences, "filepath": "val2014"}


def write_json(path: Path, images: list[dict], dataset: str) -> Path:
    path.write_text(json.dumps({"images": images, "dataset": dataset}), encoding="utf-8")
    return path


def test_karpathy_coco_tokens_joined_with_full_stop_restval_in_train_extra_captions_dropped(tmp_path):
    images = [
        karpathy_image("t1.jpg", "train"), karpathy_image("r1.jpg", "restval", n=7),
        karpathy_image("v1.jpg", "val"), karpathy_image("x1.jpg", "test"), karpathy_image("x2.jpg", "test", n=6),
    ]
    path = write_json(tmp_path / "dataset_coco.json", images, "coco")
    train = load_karpathy_json(path, "train", dataset="coco")
    assert train.image_ids == ["t1.jpg", "r1.jpg"] and len(train.captions) == 10
    assert train.captions[5:] == [f"a raw caption {k} ." for k in range(5)]  # first 5 of 7
    assert load_karpathy_json(path, "dev", dataset="coco").image_ids == ["v1.jpg"]
    test = load_karpathy_json(path, "test", dataset="coco", text="raw", full_stop=False)
    assert test.captions[0] == "A Raw caption 0 of x1.jpg" and len(test.captions) == 10
    data = DataRoot(tmp_path / "root", use_embedded=False)
    assert load_caption_dataset(data, "coco", "test", karpathy_json=path).captions[0] == "a raw caption 0 ."


def test_karpathy_flickr8k_uses_raw_captions(tmp_path):
    path = write_json(tmp_path / "dataset_flickr8k.json", [karpathy_image("f.jpg", "val", tokens=False)], "flickr8k")
    split = load_karpathy_json(path, "dev", dataset="flickr8k")
    assert split.captions[0] == "A Raw caption 0 of f.jpg ." and split.source_files == [path]
    data = DataRoot(tmp_path / "root", use_embedded=False)
    assert load_caption_dataset(data, "flickr8k", "dev", karpathy_json=path).captions == split.captions


@pytest.mark.parametrize(
    ("content", "kwargs", "message"),
    [
        ("{not json", {}, "cannot read Karpathy caption file"),
        ('{"imgs": []}', {}, "not a Karpathy caption file"),
        (json.dumps({"images": [], "dataset": "flickr8k"}), {}, "the Karpathy file of 'flickr8k', not of 'coco'"),
        (json.dumps({"images": [{"filename": "a.jpg", "split": "test"}]}), {}, r"images\[0\]: needs"),
        (json.dumps({"images": [karpathy_image("a.jpg", "test", n=4)]}), {}, r"\(a.jpg\): 4 captions, needs at least"),
        (json.dumps({"images": [karpathy_image("a.jpg", "test", n=6)]}), {"dataset": "flickr8k"}, "6 captions; Flickr"),
        (json.dumps({"images": [karpathy_image("a.jpg", "test", tokens=False)]}), {}, "'tokens' must be a list"),
        (json.dumps({"images": [karpathy_image("a.jpg", "train")]}), {}, "no images in split test"),
        (json.dumps({"images": [karpathy_image("a.jpg", "test")] * 2}), {}, "appears twice"),
        (json.dumps({"images": [karpathy_image("a.jpg", "test")]}), {"text": "lemma"}, "'raw' or 'tokens'"),
    ],
)
def test_malformed_karpathy_json_gives_clear_errors(tmp_path, content, kwargs, message):
    path = tmp_path / "dataset.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BenchboxError, match=message):
        load_karpathy_json(path, "test", **{"dataset": "coco", **kwargs})


def test_coco_without_caption_file_says_where_to_put_it(tmp_path):
    with pytest.raises(BenchboxError, match=r"dataset_coco.json .*put it at .*coco/dataset_coco.json"):
        load_caption_dataset(DataRoot(tmp_path, use_embedded=False), "coco", "test")


def test_reordered_follows_a_list_and_checks_coverage(tmp_path):
    split = CaptionSplit("coco", "test", ["a", "b"], [f"a{k}" for k in range(5)] + [f"b{k}" for k in range(5)], [])
    listed = split.reordered(["b", "a"], tmp_path / "list.txt")
    assert listed.image_ids == ["b", "a"] and listed.captions[:5] == [f"b{k}" for k in range(5)]
    assert listed.source_files == [tmp_path / "list.txt"]
    with pytest.raises(BenchboxError, match="1 listed without captions"):
        split.reordered(["a", "c"], tmp_path / "list.txt")
    with pytest.raises(BenchboxError, match="expected 5 per image"):
        CaptionSplit("coco", "test", ["a"], ["x"] * 4, [])
