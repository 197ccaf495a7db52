"""Claim-level comparison: "model A vs model B on these rows", one test of the claim instead of a vote count.

A *model* is a run, an encoder, a published comparator, or the runs of one configuration that differ only in
their seeds (:func:`benchbox.comparison.sources.seed_groups`). For every two models and every summary metric whose
kind of paired test has a common scale (:mod:`benchbox.task_contract.paired_tests`: correlation rows, Pearson per subset;
classification rows, accuracy; retrieval rows, R@10 per direction; a plugin's summary metric on its own scale)
with at least two rows on at least two item sets, a claim gets:

- one test of the claim against item and seed variance together (:mod:`benchbox.stats.claim_test`): for Pearson
  rows, the pooled Fisher-z difference (the random-effects weights below, τ² re-estimated in each jackknife
  replicate; a model's runs averaged) with the delete-a-group jackknife over sentence groups formed across every
  row (:mod:`benchbox.comparison.claim_items`) plus the
  seeds' variance s²_A/k_A + s²_B/k_B, t on Welch–Satterthwaite df; with too few groups or one dominant group,
  the cluster sign-flip test over the rows' clusters instead (intersected with the seed t-test with seeds), named
  in the headline. Other kinds: the random-effects pooled estimate with its variance (model-based or CR2,
  :mod:`benchbox.stats.pooling`) plus the seeds' variance, or the sign-flip test where CR2's df are below 4.
  ``estimate``, ``ci_low``, ``ci_high``, ``se`` (NaN for a sign-flip test), ``df``, ``variance`` (the inference:
  :data:`benchbox.stats.claim_test.METHODS`), ``var_items``, ``var_seeds``, ``groups`` and ``largest_group`` (the
  largest group's share of the weight) are this test's, ``p_claim`` its p,
  adjusted over all claims of the comparison with the comparison's correction (``p_claim_adjusted``); the verdict
  at 5%, "better" for a positive pooled difference of a metric where higher is better, for a negative one where
  lower is;
- described beside it: the random-effects meta-analysis of the per-row differences on the kind's common scale
  (Fisher-z difference; difference of paired proportions) with the rows' sampling variances, τ² by
  DerSimonian–Laird or Paule–Mandel, I², Cochran's Q and its own p (``p_pooled``; :mod:`benchbox.stats.pooling`;
  with seeds the per-row effect is the mean over the run pairs and its variance the mean of theirs); with seeds
  on either side, the seed t-test (``seed_*``, ``p_seed``) and Almost Stochastic Order of the per-seed scores
  (:mod:`benchbox.stats.seeds`, weighted with the random-effects weights), descriptive;
- the per-row vote count after the comparison's correction: a row counts as better (worse) when every run
  pair of the two models is significantly better (worse) on it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from benchbox import stats
from benchbox.comparison.settings import CompareSettings
from benchbox.comparison.sources import seed_groups
from benchbox.task_contract.paired_tests import KINDS, PairedKind
from benchbox.comparison.claim_items import correlation_claim
from benchbox.stats import seeds
from benchbox.stats.claim_test import MAX_GROUP_SHARE, MIN_GROUPS, pooled_claim
from benchbox.stats.pooling import SIGN_FLIP_BELOW_DF, exact_rows_weighed, measured_without_error, pool_effects

if TYPE_CHECKING:
    from benchbox.comparison.sources import Source
    from benchbox.task_contract.metadata import KnownTasks

ALPHA = 0.05
#: the inference that gave the claim's p, se, df and interval (:attr:`benchbox.stats.claim_test.ClaimTest.method`,
#: the ``variance`` column), as a headline says it
INFERENCE = {
    "jackknife": "delete-a-group jackknife over {groups} sentence groups across the rows, t on {df:.0f} df",
    "jackknife + seeds": "delete-a-group jackknife over {groups} sentence groups across the rows plus seed "
                         "variance, t on Welch–Satterthwaite df = {df:.1f}",
    "model": "model-based variance",
    "model + seeds": "model-based variance plus seed variance, t on Welch–Satterthwaite df = {df:.1f}",
    "CR2": "CR2 over {clusters} item clusters, t on Satterthwaite df = {df:.1f}",
    "CR2 + seeds": "CR2 over {clusters} item clusters plus seed variance, t on Welch–Satterthwaite df = {df:.1f}",
    "sign-flip": "cluster sign-flip test over {clusters} item clusters, {why}",
    "sign-flip ∩ seeds": "cluster sign-flip test over {clusters} item clusters, {why}, and the seed t-test: both "
                         "must reject",
}
#: the same, as a verdict names it
POOLED_TEST = {
    "jackknife": "jackknife over {groups} sentence groups",
    "jackknife + seeds": "jackknife over {groups} sentence groups + seed variance, df = {df:.1f}",
    "model": "random-effects z-test",
    "model + seeds": "random-effects variance + seed variance, df = {df:.1f}",
    "CR2": "CR2 t-test over {clusters} item clusters, df = {df:.1f}",
    "CR2 + seeds": "CR2 over {clusters} item clusters + seed variance, df = {df:.1f}",
    "sign-flip": "sign-flip test over {clusters} clusters",
    "sign-flip ∩ seeds": "sign-flip test over {clusters} clusters and the seed t-test",
}


def _why_sign_flip(claim: pd.Series) -> str:
    """Why a claim fell back to the sign-flip test: the sentence groups, or CR2's df."""
    if claim["groups"] and claim["groups"] > 0:
        return (f"as {claim['groups']} sentence groups are fewer than {MIN_GROUPS} or one holds "
                f"{claim['largest_group']:.0%} > {MAX_GROUP_SHARE:.0%} of the weight")
    return f"as CR2's Satterthwaite df < {SIGN_FLIP_BELOW_DF:g}"


