"""Study files checked before any cell runs (issue #25): every mistake is one line naming the file and the key,
exit status 2, and nothing is created; seeds must reach the encoder; the docs' reference is generated from the
schema."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchbox.comparison.settings import CompareSettings
from benchbox.errors import BenchboxError
from benchbox.registry import ENCODERS
from benchbox.study.cells import SAFE
from benchbox.study.run import cell_commands, cell_train_spec, load_study
from benchbox.study.schema import DOC, document_with_reference
from benchbox.study.train import check_train

HEAD = '[study]\ntasks = ["stsb-cosine"]\n'
TWO = '[[encoder]]\nname = "glove-bow"\n\n[[encoder]]\nname = "glove-bow"\noptions = { lowercase = "false" }\n'


def _load(tmp_path: Path, text: str | bytes):
    path = tmp_path / "s.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return load_study(path, check_train=check_train)


@pytest.mark.parametrize("text, message", [
    (HEAD + 'baselin = "glove-bow"\n' + TWO, "unknown key 'baselin' in [study] (did you mean 'baseline'?)"),
    (HEAD + TWO.replace("[[encoder]]", "[[encoders]]"), "unknown key 'encoders' in the file (did you mean 'encoder'?)"),
    (HEAD + '[encoder]\nname = "glove-bow"\n', "[encoder] is a single table: write each model as an [[encoder]]"),
    (HEAD + TWO + 'train = 5\n', "[[encoder]] 2 train = 5: input should be a valid dictionary"),
    (HEAD + '[[encoder]]\nname = "glove-bow"\noptions = "x"\n' + TWO, "[[encoder]] 1 options = 'x'"),
    ('[study]\ntasks = ["stsb-cosine"]\nout = 3\n' + TWO, "[study] out = 3: input should be a valid string"),
    ('[study]\ntasks = "sts"\n' + TWO, "[study] tasks = 'sts': input should be a valid list"),
    (HEAD.replace("stsb-cosine", "stsb-cosin") + TWO, "[study] tasks: unknown task 'stsb-cosin'. Did you mean"),
    (HEAD + TWO.replace('"glove-bow"\n\n', '"glove-bwo"\n\n', 1), "[[encoder]] 1 name: unknown encoder 'glove-bwo'"),
    (HEAD + 'baseline = "sbert"\n' + TWO, "[study] baseline = 'sbert' names none of the compared models (glove-bow)"),
    (HEAD + TWO.replace("lowercase", "lowercas"), "[[encoder]] 2 options.lowercas: glove-bow has no option 'lowercas' "
                                                   "(did you mean 'lowercase'?)"),
    (HEAD + TWO.replace('"false"', '"maybe"'), "[[encoder]] 2 options: glove-bow option lowercase = 'maybe': expected a "
                                                "boolean (true/false/yes/no/1/0/on/off, any case) or none"),
    (HEAD + TWO.replace('lowercase = "false"', 'vectors = "/nonexistent.txt"'),
     "[[encoder]] 2 options.vectors = '/nonexistent.txt': no such file or folder"),
    ('[study]\ntasks = ["stsb-cosine"]\ndata-dir = "no-such-root"\n' + TWO, "[study] data-dir = 'no-such-root' is not"),
    (HEAD + '[[encoder]]\nrun = "no-such-run"\n' + TWO, "[[encoder]] 1 run = 'no-such-run'"),
    (HEAD + '[[encoder]]\nname = "glove-bow"\nseeds = [1, 2, 3]\n' + TWO,
     "[[encoder]] 1 seeds: glove-bow has no seed option and is not trained here"),
    (HEAD + '[[encoder]]\nname = "char-gru"\nseeds = [1, 1]\ntrain = { dataset = "flickr8k", visual = "cluster" }\n'
     + TWO, "[[encoder]] 1 seeds: 1 given twice"),
    (HEAD + '[[encoder]]\nname = "char-gru"\nseeds = [1, -2]\ntrain = { dataset = "flickr8k", visual = "cluster" }\n'
     + TWO, "seeds are whole numbers ≥ 0"),
    (HEAD + '[[encoder]]\nname = "char-gru"\ntrain = { dataset = "flickr8k", visual = "cluster", epoch = 1 }\n' + TWO,
     "[[encoder]] 1 train: unknown option 'epoch' of `benchbox train char-gru` (did you mean 'epochs'?)"),
    (HEAD + '[[encoder]]\nname = "char-gru"\ntrain = { dataset = "flickr8k", visual = "cluster", epochs = 0 }\n' + TWO,
     "[[encoder]] 1 train: --epochs must be ≥ 1, got 0"),
    (HEAD + '[[encoder]]\nname = "char-gru"\ntrain = { dataset = "flickr8k" }\n' + TWO,
     "[[encoder]] 1 train: --visual features needs --features FILE"),
    # every key reaches the configuration's checks: `vectors` (the field word_vectors) once passed them unchecked
    (HEAD + '[[encoder]]\nname = "char-gru"\ntrain = { dataset = "flickr8k", visual = "cluster", vectors = "v.txt" }\n'
     + TWO, "[[encoder]] 1 train: --vectors drives --visual attention only, not --visual cluster"),
    (HEAD + '[[encoder]]\nname = "char-gru"\ntrain = { dataset = "flickr8k", visual = "cluster", epochs = 2.5 }\n'
     + TWO, "[[encoder]] 1 train: --epochs must be an integer, got 2.5"),
    (HEAD + '[[encoder]]\nname = "infersent"\ntrain = { nli = "x", nonlinear-fc = "yes" }\n' + TWO,
     "[[encoder]] 1 train: --nonlinear-fc is true or false, got 'yes'"),
    (HEAD + '[[encoder]]\nname = "char-gru"\ntrain = { dataset = "flickr8k", visual = "cluster", seed = 3 }\n' + TWO,
     "[[encoder]] 1 train.seed: set by the study; list the seeds"),
    (HEAD + '[[encoder]]\nname = "glove-bow"\ntrain = { epochs = 1 }\n' + TWO,
     "[[encoder]] 1 train: glove-bow cannot be trained here"),
    (HEAD + '[[encoder]]\nname = "glove-bow"\n', "declare at least two encoders"),
    # the data the cells will read, under the study's data root (here the study's own folder, which has none)
    ('[study]\ntasks = ["sts12"]\ndata-dir = "."\n' + TWO,
     "[study] tasks: missing data under {root}: senteval/downstream/STS/STS12-en-test/"),
    ('[study]\ntasks = ["stsb-cosine"]\ndata-dir = "."\n[[encoder]]\nname = "char-gru"\n'
     'train = { dataset = "flickr8k", visual = "cluster" }\n' + TWO,
     "[[encoder]] 1 train: missing data under {root}: flickr8k/Flickr8k.token.txt"),
    (HEAD + '[[encoder]]\nname = "char-gru"\ntrain = { dataset = "flickr8k", visual = "features", '
     'features = "/nonexistent.npy" }\n' + TWO,
     "[[encoder]] 1 train: --features /nonexistent.npy: no such file or folder (make one with `benchbox features"),
    (HEAD + '[[encoder]]\nname = "char-gru"\ntrain = { dataset = "flickr8k", visual = "cluster", '
     'eval-semantic = "sts12x" }\n' + TWO, "[[encoder]] 1 train: unknown task 'sts12x'"),
    (HEAD + 'correction = "bonferroni-ish"\n' + TWO,
     "[study] correction = 'bonferroni-ish': unknown --correction 'bonferroni-ish': use holm"),
    (HEAD + 'test-resamples = 1\n' + TWO, "[study] test-resamples = 1: --test-resamples must be ≥ 2, got 1"),
    (HEAD + 'corection = "bh"\n' + TWO, "unknown key 'corection' in [study] (did you mean 'correction'?)"),
    ("[study\n", "not valid TOML"),
    (b"\xff\xfe[study]\n", "not UTF-8 text (byte 0): save the study file as UTF-8"),
])
def test_a_bad_study_file_is_one_line_naming_the_file_and_the_key(tmp_path, text, message):
    with pytest.raises(BenchboxError) as caught:
        _load(tmp_path, text)
    line = str(caught.value)
    assert message.format(root=tmp_path) in line and line.startswith(str(tmp_path / "s.toml")) and "\n" not in line


@pytest.mark.slow
def test_check_starts_nothing_and_exits_2_on_a_mistake(tmp_path):
    """`benchbox study FILE --check` validates only; a bad file is one line, exit 2, and no study folder."""
    path = tmp_path / "s.toml"
    path.write_text(HEAD + 'baseline = "sbert"\n' + TWO)
    bad = subprocess.run([sys.executable, "-m", "benchbox", "study", str(path)], capture_output=True, text=True)
    assert bad.returncode == 2 and "names none of the compared models" in bad.stderr
    assert "Traceback" not in bad.stderr and not (tmp_path / "s").exists()
    path.write_text(HEAD + 'baseline = "glove-bow"\n' + TWO)
    good = subprocess.run([sys.executable, "-m", "benchbox", "study", str(path), "--check"], capture_output=True,
                          text=True)
    assert good.returncode == 0 and "ok, 2 cells" in good.stdout and not (tmp_path / "s").exists()


class Seeded:
    """An encoder class declaring its seed option (only its signature and ``seed_option`` are read)."""

    seed_option = "seed"

    def __init__(self, seed: int = 0, size: int = 8) -> None:
        pass


@pytest.fixture
def seeded():
    ENCODERS.register("seeded-test", Seeded)
    yield "seeded-test"
    ENCODERS.unregister("seeded-test")


def test_seeds_reach_the_encoders_seed_option_or_its_training(tmp_path, seeded):
    """Each seed is a different command line: `-e <seed_option>=S` for an encoder evaluated as it is, `--seed S`
    for one trained (the fake seeds once gave three identical cells). The training's data root holds the files
    of Flickr8k's captions (their content is read by the cells, not by the check)."""
    for name in ("Flickr8k.token.txt", "Flickr_8k.trainImages.txt", "Flickr_8k.devImages.txt"):
        (tmp_path / "data" / "flickr8k").mkdir(parents=True, exist_ok=True)
        (tmp_path / "data" / "flickr8k" / name).touch()
    study = _load(tmp_path, HEAD + 'data-dir = "data"\n' + f'[[encoder]]\nname = "{seeded}"\nseeds = [1, 2]\n\n[[encoder]]\nname = "char-gru"\n'
                  'seeds = [5, 6]\ntrain = { dataset = "flickr8k", visual = "cluster", hidden = 8 }\n')
    commands = [cell_commands(c, study, tmp_path / c.name) for c in study.cells]
    assert [c.seed for c in study.cells] == [1, 2, 5, 6]
    assert commands[0][-1][1][commands[0][-1][1].index("-e") + 1] == "seed=1"
    assert "seed=2" in commands[1][-1][1]
    train = [stages[0] for stages in commands[2:]]
    assert [t[0] for t in train] == ["training", "training"]
    assert [cell_train_spec(c, study, tmp_path / c.name).config.seed for c in study.cells[2:]] == [5, 6]
    assert len({tuple(stages[-1][1]) for stages in commands}) == 4  # four different evaluations
    with pytest.raises(BenchboxError, match="options.seed: the seed option is set by seeds"):
        _load(tmp_path, HEAD + f'[[encoder]]\nname = "{seeded}"\nseeds = [1, 2]\noptions = {{ seed = 3 }}\n' + TWO)


