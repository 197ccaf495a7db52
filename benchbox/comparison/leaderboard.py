"""``benchbox leaderboard``: one row per model, one column per task's main score, an overall score, ranks with
95% intervals and significance groups (docs/guide.md#leaderboard, docs/protocols.md#leaderboard-ranks).

- **Rows.** A model is the runs of one configuration that differ only in their seeds
  (:func:`benchbox.comparison.sources.seed_groups`, as compare and the claims group them), else one run; its
  score on a task is the mean over its seeds (``<task>_sd``: their standard deviation). Of runs of one
  fingerprint, the newest (``created``) that holds a task gives its score. Runs under protocol switches other
  than the defaults (``--text raw``) are other rows (``protocol``). Published numbers (``paper:``, a comparators
  file) are *unpaired* rows: their values and published intervals, no items, so no rank or claim.
- **Columns.** A task's declared main score (the installed task's, else what its runs recorded): on subset
  ``all``, else ``test``, else its only subset; recorded on several subsets, the mean over them
  (:data:`benchbox.comparison.resampled_scores.PER_SUBSET`).
- **Overall.** Over the tasks of a group (default ``semantic``): the mean of the main scores on the common scale
  (a correlation as r, a percentage as a proportion, a value as it is; scores where lower is better, ranks and
  errors, are left out), and the Borda count of the per-task ranks (mteb's), each with its interval.
- **Uncertainty.** One joint paired bootstrap of items and seeds (:mod:`benchbox.stats.ranking`): the task, overall and
  Borda intervals are its percentile intervals, a model's rank interval the percentiles of its rank.
- **Significance groups.** The models not distinguishable from the best (of its protocol) under the claim test
  and its correction (:func:`claims_against`, the one call into :mod:`benchbox.comparison.claims`).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from benchbox.stats import ranking
from benchbox.comparison.published_draws import common_factor, published_draws
from benchbox.comparison.resampled_scores import PER_SUBSET, resampled_score, strata_and_clusters
from benchbox.comparison.sources import Source, known_tasks, seed_groups
from benchbox.errors import BenchboxError
from benchbox.memory import require_resamples
from benchbox.options import DEFAULT_GROUP, DEFAULT_RESAMPLES, DEFAULT_SEED
from benchbox.task_contract.metadata import KnownTasks

#: the headline subsets of a task, in order of preference
MAIN_SUBSETS = ("all", "test")
STANDARD = "standard"
#: the ``protocol`` of an unpaired row (published numbers)
PUBLISHED = "published"
#: how the overall score puts task scores on one scale, by unit (others are left out of the mean)
#: the option that sets :attr:`Settings.n_boot`, as a refusal names it
RESAMPLES_OPTION = "--resamples"
COMMON_SCALE = {"r": 1.0, "%": 0.01, "value": 1.0}
#: significance-group labels
BEST, WITH_BEST, BELOW_BEST, NO_CLAIM = "best", "not distinguishable from the best", "below the best", "no claim"


@dataclass
class Model:
    """One leaderboard row: its name, the runs of each of its seeds (fingerprint → runs, newest last) or a
    published comparator's source, and the protocol its runs used."""

    name: str
    seeds: dict[str, list[Source]] = field(default_factory=dict)
    published: Source | None = None
    protocol: str = STANDARD

    @property
    def unpaired(self) -> bool:
        return self.published is not None

    def runs(self, task: str) -> list[Source]:
        """The newest run of each seed that holds ``task``."""
        return self.runs_among([task])

    def runs_among(self, tasks: list[str]) -> list[Source]:
        """The newest run of each seed that holds a task among ``tasks`` (seeds holding none are left out)."""
        found = [next((s for s in reversed(runs) if set(tasks) & set(s.metrics["task"])), None)
                 for runs in self.seeds.values()]
        return [s for s in found if s is not None]

    def newest(self) -> list[Source]:
        return [runs[-1] for runs in self.seeds.values()]


def protocol_of(source: Source) -> str:
    """The protocol switches ``source``'s tasks recorded with a non-default value, or ``standard``."""
    from benchbox.comparison.variants import variant

    found = {variant(task, protocol) for task, protocol in source.protocols.items()} - {""}
    return "; ".join(sorted(found)) or STANDARD