def inference(claim: pd.Series, texts: dict[str, str] = INFERENCE) -> str:
    """The inference that gave the claim's p, in words (``texts``: :data:`INFERENCE` or :data:`POOLED_TEST`)."""
    why = _why_sign_flip(claim) if claim["variance"].startswith("sign-flip") else ""
    return texts[claim["variance"]].format(clusters=claim["clusters"], df=claim["df"], groups=claim["groups"], why=why)


CLAIM_COLUMNS = [
    "model_a", "model_b", "kind", "scale", "rows", "seeds_a", "seeds_b", "estimate", "ci_low", "ci_high", "se",
    "mean_diff", "p_pooled", "tau2", "i2", "q", "clusters", "robust", "df", "variance", "var_items", "var_seeds", "groups",
    "largest_group", "pooling", "seed_diff", "seed_ci_low",
    "seed_ci_high", "seed_t", "seed_df", "p_seed", "aso_epsilon", "p_claim", "p_claim_adjusted", "verdict",
    "better", "worse", "tests", "correction", "family",
]


def _models(sources: list[Source], declared: dict[str, list[str]]) -> dict[str, list[str]]:
    """Model name → labels of its runs (declared seed groups, then recognised ones, then every other source on
    its own)."""
    models = dict(declared)
    taken = {label for labels in declared.values() for label in labels}
    models.update({name: [m.label for m in members] for name, members in seed_groups(sources).items()
                   if not taken & {m.label for m in members}})
    grouped = {label for labels in models.values() for label in labels}
    models.update({s.label: [s.label] for s in sources if s.label not in grouped})
    return models


def _oriented(table: pd.DataFrame, runs_a: list[str], runs_b: list[str]) -> pd.DataFrame:
    """The rows between runs of A and runs of B, written from A's side (differences and verdicts flipped)."""
    forward = table[table["model_a"].isin(runs_a) & table["model_b"].isin(runs_b)]
    backward = table[table["model_a"].isin(runs_b) & table["model_b"].isin(runs_a)]
    if not backward.empty:
        backward = backward.rename(columns={"model_a": "model_b", "model_b": "model_a", "value_a": "value_b",
                                            "value_b": "value_a"})
        backward = backward.assign(effect=-backward["effect"], diff=-backward["diff"],
                                   verdict=backward["verdict"].replace({"better": "worse", "worse": "better"}))
    return pd.concat([forward, backward], ignore_index=True) if not backward.empty else forward


ROW_COLUMNS = ["model_a", "model_b", "kind", "task", "subset", "effect", "var", "cluster"]
SEED_SCORE_COLUMNS = ["model_a", "model_b", "kind", "model", "run", "score"]


