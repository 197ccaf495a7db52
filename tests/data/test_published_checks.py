"""Published numbers checked like data (benchbox.data.published_checks): a comparators file or an mteb result is
read only when it is a regular file under the size limit, so a device or a FIFO fails at once in one line
(issue 50: ``--comparators /dev/zero`` ran until the process was killed for memory)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from benchbox.comparison.comparator_file import read_comparators
from benchbox.data.published_checks import MAX_FILE_BYTES, check_correlation, read_small_text
from benchbox.errors import BenchboxError


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_a_device_is_refused_before_a_byte_is_read():
    with pytest.raises(BenchboxError) as caught:
        read_comparators("/dev/zero")
    assert str(caught.value) == "--comparators /dev/zero is a device, not a regular file; give a file of published numbers"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_blocking_on_it(tmp_path):
    fifo = tmp_path / "published.toml"
    os.mkfifo(fifo)
    done = []
    reader = threading.Thread(target=lambda: done.append(pytest.raises(BenchboxError, read_small_text, fifo)))
    reader.start()
    reader.join(timeout=30)
    if reader.is_alive():  # opening it would have blocked: unblock it, then fail
        with open(fifo, "w"):
            pass
        reader.join()
        pytest.fail("reading a FIFO blocked")
    assert f"{fifo} is a FIFO, not a regular file" in str(done[0].value)


def test_a_file_over_the_limit_is_refused_by_its_size(tmp_path):
    big = tmp_path / "published.toml"
    with big.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    with pytest.raises(BenchboxError) as caught:
        read_small_text(big)
    assert str(caught.value) == (f"{big} is {MAX_FILE_BYTES + 1:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit of "
                                 "a published-numbers file; give the numbers' own file")


@pytest.mark.parametrize("value, why", [
    (0.5, None), (-1, None), (1.0, None),
    (1.7, "r is 1.7, not a correlation in [-1, 1]: it looks like r × 100; give 0.017"),
    (-72.5, "r is -72.5, not a correlation in [-1, 1]: it looks like r × 100; give -0.725"),
    (170.0, "r is 170, not a correlation in [-1, 1]"),
    (float("nan"), "r is nan, not a number"), (True, "r is True, not a number"), (None, "r is None, not a number"),
])
def test_a_correlation_is_in_minus_one_one(value, why):
    assert check_correlation(value, "r") == why
