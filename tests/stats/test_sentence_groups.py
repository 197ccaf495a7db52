"""Correlation rows whose pairs share sentences: sentence groups, the delete-a-group jackknife in compare, and
row clusters computed from the items (benchbox.stats, benchbox.comparison.compare, benchbox.stats.pooling)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st
from typer.testing import CliRunner

from benchbox import stats
from benchbox.cli import app
from benchbox.comparison.compare import compare
from benchbox.task_contract.paired_tests import JACKKNIFE
from benchbox.data.root import DataRoot
from benchbox.errors import BenchboxError
from benchbox.stats.pooling import sentence_clusters
from benchbox.storage.runs import write_run
from benchbox.tasks.senteval_data import load_stsb
from benchbox.comparison.settings import CompareSettings
from tests.comparison.test_compare import _metric


# --- the grouped jackknife and sentence groups ------------------------------------------------------------------


def test_grouped_jackknife_by_hand():
    gold = np.array([0.5, 1.0, 2.5, 3.0, 4.5, 2.0])
    a = np.array([0.4, 1.6, 2.0, 3.5, 4.0, 1.5])
    b = np.array([1.0, 0.5, 3.0, 2.0, 4.8, 3.1])
    groups = np.array(["x", "x", "y", "y", "z", "z"])
    result = stats.grouped_jackknife_test(gold, a, b, groups)

    def dz(keep):
        return (np.arctanh(np.corrcoef(gold[keep], a[keep])[0, 1])
                - np.arctanh(np.corrcoef(gold[keep], b[keep])[0, 1]))

    def dr(keep):
        return np.corrcoef(gold[keep], a[keep])[0, 1] - np.corrcoef(gold[keep], b[keep])[0, 1]

    everything = np.ones(6, bool)
    left_out = [groups != g for g in ("x", "y", "z")]
    theta_z, theta_r = np.array([dz(k) for k in left_out]), np.array([dr(k) for k in left_out])
    var_z = 2 / 3 * np.sum((theta_z - theta_z.mean()) ** 2)
    var_r = 2 / 3 * np.sum((theta_r - theta_r.mean()) ** 2)
    t = dz(everything) / np.sqrt(var_z)
    assert result.groups == 3 and result.df == 2
    assert result.diff_z == pytest.approx(dz(everything), abs=1e-10)
    assert result.var_z == pytest.approx(var_z, abs=1e-10)
    assert result.t == pytest.approx(t, abs=1e-10)
    assert result.p == pytest.approx(2 * st.t.sf(abs(t), 2), abs=1e-10)
    half = st.t.ppf(0.975, 2) * np.sqrt(var_r)
    assert result.diff_r == pytest.approx(dr(everything), abs=1e-10)
    assert result.ci_low == pytest.approx(dr(everything) - half, abs=1e-10)
    assert result.ci_high == pytest.approx(dr(everything) + half, abs=1e-10)


def test_jackknife_of_singletons_is_the_delete_one_jackknife_and_one_group_is_no_test():
    rng = np.random.default_rng(3)
    gold = rng.normal(size=30)
    a, b = gold + rng.normal(size=30), gold + 1.5 * rng.normal(size=30)
    result = stats.grouped_jackknife_test(gold, a, b, np.arange(30))
    theta = np.array([np.arctanh(np.corrcoef(np.delete(gold, i), np.delete(a, i))[0, 1])
                      - np.arctanh(np.corrcoef(np.delete(gold, i), np.delete(b, i))[0, 1]) for i in range(30)])
    assert result.var_z == pytest.approx(29 / 30 * np.sum((theta - theta.mean()) ** 2), rel=1e-9)
    one = stats.grouped_jackknife_test(gold, a, b, np.zeros(30))
    assert one.groups == 1 and np.isnan(one.p) and np.isnan(one.var_z)
    with pytest.raises(BenchboxError, match="one length"):
        stats.grouped_jackknife_test(gold, a, b, np.arange(29))


def test_sentence_groups_are_connected_components_of_shared_sentences():
    s1 = ["A man  runs.", "a dog barks", "The sun", "x", None, ""]
    s2 = ["a dog barks", "Cats sleep", "cats SLEEP", "y", "z", ""]
    # 0–1 share "a dog barks", 1–2 "cats sleep" (case, spaces), 3 alone; missing and empty sentences link nothing
    assert stats.sentence_groups(s1, s2).tolist() == [0, 0, 0, 1, 2, 3]
    assert stats.sentence_groups(["b", "a", "b"]).tolist() == [0, 1, 0]


# --- calibration: a subset with heavy sentence reuse ------------------------------------------------------------


def _reuse_structure(n_groups: int = 40, size: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of ``size`` sentences, in ``n_groups`` disjoint sets: 400 pairs, each sentence in 4 pairs."""
    first, second = [], []
    for g in range(n_groups):
        for i, j in itertools.combinations(range(size), 2):
            first.append(g * size + i)
            second.append(g * size + j)
    return np.array(first), np.array(second)