def _claim(rows: pd.DataFrame, kind: PairedKind, known: KnownTasks, sources: list[Source], runs_a: list[str],
           runs_b: list[str], *, higher_is_better: bool, pooling: str, seed: int) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame] | None:
    # rows of published numbers have no effect (None): the columns are then objects
    rows = rows.assign(effect=pd.to_numeric(rows["effect"], errors="coerce"),
                       effect_var=pd.to_numeric(rows["effect_var"], errors="coerce"))
    exact = measured_without_error(rows["effect"], rows["effect_var"])  # identical scores: exact_rows_weighed
    rows = rows[np.isfinite(rows["effect"]) & np.isfinite(rows["effect_var"]) & ((rows["effect_var"] > 0) | exact)]
    if rows.empty:
        return None  # e.g. a published model's rows: no effect to pool
    keys = ["task", "subset", "metric"]
    # rows every run pair has (a row missing for one seed is left out rather than weighing the seeds unevenly)
    pairs = rows.groupby(keys, sort=False)["model_a"].size()
    complete = pairs[pairs == len(runs_a) * len(runs_b)].index
    rows = rows.set_index(keys).loc[complete].reset_index() if len(complete) else rows.iloc[0:0]
    if len(complete) < 2:
        return None
    per_row = rows.groupby(keys, sort=False).agg(effect=("effect", "mean"), var=("effect_var", "mean"),
                                                 diff=("diff", "mean"), cluster=("cluster", "first"))
    per_row["var"] = exact_rows_weighed(per_row["effect"], per_row["var"])
    if not np.isfinite(per_row["var"]).all():
        return None  # identical scores on every row
    clusters = per_row["cluster"].astype(str).tolist()  # shared items (benchbox.comparison.pairing)
    if len(set(clusters)) < 2:
        return None  # e.g. the two directions of one retrieval task: one item set, nothing to pool over
    pooled = pool_effects(per_row["effect"], per_row["var"], method=pooling, clusters=clusters)
    record: dict[str, Any] = {"rows": len(per_row), "seeds_a": len(runs_a), "seeds_b": len(runs_b),
                              **{k: v for k, v in pooled.to_dict().items() if k not in ("k", "method", "p")},
                              "p_pooled": pooled.p, "pooling": pooling,
                              "mean_diff": float(per_row["diff"].mean())}
    verdicts = rows.groupby(keys, sort=False)["verdict"]
    record["better"] = int(verdicts.apply(lambda v: (v == "better").all()).sum())
    record["worse"] = int(verdicts.apply(lambda v: (v == "worse").all()).sum())
    scores: dict[str, np.ndarray] = {}
    weights = (1 / (per_row["var"] + pooled.tau2)).to_numpy()  # random-effects weights of the per-seed scores
    if max(len(runs_a), len(runs_b)) > 1:
        for side, runs, column in (("a", runs_a, "value_a"), ("b", runs_b, "value_b")):
            per_run = rows.groupby(["model_a" if side == "a" else "model_b", *keys], sort=False)[column].first()
            matrix = np.array([[kind.on_scale(per_run.loc[(run, *key)], known.spec(key[0], key[2]))
                                for key in per_row.index] for run in runs])
            scores[side] = seeds.per_seed_scores(matrix, weights)
        test = seeds.seed_test(scores["a"], scores["b"])
        sign = 1 if higher_is_better else -1  # almost stochastic order of the better scores
        record.update(seed_diff=test.diff, seed_ci_low=test.ci_low, seed_ci_high=test.ci_high, seed_t=test.t,
                      seed_df=test.df, p_seed=test.p,
                      aso_epsilon=seeds.aso(sign * scores["a"], sign * scores["b"], seed=seed))
    claim = None
    if kind.scale(per_row.index[0][2]) == "Δz":  # Pearson rows: the joint test over sentence groups
        claim = correlation_claim(sources, runs_a, runs_b, [key[:2] for key in per_row.index], known,
                                  per_row["var"].to_numpy(), pooling, clusters)
    if claim is None:
        claim = pooled_claim(pooled, scores.get("a", np.zeros(len(runs_a))), scores.get("b", np.zeros(len(runs_b))))
    record.update(estimate=claim.estimate, ci_low=claim.ci_low, ci_high=claim.ci_high, se=claim.se, df=claim.df,
                  variance=claim.method, var_items=claim.var_items, var_seeds=claim.var_seeds, groups=claim.groups,
                  largest_group=claim.largest_share)
    record["p_claim"] = claim.p
    detail = per_row.reset_index()[["task", "subset", "effect", "var"]].assign(cluster=clusters)
    per_seed = pd.DataFrame([{"model": side, "run": run, "score": score} for side, runs in (("a", runs_a), ("b", runs_b))
                             for run, score in zip(runs, scores.get(side, []))], columns=["model", "run", "score"])
    return record, detail, per_seed


