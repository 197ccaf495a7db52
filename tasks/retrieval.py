"""Image–caption retrieval tasks: Flickr8k and MSCOCO 1k/5k (docs/protocols.md#retrieval; metrics in
:mod:`benchbox.tasks.retrieval_metrics`, after VSE++ ``evaluation.py``, Faghri et al. 2018).

Tasks (Karpathy & Fei-Fei 2015 splits):
- ``retrieval``: Flickr8k test, 1000 images (Merkx & Frank 2019 Table 2); ``retrieval-flickr8k-dev``: its dev
  split, for model selection.
- ``retrieval-coco-1k``: mean over five consecutive 1000-image folds of the Karpathy 5k test set;
  ``retrieval-coco-5k``: all 5000 at once; ``retrieval-coco-dev``: five 1k folds of the Karpathy 5k val set
  (VSE++ validates on the first of them). Folds follow the order of ``coco/karpathy_{test,val}_images.txt``;
  the captions come from Karpathy's ``dataset_coco.json`` (user-supplied, ``coco/`` in the data root) and must
  cover exactly the listed images.

The encoder needs an image branch (:class:`~benchbox.encoding.protocol.ImageTextEncoder`). A feature-based one (the
char-RNNs) needs the image features file (``--features``), read with :func:`benchbox.data.image_features.load_features`
in split order; a vision–language encoder (:class:`~benchbox.encoding.protocol.VisionLanguageEncoder`, e.g. ``clip``)
embeds the image files themselves — the zero-shot protocol of the CLIP paper and CLIP_benchmark — from
``--images DIR`` or the dataset's image folder under the data root (:mod:`benchbox.data.image_files`); every image
file's sha256 is recorded with the run's data checksums.

Intervals (95%): recalls get a Wilson interval on the share of queries (``retrieval_ci="wilson"``, default)
or a bootstrap over images (``"bootstrap"``). The bootstrap resamples images with replacement, each bringing
its 5 captions (a caption's text → image rank and its siblings' are not independent), within each fold, and
recomputes the fold-averaged metric from the fixed per-query ranks; percentile interval. Median rank, mean
rank and rsum always take their interval from that bootstrap (``bootstrap`` = 0: no interval).
Per-query ranks go into the run's items (columns ``subset, direction, query, rank, image_id``; ``subset`` is the
fold, ``query`` the image index (i2t) or caption row (t2i) in split order) for paired tests between models.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.data.captions import PER_IMAGE
from benchbox.embedding_checks import require_informative
from benchbox.encoding.protocol import Encoder, ImageTextEncoder, VisionLanguageEncoder
from benchbox.errors import BenchboxError
from benchbox.data.image_files import OWN_IMAGES, own_image_embeddings
from benchbox.stats.resampling import index_batches, percentile_interval
from benchbox.stats import wilson_ci
from benchbox.tasks.evaluation_split import CAPTIONS, OnEvaluationSplit
from benchbox.task_contract.protocol import EvalContext, MetricRecord, MetricSpec, Task, TaskGroup, TaskResult
from benchbox.task_contract.options import TaskOption, TaskOptions
from benchbox.tasks.retrieval_metrics import (
    DIRECTIONS,
    MEDR_CONVENTIONS,
    RECALL_KS,
    TIE_CONVENTIONS,
    retrieval_metrics,
)

pd = lazy_module("pandas")  # imported at first use: the command line starts without it

CI_METHODS = ("wilson", "bootstrap")
RECALLS = tuple(f"r{k}" for k in RECALL_KS)
METRICS = RECALLS + ("medr", "meanr")
#: bootstrap resamples drawn at once (memory: batch × 5N int64)
BOOTSTRAP_BATCH = 50


def bootstrap_by_image(
    i2t: dict[str, np.ndarray], t2i: dict[str, np.ndarray], *, n_boot: int, seed: int, medr: str,
    level: float = 0.95
) -> dict[tuple[str, str], tuple[float, float]]:
    """Percentile intervals of every metric and rsum, resampling images (with their 5 captions) within folds.

    ``i2t``: ``{"ranks": 1-based ranks, "r1"/"r5"/"r10": P(rank ≤ K)}``, each [folds, m]; ``t2i``: the same,
    each [folds, m, 5] (caption k of image i at [f, i, k]). Each resample draws m images per fold with
    replacement and averages the per-fold metrics, as the point estimate does. Returns
    ``{(direction, metric): (low, high)}`` with ``("all", "rsum")``.
    """
    folds, m = i2t["ranks"].shape
    draws: dict[tuple[str, str], list[np.ndarray]] = {}
    for picks in index_batches(np.random.default_rng(seed), n_boot, folds, m, BOOTSTRAP_BATCH):
        size = len(picks)
        samples = {
            "i2t": {key: np.take_along_axis(a[None], picks, axis=2) for key, a in i2t.items()},
            "t2i": {key: np.take_along_axis(a[None], picks[..., None], axis=2).reshape(size, folds, m * PER_IMAGE)
                    for key, a in t2i.items()},
        }
        rsum = np.zeros(size)
        for direction, sample in samples.items():
            ranks = sample["ranks"]
            values = {f"r{k}": 100.0 * sample[f"r{k}"].mean(axis=2) for k in RECALL_KS}
            median = np.median(ranks, axis=2)
            values["medr"] = np.floor(median) if medr == "vsepp" else median
            values["meanr"] = ranks.mean(axis=2)
            for metric, per_fold in values.items():
                draws.setdefault((direction, metric), []).append(per_fold.mean(axis=1))
            rsum += sum(values[f"r{k}"].mean(axis=1) for k in RECALL_KS)
        draws.setdefault(("all", "rsum"), []).append(rsum)
    return {key: percentile_interval(np.concatenate(parts), level) for key, parts in draws.items()}


#: R@K by McNemar on hit@K (R@10 per direction is a summary unit), medr/meanr by Wilcoxon; rsum: not tested
RETRIEVAL_METRICS = (
    *(MetricSpec(m, "ranks", unit="%", decimals=1, summary=m == "r10", description=f"recall at {m[1:]} in %") for m in RECALLS),
    MetricSpec("medr", "ranks", higher_is_better=False, unit="rank", decimals=1, description="median rank of the target"),
    MetricSpec("meanr", "ranks", higher_is_better=False, unit="rank", decimals=1, description="mean rank of the target"),
    MetricSpec("rsum", None, unit="value", decimals=1, description="sum of the six recalls"),
)
FEATURES = TaskOption("features", str, None, "image features file (`benchbox features extract`)", flag="features",
                      protocol_key="features")
#: the image folder of an encoder that embeds images itself; no protocol key: the files' checksums are recorded
IMAGES = TaskOption("images", str, None, "image folder, for encoders that embed image files (clip); default: the "
                    "dataset's folder under the data root", flag="images")
RETRIEVAL_OPTIONS = (
    FEATURES,
    IMAGES,
    CAPTIONS,
    TaskOption("retrieval_ci", str, "wilson", "recall intervals: wilson (share of queries) or bootstrap (images)",
               choices=CI_METHODS, flag="retrieval-ci"),
    TaskOption("retrieval_medr", str, "vsepp", "median rank: vsepp (floor of the median, as VSE++) or median",
               choices=MEDR_CONVENTIONS, flag="retrieval-medr", protocol_key="medr"),
    TaskOption("retrieval_ties", str, "expected", "ties with the target: expected (random tie breaking, McSherry & "
               "Najork 2008; equal to VSE++ when nothing ties), optimistic or pessimistic",
               choices=TIE_CONVENTIONS, flag="retrieval-ties", protocol_key="ties"),
)
VSEPP_BIBTEX = """@inproceedings{faghri2018vse,
  title = {{VSE++}: Improving Visual-Semantic Embeddings with Hard Negatives},
  author = {Faghri, Fartash and Fleet, David J. and Kiros, Jamie Ryan and Fidler, Sanja},
  booktitle = {Proceedings of BMVC 2018}, year = {2018}
}"""


def check_options(task: Task, ctx: EvalContext) -> dict[str, Any]:
    """The task's retrieval options, checked (a bootstrap interval needs bootstrap resamples)."""
    values = ctx.values_for(task)
    if values["retrieval_ci"] == "bootstrap" and ctx.options.bootstrap <= 0:
        raise BenchboxError("retrieval_ci 'bootstrap' needs bootstrap resamples: set --bootstrap to a positive number")
    return values


