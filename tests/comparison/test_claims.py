"""Claim-level comparison in benchbox.comparison.compare / ``benchbox compare``: pooled effects, seeds, families,
baselines and protocol mismatches, on the hand-made runs of test_compare."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st
from statsmodels.stats.meta_analysis import combine_effects
from typer.testing import CliRunner

from benchbox.cli import app
from benchbox.comparison.compare import compare
from benchbox.comparison.output import claims_csv_path
from benchbox.comparison.sources import resolve_sources
from benchbox.errors import BenchboxError
from benchbox.stats import adjust_pvalues
from benchbox.comparison.settings import CompareSettings
from tests.comparison.test_compare import make_run


@pytest.fixture
def three_runs(tmp_path):
    return (make_run(tmp_path, "good", 0.5, 0, 0.85), make_run(tmp_path, "mid", 1.0, 3, 0.8),
            make_run(tmp_path, "bad", 2.0, 6, 0.70))


@pytest.mark.slow
def test_family_all_corrects_over_every_pair_and_pair_within_each(three_runs):
    specs = list(map(str, three_runs))
    every = compare(specs, ["sts12", "mr"], settings=CompareSettings(n_boot=50)).table
    assert np.allclose(every["p_holm"], adjust_pvalues(every["p"], "holm"), equal_nan=True)
    per_pair = compare(specs, ["sts12", "mr"], settings=CompareSettings(n_boot=50, family="pair")).table
    for _, rows in per_pair.groupby(["model_a", "model_b"]):
        assert np.allclose(rows["p_holm"], adjust_pvalues(rows["p"], "holm"), equal_nan=True)
    assert (every["p_holm"] >= per_pair["p_holm"] - 1e-12).all() and (every["p_holm"] > per_pair["p_holm"]).any()
    with pytest.raises(BenchboxError, match="all .*pair"):
        compare(specs[:2], ["sts12"], settings=CompareSettings(family="rows"))


def test_baseline_compares_every_model_with_it_only(three_runs):
    good, mid, bad = three_runs
    comparison = compare([str(good), str(mid), str(bad)], ["sts12"], settings=CompareSettings(n_boot=50), baseline=str(bad))
    pairs = comparison.pairs()
    assert len(pairs) == 2 and {b for _, b in pairs} == {comparison.models[2]}
    assert {a for a, _ in pairs} == set(comparison.models[:2])
    assert set(comparison.claims["model_b"]) == {comparison.models[2]}
    assert (comparison.claims["verdict"] == "better").all()  # both less noisy than the baseline
    by_name = compare([str(good), str(mid), str(bad)], ["sts12"], settings=CompareSettings(n_boot=50), baseline="bad")
    assert by_name.pairs() == pairs
    with pytest.raises(BenchboxError, match="names none"):
        compare([str(good), str(bad)], ["sts12"], baseline="glove-bow")


def test_protocol_mismatch_is_refused_or_recorded(tmp_path):
    senteval = make_run(tmp_path, "a", 1.0, 0, 0.8, tasks={"sts12": {"protocol": {"text": "senteval", "seed": 1}}})
    raw = make_run(tmp_path, "b", 1.2, 0, 0.8, tasks={"sts12": {"protocol": {"text": "raw", "seed": 2}}})
    with pytest.raises(BenchboxError, match=r"sts12: .* differ in text \('senteval' vs 'raw'\).*--allow-protocol-mismatch"):
        compare([str(senteval), str(raw)], ["sts12"], settings=CompareSettings(n_boot=50))
    comparison = compare([str(senteval), str(raw)], ["sts12"], settings=CompareSettings(n_boot=50), allow_protocol_mismatch=True)
    assert len(comparison.protocol_mismatches) == 1 and "text" in comparison.protocol_mismatches[0]
    same = make_run(tmp_path, "c", 1.2, 0, 0.8, tasks={"sts12": {"protocol": {"text": "senteval", "seed": 9}}})
    assert compare([str(senteval), str(same)], ["sts12"], settings=CompareSettings(n_boot=50)).protocol_mismatches == []  # seeds are no protocol


def test_claim_of_three_seeds_against_a_deterministic_baseline(tmp_path):
    seeds = [make_run(tmp_path, "char-gru", 1.0, 0, 0.8, seed=s, config={"units": 512, "seed": s}) for s in (1, 2, 3)]
    glove = make_run(tmp_path, "glove-bow", 1.5, 2, 0.75)
    comparison = compare([*map(str, seeds), str(glove)], ["sts12", "mr"], settings=CompareSettings(n_boot=50), baseline="glove-bow")
    claims = comparison.claims
    assert list(claims["kind"]) == ["correlation"]  # mr alone: one row, no claim
    claim = claims.iloc[0]
    assert claim["model_a"] == "char-gru (3 seeds)" and claim["seeds_a"] == 3 and claim["seeds_b"] == 1
    # by hand: per row the mean over the three run pairs of the Fisher-z difference and of its variance
    rows = comparison.table[comparison.table["metric"] == "pearson"]
    per_row = rows.groupby("subset").agg(effect=("effect", "mean"), var=("effect_var", "mean"))
    assert np.allclose(rows.groupby("subset")["effect"].mean(),
                       rows.groupby("subset").apply(lambda r: (np.arctanh(r["value_a"]) - np.arctanh(r["value_b"])).mean()))
    reference = combine_effects(per_row["effect"].to_numpy(), per_row["var"].to_numpy(), method_re="dl")
    tau2 = max(reference.tau2, 0.0)
    weights = 1 / (per_row["var"] + tau2)
    # seed t-test (descriptive): one-sample t of the three per-seed weighted scores against GloVe's
    scores = rows.pivot_table(index="model_a", columns="subset", values="value_a").apply(np.arctanh)
    per_seed = scores[per_row.index] @ (weights / weights.sum())
    glove_score = (np.arctanh(rows.groupby("subset")["value_b"].first()[per_row.index]) * weights).sum() / weights.sum()
    reference_t = st.ttest_1samp(per_seed, glove_score)
    assert claim["seed_t"] == pytest.approx(reference_t.statistic) and claim["p_seed"] == pytest.approx(reference_t.pvalue)
    # the claim test by brute force: Δ = Σ w_r (mean over seeds of atanh r_A − atanh r_B), w the random-effects
    # weights held fixed (so Δ is the pooled estimate); every pair its
    # own sentence group (distinct sentences), so V_items is the delete-one jackknife over every item of both rows
    items = {s.label: s.items("sts12") for s in resolve_sources([*map(str, seeds), str(glove)], ["sts12"])}
    a_labels, b_label = [lab for lab in items if lab != comparison.models[3]], comparison.models[3]
    subsets = list(per_row.index)
    parts = {lab: [frame[frame["subset"] == sub].sort_values("item") for sub in subsets] for lab, frame in items.items()}
    n = np.array([len(part) for part in parts[b_label]])
    w = (weights[subsets] / weights.sum()).to_numpy()

    def pooled(drop=None):  # drop: (row, position) of the item left out
        def z(lab, r):
            part = parts[lab][r]
            keep = np.ones(len(part), bool)
            if drop is not None and drop[0] == r:
                keep[drop[1]] = False
            return np.arctanh(np.corrcoef(part["gold"].to_numpy()[keep], part["score"].to_numpy()[keep])[0, 1])
        return [sum(w[r] * z(lab, r) for r in range(len(n))) for lab in [*a_labels, b_label]]

    full = pooled()
    estimate = np.mean(full[:3]) - full[3]
    assert claim["estimate"] == pytest.approx(estimate) == (weights * per_row["effect"]).sum() / weights.sum()
    left_out = np.array([np.mean(v[:3]) - v[3] for v in (pooled((r, i)) for r in range(len(n)) for i in range(n[r]))])
    g = len(left_out)
    v_items = (g - 1) / g * ((left_out - left_out.mean()) ** 2).sum()
    v_seeds = np.var(full[:3], ddof=1) / 3
    df = (v_items + v_seeds) ** 2 / (v_items**2 / (g - 1) + v_seeds**2 / 2)
    t = estimate / np.sqrt(v_items + v_seeds)
    assert claim["variance"] == "jackknife + seeds" and claim["groups"] == g
    assert claim["var_items"] == pytest.approx(v_items) and claim["var_seeds"] == pytest.approx(v_seeds)
    assert claim["df"] == pytest.approx(df) and claim["se"] == pytest.approx(np.sqrt(v_items + v_seeds))
    assert claim["p_claim"] == pytest.approx(2 * st.t.sf(abs(t), df))
    assert claim["aso_epsilon"] < 0.5 and claim["verdict"] == "better"
    headline = comparison.headlines()[0]
    assert headline.startswith(f"char-gru (3 seeds) vs {comparison.models[3]} on 2 correlation rows: pooled Δz = +")
    assert "seeds 3 vs 1 (descriptive): t(2) = " in headline and "jackknife over 350 sentence groups" in headline and "almost stochastically dominant" in headline
    assert f"better on 2, worse on 0 of 2 rows after holm over {int(comparison.table['p'].notna().sum())} tests" in headline


def test_seeds_of_one_configuration_are_not_a_claim(tmp_path):
    seeds = [make_run(tmp_path, "char-gru", 1.0, 0, 0.8, seed=s, config={"seed": s}) for s in (1, 2)]
    comparison = compare(list(map(str, seeds)), ["sts12"], settings=CompareSettings(n_boot=50))
    assert len(comparison.table) > 0 and comparison.claims.empty and comparison.headlines() == []


def test_cli_headlines_json_and_claims_csv(three_runs, tmp_path):
    good, _, bad = three_runs
    result = CliRunner().invoke(app, ["compare", str(good), str(bad), "--task", "sts12", "--task", "mr",
                                      "--bootstrap", "50", "--baseline", "bad", "--pooling", "pm",
                                      "--csv", str(tmp_path / "c.csv"), "--json", str(tmp_path / "c.json"), "-q"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    payload = json.loads((tmp_path / "c.json").read_text())
    claims = len(payload["claims"])
    # the verdicts in words first (one per claim), then the statistics
    assert lines[:claims] == payload["verdicts"] and lines[0].startswith("good is better than bad on the ")
    assert lines[claims].startswith("good vs bad") and "pooled Δz = +" in lines[claims]
    assert payload["family"] == "all" and payload["headlines"] == lines[claims:2 * claims]
    assert payload["claims"][0]["pooling"] == "pm" and payload["claims"][0]["rows"] == 2
    claims = pd.read_csv(claims_csv_path(tmp_path / "c.csv"))
    assert claims_csv_path(tmp_path / "c.csv").name == "c.claims.csv" and len(claims) == 1
    bad_option = subprocess.run([sys.executable, "-m", "benchbox", "compare", str(good), str(bad), "--pooling", "reml"],
                                capture_output=True, text=True)
    assert bad_option.returncode == 2 and "dl (DerSimonian-Laird) or pm" in bad_option.stderr


def test_report_has_claims_with_forest_plot_and_seed_distribution(tmp_path):
    from benchbox.reports import write_report

    seeds = [make_run(tmp_path, "char-gru", 1.0, 0, 0.8, seed=s, config={"units": 512, "seed": s}) for s in (1, 2, 3)]
    glove = make_run(tmp_path, "glove-bow", 1.5, 2, 0.75)
    out = write_report([*seeds, glove], tmp_path / "r.md", compare=True)
    text = out.read_text()
    claims = text[text.index("## Claims"):]
    assert "char-gru (3 seeds) vs glove-bow on 2 correlation rows: pooled Δz = +" in claims
    forest = (tmp_path / "r_figures" / "forest-char-gru-3-seeds-glove-bow-correlation.svg").read_text()
    assert "sts12 MSRpar" in forest and "sts12 MSRvid" in forest and "pooled (DL)" in forest
    assert (tmp_path / "r_figures" / "seeds-char-gru-3-seeds-glove-bow-correlation.svg").is_file()


def test_declared_seeds_group_runs_whose_configurations_differ(tmp_path):
    """Trained models' eval runs record their training folder: declared with ``seeds`` they make one model."""
    runs = [make_run(tmp_path, "char-gru", 1.0, 0, 0.8, seed=s, config={"source": f"train-{s}"}) for s in (1, 2, 3)]
    glove = make_run(tmp_path, "glove-bow", 1.5, 2, 0.75)
    specs = list(map(str, runs))
    undeclared = compare([*specs, str(glove)], ["sts12"], settings=CompareSettings(n_boot=50), baseline="glove-bow")
    assert len(undeclared.claims) == 3 and set(undeclared.claims["seeds_a"]) == {1}
    declared = compare([*specs, str(glove)], ["sts12"], settings=CompareSettings(n_boot=50), baseline="glove-bow", seeds={"char-gru": specs})
    assert list(declared.claims["model_a"]) == ["char-gru"] and declared.claims["seeds_a"].iloc[0] == 3
    with pytest.raises(BenchboxError, match="not among the compared models"):
        compare([*specs[:2], str(glove)], ["sts12"], settings=CompareSettings(n_boot=50), seeds={"char-gru": specs})