def test_cell_folders_are_sanitised_names(tmp_path):
    """A cell's folder is its encoder's sanitised name and the digest of its identity (benchbox.study.keys)."""
    study = _load(tmp_path, HEAD + TWO + '[[encoder]]\nname = "benchbox:glove-bow"\noptions = { vocab = "x" }\n')
    names = [c.name for c in study.cells]
    assert [re.sub(r"-[0-9a-f]{10}$", "", n) for n in names] == ["glove-bow", "glove-bow", "benchbox-glove-bow"]
    assert len(set(names)) == 3 and all(SAFE.fullmatch(n) for n in names)


def test_two_tables_of_one_model_are_refused(tmp_path):
    """``glove-bow`` and ``benchbox:glove-bow`` are one encoder: a study of both would compare a model with itself."""
    with pytest.raises(BenchboxError, match=r"\[\[encoder\]\] 3 is the same model as \[\[encoder\]\] 1 .*drop one"):
        _load(tmp_path, HEAD + TWO + '[[encoder]]\nname = "benchbox:glove-bow"\n')


def test_the_docs_reference_is_generated_from_the_schema():
    """docs/study.md holds the reference generated from the models (python -m benchbox.study.schema)."""
    text = DOC.read_text(encoding="utf-8")
    assert text == document_with_reference(text), "run `python -m benchbox.study.schema` to update docs/study.md"


