"""Structure tasks: what a (grounded) encoder's caption space looks like (Bordes et al. 2019 Table 2;
docs/protocols.md#structure; measures in :mod:`benchbox.tasks.structure_measures`).

- ``structure-flickr8k``: Flickr8k test, 1000 images × 5 captions (Karpathy split);
- ``structure-coco``: MSCOCO Karpathy 5k test, 5000 images × 5 captions (captions user-supplied, as for
  ``retrieval-coco-5k``).

Metrics (subset = the split): ``e_intra``, ``e_inter``, ``e_intra_minus_inter`` (main score) for every encoder,
and ``rho_vis`` when image features are given (``--features``, the file retrieval uses), over all caption
pairs of different images (exact, never sampled); for a grounded encoder with an image branch also
``rho_vis_image_side``, the same with the encoder's own image embeddings in place of the raw features (how far
the caption space keeps the geometry of its own image space); a vision–language encoder (``clip``) gets it from
its own image tower on the image files (``--images DIR``, else the dataset's folder under the data root;
:mod:`benchbox.data.image_files`), with or without ``--features``. Intervals: 95% percentile bootstrap over images
(``--bootstrap`` resamples, ``--seed``). Per-image items (columns ``subset, metric, item, image_id, value``;
``item`` = image index in split order) for ``e_intra``, ``e_inter`` and their difference, which ``compare``
pairs image by image (paired bootstrap of the mean); ρ_vis is not a mean of per-image items, so ``compare``
has no paired test for it and leaves it out (the report shows it per model with its interval).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from benchbox.lazy import lazy_module
from benchbox.data.captions import PER_IMAGE
from benchbox.embedding_checks import require_informative
from benchbox.encoding.protocol import Encoder, ImageTextEncoder, VisionLanguageEncoder
from benchbox.data.image_files import OWN_IMAGES, own_image_embeddings
from benchbox.tasks.evaluation_split import CAPTIONS, OnEvaluationSplit
from benchbox.task_contract.protocol import EvalContext, MetricRecord, MetricSpec, Task, TaskGroup, TaskResult
from benchbox.tasks.retrieval import FEATURES, IMAGES
from benchbox.tasks.structure_measures import structure

pd = lazy_module("pandas")  # imported at first use: the command line starts without it

#: metrics that are means of per-image items (and so have paired tests)
ITEM_METRICS = ("e_intra", "e_inter", "e_intra_minus_inter")
#: the per-image measures by a paired bootstrap of their mean; rho_vis (no per-item values): not tested
STRUCTURE_METRICS = (
    MetricSpec("e_intra", "mean", description="mean cosine between captions of one image"),
    MetricSpec("e_inter", "mean", higher_is_better=False, description="mean cosine to captions of other images"),
    MetricSpec("e_intra_minus_inter", "mean", description="E_intra - E_inter"),
    MetricSpec("rho_vis", None, unit="r", description="Spearman of caption and image-feature similarities"),
    MetricSpec("rho_vis_image_side", None, unit="r", description="rho_vis with the model's image branch"),
)
BORDES_BIBTEX = """@inproceedings{bordes2019incorporating,
  title = {Incorporating Visual Semantics into Sentence Representations within a Grounded Space},
  author = {Bordes, Patrick and Zablocki, Eloi and Soulier, Laure and Piwowarski, Benjamin and Gallinari, Patrick},
  booktitle = {Proceedings of EMNLP-IJCNLP 2019}, pages = {696--707}, year = {2019}
}"""


class Structure(OnEvaluationSplit, Task):
    """E_intra, E_inter, their difference and ρ_vis on one caption split (see the module docstring)."""

    dataset: ClassVar[str]
    split: ClassVar[str] = "test"
    main_score = "e_intra_minus_inter"
    metrics = STRUCTURE_METRICS
    item_kind = "image: its per-image measure (column metric) and value"
    item_keys = ("subset", "metric", "item")
    options = (FEATURES, IMAGES, CAPTIONS)
    group, order = "structure", 400
    citation = BORDES_BIBTEX
    reference = "Bordes et al. (2019) §5 / Table 2: E_intra, E_inter, ρ_vis; Karpathy & Fei-Fei (2015) splits"

    def evaluate(self, encoder: Encoder, ctx: EvalContext) -> TaskResult:
        options = ctx.options
        features_path = ctx.option(self, "features")
        caps = self.load_captions(ctx)
        sources: list[Any] = list(caps.source_files)
        visual: dict[str, np.ndarray] | None = None
        if features_path is not None:
            from benchbox.data import image_features

            features = np.asarray(image_features.load_features(features_path, caps.image_ids), dtype=np.float32)
            visual = {"rho_vis": features}
            if isinstance(encoder, ImageTextEncoder) and not isinstance(encoder, VisionLanguageEncoder):
                visual["rho_vis_image_side"] = encoder.encode_images(features)
            features_file = Path(features_path)
            sources += [features_file, *([image_features.ids_path(features_file)] if features_file.suffix == ".npy" else [])]
        if isinstance(encoder, VisionLanguageEncoder):
            images, files = own_image_embeddings(self, encoder, ctx, caps.image_ids, ctx.option(self, "images"))
            visual = {**(visual or {}), "rho_vis_image_side": images}
            sources += files
        ctx.log(f"{self.name}: {len(caps.image_ids)} images, {len(caps.captions)} captions"
                + (", with image features (rho_vis)" if features_path is not None else ""))
        embeddings = ctx.embed(caps.captions)
        require_informative(embeddings, encoder.name, f"{self.name} {self.split}")
        result = structure(embeddings, PER_IMAGE, visual, n_boot=options.bootstrap, seed=options.seed)
        n_images = len(caps.image_ids)
        metrics = [MetricRecord(self.name, self.split, name, value, *result.intervals[name], n_images)
                   for name, value in result.values.items()]
        items = pd.concat([
            pd.DataFrame({"subset": self.split, "metric": name, "item": np.arange(n_images),
                          "image_id": caps.image_ids, "value": values})
            for name, values in zip(ITEM_METRICS, (result.intra, result.inter, result.intra - result.inter))
        ], ignore_index=True)
        return TaskResult(
            task=self.name,
            metrics=metrics,
            items=items,
            protocol={
                "dataset": self.dataset, "split": self.split, "images": n_images, "captions": len(caps.captions),
                "pairs": "all ordered caption pairs (exact); rho_vis over pairs of different images",
                "similarity": "cosine (zero vectors: 0)",
                "features": features_path,
                "caption_text": ctx.option(self, "captions"),
                **({"images": OWN_IMAGES} if isinstance(encoder, VisionLanguageEncoder) else {}),
                "bootstrap": f"{options.bootstrap} resamples of images, seed {options.seed}, percentile 95%",
            },
            data_checksums=ctx.data.checksums(sources),
        )


class StructureFlickr8k(Structure):
    name = "structure-flickr8k"
    description = "Caption-space structure, Flickr8k test (1000 images x 5): E_intra, E_inter, rho_vis with --features"
    dataset = "flickr8k"


class StructureCoco(Structure):
    name = "structure-coco"
    description = "Caption-space structure, MSCOCO Karpathy 5k test (5000 images x 5): E_intra, E_inter, rho_vis"
    dataset = "coco"
    order = 401


STRUCTURE = TaskGroup("structure", ("structure-flickr8k",),
                      "Bordes et al. (2019) structural measures on Flickr8k test (add structure-coco with COCO captions)")
