"""Plugins: the registry's providers, qualified names and collision rules (benchbox.registry), any encoder
through the API (benchbox.encoding.adapter, benchbox.encoding.loading), ``--include``, and the out-of-tree
packages tests/plugin_pkg (benchbox-toyplugin) and tests/plugin_bad (benchbox-badplugin).

The package tests need both installed: ``pip install --no-deps --no-build-isolation -e tests/plugin_pkg`` and
``... -e tests/plugin_bad`` (``.ci/run`` does); otherwise they skip, saying so.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from benchbox import evaluate, load_encoder, run_tasks
from benchbox.storage.cache import EmbeddingCache
from benchbox.encoding.adapter import AdaptedEncoder, as_encoder
from benchbox.encoders.glove_bow import GloveBowEncoder
from benchbox.errors import BenchboxError
from benchbox.registry import ENCODERS, PluginWarning, Registry
from benchbox.storage.runs import Run
from benchbox.task_contract.options import TaskOptions
from tests.helpers import LetterCounts, cli

TOY = "install it: pip install --no-deps --no-build-isolation -e tests/plugin_pkg"
BAD = "install it: pip install --no-deps --no-build-isolation -e tests/plugin_bad"
NO_BOOT = TaskOptions(bootstrap=0)


def letters(sentences: list[str]) -> np.ndarray:
    """The same function as :class:`LetterCounts`, as a plain callable."""
    return LetterCounts().encode(sentences)


class DuckLetters:
    """LetterCounts as a duck-typed object (no benchbox base class), with a fingerprint."""

    name = "duck-letters"
    dim = 26

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, sentences):
        self.calls += 1
        return letters(sentences)

    def fingerprint(self) -> str:
        return "duck-letters-v1"



def flat(text: str) -> str:
    """A rich table's text with its borders and line wrapping removed (name and package columns never wrap)."""
    return " ".join(text.replace("│", " ").split())


def one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2 and err.count("error:") == 1 and "Traceback" not in err, err
    flat = " ".join(err.split())
    for needle in needles:
        assert needle in flat, (needle, err)


# --- the registry ------------------------------------------------------------------------------------------

def test_register_qualified_names_and_collision_rules():
    registry = Registry("benchbox.encoders", "encoder")  # the real entry points, a private copy
    registry.register("twin", LetterCounts, provider="pkg-a")
    assert registry.get("twin") is LetterCounts and registry.get("pkg-a:twin") is LetterCounts
    assert registry.get("PKG_A:twin") is LetterCounts  # distribution names compare as PEP 503 normalises them
    registry.register("twin", DuckLetters, provider="pkg-a")  # the same provider replaces its own entry
    assert registry.get("twin") is DuckLetters
    registry.register("twin", letters, provider="pkg-b")
    with pytest.raises(BenchboxError, match=r"provided by pkg-a and pkg-b: .*pkg-a:twin or pkg-b:twin"):
        registry.get("twin")
    assert registry.get("pkg-a:twin") is DuckLetters and registry.get("pkg-b:twin") is letters
    assert [e.qualified for e in registry.entries_named("twin")] == ["pkg-a:twin", "pkg-b:twin"]
    with pytest.raises(BenchboxError, match="built-in benchbox encoder, which cannot be replaced"):
        registry.register("glove-bow", LetterCounts)
    assert registry.get("benchbox:glove-bow") is GloveBowEncoder
    for bad in ("", "a:b"):
        with pytest.raises(BenchboxError, match="no ':'"):
            registry.register(bad, LetterCounts)
    with pytest.raises(BenchboxError, match=r"unknown encoder 'glove-bwo'. Did you mean glove-bow"):
        registry.get("glove-bwo")
    assert "pkg-b:twin" in registry and "pkg-c:twin" not in registry and "twin" in registry


