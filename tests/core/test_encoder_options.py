"""An encoder's options are typed once, by its signature (benchbox.encoding.options, issue #39): ``-e dim=32`` and
the default ``32`` are one value, so the runs are reused for each other and grouped as seeds; a boolean accepts
only its words, anything else is one line and exit 2, on the command line and in a study's ``--check``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchbox.comparison.sources import resolve_sources, seed_groups
from benchbox.data.root import DataRoot
from benchbox.encoding.loading import load_encoder
from benchbox.errors import BenchboxError
from benchbox.reuse import find_reusable_run
from benchbox.storage.identity import encoder_record
from benchbox.storage.runs import MANIFEST
from benchbox.task_contract.protocol import resolve_tasks
from tests.storage.test_run_identity import OPTIONS, Hashed, _eval  # noqa: F401 - registers "hashed"


class Options:
    """Every kind of annotation an encoder's signature may have."""

    def __init__(self, dim: int = 32, rate: float = 0.5, flag: bool = False, width: int | None = None,
                 padding: str | None = None, anything=None, count=3, **rest) -> None:
        pass


@pytest.mark.parametrize("raw, typed", [
    ({"dim": "256"}, {"dim": 256}), ({"dim": 256}, {"dim": 256}), ({"dim": " +7 "}, {"dim": 7}),
    ({"rate": "1e-3"}, {"rate": 0.001}), ({"rate": 2}, {"rate": 2.0}),
    ({"flag": "YES"}, {"flag": True}), ({"flag": "off"}, {"flag": False}), ({"flag": "0"}, {"flag": False}),
    ({"flag": True}, {"flag": True}), ({"width": "none"}, {"width": None}), ({"width": "12"}, {"width": 12}),
    ({"padding": "none"}, {"padding": "none"}), ({"anything": "x"}, {"anything": "x"}), ({"count": "4"}, {"count": 4}),
    ({"extra": "5"}, {"extra": "5"}),
])
def test_values_are_parsed_by_the_signature(raw, typed):
    from benchbox.encoding.options import typed_options

    assert typed_options(Options, raw) == typed


@pytest.mark.parametrize("raw, message", [
    ({"flag": "ture"}, "options option flag = 'ture': expected a boolean (true/false/yes/no/1/0/on/off, any case)"),
    ({"flag": "maybe"}, "flag = 'maybe'"), ({"flag": 2}, "flag = 2"),
    ({"dim": "2.5"}, "dim = '2.5': expected a whole number"), ({"dim": True}, "dim = True"),
    ({"rate": "nan"}, "rate = 'nan': expected a finite number"), ({"width": "wide"}, "expected a whole number or none"),
])
def test_a_value_the_type_cannot_read_is_one_line(raw, message):
    from benchbox.encoding.options import typed_options

    with pytest.raises(BenchboxError) as caught:
        typed_options(Options, raw, "options")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_typed_option_and_its_default_are_one_identity_reused_and_grouped_as_seeds(tmp_path):
    (tmp_path / "empty").mkdir()
    runs, empty = tmp_path / "runs", tmp_path / "empty"
    given = _eval("hashed", runs, empty, dim="32", seed="1")  # -e dim=32 -e seed=1
    assert json.loads((given / MANIFEST).read_text())["encoder"]["options"] == {"dim": 32, "seed": 1}
    defaulted = _eval("hashed", runs, empty, seed=2)
    groups = seed_groups(resolve_sources([str(given), str(defaulted)]))
    assert [sorted(s.path for s in members) for members in groups.values()] == [sorted([given, defaulted])]
    log: list[str] = []
    reused = find_reusable_run(runs, encoder=encoder_record(load_encoder("hashed", seed=1)),
                               tasks=resolve_tasks(["stsb-cosine"]),
                               options=OPTIONS, data=DataRoot(empty), log=log.append)
    assert reused is not None and reused.path == given, log


def test_a_bad_boolean_is_refused_on_the_command_line_in_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "benchbox", "eval", "glove-bow", "-t", "stsb-cosine", "-e",
                           "lowercase=ture", "--runs-dir", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("error:") == 1 and done.stderr.strip().splitlines()[-1] == (
        "error: glove-bow option lowercase = 'ture': expected a boolean (true/false/yes/no/1/0/on/off, any case) or "
        "none")
    assert not any(tmp_path.iterdir())
