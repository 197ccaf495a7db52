"""The plugin API's compatibility promise (docs/plugins.md, "Compatibility"), issues #39 and #40: a plugin task
written against the previous release (tests/plugin_legacy, loaded with ``--include``) keeps loading, evaluating
and comparing; ``MetricSpec(test=)`` is a deprecated alias of ``kind=`` with one warning line; per-item rows of
several kinds in one table are checked kind by kind; callable instances and partials are encoders whose
provenance is their class or function."""

from __future__ import annotations

import ast
import importlib
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchbox import run_tasks
from benchbox.encoding.loading import load_encoder
from benchbox.errors import BenchboxError
from benchbox.registry import TASKS
from benchbox.storage.identity import encoder_record
from benchbox.storage.runs import Run
from benchbox.task_contract.protocol import MetricRecord, MetricSpec, Task, TaskResult
from benchbox.task_contract.options import TaskOptions
from tests.helpers import LetterCounts, cli

LEGACY = Path(__file__).resolve().parents[1] / "plugin_legacy" / "legacy_tasks.py"
#: the modules of the task contract that moved (benchbox/task_contract/): old name → new name, under ``benchbox.``
MOVED = {"task": "task_contract.protocol", "task_options": "task_contract.options",
         "paired_tests": "task_contract.paired_tests"}


def moved_imports(path: Path) -> list[tuple[str, str]]:
    """(old module, name) of each name the file at ``path`` imports from a moved module, in its order."""
    return [(node.module, alias.name) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.ImportFrom) and node.module and node.module.removeprefix("benchbox.") in MOVED
            for alias in node.names]


def renamed_line(old: str, name: str) -> str:
    """What ``renamed`` says of ``name`` imported from the moved module ``old``."""
    new = f"benchbox.{MOVED[old.removeprefix('benchbox.')]}"
    return f"{old}.{name} is deprecated: write {new}.{name}; the old name goes in the next release"



@pytest.fixture
def legacy():
    """The previous-release plugin's task, registered by the CLI's ``--include``; unregistered afterwards."""
    yield
    sys.modules.pop(LEGACY.stem, None)
    if "legacy-paraphrase" in TASKS:
        TASKS.unregister("legacy-paraphrase")


def test_a_plugin_of_the_previous_release_loads_evaluates_and_compares(legacy, tmp_path, capsys):
    # before: MetricSpec(test=...) was a TypeError at import; with it patched, eval refused the plugin's mixed
    # pair and retrieval rows ("items have no finite gold"), and compare their missing gold ("different gold")
    runs = tmp_path / "runs"
    for encoder in ("tests.helpers:LetterCounts", "glove-bow"):
        code, _, err = cli(capsys, "--include", str(LEGACY), "eval", encoder, "-t", "legacy-paraphrase",
                           "--bootstrap", "20", "--runs-dir", str(runs))
        assert code == 0, err
        warned = [line for line in err.splitlines() if "deprecated" in line]
        assert warned == [*(f"warning: {renamed_line(old, name)}" for old, name in moved_imports(LEGACY)),
                          "warning: MetricSpec(test=...) is deprecated: write MetricSpec(kind=...), where "
                          "test='accuracy' is kind='classification'; the old name goes in the next release"
                          ][:len(warned)]  # one line per name imported from the old module, one for the plugin's
        # four metrics (none once it is imported)
    first, second = sorted(runs.iterdir())
    run = Run.open(first)
    items = run.items("legacy-paraphrase")
    assert len(items) == 60 + 30 and items["rank"].notna().sum() == 30 and items["gold"].notna().sum() == 60
    kinds = {m["name"]: m["kind"] for m in run.manifest["tasks"]["legacy-paraphrase"]["metadata"]["metrics"]}
    assert kinds == {"auc": "bootstrap", "accuracy": "classification", "r1": "ranks", "r5": "ranks"}
    code, out, err = cli(capsys, "--include", str(LEGACY), "compare", str(first), str(second), "--wide",
                         "--test-resamples", "20", "--csv", str(tmp_path / "cmp.csv"))
    assert code == 0, err
    table = pd.read_csv(tmp_path / "cmp.csv")
    assert sorted(zip(table["metric"], table["test"])) == [("accuracy", "mcnemar"), ("auc", "bootstrap"),
                                                           ("r1", "mcnemar"), ("r5", "mcnemar")]


