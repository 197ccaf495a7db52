"""Issue #40: a name that becomes a path is checked as one name where it is declared (:mod:`benchbox.names`). On
the old code a declared TOML task named ``../../../victim`` wrote its per-item table to ``./victim.csv``,
outside the run folder, over the user's file (task names were checked only for ``:`` and whitespace)."""

from __future__ import annotations

import pytest

from benchbox.errors import BenchboxError
from benchbox.registry import TASKS
from tests.core.test_hostile_inputs import files_under, registered_meanwhile, run_cli

PAIRS = "sentence1\tsentence2\tgold\n" + "".join(f"a {w} sat\tthe {w} sat down\t{i % 5}\n"
                                                  for i, w in enumerate("cat dog cow hen fox owl eel pig rat elk".split()))


@pytest.mark.parametrize("name", ["../../../victim", "../victim", "sub/victim", "/tmp/victim", "..", "back\\slash"])
def test_a_declared_task_name_that_is_a_path_is_refused(name, tmp_path, capsys):
    work = tmp_path / "a" / "b" / "c"
    work.mkdir(parents=True)
    for folder in (tmp_path, tmp_path / "a", tmp_path / "a" / "b", work):
        (folder / "victim.csv").write_text("mine\n")
    (tmp_path / "pairs.tsv").write_text(PAIRS)
    toml = tmp_path / "tasks.toml"
    toml.write_text(f"[[task]]\nname = '{name}'\nbase = \"pair-correlation\"\ndata = [\"pairs.tsv\"]\n")  # literal
    before = files_under(tmp_path)
    with registered_meanwhile():
        outcome = run_cli(["--include", str(toml), "eval", "tests.helpers:LetterCounts", "-t", name, "--no-cache",
                           "--bootstrap", "0", "--runs-dir", "runs"], work, lambda: capsys.readouterr().err)
    lines = outcome.stderr.strip().splitlines()
    assert outcome.code == 2 and not outcome.traceback and len(lines) == 1, outcome
    assert lines[0].startswith(f"error: --include {toml}: task.0.name: {name!r} is not a name"), lines[0]
    assert files_under(tmp_path) == before


@pytest.mark.parametrize("name", ["../victim", "a/b", "/abs", ".", "..", "nul\0"])
def test_a_task_registered_in_python_under_a_path_is_refused(name):
    with registered_meanwhile(), pytest.raises(BenchboxError, match="is not a name"):
        TASKS.register(name, "tests.helpers:LetterCounts")


def test_plain_task_names_still_register():
    with registered_meanwhile():
        TASKS.register("my-task.v2_b", "tests.helpers:LetterCounts")
        assert "my-task.v2_b" in TASKS.names()


def test_a_run_refuses_a_task_name_that_is_a_path_before_writing(tmp_path):
    """The last guard, for a name no registration checked (an installed plugin's entry point)."""
    import pandas as pd

    from benchbox.storage.runs import write_run

    with pytest.raises(BenchboxError, match="items/NAME.csv: '../victim' is not a name"):
        write_run(tmp_path / "runs", "x", {}, pd.DataFrame(), {"../victim": pd.DataFrame({"a": [1]})})
    assert not (tmp_path / "runs").exists() and not (tmp_path / "victim.csv").exists()
