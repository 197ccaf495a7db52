"""A study cell is its identity (issue #39): a finished study, edited and run again, reuses exactly the cells whose
identity is unchanged, runs the others with one line naming what changed, leaves out the cells no longer in the
file, and its comparison equals that of a fresh study of the edited file. The study's state is read the same from
any working directory.

The encoder is a small real one of a plugin made here (tests/study_helpers.py, ``install_plugin``: a hashed bag
of words with a ``dim`` option, a distribution ``toyhash`` with a version that a test bumps), the tasks are the embedded STS-B and SICK
(no data root), and one task's declared ``version`` comes from an included file that a test bumps."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchbox.study.keys import changes
from tests.study_helpers import comparison, environment, install_plugin

#: a task of the user's own, included with --include: STS-B cosine under another name, with a declared version
TASK_FILE = '''
from benchbox.registry import TASKS
from benchbox.tasks.sts_cosine import STSBCosine


class MySTSB(STSBCosine):
    name = "my-stsb"
    version = "{version}"


TASKS.register("my-stsb", MySTSB)
'''
STUDY = """
[study]
tasks = ["stsb-cosine", "sickr-cosine"]
baseline = "glove-bow"
jobs = 2

[[encoder]]
name = "glove-bow"

[[encoder]]
name = "toyhash:HashBow"
options = { dim = 16 }
"""
SWAPPED = """
[study]
tasks = ["stsb-cosine", "sickr-cosine"]
baseline = "glove-bow"
jobs = 2

[[encoder]]
name = "toyhash:HashBow"
options = { dim = 16 }

[[encoder]]
name = "glove-bow"
"""


def run_study(path: Path, site: Path, *args: str, cwd: Path | None = None,
              include: Path | None = None) -> subprocess.CompletedProcess:
    before = ["--include", str(include)] if include else []
    return subprocess.run([sys.executable, "-m", "benchbox", *before, "study", str(path), *args],
                          capture_output=True, text=True, env=environment(site), cwd=cwd or path.parent, timeout=600)


def stamps(out: Path) -> dict[str, int]:
    """When each cell's done.json was written, by cell folder."""
    return {p.parent.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*/done.json")}


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A finished study of :data:`STUDY` (started from its folder, by a relative path); its folder."""
    tmp = tmp_path_factory.mktemp("base")
    install_plugin(tmp / "site", "0.1.0")
    (tmp / "s.toml").write_text(STUDY)
    done = run_study(Path("s.toml"), tmp / "site", cwd=tmp)
    assert done.returncode == 0, done.stderr
    return tmp


def edited(base: Path, tmp_path: Path, text: str, version: str = "0.1.0", include: Path | None = None
           ) -> tuple[subprocess.CompletedProcess, dict[str, int], dict[str, int]]:
    """A copy of the finished study, its file replaced by ``text`` (and the plugin at ``version``), run again;
    the run, and the cells' done.json stamps before and after."""
    shutil.copytree(base, tmp_path / "study")
    study = tmp_path / "study"
    install_plugin(study / "site", version)
    (study / "s.toml").write_text(text)
    before = stamps(study / "s")
    rerun = run_study(study / "s.toml", study / "site", include=include)
    assert rerun.returncode == 0, rerun.stderr
    return rerun, before, stamps(study / "s")


def fresh(tmp_path: Path, text: str, version: str = "0.1.0", include: Path | None = None) -> dict:
    """The comparison of a fresh study of ``text``."""
    folder = tmp_path / "fresh"
    install_plugin(folder / "site", version)
    (folder / "s.toml").write_text(text)
    done = run_study(folder / "s.toml", folder / "site", include=include)
    assert done.returncode == 0, done.stderr
    return comparison(folder / "s")


def changed_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("cell ") and " is run: " in line]


@pytest.mark.slow
def test_a_changed_option_runs_that_cell_again_and_says_what_changed(base, tmp_path):
    text = STUDY.replace("dim = 16", "dim = 8")
    rerun, before, after = edited(base, tmp_path, text)
    lines = changed_lines(rerun.stderr)
    assert len(lines) == 1 and "encoder.options.dim 16 → 8" in lines[0] and "cells: 1 done, 1 to run" in rerun.stderr
    glove = next(n for n in before if n.startswith("glove-bow-"))
    assert after[glove] == before[glove]  # reused
    old = next(n for n in before if n.startswith("toyhash-"))
    assert f"1 finished cell(s) of the last run no longer in {tmp_path / 'study' / 's.toml'}, left out of the " \
        f"comparison: {old}" in rerun.stderr
    again = run_study(tmp_path / "study" / "s.toml", tmp_path / "study" / "site")
    assert again.returncode == 0 and "cells: 2 done, 0 to run" in again.stderr and "left out" not in again.stderr
    cell = lines[0].split()[1]
    run = json.loads((tmp_path / "study" / "s" / "cells" / cell / "done.json").read_text())["run"]
    manifest = json.loads((tmp_path / "study" / "s" / run / "manifest.json").read_text())
    assert str(manifest["encoder"]["options"]["dim"]) == "8"  # text until options are typed (issue #39)
    assert comparison(tmp_path / "study" / "s") == fresh(tmp_path, text)


