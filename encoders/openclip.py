"""``open-clip``: the text and image towers of an OpenCLIP model (Ilharco et al. 2021, the ``open_clip`` package;
Cherti et al. 2023 for the LAION-trained checkpoints) as a grounded sentence encoder (docs/vision-language.md).
Optional: ``pip install 'benchbox[openclip]'``.

Weights, offline only (nothing is downloaded):
- ``model=FOLDER``: a folder in the Hugging Face hub layout of OpenCLIP (``open_clip_config.json`` beside
  ``open_clip_model.safetensors`` or ``open_clip_pytorch_model.bin``, and the tokenizer files when the config
  names a Hugging Face tokenizer), loaded with OpenCLIP's ``local-dir:`` schema;
- ``model=ORG/REPO`` (or ``hf-hub:ORG/REPO``): such a repository already in the local Hugging Face cache;
- ``model=ARCH`` (an OpenCLIP architecture, e.g. ``ViT-B-32``) with ``checkpoint=FILE``, a local weights file.
A pretrained tag (``laion2b_s34b_b79k``) is not fetched: the error names the hub repository to download.

Protocol (as CLIP_benchmark's zero-shot retrieval): the model's tokenizer at the model's context length (its
positional embedding is that long; longer sentences are truncated, counted, logged and recorded in the run's
``encoder_notes``), ``encode_text``; the model's evaluation transform on the RGB image, ``encode_image``; both
L2-normalised; cosine similarity. ``precision``: float32 (default), float16 or bfloat16 (OpenCLIP's
``pure_fp16``/``pure_bf16``); embeddings are returned as float32.
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

#: benchbox precision → OpenCLIP's ``precision`` argument
PRECISIONS = {"float32": "fp32", "float16": "pure_fp16", "bfloat16": "pure_bf16"}
HUB_PREFIX = "hf-hub:"
CONFIG = "open_clip_config.json"
#: the weight files OpenCLIP's ``local-dir:`` schema looks for
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pth")


def _open_clip() -> Any:
    try:
        import open_clip
    except ImportError as exc:
        raise BenchboxError("open-clip needs the open_clip package: pip install 'benchbox[openclip]'") from exc
    return open_clip


def _hub_folder(repo: str) -> Path:
    """The local snapshot of hub repository ``repo``, or a one-line error saying how to supply it offline."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo, local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError, OSError) as exc:
        raise BenchboxError(
            f"OpenCLIP model {repo!r} is not available offline (neither a folder nor in the local Hugging Face "
            f"cache): where you have network access run `hf download {repo} --local-dir FOLDER`, copy FOLDER here "
            "and pass -e model=FOLDER"
        ) from exc


def resolve(open_clip: Any, model: str, checkpoint: str | None) -> tuple[str, Path, Path | None]:
    """(OpenCLIP model name, the folder or file whose bytes are the weights, checkpoint file or None)."""
    path = Path(model).expanduser()
    if path.is_dir() or model.startswith(HUB_PREFIX) or ("/" in model and not path.exists()):
        folder = path if path.is_dir() else _hub_folder(model.removeprefix(HUB_PREFIX))
        if not (folder / CONFIG).is_file():
            raise BenchboxError(f"{folder} has no {CONFIG}: not an OpenCLIP model folder (hub layout)")
        if not any(p.suffix in WEIGHT_SUFFIXES for p in folder.iterdir()):
            raise BenchboxError(f"{folder} has no weights file ({', '.join(WEIGHT_SUFFIXES)}): OpenCLIP would "
                                "initialise the model randomly; add the checkpoint")
        return f"local-dir:{folder}", folder, None
    if model not in open_clip.list_models():
        raise BenchboxError(f"{model!r} is neither a folder nor an OpenCLIP architecture (e.g. ViT-B-32; "
                            "`open_clip.list_models()`)")
    if checkpoint is None:
        raise BenchboxError(f"open-clip {model} needs its weights: -e checkpoint=FILE, or -e model=FOLDER")
    file = Path(checkpoint).expanduser()
    if not file.is_file():
        tag = open_clip.get_pretrained_cfg(model, checkpoint) or {}
        repo = str(tag.get("hf_hub", "")).strip("/")
        how = f"download its weights (`hf download {repo} --local-dir FOLDER`) and pass -e model=FOLDER" if repo \
            else "pass -e checkpoint=FILE, a local weights file"
        raise BenchboxError(f"open-clip checkpoint {checkpoint!r} is not a local file: nothing is downloaded; {how}")
    return model, file, file


