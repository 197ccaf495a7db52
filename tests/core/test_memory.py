"""Issue #18: sizes are checked against available memory before the work, naming the option value that fits."""

from __future__ import annotations

import re

import numpy as np
import pytest

from benchbox.errors import BenchboxError
from benchbox.memory import available_bytes, format_bytes
from benchbox.stats.resampling import BOOTSTRAP_BYTES_PER_CELL
from benchbox.stats import paired_bootstrap
from benchbox.training.footprint import require_training_memory, training_bytes


def test_format_bytes():
    assert [format_bytes(x) for x in (512, 2048, 3 * 1024**3, 22.6 * 1024**4)] == [
        "512.0 B", "2.0 KiB", "3.0 GiB", "22.6 TiB"]


def test_huge_bootstrap_is_refused_before_allocating_and_the_suggested_size_fits():
    """Before: compare --bootstrap 1000000000 ended in `_ArrayMemoryError: Unable to allocate 22.6 TiB`."""
    rng = np.random.default_rng(0)
    g, a, b = rng.normal(size=(3, 1379))
    with pytest.raises(BenchboxError, match=r"a bootstrap of 1000000000 resamples × 1379 items needs about "
                                            r"80\.\d TiB of memory but .* is available: use --bootstrap (\d+) or fewer") as info:
        paired_bootstrap(g, a, b, n_boot=10**9)
    suggested = int(re.search(r"use --bootstrap (\d+)", str(info.value)).group(1))
    assert suggested * BOOTSTRAP_BYTES_PER_CELL * 1379 <= available_bytes()  # fits (the 10% headroom absorbs drift)
    assert suggested > 1000  # this machine fits the default
    assert paired_bootstrap(g, a, b, n_boot=200).n_boot == 200


def test_training_footprint_and_refusal():
    sizes = dict(rnn="gru", hidden=1024, batch_size=32, max_length=100, feature_dim=2048, vocab_size=50, partner=False)
    params = 2 * 3 * (20 * 1024 + 1024**2 + 2 * 1024) + 50 * 20 + 2 * (2048 * 128) + 2048 * 2048
    activations = 4 * 2 * 32 * 100 * (2 * 4 * 1024 + 6 * 1024)
    assert training_bytes(**sizes) == 16 * params + activations
    require_training_memory("cpu", **sizes)  # the paper's default size fits
    with pytest.raises(BenchboxError, match=r"training with --hidden 100000 and --batch-size 32 .* needs about "
                                            r"\d+\.\d GiB of memory .*: use --hidden (\d+) or less") as info:
        require_training_memory("cpu", **{**sizes, "hidden": 100_000})
    smaller = int(re.search(r"use --hidden (\d+)", str(info.value)).group(1))
    assert training_bytes(**{**sizes, "hidden": smaller}) <= available_bytes()
    assert 1024 <= smaller < 100_000