@pytest.mark.slow
def test_swapped_encoder_tables_keep_their_own_results(base, tmp_path):
    rerun, before, after = edited(base, tmp_path, SWAPPED)
    assert "cells: 2 done, 0 to run" in rerun.stderr and after == before and not changed_lines(rerun.stderr)
    assert comparison(tmp_path / "study" / "s") == fresh(tmp_path, SWAPPED)


@pytest.mark.slow
def test_an_added_task_is_evaluated(base, tmp_path):
    text = STUDY.replace('"sickr-cosine"]', '"sickr-cosine", "my-stsb"]')
    include = tmp_path / "mytasks.py"
    include.write_text(TASK_FILE.format(version="1"))
    rerun, before, after = edited(base, tmp_path, text, include=include)
    lines = changed_lines(rerun.stderr)
    assert len(lines) == 2 and all("tasks.my-stsb added" in line for line in lines)
    assert "my-stsb" in (tmp_path / "study" / "s" / "comparison.csv").read_text()
    assert comparison(tmp_path / "study" / "s") == fresh(tmp_path, text, include=include)


@pytest.mark.slow
def test_a_bumped_plugin_version_runs_its_cells_again(base, tmp_path):
    rerun, before, after = edited(base, tmp_path, STUDY, version="0.2.0")
    lines = changed_lines(rerun.stderr)
    assert len(lines) == 1 and 'encoder.provider.version "0.1.0" → "0.2.0"' in lines[0], rerun.stderr
    assert comparison(tmp_path / "study" / "s") == fresh(tmp_path, STUDY, version="0.2.0")


@pytest.mark.slow
def test_a_bumped_task_version_runs_every_cell_again(tmp_path):
    """A task's declared ``version`` changes its numbers' meaning: every cell that evaluated it is run again."""
    include = tmp_path / "mytasks.py"
    include.write_text(TASK_FILE.format(version="1"))
    text = STUDY.replace('tasks = ["stsb-cosine", "sickr-cosine"]', 'tasks = ["my-stsb"]')
    install_plugin(tmp_path / "site", "0.1.0")
    (tmp_path / "s.toml").write_text(text)
    assert run_study(tmp_path / "s.toml", tmp_path / "site", include=include).returncode == 0
    include.write_text(TASK_FILE.format(version="2"))
    rerun = run_study(tmp_path / "s.toml", tmp_path / "site", include=include)
    assert rerun.returncode == 0, rerun.stderr
    lines = changed_lines(rerun.stderr)
    assert len(lines) == 2 and all('tasks.my-stsb.implementation.version "1" → "2"' in line for line in lines)
    assert "cells: 0 done, 2 to run" in rerun.stderr


