"""benchmarks/bench_claim_calibration.py --quick (the CI's run of the claim calibration, so it cannot rot): every
scenario row printed, and the fast path's claim p equal to compare_sources' on the first 1 vs 1 and 3 vs 3
replicates (the bench stops otherwise)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_claim_calibration.py"


@pytest.mark.slow
def test_quick_calibration_runs_every_scenario(data_root, monkeypatch, capsys):
    monkeypatch.setenv("BENCHBOX_DATA", str(data_root.root))
    spec = importlib.util.spec_from_file_location("bench_claim_calibration", BENCH)
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, bench)  # its dataclasses look their module up there
    spec.loader.exec_module(bench)
    bench.main(["--quick"])
    out = capsys.readouterr().out
    assert "check 1 vs 1: claim p" in out and "check 3 vs 3: claim p" in out
    rows = [line for line in out.splitlines() if line.startswith(("| null", "| power"))]
    assert [row.split(" | ")[0] for row in rows] == ["| null, 1 vs 1", "| null, 3 vs 3, shared item error",
                                                      "| null, 5 vs 5, shared item error",
                                                      "| power, 1 vs 1, A's noise × 0.945",
                                                      "| power, 1 vs 1, A's noise × 0.890"]
    assert all(row.split(" | ")[1] == "3" for row in rows)
