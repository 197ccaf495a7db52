"""What the two families of vision–language encoders share (``clip``: transformers models; ``open-clip``): the
embedding width, found by embedding one probe sentence once the model is loaded; the digest of the weights, computed
once, when the cache or a run first asks for it; and the sentences the text tower truncated, counted per call and
recorded as the run's notes (:class:`benchbox.encoders.truncation.TruncationCount`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchbox.console import log
from benchbox.encoding.protocol import VisionLanguageEncoder
from benchbox.encoders.truncation import TruncationCount

if TYPE_CHECKING:
    import torch


class TextImageTowers(VisionLanguageEncoder):
    """A loaded text tower and image tower; a subclass loads them, then calls :meth:`towers_ready`, and implements
    :meth:`_text` (a list of sentences → the text tower's embeddings) and :meth:`_weights_digest`."""

    truncation: TruncationCount
    _dim: int
    _digest: str | None = None

    def towers_ready(self, truncation: TruncationCount) -> None:
        """Record how truncation is counted and find the width from one probe sentence."""
        self.truncation = truncation
        self._dim = int(self._text(["a"]).shape[1])

    def _text(self, sentences: list[str]) -> torch.Tensor:
        raise NotImplementedError

    def _weights_digest(self) -> str:
        raise NotImplementedError

    @property
    def dim(self) -> int:
        return self._dim

    def weights_digest(self) -> str:
        if self._digest is None:
            self._digest = self._weights_digest()
        return self._digest

    def run_notes(self) -> dict[str, Any]:
        return self.truncation.notes()


def warn_half_precision_on_cpu(name: str, precision: str, device: str) -> None:
    """One line where ``float16`` is asked for on a CPU, which emulates it at a tenth of float32's speed."""
    if precision == "float16" and str(device).startswith("cpu"):
        log(f"{name}: precision float16 on a CPU runs about 10x slower than float32 (ViT-B/32, 32 images: 85 s "
             "against 6-9 s); use float32, or bfloat16 where the CPU supports it")