def test_test_is_a_deprecated_alias_of_kind():
    from benchbox.registry import PluginDeprecationWarning

    with pytest.warns(PluginDeprecationWarning, match=r"MetricSpec\(test=\.\.\.\) is deprecated"):
        spec = MetricSpec("accuracy", test="accuracy", unit="%")
    assert spec == MetricSpec("accuracy", kind="classification", unit="%")
    with pytest.warns(PluginDeprecationWarning):
        assert MetricSpec("r1", test="ranks").kind == "ranks"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MetricSpec("r1", kind="ranks")  # the new name: no warning
    with pytest.raises(BenchboxError, match="give kind= only"):
        MetricSpec("r1", kind="ranks", test="ranks")


class Mixed(Task):
    """Pair rows (gold, score) and retrieval rows (direction, rank) in one table, as the legacy plugin returns."""

    name = "mixed-items"
    main_score = "pearson"
    item_keys = ("subset", "direction", "item")
    metrics = (MetricSpec("pearson", kind="correlation", unit="r", summary=True),
               MetricSpec("r1", kind="ranks", unit="%"))
    items: pd.DataFrame

    def evaluate(self, encoder, ctx) -> TaskResult:
        return TaskResult(self.name, [MetricRecord(self.name, "test", "pearson", 0.5, n=6)], self.items)


def mixed(change: dict | None = None) -> Task:
    """The mixed task's items, with ``change`` ((row, column) → value) applied."""
    pairs = pd.DataFrame({"subset": "test", "direction": "none", "item": np.arange(6),
                          "gold": np.arange(6, dtype=float), "score": np.linspace(0, 1, 6)})
    queries = pd.DataFrame({"subset": "fold", "direction": "i2t", "item": np.arange(4), "rank": [1.0, 3, 2, 8]})
    items = pd.concat([pairs, queries], ignore_index=True)
    for (row, column), value in (change or {}).items():
        items.loc[row, column] = value
    return type("M", (Mixed,), {"items": items})()


def test_the_protocols_old_module_name_works_with_one_warning():
    """The encoder protocol moved to ``benchbox.encoding.protocol``; a plugin importing it from
    ``benchbox.encoder`` gets the same objects and one warning per name saying what to write."""
    from benchbox.encoding import protocol
    from benchbox.registry import PluginDeprecationWarning

    with pytest.warns(PluginDeprecationWarning, match=r"benchbox\.encoder\.Encoder is deprecated: write "
                                                      r"benchbox\.encoding\.protocol\.Encoder"):
        from benchbox.encoder import Encoder
    assert Encoder is protocol.Encoder
    with pytest.raises(ImportError):
        from benchbox.encoder import NoSuchName  # noqa: F401


@pytest.mark.parametrize("old", sorted(MOVED))
def test_the_task_contracts_old_module_names_work_with_one_warning_per_name(old):
    """The task protocol, the task options and the kinds of paired test moved into ``benchbox.task_contract``; a
    plugin importing them from their old modules gets the same objects and one warning per name saying what to
    write, and a name the module never had is an ImportError."""
    from benchbox.registry import PluginDeprecationWarning

    new = importlib.import_module(f"benchbox.{MOVED[old]}")
    names = {"task": ("MetricSpec", "Task"), "task_options": ("TaskOption", "TaskOptions"),
             "paired_tests": ("PairedKind", "KINDS")}[old]
    imported: dict = {}
    with pytest.warns(PluginDeprecationWarning) as caught:
        exec(f"from benchbox.{old} import {', '.join(names)}", imported)
    assert [str(w.message) for w in caught] == [renamed_line(f"benchbox.{old}", name) for name in names]
    assert all(imported[name] is getattr(new, name) for name in names)
    with pytest.raises(ImportError):
        exec(f"from benchbox.{old} import NoSuchName")


