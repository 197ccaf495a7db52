"""``benchbox study --check`` verifies what every cell will open (issue #39), and the study's refusals name the
real cause and the fix (issue #40): each problem is one line naming the study file and the key, exit status 2,
before any cell starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchbox.errors import BenchboxError
from benchbox.study.run import load_study
from tests.study_helpers import environment, install_plugin

HEAD = '[study]\ntasks = ["stsb-cosine", "sickr-cosine"]\n'
GLOVE = '[[encoder]]\nname = "glove-bow"\n'


def check(tmp_path: Path, text: str, *before: str, site: Path | None = None) -> subprocess.CompletedProcess:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return subprocess.run([sys.executable, "-m", "benchbox", *before, "study", str(path), "--check"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env=environment(site) if site else None)


def refused(result: subprocess.CompletedProcess) -> str:
    """The one line of a refused check (the test plugin's warning aside)."""
    lines = [line for line in result.stderr.splitlines() if not line.startswith("warning:")]
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    return lines[0]


def test_an_option_out_of_the_encoders_range_is_refused_by_the_check(tmp_path):
    """``dim = -3``: the encoder's constructor refuses it; the check builds the encoder as its cell would."""
    install_plugin(tmp_path / "site", "0.1.0")
    line = refused(check(tmp_path, HEAD + GLOVE + '[[encoder]]\nname = "toyhash:HashBow"\noptions = { dim = -3 }\n',
                         site=tmp_path / "site"))
    assert "s.toml: [[encoder]] 2 options:" in line and "dim must be between 1 and 4096, got -3" in line
    good = check(tmp_path, HEAD + GLOVE + '[[encoder]]\nname = "toyhash:HashBow"\noptions = { dim = 3 }\n',
                 site=tmp_path / "site")
    assert good.returncode == 0 and "ok, 2 cells" in good.stdout, good.stderr


def test_a_missing_clip_model_folder_is_refused_by_the_check(tmp_path):
    line = refused(check(tmp_path, HEAD + GLOVE + '[[encoder]]\nname = "clip"\noptions = { model = "models/clip-b32" }\n'))
    assert "s.toml: [[encoder]] 2 options:" in line and "'models/clip-b32' is not available offline" in line


def test_a_run_folder_without_a_studied_task_is_refused(tmp_path):
    """A ``run =`` folder must hold every task of the study (its cell is that run, compared on every task)."""
    made = subprocess.run([sys.executable, "-m", "benchbox", "eval", "glove-bow", "--task", "stsb-cosine",
                           "--runs-dir", str(tmp_path / "runs"), "-q"], capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr
    run = next((tmp_path / "runs").iterdir())
    text = HEAD + '[[encoder]]\nname = "glove-bow"\noptions = { lowercase = false }\n' + \
        f'[[encoder]]\nrun = "runs/{run.name}"\n'
    (tmp_path / "s.toml").write_text(text)
    with pytest.raises(BenchboxError, match=rf"s.toml: \[\[encoder\]\] 2 run = 'runs/{run.name}': .* lacks the "
                                            r"task\(s\) sickr-cosine of \[study\] tasks \(it has stsb-cosine\)"):
        load_study(tmp_path / "s.toml")
    (tmp_path / "s.toml").write_text(text.replace('"sickr-cosine"', ""))
    assert len(load_study(tmp_path / "s.toml").cells) == 2


@pytest.mark.realdata
def test_a_missing_image_folder_is_refused(data_root, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHBOX_DATA", str(data_root.root))
    text = '[study]\ntasks = ["retrieval"]\nimages = "no-such-images"\n' + GLOVE + \
        '[[encoder]]\nname = "glove-bow"\noptions = { lowercase = false }\n'
    (tmp_path / "s.toml").write_text(text)
    with pytest.raises(BenchboxError, match=r"s.toml: \[study\] images = 'no-such-images': retrieval: image folder "
                                            "no-such-images not found"):
        load_study(tmp_path / "s.toml")


def test_an_unknown_task_names_the_include_option(tmp_path):
    """A study of a task declared in the user's own file, run without ``--include``: the refusal says how."""
    (tmp_path / "s.toml").write_text('[study]\ntasks = ["my-stsb"]\n' + GLOVE +
                                     '[[encoder]]\nname = "glove-bow"\noptions = { lowercase = false }\n')
    with pytest.raises(BenchboxError, match=r"unknown task 'my-stsb'.*needs `benchbox --include FILE study "):
        load_study(tmp_path / "s.toml")


def test_seeds_of_an_encoder_without_a_seed_option_name_seed_option(tmp_path):
    """Seeds of a plugin encoder without ``seed_option``: the fix is its ``seed_option``, not a train table."""
    (tmp_path / "s.toml").write_text(HEAD + GLOVE + '[[encoder]]\nname = "tests.gated_encoder:GatedBow"\n'
                                     'seeds = [1, 2]\n')
    with pytest.raises(BenchboxError) as caught:
        load_study(tmp_path / "s.toml")
    message = str(caught.value)
    assert "[[encoder]] 2 seeds: tests.gated_encoder:GatedBow has no seed option" in message
    assert "seed_option" in message and "train table" not in message


def test_the_next_command_is_complete(tmp_path, monkeypatch):
    """The study's last line names the command to run it again with everything it was given: the included
    files and the study folder."""
    from benchbox.include import INCLUDED
    from benchbox.study import run as study_module

    included = tmp_path / "mine.py"
    included.write_text("")
    monkeypatch.setattr(study_module, "INCLUDED", [*INCLUDED, included])
    monkeypatch.setattr(study_module, "run_cell", lambda cell, study, processes=None:
                        {"cell": cell.name, "run": str(tmp_path / cell.name), "seconds": 1.0})
    monkeypatch.setattr(study_module, "_compare_and_report", lambda *args: {
        "comparison": "c.json", "csv": "c.csv", "report": "r.md", "headlines": ""})
    cells = [study_module.Cell("a", "glove-bow"), study_module.Cell("b", "glove-bow")]
    study = study_module.Study(tmp_path / "s.toml", tmp_path / "elsewhere" / "out", ["stsb-cosine"], cells, None, 1,
                               None)
    lines = []
    study_module.run_study(study, log=lines.append)
    assert f"`benchbox --include {included} study {tmp_path / 's.toml'} --out {tmp_path / 'elsewhere' / 'out'}`" \
        in lines[-1]


@pytest.mark.parametrize("out", ["/proc/x", "{file}/inside"])
def test_an_unwritable_study_folder_is_refused_by_the_check(tmp_path, out):
    """Bug (issue 55): ``study --check`` said "ok, 2 cells into /proc/x" for a folder the run cannot write into
    (the run then failed); the check now probes the folder as the run does, and leaves nothing behind."""
    (tmp_path / "file").write_text("not a folder")
    out = out.format(file=tmp_path / "file")
    (tmp_path / "s.toml").write_text(HEAD + GLOVE + '[[encoder]]\nname = "glove-bow"\n'
                                     'options = { lowercase = false }\n')
    result = subprocess.run([sys.executable, "-m", "benchbox", "study", str(tmp_path / "s.toml"), "--check",
                             "--out", out], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    line = refused(result)
    assert line.startswith(f"error: cannot write into {out} (") and line.endswith("pass a writable folder as --out")
    writable = tmp_path / "new" / "study"
    result = subprocess.run([sys.executable, "-m", "benchbox", "study", str(tmp_path / "s.toml"), "--check",
                             "--out", str(writable)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert result.returncode == 0 and f"ok, 2 cells into {writable}" in result.stdout, result.stderr
    assert not (tmp_path / "new").exists()  # the check created nothing
