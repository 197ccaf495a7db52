"""The command line starts without the heavy libraries (issue 53): ``--help``, ``list``, ``describe`` and an
argument error import none of pandas, joblib, scipy, scikit-learn, statsmodels or torch, nor h5py (which
only image features need) (:mod:`benchbox.lazy`). Which modules load is checked, not how long they take."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchbox.lazy import lazy_module

HEAVY = ("pandas", "joblib", "scipy", "sklearn", "statsmodels", "torch", "h5py")
#: runs the command line in-process, then prints the heavy top-level packages it imported (stdout is the CLI's)
PROBE = """
import json, sys
from benchbox.cli import main
heavy = set(json.loads(sys.argv[2]))
sys.argv = ["benchbox", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules} & heavy)), file=sys.stderr)
"""


def heavy_imports(*args: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(args)), json.dumps(HEAVY)],
                          capture_output=True, text=True, timeout=120)
    return json.loads(proc.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [("--help",), ("list",), ("list", "tasks"), ("list", "encoders"),
                                  ("list", "encoders", "--json", "-"), ("describe", "stsb"),
                                  ("describe", "sts12"), ("eval", "--help"), ("compare", "--help"),
                                  ("eval", "--no-such-option"), ("reproduce", "--help"),
                                  ("leaderboard", "--help"), ("study", "--help")])
def test_the_command_line_starts_without_heavy_libraries(args):
    assert heavy_imports(*args) == []


def test_a_lazy_module_imports_at_first_use_and_is_the_module():
    code = "import sys; from benchbox.lazy import lazy_module; m = lazy_module('json.tool'); " \
           "before = 'json.tool' in sys.modules; m.main; print(before, 'json.tool' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split() == \
        ["False", "True"]
    assert lazy_module("json").dumps is json.dumps