def group_models(sources: list[Source], *, all_runs: bool = False) -> list[Model]:
    """The leaderboard's rows (module docstring), in order of first appearance; ``all_runs``: one per run."""
    protocols = {id(s): protocol_of(s) for s in sources if not s.is_reference}
    grouped: set[tuple[str, str | None]] = set()  # (protocol, config key) of the seed groups
    if not all_runs:
        for protocol in dict.fromkeys(protocols.values()):
            for members in seed_groups([s for s in sources if protocols.get(id(s)) == protocol]).values():
                grouped.add((protocol, members[0].config_key))

    def key(s: Source) -> tuple[Any, ...]:
        if s.is_reference:
            return (PUBLISHED, s.origin)
        if all_runs:
            return (s.run.run_id,)
        group = (protocols[id(s)], s.config_key)
        return group if group in grouped else (*group, s.fingerprint)

    models: dict[tuple[Any, ...], Model] = {}
    for s in sources:
        k = key(s)
        if k in models:
            continue
        if s.is_reference:
            models[k] = Model(s.label, published=s, protocol=PUBLISHED)
        elif k in grouped:
            members = [m for m in sources if not m.is_reference and key(m) == k]
            labels = {m.label.split(" #")[0] for m in members}
            seeds = len({m.fingerprint for m in members})
            shown = f"{labels.pop() if len(labels) == 1 else members[0].name} ({seeds} seeds)"
            models[k] = Model(shown, protocol=protocols[id(s)])
        else:
            models[k] = Model(s.label, protocol=protocols[id(s)])
    for s in sorted((s for s in sources if not s.is_reference), key=lambda s: (s.run.record.created or "", s.run.run_id)):
        models[key(s)].seeds.setdefault(s.fingerprint or s.run.run_id, []).append(s)
    return list(models.values())


def headline(metrics: pd.DataFrame, task: str, metric: str) -> tuple[str | None, float, float, float] | None:
    """(subset, value, ci_low, ci_high) of a source's main score on ``task``: the headline subset, else its only
    subset, else (None, the mean over its subsets, no interval); None when the source did not record it."""
    rows = metrics[(metrics["task"] == task) & (metrics["metric"] == metric)]
    if rows.empty:
        return None
    subsets = rows["subset"].astype(str)
    for row in [rows[subsets == s] for s in MAIN_SUBSETS if (subsets == s).any()] + ([rows] if len(rows) == 1 else []):
        first = row.iloc[0]
        return str(first["subset"]), float(first["value"]), float(first["ci_low"]), float(first["ci_high"])
    return None, float(rows["value"].mean()), np.nan, np.nan


def main_metric(task: str, known: KnownTasks, sources: list[Source]) -> tuple[str, bool]:
    """The task's declared main score (installed task, else as its runs recorded it), and whether it was
    declared; without a declaration, the first metric a source recorded."""
    declared = known[task].main_score if task in known else None
    if declared:
        return declared, True
    for s in sources:
        rows = s.metrics[s.metrics["task"] == task]
        if len(rows):
            return str(rows["metric"].iloc[0]), False
    raise BenchboxError(f"no source holds the task {task}")


def _aligned_items(task: str, runs: list[Source], keys: tuple[str, ...]) -> list[pd.DataFrame] | None:
    """Each run's per-item rows of ``task`` in one item order (the items every run has); None when a run has
    none."""
    frames = []
    for s in runs:
        found = s.items(task)
        if found is None or found.empty or not set(keys) <= set(found.columns):
            return None
        frames.append(found.drop_duplicates(list(keys)).set_index(list(keys)))
    common = frames[0].index
    for frame in frames[1:]:
        common = common.intersection(frame.index, sort=False)
    return [frame.loc[common].reset_index() for frame in frames] if len(common) else None