def test_under_sentence_reuse_williams_is_liberal_and_the_jackknife_is_not():
    """Two models of exactly equal population correlation with gold: their errors are tied to the sentences (each
    sentence in 4 pairs), as an encoder's are. Williams' t, taking the 400 pairs as independent, rejects about
    16% at 5% (17–18% over 4000 replicates); the jackknife over the 40 sentence groups about 5% (4.4%)."""
    s1, s2 = _reuse_structure()
    groups = stats.sentence_groups([f"s{i}" for i in s1], [f"s{j}" for j in s2])
    assert groups.max() + 1 == 40
    rng = np.random.default_rng(7)
    n_sentences, reps = s2.max() + 1, 400
    williams = jackknife = 0
    for _ in range(reps):
        u = rng.standard_normal(n_sentences)
        gold = u[s1] + u[s2] + 0.5 * rng.standard_normal(len(s1))
        scores = []
        for _model in range(2):
            error = rng.standard_normal(n_sentences)
            scores.append(gold + error[s1] + error[s2] + 0.5 * rng.standard_normal(len(s1)))
        a, b = scores
        r_ga, r_gb, r_ab = np.corrcoef([gold, a, b])[[0, 0, 1], [1, 2, 2]]
        williams += stats.williams_test(r_ga, r_gb, r_ab, len(gold))[1] < 0.05
        jackknife += stats.grouped_jackknife_test(gold, a, b, groups).p < 0.05
    assert williams / reps > 0.10
    assert 0.03 <= jackknife / reps <= 0.08


# --- compare ------------------------------------------------------------------------------------------------------


def _reuse_run(tmp_path, name: str, noise: float, *, seed: int, stsb: pd.DataFrame | None = None):
    """A run of sts12 with MSRpar reusing sentences (each in 4 pairs: 40 groups) and MSRvid of distinct
    sentences; with ``stsb``, also stsb-cosine on those pairs, and MSRpar's first sentence is one of STS-B's."""
    s1, s2 = _reuse_structure()
    data = np.random.default_rng(0)
    u = data.standard_normal(s2.max() + 1)
    gold = {"MSRpar": u[s1] + u[s2] + 3.0, "MSRvid": data.uniform(0, 5, 150)}
    text = {"MSRpar": ([f"sentence {i}" for i in s1], [f"sentence {j}" for j in s2]),
            "MSRvid": ([f"vid a{i}" for i in range(150)], [f"vid b{i}" for i in range(150)])}
    if stsb is not None:  # sentence 0 becomes one of STS-B's, in other case and spacing
        shared = "  " + stsb["sentence1"].iloc[0].upper() + " "
        text["MSRpar"] = ([shared if t == "sentence 0" else t for t in text["MSRpar"][0]], text["MSRpar"][1])
    rng = np.random.default_rng(seed)
    metrics, items, tables = [], [], {}
    for subset, g in gold.items():
        if subset == "MSRpar":
            error = rng.standard_normal(s2.max() + 1)
            score = g + noise * (error[s1] + error[s2]) + 0.3 * rng.standard_normal(len(g))
        else:
            score = g + noise * rng.standard_normal(len(g))
        r, rho = st.pearsonr(score, g)[0], st.spearmanr(score, g)[0]
        metrics += [_metric("sts12", subset, "pearson", r, *stats.fisher_ci(r, len(g)), len(g)),
                    _metric("sts12", subset, "spearman", rho, *stats.fisher_ci(rho, len(g), spearman=True), len(g))]
        items.append(pd.DataFrame({"subset": subset, "item": np.arange(len(g)), "sentence1": text[subset][0],
                                   "sentence2": text[subset][1], "gold": g, "score": score}))
    tables["sts12"] = pd.concat(items, ignore_index=True)
    if stsb is not None:
        g = stsb["gold"].to_numpy(float)
        score = g + noise * rng.standard_normal(len(g))
        r, rho = st.pearsonr(score, g)[0], st.spearmanr(score, g)[0]
        metrics += [_metric("stsb-cosine", "test", "pearson", r, *stats.fisher_ci(r, len(g)), len(g)),
                    _metric("stsb-cosine", "test", "spearman", rho, *stats.fisher_ci(rho, len(g), spearman=True),
                            len(g))]
        tables["stsb-cosine"] = stsb.assign(score=score)
    manifest = {"kind": "eval", "encoder": {"name": name, "fingerprint": f"{name}-fp", "config": {}, "dim": 4},
                "options": {"seed": 1111}, "tasks": {}}
    return write_run(tmp_path / "runs", name, manifest, pd.DataFrame(metrics), tables)


