"""The encoder contract (after SentEval's ``batcher``): a list of sentences in, a float32 matrix out.

Inside benchbox an encoder is an :class:`Encoder`: a ``name``, an output dimension ``dim``,
``encode(sentences)`` and ``fingerprint()``. The fingerprint identifies the exact function an encoder computes
(weights and configuration); the embedding cache and the result store key on it, so it must change whenever
the output could change. Grounded encoders that also embed images implement :class:`ImageTextEncoder`.

Plugins and API users need not subclass it: any object with ``encode(list[str]) -> array`` (optional
``name``, ``dim``, ``fingerprint``), or a plain callable, is wrapped by
:class:`benchbox.encoding.adapter.AdaptedEncoder` (see ``docs/plugins.md``).

Every call into an encoder's own code runs behind one guard, :func:`encoder_call`: construction (in
:mod:`benchbox.encoding.loading`), ``dim``, ``config``, ``weights_digest``, ``fingerprint``, ``encode``,
``encode_images``, ``run_notes`` and a :class:`VisionLanguageEncoder`'s ``preprocess_image``. Any exception it
raises, ``SystemExit`` included (a ``sys.exit(0)`` inside an encoder once ended a command with status 0 and no
run), becomes one :class:`BenchboxError` line naming the encoder and the call; a :class:`BenchboxError`, an OS
error naming its file and ``KeyboardInterrupt`` pass unchanged. Subclasses get the guard on these methods
automatically (:meth:`Encoder.__init_subclass__`); what ``encode_images`` returns is also converted and checked
(:func:`benchbox.embedding_checks.check_image_output`).
"""

from __future__ import annotations

import functools
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from benchbox.embedding_checks import as_array, check_image_output
from benchbox.errors import BenchboxError
from benchbox.limits import check_lengths
from benchbox.options import check_number


def call_failed(encoder: str, call: str, exc: BaseException) -> str:
    """One line saying that ``call`` of ``encoder`` raised ``exc`` (or exited)."""
    if isinstance(exc, SystemExit):
        return (f"encoder {encoder!r}: {call} called sys.exit({exc.code!r}); an encoder must return its output or "
                "raise an error, not end the program")
    detail = " ".join(str(exc).split())
    return f"encoder {encoder!r}: {call} failed: {type(exc).__name__}{': ' + detail[:300] if detail else ''}"


@contextmanager
def encoder_call(encoder: str, call: str) -> Iterator[None]:
    """The guard around one call into an encoder's code (module docstring)."""
    try:
        yield
    except (BenchboxError, KeyboardInterrupt, GeneratorExit):
        raise
    except OSError as exc:
        if exc.filename is not None:  # already one line naming the file (benchbox.cli)
            raise
        raise BenchboxError(call_failed(encoder, call, exc)) from exc
    except BaseException as exc:  # noqa: BLE001 - SystemExit included: an encoder never ends the program
        raise BenchboxError(call_failed(encoder, call, exc)) from exc


def _name(encoder: Any) -> str:
    try:
        return str(encoder.name)
    except Exception:  # noqa: BLE001 - a name that cannot be read: the class names it
        return type(encoder).__name__


def fingerprint_of(name: str, config: dict[str, Any], weights_digest: str) -> str:
    """:meth:`Encoder.fingerprint`: a hex digest of the name, configuration and weights digest."""
    payload = json.dumps({"name": name, "config": config, "weights": weights_digest}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:20]


#: the methods of an encoder that run its own code, with how a message names them
GUARDED = {"dim": "dim", "config": "config()", "weights_digest": "weights_digest()", "fingerprint": "fingerprint()",
           "_encode": "encode()", "encode": "encode()", "encode_images": "encode_images()",
           "preprocess_image": "preprocess_image()", "run_notes": "run_notes()"}


def _guarded(method: Callable[..., Any], attribute: str) -> Callable[..., Any]:
    """``method`` (the encoder's ``attribute``) behind :func:`encoder_call`; ``encode_images`` also checked."""
    if getattr(method, "__benchbox_guarded__", False):
        return method
    call = GUARDED[attribute]

    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        with encoder_call(_name(self), call):
            out = method(self, *args, **kwargs)
        if attribute == "encode_images":
            features = args[0] if args else kwargs.get("features")
            out = check_image_output(out, len(features), _name(self))  # the width: checked by each task
        return out

    guarded.__benchbox_guarded__ = True
    return guarded