class OpenCLIPEncoder(TextImageTowers):
    """An OpenCLIP model's text tower (``encode``) and image tower (``encode_images``)."""

    name = "open-clip"
    computed_by = ("numpy", "torch", "open_clip_torch", "ftfy", "Pillow", "torchvision")
    description = (
        "text and image towers of an OpenCLIP model (-e model=FOLDER, a cached hub repo, or ARCH with "
        "-e checkpoint=FILE); offline only; needs benchbox[openclip]. Zero-shot retrieval from image files."
    )

    def __init__(self, model: str | os.PathLike | None = None, checkpoint: str | None = None,
                 precision: str = "float32", device: str = "auto") -> None:
        if model is None:
            raise BenchboxError("open-clip needs a model: -e model=FOLDER (an OpenCLIP hub-layout folder), a hub "
                                "repository in the local Hugging Face cache, or an architecture with -e checkpoint=FILE")
        if precision not in PRECISIONS:
            raise BenchboxError(f"open-clip precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        open_clip = _open_clip()
        from benchbox.device import resolve_device

        self.model_name, self.checkpoint, self.precision = str(model), checkpoint, precision
        name, self.weights, file = resolve(open_clip, str(model), checkpoint)
        self.device = resolve_device(device)
        try:
            self.model, _, self.preprocess = open_clip.create_model_and_transforms(
                name, pretrained=None if file is None else str(file), precision=PRECISIONS[precision],
                device=self.device)
            self.tokenizer = open_clip.get_tokenizer(name)
        except (RuntimeError, ValueError, KeyError, OSError) as exc:
            detail = " ".join(str(exc).split())[:300]
            raise BenchboxError(f"{self.weights} is not a loadable OpenCLIP model: {detail}") from exc
        self.model.eval()
        warn_half_precision_on_cpu(self.name, precision, self.device)
        self.dtype = next(self.model.parameters()).dtype
        self.context_length = int(self.tokenizer.context_length)
        self.towers_ready(TruncationCount(self.name, self.context_length, "the model's context length"))

    def config(self) -> dict[str, Any]:
        return {"model": self.model_name, "checkpoint": self.checkpoint, "precision": self.precision,
                "context_length": self.context_length, "dim": self.dim}

    def _weights_digest(self) -> str:
        from benchbox.storage.checksums import sha256_file

        return digest_folder(self.weights) if self.weights.is_dir() else sha256_file(self.weights)

    def _token_counts(self, sentences: list[str]) -> list[int]:
        """Tokens of each sentence with its start and end tokens, before truncation."""
        inner = getattr(self.tokenizer, "tokenizer", None)  # OpenCLIP's HFTokenizer wraps a transformers one
        if inner is not None:
            return [len(ids) for ids in inner(sentences, verbose=False)["input_ids"]]
        return [len(self.tokenizer.encode(s)) + 2 for s in sentences]

    def _text(self, sentences: list[str]) -> torch.Tensor:
        with torch.inference_mode():
            tokens = self.tokenizer(sentences).to(self.device)
            return torch.nn.functional.normalize(self.model.encode_text(tokens).float(), dim=-1)

    def _encode(self, sentences: list[str], batch_size: int) -> np.ndarray:
        self.truncation.add(self._token_counts(sentences))
        out = [self._text(sentences[start : start + batch_size]).cpu().numpy()
               for start in range(0, len(sentences), batch_size)]
        return np.concatenate(out)

    def preprocess_image(self, image: Any) -> np.ndarray:
        return self.preprocess(image).numpy().astype(np.float32, copy=False)

    def encode_images(self, features: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            pixels = torch.from_numpy(np.ascontiguousarray(features)).to(self.device, self.dtype)
            return torch.nn.functional.normalize(self.model.encode_image(pixels).float(), dim=-1).cpu().numpy()