def load_sources(paths: list[str | os.PathLike], *, errors: str = "raise") -> list[Source]:
    """The evaluation runs under ``paths`` (run folders, folders of runs) and the published numbers named
    (``paper:``, ``mteb:PATH``: what an mteb results folder skipped is a warning), as sources (:func:`benchbox.comparison.sources.resolve_sources`); training runs are passed over. A folder that
    is not a readable run is an error naming it (``errors="raise"``) or left out with a warning (``"skip"``)."""
    from benchbox.comparison.sources import is_reference, open_run, resolve_sources, run_folders

    specs: list[str | os.PathLike] = []
    for spec in paths:
        if is_reference(str(spec)):
            specs.append(str(spec))
            continue
        for folder in run_folders(spec):
            try:
                run = open_run(folder)
            except BenchboxError as exc:
                if errors == "raise":
                    raise BenchboxError(f"cannot load the run {folder}: {exc}") from None
                warnings.warn(f"skipped the run {folder}: {exc}", stacklevel=2)
                continue
            if run.kind == "eval":
                specs.append(folder)
    return resolve_sources(specs, log=lambda line: warnings.warn(line, stacklevel=2)) if specs else []


@dataclass
class Settings:
    """The resampling's size and seed, the group the overall score is over, and the interval level."""

    n_boot: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    group: str = DEFAULT_GROUP
    level: float = ranking.LEVEL

    def __post_init__(self) -> None:
        require_resamples(RESAMPLES_OPTION, self.n_boot)

    def require_memory(self, n_items: int, rows: int, tasks: int) -> None:
        """Refuse, before any draw, replicates that cannot fit: per replicate, the largest task's bootstrap of
        ``n_items`` items (a weight per item and the paired bootstrap's temporaries, as compare's per cell) and,
        for each of ``rows`` rows (runs and published numbers), a draw per task of ``tasks`` and the stacked
        overall draws, their ranks and the rank quantiles' copy (:data:`RANK_BYTES`)."""
        from benchbox.stats.resampling import BOOTSTRAP_BYTES_PER_CELL

        require_resamples(RESAMPLES_OPTION, self.n_boot,
                          BOOTSTRAP_BYTES_PER_CELL * n_items + rows * (8 * tasks + RANK_BYTES),
                          f"a bootstrap of {n_items} items, {BOOTSTRAP_BYTES_PER_CELL} bytes per item, and the draws "
                          f"of {rows} rows on {tasks} tasks")


#: bytes per row and replicate beyond its task draws: the overall draw, its rank and the quantiles' sorted copy
RANK_BYTES = 24


@dataclass
class Column:
    """One task column: its main score, whether the task declared it, how a per-subset score is made one, and
    whether (and how) it is resampled."""

    task: str
    metric: str
    declared: bool
    per_subset: bool = False
    resampled: bool = False

    @property
    def header(self) -> str:
        return f"{self.task} ({self.metric}{', ' + PER_SUBSET if self.per_subset else ''})"


def claims_against(sources: list[Source], tasks: list[str], *, n_boot: int, seed: int) -> pd.DataFrame:
    """The claims between the models of ``sources`` on ``tasks`` (:func:`benchbox.comparison.claims.claims` as
    compare computes them, Holm over the claims): the one call the significance groups make into the claim
    machinery, so that its test can be changed in one place."""
    from benchbox.comparison.compare import compare_sources
    from benchbox.comparison.settings import CompareSettings

    found = compare_sources(sources, tasks, settings=CompareSettings(n_boot=n_boot, seed=seed)).claims
    return found if found is not None else pd.DataFrame(columns=["model_a", "model_b", "verdict"])


def claim_names(models: list[Model], tasks: list[str]) -> dict[str, str]:
    """Model name → its name in the claims of its runs on ``tasks`` (:meth:`Model.runs_among`,
    :func:`benchbox.comparison.claims._models`): the seed group's name the claims give those runs, else the run's
    label."""
    runs = {m.name: m.runs_among(tasks) for m in models}
    grouped = {id(s): name for name, members in seed_groups([s for r in runs.values() for s in r]).items()
               for s in members}
    return {m.name: grouped.get(id(runs[m.name][0]), runs[m.name][0].label) for m in models}


def significance_groups(best: Model, others: list[Model], claims: pd.DataFrame, tasks: list[str]) -> dict[str, str]:
    """Model name → its group on ``tasks``: ``best``, ``below the best`` (a claim finds the best better), ``not
    distinguishable from the best`` (claims, none significant) or ``no claim`` (none between them)."""
    names = claim_names([best, *others], tasks)
    top = names[best.name]
    groups = {best.name: BEST}
    for model in others:
        other = names[model.name]
        rows = claims[((claims["model_a"] == top) & (claims["model_b"] == other))
                      | ((claims["model_a"] == other) & (claims["model_b"] == top))]
        best_better = ((rows["model_a"] == top) & (rows["verdict"] == "better")) | (
            (rows["model_b"] == top) & (rows["verdict"] == "worse"))
        groups[model.name] = NO_CLAIM if rows.empty else BELOW_BEST if best_better.any() else WITH_BEST
    return groups