def test_the_legacy_plugin_imports_from_a_moved_module():
    assert [name for _, name in moved_imports(LEGACY)] == ["DataFile", "EvalContext", "MetricRecord", "MetricSpec",
                                                           "Task", "TaskOption", "TaskResult"]


def test_mixed_item_rows_are_checked_kind_by_kind(tmp_path):
    # before: refused, "7 items have no finite gold" (the retrieval rows have none, nor need any)
    run_tasks(LetterCounts(), [mixed()], data_dir=tmp_path, cache=False, options=TaskOptions(bootstrap=0))
    for change, message in (({(2, "gold"): np.nan}, "1 items have no finite gold, e.g. (subset=test, "
                                                     "direction=none, item=2)"),
                            ({(7, "rank"): np.inf}, "1 items have no finite rank, e.g. (subset=fold, "
                                                    "direction=i2t, item=1)"),
                            ({(8, "direction"): None}, "1 items have no finite direction"),
                            ({(9, "rank"): np.nan}, "1 items have no finite gold")):  # a row of no kind
        with pytest.raises(BenchboxError) as caught:
            run_tasks(LetterCounts(), [mixed(change)], data_dir=tmp_path, cache=False)
        assert message in str(caught.value)


CALLABLES = '''
import functools
import numpy as np
import torch
from tests.helpers import LetterCounts


def counts(sentences, scale=1.0):
    return scale * LetterCounts().encode(sentences)


def scaled_counts(scale, sentences):
    return counts(sentences, scale)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(26))

    def forward(self, sentences):
        return torch.from_numpy(LetterCounts().encode(sentences)) * self.scale


class Caller:
    def __call__(self, sentences):
        return LetterCounts().encode(sentences)


net = Net()
caller = Caller()
scaled = functools.partial(counts, scale=2.0)
nested = functools.partial(functools.partial(scaled_counts), 3.0)
with_object = functools.partial(counts, scale=np.array(2.0))
'''


def test_callable_instances_and_partials_are_encoders_with_stable_provenance(tmp_path, monkeypatch):
    # before: AttributeError: 'Net' object has no attribute '__qualname__' (and so for Caller and partial)
    (tmp_path / "plugins_test_callables.py").write_text(CALLABLES)
    monkeypatch.syspath_prepend(str(tmp_path))
    expected = {"net": ("plugins_test_callables.Net", {}), "caller": ("plugins_test_callables.Caller", {}),
                "scaled": ("plugins_test_callables.counts", {"scale": 2.0}),
                "nested": ("plugins_test_callables.scaled_counts", {"args": [3.0]}),
                "with_object": ("plugins_test_callables.counts", {"scale": "<numpy.ndarray>"})}
    for attribute, (cls, options) in expected.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # no fingerprint: said once, tested in test_plugins
            encoder = load_encoder(f"plugins_test_callables:{attribute}")
        record = encoder_record(encoder)
        assert (record["class"], record["options"], record["source"]) == (
            cls, options, f"plugins_test_callables:{attribute}"), attribute
        json.dumps(record)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folder = run_tasks(load_encoder("plugins_test_callables:net"), ["stsb-cosine"], data_dir=tmp_path,
                           cache=False, options=TaskOptions(bootstrap=0)).save(tmp_path / "runs")
    reference = run_tasks(LetterCounts(), ["stsb-cosine"], data_dir=tmp_path, cache=False,
                          options=TaskOptions(bootstrap=0)).results[0].metrics[0].value
    assert Run.open(folder).metrics.iloc[0]["value"] == pytest.approx(reference, abs=1e-6)
