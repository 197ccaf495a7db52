"""``benchbox leaderboard`` (issue 45): one row per model with its seeds grouped, the declared main score of
every task (per-subset scores through their mean, a task no longer installed by what its runs recorded),
intervals, ranks and Borda counts from one joint paired bootstrap, significance groups from the claims,
published numbers from a file as unpaired rows, and the CSV, JSON and HTML outputs."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from benchbox.evaluation import run_tasks
from benchbox.include import include_file
from benchbox.registry import TASKS
from benchbox.storage.runs import Run
from benchbox.task_contract.options import TaskOptions
from tests.comparison.test_compare import make_run
from tests.helpers import LetterCounts, cli

FAST = ["--resamples", "60"]


@pytest.fixture
def seeded(tmp_path):
    """Runs of a good model, three seeds of a middling one and a bad one (synthetic STS12, retrieval, MR)."""
    good = make_run(tmp_path, "good", noise_scale=0.3, rank_shift=0, accuracy=0.85)
    seeds = [make_run(tmp_path, "gru", noise_scale=1.0, rank_shift=2, accuracy=0.8, seed=s) for s in (1, 2, 3)]
    bad = make_run(tmp_path, "bad", noise_scale=3.0, rank_shift=6, accuracy=0.7)
    return tmp_path / "runs", good, seeds, bad


def _csv(capsys, *args):
    code, out, err = cli(capsys, "leaderboard", *args, "--csv", "-")
    assert code == 0, err
    return pd.read_csv(io.StringIO(out))


def test_seeds_of_one_model_are_one_row_with_their_mean_and_spread(seeded, capsys):
    """Bug: three seeds of one model were three rows (the leaderboard keyed models by fingerprint)."""
    runs, _, seeds, _ = seeded
    board = _csv(capsys, str(runs))  # options the leaderboard had before: fails there
    assert len(board) == 3  # was 5: one row per seed
    board = board.set_index("label")
    assert sorted(board.index) == ["bad", "good", "gru (3 seeds)"]
    values = [Run.open(s).metrics.query("metric == 'pearson_mean'")["value"].iloc[0] for s in seeds]
    gru = board.loc["gru (3 seeds)"]
    assert gru["seeds"] == 3 and gru["sts12"] == pytest.approx(np.mean(values))
    assert gru["sts12_sd"] == pytest.approx(np.std(values, ddof=1))
    assert gru["sts12_low"] < gru["sts12"] < gru["sts12_high"]


def test_ranks_intervals_and_groups_over_the_chosen_tasks(seeded, capsys, tmp_path):
    runs, *_ = seeded
    out = tmp_path / "board.json"
    board = _csv(capsys, str(runs), *FAST, "--group", "all", "-t", "sts12", "-t", "mr", "--json", str(out))
    assert board["label"].tolist() == ["good", "gru (3 seeds)", "bad"]  # sorted by the overall score
    assert board["rank"].tolist() == [1, 2, 3] and (board["rank_low"] <= board["rank"]).all()
    assert (board["rank"] <= board["rank_high"]).all()
    expected = (board["sts12"] + board["mr"] / 100) / 2  # the common scale: r as r, % as a proportion
    assert np.allclose(board["overall"], expected)
    assert (board["overall_low"] < board["overall"]).all() and (board["overall"] < board["overall_high"]).all()
    assert board["borda"].tolist() == [4.0, 2.0, 0.0]  # two tasks, a point per model beaten on each
    assert board["group"].tolist()[0] == "best" and board["group"].tolist()[2] == "below the best"
    payload = json.loads(out.read_text())
    assert payload["method"]["resamples"] == 60 and payload["method"]["seed"] == 1111
    assert payload["method"]["overall_tasks"] == ["sts12", "mr"]
    again = _csv(capsys, str(runs), *FAST, "--group", "all", "-t", "sts12", "-t", "mr", "--no-groups")
    assert np.allclose(again["rank_high"], board["rank_high"]) and np.allclose(again["sts12_low"], board["sts12_low"])


def test_the_terminal_table_states_the_method(seeded, capsys):
    runs, *_ = seeded
    code, out, err = cli(capsys, "leaderboard", str(runs), *FAST, "-t", "sts12", "--no-groups")
    assert code == 0, err
    assert "| 1 [1–" in out and "gru (3 seeds)" in out and "sts12 (pearson_mean)" in out
    assert "60 replicates, seed 1111" in out and "Hall & Miller 2009" in out


PAIRS_TOML = '''
[[task]]
name = "lb-pairs"
base = "pair-classification"
data = ["pairs.tsv"]
columns = { sentence1 = "left", sentence2 = "right", gold = "label" }

[[task]]
name = "lb-search"
base = "retrieval"
data = ["queries.tsv", "documents.tsv"]
'''
WORDS = "cat dog sun moon tree rock bird fish lake road star rain".split()


@pytest.fixture
def declared(tmp_path):
    """A plugin pair task scored per subset (two subsets) and a plugin retrieval task, declared in a TOML file."""
    folder = tmp_path / "tasks"
    folder.mkdir()
    rows = [(subset, f"{a} {b}", f"{b} {a}" if y else f"{c} {c}", y)
            for subset in ("news", "forum") for a, b, c, y in zip(WORDS, WORDS[3:] + WORDS[:3], WORDS[6:] + WORDS[:6],
                                                                 [1, 0] * 6)]
    (folder / "pairs.tsv").write_text("subset\tleft\tright\tlabel\n" + "".join("\t".join(map(str, r)) + "\n"
                                                                              for r in rows))
    (folder / "queries.tsv").write_text("query\tsentence\trelevant\n" + "".join(
        f"q{i}\t{w} {w}\td{i}\n" for i, w in enumerate(WORDS)))
    (folder / "documents.tsv").write_text("document\tsentence\n" + "".join(
        f"d{i}\t{w} and {WORDS[(i + 1) % 12]}\n" for i, w in enumerate(WORDS)))
    (folder / "tasks.toml").write_text(PAIRS_TOML)
    include_file(folder / "tasks.toml")
    yield tmp_path
    for name in ("lb-pairs", "lb-search"):
        if name in TASKS.names():
            TASKS.unregister(name)


class Shifted(LetterCounts):
    name = "shifted"

    def config(self):
        return {"shift": 2}

    def _encode(self, sentences, batch_size):
        return super()._encode(sentences, batch_size) + 2.0


def _declared_runs(declared):
    return [run_tasks(encoder, ["lb-pairs", "lb-search"], cache=False, options=TaskOptions(bootstrap=20))
            .save(declared / "runs") for encoder in (LetterCounts(), Shifted())]


def test_a_main_score_recorded_per_subset_is_shown_through_its_mean(declared, capsys):
    """Bug: a plugin pair task scored per subset (AUC on each, no overall subset) disappeared from the table."""
    folders = _declared_runs(declared)
    board = _csv(capsys, str(declared / "runs"))
    assert "lb-pairs" in board.columns  # was missing: no subset "all" or "test" held its AUC
    board = board.set_index("label")
    for folder in folders:
        metrics = Run.open(folder).metrics.query("task == 'lb-pairs' and metric == 'auc'")
        assert sorted(metrics["subset"]) == ["forum", "news"]
        label = Run.open(folder).record.label or Run.open(folder).record.encoder.name
        assert board.loc[label, "lb-pairs"] == pytest.approx(metrics["value"].mean())
        assert board.loc[label, "lb-pairs_low"] <= board.loc[label, "lb-pairs_high"]


def test_a_task_no_longer_installed_shows_the_main_score_its_runs_recorded(declared, capsys):
    """Bug: without --include, a plugin retrieval task showed r1 (the first metric recorded), not its declared MRR."""
    folders = _declared_runs(declared)
    for name in ("lb-pairs", "lb-search"):
        TASKS.unregister(name)
    code, out, err = cli(capsys, "leaderboard", str(declared / "runs"), "-t", "lb-search", "--json", "-")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["columns"] == [{"task": "lb-search", "metric": "mrr", "main_score_known": True,
                                   "per_subset": False, "resampled": True}]
    mrr = Run.open(folders[0]).metrics.query("metric == 'mrr'")["value"].iloc[0]
    assert payload["rows"][[r["runs"] for r in payload["rows"]].index(folders[0].name)]["lb-search"] == \
        pytest.approx(mrr)


COMPARATORS = '''
[[comparator]]
name = "smith2024/sif"
citation = "Smith et al. (2024), Table 2"
task = "sts12"
metric = "pearson_mean"
value = 0.55
n = 350
ci = [0.50, 0.60]

[[comparator]]
name = "smith2024/sif"
citation = "Smith et al. (2024), Table 2"
task = "mr"
metric = "accuracy"
value = 77.0
n = 400
'''


def test_published_numbers_from_a_file_are_unpaired_rows(seeded, capsys, tmp_path):
    runs, *_ = seeded
    (tmp_path / "published.toml").write_text(COMPARATORS)
    board = _csv(capsys, str(runs), *FAST, "--group", "all", "-t", "sts12", "-t", "mr", "--comparators",
                 str(tmp_path / "published.toml"))
    row = board.set_index("label").loc["file:smith2024/sif"]
    assert not row["paired"] and row["protocol"] == "published" and row["citation"].startswith("Smith et al.")
    assert row["sts12"] == 0.55 and row["sts12_low"] == 0.50 and row["mr"] == 77.0
    assert row["overall"] == pytest.approx((0.55 + 0.77) / 2) and np.isnan(row["rank"]) and np.isnan(row["borda"])
    assert board["rank"].dropna().tolist() == [1, 2, 3]  # the paired models are ranked among themselves
    code, out, err = cli(capsys, "leaderboard", str(runs), *FAST, "-t", "sts12", "--no-groups", "--comparators",
                         str(tmp_path / "published.toml"))
    assert "file:smith2024/sif (published, unpaired)" in out


@pytest.mark.parametrize("change, message", [
    (("task = \"mr\"", "task = \"mystery\""), "comparator 2: unknown task 'mystery'"),
    (("metric = \"accuracy\"", "metric = \"f1-score\""), "comparator 2: task mr has no metric 'f1-score'"),
    (("n = 400\n", ""), "comparator 2 lacks n"),
    (("value = 77.0", "value = \"77%\""), "comparator 2: value = '77%' is not a finite number"),
    (("value = 0.55", "value = 55.0"), "comparator 1: value = 55.0 is 55, not a correlation in [-1, 1]: it looks "
                                       "like r × 100; give 0.55"),
    (("value = 0.55", "value = -1.5e3"), "comparator 1: value = -1500.0 is -1500, not a correlation in [-1, 1]"),
    (("ci = [0.50, 0.60]", "ci = [0.50, 60.0]"), "comparator 1: ci = 60.0 is 60, not a correlation"),
    (("n = 350", "n = 3"), "comparator 1: pearson_mean has n = 3; a Fisher-z interval needs a whole number of "
                           "at least 4 pairs"),
    (("value = 77.0", "value = 177.0"), "comparator 2: value = 177.0 is 177, not a percentage in [0, 100]"),
])
def test_a_bad_comparators_file_is_one_line(seeded, capsys, tmp_path, change, message):
    runs, *_ = seeded
    (tmp_path / "published.toml").write_text(COMPARATORS.replace(*change))
    code, out, err = cli(capsys, "leaderboard", str(runs), "--comparators", str(tmp_path / "published.toml"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_published_numbers_from_a_file_join_compare_as_approximate_rows(seeded, capsys, tmp_path):
    _, good, _, bad = seeded
    (tmp_path / "published.toml").write_text(
        '[[comparator]]\nname = "smith2024/sif"\ncitation = "Smith et al. (2024)"\ntask = "sts12"\n'
        'metric = "pearson"\nsubset = "MSRvid"\nvalue = 0.7\nn = 150\n')
    code, out, err = cli(capsys, "compare", str(good), str(bad), "--comparators", str(tmp_path / "published.toml"),
                         "--test-resamples", "50", "--json", "-")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["models"] == ["good", "bad", "file:smith2024/sif"]
    rows = [r for r in payload["comparisons"] if r["model_b"] == "file:smith2024/sif"]
    assert {(r["model_a"], r["subset"], r["approximate"]) for r in rows} == {("good", "MSRvid", True),
                                                                            ("bad", "MSRvid", True)}


def test_a_re_run_seed_counts_once_and_its_model_still_gets_its_claim(seeded, capsys, tmp_path):
    """A seed evaluated twice (one fingerprint) is one seed, and the model's claim against the best is found
    under the name the claims give its newest runs (it was "no claim" when the re-run was counted as a seed)."""
    runs, *_ = seeded
    make_run(tmp_path, "gru", noise_scale=1.0, rank_shift=2, accuracy=0.8, seed=1)
    board = _csv(capsys, str(runs), *FAST, "--group", "all", "-t", "sts12", "-t", "mr").set_index("label")
    assert board.loc["gru (3 seeds)", "seeds"] == 3
    assert board.loc["gru (3 seeds)", "group"] in ("below the best", "not distinguishable from the best")


def test_an_stsb_run_under_senteval_s_labels_is_the_standard_protocol():
    """``stsb`` records its labels protocol as a description, not the option's value: every run under the default
    was shown as a protocol variant (``labels=senteval: ...``) in ``runs`` and the leaderboard; only the fix is."""
    from benchbox.comparison.variants import variant
    from benchbox.tasks.relatedness import STSB

    standard = {"labels": STSB()._label_mode(False), "seed": 1111}
    fixed = {"labels": STSB()._label_mode(True), "seed": 1111}
    assert variant("stsb", standard) == ""
    assert variant("stsb", fixed) == f"labels={fixed['labels']}"


def test_a_model_whose_seeds_hold_different_tasks_gets_its_group_from_the_seeds_on_the_group_s_tasks(
        tmp_path, capsys, monkeypatch):
    """Bug (issue 55): a model with seeds 1 and 2 evaluated on one task and seed 0 on sts12 stopped the leaderboard
    with "... share no task among sts12" (the claims took every seed's newest run, whatever it held), although both
    models have sts12 rows; the groups now use the seeds each model has on the group's tasks."""
    import tests.comparison.test_compare as runs_module
    from benchbox.storage.runs import write_run

    def runs_of(tasks, *args, **kwargs):
        def write(runs_dir, name, manifest, metrics, items):
            return write_run(runs_dir, name, manifest, metrics[metrics["task"].isin(tasks)],
                             {t: frame for t, frame in items.items() if t in tasks})
        monkeypatch.setattr(runs_module, "write_run", write)
        return runs_module.make_run(tmp_path, *args, **kwargs)

    runs_of(["sts12", "retrieval", "mr"], "good", noise_scale=0.3, rank_shift=0, accuracy=0.85)
    runs_of(["sts12"], "gru", noise_scale=1.0, rank_shift=2, accuracy=0.8, seed=0)
    for seed in (1, 2):
        runs_of(["retrieval"], "gru", noise_scale=1.0, rank_shift=2, accuracy=0.8, seed=seed)
    board = _csv(capsys, str(tmp_path / "runs"), *FAST).set_index("label")  # was exit 2: "share no task among sts12"
    assert board.loc["gru (3 seeds)", "seeds"] == 3
    assert board.loc["good", "group"] == "best"
    assert board.loc["gru (3 seeds)", "group"] == "below the best"  # noise 1.0 against 0.3 on 350 pairs

def test_the_leaderboard_ranks_runs_among_an_mteb_results_folder(capsys, tmp_path):
    """Issue 50: the leaderboard refused mteb:PATH ("neither a benchbox run folder nor a folder of runs"); now
    its models are published rows and every standard run gets a rank among them all, with an approximate
    interval (stated under the table), and the skipped files are summed up in a few lines. GloVe-BOW on the
    embedded STS-B test set against the committed sample of the public mteb results repository."""
    from pathlib import Path

    runs = tmp_path / "runs"
    run_tasks("glove-bow", ["stsb-cosine"], options=TaskOptions(bootstrap=0), cache=False).save(runs)
    sample = Path(__file__).parents[1] / "data" / "mteb_results_sample"
    board = _csv(capsys, str(runs), f"mteb:{sample}", *FAST, "-t", "stsb-cosine")
    published = board[~board["paired"]]
    assert len(published) == 4 and published["label"].str.startswith("mteb:").all()
    ranked = board.dropna(subset=["rank_all"])
    assert len(ranked) == 5 and ranked["rank_all"].tolist() == [1, 2, 3, 4, 5]  # sorted by the overall score
    assert ((ranked["rank_all_low"] <= ranked["rank_all"]) & (ranked["rank_all"] <= ranked["rank_all_high"])).all()
    code, out, err = cli(capsys, "leaderboard", str(runs), f"mteb:{sample}", *FAST, "-t", "stsb-cosine")
    assert code == 0 and "rank among all [95%, approx.]" in out and "Rank among all (approximate)" in out
    assert "overall (stsb-cosine, ×100)" in out  # not "semantic": the runs hold none of its tasks (said in a note)
    assert "mteb: 4 model(s) read (6 file(s) converted from mteb's format before 1.11)" in err
    assert "glove-bow: rank 5 [5–5] among 5 (runs and published rows, approximate 95% interval)" in err
    code, out, err = cli(capsys, "leaderboard", str(runs), f"mteb:{sample}", *FAST, "-t", "stsb-cosine", "--html",
                         str(tmp_path / "board.html"))
    page = (tmp_path / "board.html").read_text(encoding="utf-8")
    standing = page.index('<p class="standing">glove-bow: rank 5 [5–5] among 5 (runs and published rows')
    assert code == 0 and standing < page.index("<table")  # the first screen answers, above hundreds of rows


def test_published_rows_never_take_a_runs_rank_away(capsys, tmp_path):
    """Issue 50: runs holding stsb-cosine and sickr-cosine beside paper:merkx2019 (STS12-16 rows) switched the
    overall score to the semantic group's tasks, which the runs lack: every rank became "—" without a word. The
    overall score is now over the tasks the runs hold, and a row without one says what it lacks."""
    runs = tmp_path / "runs"
    run_tasks("glove-bow", ["stsb-cosine", "sickr-cosine"], options=TaskOptions(bootstrap=0), cache=False).save(runs)
    board = _csv(capsys, str(runs), "paper:merkx2019/glove-bow", *FAST, "--no-groups")
    run = board[board["paired"]].iloc[0]
    assert run["rank"] == 1 and run["overall"] == run["overall"]
    paper = board[~board["paired"]].iloc[0]
    assert paper["overall"] != paper["overall"] and paper["no_overall"] == "no stsb-cosine (spearman), sickr-cosine (spearman)"
    code, out, err = cli(capsys, "leaderboard", str(runs), "paper:merkx2019/glove-bow", *FAST, "--no-groups")
    assert code == 0 and "— (no stsb-cosine (spearman), sickr-cosine (spearman))" in out


def test_the_memory_check_counts_the_published_rows(seeded, capsys, tmp_path, monkeypatch):
    """Issue 50: the leaderboard's memory estimate held the largest task's items only, so thousands of published
    rows (an mteb results repository, a long comparators file) could pass it and then fail in an allocation. On a
    machine with 32 MiB available (28.8 MiB to use), 600 published rows at 1,000 resamples need about 600 × (1 task +
    3) × 8 B × 1000 = 18.3 MiB beyond the items' 64 B × 350 × 1000 = 21.4 MiB: refused in one line naming the rows;
    20 rows fit."""
    import benchbox.memory

    runs, *_ = seeded
    monkeypatch.setattr(benchbox.memory, "available_bytes", lambda device="cpu": 32 * 2**20)
    entry = ('[[comparator]]\nname = "paper/m{i}"\ncitation = "a table"\ntask = "sts12"\nmetric = "pearson_mean"\n'
             'value = {v}\nn = 350\n')
    for count, refused in ((600, True), (20, False)):
        path = tmp_path / f"published{count}.toml"
        path.write_text("".join(entry.format(i=i, v=0.3 + 0.4 * i / count) for i in range(count)))
        code, out, err = cli(capsys, "leaderboard", str(runs), "--comparators", str(path), "-t", "sts12",
                             "--resamples", "1000", "--csv", "-")
        if refused:
            assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
            assert f"rows on 1 tasks" in err and re.search(r"use --resamples \d+ or fewer", err), err
        else:
            assert code == 0, err