def group_tasks(group: str, shown: list[str]) -> list[str]:
    """The tasks of ``group`` (a task group or ``all``) among those shown; ``all``: every task shown."""
    if group == "all":
        return list(shown)
    from benchbox.task_contract.protocol import resolve_tasks

    members = [t.name for t in resolve_tasks([group])]
    return [t for t in shown if t in members]


def _task_scores(column: Column, spec: Any, models: list[Model], known: KnownTasks, weights_rng: np.random.Generator,
                 seed_rng: np.random.Generator, n_boot: int) -> tuple[dict[str, dict[str, float]], dict[str, np.ndarray]]:
    """Per model: value, seed sd, interval and seeds of one task; and the resampled draws of the paired models."""
    values: dict[str, dict[str, float]] = {}
    subset: str | None = None
    for model in models:
        if model.unpaired:
            found = headline(model.published.metrics, column.task, column.metric)
            if found is not None:
                values[model.name] = {"value": found[1], "sd": np.nan, "low": found[2], "high": found[3], "seeds": 0}
            continue
        found = [f for f in (headline(s.metrics, column.task, column.metric) for s in model.runs(column.task)) if f]
        if found:
            subset = found[0][0]
            column.per_subset |= subset is None
            scores = np.array([f[1] for f in found])
            values[model.name] = {"value": float(scores.mean()), "sd": float(scores.std(ddof=1)) if len(scores) > 1
                                  else np.nan, "low": np.nan, "high": np.nan, "seeds": len(scores)}
    paired = [m for m in models if not m.unpaired and m.name in values]
    runs = [s for m in paired for s in m.runs(column.task)]
    aligned = _aligned_items(column.task, runs, known[column.task].item_keys) if runs else None
    draws: dict[str, np.ndarray] = {}
    if aligned is None:
        return values, draws
    strata, clusters = strata_and_clusters(column.task, spec.kind, aligned[0])
    weights = ranking.cluster_weights(strata, clusters, n_boot, weights_rng)
    per_run = [resampled_score(spec, subset, items, weights) for items in aligned]
    if any(p is None for p in per_run):
        return values, draws
    start = 0
    for model in paired:
        k = len(model.runs(column.task))
        draws[model.name] = ranking.seed_means(np.stack(per_run[start:start + k]), seed_rng)
        start += k
        low, high = ranking.percentile_interval(draws[model.name][:, None])
        values[model.name].update(low=float(low[0]), high=float(high[0]))
    column.resampled = True
    return values, draws


