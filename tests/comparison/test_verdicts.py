"""The verdict in words (issue 41): ``benchbox compare`` and the report open with one plain sentence per claim,
the better model first, with the difference, interval and p of the test that gave the claim's p
(benchbox.comparison.claims.verdict); compare and the report label models by one rule (benchbox.labels)."""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.comparison.claims import verdict
from benchbox.comparison.compare import compare
from benchbox.reports import write_report
from benchbox.reports.markdown import escape
from benchbox.storage.runs import Run
from benchbox.comparison.settings import CompareSettings
from tests.comparison.test_compare import make_run


@pytest.fixture
def good_bad(tmp_path):
    return make_run(tmp_path, "good", 0.5, 0, 0.85), make_run(tmp_path, "bad", 2.0, 6, 0.70)


@pytest.fixture
def worse_claim(good_bad):
    """A real claim written from the worse model's side: A = bad, B = good."""
    good, bad = good_bad
    claims = compare([str(bad), str(good)], ["sts12"], settings=CompareSettings(n_boot=50)).claims
    assert len(claims) == 1 and claims.iloc[0]["verdict"] == "worse"
    return claims.iloc[0]


def test_a_worse_claim_names_the_better_model_first_with_its_difference(worse_claim):
    claim = worse_claim
    line = verdict(claim)
    low, high = -claim["ci_high"], -claim["ci_low"]  # from good's side
    assert line == (f"good is better than bad on the {claim['rows']} correlation rows: pooled Δz "
                    f"+{-claim['estimate']:.2f} [+{low:.2f}, +{high:.2f}] (mean Δr +{-claim['mean_diff']:.2f}), "
                    "p < 0.0001 (jackknife over 350 sentence groups)")


def test_no_significant_difference_states_the_direction_of_the_difference(worse_claim):
    claim = worse_claim.copy()
    claim["verdict"], claim["p_claim_adjusted"] = "no significant difference", 0.21
    line = verdict(claim, claims=3)
    assert line.startswith(f"No significant difference between bad and good on the {claim['rows']} correlation "
                           f"rows: pooled Δz (bad − good) −{-claim['estimate']:.2f} [")
    assert line.endswith(", p = 0.21 (jackknife over 350 sentence groups, holm-adjusted over 3 claims)")


def test_the_test_named_is_the_one_that_gave_p(worse_claim):
    claim = worse_claim.copy()
    # with seeds, one test of item and seed variance together: its estimate, interval and df are stated
    claim.update({"seeds_a": 3, "variance": "jackknife + seeds", "df": 4.26, "p_claim_adjusted": 0.04})
    assert verdict(claim).endswith(f", p = 0.04 (jackknife over 350 sentence groups + seed variance, df = 4.3)")
    # five clusters or fewer: the cluster sign-flip test, whose interval is then the whole line
    claim.update({"variance": "sign-flip", "clusters": 2, "ci_low": -math.inf, "ci_high": math.inf,
                  "p_claim_adjusted": 0.5,
                  "verdict": "no significant difference"})
    assert verdict(claim).endswith(" [−∞, +∞] (mean Δr " f"−{-claim['mean_diff']:.2f}), p = 0.5 (sign-flip test "
                                   "over 2 clusters)")


def test_compare_and_the_report_open_with_the_same_verdict_and_labels(good_bad, tmp_path):
    good, bad = good_bad
    twin = make_run(tmp_path, "good", 0.6, 0, 0.84, seed=5, config={"width": 2})  # another model named "good"
    result = CliRunner().invoke(app, ["compare", str(good), str(bad), str(twin), "--task", "sts12",
                                      "--bootstrap", "50", "--baseline", "bad", "-q"])
    assert result.exit_code == 0, result.output
    ids = [Run.open(p).run_id for p in (good, twin)]
    first, second = f"good ({ids[0]})", f"good ({ids[1]})"  # one rule: the name, told apart by the run id
    lines = result.output.splitlines()
    assert lines[0].startswith(f"{first} is better than bad on the ") and "jackknife over 350 sentence groups" in lines[0]
    assert lines[1].startswith(f"{second} is better than bad on the ")
    comparison = compare([str(good), str(bad), str(twin)], ["sts12"], settings=CompareSettings(n_boot=50))  # every pair, as the report
    verdicts = comparison.verdicts()
    assert len(verdicts) == 3 and verdicts[0] == lines[0].replace("over 2 claims", "over 3 claims")
    report = write_report([good, bad, twin], tmp_path / "r.md", compare=True).read_text()
    opening = report.split("\n\n")[1:4]  # after the title: the verdicts, before anything else
    assert opening == [f"**{escape(line)}.**" for line in verdicts]
    assert f"3 run(s): {first}, bad, {second}." in report
