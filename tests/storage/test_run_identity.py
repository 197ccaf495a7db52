"""A run knows exactly what it evaluated, and reuse, seeds, the cache, the leaderboard and the comparison follow
from that identity (issue #24): each case below gave a wrong answer with exit 0 before.

Everything runs on the embedded STS-B test (``stsb-cosine``) with small duck-typed plugin encoders registered
here, as an out-of-tree plugin would be (``module:attribute`` and registry names go through the same loader).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchbox.storage.cache import EmbeddingCache
from benchbox.comparison.compare import compare
from benchbox.errors import BenchboxError
from benchbox.evaluation import run_tasks
from benchbox.registry import ENCODERS, TASKS
from benchbox.comparison.leaderboard import Settings, build, load_sources
from benchbox.results import load_runs
from benchbox.comparison.sources import not_seeds, resolve_sources, seed_groups
from benchbox.storage.runs import MANIFEST, Run
from benchbox.task_contract.options import TaskOptions
from benchbox.tasks.sts_cosine import STSBCosine
from benchbox.comparison.settings import CompareSettings
from tests.comparison.test_compare import make_run

BOOT = 20
OPTIONS = TaskOptions(bootstrap=BOOT)


class Hashed:
    """A seeded random projection of character trigram counts: ``dim`` and ``seed`` are its options, ``seed``
    its declared seed option, and its fingerprint names both (as a careful plugin's would)."""

    name = "hashed"
    seed_option = "seed"

    def __init__(self, dim: int = 32, seed: int = 0) -> None:
        self.dim, self.seed = int(dim), int(seed)
        self.projection = np.random.default_rng(self.seed).standard_normal((512, self.dim))

    def fingerprint(self) -> str:
        return f"hashed-{self.dim}-{self.seed}"

    def encode(self, sentences):
        counts = np.zeros((len(sentences), 512))
        for i, sentence in enumerate(sentences):
            for j in range(len(sentence) - 2):
                counts[i, hash(sentence[j:j + 3]) % 512] += 1
        return counts @ self.projection + 1e-3


class SameFingerprint(Hashed):
    """A plugin that keeps its fingerprint whatever its width (a plugin bug benchbox must survive)."""

    name = "same-fingerprint"

    def fingerprint(self) -> str:
        return "always-the-same"


class VersionedStsb(STSBCosine):
    """A plugin task whose declared version a test bumps."""

    name = "versioned-stsb"
    version = "1"


ENCODERS.register("hashed", Hashed)
ENCODERS.register("same-fingerprint", SameFingerprint)
TASKS.register("versioned-stsb", VersionedStsb)


@pytest.fixture
def empty(tmp_path):
    (tmp_path / "empty").mkdir()
    return tmp_path / "empty"


def _eval(spec, runs: Path, data: Path, tasks=("stsb-cosine",), cache=False, **encoder_options):
    from benchbox.encoding.loading import load_encoder

    encoder = load_encoder(spec, **encoder_options)
    return run_tasks(encoder, list(tasks), data_dir=data, options=OPTIONS, cache=cache).save(runs)


def _compare(specs, runs: Path, data: Path, log, tasks=("stsb-cosine",), **kwargs):
    return compare([str(s) for s in specs], list(tasks), data_dir=data, runs_dir=runs, settings=CompareSettings(n_boot=BOOT),
                   options=OPTIONS, log=log.append, **kwargs)


def test_the_manifest_records_the_encoder_as_built_and_each_task_implementation(tmp_path, empty):
    folder = _eval("hashed", tmp_path / "runs", empty, dim="16")
    record = json.loads((folder / MANIFEST).read_text())
    encoder = record["encoder"]
    assert encoder["source"] == "local:hashed" and encoder["class"] == "tests.storage.test_run_identity.Hashed"
    assert encoder["options"] == {"dim": 16, "seed": 0}  # given (typed by the signature) and defaulted
    assert encoder["seed_option"] == "seed" and encoder["seed"] == 0 and encoder["dim"] == 16
    task = record["tasks"]["stsb-cosine"]["implementation"]
    assert task["class"] == "benchbox.tasks.sts_cosine.STSBCosine" and task["version"] == STSBCosine.version
    assert task["provider"]["distribution"] == "benchbox"
    typed = Run.open(folder).record
    assert typed.encoder.options == {"dim": 16, "seed": 0} and typed.tasks["stsb-cosine"].version == STSBCosine.version


@pytest.mark.slow
def test_a_run_is_not_reused_after_the_task_version_or_the_plugin_version_changes(tmp_path, empty, monkeypatch):
    runs, log = tmp_path / "runs", []
    _compare(["hashed", "glove-bow"], runs, empty, log, tasks=("versioned-stsb",))
    first = {p.name for p in runs.iterdir()}
    _compare(["hashed", "glove-bow"], runs, empty, log := [], tasks=("versioned-stsb",))
    assert sum(line.startswith("reusing run") for line in log) == 2 and {p.name for p in runs.iterdir()} == first

    monkeypatch.setattr(VersionedStsb, "version", "2")  # the plugin task's numbers changed
    _compare(["hashed", "glove-bow"], runs, empty, log := [], tasks=("versioned-stsb",))
    assert not any(line.startswith("reusing run") for line in log)
    assert any(re.search(r"not reusing run .* tasks\.versioned-stsb\.implementation\.version \('1' vs '2'\)", line)
               for line in log), log

    hashed = max((p for p in runs.iterdir() if "hashed" in p.name), key=lambda p: p.name)
    manifest = json.loads((hashed / MANIFEST).read_text())
    manifest["encoder"]["provider"] = {"distribution": "hashed-plugin", "version": "0.2.0"}  # written by 0.2.0
    (hashed / MANIFEST).write_text(json.dumps(manifest))
    _compare(["hashed", "glove-bow"], runs, empty, log := [], tasks=("versioned-stsb",))
    assert any(f"not reusing run {hashed}" in line and "encoder.provider.distribution ('hashed-plugin' vs None)"
               in line for line in log), log


def test_an_encoder_option_variant_is_not_a_seed_of_the_default(tmp_path, empty):
    runs = tmp_path / "runs"
    seeds = [_eval("hashed", runs, empty, seed=str(s)) for s in (1, 2, 3)]
    wider = _eval("hashed", runs, empty, seed="1", dim="64")
    sources = resolve_sources([str(p) for p in [*seeds, wider]])
    groups = seed_groups(sources)
    assert [sorted(s.path for s in members) for members in groups.values()] == [sorted(seeds)]
    log = []
    _compare([*seeds, wider, "glove-bow"], runs, empty, log, baseline="glove-bow")
    assert any("are not seeds of one model: encoder.options.dim (32 vs 64)" in line
               or "are not seeds of one model: encoder.dim (32 vs 64)" in line for line in log), log


def test_a_run_named_twice_counts_once_in_compare(tmp_path, empty):
    runs = tmp_path / "runs"
    one, other = _eval("hashed", runs, empty), _eval("glove-bow", runs, empty)
    log = []
    comparison = _compare([one, one, other], runs, empty, log)
    once = _compare([one, other], runs, empty, [])
    assert len(comparison.models) == 2 and comparison.table.equals(once.table)  # not two copies, Holm over one
    assert any("is named more than once: it counts once" in line for line in log)


def test_a_plugin_that_changes_width_under_one_fingerprint_gets_its_own_cache(tmp_path, empty):
    cache = EmbeddingCache(tmp_path / "cache")
    narrow = _eval("same-fingerprint", tmp_path / "runs", empty, cache=cache, dim="8")
    wide = _eval("same-fingerprint", tmp_path / "runs", empty, cache=EmbeddingCache(tmp_path / "cache"), dim="16")
    folders = sorted(p.name for p in (tmp_path / "cache").iterdir() if p.is_dir())
    assert len(folders) == 2 and [f.split("-d")[1].split("-")[0] for f in folders] == ["16", "8"]
    assert json.loads((wide / MANIFEST).read_text())["encoder"]["dim"] == 16
    spearman = [Run.open(r).metrics.query("metric == 'spearman'")["value"].iloc[0] for r in (narrow, wide)]
    assert spearman[0] != spearman[1]  # the 16-wide run was scored on 16-wide vectors, not the cached 8-wide


@pytest.mark.slow
def test_compare_refuses_runs_that_read_different_data_unless_allowed(tmp_path):
    checksums = {"sts12": {"protocol": {}, "data_checksums": {"sts/STS.gs.a.txt": "aaa"}}}
    a = make_run(tmp_path, "enc-a", 1.0, 0, 0.8, tasks=checksums)
    changed = {"sts12": {"protocol": {}, "data_checksums": {"embedded:sts/STS.gs.a.txt": "bbb"}}}
    b = make_run(tmp_path, "enc-b", 1.5, 0, 0.8, tasks=changed)
    with pytest.raises(BenchboxError, match=r"read different data: sts/STS.gs.a.txt \(its sha256 differs\)"):
        compare([str(a), str(b)], ["sts12"], settings=CompareSettings(n_boot=BOOT))
    allowed = compare([str(a), str(b)], ["sts12"], settings=CompareSettings(n_boot=BOOT), allow_protocol_mismatch=True)
    assert any("read different data" in line for line in allowed.protocol_mismatches)
    same = make_run(tmp_path, "enc-c", 1.5, 0, 0.8, tasks={"sts12": {"protocol": {}, "data_checksums": {
        "embedded:sts/STS.gs.a.txt": "aaa"}}})
    assert compare([str(a), str(same)], ["sts12"], settings=CompareSettings(n_boot=BOOT)).protocol_mismatches == []  # embedded copy = file


def test_the_leaderboard_shows_the_sts_year_score_and_keeps_protocol_variants_apart(tmp_path):
    standard = make_run(tmp_path, "enc", 1.0, 0, 0.8, fingerprint="fp",
                        tasks={"sts12": {"protocol": {"text": "senteval"}}})
    raw = make_run(tmp_path, "enc", 1.0, 0, 0.8, fingerprint="fp", seed=5,
                   tasks={"sts12": {"protocol": {"text": "raw"}}})
    board = build(load_sources([standard, raw]), ["sts12"], settings=Settings(n_boot=50), groups=False)
    assert [c.metric for c in board.columns] == ["pearson_mean"]
    board = board.frame
    expected = {r: Run.open(r).metrics.query("metric == 'pearson_mean' and subset == 'all'")["value"].iloc[0]
                for r in (standard, raw)}
    assert board.set_index("protocol")["sts12"].to_dict() == {"standard": expected[standard],
                                                             "text=raw": expected[raw]}
    first_subset = Run.open(standard).metrics.query("metric == 'pearson'")["value"].iloc[0]
    assert first_subset not in set(board["sts12"])  # never a first subset's Pearson


@pytest.mark.slow
def test_report_compare_tests_what_compare_tests(tmp_path, empty):
    """``report --compare`` corrects over compare's family (it used ``family="pair"``), and says so."""
    from benchbox.reports import write_report
    from benchbox.reports.significance import compare_pairs

    runs = tmp_path / "runs"
    folders = [str(_eval(spec, runs, empty, **options))
               for spec, options in (("hashed", {}), ("glove-bow", {}), ("hashed", {"seed": "4"}))]
    comparison = compare(folders, ["stsb-cosine"])
    pairwise = compare_pairs(resolve_sources(folders))
    assert pairwise.settings.family == comparison.settings.family == "all"
    assert np.allclose(pairwise.table["p_holm"], comparison.table["p_holm"])
    assert list(pairwise.table["verdict"]) == list(comparison.table["verdict"])
    report = write_report(folders, tmp_path / "report.md", compare=True).read_text()
    assert "Holm-corrected over every row of every pair compared" in report


STUDY = """
[study]
tasks = ["stsb-cosine", "sickr-cosine"]
jobs = 2

[[encoder]]
name = "glove-bow"

[[encoder]]
name = "glove-bow"
options = { lowercase = "false" }

[[encoder]]
name = "tests.helpers:LetterCounts"
"""


def _appendix_verdicts(report: str) -> dict[tuple[str, ...], str]:
    """(A, B, task, subset, metric) → verdict, from the report's appendix tables."""
    found, pair = {}, None
    for line in report[report.index("## Appendix: all pairwise tests"):].splitlines():
        if heading := re.match(r"\*A = (.+), B = (.+): every test", line):
            pair = heading.groups()
        elif pair and line.startswith("| ") and not line.startswith(("| A is", "| ---")):
            verdict, task, subset, metric = [cell.strip() for cell in line.strip("|").split("|")[:4]]
            found[(*pair, task, subset, metric)] = verdict
    return found


@pytest.mark.slow
def test_a_study_comparison_and_its_report_agree_verdict_for_verdict(tmp_path):
    import subprocess
    import sys

    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "benchbox", "study", str(study), "--out", str(tmp_path / "out"), "-q"],
                          cwd=repo, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    comparison = json.loads((tmp_path / "out" / "comparison.json").read_text())
    assert comparison["family"] == "all" and len(comparison["models"]) == 3
    rows = {(r["model_a"], r["model_b"], r["task"], r["subset"], r["metric"]): r["verdict"]
            for r in comparison["comparisons"]}
    report = (tmp_path / "out" / "report.md").read_text()
    assert _appendix_verdicts(report) == rows and len(rows) == 12
    assert "Holm-corrected over every row of every pair compared" in report