@dataclass
class Board:
    """A leaderboard: :attr:`frame` (one row per model, sorted by the overall score), its task columns, the
    tasks of the overall score (and those of them on the common scale) and how it was computed."""

    frame: pd.DataFrame
    columns: list[Column]
    settings: Settings
    overall_tasks: list[str]
    scaled_tasks: list[str]
    known: KnownTasks
    notes: list[str] = field(default_factory=list)
    #: each standard run's rank among all (:data:`AMONG_ALL`), one line each: the answer the page gives first
    standings: list[str] = field(default_factory=list)

    @property
    def among_all(self) -> bool:
        """Whether the standard runs are also ranked among the published rows (then each has a standing)."""
        return bool(self.standings)

    @property
    def overall_over(self) -> str:
        """What the overall score is over, for headers: the ``--group``, or its tasks where the runs hold none of
        the group's and the overall falls back to every task they hold."""
        return self.settings.group if group_tasks(self.settings.group, self.overall_tasks) else ", ".join(self.overall_tasks)

    def record(self) -> dict[str, Any]:
        """How the table was computed, as the JSON output records it."""
        s = self.settings
        return {"resampling": "joint paired bootstrap of items (by sentence group within subset) and seeds",
                "resamples": s.n_boot, "seed": s.seed, "level": s.level, "group": s.group,
                "overall_tasks": self.overall_tasks, "common_scale_tasks": self.scaled_tasks,
                "rank": "by the overall mean within a protocol; interval: percentiles of the rank over the replicates",
                "borda": "points per model beaten on each overall task, ties 1/2 (mteb's Borda count)",
                "groups": "claim against the best not significant (compare's claim test, Holm over the claims)",
                "rank_among_all": self.among_all,
                "statement": self.method()}

    def method(self) -> str:
        """What the table is, in words: stated under it in every output."""
        s = self.settings
        scaled = ", ".join(self.scaled_tasks) or "none"
        return (f"Intervals: {s.level:.0%} percentile intervals of one joint paired bootstrap, {s.n_boot} replicates, "
                f"seed {s.seed}: each task's items drawn with replacement by sentence group within subset, the same "
                "draw for every model, and each model's seeds drawn with replacement within the model. "
                f"Overall ({s.group}): mean of the main scores on the common scale (r; % / 100; values as they "
                f"are) over {scaled}; Borda: points per model beaten on each of {', '.join(self.overall_tasks) or 'no task'} "
                "(ties ½, as mteb's Borda rank), summed. Rank: by the overall mean within a protocol, its interval "
                "the percentiles of the rank over the replicates (Hall & Miller 2009). Groups: the models whose "
                "claim against the best (compare's claim test, Holm over the claims) is not significant at 5%. "
                "Unpaired rows are published numbers: no items, so no rank, Borda or claim."
                + (" Rank among all (approximate): the standard runs and the published rows ranked together, the "
                   "runs' replicates as above, each published number's drawn from its 95% interval (normal on Fisher's "
                   "z for correlations, sharing one factor per task with the other rows scored on the same items, "
                   "Steiger's covariance at r(a, b) = r²); coverage measured in docs/benchmarks.md."
                   if self.among_all else ""))


def _group_key(model: Model) -> str:
    return PUBLISHED if model.unpaired else model.protocol


