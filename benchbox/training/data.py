"""Training material: captions (5 per image, caption k of image i at row 5i + k; for the clips of an MSVD-format
dataset, all of a clip's descriptions in the train split, ``counts[i]`` consecutive rows for clip i, and five per
clip in dev) and one visual anchor per image, for the train and dev splits; with the textual term, the ordered text corpus
(:mod:`benchbox.training.text_corpus`). The images are Flickr8k's or MSCOCO's, or the video clips of an
MSVD-format dataset (``--dataset msvd --video-captions DIR``, :mod:`benchbox.data.video_captions`).

The visual side (``--visual``):
- ``features``: image features from a file (ResNet-152, 2048-d), checked by ``benchbox.data.image_features``.
- ``frame``, ``average``, ``attention``: a clip's frames from a clip-features file (:mod:`benchbox.data.clip_features`)
  made into one vector by Bordes et al.'s F, A or T (:mod:`benchbox.training.clips`); F and A are computed
  here, T (which depends on the caption and a learned projection) in the model, from the frames and the
  captions' fixed queries.
- ``random``: a fixed random vector per image (Bordes et al. 2019's baseline R): standard normal, 2048-d,
  drawn from a generator seeded by (seed, sha256 of the image id) — the same vector for an image whatever the
  split or subset.
- ``cluster``: no visual vector at all; captions of the same image are each other's positives
  (Bordes et al.'s cluster hypothesis).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from benchbox.data.captions import PER_IMAGE
from benchbox.data.root import DataRoot
from benchbox.errors import BenchboxError
from benchbox.training.clips import (ATTENTION_QUERIES, CLIP_VISUALS, FRAMES, caption_queries, fixed_clip_vectors,
                                     make_query_encoder, query_record)
from benchbox.training.text_corpus import TextCorpus, load_text_corpus
from benchbox.data.video_captions import DATASET as VIDEO_DATASET, load_video_captions

if TYPE_CHECKING:
    from benchbox.data.clip_features import Clips
    from benchbox.encoders.glove_bow import GloveBowEncoder
    from benchbox.training.config import TrainConfig

VISUAL_MODES = ("features", "cluster", "random", *CLIP_VISUALS)
RANDOM_ANCHOR_DIM = 2048


@dataclass(frozen=True)
class SplitData:
    """One split: image ids, captions and (unless ``--visual cluster`` or ``attention``) visual vectors [N, D];
    with ``--visual attention`` the clips' frames and every caption's fixed query [rows, d_q] instead. Image i's
    captions are ``per_image[i]`` consecutive rows (five each unless ``counts`` says otherwise)."""

    image_ids: list[str]
    captions: list[str]
    visual: np.ndarray | None
    #: caption files read: {label: sha256}
    source_files: dict[str, str]
    clips: Clips | None = None
    queries: np.ndarray | None = None
    #: captions per image, [N] (None: five each, the layout of the image datasets)
    counts: np.ndarray | None = None

    @property
    def per_image(self) -> np.ndarray:
        """[N] int64: the captions of each image."""
        if self.counts is None:
            return np.full(len(self.image_ids), PER_IMAGE, dtype=np.int64)
        return self.counts

    @property
    def lengths(self) -> np.ndarray:
        return np.array([max(len(c), 1) for c in self.captions], dtype=np.int64)

    @property
    def feature_dim(self) -> int | None:
        """The dimension of a visual vector (None without a visual side)."""
        if self.clips is not None:
            return self.clips.dim
        return None if self.visual is None else int(self.visual.shape[1])


def random_anchors(image_ids: list[str], seed: int, dim: int = RANDOM_ANCHOR_DIM) -> np.ndarray:
    """A fixed standard-normal vector per image id, independent of the other ids."""
    out = np.empty((len(image_ids), dim), dtype=np.float32)
    for i, image_id in enumerate(image_ids):
        key = int.from_bytes(hashlib.sha256(image_id.encode("utf-8")).digest()[:8], "little")
        out[i] = np.random.default_rng([seed, key]).standard_normal(dim, dtype=np.float32)
    return out


def load_split(
    data: DataRoot,
    dataset: str,
    split: str,
    *,
    visual: str,
    features: str | os.PathLike | None,
    seed: int,
    max_captions: int | None = None,
    video_captions: str | os.PathLike | None = None,
    max_descriptions: int | None = None,
    query_encoder: GloveBowEncoder | None = None,
    frame: str = FRAMES[0],
    attention_query: str = ATTENTION_QUERIES[0],
) -> SplitData:
    """Captions of ``split`` with their visual side; ``max_captions`` keeps the first images whose captions
    number at most max_captions in all (max_captions // 5 images of five). ``video_captions``: the folder of
    ``--dataset msvd``, whose clips keep all their descriptions or their first ``max_descriptions``; ``query_encoder``: T's fixed sentence encoder
    (``--visual attention``; default :func:`benchbox.training.clips.make_query_encoder`'s); ``frame``: F's frame,
    ``attention_query``: T's query (:mod:`benchbox.training.clips`)."""
    from benchbox.data.captions import load_caption_dataset

    if visual not in VISUAL_MODES:
        raise BenchboxError(f"--visual must be one of {', '.join(VISUAL_MODES)}, not {visual!r}")
    if dataset == VIDEO_DATASET:
        if video_captions is None:
            raise BenchboxError(f"--dataset {VIDEO_DATASET} needs --video-captions DIR (AllVideoDescriptions.txt and "
                                "split lists)")
        caps = load_video_captions(video_captions, split, max_descriptions=max_descriptions)
        counts = caps.counts
    else:
        caps = load_caption_dataset(data, dataset, split)
        counts = None
    image_ids, captions = list(caps.image_ids), list(caps.captions)
    if max_captions is not None:
        ends = np.cumsum(counts if counts is not None else np.full(len(image_ids), PER_IMAGE))
        keep = int(np.searchsorted(ends, max_captions, side="right"))
        if keep == 0:
            raise BenchboxError(f"--max-captions must be at least {int(ends[0])} (one image)")
        image_ids, captions = image_ids[:keep], captions[: int(ends[keep - 1])]
        counts = None if counts is None else counts[:keep]
    sources = data.checksums(list(caps.source_files))
    if visual in CLIP_VISUALS:
        if features is None:
            raise BenchboxError(f"--visual {visual} needs --features FILE (clip features, or image features as "
                                "clips of one frame)")
        from benchbox.data.clip_features import load_clips

        clips = load_clips(features, image_ids)
        if visual == "attention":
            fixed = caption_queries(captions, query_encoder or make_query_encoder(None), attention_query)
            return SplitData(image_ids, captions, None, sources, clips=clips, queries=fixed, counts=counts)
        vectors = fixed_clip_vectors(visual, clips, frame)
    elif visual == "features":
        if features is None:
            raise BenchboxError("--visual features needs --features FILE (or use --visual cluster / random)")
        from benchbox.data.image_features import load_features

        vectors = np.asarray(load_features(features, image_ids), dtype=np.float32)
    elif visual == "random":
        vectors = random_anchors(image_ids, seed)
    else:
        vectors = None
    return SplitData(image_ids=image_ids, captions=captions, visual=vectors, source_files=sources, counts=counts)


@dataclass(frozen=True)
class TrainingData:
    """What a char-RNN run trains and selects on, with its provenance for the manifest."""

    train: SplitData
    dev: SplitData
    #: the data root the splits were read from
    root: str
    #: sha256 of ``--features`` (None without a features file)
    features_sha256: str | None
    #: the ordered corpus of the textual term (``--text-corpus``; None without it)
    text: TextCorpus | None = None
    #: T's word vectors (``--visual attention``: source, digest, dim; None otherwise)
    word_vectors: dict[str, object] | None = None


def require_training_data(config: TrainConfig) -> DataRoot:
    """Check, before anything is read, that what ``config`` reads is there: the files of the ``--eval-semantic``
    tasks (a misspelt task fails here, not at the first snapshot), its ``--features``, ``--text-corpus`` and
    ``--video-captions`` paths, and the data root's captions of the dataset's train and dev splits. Returns the
    data root. ``benchbox study`` runs it on every ``train`` table before any cell starts."""
    data = DataRoot(config.data_dir)
    if config.eval_semantic:  # evaluated at each snapshot with the tasks' default options
        from benchbox.task_contract.protocol import require_task_data, resolve_tasks
        from benchbox.task_contract.options import TaskOptions, option_values

        tasks = resolve_tasks(list(config.eval_semantic))
        require_task_data(data, tasks, {task.name: option_values(task, TaskOptions()) for task in tasks})
    given = {"--features": (config.features, " (make one with `benchbox features extract`)"),
             "--text-corpus": (config.text_corpus, ""), "--video-captions": (config.video_captions, "")}
    for flag, (value, hint) in given.items():
        if value and not Path(value).exists():
            raise BenchboxError(f"{flag} {value}: no such file or folder{hint}")
    if config.dataset != VIDEO_DATASET:  # its captions are in --video-captions, not the data root
        from benchbox.data.captions import require_caption_dataset

        require_caption_dataset(data, config.dataset, ("train", "dev"))
    return data


def load_training_data(config: TrainConfig) -> TrainingData:
    """The train and dev splits of ``config`` and its text corpus, after :func:`require_training_data`; fails on
    a bad ``--text-corpus`` and on fewer training images than one batch."""
    data = require_training_data(config)
    text = load_text_corpus(config.text_corpus, batch_size=config.batch_size) if config.text_corpus else None
    queries = make_query_encoder(config.word_vectors) if config.visual == "attention" else None
    split = dict(visual=config.visual, features=config.features, seed=config.seed,
                 video_captions=config.video_captions, query_encoder=queries, frame=config.frame,
                 attention_query=config.attention_query)
    train = load_split(data, config.dataset, "train", max_captions=config.max_captions,
                       max_descriptions=config.max_descriptions, **split)
    dev = load_split(data, config.dataset, "dev", max_descriptions=PER_IMAGE, **split)  # dev retrieval's layout
    if len(train.image_ids) < config.batch_size:
        raise BenchboxError(f"{len(train.image_ids)} training images are fewer than one batch")
    return TrainingData(train, dev, str(data.root),
                        data.checksum(Path(config.features)) if config.features else None, text,
                        query_record(queries) if queries is not None else None)
