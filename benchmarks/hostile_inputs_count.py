"""Counts of the hostile-input table (tests/core/test_hostile_inputs.py) by loader: cases tried, one-line errors,
tracebacks, partial writes, and paths touched (files created, changed or removed, folders removed, under the
case's folder, listed before and after the command). Then the cases that must succeed without touching what
is not theirs (issue #26: output targets, converted encoder outputs, Ctrl-C at start-up), each with its own
outputs: every other path listed before must be listed unchanged after. Last, the cases of issue #40
(benchmarks/hostile_issue40.py: output targets, declared tasks, image folders, tracebacks, Ctrl-C, refusals that
must name the real cause), counted by harm. Run from the repository root:

    python benchmarks/hostile_inputs_count.py [SUBSTRING ...]   # only cases whose id contains a substring
    python benchmarks/hostile_inputs_count.py -v                # also each case's exit and message
"""

from __future__ import annotations

import io
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections import defaultdict
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from tests.core.test_hostile_inputs import (  # noqa: E402
    CASES, DIM, SHARED_DATA, ToyGrounded, _plugin, _retrieval, device, features_file, judge, listing, run_cli, touched,
)


# --- cases that must succeed, touching only their own outputs --------------------------------------------------

@dataclass
class Written:
    name: str
    #: builds the case in a folder; returns (command line, the paths the command may write, a check of them)
    build: Callable[[Path], tuple[list[str], list[Path], Callable[[], bool]]]
    code: int = 0


WRITTEN: list[Written] = []


def written(name: str, code: int = 0):
    def add(build):
        WRITTEN.append(Written(name, build, code))
        return build
    return add


@written("--json through a symlink writes the file it names; the link stays")
def _symlink(tmp: Path):
    (tmp / "data").mkdir()
    real, link = tmp / "data" / "real.json", tmp / "link.json"
    real.write_text("old")
    link.symlink_to(real)
    return (["list", "tasks", "--json", str(link)], [real],
            lambda: link.is_symlink() and json.loads(real.read_text())["kind"] == "tasks")


@written("--csv through a dangling symlink creates the file it names")
def _dangling(tmp: Path):
    (tmp / "runs").mkdir()
    link = tmp / "link.csv"
    link.symlink_to(tmp / "new.csv")
    return (["runs", str(tmp / "runs"), "--csv", str(link)], [tmp / "new.csv"],
            lambda: link.is_symlink() and (tmp / "new.csv").read_text().startswith("run_id,"))


@written("--json into a FIFO is written in place")
def _fifo(tmp: Path):
    fifo = tmp / "pipe.json"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()

    def check() -> bool:
        reader.join(timeout=30)
        return stat.S_ISFIFO(fifo.lstat().st_mode) and bool(got) and json.loads(got[0])["kind"] == "encoders"

    return ["list", "encoders", "--json", str(fifo)], [fifo], check


@written("--json into a null device is written in place")
def _null(tmp: Path):
    null = device(tmp, "null")
    return ["list", "tasks", "--json", str(null)], [null], lambda: stat.S_ISCHR(null.lstat().st_mode)


def _tensor_case(name: str, convert: Callable[[np.ndarray], object]):
    @written(f"an encoder returning {name} is converted")
    def build(tmp: Path):
        from benchbox.registry import ENCODERS

        encoder = f"hostile-tensor-{name.replace(' ', '-')}"
        ENCODERS.register(encoder, _plugin(encoder, lambda s: convert(
            np.random.default_rng(len(s)).standard_normal((len(s), DIM)))))
        runs = tmp / "runs"
        return (["eval", encoder, "--task", "sickr-cosine", "--runs-dir", str(runs), "--no-cache"], [runs],
                lambda: len(list(runs.glob("*/manifest.json"))) == 1)


def _torch(**kwargs):
    import torch

    return lambda a: torch.tensor(a, **kwargs)


