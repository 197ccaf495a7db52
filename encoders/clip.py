"""``clip``: the text and image towers of a contrastive vision–language model in Hugging Face transformers — CLIP
(Radford et al. 2021), SigLIP (Zhai et al. 2023) and any model with ``get_text_features`` and
``get_image_features`` whose image processor gives ``pixel_values`` — as a grounded sentence encoder
(docs/vision-language.md).

``model`` (``-e model=...``) is a local folder holding the model, its tokenizer and its image processor (what
``save_pretrained`` of each writes), or a hub name that is already in the local Hugging Face cache: models are
only ever loaded offline (``local_files_only``). The fingerprint hashes every file of the folder.

Protocol: the model's own, as in the CLIP paper's zero-shot retrieval and LAION's CLIP_benchmark.
- Text: the model's tokenizer, truncated to ``max_length`` tokens (default: the text tower's position limit,
  77 for CLIP, 64 for SigLIP) and padded to the longest sentence of the batch — or to ``max_length`` for SigLIP,
  whose text tower pools the last position and was trained on inputs padded so (the transformers SigLIP docs:
  ``padding="max_length"``); ``get_text_features`` (the projected pooled output), L2-normalised.
  Sentences longer than ``max_length`` tokens are counted, logged (the first time) and recorded in the run's
  ``encoder_notes``.
- Images: the model's image processor (resize, centre crop, normalise) on the RGB image, ``get_image_features``,
  L2-normalised. Similarity: cosine. SigLIP's learned logit scale and bias are monotone, so ranks are unchanged.
- ``precision``: ``float32`` (default), ``float16`` or ``bfloat16`` weights and activations; embeddings are
  returned as float32.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchbox.encoders.sbert import digest_folder
from benchbox.encoders.towers import TextImageTowers
from benchbox.encoders.truncation import TruncationCount
from benchbox.errors import BenchboxError

PRECISIONS = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
#: model types whose text tower pools the last position, so sentences are padded to ``max_length``
PAD_TO_MAX_LENGTH = ("siglip",)


def resolve_model_dir(model: str | os.PathLike) -> Path:
    """The local folder of ``model``: a folder, or a hub name found in the local Hugging Face cache."""
    path = Path(model).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise BenchboxError(f"{path} is a file: pass the folder of a transformers vision–language model")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(str(model), local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError, OSError) as exc:
        raise BenchboxError(
            f"vision–language model {model!r} is not available offline (neither a folder nor in the local Hugging "
            f"Face cache): where you have network access run `hf download {model} --local-dir FOLDER`, copy FOLDER "
            "here and pass -e model=FOLDER"
        ) from exc


def _pooled(output: Any) -> torch.Tensor:
    """The embedding of a ``get_*_features`` call (a tensor in transformers 4, the pooled output in 5)."""
    return output if isinstance(output, torch.Tensor) else output.pooler_output


class CLIPEncoder(TextImageTowers):
    """A transformers vision–language model's text tower (``encode``) and image tower (``encode_images``)."""

    name = "clip"
    computed_by = ("numpy", "torch", "transformers", "tokenizers", "Pillow", "torchvision")
    description = (
        "text and image towers of a transformers vision-language model (CLIP, SigLIP, ...), -e model=FOLDER or a "
        "cached hub name; offline only. Zero-shot retrieval from image files (--images DIR)."
    )

    def __init__(self, model: str | os.PathLike | None = None, precision: str = "float32",
                 max_length: int | None = None, device: str = "auto") -> None:
        if model is None:
            raise BenchboxError("clip needs a model: -e model=FOLDER (a transformers CLIP/SigLIP folder) or a hub "
                                "name in the local Hugging Face cache (e.g. -e model=openai/clip-vit-base-patch32)")
        if precision not in PRECISIONS:
            raise BenchboxError(f"clip precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        self.folder = resolve_model_dir(model)
        self.model_name, self.precision = str(model), precision
        from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

        from benchbox.device import resolve_device

        self.device = resolve_device(device)
        from transformers.utils import logging as transformers_logging

        shown = transformers_logging.is_progress_bar_enabled()
        transformers_logging.disable_progress_bar()  # benchbox shows its own progress (and --quiet none)
        try:
            self.model = AutoModel.from_pretrained(self.folder, local_files_only=True, dtype=PRECISIONS[precision])
            self.tokenizer = AutoTokenizer.from_pretrained(self.folder, local_files_only=True)
            self.image_processor = AutoImageProcessor.from_pretrained(self.folder, local_files_only=True)
        except (OSError, ValueError, KeyError) as exc:
            detail = " ".join(str(exc).split())[:300]
            raise BenchboxError(f"{self.folder} is not a loadable transformers vision–language model with its "
                                f"tokenizer and image processor: {detail}") from exc
        finally:
            if shown:
                transformers_logging.enable_progress_bar()
        if not all(callable(getattr(self.model, f, None)) for f in ("get_text_features", "get_image_features")):
            raise BenchboxError(f"{self.folder} holds a {type(self.model).__name__}, which has no get_text_features and "
                                "get_image_features: not a vision–language model")
        self.model.to(self.device).eval()
        self.model_type = str(self.model.config.model_type)
        limit = int(self.model.config.text_config.max_position_embeddings)
        self.max_length = limit if max_length in (None, "") else int(max_length)
        if not 2 <= self.max_length <= limit:
            raise BenchboxError(f"clip max_length must be between 2 and {limit} (the text tower's positions), "
                                f"got {self.max_length}")
        self.padding = "max_length" if self.model_type in PAD_TO_MAX_LENGTH else "longest"
        self.towers_ready(TruncationCount(self.name, self.max_length, "option max_length"))

    def config(self) -> dict[str, Any]:
        return {"model": self.model_name, "model_type": self.model_type, "precision": self.precision,
                "max_length": self.max_length, "padding": self.padding, "dim": self.dim}

    def _weights_digest(self) -> str:
        return digest_folder(self.folder)

    @torch.inference_mode()
    def _text(self, sentences: list[str]) -> torch.Tensor:
        tokens = self.tokenizer(sentences, padding=self.padding, truncation=True, max_length=self.max_length,
                                return_tensors="pt").to(self.device)
        inputs = {k: v for k, v in tokens.items() if k in ("input_ids", "attention_mask")}
        return torch.nn.functional.normalize(_pooled(self.model.get_text_features(**inputs)).float(), dim=-1)

    def _encode(self, sentences: list[str], batch_size: int) -> np.ndarray:
        lengths = [len(ids) for ids in self.tokenizer(sentences, verbose=False)["input_ids"]]
        self.truncation.add(lengths)
        order = np.argsort(lengths, kind="stable")  # batches of similar length: little padding
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        for start in range(0, len(sentences), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._text([sentences[i] for i in rows]).cpu().numpy()
        return out

    def preprocess_image(self, image: Any) -> np.ndarray:
        return np.asarray(self.image_processor(images=image, return_tensors="np")["pixel_values"][0], np.float32)

    @torch.inference_mode()
    def encode_images(self, features: np.ndarray) -> np.ndarray:
        pixels = torch.from_numpy(np.ascontiguousarray(features)).to(self.device, PRECISIONS[self.precision])
        embedded = _pooled(self.model.get_image_features(pixel_values=pixels)).float()
        return torch.nn.functional.normalize(embedded, dim=-1).cpu().numpy()