def build(sources: list[Source], tasks: list[str] | None = None, *, settings: Settings | None = None,
          all_runs: bool = False, groups: bool = True) -> Board:
    """The leaderboard of ``sources`` (module docstring) on ``tasks`` (default: every task, in order of first
    appearance). ``groups=False``: no significance groups (no claims computed)."""
    settings = settings or Settings()
    models = group_models(sources, all_runs=all_runs)
    known = known_tasks(sources)
    recorded = list(dict.fromkeys(t for s in sources for t in s.metrics["task"]))
    if tasks:
        missing = [t for t in tasks if t not in recorded]
        if missing:
            raise BenchboxError(f"no run holds the task(s) {', '.join(missing)}: tasks recorded are "
                                f"{', '.join(recorded) or 'none'}")
    shown = list(tasks or recorded)
    # the overall score is over tasks the runs hold: published rows add columns, never take a run's rank away
    held = [t for t in shown if any(s.run is not None and (s.metrics["task"] == t).any() for s in sources)] or shown
    overall_tasks = group_tasks(settings.group, held)
    notes = []
    if not overall_tasks:
        notes.append(f"no task of the group {settings.group} among the tasks the runs hold: the overall score is over "
                     f"every task they hold ({', '.join(held)})")
        overall_tasks = list(held)
    largest = max((int(s.metrics.loc[s.metrics["task"] == t, "n"].fillna(0).max()) for s in sources if s.run is not None
                   for t in shown if (s.metrics["task"] == t).any()), default=0)
    settings.require_memory(largest, len(models), len(shown))
    rng = np.random.default_rng(settings.seed)
    weights_rng, seed_rng = (np.random.default_rng(s) for s in rng.integers(0, 2**32, size=2))
    columns, cells, draws = [], {}, {}
    for task in shown:
        metric, declared = main_metric(task, known, sources)
        column = Column(task, metric, declared)
        cells[task], draws[task] = _task_scores(column, known.spec(task, metric), models, known, weights_rng,
                                                seed_rng, settings.n_boot)
        columns.append(column)
    specs = {t: known.spec(t, c.metric) for t, c in zip(shown, columns)}
    scaled = [t for t in overall_tasks if specs[t].unit in COMMON_SCALE and specs[t].higher_is_better]
    rows = []
    for model in models:
        row: dict[str, Any] = {"label": model.name, "fingerprint": " ".join(model.seeds) if not model.unpaired else "",
                               "protocol": model.protocol, "paired": not model.unpaired,
                               "seeds": len(model.seeds) if not model.unpaired else 0,
                               "runs": " ".join(s.run.run_id for s in model.newest()),
                               "citation": model.published.citation if model.unpaired else ""}
        for task in shown:
            cell = cells[task].get(model.name, {})
            row.update({task: cell.get("value", np.nan), f"{task}_low": cell.get("low", np.nan),
                        f"{task}_high": cell.get("high", np.nan), f"{task}_sd": cell.get("sd", np.nan)})
        values = [row[t] * COMMON_SCALE[specs[t].unit] for t in scaled]
        row["overall"] = float(np.mean(values)) if scaled and not np.isnan(values).any() else np.nan
        lacking = [f"{t} ({specs[t].name})" for t in scaled if np.isnan(row[t])]
        row["no_overall"] = (f"no {', '.join(lacking)}" if lacking else "" if scaled
                             else "no overall task on the common scale")
        rows.append(row)
    frame = pd.DataFrame(rows)
    if all_runs:  # one row per run: its id, as before seeds were grouped
        frame.insert(3, "run_id", frame["runs"])
    for name in ("overall_low", "overall_high", "borda", "borda_low", "borda_high", "borda_rank", "rank",
                 "rank_low", "rank_high"):
        frame[name] = np.nan
    frame["group"] = ""
    overall_draws: dict[int, np.ndarray] = {}
    for protocol in dict.fromkeys(_group_key(m) for m in models):
        members = [i for i, m in enumerate(models) if _group_key(m) == protocol]
        found = _rank(frame, [models[i] for i in members], members, draws, scaled, overall_tasks, specs, settings)
        if protocol == STANDARD:
            overall_draws.update(found)
        if groups and protocol != PUBLISHED:
            _groups(frame, [models[i] for i in members], members, overall_tasks, settings)
    standings = []
    # the answer to "where does my model stand among every published one", whatever the table's length
    if rank_among_published(frame, models, overall_draws, draws, scaled, specs, settings):
        ranked = frame[frame["paired"] & frame["rank_all"].notna()]
        total = int(frame["rank_all"].notna().sum())
        standings = [f"{row['label']}: rank {int(row['rank_all'])} [{int(row['rank_all_low'])}–"
                     f"{int(row['rank_all_high'])}] among {total} (runs and published rows, approximate 95% interval)"
                     for _, row in ranked.iterrows()]
    frame = frame.sort_values(["overall", "paired"], ascending=[False, False], na_position="last", kind="stable")
    return Board(frame.reset_index(drop=True), columns, settings, overall_tasks, scaled, known, notes, standings)


#: the columns of the rank among the standard runs and the published rows together (:func:`rank_among_published`)
AMONG_ALL = ("rank_all", "rank_all_low", "rank_all_high")


def rank_among_published(frame: pd.DataFrame, models: list[Model], overall_draws: dict[int, np.ndarray],
                         draws: dict[str, dict[str, np.ndarray]], scaled: list[str], specs: dict[str, Any],
                         settings: Settings) -> bool:
    """The rank of every standard run and published row among them all, with an approximate 95% interval, in
    place (columns :data:`AMONG_ALL`); whether there was one to give. The runs' replicates are their overall
    scores' joint paired bootstrap draws (``overall_draws``: row → [n_boot]; ``draws``: task → model → its task
    replicates); a published row has no items, so its replicates are normal draws of each task's number from its
    interval that share the task's items with the other rows through one common factor tied to the runs'
    replicates (:mod:`benchbox.comparison.published_draws`), averaged as its overall score is. Approximate: its
    coverage is measured by benchmarks/bench_published_ranks.py (docs/benchmarks.md). Rows without an overall
    score or an interval get none."""
    for name in AMONG_ALL:
        frame[name] = np.nan
    rng = np.random.default_rng([settings.seed, 50])  # its own stream: the runs' replicates are left as they are
    runs = [(models[i].name, i) for i in overall_draws]
    common = {t: common_factor([(draws[t][name], frame.loc[i, t]) for name, i in runs if name in draws.get(t, {})],
                               specs[t].unit, settings.n_boot, rng) for t in scaled}
    published: dict[int, np.ndarray] = {}
    for i, model in enumerate(models):
        if not model.unpaired or not np.isfinite(frame.loc[i, "overall"]):
            continue
        found = [published_draws(frame.loc[i, t], frame.loc[i, f"{t}_low"], frame.loc[i, f"{t}_high"],
                                 specs[t].unit, settings.n_boot, rng, common[t]) for t in scaled]
        if all(d is not None for d in found):
            published[i] = np.mean([d * COMMON_SCALE[specs[t].unit] for d, t in zip(found, scaled)], axis=0)
    if not published or not overall_draws:
        return False
    rows = list(overall_draws) + list(published)
    stacked = np.stack([overall_draws[i] for i in overall_draws] + [published[i] for i in published], axis=1)
    frame.loc[rows, "rank_all"] = ranking.ranks(frame.loc[rows, "overall"].to_numpy(float))
    frame.loc[rows, "rank_all_low"], frame.loc[rows, "rank_all_high"] = ranking.rank_intervals(
        ranking.ranks(stacked), settings.level)
    return True


