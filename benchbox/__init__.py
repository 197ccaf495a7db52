"""benchbox: train, evaluate and compare visually grounded sentence encoders."""

from importlib.metadata import PackageNotFoundError, version

from benchbox.errors import BenchboxError
from benchbox.evaluation import evaluate, load_encoder, run_tasks
from benchbox.results import load_runs

try:
    __version__ = version("benchbox")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["BenchboxError", "evaluate", "load_encoder", "load_runs", "run_tasks", "__version__"]