@pytest.mark.realdata("flickr8k/Flickr8k.token.txt")
def test_trained_seeds_are_grouped_from_their_runs_alone(tmp_path, empty):
    """Evaluation runs of char-GRUs trained with seeds 1 and 2 record the training seed and configuration: they
    group as seeds without --seeds; one trained with another hidden size is named as a different model."""
    from benchbox.training.config import TrainConfig
    from benchbox.training.trainer import Trainer

    tiny = dict(encoder="char-gru", dataset="flickr8k", visual="random", epochs=1, cycle_epochs=1,
                max_captions=160, threads=1)
    models = [Trainer.from_config(TrainConfig(**tiny, hidden=hidden, seed=seed), tmp_path / f"h{hidden}-s{seed}").run()
              for hidden, seed in ((12, 1), (12, 2), (16, 1))]
    runs = [_eval(str(model), tmp_path / "runs", empty) for model in models]
    encoders = [json.loads((run / MANIFEST).read_text())["encoder"] for run in runs]
    assert [e["seed"] for e in encoders] == [1, 2, 1] and encoders[0]["training"]["hidden"] == 12
    sources = resolve_sources([str(r) for r in runs])
    assert [sorted(s.path for s in members) for members in seed_groups(sources).values()] == [sorted(runs[:2])]
    assert any("training.hidden (12 vs 16)" in line for line in not_seeds(sources))