def _rank(frame: pd.DataFrame, models: list[Model], index: list[int], draws: dict[str, dict[str, np.ndarray]],
          scaled: list[str], overall_tasks: list[str], specs: dict[str, Any], settings: Settings) -> dict[int, np.ndarray]:
    """Overall and Borda intervals, ranks and rank intervals of the models of one protocol, in place; the ranked
    rows' overall replicates (row → [n_boot])."""
    complete = [(i, m) for i, m in zip(index, models) if not m.unpaired
                and all(m.name in draws[t] for t in overall_tasks)]
    if not complete:
        return {}
    rows = [i for i, _ in complete]
    names = [m.name for _, m in complete]
    signed = {t: 1.0 if specs[t].higher_is_better else -1.0 for t in overall_tasks}
    point = frame.loc[rows, overall_tasks].to_numpy(float) * np.array([signed[t] for t in overall_tasks])
    frame.loc[rows, "borda"] = ranking.borda_counts(point)
    task_draws = np.stack([np.stack([draws[t][n] * signed[t] for t in overall_tasks], axis=-1) for n in names], axis=1)
    borda = ranking.borda_counts(task_draws)
    frame.loc[rows, "borda_low"], frame.loc[rows, "borda_high"] = ranking.percentile_interval(borda, settings.level)
    frame.loc[rows, "borda_rank"] = ranking.ranks(frame.loc[rows, "borda"].to_numpy(float))
    if not scaled:
        return {}
    overall = np.mean([np.stack([draws[t][n] for n in names], axis=1) * COMMON_SCALE[specs[t].unit]
                       for t in scaled], axis=0)
    frame.loc[rows, "overall_low"], frame.loc[rows, "overall_high"] = ranking.percentile_interval(overall, settings.level)
    frame.loc[rows, "rank"] = ranking.ranks(frame.loc[rows, "overall"].to_numpy(float))
    frame.loc[rows, "rank_low"], frame.loc[rows, "rank_high"] = ranking.rank_intervals(ranking.ranks(overall),
                                                                                       settings.level)
    return dict(zip(rows, overall.T))


def _groups(frame: pd.DataFrame, models: list[Model], index: list[int], tasks: list[str], settings: Settings) -> None:
    """The significance group of each model of one protocol against its best (rank 1), in place."""
    ranked = [(frame.loc[i, "rank"], i, m) for i, m in zip(index, models) if frame.loc[i, "rank"] == frame.loc[i, "rank"]]
    if not ranked:
        return
    _, best_row, best = min(ranked, key=lambda r: (r[0], r[1]))
    others = [m for _, i, m in ranked if i != best_row]
    # the seeds each model has on these tasks: a seed evaluated on other tasks only shares none with the others
    runs = [s for m in [best, *others] for s in m.runs_among(tasks)]
    claims = claims_against(runs, tasks, n_boot=settings.n_boot, seed=settings.seed) if others else \
        pd.DataFrame(columns=["model_a", "model_b", "verdict"])
    found = significance_groups(best, others, claims, tasks)
    for _, i, m in ranked:
        frame.loc[i, "group"] = found[m.name]