_tensor_case("a tensor that requires grad", lambda a: _torch(requires_grad=True)(a))
_tensor_case("a bfloat16 tensor", lambda a: _torch()(a).bfloat16())


@written("an image branch returning a tensor that requires grad is converted")
def _image_tensor(tmp: Path):
    from benchbox.registry import ENCODERS

    class Branch(ToyGrounded):
        name = "hostile-image-tensor"

        def encode_images(self, features):
            return _torch(requires_grad=True)(np.asarray(features, np.float32)[:, :DIM])

    ENCODERS.register(Branch.name, Branch)
    argv = _retrieval(tmp, features_file(tmp))
    argv[1] = Branch.name
    return argv, [tmp / "runs"], lambda: len(list((tmp / "runs").glob("*/manifest.json"))) == 1


@written("--text raw overridden by -t sts12:text=senteval: the run records senteval")
def _overridden(tmp: Path):
    runs = tmp / "runs"

    def check() -> bool:
        manifest = json.loads(next(runs.glob("*/manifest.json")).read_text())
        return manifest["tasks"]["sts12"]["options"]["text"] == "senteval"  # task options live with their task

    return (["eval", "tests.helpers:LetterCounts", "-t", "sts12:text=senteval", "--text", "raw", "--data-dir",
             str(SHARED_DATA), "--runs-dir", str(runs), "--no-cache", "--bootstrap", "0"], [runs], check)


def judge_written(case: Written, tmp: Path, capture) -> tuple[bool, bool, int, str]:
    """(as expected, traceback, paths touched outside the case's outputs, detail)."""
    argv, outputs, check = case.build(tmp)
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    before = listing(tmp)
    outcome = run_cli(argv, work, capture)
    changed = touched(before, listing(tmp))
    outside = {p for p in changed
               if not any(p.split("@")[0] == str(o) or p.startswith(f"{o}/") for o in outputs)}
    tb = bool(outcome.traceback) or "Traceback" in outcome.stderr
    ok = outcome.code == case.code and not tb and check()
    return ok, tb, len(outside), f"exit {outcome.code}: {(outcome.traceback or outcome.stderr).strip()[-300:]}"


#: benchbox's command line with Ctrl-C delivered while ``benchbox.cli`` imports typer
CTRL_C = """
import builtins, os, signal, sys
real_import = builtins.__import__
def ctrl_c(name, *args, **kwargs):
    if name == "typer" and not getattr(ctrl_c, "sent", False):
        ctrl_c.sent = True
        os.kill(os.getpid(), signal.SIGINT)
    return real_import(name, *args, **kwargs)
builtins.__import__ = ctrl_c
sys.argv = ["benchbox", "list", "tasks"]
from benchbox.cli import main
main()
"""