class Retrieval(OnEvaluationSplit, Task):
    """Image–caption retrieval on one split of a caption dataset (see the module docstring)."""

    dataset: ClassVar[str]
    split: ClassVar[str]
    folds: ClassVar[int] = 1
    main_score = "rsum"
    metrics = RETRIEVAL_METRICS
    item_kind = "query (image or caption): 1-based rank of its target"
    item_keys = ("subset", "direction", "query")
    options = RETRIEVAL_OPTIONS
    group, order = "retrieval", 200
    citation = VSEPP_BIBTEX
    reference = "VSE++ evaluation.py (Faghri et al. 2018); Karpathy & Fei-Fei (2015) splits"

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        if not isinstance(encoder, ImageTextEncoder):
            raise BenchboxError(
                f"{self.name} needs an encoder with an image branch (a trained grounded model, e.g. a "
                f"`benchbox train char-gru` run); {encoder.name!r} only encodes text"
            )
        if not getattr(encoder, "has_image_branch", True):  # e.g. a char-RNN trained with --visual cluster
            raise BenchboxError(
                f"{self.name} needs an image branch, and this {encoder.name} model was trained without images "
                "(--visual cluster): no --features can help; evaluate it on text tasks"
            )
        options = ctx.options
        values = check_options(self, ctx)
        caps = self.load_captions(ctx)
        ctx.log(f"{self.name}: {len(caps.image_ids)} images, {len(caps.captions)} captions, {self.folds} fold(s)")
        if isinstance(encoder, VisionLanguageEncoder):
            if values["features"] is not None:
                raise BenchboxError(f"{self.name}: {encoder.name} embeds the image files itself and reads no "
                                    "--features: drop it, and give --images DIR (or the images under the data root)")
            images, image_files = own_image_embeddings(self, encoder, ctx, caps.image_ids, values["images"])
        else:
            images, image_files = self._from_features(encoder, caps.image_ids, values)
        captions = ctx.embed(caps.captions)
        require_informative(captions, encoder.name, f"{self.name} captions")
        if images.shape[1] != captions.shape[1]:
            raise BenchboxError(
                f"{encoder.name} maps the image features of {values['features']} to {images.shape[1]}-d image "
                f"embeddings but its captions to {captions.shape[1]}-d ones: give the features the model was "
                "trained on (the same extractor and layer)"
            )
        metrics = retrieval_metrics(
            images, captions, folds=self.folds,
            similarity=encoder.similarity, medr=values["retrieval_medr"], ties=values["retrieval_ties"],
            device=options.device,
        )
        protocol = self._protocol(metrics, options, values, encoder.similarity)
        if isinstance(encoder, VisionLanguageEncoder):
            protocol["images"] = OWN_IMAGES
        return TaskResult(
            task=self.name,
            metrics=self._records(metrics, options, values),
            items=self._items(metrics, caps.image_ids),
            protocol=protocol,
            data_checksums=ctx.data.checksums([*caps.source_files, *image_files]),
        )

    def _from_features(self, encoder: ImageTextEncoder, image_ids: list[str],
                       values: dict[str, Any]) -> tuple[np.ndarray, list[Path]]:
        """The encoder's image embeddings of the features file (``--features``) and the files read."""
        if values["features"] is None:
            raise BenchboxError(
                f"{self.name} needs the image features of the {self.dataset} images: pass --features FILE "
                "(make one with `benchbox features extract`)"
            )
        from benchbox.data import image_features

        features = image_features.load_features(values["features"], image_ids)
        features_file = Path(values["features"])
        sidecar = [image_features.ids_path(features_file)] if features_file.suffix == ".npy" else []
        return encoder.encode_images(features), [features_file, *sidecar]

    def _records(self, metrics: dict[str, Any], options: TaskOptions, values: dict[str, Any]) -> list[MetricRecord]:
        intervals: dict[tuple[str, str], tuple[float, float]] = {}
        if options.bootstrap > 0:
            m = len(metrics["i2t"]["ranks"]) // self.folds
            per_query = {d: {"ranks": metrics[d]["ranks"], **{f"r{k}": metrics[d]["hits"][k] for k in RECALL_KS}}
                         for d in DIRECTIONS}
            intervals = bootstrap_by_image(
                {key: a.reshape(self.folds, m) for key, a in per_query["i2t"].items()},
                {key: a.reshape(self.folds, m, PER_IMAGE) for key, a in per_query["t2i"].items()},
                n_boot=options.bootstrap, seed=options.seed, medr=values["retrieval_medr"],
            )
        records = []
        for direction in DIRECTIONS:
            ranks = metrics[direction]["ranks"]
            for metric in METRICS:
                low, high = intervals.get((direction, metric), (math.nan, math.nan))
                if metric in RECALLS and values["retrieval_ci"] == "wilson":  # on the expected number of hits
                    hits = float(metrics[direction]["hits"][int(metric[1:])].sum())
                    low, high = (100.0 * v for v in wilson_ci(hits, len(ranks)))
                records.append(
                    MetricRecord(self.name, direction, metric, metrics[direction][metric], low, high, len(ranks))
                )
        low, high = intervals.get(("all", "rsum"), (math.nan, math.nan))
        n_queries = sum(len(metrics[d]["ranks"]) for d in DIRECTIONS)
        records.append(MetricRecord(self.name, "all", "rsum", metrics["rsum"], low, high, n_queries))
        return records

    def _items(self, metrics: dict[str, Any], image_ids: list[str]) -> pd.DataFrame:
        frames = []
        ids = np.asarray(image_ids, dtype=object)
        for direction in DIRECTIONS:
            entry = metrics[direction]
            query = np.arange(len(entry["ranks"]))
            frames.append(pd.DataFrame({
                "subset": ["all"] * len(query) if self.folds == 1 else [f"fold{f + 1}" for f in entry["fold"]],
                "direction": direction,
                "query": query,
                "rank": entry["ranks"],
                "image_id": ids[query if direction == "i2t" else query // PER_IMAGE],
            }))
        return pd.concat(frames, ignore_index=True)

    def _protocol(self, metrics: dict[str, Any], options: TaskOptions, values: dict[str, Any],
                  similarity: str) -> dict[str, Any]:
        recall_ci = "Wilson 95% on the share of queries" if values["retrieval_ci"] == "wilson" else "image bootstrap"
        return {
            "dataset": self.dataset,
            "split": self.split,
            "images": len(metrics["i2t"]["ranks"]),
            "captions": len(metrics["t2i"]["ranks"]),
            "folds": self.folds,
            "similarity": similarity,
            "medr": values["retrieval_medr"],
            "ties": values["retrieval_ties"],
            "tied_queries": {d: metrics[d]["tied"] for d in DIRECTIONS},
            "recall_ci": recall_ci,
            "bootstrap": f"{options.bootstrap} resamples of images within folds, seed {options.seed}, percentile",
            "features": values["features"],
            "caption_text": values["captions"],
            "definitions": "VSE++ evaluation.py i2t/t2i; R@K in percent; metrics averaged over folds",
        }


class RetrievalFlickr8k(Retrieval):
    name = "retrieval"
    description = "Image-caption retrieval, Flickr8k test (1000 images): R@1/5/10, medr, meanr, both directions"
    dataset, split = "flickr8k", "test"


class RetrievalFlickr8kDev(Retrieval):
    name = "retrieval-flickr8k-dev"
    description = "Image-caption retrieval, Flickr8k dev (1000 images), for model selection"
    dataset, split = "flickr8k", "dev"
    splits = ("dev",)
    order = 201


class RetrievalCoco1k(Retrieval):
    name = "retrieval-coco-1k"
    description = "Image-caption retrieval, MSCOCO 1k: mean over five 1000-image folds of the Karpathy test set"
    dataset, split, folds = "coco", "test", 5
    order = 202


class RetrievalCoco5k(Retrieval):
    name = "retrieval-coco-5k"
    description = "Image-caption retrieval, MSCOCO 5k Karpathy test set"
    dataset, split = "coco", "test"
    order = 203


class RetrievalCocoDev(Retrieval):
    name = "retrieval-coco-dev"
    description = "Image-caption retrieval, MSCOCO Karpathy val: mean over five 1000-image folds, for model selection"
    dataset, split, folds = "coco", "dev", 5
    splits = ("dev",)
    order = 204


RETRIEVAL_COCO = TaskGroup("retrieval-coco", ("retrieval-coco-1k", "retrieval-coco-5k"), "MSCOCO 1k and 5k retrieval")
