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
    with pytest.raises(BenchboxError, match=r"--bootstrap 1000000000 \(86\.2 KiB per resample: a "
                                            r"bootstrap of 1379 items, 64 bytes per item\) needs about 80\.\d TiB of memory but .* is available: use --bootstrap (\d+) or fewer") as info:
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


@pytest.fixture
def two_runs(tmp_path):
    from tests.comparison.test_compare import make_run

    return (make_run(tmp_path, "good", noise_scale=0.3, rank_shift=0, accuracy=0.85),
            make_run(tmp_path, "bad", noise_scale=3.0, rank_shift=6, accuracy=0.7))


def test_compares_bootstrap_refusal_names_the_option_the_user_set(two_runs, capsys):
    """Issue 55: compare --test-resamples N on bootstrap-tested rows said "use --bootstrap N or fewer". The value
    here passes the at-once check (8 bytes per resample fit) and fails the bootstrap's (64 bytes per item)."""
    from tests.helpers import cli

    n = int(available_bytes() * 0.9 / 8 / 2)
    code, out, err = cli(capsys, "compare", *map(str, two_runs), "--test-resamples", str(n), "-t", "mr")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"--test-resamples {n} (" in err and re.search(r"use --test-resamples \d+ or fewer", err)
    assert "--bootstrap" not in err


@pytest.mark.parametrize("command, option", [("compare", "--test-resamples"), ("leaderboard", "--resamples")])
def test_absurd_resamples_are_refused_at_once_in_one_line(two_runs, capsys, command, option):
    """Issue 50: compare --test-resamples 99999999999999999999 was accepted silently; leaderboard --resamples
    100000000 ended in a MemoryError traceback (a 1 TiB array)."""
    from tests.helpers import cli

    runs = [str(two_runs[0].parent)] if command == "leaderboard" else list(map(str, two_runs))
    for n in (99999999999999999999, 100_000_000):
        code, out, err = cli(capsys, command, *runs, option, str(n))
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
        assert err.startswith(f"error: {option} {n} (") and re.search(rf"use {option} \d+ or fewer", err)
