"""Terminal tables of ``eval`` and ``compare``: the compact view fits 80 and 140 columns (and piped output) with
full names and whole numbers; ``--wide`` prints every column; numbers on the report's scale (× 100)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from types import SimpleNamespace

import pandas as pd
import pytest
from rich.console import Console

from benchbox import formatting as fmt
from benchbox.comparison.settings import CompareSettings
from benchbox.tables import pair_table, print_table, results_table
from benchbox.task_contract.protocol import MetricRecord, MetricSpec, task_class
from benchbox.task_contract.metadata import KnownTasks

#: the longest names benchbox's own tasks produce, in one table
RECORDS = [
    MetricRecord("sts16", "question-question", "spearman", 0.43012, 0.30912, 0.53834, 209),
    MetricRecord("sts12", "surprise.SMTnews", "pearson", 0.47213, 0.39201, 0.54532, 399),
    MetricRecord("sts16", "all", "spearman_pooled", 0.41321, 0.36311, 0.46012, 1186),
    MetricRecord("sickr-cosine", "test", "pearson", 0.60512, 0.58723, 0.62201, 4927),
    MetricRecord("retrieval", "t2i", "r10", 70.512, 68.3, 72.6, 5000),
]


def _comparison_rows() -> pd.DataFrame:
    rows = []
    for i, r in enumerate(RECORDS):
        rows.append({"task": r.task, "subset": r.subset, "metric": r.metric, "model_a": "GloVe", "model_b": "charGRU",
                     "value_a": r.value, "ci_low_a": r.ci_low, "ci_high_a": r.ci_high, "value_b": r.value + 0.1013,
                     "ci_low_b": r.ci_low + 0.1, "ci_high_b": r.ci_high + 0.1, "diff": -0.1013, "diff_ci_low": -0.17234,
                     "diff_ci_high": -0.03012, "test": "steiger-worst-case", "p": 0.0052 * (i + 1), "p_holm": 0.021 * (i + 1),
                     "p_bh": 0.013 * (i + 1), "verdict": "worse" if i % 2 else "no significant difference",
                     "approximate": i == 0})
    return pd.DataFrame(rows)


def _render(table, width: int, wide: bool = False) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None, markup=False)
    print_table(console, table, wide)
    return console.file.getvalue().splitlines()


#: how the tasks of RECORDS are known: as installed
TASKS = KnownTasks()


def _evaluation():
    return SimpleNamespace(encoder={"fingerprint": "f" * 20}, records=RECORDS,
                           tasks={r.task: task_class(r.task) for r in RECORDS})


def spec(task: str, metric: str) -> MetricSpec:
    """The spec the installed task declares for ``metric`` (the default spec for an undeclared one)."""
    return TASKS.spec(task, metric)


@pytest.mark.parametrize("width", [80, 140])
def test_compact_eval_table_fits_with_full_names_and_scaled_numbers(width):
    lines = _render(results_table("GloVe", _evaluation()), width)
    assert max(map(len, lines)) <= width
    for r in RECORDS:
        row = next(line for line in lines if f" {r.subset} " in line and f" {r.metric} " in line)
        assert row.split()[0] == r.task
        assert fmt.with_interval(r.value, r.ci_low, r.ci_high, spec(r.task, r.metric)) in row
    assert "43.0 [30.9, 53.8]" in "\n".join(lines)  # correlations × 100, one decimal
    assert "70.5 [68.3, 72.6]" in "\n".join(lines)  # recall already in %, as stored
    assert any("× 100" in line for line in lines[-3:])


@pytest.mark.parametrize("width", [80, 140])
def test_compact_compare_table_puts_the_verdict_first_and_fits(width):
    lines = _render(pair_table(_comparison_rows(), CompareSettings(), TASKS), width)
    assert max(map(len, lines)) <= width
    assert lines[0].strip() == "A = GloVe  vs  B = charGRU"
    assert lines[1].split() == ["A", "is", "task/subset/metric", "A", "−", "B", "p", "holm"]
    body = lines[3:3 + len(RECORDS)]
    for r, row, p in zip(RECORDS, body, ("0.021", "0.042", "0.063", "0.084", "0.105")):
        cells = row.split()
        assert cells[0] in ("n.s.", "worse") and f"{r.task}/{r.subset}/{r.metric}" in cells
        expected = "-10.1 [-17.2, -3.0]" if spec(r.task, r.metric).scale == 100 else "-0.1 [-0.2, 0.0]"  # r10: % as stored; never -0.0
        assert expected in row and row.endswith(p)
    assert body[0].startswith("n.s. ≈") and body[1].startswith("worse ")
    assert "steiger" not in "\n".join(lines)  # the test and raw p are in the wide view only
    # issue #27: a row whose interval excludes 0 can read n.s.; the caption says why
    assert "not adjusted for multiplicity (p holm is adjusted)" in " ".join(" ".join(lines).split())


def test_wide_compare_table_has_every_column_at_its_natural_width():
    lines = _render(pair_table(_comparison_rows(), CompareSettings(correction="bh"), TASKS, wide=True), 80, wide=True)
    header = lines[1].split()
    assert header == ["A", "is", "task", "subset", "metric", "A", "B", "A", "−", "B", "test", "p", "p", "bh", "p", "holm"]
    assert max(map(len, lines)) > 80  # wider than the terminal rather than squeezed
    row = next(line for line in lines if "question-question" in line)
    assert "43.0 [30.9, 53.8]" in row and "53.1 [40.9, 63.8]" in row and "steiger-worst-case" in row
    assert row.split()[-3:] == ["0.005", "0.013", "0.021"]  # raw p, p bh (the verdict's), p holm


def test_wide_eval_table_shows_bounds_and_n():
    lines = _render(results_table("GloVe", _evaluation(), wide=True), 80, wide=True)
    row = next(line for line in lines if "surprise.SMTnews" in line)
    assert row.split() == ["sts12", "surprise.SMTnews", "pearson", "47.2", "39.2", "54.5", "399"]


def _cli(*args: str, columns: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns:
        env["COLUMNS"] = columns
    proc = subprocess.run([sys.executable, "-m", "benchbox", *args], capture_output=True, text=True, env=env,
                          cwd=os.environ.get("TMPDIR", "/tmp"))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _table_lines(stdout: str) -> list[str]:
    """The lines of the pair tables: from each title to the caption's last line (not the sentences after)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("A = "))
    end = next(i for i, line in enumerate(lines) if line.startswith("≈ approximate:"))
    return lines[start:end]


