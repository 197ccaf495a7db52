"""benchbox: train, evaluate and compare visually grounded sentence encoders.

The API (``run_tasks``, ``evaluate``, ``load_encoder``, ``load_runs``) is imported on first use (PEP 562), so
that ``import benchbox.cli`` starts light: the command line installs its Ctrl-C handler before the heavy
modules load (:mod:`benchbox.cli`).
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from benchbox.errors import BenchboxError

try:
    __version__ = version("benchbox")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

#: each API name, and the module it lives in
_API = {"evaluate": "benchbox.evaluation", "load_encoder": "benchbox.evaluation",
        "run_tasks": "benchbox.evaluation", "load_runs": "benchbox.results"}


def __getattr__(name: str) -> Any:
    if name in _API:
        value = getattr(import_module(_API[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'benchbox' has no attribute {name!r}")


__all__ = ["BenchboxError", "evaluate", "load_encoder", "load_runs", "run_tasks", "__version__"]