def test_builtins_report_their_distribution():
    entry = Registry("benchbox.tasks", "task").resolve("sts12")
    assert entry.builtin and entry.provider == "benchbox" and entry.version  # from importlib.metadata
    assert entry.target == "benchbox.tasks.sts:STS12" and entry.qualified == "benchbox:sts12"


def test_any_exception_at_import_is_contained(tmp_path, monkeypatch):
    (tmp_path / "plugins_test_raises.py").write_text("raise ZeroDivisionError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry("benchbox.encoders", "encoder")
    registry.register("raises", "plugins_test_raises:Thing", provider="pkg-z")
    registry.register("fine", "tests.helpers:LetterCounts", provider="pkg-z")
    with pytest.raises(BenchboxError, match=r"encoder 'raises' from pkg-z .*failed to load: ZeroDivisionError: boom"):
        registry.get("raises")
    assert registry.get("fine") is LetterCounts


# --- any encoder through the API ---------------------------------------------------------------------------

def test_duck_typed_object_and_callable_give_the_numbers_of_an_encoder_subclass(tmp_path):
    reference = evaluate(LetterCounts(), ["stsb-cosine"], options=NO_BOOT, cache=False)
    duck = DuckLetters()
    cache = EmbeddingCache(tmp_path / "cache")
    first = run_tasks(duck, ["stsb-cosine"], options=NO_BOOT, cache=cache)
    assert [r.value for r in first.records] == pytest.approx([r.value for r in reference], abs=1e-12)
    assert first.encoder["name"] == "duck-letters" and first.encoder["dim"] == 26
    assert first.cache_stats["misses"] > 0
    calls = duck.calls
    again = run_tasks(duck, ["stsb-cosine"], options=NO_BOOT, cache=EmbeddingCache(tmp_path / "cache"))
    assert again.cache_stats["misses"] == 0 and again.cache_stats["hits"] > 0 and duck.calls == calls  # all cached
    assert again.encoder["fingerprint"] == first.encoder["fingerprint"]

    with pytest.warns(PluginWarning, match="'letters' .* has no fingerprint: its embeddings are not cached"):
        plain = run_tasks(letters, ["stsb-cosine"], options=NO_BOOT, cache=EmbeddingCache(tmp_path / "cache2"))
    assert [r.value for r in plain.records] == pytest.approx([r.value for r in reference], abs=1e-12)
    assert plain.cache_stats == {} and not (tmp_path / "cache2").exists()
    assert plain.encoder["fingerprint"].startswith("unidentified-")
    with pytest.warns(PluginWarning):
        assert as_encoder(letters).fingerprint() != as_encoder(letters).fingerprint()  # never reused


def test_adapter_checks_every_output():
    def nan_rows(sentences):
        out = np.ones((len(sentences), 2))
        out[-1, 0] = np.nan
        return out

    class Declared:
        dim = 3

        def encode(self, sentences):
            return np.ones((len(sentences), 4))

    cases = [(nan_rows, "NaN or infinite values for 1 of 2 sentences"),
             (lambda s: np.ones((len(s) + 1, 2)), "returned shape (3, 2) for 2 sentences"),
             (lambda s: np.ones((len(s), 2), dtype=int), "dtype int64, expected float32"),
             (Declared(), "shape (2, 4) for 2 sentences, expected (2, 3)")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        for encoder, message in cases:
            with pytest.raises(BenchboxError, match=message.replace("(", r"\(").replace(")", r"\)")):
                as_encoder(encoder).encode(["a b", "c d"])
        widths = iter([2, 3])
        learned = as_encoder(lambda s: np.ones((len(s), next(widths))))
        assert learned.encode(["x"]).dtype == np.float32 and learned.dim == 2  # learned from the first output
        with pytest.raises(BenchboxError, match="expected \\(1, 2\\)"):
            learned.encode(["y"])
        assert as_encoder(lambda s: np.ones((len(s), 5))).dim == 5  # probed when asked first
    for bad, message in ((42, "builtins.int is not an encoder"), (DuckLetters, "is a class: give an instance")):
        with pytest.raises(BenchboxError, match=message):
            load_encoder(bad)
    with pytest.raises(BenchboxError, match="encoder options \\(dim\\) given"):
        load_encoder(DuckLetters(), dim=3)
    with pytest.raises(BenchboxError, match="fingerprint must be a non-empty str"):
        AdaptedEncoder(type("F", (), {"encode": lambda self, s: letters(s), "fingerprint": ""})())


def test_module_attribute_loading_rules(tmp_path, monkeypatch):
    (tmp_path / "plugins_test_mod.py").write_text(
        "from tests.core.test_plugins import DuckLetters, letters\n"
        "instance = DuckLetters()\nfunction = letters\nnumber = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert isinstance(load_encoder("plugins_test_mod:DuckLetters").wrapped, DuckLetters)  # a class: instantiated
    assert load_encoder("plugins_test_mod:instance").name == "duck-letters"  # an object: used as it is
    with pytest.warns(PluginWarning):
        assert load_encoder("plugins_test_mod:function").name == "letters"  # a callable: the encode function
    assert isinstance(load_encoder("tests.helpers:LetterCounts"), LetterCounts)  # an Encoder class
    for spec, message in (("plugins_test_mod:number", "plugins_test_mod:number is a builtins.int, which has no encode"),
                          ("plugins_test_mod:missing", "module 'plugins_test_mod' has no attribute 'missing'"),
                          ("plugins_test_nothing:x", "no module 'plugins_test_nothing' can be imported")):
        with pytest.raises(BenchboxError, match=message):
            load_encoder(spec)


# --- --include and module:attribute on the command line ----------------------------------------------------

def test_include_registers_names_and_cli_errors_are_one_line(tmp_path, capsys):
    include = tmp_path / "plugins_test_include.py"
    include.write_text(
        "import numpy as np\n"
        "from benchbox.registry import ENCODERS\n"
        "from tests.helpers import LetterCounts\n"
        "ENCODERS.register('plugins-test-letters', LetterCounts)\n"
        "def embed(sentences):\n    return LetterCounts().encode(sentences)\n")
    code, out, _ = cli(capsys, "--include", str(include), "list", "encoders")
    assert code == 0 and "plugins-test-letters" in out and "local" in out
    runs = tmp_path / "runs"
    code, out, err = cli(capsys, "--include", str(include), "eval", "plugins-test-letters", "--task", "stsb-cosine",
                         "--bootstrap", "0", "--runs-dir", str(runs), "--json", "-")
    reference = evaluate(LetterCounts(), ["stsb-cosine"], options=NO_BOOT, cache=False)
    assert code == 0 and [r["value"] for r in json.loads(out)["records"]] == pytest.approx([r.value for r in reference])
    code, out, err = cli(capsys, "--include", str(include), "eval", "plugins_test_include:embed", "--task",
                         "stsb-cosine", "--bootstrap", "0", "--runs-dir", str(runs), "--json", "-")
    assert code == 0 and [r["value"] for r in json.loads(out)["records"]] == pytest.approx([r.value for r in reference])
    assert "warning: encoder 'embed'" in err and "has no fingerprint" in err
    assert {Run.open(p).manifest["encoder"]["name"] for p in runs.iterdir()} == {"letter-counts", "embed"}

    raising = tmp_path / "plugins_test_raising.py"
    raising.write_text("raise KeyError('oops')\n")
    for args, needles in (
        (["--include", str(tmp_path / "absent.py"), "list", "encoders"], ["absent.py: no such file"]),
        (["--include", str(raising), "list", "encoders"], ["plugins_test_raising.py failed: KeyError: 'oops'"]),
        (["eval", "plugins_test_nothing:x", "-t", "stsb-cosine", "--no-save"], ["no module 'plugins_test_nothing'"]),
        (["eval", "tests.helpers:Nope", "-t", "stsb-cosine", "--no-save"], ["no attribute 'Nope'"]),
        (["eval", "tests.helpers:np", "-t", "stsb-cosine", "--no-save"], ["tests.helpers:np is a builtins.module",
                                                                           "not an encoder"]),
    ):
        one_line_error(*cli(capsys, *args)[::2], *needles)


# --- the out-of-tree packages --------------------------------------------------------------------------------

def test_toy_plugin_listed_with_its_package_and_version(capsys):
    pytest.importorskip("benchbox_toyplugin", reason=TOY)
    code, out, _ = cli(capsys, "list", "encoders")
    assert code == 0 and "tfidf" in out and "benchbox-toyplugin 0.1.0" in out and "benchbox 0.1.0" in out
    code, out, _ = cli(capsys, "list", "tasks")
    assert code == 0 and "toy-paraphrase" in out and "benchbox-toyplugin 0.1.0" in out


@pytest.mark.parametrize("encoder", ["benchbox-toyplugin:tfidf", "tfidf"])
def test_toy_plugin_eval_writes_a_run_with_a_correct_auc(encoder, tmp_path, capsys):
    pytest.importorskip("benchbox_toyplugin", reason=TOY)
    from benchbox_toyplugin.encoder import TfidfEncoder
    from benchbox_toyplugin.task import DATA

    runs = tmp_path / "runs"
    code, _, err = cli(capsys, "eval", encoder, "--task", "benchbox-toyplugin:toy-paraphrase", "--bootstrap", "200",
                       "--runs-dir", str(runs), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    (path,) = runs.iterdir()
    run = Run.open(path)
    assert run.manifest["encoder"]["name"] == "tfidf" and run.manifest["encoder"]["dim"] == 32
    checksums = run.manifest["tasks"]["toy-paraphrase"]["data_checksums"]
    assert list(checksums) == [str(Path(str(DATA)).resolve())]
    items, metric = run.items("toy-paraphrase"), run.metrics.iloc[0]
    pairs = pd.read_csv(DATA, sep="\t", comment="#")
    assert len(items) == 200 and items["gold"].sum() == 100 and list(items["item"]) == list(pairs["id"])
    tfidf = TfidfEncoder()
    a, b = tfidf.encode(pairs["sentence1"].tolist()), tfidf.encode(pairs["sentence2"].tolist())
    cosine = (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-30)
    np.testing.assert_allclose(items["score"], cosine, atol=1e-5)
    assert metric["metric"] == "auc" and metric["n"] == 200
    assert metric["value"] == pytest.approx(roc_auc_score(pairs["label"], cosine), abs=1e-9)
    assert 0.85 < metric["value"] < 0.97 and metric["ci_low"] < metric["value"] < metric["ci_high"]


def test_toy_task_option_and_the_encoder_through_the_api():
    pytest.importorskip("benchbox_toyplugin", reason=TOY)
    from benchbox_toyplugin.task import ToyParaphrase

    encoder = load_encoder("benchbox_toyplugin.encoder:TfidfEncoder", dim="8")
    assert encoder.dim == 8 and encoder.cacheable
    assert encoder.fingerprint() != load_encoder("tfidf").fingerprint()  # dim is part of the fingerprint
    forty = TaskOptions(bootstrap=0, task_options={"toy-paraphrase": {"pairs": 40}})
    result = run_tasks(encoder, [ToyParaphrase()], options=forty, cache=False).results[0]
    items = result.items
    assert len(items) == 40 and result.protocol["pairs"] == 40
    assert result.metrics[0].value == pytest.approx(roc_auc_score(items["gold"], items["score"]), abs=1e-12)
    with pytest.raises(BenchboxError, match="bad options for encoder 'tfidf': tfidf: dim must be between 1 and 50"):
        load_encoder("tfidf", dim="80")
    with pytest.raises(BenchboxError, match="pairs must be 0 \\(all\\) or at least 2"):
        run_tasks(encoder, [ToyParaphrase()], cache=False,
                  options=TaskOptions(bootstrap=0, task_options={"toy-paraphrase": {"pairs": 1}}))
    with pytest.raises(BenchboxError, match="toy-paraphrase:pairs"):
        run_tasks(encoder, [ToyParaphrase()], cache=False,
                  options=TaskOptions(bootstrap=0, task_options={"toy-paraphrase": {"pairs": -3}}))


def test_bad_plugin_cannot_shadow_a_builtin_and_stays_reachable_qualified(capsys):
    pytest.importorskip("benchbox_badplugin", reason=BAD)
    registry = Registry("benchbox.encoders", "encoder")
    with pytest.warns(PluginWarning, match=r"'glove-bow' from benchbox-badplugin 0.0.1 is refused: the built-in "
                                           r"'glove-bow' \(benchbox .*\) cannot be shadowed; .* benchbox-badplugin:glove-bow"):
        assert registry.get("glove-bow") is GloveBowEncoder
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginWarning)
        assert registry.get("glove-bow") is GloveBowEncoder  # said once
    assert isinstance(load_encoder("glove-bow"), GloveBowEncoder)
    impostor = load_encoder("benchbox-badplugin:glove-bow")
    np.testing.assert_array_equal(impostor.encode(["abc", ""]), [[3, 1, 2], [0, 1, 2]])
    code, out, _ = cli(capsys, "list", "encoders")
    assert code == 0 and "benchbox-badplugin:glove-bow benchbox-badplugin 0.0.1 [shadowed by the built-in" in flat(out)


def test_a_plugin_raising_at_import_is_listed_with_its_error_and_fails_alone(capsys, tmp_path):
    pytest.importorskip("benchbox_badplugin", reason=BAD)
    for kind, name in (("encoders", "bad-import"), ("tasks", "bad-import-task")):
        code, out, _ = cli(capsys, "list", kind)
        assert code == 0 and f"{name} benchbox-badplugin 0.0.1" in flat(out)
        assert "RuntimeError" in flat(out) and "uninstall benchbox-badplugin" in flat(out)
        assert ("glove-bow" if kind == "encoders" else "stsb-cosine") in out  # the others still listed
    one_line_error(*cli(capsys, "eval", "bad-import", "-t", "stsb-cosine", "--no-save")[::2],
                   "encoder 'bad-import' from benchbox-badplugin 0.0.1", "failed to load: RuntimeError")
    one_line_error(*cli(capsys, "eval", "glove-bow", "-t", "bad-import-task", "--no-save")[::2],
                   "task 'bad-import-task' from benchbox-badplugin 0.0.1", "failed to load: RuntimeError")
    assert ENCODERS.get("sbert").__name__ == "SBertEncoder"  # other names still load


def test_module_attribute_is_found_in_the_current_folder_by_the_benchbox_script(tmp_path):
    """Issue #28: ``benchbox eval my_models:MyEncoder`` from the folder holding my_models.py failed with "no
    module 'my_models'": the console script's sys.path has its own folder, not the current one (``python -m``
    has it). The current folder is now looked in, after sys.path."""
    import os
    import subprocess

    (tmp_path / "my_models.py").write_text(
        "import numpy as np\n\n"
        "class MyEncoder:\n"
        "    name = 'my-encoder'\n"
        "    def encode(self, sentences):\n"
        "        return np.array([[len(s), s.count(' ') + 1.0] for s in sentences], dtype=np.float32)\n")
    script = Path(sys.executable).with_name("benchbox")
    env = {**os.environ, "PYTHONPATH": ""}
    done = subprocess.run([str(script), "eval", "my_models:MyEncoder", "-t", "stsb-cosine", "--no-save",
                           "--bootstrap", "0", "--json", "-"], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["encoder"] == "my-encoder"
