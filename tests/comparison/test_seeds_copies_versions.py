"""Issue #39: ``--seeds`` declared wrong is refused in one line (a name twice, one run twice, one run in two groups,
runs of two configurations), a copied run folder counts once, and compare names and records the versions two
runs differ in. On the fast prebuilt runs of tests/comparison/test_compare.py."""

from __future__ import annotations

import json
import shutil

import pytest

from benchbox.comparison import output
from benchbox.comparison.compare import compare
from benchbox.errors import BenchboxError
from benchbox.comparison.settings import CompareSettings
from tests.comparison.test_compare import make_run
from tests.helpers import cli

BOOT = 50



@pytest.fixture
def seeds(tmp_path):
    """Three seeds of one char-gru configuration, one run of another configuration, and a baseline."""
    runs = [make_run(tmp_path, "char-gru", 1.0, 0, 0.8, seed=s, config={"units": 512, "seed": s}) for s in (1, 2, 3)]
    wider = make_run(tmp_path, "char-gru", 1.0, 0, 0.8, seed=4, config={"units": 1024, "seed": 4})
    glove = make_run(tmp_path, "glove-bow", 1.5, 2, 0.75)
    return [str(r) for r in runs], str(wider), str(glove)


def _refusal(specs: list[str], declared: dict[str, list[str]]) -> str:
    with pytest.raises(BenchboxError) as caught:
        compare(specs, ["sts12"], settings=CompareSettings(n_boot=BOOT), seeds=declared)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_run_named_twice_in_one_declaration_is_refused(seeds, tmp_path):
    # before: the group's claim silently vanished (exit 0, no seed-aware claim)
    (one, two, _), _, glove = seeds
    assert "names the run" in _refusal([one, two, glove], {"m": [one, one, two]})
    copy = tmp_path / "copy-of-one"
    shutil.copytree(one, copy)
    message = _refusal([one, two, str(copy), glove], {"m": [one, str(copy)]})
    assert "twice (as " in message and "list each seed once" in message


def test_a_run_in_two_declarations_is_refused(seeds):
    (one, two, three), _, glove = seeds
    message = _refusal([one, two, three, glove], {"m": [one, two], "n": [two, three]})
    assert "is declared a seed of both m and n: a run is a seed of one model" in message


def test_runs_of_two_configurations_declared_seeds_are_refused(seeds):
    (one, two, _), wider, glove = seeds
    message = _refusal([one, two, wider, glove], {"m": [one, two, wider]})
    assert "are not seeds of one model: encoder.config.units (512 vs 1024) differ(s)" in message
    # differing in what names a seed only, they are seeds (the check is not a refusal of every declaration)
    declared = compare([one, two, glove], ["sts12"], settings=CompareSettings(n_boot=BOOT), seeds={"m": [one, two]}, baseline=glove)
    assert list(declared.claims["model_a"]) == ["m"] and declared.claims["seeds_a"].iloc[0] == 2


def test_wrong_seed_declarations_on_the_command_line_are_one_line_exit_2(seeds, capsys):
    (one, two, three), _, glove = seeds
    for declarations, needle in (([f"m={one},{two}", f"m={three},{two}"], "--seeds m is declared twice"),
                                 ([f"m={one},{two}", f"n={two},{three}"], "a run is a seed of one model"),
                                 ([f"m={one},{one}"], "list each seed once")):
        args = [arg for d in declarations for arg in ("--seeds", d)]
        code, _, err = cli(capsys, "compare", one, two, three, glove, "-t", "sts12", "--test-resamples", "20",
                           "--bootstrap", "0", *args)
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert code == 2 and len(errors) == 1 and needle in errors[0] and "Traceback" not in err, err


def test_a_copied_run_folder_counts_once(tmp_path):
    # before: the copy was compared as a second model (the note was keyed on the path)
    a, b = make_run(tmp_path, "a", 1.0, 0, 0.8), make_run(tmp_path, "b", 1.5, 2, 0.75, seed=3)
    copy = tmp_path / "elsewhere" / a.name
    shutil.copytree(a, copy)
    log: list[str] = []
    with_copy = compare([str(a), str(copy), str(b)], ["sts12"], settings=CompareSettings(n_boot=BOOT), log=log.append)
    alone = compare([str(a), str(b)], ["sts12"], settings=CompareSettings(n_boot=BOOT))
    assert with_copy.models == alone.models and with_copy.table.equals(alone.table)
    assert f"{copy} is a copy of {a} (run {a.name}): it counts once, as {alone.models[0]}" in log
    with pytest.raises(BenchboxError, match="compare needs at least two"):  # a run and its copy: one model
        compare([str(a), str(copy)], ["sts12"], settings=CompareSettings(n_boot=BOOT))


def _versioned(tmp_path, name: str, benchbox: str, task_version: str, provider: str | None = None):
    implementation = {"class": "plugin.Task", "version": task_version,
                      "provider": {"distribution": "benchbox" if provider is None else "my-plugin",
                                   "version": benchbox if provider is None else provider}}
    run = make_run(tmp_path, name, 1.0, 0, 0.8, seed=len(name), tasks={"sts12": {"implementation": implementation}})
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["packages"]["benchbox"] = benchbox
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


def test_compare_names_and_records_the_versions_runs_differ_in(tmp_path, capsys):
    # before: runs of different benchbox and task versions passed through compare without a remark
    a = _versioned(tmp_path, "a", "0.1.0", "1")
    b = _versioned(tmp_path, "bb", "0.2.0", "2")
    c = _versioned(tmp_path, "ccc", "0.1.0", "1")
    comparison = compare([str(a), str(b), str(c)], ["sts12"], settings=CompareSettings(n_boot=BOOT))
    (ab, cb) = comparison.version_lines()
    assert ab == (f"{comparison.models[0]} vs {comparison.models[1]} were computed by different versions: benchbox "
                  "0.1.0 vs 0.2.0, sts12 task version 1 vs 2; a difference may come from them alone")
    assert cb.startswith(f"{comparison.models[1]} vs {comparison.models[2]} were computed by different versions")
    assert {(d["what"], d["task"], d["version_a"], d["version_b"]) for d in comparison.versions} == {
        ("benchbox", None, "0.1.0", "0.2.0"), ("task version", "sts12", "1", "2"),
        ("benchbox", None, "0.2.0", "0.1.0"), ("task version", "sts12", "2", "1")}
    output.write_json(comparison, tmp_path / "cmp.json")
    recorded = json.loads((tmp_path / "cmp.json").read_text())["version_differences"]
    assert recorded == comparison.versions and recorded[0]["model_a"] == comparison.models[0]
    code, out, _ = cli(capsys, "compare", str(a), str(b), "-t", "sts12", "--test-resamples", "20")
    assert code == 0 and "were computed by different versions: benchbox 0.1.0 vs 0.2.0" in " ".join(out.split())
    # a plugin task's package version, and nothing for runs of one version
    plugin_a, plugin_b = (_versioned(tmp_path, n, "0.1.0", "1", provider=v) for n, v in (("pa", "1.0"), ("pb", "1.1")))
    plugin = compare([str(plugin_a), str(plugin_b)], ["sts12"], settings=CompareSettings(n_boot=BOOT))
    assert [(d["what"], d["version_a"], d["version_b"]) for d in plugin.versions] == [
        ("task package my-plugin", "1.0", "1.1")]
    assert compare([str(a), str(c)], ["sts12"], settings=CompareSettings(n_boot=BOOT)).versions == []
