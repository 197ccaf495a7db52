"""The default thread count on a busy machine: ``benchbox eval glove-bow`` with the default threads vs
``--threads 1``, started side by side while two other CPU-bound processes keep the cores busy (issue #41: on a
2-core machine the default took 636 s for ``--task semantic`` where ``--threads 1`` took 87 s).

Run: ``BENCHBOX_DATA=/work/shared/data python benchmarks/bench_busy_threads.py [--task stsb] [--rounds 3]
[--busy 2]``. The embedding cache (a fresh temporary folder shared by every run) is filled by one run first, so
the rounds time the evaluation (for glove-bow on the SentEval tasks: the relatedness regressor and the
probes), not the encoding. Then ``--busy`` processes spinning ``while True: pass`` are started and kept running
through all rounds; each round starts both commands at the same moment and waits for both. The environment of
both has no ``OMP_NUM_THREADS`` (which the default would honour), so the default is benchbox's own. Printed:
each command's wall and CPU time (user + system) per round, their medians, the ratio default / ``--threads 1``
of the median walls (the issue's goal: ≤ 1.25), and the load average before and after. The spinners are
killed at the end, also when a run fails. ``--versus N`` times ``--threads N`` in place of the default: on a
machine whose load average has not yet risen (the spinners started a moment ago) the default's count is the
idle machine's, so ``--versus 2`` on 2 cores shows what the other guards (sleeping OpenMP threads, one thread
for SentEval's probes and regressor) do then.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPIN = "while True: pass"


def command(task: str, runs: Path, threads: list[str]) -> list[str]:
    return [sys.executable, "-m", "benchbox", "eval", "glove-bow", "--task", task, "--runs-dir", str(runs), "-q",
            *threads]


def side_by_side(commands: dict[str, list[str]], env: dict[str, str]) -> dict[str, tuple[float, float]]:
    """Start every command at once; (wall s, CPU s) of each, from its own start to its exit."""
    started = time.monotonic()
    procs = {name: subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for name, argv in commands.items()}
    times: dict[str, tuple[float, float]] = {}
    by_pid = {p.pid: name for name, p in procs.items()}
    while len(times) < len(procs):
        pid, status, usage = os.wait4(-1, 0)
        if pid not in by_pid:
            continue
        name = by_pid[pid]
        proc = procs[name]
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(f"{' '.join(commands[name])} exited {proc.returncode}:\n{proc.stderr.read().strip()}")
        times[name] = (time.monotonic() - started, usage.ru_utime + usage.ru_stime)
        print(f"  {name} done: {times[name][0]:.1f} s wall, {times[name][1]:.1f} s CPU", flush=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="stsb", help="benchbox eval's --task (a task, group or list)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--busy", type=int, default=2, help="CPU-bound processes running beside the two commands")
    parser.add_argument("--versus", type=int, default=None, metavar="N",
                        help="time --threads N against --threads 1 instead of the default (N = 2 on a 2-core machine: "
                             "what the guards besides the count do when the load average has not seen the load yet)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    with tempfile.TemporaryDirectory() as tmp:
        env["BENCHBOX_CACHE"] = str(Path(tmp) / "cache")
        runs = Path(tmp) / "runs"
        warm = subprocess.run(command(args.task, runs, []), env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, check=False)
        if warm.returncode:
            raise SystemExit(f"the warm-up run exited {warm.returncode}:\n{warm.stderr.strip()}")
        tried = "default threads" if args.versus is None else f"--threads {args.versus}"
        commands = {tried: command(args.task, runs, [] if args.versus is None else ["--threads", str(args.versus)]),
                    "--threads 1": command(args.task, runs, ["--threads", "1"])}
        load_before = os.getloadavg()
        spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.busy)]
        try:
            rounds = []
            for i in range(args.rounds):
                rounds.append(side_by_side(commands, env))
                print(f"round {i + 1}: " + "; ".join(f"{name} {wall:.1f} s wall, {cpu:.1f} s CPU"
                                                     for name, (wall, cpu) in rounds[-1].items()), flush=True)
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
    load_after = os.getloadavg()
    print(f"eval glove-bow --task {args.task}, warm cache, {args.busy} spinning processes beside; {os.cpu_count()} "
          f"CPU(s); load average (1, 5 min) {load_before[0]:.1f}, {load_before[1]:.1f} before the spinners and "
          f"{load_after[0]:.1f}, {load_after[1]:.1f} after; medians of {args.rounds} rounds")
    medians = {}
    for name in commands:
        medians[name] = statistics.median(r[name][0] for r in rounds)
        print(f"{name:<16} wall {medians[name]:6.1f} s, CPU {statistics.median(r[name][1] for r in rounds):6.1f} s")
    per_round = [r[tried][0] / r["--threads 1"][0] for r in rounds]
    print(f"ratio {tried} / --threads 1 (median walls): {medians[tried] / medians['--threads 1']:.2f} "
          f"(per round {', '.join(format(x, '.2f') for x in per_round)}; goal <= 1.25)")


if __name__ == "__main__":
    main()
