"""Caption datasets: Flickr8k and MSCOCO, five captions per image (docs/protocols.md#retrieval, docs/protocols.md#captions).

A :class:`CaptionSplit` holds N image ids and 5N captions, caption k of image i at row 5i + k — the layout
of VSE++'s evaluation (Faghri et al. 2018) and of :func:`benchbox.tasks.retrieval_metrics.retrieval_metrics`.

Sources:
- Flickr8k official files (Hodosh, Young & Hockenmaier 2013) under ``flickr8k/``: ``Flickr8k.token.txt``
  (``<image>.jpg#k<TAB>caption``, k = 0–4) and the split lists ``Flickr_8k.{train,dev,test}Images.txt``
  (6000/1000/1000 images; the same split as Karpathy's). Images keep the order of their split list;
  the token file's extra entry ``2258277193_586949ec62.jpg.1`` names no image of any split and is never read.
- Karpathy & Fei-Fei (2015) JSON files ``dataset_flickr8k.json`` / ``dataset_coco.json``
  (``images[*].{filename, split, sentences[*].{raw, tokens}}``; split ``val`` is benchbox's ``dev``, and
  COCO's ``restval`` joins ``train`` as in VSE++/Karpathy). Images keep the file's order; the image id is
  the ``filename``.

Caption text, after Merkx & Frank (2019) (``preprocessing/text_features.py`` of DannyMerkx/caption2image):
Flickr8k uses the raw caption (already tokenised by the corpus authors, cased); MSCOCO joins Karpathy's
tokens with single spaces (docs/protocols.md#captions). Either way Merkx appends `` .`` to a caption that does not end
with a full stop (3,896 of the 40,460 Flickr8k captions); ``full_stop=False`` keeps the text unchanged.

Captions per image: Flickr8k has exactly 5 (anything else is an error); a few MSCOCO images have 6 or 7 and
keep their first 5, as in the VSE++/SCAN precomputed data; fewer than 5 is an error.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from benchbox.data.root import DataRoot
from benchbox.errors import BenchboxError
from benchbox.limits import check_lengths

PER_IMAGE = 5
DATASETS = ("flickr8k", "coco")
SPLITS = ("train", "dev", "test")
FLICKR8K_TOKENS = "flickr8k/Flickr8k.token.txt"
FLICKR8K_SPLIT_LISTS = {split: f"flickr8k/Flickr_8k.{split}Images.txt" for split in SPLITS}
COCO_KARPATHY_JSON = "coco/dataset_coco.json"
#: Karpathy split lists shipped with the data root (``<folder>/<filename> <cocoid>`` per line)
COCO_ID_LISTS = {"test": "coco/karpathy_test_images.txt", "dev": "coco/karpathy_val_images.txt"}
#: which JSON splits make up each benchbox split
JSON_SPLITS = {"train": ("train", "restval"), "dev": ("val",), "test": ("test",)}
#: default caption text of each dataset in Karpathy's JSON: the ``raw`` string or the joined ``tokens``
DEFAULT_JSON_TEXT = {"flickr8k": "raw", "coco": "tokens"}

_TOKEN_KEY = re.compile(r"^(?P<image>.+)#(?P<k>\d+)$")


@dataclass(frozen=True)
class CaptionSplit:
    """N images and their 5N captions: caption k of image i at row 5i + k."""

    dataset: str
    split: str
    image_ids: list[str]
    captions: list[str]
    source_files: list[Path]

    def __post_init__(self) -> None:
        if len(self.captions) != PER_IMAGE * len(self.image_ids):
            raise BenchboxError(
                f"{self.dataset} {self.split}: {len(self.captions)} captions for {len(self.image_ids)} images; "
                f"expected {PER_IMAGE} per image"
            )
        check_lengths(self.captions, lambda i: f"{self.dataset} {self.split} caption "
                                               f"{self.image_ids[i // PER_IMAGE]}#{i % PER_IMAGE}")

    def reordered(self, image_ids: list[str], source: Path) -> CaptionSplit:
        """The same images in the order of ``image_ids`` (read from ``source``); the two sets must be equal."""
        if sorted(image_ids) != sorted(self.image_ids):
            missing = sorted(set(image_ids) - set(self.image_ids))
            extra = sorted(set(self.image_ids) - set(image_ids))
            raise BenchboxError(
                f"{source} lists {len(image_ids)} images but the {self.dataset} {self.split} captions cover "
                f"{len(self.image_ids)}: {len(missing)} listed without captions (e.g. {missing[:3]}), "
                f"{len(extra)} with captions but not listed (e.g. {extra[:3]}). Use the caption file of the same "
                "Karpathy split."
            )
        row = {image_id: i for i, image_id in enumerate(self.image_ids)}
        captions = [self.captions[PER_IMAGE * row[i] + k] for i in image_ids for k in range(PER_IMAGE)]
        return CaptionSplit(self.dataset, self.split, list(image_ids), captions, [*self.source_files, source])


def merkx_full_stop(caption: str) -> str:
    """Append `` .`` unless the caption already ends with a full stop (Merkx & Frank's preprocessing)."""
    return caption if caption.endswith(".") else caption + " ."


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise BenchboxError(f"{path}: not UTF-8 text ({exc})") from None
    except OSError as exc:
        raise BenchboxError(f"cannot read {path}: {exc}") from None


def _check_split(split: str) -> None:
    if split not in SPLITS:
        hint = " (Karpathy's 'val' is benchbox's 'dev')" if split == "val" else ""
        raise BenchboxError(f"unknown split {split!r}{hint}: use one of {', '.join(SPLITS)}")


def read_image_list(path: Path) -> list[str]:
    """Image ids from a split list, one per line; for lines ``<folder>/<file> <id>`` (the Karpathy COCO lists)
    the id is ``<file>``. Blank lines are skipped; duplicates are an error."""
    ids: list[str] = []
    for line in _read_lines(path):
        if not line.strip():
            continue
        ids.append(Path(line.split()[0]).name)
    if len(set(ids)) != len(ids):
        raise BenchboxError(f"{path}: image ids listed more than once")
    if not ids:
        raise BenchboxError(f"{path}: no image ids")
    return ids


def read_flickr8k_tokens(path: Path) -> dict[str, list[str | None]]:
    """``Flickr8k.token.txt`` → image → its captions by index k (None where missing); malformed lines raise."""
    captions: dict[str, list[str | None]] = {}
    for lineno, line in enumerate(_read_lines(path), 1):
        if not line.strip():
            continue
        key, sep, caption = line.partition("\t")
        match = _TOKEN_KEY.match(key)
        if not sep or match is None:
            raise BenchboxError(f"{path}:{lineno}: expected '<image>#<k><TAB><caption>', found {line[:80]!r}")
        image, k = match["image"], int(match["k"])
        if k >= PER_IMAGE:
            raise BenchboxError(f"{path}:{lineno}: caption index #{k} of {image}; Flickr8k has #0-#{PER_IMAGE - 1}")
        if not caption.strip():
            raise BenchboxError(f"{path}:{lineno}: empty caption for {image}#{k}")
        slots = captions.setdefault(image, [None] * PER_IMAGE)
        if slots[k] is not None:
            raise BenchboxError(f"{path}:{lineno}: second caption {image}#{k}")
        slots[k] = caption
    return captions


def load_flickr8k(data: DataRoot, split: str, *, full_stop: bool = True) -> CaptionSplit:
    """Flickr8k ``split`` ("train", "dev", "test") from the official token file and split list."""
    _check_split(split)
    tokens_path, list_path = data.path(FLICKR8K_TOKENS), data.path(FLICKR8K_SPLIT_LISTS[split])
    by_image = read_flickr8k_tokens(tokens_path)
    image_ids = read_image_list(list_path)
    captions: list[str] = []
    for image in image_ids:
        slots = by_image.get(image)
        if slots is None or any(c is None for c in slots):
            have = [] if slots is None else [k for k, c in enumerate(slots) if c is not None]
            raise BenchboxError(
                f"{tokens_path}: image {image} of {list_path.name} has captions #{have} but needs "
                f"#0-#{PER_IMAGE - 1}; is the token file complete?"
            )
        captions += [merkx_full_stop(c) if full_stop else c for c in slots]  # type: ignore[misc]
    return CaptionSplit("flickr8k", split, image_ids, captions, [tokens_path, list_path])


def _json_caption(sentence: object, text: str, where: str) -> str:
    if not isinstance(sentence, dict) or text not in sentence:
        raise BenchboxError(f"{where}: a sentence without '{text}'")
    if text == "tokens":
        tokens = sentence["tokens"]
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise BenchboxError(f"{where}: 'tokens' must be a list of strings")
        caption = " ".join(t for t in tokens if t.strip())
    else:
        caption = sentence["raw"]
        if not isinstance(caption, str):
            raise BenchboxError(f"{where}: 'raw' must be a string")
        caption = caption.strip()
    if not caption:
        raise BenchboxError(f"{where}: empty caption")
    return caption


def load_karpathy_json(
    path: str | os.PathLike,
    split: str,
    *,
    dataset: str,
    text: str | None = None,
    full_stop: bool = True,
) -> CaptionSplit:
    """A split of Karpathy's ``dataset_<name>.json``. ``text``: ``"raw"`` or ``"tokens"`` (joined with single
    spaces); default ``raw`` for Flickr8k, ``tokens`` for COCO (docs/protocols.md#captions)."""
    _check_split(split)
    if dataset not in DATASETS:
        raise BenchboxError(f"unknown caption dataset {dataset!r}: use one of {', '.join(DATASETS)}")
    text = text or DEFAULT_JSON_TEXT[dataset]
    if text not in ("raw", "tokens"):
        raise BenchboxError(f"caption text must be 'raw' or 'tokens', not {text!r}")
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as fh:
            content = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchboxError(f"cannot read Karpathy caption file {path}: {exc}") from None
    except RecursionError:  # arrays or objects nested deeper than the parser's stack
        raise BenchboxError(f"{path}: not a Karpathy caption file (JSON nested too deeply to read)") from None
    if not isinstance(content, dict) or not isinstance(content.get("images"), list):
        raise BenchboxError(f"{path}: not a Karpathy caption file (expected an object with an 'images' list)")
    declared = content.get("dataset")
    if declared is not None and declared != dataset:
        raise BenchboxError(f"{path} is the Karpathy file of {declared!r}, not of {dataset!r}")
    wanted = JSON_SPLITS[split]
    image_ids: list[str] = []
    captions: list[str] = []
    for index, image in enumerate(content["images"]):
        where = f"{path}: images[{index}]"
        if not isinstance(image, dict) or not {"split", "filename", "sentences"} <= image.keys():
            raise BenchboxError(f"{where}: needs 'split', 'filename' and 'sentences'")
        if not isinstance(image["filename"], str) or not image["filename"]:
            raise BenchboxError(f"{where}: 'filename' must be a non-empty string, found {image['filename']!r}")
        if image["split"] not in wanted:
            continue
        sentences = image["sentences"]
        if not isinstance(sentences, list) or len(sentences) < PER_IMAGE:
            count = len(sentences) if isinstance(sentences, list) else "no list of"
            raise BenchboxError(f"{where} ({image['filename']}): {count} captions, needs at least {PER_IMAGE}")
        if dataset == "flickr8k" and len(sentences) != PER_IMAGE:
            raise BenchboxError(f"{where} ({image['filename']}): {len(sentences)} captions; Flickr8k has {PER_IMAGE}")
        image_ids.append(image["filename"])
        for sentence in sentences[:PER_IMAGE]:
            caption = _json_caption(sentence, text, where)
            captions.append(merkx_full_stop(caption) if full_stop else caption)
    if not image_ids:
        raise BenchboxError(f"{path}: no images in split {'/'.join(wanted)}")
    if len(set(image_ids)) != len(image_ids):
        raise BenchboxError(f"{path}: an image filename appears twice in split {split}")
    return CaptionSplit(dataset, split, image_ids, captions, [path])


def load_caption_dataset(
    data: DataRoot, dataset: str, split: str, *, karpathy_json: str | os.PathLike | None = None,
    full_stop: bool = True,
) -> CaptionSplit:
    """Captions of ``dataset`` ("flickr8k" or "coco") and ``split`` ("train", "dev", "test"); ``full_stop``:
    Merkx's `` .`` appended (:func:`merkx_full_stop`).

    Flickr8k reads the official files unless ``karpathy_json`` (``dataset_flickr8k.json``) is given. COCO reads
    ``karpathy_json``, else ``coco/dataset_coco.json`` in the data root."""
    if dataset == "flickr8k":
        if karpathy_json is not None:
            return load_karpathy_json(karpathy_json, split, dataset="flickr8k", full_stop=full_stop)
        return load_flickr8k(data, split, full_stop=full_stop)
    if dataset == "coco":
        path = Path(karpathy_json) if karpathy_json is not None else _coco_json(data)
        return load_karpathy_json(path, split, dataset="coco", full_stop=full_stop)
    raise BenchboxError(f"unknown caption dataset {dataset!r}: use one of {', '.join(DATASETS)}")


def require_caption_dataset(data: DataRoot, dataset: str, splits: tuple[str, ...] = SPLITS) -> None:
    """Fail, before anything is read, where the data root lacks the files :func:`load_caption_dataset` reads for
    ``splits`` of ``dataset`` (its default files: no ``karpathy_json``)."""
    if dataset == "flickr8k":
        data.require([FLICKR8K_TOKENS, *(FLICKR8K_SPLIT_LISTS[split] for split in splits)])
    elif dataset == "coco":
        _coco_json(data)
    else:
        raise BenchboxError(f"unknown caption dataset {dataset!r}: use one of {', '.join(DATASETS)}")


def _coco_json(data: DataRoot) -> Path:
    """Karpathy's ``dataset_coco.json`` in the data root, or an error saying where it comes from."""
    path = data.locate(COCO_KARPATHY_JSON)
    if path is None:
        raise BenchboxError(
            f"MSCOCO captions come from Karpathy's dataset_coco.json (caption_datasets.zip, "
            f"https://cs.stanford.edu/people/karpathy/deepimagesent/), which is not in the data root "
            f"{data.root}: put it at {data.root / COCO_KARPATHY_JSON}"
        )
    return path


def evaluation_split_files(dataset: str, split: str) -> tuple[str, ...]:
    """The data-root files :func:`load_evaluation_split` reads (COCO's captions file is located when read)."""
    if dataset == "flickr8k":
        return FLICKR8K_TOKENS, FLICKR8K_SPLIT_LISTS[split]
    return (COCO_ID_LISTS[split],)


def load_evaluation_split(data: DataRoot, dataset: str, split: str, *, full_stop: bool = True) -> CaptionSplit:
    """An evaluation split's images and captions in the order that defines queries, folds and per-image items:
    Flickr8k's official split list; for COCO, Karpathy's image-id list (the consecutive 1k folds of VSE++).
    ``full_stop``: Merkx's `` .`` appended (the default), else the files' text (as CLIP_benchmark reads it)."""
    if dataset == "flickr8k":
        return load_flickr8k(data, split, full_stop=full_stop)
    id_list = data.path(COCO_ID_LISTS[split])
    return load_caption_dataset(data, "coco", split, full_stop=full_stop).reordered(read_image_list(id_list), id_list)