def _pooled_metrics(table: pd.DataFrame, known: KnownTasks) -> list[tuple[PairedKind, str, bool]]:
    """The (kind, metric, higher is better) of the summary rows that pool into claims: every summary metric whose
    kind has a common scale, in the order of :data:`benchbox.task_contract.paired_tests.KINDS`, then of first appearance."""
    found: dict[tuple[str, str], bool] = {}
    for task, metric in dict.fromkeys(zip(table["task"], table["metric"])):
        spec = known.spec(task, metric)
        if spec.kind is not None and KINDS[spec.kind].scale(metric) is not None:
            found.setdefault((spec.kind, metric), spec.higher_is_better)
    return [(KINDS[kind], metric, found[(kind, metric)])
            for kind in KINDS for k, metric in found if k == kind]


def claims(table: pd.DataFrame, sources: list[Source], known: KnownTasks, *, settings: CompareSettings | None = None,
           declared: dict[str, list[str]] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[str]]:
    """From a comparison table (:func:`benchbox.comparison.compare.compare`) and what is known of its tasks: one
    row per claim (``CLAIM_COLUMNS``), the per-row effects each claim pooled (``ROW_COLUMNS``, the forest plot),
    the per-seed scores of the models with seeds (``SEED_SCORE_COLUMNS``; ``model`` is ``"a"`` or ``"b"``) and
    one note per pair and kind of row that has summary rows but no claim because they are approximate
    (:func:`_no_claim_note`). ``settings``: the comparison's (its correction and family, the pooling's τ², the
    seed of ASO)."""
    settings = settings or CompareSettings()
    correction, family, pooling, seed = settings.correction, settings.family, settings.pooling, settings.test_seed
    models = _models(sources, declared or {})
    owner = {label: name for name, labels in models.items() for label in labels}
    tests_per_pair = table.groupby(["model_a", "model_b"], sort=False)["p"].count()
    total_tests = int(table["p"].notna().sum())
    table = table[table["summary"].astype(bool)]
    kinds = pd.Series([known.spec(task, metric).kind for task, metric in zip(table["task"], table["metric"])],
                      index=table.index, dtype=object)
    pooled = _pooled_metrics(table, known)
    tested = pd.Series(list(zip(table["model_a"].map(owner), table["model_b"].map(owner))), index=table.index)
    records, details, per_seed, notes, higher = [], [], [], [], []
    labelled = table.assign(kind=kinds)
    positions: dict[tuple[str, str], list[int]] = {}  # each pair's rows, either way round, in the table's order
    for i, pair in enumerate(tested):
        positions.setdefault(tuple(sorted(pair)), []).append(i)
    for a, b in dict.fromkeys(p for p in tested if p[0] != p[1]):
        both = _oriented(labelled.iloc[positions[tuple(sorted((a, b)))]], models[a], models[b])
        for kind, metric, higher_is_better in pooled:
            rows = both[(both["kind"] == kind.name) & (both["metric"] == metric)]
            if rows.empty:
                continue
            found = _claim(rows, kind, known, sources, models[a], models[b], higher_is_better=higher_is_better,
                           pooling=pooling, seed=seed)
            if found is None:
                note = _no_claim_note(a, b, kind, rows)
                if note:
                    notes.append(note)
                continue
            record, detail, scores = found
            details.append(detail.assign(model_a=a, model_b=b, kind=kind.name))
            per_seed.append(scores.assign(model_a=a, model_b=b, kind=kind.name,
                                          model=scores["model"].map({"a": a, "b": b})))
            pair = (both["model_a"].iloc[0], both["model_b"].iloc[0])
            family_tests = total_tests if family == "all" else int(
                tests_per_pair.get(pair, tests_per_pair.get(pair[::-1], 0)))
            record.update(model_a=a, model_b=b, kind=kind.name, scale=kind.scale(metric), correction=correction,
                          family=family, tests=family_tests)
            records.append(record)
            higher.append(higher_is_better)
    frame = pd.DataFrame(records, columns=CLAIM_COLUMNS)
    if not frame.empty:
        frame["p_claim_adjusted"] = stats.adjust_pvalues(frame["p_claim"], correction)
        significant = frame["p_claim_adjusted"] < ALPHA
        a_better = np.where(higher, frame["estimate"] > 0, frame["estimate"] < 0)
        frame["verdict"] = np.where(significant, np.where(a_better, "better", "worse"), "no significant difference")
    rows = pd.concat(details, ignore_index=True)[ROW_COLUMNS] if details else pd.DataFrame(columns=ROW_COLUMNS)
    seeds_frame = pd.concat(per_seed, ignore_index=True)[SEED_SCORE_COLUMNS] if per_seed else \
        pd.DataFrame(columns=SEED_SCORE_COLUMNS)
    return frame, rows, seeds_frame, notes


