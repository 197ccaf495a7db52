"""Counts of the hostile-input table (tests/test_hostile_inputs.py) by loader: cases tried, one-line errors,
tracebacks, partial writes. Run from the repository root:

    python benchmarks/hostile_inputs_count.py [SUBSTRING ...]   # only cases whose id contains a substring
    python benchmarks/hostile_inputs_count.py -v                # also each failing case's exit and message
"""

from __future__ import annotations

import io
import sys
import tempfile
from collections import defaultdict
from contextlib import redirect_stderr
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.test_hostile_inputs import CASES, ToyGrounded, judge  # noqa: E402


def main(argv: list[str]) -> int:
    from benchbox.registry import ENCODERS

    verbose = "-v" in argv
    wanted = [a for a in argv if a != "-v"]
    ENCODERS.register(ToyGrounded.name, ToyGrounded)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for case in CASES:
        if wanted and not any(w in case.id for w in wanted):
            continue
        buffer = io.StringIO()
        with tempfile.TemporaryDirectory() as tmp, redirect_stderr(buffer):
            def capture() -> str:
                text = buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
                return text

            verdict = judge(case, Path(tmp), capture)
        row = counts[case.loader]
        row[0] += 1
        row[1] += verdict.one_line
        row[2] += verdict.traceback
        row[3] += verdict.partial_write
        if verbose and not (verdict.one_line and not verdict.traceback and not verdict.partial_write):
            print(f"FAIL {case.id}: {verdict.detail[-300:]}", flush=True)
    print(f"{'loader':<18} {'cases':>5} {'one-line':>8} {'traceback':>9} {'partial':>7}")
    for loader, (n, one, tb, part) in counts.items():
        print(f"{loader:<18} {n:>5} {one:>8} {tb:>9} {part:>7}")
    total = [sum(r[i] for r in counts.values()) for i in range(4)]
    print(f"{'total':<18} {total[0]:>5} {total[1]:>8} {total[2]:>9} {total[3]:>7}")
    return 0 if total[0] == total[1] and not total[2] and not total[3] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