def _rows(table: pd.DataFrame) -> pd.DataFrame:
    return table.set_index(["task", "subset", "metric"])


def test_compare_tests_subsets_with_shared_sentences_by_the_jackknife(tmp_path):
    a = _reuse_run(tmp_path, "a", 1.0, seed=1)
    b = _reuse_run(tmp_path, "b", 1.3, seed=2)
    comparison = compare([str(a), str(b)], ["sts12"], settings=CompareSettings(n_boot=50))
    assert comparison.settings.item_dependence == "sentence-groups"
    rows = _rows(comparison.table)
    items_a, items_b = pd.read_csv(a / "items" / "sts12.csv"), pd.read_csv(b / "items" / "sts12.csv")
    part_a, part_b = items_a[items_a["subset"] == "MSRpar"], items_b[items_b["subset"] == "MSRpar"]
    groups = stats.sentence_groups(part_a["sentence1"], part_a["sentence2"])
    expected = stats.grouped_jackknife_test(part_a["gold"], part_a["score"], part_b["score"], groups)
    row = rows.loc[("sts12", "MSRpar", "pearson")]
    assert row["test"] == JACKKNIFE and expected.groups == 40
    assert row["statistic"] == pytest.approx(expected.t) and row["p"] == pytest.approx(expected.p)
    assert (row["diff_ci_low"], row["diff_ci_high"]) == pytest.approx(expected.ci)
    assert row["effect"] == pytest.approx(expected.diff_z) and row["effect_var"] == pytest.approx(expected.var_z)
    # Spearman: ranked once over the subset, then the same jackknife on the ranks
    ranked = stats.grouped_jackknife_test(*(st.rankdata(v) for v in (part_a["gold"], part_a["score"], part_b["score"])),
                                          groups)
    assert rows.loc[("sts12", "MSRpar", "spearman"), "test"] == JACKKNIFE
    assert rows.loc[("sts12", "MSRpar", "spearman"), "p"] == pytest.approx(ranked.p)
    # independent pairs (distinct sentences): Williams, as before
    assert rows.loc[("sts12", "MSRvid", "pearson"), "test"] == "williams"
    assert rows.loc[("sts12", "MSRvid", "spearman"), "test"] == "williams"


@pytest.mark.slow
def test_item_dependence_independent_reproduces_the_williams_rows(tmp_path):
    a = _reuse_run(tmp_path, "a", 1.0, seed=1)
    b = _reuse_run(tmp_path, "b", 1.3, seed=2)
    independent = compare([str(a), str(b)], ["sts12"], settings=CompareSettings(n_boot=50, item_dependence="independent"))
    assert independent.settings.item_dependence == "independent"
    rows = _rows(independent.table)
    items_a, items_b = pd.read_csv(a / "items" / "sts12.csv"), pd.read_csv(b / "items" / "sts12.csv")
    for subset in ("MSRpar", "MSRvid"):
        pa, pb = items_a[items_a["subset"] == subset], items_b[items_b["subset"] == subset]
        r_ga, r_gb, r_ab = (np.corrcoef(x, y)[0, 1] for x, y in ((pa["gold"], pa["score"]), (pa["gold"], pb["score"]),
                                                                 (pa["score"], pb["score"])))
        n = len(pa)
        row = rows.loc[("sts12", subset, "pearson")]
        t, p = stats.williams_test(r_ga, r_gb, r_ab, n)
        assert row["test"] == "williams" and row["statistic"] == pytest.approx(t, rel=1e-12)
        assert row["p"] == pytest.approx(p, rel=1e-12)
        assert (row["diff_ci_low"], row["diff_ci_high"]) == pytest.approx(stats.zou_ci(r_ga, r_gb, r_ab, n), rel=1e-12)
        assert (row["effect"], row["effect_var"]) == pytest.approx(stats.fisher_z_difference(r_ga, r_gb, r_ab, n),
                                                                   rel=1e-12)
    default = _rows(compare([str(a), str(b)], ["sts12"], settings=CompareSettings(n_boot=50)).table)
    unadjusted = ["test", "statistic", "p", "diff", "diff_ci_low", "diff_ci_high", "effect", "effect_var", "cluster"]
    same = default.loc[("sts12", "MSRvid", "pearson"), unadjusted]  # independent pairs: the same row either way
    assert same.equals(rows.loc[("sts12", "MSRvid", "pearson"), unadjusted])
    # the CLI records the choice; a bad value is refused before anything runs
    out = tmp_path / "c.json"
    result = CliRunner().invoke(app, ["compare", str(a), str(b), "--task", "sts12", "--test-resamples", "50",
                                      "--item-dependence", "independent", "--json", str(out), "-q"])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    assert payload["item_dependence"] == "independent"
    assert {r["test"] for r in payload["comparisons"] if r["subset"] != "all"} == {"williams"}
    with pytest.raises(BenchboxError, match="sentence-groups .*independent"):
        compare([str(a), str(b)], ["sts12"], settings=CompareSettings(item_dependence="clustered"))


