"""Errors a user can cause are one line (exit 2); ``benchbox --debug`` or ``BENCHBOX_DEBUG=1`` shows their
traceback instead (issue #16)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

MESSAGE = "unknown encoder 'no-such-encoder'"


@pytest.mark.parametrize(("flags", "env", "traceback"), [
    ([], {}, False),
    (["--debug"], {}, True),
    ([], {"BENCHBOX_DEBUG": "1"}, True),
    ([], {"BENCHBOX_DEBUG": "0"}, False),
])
def test_debug_shows_the_traceback(tmp_path, flags, env, traceback):
    done = subprocess.run([sys.executable, "-m", "benchbox", *flags, "eval", "no-such-encoder", "--task", "sts12",
                           "--no-save"], capture_output=True, text=True, cwd=tmp_path,
                          env={**{k: v for k, v in os.environ.items() if k != "BENCHBOX_DEBUG"}, **env})
    assert MESSAGE in done.stderr
    if traceback:
        assert done.returncode == 1
        assert done.stderr.startswith("Traceback (most recent call last):")
        assert done.stderr.splitlines()[-1].startswith(f"benchbox.errors.BenchboxError: {MESSAGE}")
    else:
        assert done.returncode == 2
        assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith(f"error: {MESSAGE}")
    assert list(tmp_path.iterdir()) == []
