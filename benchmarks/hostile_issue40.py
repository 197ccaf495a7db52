"""The cases of issue #40 ("never overwrite a result, never hang, never guess"), one per item of the issue, for
``benchmarks/hostile_inputs_count.py``: each builds its world in a folder of its own, runs the command line
and says whether benchbox behaved as the issue asks. A refusal is exit status 2 with one ``error:`` line (the
last line of stderr) that names what it must, no traceback, and nothing created, changed or removed under the
case's folder; a case that must work exits 0 without a traceback and passes its own check. Cases that can
hang, or that send signals, run in their own process with a time limit (a hang counts as a failure).

The table counts behaviour, whoever fixes it: cases fixed on other branches pass once those are merged.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Expect:
    #: the exit status asked for (2: refused in one line)
    code: int
    #: what the one error line (a refusal), or some line of the output (a success), must hold: each entry is
    #: a string, or a tuple of strings of which one suffices
    names: tuple = ()
    #: a check of what the command wrote (a success)
    check: Callable[[], bool] | None = None


@dataclass
class Case40:
    harm: str
    name: str
    build: Callable[[Path], tuple[list[str], Expect]]
    #: run as its own process, stopped after this many seconds (hangs, signals); None: in process
    timeout: float | None = None
    #: the environment needs this (skipped when it is missing)
    needs: Callable[[], bool] | None = None

    @property
    def id(self) -> str:
        return f"{self.harm}/{self.name}"


CASES40: list[Case40] = []


def case(harm: str, name: str, timeout: float | None = None, needs: Callable[[], bool] | None = None):
    def add(build):
        CASES40.append(Case40(harm, name, build, timeout, needs))
        return build
    return add


# --- worlds ----------------------------------------------------------------------------------------------------

def two_runs(tmp: Path) -> tuple[Path, Path]:
    """Two evaluation runs of different encoders on stsb-cosine under ``tmp/runs``."""
    from benchbox import run_tasks
    from tests.helpers import CueWords, LetterCounts

    cues = type("Cues", (CueWords,), {"name": "cues", "cues": ("a", "the", "man", "is")})
    runs = tmp / "runs"
    return tuple(run_tasks(e, ["stsb-cosine"], cache=False).save(runs) for e in (LetterCounts(), cues()))


WORDS = "cat dog cow hen fox owl eel pig rat elk yak ant bee gnu emu".split()


def pairs(n: int = 12, gold: Callable[[int], object] = lambda i: i % 5, sep: str = "\t",
          header: str = "sentence1\tsentence2\tgold") -> str:
    rows = [f"a {WORDS[i % 15]} sat {i}{sep}the {WORDS[(i * 7) % 15]} sat down{sep}{gold(i)}" for i in range(n)]
    return header.replace("\t", sep) + "\n" + "\n".join(rows) + "\n"


def declared(tmp: Path, task: str, files: dict[str, str]) -> Path:
    """A TOML task file (``task``: its ``[[task]]`` body) with its data ``files`` beside it."""
    for name, text in files.items():
        (tmp / name).write_text(text)
    path = tmp / "tasks.toml"
    path.write_text("[[task]]\n" + textwrap.dedent(task))
    return path


def eval_declared(toml: Path, task: str = "decl40") -> list[str]:
    return ["--include", str(toml), "eval", "tests.helpers:LetterCounts", "-t", task, "--no-cache", "--bootstrap", "0",
            "--runs-dir", "runs"]


_CLIP: list[Path] = []


def tiny_clip() -> Path:
    """A tiny randomly initialised CLIP folder (tests/vl_models.py), made once per process."""
    if not _CLIP:
        import tempfile

        from tests.vl_models import save_tiny_clip

        _CLIP.append(save_tiny_clip(Path(tempfile.mkdtemp(prefix="benchbox-clip40-")) / "clip"))
    return _CLIP[0]


def has_transformers() -> bool:
    import importlib.util

    return importlib.util.find_spec("transformers") is not None


def image_world(tmp: Path) -> tuple[list[str], Path, list[str]]:
    """``eval clip -t retrieval --images DIR`` on a Flickr8k-like root of 4 real JPEG files: (argv, DIR, ids)."""
    from tests.vl_models import flickr8k_root

    root, ids = flickr8k_root(tmp / "root", n_images=4)
    images = root / "flickr8k" / "Flicker8k_Dataset"
    return (["eval", "clip", "-e", f"model={tiny_clip()}", "-t", "retrieval", "--images", str(images), "--data-dir",
             str(root), "--no-cache", "--runs-dir", str(tmp / "runs"), "--bootstrap", "0"], images, ids)


# --- results destroyed ----------------------------------------------------------------------------------------

@case("results-destroyed", "declared task named ../../../victim")
def _victim(tmp: Path):
    work = tmp / "work"
    for folder in (tmp, tmp / "work"):
        folder.mkdir(exist_ok=True)
        (folder / "victim.csv").write_text("mine\n")
    toml = declared(tmp, 'name = "../../../victim"\nbase = "pair-correlation"\ndata = ["pairs.tsv"]\n',
                    {"pairs.tsv": pairs()})
    argv = eval_declared(toml, "../../../victim")
    return argv[:-1] + [str(work / "a" / "runs")], Expect(2, ("task.0.name",))


def _run_target(option: str, file: str, command: str):
    @case("results-destroyed", f"{command} {option} RUN/{file}")
    def build(tmp: Path):
        a, b = two_runs(tmp)
        argv = {"compare": ["compare", str(a), str(b)], "leaderboard": ["leaderboard", str(tmp / "runs")],
                "eval": ["eval", "tests.helpers:LetterCounts", "-t", "stsb-cosine", "--no-cache", "--no-save"]}[command]
        return [*argv, option, str(a / file)], Expect(2, (str(a),))


_run_target("--json", "manifest.json", "compare")
_run_target("--csv", "metrics.csv", "compare")
_run_target("--json", "metrics.csv", "eval")
_run_target("--json", "manifest.json", "leaderboard")


@case("results-destroyed", "--json through a link into a run")
def _link(tmp: Path):
    a, _ = two_runs(tmp)
    (tmp / "out.json").symlink_to(a / "manifest.json")
    return ["leaderboard", str(tmp / "runs"), "--json", str(tmp / "out.json")], Expect(2, (str(a),))


# --- silently wrong numbers -----------------------------------------------------------------------------------

@case("wrong-numbers", "declared column mapping with a typo")
def _typo(tmp: Path):
    text = pairs(header="sentence1\tsentence2\tgold\trating")
    text = "\n".join(line + ("\t1" if i else "") for i, line in enumerate(text.splitlines())) + "\n"
    toml = declared(tmp, 'name = "decl40"\nbase = "pair-correlation"\ndata = ["pairs.tsv"]\n'
                         'columns = { gold = "ratng" }\n', {"pairs.tsv": text})
    return eval_declared(toml), Expect(2, ("ratng",))


@case("wrong-numbers", "declared column mapped onto a name the file has")
def _collision(tmp: Path):
    text = pairs(header="sentence1\tsentence2\tgold\tscore")
    text = "\n".join(line + ("\t3" if i else "") for i, line in enumerate(text.splitlines())) + "\n"
    toml = declared(tmp, 'name = "decl40"\nbase = "pair-correlation"\ndata = ["pairs.tsv"]\n'
                         'columns = { gold = "score" }\n', {"pairs.tsv": text})
    return eval_declared(toml), Expect(2, (("gold", "score"),))


@case("wrong-numbers", "declared pair task with 2 pairs")
def _two_pairs(tmp: Path):
    toml = declared(tmp, 'name = "decl40"\nbase = "pair-correlation"\ndata = ["pairs.tsv"]\n',
                    {"pairs.tsv": pairs(2)})
    return eval_declared(toml), Expect(2, ("decl40",))


@case("wrong-numbers", "declared pair task with a repeated pair")
def _repeated(tmp: Path):
    text = pairs()
    text += text.splitlines()[1] + "\n"
    toml = declared(tmp, 'name = "decl40"\nbase = "pair-correlation"\ndata = ["pairs.tsv"]\n', {"pairs.tsv": text})
    return eval_declared(toml), Expect(2, ("decl40",))


@case("wrong-numbers", "declared retrieval task with a document id twice")
def _document_twice(tmp: Path):
    files = {"queries.tsv": "query\tsentence\trelevant\nq1\ta cat sat\td1\nq2\tdogs run\td2\n",
             "documents.tsv": "document\tsentence\nd1\tthe cat sat down\nd2\ta dog runs\nd2\tdogs running\n"}
    toml = declared(tmp, 'name = "decl40"\nbase = "retrieval"\ndata = ["queries.tsv", "documents.tsv"]\n', files)
    return eval_declared(toml), Expect(2, (("d2", "decl40"),))


@case("wrong-numbers", "two images of one name in two subfolders", needs=has_transformers)
def _same_name(tmp: Path):
    argv, images, ids = image_world(tmp)
    (images / "a").mkdir()
    (images / "b").mkdir()
    shutil.move(images / ids[1], images / "a" / ids[1])
    shutil.copy(images / ids[2], images / "b" / ids[1])
    return argv, Expect(2, (str(images / "a" / ids[1]), str(images / "b" / ids[1])))


# --- hangs -------------------------------------------------------------------------------------------------------

@case("hangs", "an image that is a FIFO", timeout=90, needs=has_transformers)
def _fifo_image(tmp: Path):
    argv, images, ids = image_world(tmp)
    (images / ids[1]).unlink()
    os.mkfifo(images / ids[1])
    return argv, Expect(2, (ids[1],))


@case("hangs", "an image that links to /dev/zero", timeout=90, needs=has_transformers)
def _zero_image(tmp: Path):
    argv, images, ids = image_world(tmp)
    (images / ids[1]).unlink()
    (images / ids[1]).symlink_to("/dev/zero")
    return argv, Expect(2, (ids[1],))


# --- tracebacks --------------------------------------------------------------------------------------------------

@case("tracebacks", "pair-classification items of one class")
def _one_class(tmp: Path):
    toml = declared(tmp, 'name = "decl40"\nbase = "pair-classification"\ndata = ["pairs.tsv"]\n',
                    {"pairs.tsv": pairs(gold=lambda i: 1)})
    return eval_declared(toml), Expect(2, ("decl40",))


@case("tracebacks", "pair-classification subset of one row")
def _one_row(tmp: Path):
    text = pairs(gold=lambda i: f"{i % 2}\t{'big' if i else 'tiny'}", header="sentence1\tsentence2\tgold\tsubset")
    toml = declared(tmp, 'name = "decl40"\nbase = "pair-classification"\ndata = ["pairs.tsv"]\n', {"pairs.tsv": text})
    return eval_declared(toml), Expect(2, ("decl40",))


@case("tracebacks", "leaderboard over a run whose manifest.json is other JSON")
def _foreign_manifest(tmp: Path):
    from benchbox import run_tasks
    from tests.helpers import LetterCounts

    run = run_tasks(LetterCounts(), ["stsb-cosine"], cache=False).save(tmp / "runs")
    (run / "manifest.json").write_text(json.dumps({"name": "my web app", "version": 3}))  # its tables kept
    return ["leaderboard", str(tmp / "runs")], Expect(2, (str(run / "manifest.json"),))


CALLABLES = textwrap.dedent("""
    import functools
    import numpy as np
    import torch

    def _rows(sentences, scale=1.0):
        return np.array([[scale * len(s) + 1, s.count("a") + 1.0, s.count("e") + 2.0, s.count(" ") + 0.5]
                         for s in sentences], np.float32)

    class Callable:
        def __call__(self, sentences):
            return _rows(sentences)

    class Module(torch.nn.Module):
        def forward(self, sentences):
            return torch.from_numpy(_rows(sentences, 2.0))

    instance = Callable()
    module = Module()
    partial = functools.partial(_rows, scale=3.0)