@pytest.mark.slow
def test_the_report_says_how_correlation_rows_were_tested(tmp_path):
    import benchbox
    from benchbox.reports import significance

    if Path(significance.__file__).resolve().parents[1] != Path(benchbox.__file__).resolve().parents[1]:
        pytest.skip("benchbox.reports is imported from another checkout (an editable install of it)")
    a = _reuse_run(tmp_path, "a", 1.0, seed=1)
    b = _reuse_run(tmp_path, "b", 1.3, seed=2)
    grouped = compare([str(a), str(b)], ["sts12"], settings=CompareSettings(n_boot=50))
    independent = compare([str(a), str(b)], ["sts12"], settings=CompareSettings(n_boot=50, item_dependence="independent"))
    text = significance.significance_blocks(grouped)[0].text
    assert "leaves out one group of pairs linked by shared sentences" in text
    assert "as if its sentence pairs were independent" in significance.significance_blocks(independent)[0].text


def test_clusters_come_from_shared_sentences_on_the_embedded_stsb(tmp_path):
    """STS-B test (embedded copy) and an sts12 MSRpar that holds one of its sentences (other case and spacing):
    one cluster; MSRvid shares nothing with either, so it stays apart (the old hand list merged every STS-B
    source subset, MSRvid included, whether or not the compared items shared anything)."""
    pairs = load_stsb(DataRoot(None), "test")
    stsb = pd.DataFrame({"subset": "test", "item": np.arange(len(pairs.scores)), "sentence1": pairs.sentences1,
                         "sentence2": pairs.sentences2, "gold": np.asarray(pairs.scores, float)})
    a = _reuse_run(tmp_path, "a", 1.0, seed=1, stsb=stsb)
    b = _reuse_run(tmp_path, "b", 1.3, seed=2, stsb=stsb)
    comparison = compare([str(a), str(b)], ["sts12", "stsb-cosine"], settings=CompareSettings(n_boot=50))
    clusters = _rows(comparison.table)["cluster"]
    assert clusters[("sts12", "MSRpar", "pearson")] == clusters[("stsb-cosine", "test", "pearson")] == "sts12/MSRpar+1"
    assert clusters[("sts12", "MSRpar", "spearman")] == "sts12/MSRpar+1"
    assert clusters[("sts12", "MSRvid", "pearson")] == "sts12/MSRvid"
    # STS-B test reuses sentences within itself (1379 pairs in 1178 groups): the jackknife
    assert _rows(comparison.table).loc[("stsb-cosine", "test", "pearson"), "test"] == JACKKNIFE
    # the claim pools the clusters of the table as they are: 3 rows, 2 clusters
    claim = comparison.claims.iloc[0]
    assert claim["rows"] == 3 and claim["clusters"] == 2 and bool(claim["robust"])
    assert sorted(comparison.claim_rows["cluster"]) == ["sts12/MSRpar+1", "sts12/MSRpar+1", "sts12/MSRvid"]


def _states_the_test_that_gave_p(claim: pd.Series) -> None:
    """The claim's se, df and interval are those of the inference that gave its p: a t (or normal) test's
    estimate ± quantile · se with p = 2 sf(|estimate / se|); a sign-flip test has neither se nor df (NaN)."""
    if claim["variance"].startswith("sign-flip"):
        assert np.isnan(claim["se"]) and np.isnan(claim["df"]), (claim["variance"], claim["se"], claim["df"])
        return
    reference = st.norm if np.isinf(claim["df"]) else st.t(claim["df"])
    half = reference.ppf(0.975) * claim["se"]
    assert (claim["ci_low"], claim["ci_high"]) == pytest.approx((claim["estimate"] - half, claim["estimate"] + half))
    assert claim["p_claim"] == pytest.approx(2 * reference.sf(abs(claim["estimate"]) / claim["se"]))