def test_a_run_is_not_reused_after_the_task_changes_how_its_rows_pair(tmp_path, empty, monkeypatch):
    """Issue #54: item_keys and each metric's kind decide pairing, so they are part of the run's identity (a run
    written under other item_keys, version unchanged, was reused)."""
    from benchbox.data.root import DataRoot
    from benchbox.encoding.loading import load_encoder
    from benchbox.reuse import find_reusable_run
    from benchbox.storage.identity import encoder_record

    runs = tmp_path / "runs"
    folder = _eval("hashed", runs, empty, tasks=("versioned-stsb",))
    encoder = encoder_record(load_encoder("hashed"))

    def reusable(log):
        return find_reusable_run(runs, encoder=encoder, tasks=[VersionedStsb()], options=OPTIONS,
                                 data=DataRoot(empty), log=log.append)

    assert reusable([]).path == folder
    monkeypatch.setattr(VersionedStsb, "item_keys", ("subset", "item", "sentence1"))
    assert reusable(log := []) is None
    assert any("tasks.versioned-stsb.pairing.item_keys" in line for line in log), log


def test_changing_the_tests_seed_reuses_both_runs(tmp_path, empty):
    """Issue #54: ``--test-seed`` is the tests' resampling seed, apart from the evaluation seed that identifies a
    run; changing it re-evaluates nothing and changes the bootstrap draws only."""
    runs, log = tmp_path / "runs", []
    first = _compare(["hashed", "glove-bow"], runs, empty, log)
    written = {p.name for p in runs.iterdir()}
    again = compare(["hashed", "glove-bow"], ["stsb-cosine"], data_dir=empty, runs_dir=runs, options=OPTIONS,
                    settings=CompareSettings(n_boot=BOOT, test_seed=7), log=(log := []).append)
    assert sum(line.startswith("reusing run") for line in log) == 2, log
    assert {p.name for p in runs.iterdir()} == written
    assert again.settings.test_seed == 7 and again.settings.seed == first.settings.seed
    assert list(again.table["value_a"]) == list(first.table["value_a"])  # the same runs' numbers
