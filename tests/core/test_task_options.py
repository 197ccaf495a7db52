"""A task option with a flag is declared once, in its task, and the flag works in eval, compare, a study and
describe (issue #28): the commands' flags are generated from the registered tasks, a study's [study] table takes
them as keys, and the value a run used is recorded with its task — so ``compare -t TASK:KEY=VALUE`` reuses the run
``eval --FLAG VALUE`` wrote (they once recorded unequal options, and compare never reused it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchbox.task_contract.protocol import resolve_tasks
from benchbox.task_contract.options import TaskOptions, resolve_options, task_flags

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = '''
import numpy as np
import pandas as pd

from benchbox.registry import TASKS
from benchbox.task_contract.protocol import MetricRecord, MetricSpec, Task, TaskResult
from benchbox.task_contract.options import TaskOption

SENTENCES = ("a", "bb", "ccc dd", "eeee ffff", "ggggg hh ii", "jjjjjj kk ll mm")


def mean_norm(rows):
    return float(rows["value"].mean())


class Norms(Task):
    name = "flagged-norms"
    description = "the mean embedding norm of the sentences at least min_chars long"
    main_score = "norm"
    metrics = (MetricSpec("norm", "bootstrap", summary=True, statistic=mean_norm),)
    options = (TaskOption("min_chars", int, 0, "the shortest sentence kept", low=0, flag="min-chars",
                          protocol_key="min_chars"),)

    def evaluate(self, encoder, ctx):
        kept = [s for s in SENTENCES if len(s) >= ctx.option(self, "min_chars")]
        norms = np.linalg.norm(ctx.embed(kept), axis=1)
        items = pd.DataFrame({"subset": "test", "item": range(len(kept)), "value": norms})
        return TaskResult(self.name, [MetricRecord(self.name, "test", "norm", mean_norm(items), n=len(kept))], items,
                          protocol={"min_chars": ctx.option(self, "min_chars")})


TASKS.register("flagged-norms", Norms)
'''
LETTERS, VOWELS = "tests.helpers:LetterCounts", "tests.core.test_task_metadata:Vowels"


@pytest.fixture
def plugin(tmp_path) -> Path:
    path = tmp_path / "flagged_plugin.py"
    path.write_text(PLUGIN)
    return path


def benchbox(plugin: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "BENCHBOX_CACHE": str(plugin.parent / "cache")}
    return subprocess.run([sys.executable, "-m", "benchbox", "--include", str(plugin), *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=600)


def manifests(folder: Path) -> list[dict]:
    return [json.loads((run / "manifest.json").read_text()) for run in sorted(folder.iterdir())
            if (run / "manifest.json").is_file()]


@pytest.mark.slow
def test_one_task_option_is_a_flag_of_describe_eval_compare_and_a_study(plugin, tmp_path):
    described = benchbox(plugin, "describe", "flagged-norms")
    assert described.returncode == 0, described.stderr
    assert "min_chars: integer; default 0; range [0, ]; flag --min-chars" in described.stdout
    assert "--min-chars" in benchbox(plugin, "eval", "--help").stdout

    runs = tmp_path / "runs"
    done = benchbox(plugin, "eval", LETTERS, "-t", "flagged-norms", "--min-chars", "5", "--runs-dir", str(runs), "-q")
    assert done.returncode == 0, done.stderr
    (manifest,) = manifests(runs)
    assert manifest["tasks"]["flagged-norms"]["options"] == {"min_chars": 5}
    assert manifest["tasks"]["flagged-norms"]["protocol"] == {"min_chars": 5}

    # compare with the option set per task: the values used are equal, so the eval run is reused
    compared = benchbox(plugin, "compare", LETTERS, VOWELS, "-t", "flagged-norms:min_chars=5", "--runs-dir", str(runs))
    assert compared.returncode == 0, compared.stderr
    assert f"reusing run {runs / manifest['run_id']} for {LETTERS}" in compared.stderr
    assert [m["tasks"]["flagged-norms"]["options"] for m in manifests(runs)] == [{"min_chars": 5}] * 2
    # and with the flag, the same
    again = benchbox(plugin, "compare", LETTERS, VOWELS, "-t", "flagged-norms", "--min-chars", "5",
                     "--runs-dir", str(runs))
    assert again.returncode == 0 and again.stderr.count("reusing run") == 2 and len(manifests(runs)) == 2

    study = tmp_path / "study.toml"
    study.write_text(f'[study]\ntasks = ["flagged-norms"]\nmin-chars = 5\njobs = 2\n\n[[encoder]]\nname = "{LETTERS}"\n\n'
                     f'[[encoder]]\nname = "{VOWELS}"\n')
    ran = benchbox(plugin, "study", str(study), "--out", str(tmp_path / "study"), "-q")
    assert ran.returncode == 0, ran.stderr
    cells = [m for cell in sorted((tmp_path / "study" / "cells").iterdir()) for m in manifests(cell / "runs")]
    assert [m["tasks"]["flagged-norms"]["options"] for m in cells] == [{"min_chars": 5}] * 2


def test_each_flag_of_benchboxs_own_tasks_is_one_declaration():
    """Every task that has a flag's option has the one declaration of it: ``features`` was declared twice
    (retrieval and structure, with different help), and the generated flag kept whichever registered first."""
    from benchbox.task_contract.protocol import task_class

    declared: dict[str, set[int]] = {}
    for flag, (_, names) in task_flags(builtin_only=True).items():
        declared[flag] = {id(o) for name in names if (c := task_class(name)) for o in c.options if o.flag == flag}
    assert {flag: len(ids) for flag, ids in declared.items() if len(ids) > 1} == {}


@pytest.mark.slow
def test_a_study_checks_its_task_flags_before_any_cell(plugin, tmp_path):
    def check(head: str) -> str:
        study = tmp_path / "study.toml"
        study.write_text(f'[study]\ntasks = ["flagged-norms"]\n{head}\n\n[[encoder]]\nname = "{LETTERS}"\n\n'
                         f'[[encoder]]\nname = "{VOWELS}"\n')
        checked = benchbox(plugin, "study", str(study), "--check")
        return checked.stderr.strip() if checked.returncode else checked.stdout.strip()

    assert "ok, 2 cells" in check("min-chars = 5")
    assert "unknown key 'min-char' in [study] (did you mean 'min-chars'?)" in check("min-char = 5")
    assert "[study] min-chars = -1: task option flagged-norms:min_chars must be ≥ 0, got -1" in check("min-chars = -1")
    assert "[study] min-chars = 'five': task option flagged-norms:min_chars must be integer" in check('min-chars = "five"')
    assert "--text raw: none of the tasks evaluated (flagged-norms) reads it" in check('text = "raw"')
    assert not (tmp_path / "study").exists()


def test_the_built_in_flags_come_from_the_tasks_options():
    """The flags of benchbox's own tasks, each declared once by a task option (``describe mr`` once printed
    "flag --kfold" while ``eval --kfold`` did not exist)."""
    flags = task_flags(builtin_only=True)
    assert list(flags) == ["captions", "features", "fix-stsb-labels", "images", "kfold", "retrieval-ci", "retrieval-medr",
                           "retrieval-ties", "text"]
    assert flags["kfold"][1] == ("cr", "mpqa", "mr", "mrpc", "subj", "trec")
    values = resolve_options(resolve_tasks(["mr", "trec"]), TaskOptions(flags={"kfold": 5},
                                                                         task_options={"trec": {"kfold": 3}}))
    assert values == {"mr": {"kfold": 5}, "trec": {"kfold": 3}}