def test_the_claim_reports_the_se_df_and_interval_of_its_test(tmp_path):
    """Three rows, two of them sharing STS-B's sentences: the claim's p came from the sign-flip test while it
    reported CR2's se and Satterthwaite df (issue 42); now the joint jackknife over the sentence groups of all three
    rows gives p, se, df and interval together."""
    pairs = load_stsb(DataRoot(None), "test")
    stsb = pd.DataFrame({"subset": "test", "item": np.arange(len(pairs.scores)), "sentence1": pairs.sentences1,
                         "sentence2": pairs.sentences2, "gold": np.asarray(pairs.scores, float)})
    a = _reuse_run(tmp_path, "a", 1.0, seed=1, stsb=stsb)
    b = _reuse_run(tmp_path, "b", 1.3, seed=2, stsb=stsb)
    claim = compare([str(a), str(b)], ["sts12", "stsb-cosine"], settings=CompareSettings(n_boot=50)).claims.iloc[0]
    _states_the_test_that_gave_p(claim)
    assert claim["variance"] == "jackknife" and claim["df"] == claim["groups"] - 1


def test_sentence_clusters_label_rows_in_any_order():
    texts = {("sts14", "OnWN"): ["x", "y"], ("sts12", "surprise.OnWN"): ["Y ", "z"], ("sts13", "FNWN"): ["w"],
             ("sts13", "OnWN"): ["q", "z"]}
    labels = sentence_clusters(texts)
    assert labels == {("sts12", "surprise.OnWN"): "sts12/surprise.OnWN+2", ("sts13", "OnWN"): "sts12/surprise.OnWN+2",
                      ("sts14", "OnWN"): "sts12/surprise.OnWN+2", ("sts13", "FNWN"): "sts13/FNWN"}
    assert sentence_clusters(dict(reversed(list(texts.items())))) == labels


# --- the real data ------------------------------------------------------------------------------------------------

SEMANTIC = ["sts12", "sts13", "sts14", "sts15", "sts16", "stsb-cosine", "sickr-cosine"]
STSB_CLUSTER = {("stsb-cosine", "test"), ("sts12", "MSRpar"), ("sts12", "MSRvid"), ("sts13", "headlines"),
                ("sts14", "headlines"), ("sts14", "images"), ("sts14", "tweet-news"), ("sts15", "headlines"),
                ("sts15", "images"), ("sts16", "answer-answer"), ("sts16", "headlines")}
ONWN_CLUSTER = {("sts12", "surprise.OnWN"), ("sts13", "OnWN"), ("sts14", "OnWN")}


@pytest.mark.realdata
def test_the_26_semantic_rows_fall_into_14_clusters(data_root, tmp_path):
    comparison = compare(["tests.helpers:LetterCounts", "glove-bow"], SEMANTIC, data_dir=data_root.root,
                         runs_dir=tmp_path / "runs", settings=CompareSettings(n_boot=20))
    table = comparison.table
    units = table[table["summary"].astype(bool)]
    assert len(units) == 26
    partition = {frozenset(zip(rows["task"], rows["subset"])) for _, rows in units.groupby("cluster")}
    singletons = {(t, s) for t, s in zip(units["task"], units["subset"])} - STSB_CLUSTER - ONWN_CLUSTER
    assert len(singletons) == 12
    assert partition == {frozenset(STSB_CLUSTER), frozenset(ONWN_CLUSTER), *(frozenset({row}) for row in singletons)}
    by_row = units.set_index(["task", "subset"])["cluster"]
    assert by_row[("stsb-cosine", "test")] == "sts12/MSRpar+10"
    assert by_row[("sts13", "OnWN")] == "sts12/surprise.OnWN+2"
    assert by_row[("sts12", "SMTeuroparl")] == "sts12/SMTeuroparl"
    # every semantic subset reuses some sentence: every per-subset correlation row is the jackknife
    per_subset = table[table["subset"] != "all"]
    assert set(per_subset.loc[per_subset["metric"].isin(["pearson", "spearman"]), "test"]) == {JACKKNIFE}
    aggregates = table[table["subset"] == "all"]  # a year's aggregates span its subsets: a label of their own
    assert (aggregates["cluster"] == aggregates["task"] + "/all").all() and len(aggregates) == 30
    claim = comparison.claims.set_index("kind").loc["correlation"]
    assert claim["rows"] == 26 and claim["clusters"] == 14
