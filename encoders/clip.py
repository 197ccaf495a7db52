"""``clip``: the text and image towers of a contrastive vision–language model in Hugging Face transformers — CLIP
(Radford et al. 2021), SigLIP (Zhai et al. 2023) and any model with ``get_text_features`` and
``get_image_features`` whose image processor gives ``pixel_values`` — as a grounded sentence encoder
(docs/vision-language.md).

``model`` (``-e model=...``) is a local folder holding the model, its tokenizer and its image processor (what
``save_pretrained`` of each writes), or a hub name that is already in the local Hugging Face cache: models are
only ever loaded offline (``local_files_only``). The fingerprint hashes every file of the folder. A folder without
any of the :data:`TOKENIZER_FILES` is refused, naming them: transformers would build an empty tokenizer for it
(every sentence the same tokens, so the same embedding) or fail with an unrelated message.

Protocol: the model's own, as in the CLIP paper's zero-shot retrieval and LAION's CLIP_benchmark.
- Text: the model's tokenizer, truncated to ``max_length`` tokens (default: the text tower's position limit,
  77 for CLIP, 64 for SigLIP and SigLIP 2) and padded to the longest sentence of the batch — or, for SigLIP and
  SigLIP 2, to ``max_length`` with no attention mask: their text towers pool the last position and were trained
  attending to the padding of inputs padded to 64 tokens (big_vision's SigLIP, and OpenCLIP's port of it, call
  the text tower on the padded ids alone; the SigLIP 2 model card: ``padding="max_length", max_length=64``).
  ``text_mask`` records the choice: ``auto`` (the default: as the model was trained), ``none`` (no mask) or
  ``attention`` (the tokenizer's attention mask: SigLIP then ignores its padding, which it never did in training;
  kept as a recorded variant). CLIP's causal text tower pools at the end-of-text token, so its padding never
  reaches the embedding either way. ``get_text_features`` (the projected pooled output), L2-normalised.
  Sentences longer than ``max_length`` tokens are counted, logged (the first time) and recorded in the run's
  ``encoder_notes``.
- Images: the model's image processor (resize, centre crop, normalise) on the RGB image, ``get_image_features``,
  L2-normalised. SigLIP 2's NaFlex processor gives each image its patches, their mask and its patch grid, which
  travel packed in one array per image (:func:`pack_patches`). Similarity: cosine. SigLIP's learned logit scale
  and bias are monotone, so ranks are unchanged.
- ``precision``: ``float32`` (default), ``float16`` or ``bfloat16`` weights and activations; embeddings are
  returned as float32. ``float16`` on a CPU is allowed with a one-line warning: PyTorch's CPU kernels emulate it
  (ViT-B/32 on 32 images: 85 s against 6–9 s in float32, issue #43).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from benchbox.encoders.sbert import digest_folder
from benchbox.encoders.towers import TextImageTowers, warn_half_precision_on_cpu
from benchbox.encoders.truncation import TruncationCount
from benchbox.errors import BenchboxError
from benchbox.lazy import lazy_module

torch = lazy_module("torch")  # imported at first use: `benchbox list encoders` starts without it
#: the ``precision`` values, each the name of its torch dtype (``torch.float32``, ...)
PRECISIONS = ("float32", "float16", "bfloat16")
#: model types whose text tower pools the last position and was trained on ids padded to ``max_length`` with no
#: attention mask (big_vision's SigLIP; the SigLIP 2 model card)
TRAINED_UNMASKED = ("siglip", "siglip2")
#: ``text_mask`` values: ``auto`` is the model's training protocol (no mask for :data:`TRAINED_UNMASKED`)
TEXT_MASKS = ("auto", "none", "attention")
#: the files a transformers tokenizer reads its vocabulary from (the fast tokenizer's, then the slow ones': CLIP's
#: BPE vocabulary with merges.txt, SigLIP's SentencePiece model, other SentencePiece and WordPiece vocabularies)
TOKENIZER_FILES = ("tokenizer.json", "vocab.json", "spiece.model", "sentencepiece.bpe.model", "tokenizer.model",
                   "vocab.txt")


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


def require_tokenizer(folder: Path) -> None:
    """A one-line error unless ``folder`` holds one of the :data:`TOKENIZER_FILES`."""
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise BenchboxError(f"{folder} holds no tokenizer (none of {', '.join(TOKENIZER_FILES)}; CLIP's is "
                            "tokenizer.json or vocab.json with merges.txt, SigLIP's spiece.model): save the model's "
                            "tokenizer into the folder (tokenizer.save_pretrained(FOLDER)), or download the whole "
                            "model (`hf download NAME --local-dir FOLDER`)")


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
                 max_length: int | None = None, device: str = "auto", text_mask: str = "auto") -> None:
        if model is None:
            raise BenchboxError("clip needs a model: -e model=FOLDER (a transformers CLIP/SigLIP folder) or a hub "
                                "name in the local Hugging Face cache (e.g. -e model=openai/clip-vit-base-patch32)")
        if precision not in PRECISIONS:
            raise BenchboxError(f"clip precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        if text_mask not in TEXT_MASKS:
            raise BenchboxError(f"clip text_mask must be one of {', '.join(TEXT_MASKS)}, got {text_mask!r}")
        self.folder = resolve_model_dir(model)
        require_tokenizer(self.folder)
        self.model_name, self.precision = str(model), precision
        from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

        from benchbox.device import resolve_device

        self.device = resolve_device(device)
        from transformers.utils import logging as transformers_logging

        shown = transformers_logging.is_progress_bar_enabled()
        transformers_logging.disable_progress_bar()  # benchbox shows its own progress (and --quiet none)
        try:
            self.model = AutoModel.from_pretrained(self.folder, local_files_only=True, dtype=getattr(torch, precision))
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
        trained_unmasked = self.model_type in TRAINED_UNMASKED
        self.padding = "max_length" if trained_unmasked else "longest"
        self.text_mask = ("none" if trained_unmasked else "attention") if text_mask == "auto" else text_mask
        warn_half_precision_on_cpu(self.name, precision, self.device)
        self.towers_ready(TruncationCount(self.name, self.max_length, "option max_length"))

    def config(self) -> dict[str, Any]:
        return {"model": self.model_name, "model_type": self.model_type, "precision": self.precision,
                "max_length": self.max_length, "padding": self.padding, "text_mask": self.text_mask, "dim": self.dim}

    def _weights_digest(self) -> str:
        return digest_folder(self.folder)

    def _text(self, sentences: list[str]) -> torch.Tensor:
        with torch.inference_mode():
            tokens = self.tokenizer(sentences, padding=self.padding, truncation=True, max_length=self.max_length,
                                    return_tensors="pt").to(self.device)
            inputs = {k: v for k, v in tokens.items() if k == "input_ids" or (k == "attention_mask" and
                                                                               self.text_mask == "attention")}
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
        processed = self.image_processor(images=image, return_tensors="np")
        if "spatial_shapes" in processed:  # SigLIP 2 (NaFlex): patches, their mask and the patch grid
            return pack_patches(processed)
        return np.asarray(processed["pixel_values"][0], np.float32)

    def encode_images(self, features: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            vision = self.model.config.vision_config
            inputs = (unpack_patches(features, vision.num_channels * vision.patch_size ** 2)
                      if self.model_type == "siglip2"
                      else {"pixel_values": torch.from_numpy(np.ascontiguousarray(features))})
            inputs = {k: v.to(self.device) for k, v in inputs.items()}
            inputs["pixel_values"] = inputs["pixel_values"].to(getattr(torch, self.precision))
            embedded = _pooled(self.model.get_image_features(**inputs)).float()
            return torch.nn.functional.normalize(embedded, dim=-1).cpu().numpy()


def pack_patches(processed: Any) -> np.ndarray:
    """One image of SigLIP 2's NaFlex processor as one float32 row: its P × C patch values, its P-long patch mask
    and its (height, width) patch grid (small integers, exact in float32), for :func:`unpack_patches`."""
    pixels, mask, shape = (np.asarray(processed[k][0], np.float32)
                           for k in ("pixel_values", "pixel_attention_mask", "spatial_shapes"))
    return np.concatenate([pixels.reshape(-1), mask, shape])


def unpack_patches(rows: np.ndarray, per_patch: int) -> dict[str, torch.Tensor]:
    """:func:`pack_patches`'s rows [B, P·per_patch + P + 2] back into ``get_image_features``'s three inputs
    (``per_patch``: the values of one patch, channels × patch size²)."""
    rows = torch.from_numpy(np.ascontiguousarray(rows))
    count = (rows.shape[1] - 2) // (per_patch + 1)
    values = count * per_patch
    return {"pixel_values": rows[:, :values].reshape(len(rows), count, per_patch),
            "pixel_attention_mask": rows[:, values:values + count].round().int(),
            "spatial_shapes": rows[:, -2:].round().long()}