@pytest.mark.slow
def test_a_study_without_task_flags_loads_only_the_tasks_it_names(tmp_path):
    """Finding the task flags loads every registered task (the transfer tasks import torch and scikit-learn:
    seconds before the first cell); a [study] table with only its own keys has none to find. With a flag, every
    task is looked at as before, and the flag reaches the cells."""
    script = """
import json, sys
from benchbox.study.train import check_train
from benchbox.study.run import load_study
study = load_study(sys.argv[1], check_train=check_train)
print(json.dumps([study.flags, "benchbox.tasks.transfer" in sys.modules]))
"""
    outputs = []
    for name, head in (("plain", HEAD), ("flagged", '[study]\ntasks = ["stsb"]\nfix-stsb-labels = true\n')):
        path = tmp_path / f"{name}.toml"
        path.write_text(head + TWO)
        done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.strip().splitlines()[-1])
    assert outputs == ['[{}, false]', '[{"fix-stsb-labels": true}, true]']


def test_the_study_table_sets_how_the_cells_are_compared(tmp_path):
    """Issue #44: the settings of the study's comparison are keys of its [study] table, the options of `benchbox
    compare` (:class:`CompareSettings`), checked with the file; compare's defaults for the rest."""
    study = _load(tmp_path, HEAD + 'correction = "bh"\nfamily = "pair"\ntest-resamples = 200\n' + TWO)
    assert study.settings == CompareSettings(correction="bh", family="pair", n_boot=200)
    assert _load(tmp_path, HEAD + TWO).settings == CompareSettings()


def test_a_study_reads_its_comparators_file_and_names_its_mistakes(tmp_path):
    entry = ('[[comparator]]\nname = "smith2024/sif"\ncitation = "Smith (2024)"\ntask = "stsb-cosine"\n'
             'metric = "spearman"\nvalue = 0.7\nn = 1379\n')
    (tmp_path / "published.toml").write_text(entry)
    study = _load(tmp_path, HEAD + 'comparators = "published.toml"\n' + TWO)
    (name,) = study.comparators
    assert name == "file:smith2024/sif" and study.comparators[name].metrics()["value"].tolist() == [0.7]
    (tmp_path / "published.toml").write_text(entry.replace("spearman", "pearsn"))
    with pytest.raises(BenchboxError, match=r"s.toml: \[study\] comparators .*published.toml, comparator 1: task "
                                            r"stsb-cosine has no metric 'pearsn'"):
        _load(tmp_path, HEAD + 'comparators = "published.toml"\n' + TWO)