def ctrl_c_at_start_up(tmp: Path) -> tuple[bool, bool, int, str]:
    before = listing(tmp)
    done = subprocess.run([sys.executable, "-c", CTRL_C], cwd=tmp, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    lines = done.stderr.splitlines()
    ok = done.returncode == 128 + signal.SIGINT and len(lines) == 1 and lines[0].startswith("error: ")
    return ok, "Traceback" in done.stderr, len(touched(before, listing(tmp))), f"exit {done.returncode}: {done.stderr.strip()}"


# --- the counts ------------------------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    from benchbox.registry import ENCODERS

    # the cases build small data roots at the published paths, as the tests do: not the published files
    # (tests/data/test_published_checksums.py covers the refusal of those)
    os.environ["BENCHBOX_ALLOW_DATA_MISMATCH"] = "1"

    verbose = "-v" in argv
    wanted = [a for a in argv if a != "-v"]
    ENCODERS.register(ToyGrounded.name, ToyGrounded)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    buffer = io.StringIO()

    def capture() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    for case in CASES:
        if wanted and not any(w in case.id for w in wanted):
            continue
        with tempfile.TemporaryDirectory() as tmp, redirect_stderr(buffer), redirect_stdout(io.StringIO()):
            verdict = judge(case, Path(tmp), capture)
        row = counts[case.loader]
        for i, value in enumerate((1, verdict.one_line, verdict.traceback, verdict.partial_write, verdict.touched)):
            row[i] += int(value)
        good = verdict.one_line and not verdict.traceback and not verdict.partial_write and not verdict.touched
        if verbose or not good:
            print(f"{'ok  ' if good else 'FAIL'} {case.id}: {verdict.detail.splitlines()[-1][:220]}", flush=True)
    print(f"{'loader':<18} {'cases':>5} {'one-line':>8} {'traceback':>9} {'partial':>7} {'touched':>7}")
    for loader, row in counts.items():
        print(f"{loader:<18} {row[0]:>5} {row[1]:>8} {row[2]:>9} {row[3]:>7} {row[4]:>7}")
    total = [sum(r[i] for r in counts.values()) for i in range(5)]
    print(f"{'total':<18} {total[0]:>5} {total[1]:>8} {total[2]:>9} {total[3]:>7} {total[4]:>7}")

    results = []
    for case in WRITTEN:
        if (wanted and not any(w in case.name for w in wanted)) or ("sts12" in case.name and not SHARED_DATA.is_dir()):
            continue
        with tempfile.TemporaryDirectory() as tmp, redirect_stderr(buffer), redirect_stdout(io.StringIO()):
            results.append((case.name, *judge_written(case, Path(tmp), capture)))
    if not wanted or any(w in "ctrl-c at start-up" for w in wanted):
        with tempfile.TemporaryDirectory() as tmp:
            results.append(("ctrl-c while the modules import: exit 130, one line", *ctrl_c_at_start_up(Path(tmp))))
    for name, ok, tb, outside, detail in results:
        if verbose or not ok or tb or outside:
            print(f"{'ok  ' if ok and not tb and not outside else 'FAIL'} {name}: {detail.splitlines()[-1][:220] if detail else ''}")
    good = sum(ok and not tb and not outside for _, ok, tb, outside, _ in results)
    print(f"written as the rule says: {good} of {len(results)} cases, "
          f"{sum(r[2] for r in results)} tracebacks, "
          f"{sum(r[3] for r in results)} paths touched outside their outputs")
    errors_ok = total[0] == total[1] and not total[2] and not total[3] and not total[4]
    good40 = issue40(wanted, verbose, buffer, capture)
    return 0 if errors_ok and good == len(results) and good40 else 1


def issue40(wanted: list[str], verbose: bool, buffer: io.StringIO, capture) -> bool:
    """The cases of issue #40 (benchmarks/hostile_issue40.py), counted by harm: cases, as asked, tracebacks."""
    from hostile_issue40 import CASES40, judge40

    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for case in CASES40:
        if (wanted and not any(w in case.id for w in wanted)) or (case.needs is not None and not case.needs()):
            continue
        with tempfile.TemporaryDirectory() as tmp, redirect_stderr(buffer), redirect_stdout(io.StringIO()):
            ok, tb, detail = judge40(case, Path(tmp), capture)
        for i, value in enumerate((1, ok, tb)):
            counts[case.harm][i] += int(value)
        if verbose or not ok:
            print(f"{'ok  ' if ok else 'FAIL'} {case.id}: {detail.splitlines()[-1][:220] if detail else ''}", flush=True)
    print(f"{'issue #40':<18} {'cases':>5} {'as asked':>8} {'traceback':>9}")
    for harm, row in counts.items():
        print(f"{harm:<18} {row[0]:>5} {row[1]:>8} {row[2]:>9}")
    total = [sum(r[i] for r in counts.values()) for i in range(3)]
    print(f"{'total':<18} {total[0]:>5} {total[1]:>8} {total[2]:>9}")
    return total[0] == total[1]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