@pytest.mark.slow
@pytest.mark.parametrize("columns", [None, "140"])
def test_compare_cli_fits_piped_output_and_the_terminal(columns):
    """Piped output (rich: 80 columns) and a 140-column terminal: every row whole on one line."""
    stdout = _cli("compare", "paper:merkx2019/glove-bow", "paper:merkx2019/char-gru-coco", "-q", columns=columns)
    lines = _table_lines(stdout)
    assert max(map(len, lines)) <= int(columns or 80)
    row = next(line for line in lines if "sts12/surprise.SMTnews/pearson" in line)
    assert row.split()[:2] == ["n.s.", "≈"] and "7.6 [-7.0, 22.1]" in row and row.endswith("1.000")
    assert sum("/pearson " in line for line in lines) == 26


def test_compare_cli_wide_prints_every_column_wider_than_piped_output():
    wide = _table_lines(_cli("compare", "paper:merkx2019/glove-bow", "paper:merkx2019/char-gru-coco", "-q", "--wide",
                             columns=None))
    assert max(map(len, wide)) > 80 and wide[1].split()[-4:] == ["p", "holm", "p", "bh"]
    row = next(line for line in wide if " surprise.SMTnews " in line)
    assert row.split()[:5] == ["n.s.", "≈", "sts12", "surprise.SMTnews", "pearson"] and "steiger-worst-case" in row


def test_a_value_and_its_interval_share_one_precision_and_zero_has_no_sign():
    """Issue #27: MSE rows mixed precisions (`0.0945 [0.02371, 0.1754]`) and `-0.0` was printed."""
    mse, pearson, r10 = spec("stsb", "mse"), spec("sts12", "pearson"), spec("retrieval", "r10")
    assert fmt.with_interval(0.0945, 0.02371, 0.1754, mse) == "0.0945 [0.0237, 0.1754]"
    assert fmt.with_interval(-0.0004, -0.0021, 0.0012, pearson) == "0.0 [-0.2, 0.1]"
    assert fmt.number(-0.04, r10) == "0.0" and fmt.number(-0.06, r10) == "-0.1"
    assert fmt.number(12345.6, spec("structure-flickr8k", "e_intra")) == "12346"
    assert fmt.number(0.123456, MetricSpec("auc")) == "0.1235"
    assert fmt.plus_minus(0.2751, 0.2471, 0.3031, pearson) == "27.5 ± 2.8"
    assert fmt.plus_minus(1.5, 1.25, 1.7, mse) == "1.500 +0.200/−0.250"


def test_a_metric_is_shown_as_its_spec_declares_whatever_its_name_or_magnitude():
    """Issue #28: display was chosen by metric name (``pearson*`` × 100, a list of one-decimal names) and compare
    and claims guessed percent vs fraction from ``value > 1``. The spec decides: a plugin's correlation named
    ``kendall`` shows × 100, a ``pearson`` declared on its raw scale does not, an accuracy of 0.5 % stays 0.5."""
    kendall = MetricSpec("kendall", "correlation", unit="r", scale=100, decimals=1)
    raw = MetricSpec("pearson", unit="r")
    assert fmt.number(0.4321, kendall) == "43.2" and fmt.number(0.4321, raw) == "0.4321"
    assert fmt.number(0.5, spec("mr", "accuracy")) == "0.5"


def test_compact_compare_table_shows_the_rows_its_summary_counts():
    """Issue #27: the table showed 9 worse and 3 better rows while the summary said "better on 2, worse on 2 of
    26 tasks" (it counted summary rows only). The compact table now shows those rows, and says how many more
    the wide view has."""
    rows = _comparison_rows().assign(summary=[True, True, False, True, False])
    lines = _render(pair_table(rows, CompareSettings(), TASKS), 140)
    shown = [line for line in lines if line.split() and line.split()[0] in ("n.s.", "worse", "better")]
    assert len(shown) == 3
    assert "2 more tested rows with --wide or --csv" in " ".join(" ".join(lines).split())
    assert len([line for line in _render(pair_table(rows, CompareSettings(), TASKS, wide=True), 80, wide=True)
                if line.split() and line.split()[0] in ("n.s.", "worse", "better")]) == 5