@pytest.mark.slow
def test_status_and_resume_work_from_any_folder(base, tmp_path):
    """The base study was started from its own folder by a relative path; from another folder, --status shows its
    cells done and a rerun redoes nothing."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    status = run_study(base / "s.toml", base / "site", "--status", cwd=elsewhere)
    assert status.returncode == 0, status.stderr
    assert "cells: 2 done" in status.stdout and "stopped" not in status.stdout
    before = stamps(base / "s")
    rerun = run_study(base / "s.toml", base / "site", cwd=elsewhere)
    assert rerun.returncode == 0, rerun.stderr
    assert "cells: 2 done, 0 to run" in rerun.stderr and stamps(base / "s") == before
    record = json.loads(next((base / "s" / "cells").glob("*/done.json")).read_text())
    assert not Path(record["run"]).is_absolute() and (base / "s" / record["run"] / "manifest.json").is_file()


def test_a_changed_train_table_is_another_cell(tmp_path):
    """``hidden`` 8 → 12 in a train table: a new cell (its own folder, so its own training), said in one line."""
    from benchbox.study.run import load_study

    text = ('[study]\ntasks = ["stsb-cosine"]\n[[encoder]]\nname = "glove-bow"\n[[encoder]]\nname = "char-gru"\n'
            'train = {{ dataset = "flickr8k", hidden = {hidden}, epochs = 1 }}\n')
    cells = []
    for hidden in (8, 12):
        path = tmp_path / f"h{hidden}.toml"
        path.write_text(text.format(hidden=hidden))
        cells.append(load_study(path).cells[1])
    assert cells[0].name != cells[1].name
    assert changes(cells[0].key, cells[1].key) == "encoder.training.hidden 8 → 12"


def test_a_task_version_is_part_of_a_cells_identity(tmp_path):
    """A task's declared version (here of an included task) changes every cell's identity."""
    from benchbox.include import include_file
    from benchbox.registry import TASKS
    from benchbox.study.run import load_study

    path = tmp_path / "v.toml"
    path.write_text(GLOVES.replace('["stsb-cosine", "sickr-cosine"]', '["my-stsb"]'))
    cells = []
    try:
        for version in ("1", "2"):
            task_file = tmp_path / f"tasks{version}.py"
            task_file.write_text(TASK_FILE.format(version=version))
            include_file(task_file)
            cells.append(load_study(path).cells[0])
    finally:
        TASKS.unregister("my-stsb")
    assert cells[0].name != cells[1].name
    assert 'tasks.my-stsb.implementation.version "1" → "2"' in changes(cells[0].key, cells[1].key)


#: two GloVe-BOW models (no plugin)
GLOVES = STUDY.replace('name = "toyhash:HashBow"\noptions = { dim = 16 }',
                       'name = "glove-bow"\noptions = { lowercase = false }')


@pytest.mark.realdata
@pytest.mark.slow
def test_raw_text_runs_every_cell_again(data_root, tmp_path, monkeypatch):
    """``text = "raw"`` added to a finished study of STS12: both cells run again, each said in one line, and the
    comparison is that of a fresh study of the edited file."""
    monkeypatch.setenv("BENCHBOX_DATA", str(data_root.root))
    text = GLOVES.replace('["stsb-cosine", "sickr-cosine"]', '["sts12"]')
    raw = text.replace("jobs = 2", 'jobs = 2\ntext = "raw"')
    install_plugin(tmp_path / "study" / "site", "0.1.0")
    (tmp_path / "study" / "s.toml").write_text(text)
    assert run_study(tmp_path / "study" / "s.toml", tmp_path / "study" / "site").returncode == 0
    (tmp_path / "study" / "s.toml").write_text(raw)
    rerun = run_study(tmp_path / "study" / "s.toml", tmp_path / "study" / "site")
    assert rerun.returncode == 0, rerun.stderr
    lines = changed_lines(rerun.stderr)
    assert len(lines) == 2 and all('tasks.sts12.options.text "senteval" → "raw"' in line for line in lines), rerun.stderr
    assert comparison(tmp_path / "study" / "s") == fresh(tmp_path, raw)


def test_the_default_study_folder_is_kept_out_of_git(base):
    """The default study folder sits beside the study file (often in a repository): it ignores itself."""
    assert (base / "s" / ".gitignore").read_text().splitlines()[-1] == "*"


@pytest.mark.realdata
@pytest.mark.slow
def test_a_changed_train_table_trains_again(data_root, tmp_path, monkeypatch):
    """``hidden`` 8 → 12 in a finished study: the trained cell trains again (a new model of hidden size 12), the
    other cell is reused, and the comparison is that of a fresh study of the edited file."""
    monkeypatch.setenv("BENCHBOX_DATA", str(data_root.root))
    text = GLOVES.replace('["stsb-cosine", "sickr-cosine"]', '["stsb-cosine"]').replace(
        'name = "glove-bow"\noptions = { lowercase = false }',
        'name = "char-gru"\ntrain = { dataset = "flickr8k", visual = "cluster", hidden = 8, epochs = 1, '
        'cycle-epochs = 1, max-captions = 300, threads = 1 }')
    wider = text.replace("hidden = 8", "hidden = 12")
    install_plugin(tmp_path / "study" / "site", "0.1.0")
    (tmp_path / "study" / "s.toml").write_text(text)
    first = run_study(tmp_path / "study" / "s.toml", tmp_path / "study" / "site")
    assert first.returncode == 0, first.stderr
    before = stamps(tmp_path / "study" / "s")
    (tmp_path / "study" / "s.toml").write_text(wider)
    rerun = run_study(tmp_path / "study" / "s.toml", tmp_path / "study" / "site")
    assert rerun.returncode == 0, rerun.stderr
    lines = changed_lines(rerun.stderr)
    assert len(lines) == 1 and "encoder.training.hidden 8 → 12" in lines[0], rerun.stderr
    after = stamps(tmp_path / "study" / "s")
    glove = next(n for n in before if n.startswith("glove-bow-"))
    assert after[glove] == before[glove]
    cell = tmp_path / "study" / "s" / "cells" / lines[0].split()[1]
    assert json.loads((cell / "train" / "manifest.json").read_text())["config"]["hidden"] == 12
    assert comparison(tmp_path / "study" / "s") == fresh(tmp_path, wider)