class Encoder(ABC):
    """Base class for sentence encoders."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Put the methods of :data:`GUARDED` that ``cls`` defines behind :func:`encoder_call`."""
        super().__init_subclass__(**kwargs)
        for attribute in GUARDED:
            value = cls.__dict__.get(attribute)
            if isinstance(value, property) and value.fget is not None:
                setattr(cls, attribute, property(_guarded(value.fget, attribute), value.fset, value.fdel,
                                                 value.__doc__))
            elif callable(value) and not isinstance(value, (staticmethod, classmethod, type)):
                setattr(cls, attribute, _guarded(value, attribute))

    #: registry name of the encoder family (e.g. ``"glove-bow"``)
    name: str = "encoder"
    #: one line for ``benchbox list encoders`` (caveats such as training-data overlap belong here)
    description: str = ""
    #: whether embeddings may be stored in the embedding cache under :meth:`fingerprint` (False for an
    #: adapted encoder that has no fingerprint of its own)
    cacheable: bool = True
    #: the ``-e`` option that seeds this encoder's randomness (e.g. ``"seed"``), or None when it has none;
    #: runs whose identities differ in this option alone are seeds of one model, and a study's ``seeds``
    #: reach the encoder through it (plugins declare it as a class attribute of the same name)
    seed_option: str | None = None
    #: the distributions whose code computes the vectors (pip names); their installed versions join the
    #: embedding-cache key (:func:`benchbox.storage.identity.cache_key`), so an upgrade re-embeds. Plugins declare
    #: it as a class attribute of the same name; the default is numpy and torch
    computed_by: tuple[str, ...] = ("numpy", "torch")

    @property
    @abstractmethod
    def dim(self) -> int:
        """Dimension of the sentence embeddings."""

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """JSON-serialisable configuration, recorded in every run's manifest."""

    @abstractmethod
    def weights_digest(self) -> str:
        """A digest of the parameters (file checksum, or a hash of the tensors)."""

    @abstractmethod
    def _encode(self, sentences: list[str], batch_size: int) -> np.ndarray:
        """Encode a non-empty batch of validated sentences; returns [n, dim]."""

    def fingerprint(self) -> str:
        """A hex digest of name, configuration and weights: equal fingerprints give equal embeddings."""
        return fingerprint_of(self.name, self.config(), self.weights_digest())

    @classmethod
    def identity_unloaded(cls, **options: Any) -> dict[str, Any] | None:
        """What ``cls(**options)`` would report as ``dim``, ``config()`` and ``weights_digest()``, read without
        loading its weights (from the files it would load), as ``{"dim", "config", "weights_digest"}``; or None,
        the default, when only building the encoder tells. ``benchbox compare`` looks up a reusable run with it
        and builds the encoder only to evaluate it (:mod:`benchbox.reuse`). A wrong answer never reuses a wrong
        run: the fingerprint it gives must equal the one a run recorded, which hashes the configuration and
        weights digest of the encoder as built."""
        return None

    def run_notes(self) -> dict[str, Any]:
        """What the encoder observed while encoding in this process (e.g. truncated sentences), recorded with
        the run's encoder; not part of the fingerprint. Default: nothing."""
        return {}

    def encode(self, sentences: list[str], batch_size: int = 128) -> np.ndarray:
        """Embed ``sentences`` into a float32 array of shape [len(sentences), dim]."""
        sentences = validate_sentences(sentences)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int):
            raise BenchboxError(f"batch size must be an integer, got {batch_size!r}")
        check_number("batch size", batch_size, low=1)
        if not sentences:
            return np.zeros((0, self.dim), dtype=np.float32)
        returned = as_array(self._encode(sentences, batch_size), len(sentences), self.name)
        if returned.dtype.kind not in "fiu":  # strings, objects, complex numbers, booleans
            raise BenchboxError(f"encoder {self.name!r} returned {returned.dtype} values, not a numeric "
                                f"[{len(sentences)}, {self.dim}] matrix")
        out = returned.astype(np.float32)
        if out.shape != (len(sentences), self.dim):
            raise BenchboxError(
                f"encoder {self.name!r} returned shape {out.shape}, expected ({len(sentences)}, {self.dim})"
            )
        return out


class ImageTextEncoder(Encoder):
    """A grounded encoder with an image branch, as needed by image–caption retrieval."""

    #: ``"cosine"`` or ``"order"`` (Vendrov et al. 2016 order-violation score)
    similarity: str = "cosine"

    @abstractmethod
    def encode_images(self, features: np.ndarray) -> np.ndarray:
        """Map image features [n, feature_dim] to the joint space [n, dim] (float32)."""


class VisionLanguageEncoder(ImageTextEncoder):
    """A grounded encoder whose image side embeds image files itself (CLIP-family models): tasks hand it decoded
    images (:mod:`benchbox.data.image_files`), not a features file. ``preprocess_image`` is the model's own
    preprocessing of one RGB image (run in parallel worker threads); ``encode_images`` embeds a batch of its
    outputs, stacked: [n, channels, height, width] → [n, dim]."""

    #: images are decoded with Pillow (:mod:`benchbox.data.image_files`)
    computed_by = ("numpy", "torch", "Pillow")

    @abstractmethod
    def preprocess_image(self, image: Any) -> np.ndarray:
        """One ``PIL.Image`` (RGB) → the model's input array [channels, height, width] (float32)."""


def validate_sentences(sentences: Any) -> list[str]:
    """Check the encoder input: a list of ``str``, each within the length limit (:mod:`benchbox.limits`).
    Empty strings are allowed (they encode to something defined by each encoder, e.g. the zero vector for
    bag-of-words), ``None`` and non-strings are not."""
    if isinstance(sentences, str):
        raise BenchboxError("encode() takes a list of sentences, not a single string: wrap it in a list")
    sentences = list(sentences)
    for i, s in enumerate(sentences):
        if not isinstance(s, str):
            raise BenchboxError(f"sentence {i} is {type(s).__name__}, not str")
    check_lengths(sentences, lambda i: f"the sentence to encode at position {i}")
    return sentences


def digest_arrays(arrays: dict[str, Any]) -> str:
    """A stable sha256 over named arrays or tensors (for ``weights_digest`` of in-memory models)."""
    h = hashlib.sha256()
    for key in sorted(arrays):
        value = arrays[key]
        if hasattr(value, "detach"):
            value = value.detach().cpu().numpy()
        value = np.ascontiguousarray(value)
        h.update(key.encode())
        h.update(str(value.dtype).encode())
        h.update(str(value.shape).encode())
        h.update(value.tobytes())
    return h.hexdigest()
