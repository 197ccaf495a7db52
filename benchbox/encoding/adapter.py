"""Any encoder: an object with ``encode(list[str]) -> array``, or a plain callable, as an :class:`Encoder`.

The contract the adapter checks (``docs/plugins.md``):

- ``encode(sentences)`` (or the callable itself) is called with one argument, a list of ``str``, and returns
  something ``numpy.asarray`` turns into a floating [len(sentences), dim] array of finite values; every
  output is checked by :func:`benchbox.embedding_checks.check_encoder_output` and returned as float32;
- ``name`` (optional; default: the registry name it was loaded by, else the function or class name) names
  runs and log lines;
- ``dim`` (optional, an int): the output width; without it the width of the first output is used and every
  later output must have it;
- ``fingerprint`` (optional, a ``str`` or a method returning one) identifies the function computed (weights
  and configuration). **Caching policy**: with a fingerprint, embeddings are cached under a digest of the name
  and that fingerprint, and runs are reused by ``compare`` like a built-in encoder's; without one, nothing is
  cached and no run is ever reused (a fresh random identity per adapter), which is said once, as a
  :class:`benchbox.registry.PluginWarning`, when the encoder is adapted.
"""

from __future__ import annotations

import hashlib
import json
import uuid
import warnings
from typing import Any

import numpy as np

from benchbox.embedding_checks import check_encoder_output
from benchbox.encoding.protocol import Encoder, encoder_call, validate_sentences
from benchbox.errors import BenchboxError
from benchbox.registry import PluginWarning


def describe(obj: Any) -> str:
    """``module.QualName`` of a class, function or instance (for messages and the run manifest)."""
    target = obj if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "encode")) else type(obj)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', type(target).__name__)}"


def as_encoder(obj: Any, default_name: str | None = None) -> Encoder:
    """``obj`` itself if it is an :class:`Encoder`, else an :class:`AdaptedEncoder`; anything without an
    ``encode`` method that is not a plain callable either raises a :class:`BenchboxError`."""
    if isinstance(obj, Encoder):
        return obj
    if isinstance(obj, type):
        raise BenchboxError(f"{describe(obj)} is a class: give an instance (or let benchbox create it from a "
                            "registry name or module:attribute)")
    if not callable(getattr(obj, "encode", None)) and not callable(obj):
        raise BenchboxError(f"{describe(obj)} is not an encoder: it has no encode(list[str]) method and is not "
                            "callable")
    return AdaptedEncoder(obj, default_name)


class AdaptedEncoder(Encoder):
    """An :class:`Encoder` around a duck-typed encoder object or a function (see the module docstring)."""

    def __init__(self, wrapped: Any, default_name: str | None = None) -> None:
        self.wrapped = wrapped
        with encoder_call(default_name or describe(wrapped), "construction"):  # attributes may be properties
            method = getattr(wrapped, "encode", None)
            self.name = str(getattr(wrapped, "name", None) or default_name or getattr(wrapped, "__name__", None)
                            or type(wrapped).__name__)
            self.description = str(getattr(wrapped, "description", "") or "")
        self._encode_fn = method if callable(method) else wrapped
        self._dim = self._declared_dim()
        own = self._own_fingerprint()
        self.cacheable = own is not None
        payload = json.dumps({"name": self.name, "fingerprint": own}) if own is not None else None
        self._fingerprint = (hashlib.sha256(payload.encode()).hexdigest()[:20] if payload
                             else f"unidentified-{uuid.uuid4().hex[:12]}")
        if own is None:
            warnings.warn(f"encoder {self.name!r} ({describe(wrapped)}) has no fingerprint: its embeddings are not "
                          "cached and its runs are never reused; give it fingerprint() -> str to allow both",
                          PluginWarning, stacklevel=3)

    def _declared_dim(self) -> int | None:
        with encoder_call(self.name, "dim"):
            dim = getattr(self.wrapped, "dim", None)
        if dim is None:
            return None
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
            raise BenchboxError(f"encoder {self.name!r} declares dim {dim!r}: it must be a positive integer")
        return int(dim)

    def _own_fingerprint(self) -> str | None:
        with encoder_call(self.name, "fingerprint()"):
            value = getattr(self.wrapped, "fingerprint", None)
            if value is None:
                return None
            if callable(value):
                value = value()
        if not isinstance(value, str) or not value:
            raise BenchboxError(f"encoder {self.name!r}: fingerprint must be a non-empty str, got {value!r}")
        return value

    @property
    def dim(self) -> int:
        """The declared ``dim``, else the width of the first output (one sentence is encoded to learn it)."""
        if self._dim is None:
            self.encode(["dimension probe"])
        return self._dim

    def config(self) -> dict[str, Any]:
        return {"adapted": describe(self.wrapped), "own_fingerprint": self.cacheable}

    def weights_digest(self) -> str:
        return self._fingerprint

    def fingerprint(self) -> str:
        return self._fingerprint

    def _encode(self, sentences: list[str], batch_size: int) -> np.ndarray:
        return self._encode_fn(sentences)

    def encode(self, sentences: list[str], batch_size: int = 128) -> np.ndarray:
        """The wrapped encoder's output for ``sentences``, checked (shape, floating dtype, finite) as float32.
        ``batch_size`` is not passed on: the contract is ``encode(list[str])``."""
        sentences = validate_sentences(sentences)
        if not sentences:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = check_encoder_output(self._encode(sentences, batch_size), sentences, self.name, self._dim)
        if self._dim is None:
            self._dim = int(out.shape[1])
        return out
