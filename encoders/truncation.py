"""The sentences a text tower truncated: counted on every call, said once in the log, recorded with the run.

A vision–language text tower reads at most a fixed number of tokens (CLIP: 77). Longer sentences are cut, which
changes their embeddings silently; :class:`TruncationCount` counts them (the first call that truncates says so in
one log line) and gives the totals as the encoder's ``run_notes`` (the run manifest's ``encoder_notes``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchbox.console import log


@dataclass
class TruncationCount:
    """Sentences longer than ``limit`` tokens among those encoded by ``encoder`` (``limit_name`` says where the
    limit comes from, for the log line)."""

    encoder: str
    limit: int
    limit_name: str
    truncated: int = 0
    encoded: int = 0

    def add(self, token_counts: list[int]) -> None:
        """Count one call's sentences by their token counts before truncation."""
        truncated = sum(n > self.limit for n in token_counts)
        if truncated and not self.truncated:  # the first time only; the run records the total
            log(f"{self.encoder}: {truncated} of {len(token_counts)} sentences are longer than {self.limit} tokens "
                f"and were truncated ({self.limit_name}); the run records the total (encoder_notes)")
        self.truncated += truncated
        self.encoded += len(token_counts)

    def notes(self) -> dict[str, Any]:
        return {"truncated_sentences": self.truncated, "encoded_sentences": self.encoded, "max_length": self.limit}
