"""The semantic evaluation's CPU time and the command line's start (issue 53). All figures are CPU seconds
(``time.process_time`` in this process, ``getrusage(RUSAGE_CHILDREN)`` for a child), medians over
``--repeats``, measured in this one run with the machine's load printed first.

Run: ``BENCHBOX_DATA=../shared/data python benchmarks/bench_semantic_speed.py [--repeats 3]``.

1. The heavy libraries ``benchbox --help`` imports (goal: none of pandas, joblib, scipy, scikit-learn,
   statsmodels, torch) and its module count.
2. Each relatedness fit (STS-B, SICK-R on GloVe-BOW features; goal < 2 s CPU), against the same epoch loop
   run eagerly (not compiled by TorchScript) in the same run; both must give identical predictions.
3. STS12–16 with a warm embedding cache against SentEval's loop (``tests/senteval_reference.senteval_sts``,
   which encodes as it goes) on the same encoder (goal ≤ 0.2×), with benchbox's 1000-resample bootstrap
   intervals and without them (``bootstrap=0``).
4. A warm ``benchbox eval glove-bow --task semantic --threads 1`` in a fresh process (goal ≤ 5 s CPU), against
   the same command with Python's default garbage collector (:mod:`benchbox.collector` undone), side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchbox.data.root import DataRoot  # noqa: E402
from benchbox.encoders.glove_bow import GloveBowEncoder  # noqa: E402
from benchbox.tasks import relatedness  # noqa: E402
from benchbox.tasks.senteval_data import load_sick, load_stsb  # noqa: E402
from benchbox.tasks.sts import STS12, STS13, STS14, STS15, STS16  # noqa: E402
from tests import senteval_reference as ref  # noqa: E402
from tests.core.test_startup import HEAVY, PROBE  # noqa: E402

STS_TASKS = (STS12, STS13, STS14, STS15, STS16)


def cpu(fn, repeats: int) -> tuple[float, object]:
    """Median CPU seconds of ``fn()`` over ``repeats`` calls, and its last result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return statistics.median(times), out


def help_imports() -> None:
    code = PROBE + "\nprint(len(sys.modules), file=sys.stderr)"
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(["--help"]), json.dumps(HEAVY)],
                          capture_output=True, text=True, check=True)
    heavy, count = proc.stderr.strip().splitlines()[-2:]
    print(f"benchbox --help: heavy libraries imported {json.loads(heavy) or 'none'} (checked: {', '.join(HEAVY)}); "
          f"{count} modules in sys.modules")


def fits(data: DataRoot, repeats: int) -> None:
    enc = GloveBowEncoder()
    compiled = relatedness._compiled_epoch
    for name, loader in (("stsb", load_stsb), ("sickr", load_sick)):
        f = ref.relatedness_features(enc, data, loader)

        def fit():
            return relatedness.fit_relatedness(f["train"][0], f["train"][1], f["dev"][0], f["dev"][1], f["test"][0])

        fast, fitted = cpu(fit, repeats)
        relatedness._compiled_epoch = lambda: relatedness.train_epoch  # the same loop, eager
        try:
            eager, eager_fit = cpu(fit, 1)
        finally:
            relatedness._compiled_epoch = compiled
        same = np.array_equal(fitted.test_pred, eager_fit.test_pred) and np.array_equal(fitted.dev_pred,
                                                                                         eager_fit.dev_pred)
        steps = fitted.epochs * -(-len(f["train"][1]) // 64)
        print(f"{name} relatedness fit: {fast:.2f} s CPU (median of {repeats}; {fitted.epochs} epochs, {steps:,} "
              f"steps, {1e6 * fast / steps:.0f} us/step), eager loop {eager:.2f} s: {fast / eager:.2f}x; "
              f"predictions identical: {same}")


def sts(data_dir: str, repeats: int) -> None:
    import benchbox
    from benchbox.storage.cache import EmbeddingCache
    from benchbox.task_contract.options import TaskOptions

    enc = GloveBowEncoder()
    with tempfile.TemporaryDirectory() as folder:
        cache = EmbeddingCache(folder)
        benchbox.run_tasks(enc, [t.name for t in STS_TASKS], data_dir=data_dir, cache=cache)  # fills the cache
        ours = {b: cpu(lambda: benchbox.run_tasks(enc, [t.name for t in STS_TASKS], data_dir=data_dir, cache=cache,
                                                  options=TaskOptions(bootstrap=b)), repeats)[0] for b in (1000, 0)}
    root = Path(data_dir) / "senteval/downstream/STS"

    def senteval():
        for task in STS_TASKS:
            ref.senteval_sts(enc.encode, root / f"STS{task.year}-en-test", task.subsets)

    theirs, _ = cpu(senteval, repeats)
    print(f"STS12-16 (warm cache): benchbox {ours[1000]:.2f} s CPU with 1000-resample bootstrap intervals "
          f"({ours[1000] / theirs:.2f}x), {ours[0]:.2f} s without ({ours[0] / theirs:.2f}x); SentEval's loop "
          f"{theirs:.2f} s (medians of {repeats})")


#: the command line with Python's default garbage collector (benchbox.collector's settings undone): the baseline
WITHOUT_COLLECTOR = ("import sys; from benchbox import collector; collector.for_one_command = lambda: None; "
                     "from benchbox.cli import main; sys.argv[0] = 'benchbox'; main()")


def semantic_eval(data_dir: str, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as cache:
        args = ["eval", "glove-bow", "--task", "semantic", "--threads", "1", "--data-dir", data_dir, "--cache-dir",
                cache, "--no-save", "--quiet"]
        commands = {"benchbox": [sys.executable, "-m", "benchbox", *args],
                    "default collector": [sys.executable, "-c", WITHOUT_COLLECTOR, *args]}
        subprocess.run(commands["benchbox"], check=True, capture_output=True)  # fills the embedding cache
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(repeats):  # the two side by side, round after round
            for name, command in commands.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run(command, check=True, capture_output=True)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                times[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    ours, default = (statistics.median(times[name]) for name in commands)
    print(f"benchbox eval glove-bow --task semantic --threads 1, warm cache: {ours:.2f} s CPU (median of {repeats}: "
          f"{', '.join(f'{t:.2f}' for t in times['benchbox'])}); with Python's default garbage collector "
          f"{default:.2f} s: {ours / default:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("BENCHBOX_DATA"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not args.data_dir:
        raise SystemExit("set BENCHBOX_DATA or pass --data-dir")
    print(f"load average (1, 5, 15 min) {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    help_imports()
    fits(DataRoot(args.data_dir), args.repeats)
    sts(args.data_dir, args.repeats)
    semantic_eval(args.data_dir, args.repeats)
    print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