def test_a_paper_pair_says_why_it_has_no_claim(tmp_path):
    """Rows against published numbers are approximate (no per-item scores, no effect to pool): the pair gets no
    claim, and a note saying why, in the comparison, compare's output right after the headlines, its JSON and
    the report's Claims section."""
    from benchbox.data import comparators
    from benchbox.reports import write_report
    from benchbox.storage.runs import write_run

    paper = comparators.paper_result("paper:merkx2019/char-gru-coco").metrics
    rows = paper[paper["task"] == "sts12"].assign(value=lambda f: f["value"] + 0.15)
    run = write_run(tmp_path / "runs", "mine", {"kind": "eval", "encoder": {"name": "mine", "fingerprint": "abc"}},
                    rows, {})
    comparison = compare([f"mine={run}", "paper:merkx2019/char-gru-coco"])
    assert comparison.claims.empty and comparison.headlines() == []
    note = ("mine vs paper:merkx2019/char-gru-coco: no claim on the correlation rows: published numbers have no "
            "per-item scores, so the paired rows' covariance is unknown (only approximate worst-case row tests, "
            "5 rows)")
    assert comparison.claim_notes == [note]
    result = CliRunner().invoke(app, ["compare", f"mine={run}", "paper:merkx2019/char-gru-coco",
                                      "--json", str(tmp_path / "c.json"), "-q"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == note
    assert json.loads((tmp_path / "c.json").read_text())["claim_notes"] == [note]
    text = write_report([run], tmp_path / "r.md", compare=True,
                        references=["paper:merkx2019/char-gru-coco"]).read_text()
    claims = text[text.index("## Claims"):text.index("\n## ", text.index("## Claims") + 1)]
    assert "no claim on the correlation rows: published numbers have no per-item scores" in claims


def test_single_run_claim_names_what_it_cannot_assess_and_gives_delta_r(three_runs):
    """Issue #31: a claim between single runs said nothing of training variance, and gave Δz alone."""
    good, _, bad = three_runs
    comparison = compare([str(good), str(bad)], ["sts12"], settings=CompareSettings(n_boot=50))
    claim = comparison.claims.iloc[0]
    rows = comparison.table[comparison.table["summary"].astype(bool) & (comparison.table["metric"] == "pearson")]
    assert claim["mean_diff"] == pytest.approx(rows["diff"].mean())  # Δr on the correlation scale, per row averaged
    line = comparison.headlines()[0]
    assert f"(mean Δr = {claim['mean_diff']:+.3f})" in line
    assert "one run per model: training variance not assessed" in line


def test_aso_is_descriptive_beside_a_claim_that_is_not_significant(tmp_path):
    """Issue #31: "almost stochastically dominant" appeared in null replicates next to "no significant
    difference". Beside a non-significant claim ε is a description only."""
    seeds = [make_run(tmp_path, "char-gru", 1.0, 0, 0.8, seed=s, config={"units": 512, "seed": s}) for s in (1, 2, 3)]
    glove = make_run(tmp_path, "glove-bow", 1.0, 0, 0.8, seed=7)
    comparison = compare([*map(str, seeds), str(glove)], ["sts12"], settings=CompareSettings(n_boot=50), baseline="glove-bow")
    claim = comparison.claims.iloc[0]
    assert claim["verdict"] == "no significant difference"
    line = comparison.headlines()[0]
    assert f"ASO ε = {claim['aso_epsilon']:.2f} (descriptive: the claim is not significant)" in line
    assert "dominant" not in line
    assert f"one run of {claim['model_b']}: its training variance not assessed" in line


def test_a_claim_over_rows_without_sentences_has_a_group_per_item(tmp_path):
    """A task whose items are not sentence pairs (no sentence columns: e.g. a plugin scoring other objects) still
    gets its claim: every item is its own group. compare used to stop with numpy's "zero-size array to reduction
    operation maximum" (no groups at all), and with it the leaderboard's significance groups."""
    from benchbox.storage.runs import write_run

    rng = np.random.default_rng(5)
    gold = {s: rng.standard_normal(60) for s in ("s0", "s1")}
    paths = []
    for name, noise in (("sharp", 0.5), ("blurred", 1.5)):
        frames, metrics = [], []
        for subset, g in gold.items():
            score = g + noise * rng.standard_normal(60)
            frames.append(pd.DataFrame({"subset": subset, "item": np.arange(60), "gold": g, "score": score}))
            metrics.append({"task": "objects", "subset": subset, "metric": "pearson",
                            "value": float(np.corrcoef(g, score)[0, 1]), "n": 60})
        manifest = {"kind": "eval", "encoder": {"name": name, "fingerprint": f"{name}-fp", "config": {}, "dim": 4},
                    "options": {"seed": 1111}, "tasks": {}}
        paths.append(str(write_run(tmp_path, name, manifest, pd.DataFrame(metrics),
                                   {"objects": pd.concat(frames, ignore_index=True)})))
    claims = compare(paths, runs_dir=tmp_path).claims
    claim = claims[claims["kind"] == "correlation"].iloc[0]
    assert claim["groups"] == 120 and claim["variance"] == "jackknife" and claim["p_claim"] < 0.05


def _runs_equal_on_one_subset(tmp_path):
    """Two models scoring the items of subset s0 identically and s1 differently (one sharp, one blurred): the
    glove-bow lowercase on/off case of issue 50 (identical on STS-B, different on SICK-R)."""
    from benchbox.storage.runs import write_run

    rng = np.random.default_rng(4)  # s0's variance rounds to −5.8e-18 here: the old rule dropped the row
    gold = {s: rng.standard_normal(80) for s in ("s0", "s1")}
    shared = gold["s0"] + 0.8 * rng.standard_normal(80)
    paths, effects = [], {}
    for name, noise in (("sharp", 0.4), ("blurred", 1.6)):
        frames, metrics = [], []
        for subset, g in gold.items():
            score = shared if subset == "s0" else g + noise * rng.standard_normal(80)
            frames.append(pd.DataFrame({"subset": subset, "item": np.arange(80), "gold": g, "score": score}))
            r = float(np.corrcoef(g, score)[0, 1])
            effects[name, subset] = np.arctanh(r)
            metrics.append({"task": "objects", "subset": subset, "metric": "pearson", "value": r, "n": 80})
        manifest = {"kind": "eval", "encoder": {"name": name, "fingerprint": f"{name}-fp", "config": {}, "dim": 4},
                    "options": {"seed": 1111}, "tasks": {}}
        paths.append(str(write_run(tmp_path / "runs", name, manifest, pd.DataFrame(metrics),
                                   {"objects": pd.concat(frames, ignore_index=True)})))
    return paths, effects


def test_a_row_with_identical_scores_joins_the_claim_with_zero_effect(tmp_path):
    """Issue 50: a row whose two models score every item identically (Δz = 0, variance 0) used to drop out of the
    claim, leaving one row and no claim. It now joins with zero effect and the weight of the most precise measured
    row (benchbox.stats.pooling.exact_rows_weighed): with two rows the weights are equal, so the claim's estimate
    is half the other row's Δz (to rounding: a weighted mean of two doubles)."""
    paths, effects = _runs_equal_on_one_subset(tmp_path)
    result = compare(paths, runs_dir=tmp_path)
    table = result.table.set_index("subset")
    assert table.loc["s0", "effect"] == 0 and abs(table.loc["s0", "effect_var"]) < 1e-15  # (2 − 2c)/(n − 3), c = 1
    claims = result.claims[result.claims["kind"] == "correlation"]
    assert len(claims) == 1
    claim = claims.iloc[0]
    delta = effects["sharp", "s1"] - effects["blurred", "s1"]
    sign = 1 if claim["model_a"] == "sharp" else -1
    assert claim["rows"] == 2 and claim["estimate"] == pytest.approx(sign * delta / 2, rel=1e-12)
    assert claim["p_claim"] < 0.05 and claim["verdict"] == ("better" if sign == 1 else "worse")


def test_identical_scores_on_one_row_still_place_the_worse_model_below_the_best(tmp_path, capsys):
    """Issue 50: the leaderboard called the worse model "no claim" (the claim had vanished with the zero-variance
    row); it now says what the claim says."""
    from tests.helpers import cli

    paths, _ = _runs_equal_on_one_subset(tmp_path)
    code, out, err = cli(capsys, "leaderboard", str(tmp_path / "runs"), "--resamples", "60", "--group", "all",
                         "--csv", "-")
    assert code == 0, err
    board = pd.read_csv(__import__("io").StringIO(out)).set_index("label")
    assert board.loc["sharp", "group"] == "best" and board.loc["blurred", "group"] == "below the best"


def test_one_reason_for_many_pairs_is_one_line_in_the_terminal():
    """Issue 50: `compare RUN mteb:RESULTS` printed the same "no claim" reason once per published model (253 lines
    over the public repository). More than three pairs with one reason are one line counting them; fewer, and
    other notes, stay as they are, in their order."""
    from benchbox.comparison.claims import summarised_notes

    reason = "no claim on the correlation rows: published numbers have no per-item scores"
    many = [f"mteb:org/m{i} vs run: {reason}" for i in range(5)]
    other = "run vs base: no claim on the accuracy rows: there is one (mr test accuracy)"
    few = [f"paper:p{i} vs run: other reason" for i in range(2)]
    assert summarised_notes([other, *many, *few, "untested: a kind not installed"]) == [
        other, f"5 pairs (e.g. mteb:org/m0 vs run): {reason}", *few, "untested: a kind not installed"]
    assert summarised_notes(many[:3]) == many[:3]