def _no_claim_note(a: str, b: str, kind: PairedKind, rows: pd.DataFrame) -> str | None:
    """Why the summary rows of one kind between A and B gave no claim, when some are approximate (a published
    comparator: no per-item scores, so no effect on the common scale and no variance to pool) or there is only
    one (a claim pools rows); else None."""
    approximate = int(rows["approximate"].astype(bool).sum()) if "approximate" in rows else 0
    if not approximate:
        single = rows[["task", "subset", "metric"]].drop_duplicates()
        if len(single) != 1:
            return None
        task, subset, metric = single.iloc[0]
        return (f"{a} vs {b}: no claim on the {kind.noun} rows: there is one ({task} {subset} {metric}), and a "
                "claim pools two or more; its own test above is the comparison")
    return (f"{a} vs {b}: no claim on the {kind.noun} rows: published numbers have no per-item scores, so "
            f"the paired rows' covariance is unknown (only approximate worst-case row tests, {approximate} "
            f"row{'s' if approximate != 1 else ''})")


def summarised_notes(notes: list[str], most: int = 3) -> list[str]:
    """``notes`` for a reader: the notes of the form ``A vs B: REASON`` that give one reason for more than ``most``
    pairs (a run against every model of an mteb results repository) become one line counting the pairs, with the
    first as the example, where the first of them stood; other notes are kept as they are."""
    parts = [note.partition(": ") for note in notes]
    by_reason: dict[str, list[str]] = {}
    for pair, sep, reason in parts:
        if sep and " vs " in pair:
            by_reason.setdefault(reason, []).append(pair)
    shown, done = [], set()
    for note, (_, _, reason) in zip(notes, parts):
        pairs = by_reason.get(reason, [])
        if len(pairs) <= most:
            shown.append(note)
        elif reason not in done:
            done.add(reason)
            shown.append(f"{len(pairs)} pairs (e.g. {pairs[0]}): {reason}")
    return shown


def _signed(x: float, digits: int = 3) -> str:
    return f"{x:+.{digits}f}"


def _training_variance(claim: pd.Series) -> str | None:
    """Which side's training variance the claim could not assess (one run of that model), or None."""
    single = [name for name, n in ((claim["model_a"], claim["seeds_a"]), (claim["model_b"], claim["seeds_b"])) if n == 1]
    if len(single) == 2:
        return "one run per model: training variance not assessed"
    return f"one run of {single[0]}: its training variance not assessed" if single else None


def _p(p: float) -> str:
    """``p = 0.037``, ``p = 0.00012``; below 0.0001, ``p < 0.0001``."""
    return "p < 0.0001" if p < 0.0001 else f"p = {p:.2g}"


def _bound(x: float) -> str:
    """A difference or interval bound to two decimals, signed; an unbounded one as ±∞ (the sign-flip test's
    interval with five clusters or fewer)."""
    return ("+∞" if x > 0 else "−∞") if math.isinf(x) else _signed(x, 2).replace("-", "−")


