"""The plugin kit (benchbox.testing): the project's own encoders and tasks, the test plugin package and
docs/plugins.md's worked example conform; a deliberately broken plugin (tests/plugin_bad's ``nonconforming``
module) gets one line per rule it breaks, each saying what to fix."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from benchbox.include import include_file
from benchbox.registry import TASKS, PluginWarning
from benchbox.testing import ConformanceError, HashingEncoder, check_encoder, check_task, encoder_failures, task_failures
from tests.helpers import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "custom_metric.py"
BAD = "benchbox_badplugin.nonconforming"


@pytest.fixture
def example_task():
    """docs/examples/custom_metric.py included (its task ``paraphrase-ap`` registered), then forgotten."""
    include_file(EXAMPLE)
    yield "paraphrase-ap"
    TASKS.unregister("paraphrase-ap")


@pytest.mark.parametrize("encoder", ["glove-bow", HashingEncoder, "tfidf", "benchbox-toyplugin:tfidf"])
def test_the_project_encoders_and_the_plugin_package_encoder_conform(encoder):
    check_encoder(encoder)


@pytest.mark.parametrize("task", ["stsb-cosine", "sickr-cosine", "toy-paraphrase"])
def test_tasks_with_data_of_their_own_conform_without_a_data_root(task, tmp_path):
    check_task(task, data_dir=tmp_path)  # an empty data root: the embedded STS-B/SICK copy, the plugin's own file


def test_the_worked_custom_metric_of_the_docs_conforms_and_compare_tests_it(example_task, tmp_path, capsys):
    check_task(example_task, data_dir=tmp_path)
    check_task(example_task, "glove-bow", data_dir=tmp_path)
    runs = tmp_path / "runs"
    for encoder in ("glove-bow", "benchbox.testing.hashing:HashingEncoder"):
        code, _, err = cli(capsys, "--include", str(EXAMPLE), "eval", encoder, "-t", example_task, "--bootstrap", "100",
                           "--runs-dir", str(runs), "--data-dir", str(tmp_path))
        assert code == 0, err
    code, out, err = cli(capsys, "--include", str(EXAMPLE), "compare", *map(str, sorted(runs.iterdir())),
                         "--json", "-", "--data-dir", str(tmp_path))
    assert code == 0, err
    rows = {row["metric"]: row for row in json.loads(out)["comparisons"]}
    assert set(rows) == {"auc", "ap"}
    assert rows["ap"]["test"] == "bootstrap" and math.isfinite(rows["ap"]["p"]) and rows["ap"]["summary"]


def test_an_encoder_returning_half_precision_and_nan_gets_a_line_per_rule():
    assert [line.split(":")[0] for line in encoder_failures(f"{BAD}:HalfPrecision")] == [
        "option lowercase", "seed_option is 'seed', but the constructor takes no option 'seed'",
        "encode returned dtype float16", "encode returned NaN or infinite values for 1 of 8 sentences, first ''"]


def test_a_random_batch_dependent_encoder_without_fingerprint_gets_a_line_per_rule():
    with pytest.warns(PluginWarning, match="has no fingerprint"):
        found = encoder_failures(f"{BAD}:Drifting")
    assert [line.split(":")[0] for line in found] == [
        "encode([]) returned shape (0,), not (0, 3)",
        "encoding the same sentences twice gave different vectors",
        "the vector of 'A man is playing a guitar.' depends on the sentences encoded with it",
        "two builds with the same options give different vectors",
        "it has no fingerprint"]


def test_a_seed_missing_from_the_fingerprint_is_found():
    assert encoder_failures(f"{BAD}:SeedBlind") == [
        "seed=0 and seed=1 give different vectors under one fingerprint, so the cache serves one seed's vectors to the "
        "other: make the fingerprint depend on seed"]


def test_a_task_with_broken_metadata_gets_a_line_per_rule_before_it_is_evaluated():
    from benchbox_badplugin.nonconforming import BadMetadata

    assert [line.split(":")[0] for line in task_failures(BadMetadata)] == [
        "name", "description is empty", "group and order are Task's default ('other', 1000)",
        "main_score 'accuracy' is not among its metrics (pearson)", "the default of option pairs is refused by its own "
        "declaration"]


def test_a_task_returning_no_items_and_an_undeclared_metric_gets_a_line_per_rule():
    from benchbox_badplugin.nonconforming import MissingColumn, NoItems

    starts = ["it reports metric coverage, which metrics does not declare",
              "its main score pearson is not among the metrics it reported (coverage)",
              "it returned no per-item rows", "its protocol does not record option pairs under its protocol_key 'pairs'"]
    found = task_failures(NoItems)
    assert len(found) == len(starts) and all(line.startswith(start) for line, start in zip(found, starts))
    assert task_failures(MissingColumn) == [
        "evaluating it failed: task missing-column: its per-item rows lack the column(s) score (read by the "
        "'correlation' test of metric pearson; columns given: subset, item, gold): the task's evaluate must return them"]


def test_a_check_raises_one_assertion_listing_every_problem():
    from benchbox_badplugin.nonconforming import NoItems

    with pytest.raises(ConformanceError) as raised:
        check_task(NoItems)
    assert isinstance(raised.value, AssertionError)
    lines = str(raised.value).splitlines()
    assert lines[0] == "task NoItems does not conform (4 problems):" and len(lines) == 5
    assert all(line.startswith("- ") for line in lines[1:])


class _Forgetful:
    """Computes its vectors and forgets to return them."""

    name, dim = "forgetful", 2

    def encode(self, sentences):
        np.ones((len(sentences), self.dim), np.float32)

    def fingerprint(self):
        return "forgetful-1"


class _NoEmpty:
    """Returns good vectors, and raises on no sentences (as scikit-learn transformers do)."""

    name, dim = "no-empty", 2

    def encode(self, sentences):
        if not sentences:
            raise ValueError("Found array with 0 sample(s)")
        return np.array([[len(s), s.count(" ")] for s in sentences], np.float32)

    def fingerprint(self):
        return "no-empty-1"


def test_an_encoder_returning_none_is_named_as_such():
    """Issue #55: an encode() without a return was reported as "encode returned dtype object"."""
    assert encoder_failures(_Forgetful) == [
        "encode returned None for 8 sentences: return the [n, dim] array of their vectors (a missing return "
        "statement?)"]


def test_an_encoder_raising_on_no_sentences_fails_the_kit():
    """Issue #55: the kit passed an encoder whose encode([]) raises (docs/plugins.md promises a (0, dim) check)."""
    found = encoder_failures(_NoEmpty)
    assert len(found) == 1 and found[0].startswith("encode([]) failed: ") and "(0, 2)" in found[0], found
