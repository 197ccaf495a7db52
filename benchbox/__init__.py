"""benchbox: train, evaluate and compare visually grounded sentence encoders.

The API (``run_tasks``, ``evaluate``, ``load_encoder``, ``load_runs``) and ``__version__`` (read from the
installed metadata by :mod:`importlib.metadata`, itself 20-40 ms of imports) are computed on first use (PEP 562),
so that ``import benchbox.cli``, the console script's first line, runs almost nothing before the command line
installs its Ctrl-C handler (:mod:`benchbox.cli`).
"""

from importlib import import_module

from benchbox.errors import BenchboxError

#: each API name, and the module it lives in
_API = {"evaluate": "benchbox.evaluation", "load_encoder": "benchbox.evaluation",
        "run_tasks": "benchbox.evaluation", "load_runs": "benchbox.results"}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("benchbox")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


def __getattr__(name: str) -> object:  # typing is not imported: the start stays light
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    if name in _API:
        value = getattr(import_module(_API[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'benchbox' has no attribute {name!r}")


__all__ = ["BenchboxError", "evaluate", "load_encoder", "load_runs", "run_tasks", "__version__"]