def verdict(claim: pd.Series, claims: int = 1) -> str:
    """The claim in plain words, the better model first, e.g. "sbert is better than glove-bow on the 26 correlation
    rows: pooled Δz +0.32 [+0.29, +0.35] (mean Δr +0.21), p < 0.0001 (jackknife over 9674 sentence groups)", or
    "No significant difference between A and B on ...: pooled Δz (A − B) ...". The difference, its 95% interval
    and the test named are those of the claim test (:func:`claims`); ``claims``: how many claims the p was
    adjusted over."""
    a, b = claim["model_a"], claim["model_b"]
    kind = KINDS[claim["kind"]]
    flip = claim["verdict"] == "worse"  # the better model first: the difference from its side
    estimate, low, high = claim["estimate"], claim["ci_low"], claim["ci_high"]
    what = f"pooled {claim['scale']}"
    test = inference(claim, POOLED_TEST)
    natural = claim["mean_diff"] if kind.natural else None
    if flip:
        a, b, estimate, low, high = b, a, -estimate, -high, -low
        natural = None if natural is None else -natural
    rows = f"on the {claim['rows']} {kind.noun} rows"
    if claim["verdict"] in ("better", "worse"):
        opening, difference = f"{a} is better than {b} {rows}", what
    else:
        opening, difference = f"No significant difference between {a} and {b} {rows}", f"{what} ({a} − {b})"
    mean = f" (mean {kind.natural} {_bound(natural)})" if natural is not None else ""
    adjusted = f", {claim['correction']}-adjusted over {claims} claims" if claims > 1 else ""
    return (f"{opening}: {difference} {_bound(estimate)} [{_bound(low)}, {_bound(high)}]{mean}, "
            f"{_p(claim['p_claim_adjusted'])} ({test}{adjusted})")


def verdicts(claims: pd.DataFrame | None) -> list[str]:
    """One :func:`verdict` per claim: what the report and ``benchbox compare`` open with."""
    if claims is None:
        return []
    return [verdict(claim, len(claims)) for _, claim in claims.iterrows()]


def headline(claim: pd.Series) -> str:
    """The claim in one sentence, e.g. "char-gru (3 seeds) vs glove-bow on 26 correlation rows: pooled Δz =
    +0.120 [+0.090, +0.150] (mean Δr = +0.081) (delete-a-group jackknife over 9674 sentence groups across the rows
    plus seed variance, t on Welch–Satterthwaite df = 2.3); between rows I² = 64%, τ² = 0.012 (DL); seeds 3 vs 1
    (descriptive): t(2) = 5.1, p = 0.037; ASO ε = 0.02 (char-gru (3 seeds) almost stochastically dominant); one run of glove-bow: its training variance not assessed; better on 18, worse on
    0 of 26 rows after holm over 336 tests; claim: better (p = 0.04, holm over claims)".

    ASO's "dominant" is said only beside a significant claim; otherwise ε is given as a description."""
    a, b = claim["model_a"], claim["model_b"]
    kind = KINDS[claim["kind"]]
    natural = f" (mean {kind.natural} = {_signed(claim['mean_diff'])})" if kind.natural else ""
    parts = [f"{a} vs {b} on {claim['rows']} {kind.noun} rows: pooled {claim['scale']} = "
             f"{_signed(claim['estimate'])} [{_signed(claim['ci_low'])}, {_signed(claim['ci_high'])}]{natural} "
             f"({inference(claim)}); between rows I² = {claim['i2']:.0f}%, τ² = {claim['tau2']:.2g} "
             f"({claim['pooling'].upper()})"]
    if isinstance(claim["p_seed"], float) and not math.isnan(claim["p_seed"]):
        eps = claim["aso_epsilon"]
        if claim["verdict"] in ("better", "worse"):
            dominance = f"{a} almost stochastically dominant" if eps < 0.5 else f"{a} not dominant"
        else:
            dominance = "descriptive: the claim is not significant"
        parts.append(f"seeds {claim['seeds_a']} vs {claim['seeds_b']} (descriptive): t({claim['seed_df']:.0f}) = "
                     f"{claim['seed_t']:.2f}, p = {claim['p_seed']:.3g}; ASO ε = {eps:.2f} ({dominance})")
    caveat = _training_variance(claim)
    if caveat:
        parts.append(caveat)
    family = "" if claim["family"] == "all" else " per pair"
    parts.append(f"better on {claim['better']}, worse on {claim['worse']} of {claim['rows']} rows after "
                 f"{claim['correction']} over {claim['tests']} tests{family}")
    parts.append(f"claim: {claim['verdict']} (p = {claim['p_claim_adjusted']:.3g}, {claim['correction']} over claims)")
    return "; ".join(parts)
