"""GloVe-BOW behind a gate, for the study stop/resume tests: while the file named by ``$BENCHBOX_TEST_GATE``
does not exist, encoding waits, so a test can interrupt a study at a known point (a cell mid-evaluation) without
timing races. With the gate open it is GloVe-BOW (same numbers, same fingerprint)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from benchbox.encoders.glove_bow import GloveBowEncoder


class GatedBow(GloveBowEncoder):
    def _encode(self, sentences, batch_size):
        gate = os.environ.get("BENCHBOX_TEST_GATE")
        while gate and not Path(gate).exists():
            time.sleep(0.05)
        return super()._encode(sentences, batch_size)