""")


def _callable_case(attribute: str):
    @case("tracebacks", f"a callable {attribute} as module:attribute")
    def build(tmp: Path):
        module = f"hostile40_callables_{attribute}"
        (tmp / f"{module}.py").write_text(CALLABLES)
        sys.path.insert(0, str(tmp))
        return (["eval", f"{module}:{attribute}", "-t", "stsb-cosine", "--no-cache", "--bootstrap", "0", "--runs-dir",
                 str(tmp / "runs")], Expect(0, check=lambda: len(list((tmp / "runs").glob("*/manifest.json"))) == 1))


for _attribute in ("instance", "module", "partial"):
    _callable_case(_attribute)


@case("tracebacks", "compare ENCODER in a folder holding ENCODER/")
def _shadowing_folder(tmp: Path):
    (tmp / "work" / "glove-bow").mkdir(parents=True)
    return (["compare", "glove-bow", "tests.helpers:LetterCounts", "-t", "stsb-cosine", "--bootstrap", "0",
             "--runs-dir", str(tmp / "runs")], Expect(-1, (("folder", "directory"), "glove-bow")))


# --- Ctrl-C from the first instant (their own processes: tests/commands/test_ctrl_c.py) ------------------------

def _ctrl_c_case(stage: str, target: str, *argv: str, in_del: bool = False, include: bool = False):
    @case("tracebacks", f"Ctrl-C {stage}", timeout=240)
    def build(tmp: Path):
        from tests.commands.test_ctrl_c import INCLUDE, SCRIPT

        extra = []
        if include:
            (tmp / "interrupting.py").write_text(INCLUDE)
            extra = ["--include", str(tmp / "interrupting.py")]
        return (["-c", SCRIPT, target, "--del" if in_del else "--", *extra, *argv],
                Expect(128 + signal.SIGINT, ("interrupted",)))


_ctrl_c_case("while benchbox reads its version", "importlib.metadata", "list", "tasks")
_ctrl_c_case("while typer imports", "typer", "list", "tasks")
_ctrl_c_case("in a __del__ while starting", "typer", "list", "tasks", in_del=True)
_ctrl_c_case("twice: in the work, then while the interpreter ends", "no-such-module", "eval", "interrupted", "-t",
             "stsb-cosine", "--no-cache", "--no-save", "-q", include=True)


# --- accepted when it should be refused, or refused with the wrong reason ----------------------------------------

def _no_gpu() -> bool:
    import torch

    return not torch.cuda.is_available()


@case("wrong-reason", "--device cuda without a GPU, glove-bow", needs=_no_gpu)
def _cuda(tmp: Path):
    return (["eval", "glove-bow", "-t", "stsb-cosine", "--device", "cuda", "--runs-dir", str(tmp / "runs")],
            Expect(2, ("no CUDA device here",)))


STUDY = '[study]\ntasks = ["{task}"]\n\n[[encoder]]\nname = "{a}"\n\n[[encoder]]\nname = "{b}"\n{extra}'


@case("wrong-reason", "--ray ''")
def _ray(tmp: Path):
    (tmp / "s.toml").write_text(STUDY.format(task="stsb-cosine", a="glove-bow", b="tests.helpers:LetterCounts",
                                             extra=""))
    return ["study", str(tmp / "s.toml"), "--ray", ""], Expect(2, ("--ray",))


@case("wrong-reason", "clip folder without its tokenizer", needs=has_transformers)
def _no_tokenizer(tmp: Path):
    folder = tmp / "clip"
    shutil.copytree(tiny_clip(), folder)
    for name in ("vocab.json", "merges.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (folder / name).unlink(missing_ok=True)
    return (["eval", "clip", "-e", f"model={folder}", "-t", "stsb-cosine", "--no-cache", "--runs-dir", str(tmp / "runs")],
            Expect(2, ("tokenizer",)))


@case("wrong-reason", "comma-separated task file")
def _csv_file(tmp: Path):
    toml = declared(tmp, 'name = "decl40"\nbase = "pair-correlation"\ndata = ["pairs.csv"]\n'
                         'columns = { sentence1 = "left", sentence2 = "right", gold = "score" }\n',
                    {"pairs.csv": pairs(sep=",", header="left\tright\tscore")})
    return eval_declared(toml), Expect(0, check=lambda: len(list((tmp / "work" / "runs").glob("*/manifest.json"))) == 1)


@case("wrong-reason", "a study that needs --include")
def _study_include(tmp: Path):
    declared(tmp, 'name = "decl40"\nbase = "pair-correlation"\ndata = ["pairs.tsv"]\n', {"pairs.tsv": pairs()})
    (tmp / "s.toml").write_text(STUDY.format(task="decl40", a="glove-bow", b="tests.helpers:LetterCounts", extra=""))
    return ["study", str(tmp / "s.toml"), "--check"], Expect(2, ("--include",))


FAILING = textwrap.dedent("""
    from benchbox.registry import ENCODERS
    from tests.helpers import LetterCounts

    class Failing(LetterCounts):
        def _encode(self, sentences, batch_size):
            raise RuntimeError("fails on purpose")

    for name in ("failing40-a", "failing40-b"):
        ENCODERS.register(name, type(name, (Failing,), {"name": name}))
""")


@case("wrong-reason", "the study's next command keeps --include and --out", timeout=400)
def _next_command(tmp: Path):
    (tmp / "failing40.py").write_text(FAILING)
    (tmp / "s.toml").write_text(STUDY.format(task="stsb-cosine", a="failing40-a", b="failing40-b", extra=""))
    include = ["--include", str(tmp / "failing40.py")]
    return ["-m", "benchbox", *include, "study", str(tmp / "s.toml"), "--out", str(tmp / "elsewhere")], \
        Expect(1, (f"--include {tmp / 'failing40.py'}", f"--out {tmp / 'elsewhere'}"))


@case("wrong-reason", "seeds for an encoder without seed_option")
def _seeds(tmp: Path):
    (tmp / "s.toml").write_text(STUDY.format(task="stsb-cosine", a="glove-bow", b="tests.helpers:LetterCounts",
                                             extra="seeds = [1, 2]\n"))
    return ["study", str(tmp / "s.toml"), "--check"], Expect(2, ("seed_option",))


@case("wrong-reason", "an unknown key in a task file")
def _unknown_key(tmp: Path):
    toml = declared(tmp, 'name = "decl40"\nbase = "pair-correlation"\ndata = ["pairs.tsv"]\nmetric = "auc"\n',
                    {"pairs.tsv": pairs()})
    return eval_declared(toml), Expect(2, ("metric", "columns"))


# --- judging -----------------------------------------------------------------------------------------------------

def _holds(text: str, names: tuple) -> bool:
    return all(any(n in text for n in (name if isinstance(name, tuple) else (name,))) for name in names)


def judge40(case40: Case40, tmp: Path, capture) -> tuple[bool, bool, str]:
    """Build and run ``case40`` in ``tmp``: (as the issue asks, a traceback was printed, detail)."""
    from tests.core.test_hostile_inputs import listing, registered_meanwhile, run_cli, touched

    with registered_meanwhile():
        argv, expect = case40.build(tmp)
        work = tmp / "work"
        work.mkdir(exist_ok=True)
        before = listing(tmp)
        if case40.timeout is None:
            outcome = run_cli(argv, work, capture)
            code, stderr, tb = outcome.code, outcome.stderr, outcome.traceback
        else:
            process = argv if argv[0] in ("-c", "-m") else ["-m", "benchbox", *argv]
            env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
            try:
                done = subprocess.run([sys.executable, *process], cwd=work, capture_output=True, text=True, env=env,
                                      timeout=case40.timeout)
            except subprocess.TimeoutExpired:
                return False, False, f"hung: no answer in {case40.timeout:.0f} s"
            code, stderr, tb = done.returncode, done.stderr, ""
        changed = touched(before, listing(tmp))
    traceback = bool(tb) or "Traceback" in stderr or "Exception ignored" in stderr
    lines = stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    if expect.code == 2:
        ok = code == 2 and len(errors) == 1 and lines[-1] == errors[0] and _holds(errors[0], expect.names) \
            and not changed
    elif expect.code == -1:  # either refused in one line, or done with a line saying which was used
        ok = (code == 2 and len(errors) == 1 and lines[-1] == errors[0]) or (
            code == 0 and any(_holds(line, expect.names) for line in lines))
    elif expect.code == 128 + signal.SIGINT:
        ok = code == expect.code and len(lines) == 1 and lines[0].startswith("error: ") and _holds(lines[0], expect.names)
    else:
        ok = code == expect.code and any(_holds(line, expect.names) for line in lines or [""]) and (
            expect.check is None or expect.check())
    detail = (tb.strip().splitlines() or [""])[-1] if tb else (lines[-1] if lines else "")
    return ok and not traceback, traceback, f"exit {code}: {detail[:300]}"
